"""A world from the project's own objects: the example manifests, moto's catalogue, Karpenter's static prices, workloads."""

from __future__ import annotations

from conftest import PROJECT
from moto.ec2.models.instance_types import INSTANCE_TYPES

from karpenter_gitops.adapters.aws.pricing import on_demand_prices
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.resolver import LabelledCatalogue
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.assemble import EMPTY_CLUSTER, SPOT_UNKNOWN, build_world
from karpenter_gitops.karpenter.scheduling.forecast import simulate
from karpenter_gitops.karpenter.scheduling.nodes import PriceTable
from karpenter_gitops.load.into_inputs import load
from karpenter_gitops.load.workloads import workloads_from_documents

NAMES = ("m5.large", "m5.xlarge", "m6g.large", "m6g.xlarge", "c6g.large", "c6g.xlarge", "t3.micro")


def test_the_example_platform_runs_a_deployment():
    inputs = load([PROJECT / "examples" / "manifests" / "platform.yaml"])
    catalogue = LabelledCatalogue(
        (INSTANCE_TYPES[n] for n in NAMES), {n: ("us-east-1a", "us-east-1b") for n in NAMES}, "us-east-1"
    )
    table = on_demand_prices("us-east-1")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": "shop"},
        "spec": {
            "replicas": 4,
            "template": {"spec": {"containers": [{"name": "api", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]}},
        },
    }
    workloads = workloads_from_documents([("api.yaml", [deployment])])
    traits = {c.name: amifamily.family_of(c).node_traits for c in inputs.node_classes}
    world = build_world(
        inputs.node_pools,
        inputs.node_classes,
        catalogue,
        PriceTable(table.prices, table.note),
        workloads.pods,
        traits=traits,
        subnet_zones={"al2023": ["us-east-1a"]},
    )
    assert world.notes == (EMPTY_CLUSTER, SPOT_UNKNOWN)
    assert all(o.zone == "us-east-1a" for t in world.instance_types["al2023"] for o in t.offerings)
    forecast = simulate(world)
    (general,) = [p for p in forecast.pools if p.node_pool == "general"]
    # 4 × (1 cpu, 2Gi) = 4 cpu: c6g.xlarge (3920m) holds 3, so the claim packs up to the largest type (m6g/m5/c6g.xlarge):
    # 3 pods, then 1; spot is allowed and priced at on-demand, so both launch as spot in the subnets' zone
    assert sorted(len(n.pods) for n in general.nodes) == [1, 3]
    assert {n.launch.capacity_type for n in general.nodes} == {"spot"} and {n.zones for n in general.nodes} == {("us-east-1a",)}
    assert all(resources.fits(n.requests, n.allocatable) for n in general.nodes)
    assert forecast.to_json()["prices"].startswith("on-demand prices from Karpenter")
