"""``plan --workloads``' forecast against Karpenter's own controller (v1.15.0) provisioning for real.

The controller runs against the real API server and the embedded AWS (the packaged default world: moto's
catalogue in us-west-2, Karpenter's static on-demand prices, the world's spot prices). A world's
EC2NodeClasses and NodePools are applied, its pods created pending and unschedulable as kube-scheduler
leaves them, and the controller's provisioner makes NodeClaims and launches them over the embedded EC2
(CreateFleet) until it settles; none registers (no kubelet), well within the registration TTL.
Compared with the forecast ``plan --workloads`` makes of the same world (its catalogue, prices and rounds):
per NodePool, the NodeClaims as multisets of (instance-type options, launched capacity type, pods per
workload), the pods read from Karpenter's Nominated events (tests/support/provisioning.py says how), and
the pods left pending. Every AWS call the controller makes must be answered; the embedded EC2 launches
a fleet's cheapest override, as EC2 does. What cannot be compared: docs/project/releases-tested.md.

The worlds: the demo stack with the demo cluster's workloads (examples/workloads/shop.yaml), and small
generated ones (tests/support/sim_worlds.py ``small``) on one EC2NodeClass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT
from support.karpenter import running_karpenter
from support.provisioning import (
    controller_claims,
    differences,
    forecast_claims,
    forecast_pending,
    pod_events,
    provisioner_log,
    ready_pools,
    settle,
    submit,
    withdraw,
)
from support.sim_worlds import small

from karpenter_gitops.adapters.aws.embedded_world import load_world
from karpenter_gitops.adapters.aws.target import Target
from karpenter_gitops.app.plan import forecaster, planner, read_workloads
from karpenter_gitops.core import versions
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.load.workloads import Workloads
from karpenter_gitops.rules.examples import BASE_NODECLASS

pytestmark = pytest.mark.real
DEMO_WORKLOADS = PROJECT / "examples" / "workloads" / "shop.yaml"
# 2: ten pods, four pending; 6: a cpu limit and preferred node affinity that take three rounds; 7 and 9: two
# pools, spot and on-demand; 18: a DaemonSet, four NodeClaims, two pods pending; 27: a DaemonSet, families
# with minValues, a limited pool. Each has valid NodePools and no zonal topology.
GENERATED_SEEDS = (2, 6, 7, 9, 18, 27)
UNPLACED = "could not schedule pod"
NODE_CLASS = {**BASE_NODECLASS, "spec": {**BASE_NODECLASS["spec"], "amiSelectorTerms": [{"alias": "al2023@latest"}]}}


@pytest.fixture(scope="module")
def controller(api_server, embedded_server):
    """One controller for the module: each case applies its objects and takes them away again."""
    with running_karpenter(load_world(None), api=api_server, server=embedded_server) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def plan_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("plan-cache")


def provision(cluster, documents: list[dict], workloads: Workloads, cache: Path) -> tuple[int, list[str]]:
    """How many NodeClaims the controller made for ``documents`` and ``workloads`` once it settled, and the
    differences from the forecast's; when there are any, both sides' NodeClaims and the provisioner's steps follow."""
    inputs = load_documents([("objects.yaml", documents)])
    target = Target(cluster.aws.session(), cluster.aws.world.kubernetes)
    plan = planner(target, versions.DEFAULT, cache_dir=cache)(inputs)
    forecast = forecaster(target, versions.DEFAULT, workloads, ["workloads"], cache_dir=cache)(inputs, plan).forecast
    assert forecast is not None
    cluster.log_from = len(cluster.controller.log.read_text(errors="replace"))
    cluster.apply(documents)
    try:
        cluster.settled_classes([d["metadata"]["name"] for d in documents if d["kind"] == "EC2NodeClass"])
        ready_pools(cluster, [d["metadata"]["name"] for d in documents if d["kind"] == "NodePool"])
        submit(cluster, workloads)
        claims = settle(cluster)
        steps = provisioner_log(cluster)
        nominated, failed = pod_events(cluster, {p.template.namespace for p in workloads.pods})
        try:
            theirs, pending = controller_claims(claims, nominated, failed, workloads)
        except AssertionError as unattributed:
            raise AssertionError("\n".join([str(unattributed), *map(json.dumps, steps)])) from None
        # every AWS call the controller made was answered (a pod it places nowhere it logs as an error too)
        assert not [e for e in cluster.errors() if not e.startswith(UNPLACED)], cluster.errors()
    finally:
        withdraw(cluster, workloads)
        cluster.clear()
    ours = forecast_claims(forecast, workloads)
    found = differences(ours, theirs, forecast_pending(forecast, workloads), pending)
    if not found:
        return len(theirs), []
    return len(theirs), [
        *found,
        "forecast:", *(f"  {c.show()}" for c in ours),
        "controller:", *(f"  {c.show()}" for c in theirs),
        "provisioner:", *(f"  {json.dumps(step)}" for step in steps),
    ]  # fmt: skip


def _demo_stack(tmp_path: Path) -> list[dict]:
    out = tmp_path / "rendered"
    done = subprocess.run(
        [sys.executable, "-m", "karpenter_gitops", "render", "--stack", "demo", "--out", str(out)],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return [yaml.safe_load(path.read_text()) for path in sorted(out.glob("*.yaml"))]


def test_the_demo_workloads_get_the_nodeclaims_the_forecast_names(controller, plan_cache, tmp_path):
    """The storefront spread over zones, its API one per node, the nightly report on spot: 11 pods."""
    workloads = read_workloads([str(DEMO_WORKLOADS)], versions.Kubernetes.parse("1.32"))
    made, found = provision(controller, _demo_stack(tmp_path), workloads, plan_cache)
    assert not found, "\n".join(found)
    assert made == 3  # one per zone (the storefront's spread), the catalogue API one per node


@pytest.mark.parametrize("seed", GENERATED_SEEDS)
def test_a_generated_world_gets_the_nodeclaims_the_forecast_names(controller, plan_cache, seed):
    world = small(seed)
    documents = [NODE_CLASS, *(pool.to_json() for pool in world.pools)]
    assert controller.accepted(documents) == documents, "the seed's NodePools must be valid ones"
    workloads = Workloads(world.pods, world.daemon_sets)
    _, found = provision(controller, documents, workloads, plan_cache)
    assert not found, "\n".join(found)
