"""Seeded worlds for the differential test of the provisioning simulation against Karpenter's scheduler.

``generate(seed)`` draws one world from ``random.Random(seed)``: a slice of moto's catalogue (both
architectures, burstable, metal and GPU types) in three zones, on-demand prices from Karpenter's
static table (some nudged, so ties and near-ties both occur) and spot prices per zone (some zones
without one, so those offerings are unavailable); one to four NodePools (weights, capacity types,
architectures, categories, families with ``minValues``, generations, cpu bounds, labels, taints of
every effect, cpu/memory limits); DaemonSets with tolerations and node selectors; and workloads
(requests with init containers and sidecars, host ports, node selectors, required node-affinity terms,
preferred node affinity, tolerations, zone and hostname spreads, pod affinity and anti-affinity,
required and preferred). The same seed gives the same world, so a failing seed is a reproduction.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from conftest import PROJECT
from moto.ec2.models.instance_types import INSTANCE_TYPES

from karpenter_gitops.adapters.aws.pricing import on_demand_prices
from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirement, Requirements, ValueSet
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.resolver import LabelledCatalogue
from karpenter_gitops.karpenter.scheduling import build_world, resources
from karpenter_gitops.karpenter.scheduling.matching import LabelSelector, Taint, Toleration
from karpenter_gitops.karpenter.scheduling.nodes import NodeClassSettings, PriceTable, instance_types
from karpenter_gitops.karpenter.scheduling.pods import (
    AffinityTerm,
    Container,
    DaemonSet,
    HostPort,
    Pod,
    PodTemplate,
    Spread,
    replicas,
)
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec, World
from karpenter_gitops.load.into_inputs import load, load_documents
from karpenter_gitops.load.workloads import workloads_from_documents
from support.simulation import SOURCE, info

REGION = "us-east-1"
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
HOSTNAME = "kubernetes.io/hostname"
CATALOGUE = (
    "m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge", "m5.8xlarge", "c5.large", "c5.xlarge", "c5.2xlarge", "c5.4xlarge",
    "r5.large", "r5.xlarge", "r5.2xlarge", "m6g.large", "m6g.xlarge", "m6g.2xlarge", "c6g.large", "c6g.xlarge", "r6g.large",
    "t3.medium", "t3.large", "t3.xlarge", "t4g.medium", "t4g.large", "m6i.large", "m6i.xlarge", "c6i.large", "c6i.xlarge",
    "c7g.large", "c7g.xlarge", "m7i.large", "r6i.large", "m5d.large", "i3.large", "g5.xlarge", "g4dn.xlarge", "m5.metal",
)  # fmt: skip
STATIC = on_demand_prices(REGION).prices
TAINTS = (
    Taint("dedicated", "batch", "NoSchedule"),
    Taint("spot", "", "PreferNoSchedule"),
    Taint("gpu", "true", "NoExecute"),
    Taint("team", "b", "NoSchedule"),
)
SHAPES = (
    ("100m", "128Mi"),
    ("250m", "256Mi"),
    ("500m", "512Mi"),
    ("500m", "2Gi"),
    ("1", "1Gi"),
    ("1", "4Gi"),
    ("1500m", "3Gi"),
    ("2", "2Gi"),
    ("3", "6Gi"),
    ("3500m", "12Gi"),
    ("6", "8Gi"),
    ("7", "30Gi"),
    ("40", "8Gi"),
)


@dataclass(frozen=True)
class Case:
    seed: int
    world: World


def _prices(rng: random.Random, names: list[str], zone_uniform: bool) -> PriceTable:
    """On-demand from Karpenter's static table, some nudged; spot per zone, or one spot price for every
    zone of a type when ``zone_uniform`` (zonal topology: Karpenter breaks equal-count zone ties at
    random, and with equal prices the zone it picks changes no price)."""
    on_demand = {}
    for name in names:
        price = STATIC[name]
        if rng.random() < 0.3:
            price = round(price * rng.choice((0.5, 0.9, 1.1, 1.7)), 4)
        on_demand[name] = price
    spot = {}
    for name in names:
        shared = round(on_demand[name] * rng.uniform(0.2, 1.3), 5)
        for zone in ZONES:
            if zone_uniform:
                spot[(name, zone)] = shared
            elif rng.random() < 0.85:
                spot[(name, zone)] = round(on_demand[name] * rng.uniform(0.2, 1.3), 5)
    return PriceTable(on_demand, "seeded prices", spot)


def _pool(rng: random.Random, index: int, names: list[str]) -> NodePoolSpec:
    requirements: list = [
        Requirement(
            labels.CAPACITY_TYPE,
            "In",
            tuple(sorted(rng.choice([{"on-demand"}, {"spot"}, {"on-demand", "spot"}, {"on-demand", "spot"}]))),
        )
    ]
    if rng.random() < 0.4:
        requirements.append(Requirement(labels.ARCH, "In", (rng.choice(("amd64", "arm64")),)))
    if rng.random() < 0.35:
        requirements.append(Requirement(labels.CATEGORY, "In", tuple(sorted(rng.sample("cmrtgi", rng.randint(1, 3))))))
    if rng.random() < 0.2:
        families = sorted({name.split(".")[0] for name in names})
        chosen = tuple(sorted(rng.sample(families, min(len(families), rng.randint(2, 5)))))
        requirements.append((labels.FAMILY, ValueSet.of("In", chosen, rng.choice((None, 2, 3)))))
    elif rng.random() < 0.15:
        requirements.append((labels.INSTANCE_TYPE, ValueSet.of("Exists", (), rng.choice((2, 5)))))
    if rng.random() < 0.25:
        requirements.append(Requirement(labels.GENERATION, "Gt", (str(rng.choice((3, 4, 5))),)))
    if rng.random() < 0.2:
        requirements.append(Requirement(labels.CPU, "Lt", (str(rng.choice((5, 9, 17))),)))
    if rng.random() < 0.15:
        requirements.append(Requirement(labels.ZONE, "In", tuple(sorted(rng.sample(ZONES, rng.randint(1, 2))))))
    taints = tuple(rng.sample(TAINTS, 1)) if index and rng.random() < 0.5 else ()  # pool-0 is untainted
    limits = None
    if rng.random() < 0.3:
        limits = resources.vector(rng.choice(({"cpu": "8"}, {"cpu": "16"}, {"cpu": "40", "memory": "100Gi"}, {"memory": "64Gi"})))
    pairs = [r if isinstance(r, tuple) else (r.key, ValueSet.of(r.operator, r.values)) for r in requirements]
    return NodePoolSpec(
        f"pool-{index}",
        "default",
        Requirements(pairs),
        {"team": rng.choice(("a", "b"))},
        taints,
        weight=rng.choice((0, 0, 10, 50)),
        limits=limits,
    )


def _toleration(rng: random.Random) -> Toleration:
    taint = rng.choice(TAINTS)
    return rng.choice(
        (
            Toleration(taint.key, "Equal" if taint.value else "Exists", taint.value, taint.effect),
            Toleration(taint.key, "Exists"),
            Toleration(operator="Exists"),
        )
    )


def _term(rng: random.Random) -> tuple[Requirement, ...]:
    options = (
        Requirement(labels.ARCH, "In", (rng.choice(("amd64", "arm64")),)),
        Requirement(labels.CAPACITY_TYPE, "In", (rng.choice(("spot", "on-demand")),)),
        Requirement(labels.ZONE, "In", (rng.choice(ZONES),)),
        Requirement(labels.ZONE, "NotIn", (rng.choice(ZONES),)),
        Requirement(labels.CATEGORY, "In", tuple(sorted(rng.sample("cmr", 2)))),
        Requirement(labels.CPU, "Gt", (str(rng.choice((1, 3, 7))),)),
        Requirement("team", "In", (rng.choice(("a", "b")),)),
        Requirement(labels.GPU_COUNT, "DoesNotExist", ()),
    )
    return tuple(rng.sample(options, rng.randint(1, 2)))


def _template(rng: random.Random, index: int) -> PodTemplate:
    name = f"app-{index}"
    app = {"app": name}
    selector = LabelSelector(tuple(app.items()))
    cpu, memory = rng.choice(SHAPES)
    ports = (HostPort(rng.choice((8080, 9100))),) if rng.random() < 0.1 else ()
    containers = [Container("main", {"cpu": cpu, "memory": memory}, host_ports=ports)]
    init = ()
    if rng.random() < 0.15:
        containers.append(Container("side", {"cpu": "100m", "memory": "64Mi"}))
    if rng.random() < 0.15:
        init = (
            Container("init", {"cpu": rng.choice(("2", "200m")), "memory": "1Gi"}),
            *((Container("proxy", {"cpu": "50m", "memory": "64Mi"}, sidecar=True),) if rng.random() < 0.5 else ()),
        )
    fields: dict = {}
    if rng.random() < 0.25:
        fields["node_selector"] = rng.choice(
            (
                {labels.ARCH: "amd64"},
                {labels.ARCH: "arm64"},
                {"team": "a"},
                {labels.CAPACITY_TYPE: "spot"},
                {labels.ZONE: ZONES[0]},
            )
        )
    if rng.random() < 0.2:
        fields["required_terms"] = tuple(_term(rng) for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.2:
        fields["preferred_terms"] = tuple((rng.choice((10, 50, 100)), _term(rng)) for _ in range(rng.randint(1, 2)))
    if rng.random() < 0.4:
        fields["tolerations"] = tuple(_toleration(rng) for _ in range(rng.randint(1, 2)))
    spreads = []
    if rng.random() < 0.3:
        spreads.append(
            Spread(
                labels.ZONE,
                rng.choice((1, 1, 2)),
                rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                selector,
                min_domains=rng.choice((None, None, 3)),
            )
        )
    if rng.random() < 0.2:
        spreads.append(Spread(HOSTNAME, rng.choice((1, 2, 3)), rng.choice(("DoNotSchedule", "ScheduleAnyway")), selector))
    fields["spreads"] = tuple(spreads)
    draw = rng.random()
    if draw < 0.15:
        fields["anti_affinity"] = (AffinityTerm(HOSTNAME, selector),)
    elif draw < 0.25:
        fields["preferred_anti_affinity"] = ((100, AffinityTerm(HOSTNAME, selector)),)
    elif draw < 0.32:
        fields["affinity"] = (AffinityTerm(rng.choice((HOSTNAME, labels.ZONE)), selector),)
    elif draw < 0.37:
        fields["preferred_affinity"] = ((50, AffinityTerm(labels.ZONE, selector)),)
    return PodTemplate("default", f"Deployment/{name}", SOURCE, app, tuple(containers), init, **fields)


def _daemon_set(rng: random.Random, index: int) -> DaemonSet:
    name = f"agent-{index}"
    fields: dict = {}
    if rng.random() < 0.6:
        fields["tolerations"] = (Toleration(operator="Exists"),) if rng.random() < 0.5 else (_toleration(rng),)
    if rng.random() < 0.3:
        fields["node_selector"] = {labels.ARCH: rng.choice(("amd64", "arm64"))}
    cpu, memory = rng.choice((("50m", "64Mi"), ("200m", "256Mi"), ("500m", "512Mi")))
    ports = (HostPort(9100),) if rng.random() < 0.3 else ()
    return DaemonSet(
        name,
        PodTemplate(
            "kube-system",
            f"DaemonSet/{name}",
            SOURCE,
            {"app": name},
            (Container("main", {"cpu": cpu, "memory": memory}, host_ports=ports),),
            **fields,
        ),
    )


def zonal(template: PodTemplate) -> bool:
    """The template spreads or (anti-)affines across zones: where Karpenter breaks ties at random."""
    terms = (
        *template.affinity,
        *template.anti_affinity,
        *(t for _, t in template.preferred_affinity),
        *(t for _, t in template.preferred_anti_affinity),
    )
    return any(s.topology_key == labels.ZONE for s in template.spreads) or any(t.topology_key == labels.ZONE for t in terms)


def generate(seed: int) -> Case:
    rng = random.Random(seed)
    names = sorted(rng.sample(CATALOGUE, rng.randint(6, len(CATALOGUE))))
    pools = tuple(_pool(rng, index, names) for index in range(rng.randint(1, 4)))
    pods = []
    for index in range(rng.randint(1, 6)):
        pods.extend(replicas(_template(rng, index), rng.randint(1, 12)))
    daemons = tuple(_daemon_set(rng, index) for index in range(rng.choice((0, 0, 1, 2))))
    prices = _prices(rng, names, any(zonal(pod.template) for pod in pods))
    types = instance_types([info(n) for n in names], {n: ZONES for n in names}, REGION, NodeClassSettings("default"), prices)
    return Case(seed, World(pools, {"default": types}, tuple(pods), daemons, prices.source))


@dataclass(frozen=True)
class SmallWorld:
    """NodePools (on the class ``default``), a few pods and maybe a DaemonSet: what Karpenter's own
    controller provisions for within a test's minute (tests/real/test_karpenter_provisioning.py)."""

    seed: int
    pools: tuple[NodePoolSpec, ...]
    pods: tuple[Pod, ...]
    daemon_sets: tuple[DaemonSet, ...]


