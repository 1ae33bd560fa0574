"""A NodePool's cost at its limits, on small worlds worked by hand.

Capacity (AL2023 defaults, 7.5 % VM memory overhead) of the types these tests use:
  c5.large  2 vCPU, 3788Mi  (4096 − ceil(307.2))    $0.085
  m5.large  2 vCPU, 7577Mi  (8192 − ceil(614.4))    $0.096
  r5.large  2 vCPU, 15155Mi (16384 − ceil(1228.8))  $0.126
"""

from __future__ import annotations

import pytest
from support.simulation import ZONES, on_demand, pods, pool, types, world

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.karpenter.scheduling.forecast import simulate
from karpenter_gitops.karpenter.scheduling.limits import nodes_within, priced
from karpenter_gitops.karpenter.scheduling.nodes import Offering

LARGE = ("c5.large", "m5.large", "r5.large")


def at_limits(*pools, **world_fields):
    forecast = simulate(world(pods(1), *pools, **world_fields))
    return {p.node_pool: p.limit_cost for p in forecast.pools}


def fill(f):
    return (f.instance_type, f.capacity_type, f.nodes, round(f.hourly, 6))


def test_a_cpu_limit_filled_with_the_cheapest_and_the_dearest_type():
    cost = at_limits(pool("default", *on_demand(), limits={"cpu": "8"}), instance_types_=types(LARGE))["default"]
    # 2 vCPU each: 4 nodes of any of them reach 8 cpu
    assert fill(cost.cheapest) == ("c5.large", "on-demand", 4, 0.34)
    assert fill(cost.dearest) == ("r5.large", "on-demand", 4, 0.504)
    assert (cost.types, cost.too_large) == (3, 0)
    assert cost.to_json()["cheapest"]["pricePerMonth"] == round(0.34 * 730, 6)


def test_the_binding_limit_decides_which_type_is_cheap():
    # memory binds: r5.large reaches 16Gi with 1.08 nodes ($0.136 per limit), c5.large needs 4.3 ($0.37)
    cost = at_limits(pool("default", *on_demand(), limits={"cpu": "100", "memory": "16Gi"}), instance_types_=types(LARGE))[
        "default"
    ]
    assert fill(cost.cheapest) == ("r5.large", "on-demand", 1, 0.126)
    assert fill(cost.dearest) == ("c5.large", "on-demand", 4, 0.34)


def test_a_type_larger_than_the_limit_never_launches():
    cost = at_limits(
        pool("default", *on_demand(), limits={"cpu": "3"}), instance_types_=types(("m5.large", "m5.xlarge", "m5.2xlarge"))
    )["default"]
    assert fill(cost.cheapest) == fill(cost.dearest) == ("m5.large", "on-demand", 1, 0.096)
    assert (cost.types, cost.too_large) == (1, 2)


def test_no_type_under_the_limit():
    cost = at_limits(pool("default", *on_demand(), limits={"cpu": "1"}), instance_types_=types(LARGE))["default"]
    assert cost.cheapest is None and cost.dearest is None and cost.too_large == 3
    assert cost.to_json()["cheapest"] is None


def test_the_node_limit_caps_the_fill():
    cost = at_limits(pool("default", *on_demand(), limits={"cpu": "100", "nodes": "2"}), instance_types_=types(LARGE))["default"]
    assert fill(cost.cheapest) == ("c5.large", "on-demand", 2, 0.17)


@pytest.mark.parametrize("limits", [None, {"nodes": "10"}, {"nvidia.com/gpu": "4"}])
def test_only_pools_limiting_cpu_or_memory_get_a_cost(limits):
    assert at_limits(pool("default", *on_demand(), limits=limits), instance_types_=types(LARGE)) == {"default": None}


def test_the_pools_requirements_narrow_the_types():
    memory_optimised = pool(
        "default", *on_demand(Requirement("karpenter.k8s.aws/instance-category", "In", ("r",))), limits={"cpu": "8"}
    )
    cost = at_limits(memory_optimised, instance_types_=types(LARGE))["default"]
    assert cost.types == 1 and cost.cheapest.instance_type == cost.dearest.instance_type == "r5.large"


def test_spot_prices_bound_the_fill_and_dearer_spot_falls_back_to_on_demand():
    spot = {("c5.large", zone): price for zone, price in zip(ZONES, (0.03, 0.04, 0.05), strict=True)}
    spot |= {("r5.large", zone): 0.2 for zone in ZONES}  # dearer than its on-demand $0.126: the launch drops it
    cost = at_limits(pool("default", limits={"cpu": "8"}), instance_types_=types(("c5.large", "r5.large"), spot=spot))["default"]
    assert fill(cost.cheapest) == ("c5.large", "spot", 4, 0.12)
    assert fill(cost.dearest) == ("r5.large", "on-demand", 4, 0.504)
    # the dearest c5.large fill would take the dearest spot zone
    assert priced([Offering(z, "spot", p) for z, p in zip(ZONES, (0.03, 0.04, 0.05), strict=True)]) == ("spot", 0.03, 0.05)


def test_an_unusable_pool_has_no_limit_cost():
    arm = pool("arm", *on_demand(Requirement(labels.ARCH, "In", ("arm64",))), limits={"cpu": "8"})  # no arm64 type here
    forecast = simulate(world(pods(1), pool("default", *on_demand()), arm, instance_types_=types(LARGE)))
    (unusable,) = [p for p in forecast.pools if p.node_pool == "arm"]
    assert unusable.unusable and unusable.limit_cost is None and unusable.to_json()["limitCost"] is None


def test_nodes_within_takes_the_first_limit_reached():
    assert nodes_within({"cpu": 8000, "memory": 4 * 2**30 * 1000}, {"cpu": 2000, "memory": 2**30 * 1000}) == 4
    assert nodes_within({"cpu": 8000, "nodes": 3000}, {"cpu": 2000}) == 3
    assert nodes_within({"cpu": 1000}, {"cpu": 2000}) == 0.5
