"""The NodeClaims Karpenter launched beside the forecast, per NodePool."""

from __future__ import annotations

from support.simulation import on_demand, pods, pool, types, world

from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.karpenter.scheduling.forecast import simulate
from karpenter_gitops.karpenter.scheduling.launched import launched

M5 = types(("m5.large", "m5.xlarge"))


def node(name, pool_, instance_type, capacity="on-demand", zone="us-west-2a"):
    return FleetNode(
        name,
        pool_,
        instance_type,
        "ami-1",
        {"karpenter.sh/capacity-type": capacity, "topology.kubernetes.io/zone": zone, "karpenter.sh/nodepool": pool_},
    )


def forecast():
    # one 1-cpu pod, in the heavier pool: an m5.large (the cheapest; m5.xlarge is the other candidate)
    return simulate(world(pods(1), pool("default", *on_demand(), weight=10), pool("idle", *on_demand()), instance_types_=M5))


def test_a_pool_as_forecast_says_so():
    (default, idle) = launched(forecast(), [node("a", "default", "m5.large")])
    assert default.as_forecast and default.sentence() == "default: as forecast, 1 NodeClaim(s) (1 × m5.large)"
    assert idle.as_forecast and idle.sentence() == "idle: as forecast, 0 NodeClaim(s) (none)"


def test_a_difference_is_one_line_with_counts_types_and_the_candidates():
    fleet = [
        node("a", "default", "m5.xlarge", "spot", "us-west-2b"),
        node("b", "default", "m5.xlarge", "spot", "us-west-2c"),
        node("c", "other", "c5.large"),
    ]  # another pool's (not in Git): left alone
    default, _ = launched(forecast(), fleet)
    assert default.sentence() == (
        "default: forecast 1 NodeClaim(s) (1 × m5.large), launched 2 (2 × m5.xlarge); 1 more; "
        "other types, m5.xlarge among the forecast's candidates"
    )
    assert default.to_json()["launched"] == {
        "nodeClaims": 2,
        "instanceTypes": {"m5.xlarge": 2},
        "capacityTypes": {"spot": 2},
        "zones": {"us-west-2b": 1, "us-west-2c": 1},
    }
    assert default.to_json()["forecast"]["capacityTypes"] == {"on-demand": 1}


def test_a_node_without_labels_counts_as_unknown():
    (default, _) = launched(forecast(), [FleetNode("a", "default", None, None)])
    assert default.launched == {"unknown": 1} and default.capacity_types == {"unknown": 1}