def small(seed: int, most_pods: int = 10) -> SmallWorld:
    """Pools, workloads and DaemonSets drawn as :func:`generate` draws them, at most ``most_pods`` pods (a
    Solve of more loses Nominated events to Karpenter's rate limit), no zonal topology (Karpenter breaks
    its equal-count zone ties at random, and the embedded world's spot prices differ by zone). The zones
    a pod or pool may name are :data:`ZONES`, so in another region's world it stays pending on both sides."""
    rng = random.Random(seed)
    pools = tuple(_pool(rng, index, list(CATALOGUE)) for index in range(rng.randint(1, 3)))
    pods: list[Pod] = []
    index, wanted = 0, rng.randint(2, most_pods)
    while len(pods) < wanted:
        template = _template(rng, index)
        index += 1
        if not zonal(template):
            pods.extend(replicas(template, min(rng.randint(1, 4), wanted - len(pods))))
    daemons = tuple(_daemon_set(rng, index) for index in range(rng.choice((0, 0, 1))))
    return SmallWorld(seed, pools, tuple(pods), daemons)


# --- the demo stack's NodePools with workloads a platform team runs on them ---------------------------

DEMO_REGION, DEMO_ZONES = "us-west-2", ("us-west-2a", "us-west-2b", "us-west-2c")
_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _deployment(name: str, replicas_: int, cpu: str, memory: str, namespace: str = "shop", **spec) -> dict:
    resources_ = {"requests": {"cpu": cpu, "memory": memory}}
    gpu = spec.pop("gpu", None)
    if gpu:
        resources_["limits"] = {"nvidia.com/gpu": gpu}
        resources_["requests"]["nvidia.com/gpu"] = gpu
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas_,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": name, "resources": resources_}], **spec},
            },
        },
    }


