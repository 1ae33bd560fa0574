"""Benchmark: the provisioning simulation at scale.

Run by hand: ``.venv/bin/python benchmarks/simulation_scale.py [--pods 10000] [--pools 20] [--repeat 1] [--rounds 20]``.
``simulate`` runs Karpenter's provisioning rounds to the fixpoint (``--rounds 1``: one Solve and its launches).
The world: moto's full instance-type catalogue (every hvm x86_64/arm64 type, about 1,400 — more
than a real region's ~900) in three zones, priced from Karpenter's static on-demand table; 20
NodePools (architectures × categories × capacity types, weights, two tainted, four with limits);
three DaemonSets; and ``--pods`` pods in 100 Deployments of assorted shapes (zone and hostname
spreads, hostname anti-affinity, node selectors, tolerations, preferred node affinity).
Target: 10,000 pods over 20 NodePools in under 10 s and 1 GiB on 2 cores, all rounds included. It prints CPU seconds
(the machine may be shared; CPU time is what the simulation costs), wall seconds and peak memory
(max RSS). Figures go in the docs, never into tests.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moto.ec2.models.instance_types import INSTANCE_TYPES

from karpenter_gitops.adapters.aws.pricing import on_demand_prices
from karpenter_gitops.core import labels
from karpenter_gitops.core.findings import Source
from karpenter_gitops.core.requirements import Requirement, Requirements
from karpenter_gitops.karpenter.amifamily.resolver import LabelledCatalogue
from karpenter_gitops.karpenter.scheduling import (
    DaemonSet,
    NodeClassSettings,
    NodePoolSpec,
    PodTemplate,
    PriceTable,
    World,
    instance_types,
    resources,
    simulate,
)
from karpenter_gitops.karpenter.scheduling.matching import LabelSelector, Taint, Toleration
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, Container, Spread, replicas
from karpenter_gitops.karpenter.scheduling.rounds import MAX_ROUNDS

REGION, ZONES = "us-east-1", ("us-east-1a", "us-east-1b", "us-east-1c")
CATEGORIES = ("c", "m", "r", "t", "i")
SHAPES = (("250m", "256Mi"), ("500m", "512Mi"), ("1", "2Gi"), ("2", "4Gi"), ("100m", "128Mi"), ("4", "16Gi"), ("750m", "3Gi"))


def node_pools(count: int) -> tuple[NodePoolSpec, ...]:
    pools = []
    for index in range(count):
        arch = ("amd64",) if index % 2 else ("amd64", "arm64")
        capacity = ("on-demand",) if index % 3 else ("on-demand", "spot")
        requirements = Requirements.of([
            Requirement(labels.ARCH, "In", arch), Requirement(labels.CAPACITY_TYPE, "In", capacity),
            Requirement(labels.CATEGORY, "In", (CATEGORIES[index % len(CATEGORIES)], CATEGORIES[(index + 1) % len(CATEGORIES)])),
            Requirement(labels.GENERATION, "Gt", ("4",)),
        ])  # fmt: skip
        taints = (Taint("dedicated", f"team-{index}", "NoSchedule"),) if index in (3, 7) else ()
        limits = resources.vector({"cpu": "2000", "memory": "8000Gi"}) if index % 5 == 0 else None
        pools.append(
            NodePoolSpec(
                f"pool-{index:02d}",
                "default",
                requirements,
                {"team": f"team-{index}"},
                taints,
                weight=index % 4 * 10,
                limits=limits,
            )
        )
    return tuple(pools)


def workloads(pods: int, pools: int) -> tuple[list, list]:
    source = Source("bench.yaml")
    per, templates = pods // 100, []
    for index in range(100):
        cpu, memory = SHAPES[index % len(SHAPES)]
        app = {"app": f"app-{index}"}
        selector = LabelSelector(tuple(app.items()))
        spreads = (Spread(labels.ZONE, 1, selector=selector),) if index % 4 == 0 else ()
        if index % 10 == 5:
            spreads += (Spread("kubernetes.io/hostname", 2, "ScheduleAnyway", selector),)
        anti = (AffinityTerm("kubernetes.io/hostname", selector),) if index % 25 == 3 else ()
        selector_labels = {"team": f"team-{index % pools}"} if index % 7 == 0 else {}
        tolerations = (Toleration("dedicated", "Equal", f"team-{index % pools}", "NoSchedule"),) if index % 7 == 0 else ()
        preferred = ((50, (Requirement(labels.CAPACITY_TYPE, "In", ("spot",)),)),) if index % 6 == 0 else ()
        templates.append(PodTemplate(
            "bench", f"Deployment/app-{index}", source, app, (Container("main", {"cpu": cpu, "memory": memory}),),
            node_selector=selector_labels, tolerations=tolerations, spreads=spreads, anti_affinity=anti, preferred_terms=preferred,
        ))  # fmt: skip
    all_pods = [pod for template in templates for pod in replicas(template, per)]
    daemons = [
        DaemonSet(
            name,
            PodTemplate(
                "kube-system",
                f"DaemonSet/{name}",
                source,
                {"app": name},
                (Container("main", {"cpu": cpu, "memory": memory}),),
                tolerations=(Toleration(operator="Exists"),),
            ),
        )
        for name, cpu, memory in (("aws-node", "25m", "64Mi"), ("kube-proxy", "100m", "128Mi"), ("node-exporter", "50m", "64Mi"))
    ]
    return all_pods, daemons


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--pools", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=MAX_ROUNDS, help="the most provisioning rounds (1: one Solve)")
    args = parser.parse_args()

    start_cpu, start_wall = time.process_time(), time.perf_counter()
    catalogue = LabelledCatalogue(INSTANCE_TYPES.values(), {name: ZONES for name in INSTANCE_TYPES}, REGION)
    table = on_demand_prices(REGION)
    prices = PriceTable(table.prices, table.note)
    types = instance_types(
        catalogue.infos.values(), catalogue.zones, REGION, NodeClassSettings("default"), prices, known=catalogue.requirements()
    )
    pods, daemons = workloads(args.pods, args.pools)
    world = World(node_pools(args.pools), {"default": types}, tuple(pods), tuple(daemons), prices.source)
    build_cpu, build_wall = time.process_time() - start_cpu, time.perf_counter() - start_wall
    print(
        f"world: {len(types)} instance types, {len(world.node_pools)} NodePools, {len(pods)} pods, {len(daemons)} DaemonSets; "
        f"built in {build_cpu:.2f} s CPU ({build_wall:.2f} s wall)"
    )
    for _ in range(args.repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        forecast = simulate(world, max_rounds=args.rounds)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        nodes = sum(len(p.nodes) for p in forecast.pools)
        scheduled = sum(p.pods for p in forecast.pools)
        unscheduled = sum(len(u.pods) for u in forecast.unschedulable)
        low, high = forecast.hourly
        print(
            f"simulate: {cpu:.2f} s CPU ({wall:.2f} s wall), {len(forecast.rounds)} round(s)"
            f"{'' if forecast.settled else ' (bound reached)'}: {nodes} NodeClaims, {scheduled} pods scheduled, "
            f"{unscheduled} unschedulable, ${low:,.2f}–${high:,.2f}/h"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (max RSS): {peak:,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