def _spread(name: str, key: str, skew: int = 1, when: str = "DoNotSchedule") -> dict:
    return {"maxSkew": skew, "topologyKey": key, "whenUnsatisfiable": when, "labelSelector": {"matchLabels": {"app": name}}}


DEMO_WORKLOADS = (
    _deployment("web", 9, "500m", "1Gi", topologySpreadConstraints=[_spread("web", labels.ZONE)]),
    _deployment("api", 6, "1", "2Gi", affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": {"app": "api"}}}]}}),
    _deployment("cache", 3, "2", "12Gi", nodeSelector={labels.ARCH: "arm64"},
                topologySpreadConstraints=[_spread("cache", HOSTNAME, 1, "ScheduleAnyway")]),
    _deployment("batch", 20, "250m", "512Mi", namespace="jobs", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchExpressions": [{"key": labels.CAPACITY_TYPE, "operator": "In", "values": ["spot"]}]}}]}}),
    _deployment("ledger", 4, "1500m", "4Gi", namespace="payments", nodeSelector={"karpenter.sh/nodepool": "payments"},
                topologySpreadConstraints=[_spread("ledger", labels.ZONE)]),
    _deployment("inference", 2, "3", "12Gi", namespace="ml", gpu="1", tolerations=[_GPU]),
    _deployment("giant", 1, "700", "1Gi", namespace="ml"),
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "node-exporter", "namespace": "monitoring"},
     "spec": {"selector": {"matchLabels": {"app": "node-exporter"}}, "template": {"metadata": {"labels": {"app": "node-exporter"}},
              "spec": {"tolerations": [{"operator": "Exists"}],
                       "containers": [{"name": "e", "image": "e", "resources": {"requests": {"cpu": "100m", "memory": "180Mi"}}}]}}}},
)  # fmt: skip


def demo(seed: int, spot_known: bool = True) -> Case:
    """The demo stack's NodePools and EC2NodeClasses over moto's full catalogue in three zones, Karpenter's
    static on-demand prices and seeded spot prices (or none: spot at the on-demand price), the workloads above."""
    rng = random.Random(seed)
    inputs = load([PROJECT / "stacks" / "Pulumi.demo.yaml"])
    catalogue = LabelledCatalogue(INSTANCE_TYPES.values(), {name: DEMO_ZONES for name in INSTANCE_TYPES}, DEMO_REGION)
    table = on_demand_prices(DEMO_REGION)
    # one spot price a type for every zone: web and ledger spread across zones, where Karpenter breaks ties at random
    spot = (
        {
            (name, zone): shared
            for name, price in table.prices.items()
            if rng.random() < 0.9
            for shared in (round(price * rng.uniform(0.25, 0.9), 5),)
            for zone in DEMO_ZONES
        }
        if spot_known
        else None
    )
    workloads = workloads_from_documents([("workloads.yaml", list(DEMO_WORKLOADS))])
    traits = {c.name: amifamily.family_of(c).node_traits for c in inputs.node_classes}
    world = build_world(
        inputs.node_pools,
        inputs.node_classes,
        catalogue,
        PriceTable(dict(table.prices), table.note, spot),
        workloads.pods,
        workloads.daemon_sets,
        traits=traits,
    )
    return Case(seed, world)


# --- aws-samples/karpenter-blueprints' od-spot-split: one workload split over an on-demand and a spot pool ----

_OD_SPOT_CLASS = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "default"},
    "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "KarpenterNodeRole-demo",  # the embedded AWS world's
             "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
             "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]},
}  # fmt: skip


def _split_pool(name: str, capacity_type: str, domains: list[str]) -> dict:
    """One of the blueprint's two NodePools (its v1beta1 manifests as v1): 1000 cpu / 500Gi, a share of the
    ``capacity-spread`` domains, c/m/r of generation > 2 on amd64 Linux, tainted for the workload."""
    requirements = [
        {"key": "capacity-spread", "operator": "In", "values": domains},
        {"key": labels.ARCH, "operator": "In", "values": ["amd64"]},
        {"key": labels.CAPACITY_TYPE, "operator": "In", "values": [capacity_type]},
        {"key": labels.OS, "operator": "In", "values": ["linux"]},
        {"key": labels.CATEGORY, "operator": "In", "values": ["c", "m", "r"]},
        {"key": labels.GENERATION, "operator": "Gt", "values": ["2"]},
    ]
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"limits": {"cpu": "1k", "memory": "500Gi"},
                 "template": {"metadata": {"labels": {"intent": "apps"}},
                              "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                                       "requirements": requirements,
                                       "taints": [{"key": "intent", "value": "workload-split", "effect": "NoSchedule"}]}}},
    }  # fmt: skip


OD_SPOT_SPLIT = (
    _OD_SPOT_CLASS,
    _split_pool("node-od", "on-demand", ["1"]),
    _split_pool("node-spot", "spot", ["2", "3", "4", "5"]),
)
OD_SPOT_WORKLOAD = _deployment(
    "workload-split", 10, "512m", "512Mi", namespace="default", nodeSelector={"intent": "apps"},
    tolerations=[{"key": "intent", "operator": "Equal", "value": "workload-split", "effect": "NoSchedule"}],
    topologySpreadConstraints=[_spread("workload-split", "capacity-spread")],
)  # fmt: skip


def od_spot_split(seed: int, replicas_: int = 10) -> Case:
    """The blueprint over moto's full catalogue in us-west-2, Karpenter's static on-demand prices and seeded spot
    prices (one per type for every zone, as in :func:`demo`). One Solve turns 6 of its 10 pods away: each new
    NodeClaim holds its largest option against the 500Gi; the later rounds place them."""
    rng = random.Random(seed)
    inputs = load_documents([("od-spot.yaml", list(OD_SPOT_SPLIT))])
    catalogue = LabelledCatalogue(INSTANCE_TYPES.values(), {name: DEMO_ZONES for name in INSTANCE_TYPES}, DEMO_REGION)
    table = on_demand_prices(DEMO_REGION)
    spot = {
        (name, zone): shared
        for name, price in table.prices.items()
        for shared in (round(price * rng.uniform(0.25, 0.9), 5),)
        for zone in DEMO_ZONES
    }
    workload = {**OD_SPOT_WORKLOAD, "spec": {**OD_SPOT_WORKLOAD["spec"], "replicas": replicas_}}
    workloads = workloads_from_documents([("workload.yaml", [workload])])
    world = build_world(
        inputs.node_pools, inputs.node_classes, catalogue, PriceTable(dict(table.prices), table.note, spot), workloads.pods
    )
    return Case(seed, world)
