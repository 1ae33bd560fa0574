"""The forecast from the cluster's own nodes: pods fill their room first, their capacity is charged against
the limits, the pods already on them count (requests, daemon pods, topology), initialized nodes go first.

m5.xlarge: 4 cpu capacity, 3920m allocatable (tests/karpenter/scheduling/test_scheduler.py).
"""

from __future__ import annotations

from dataclasses import replace

from support.simulation import on_demand, pods, pool, types, world
from support.simulation import state_node as node

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.karpenter.scheduling.existing import ExistingNode
from karpenter_gitops.karpenter.scheduling.forecast import simulate
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, LabelSelector, Taint
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, DaemonSet, Spread
from karpenter_gitops.karpenter.scheduling.rounds import provision

M5 = ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")
(XLARGE,) = types(["m5.xlarge"])


def new_claims(forecast) -> int:
    return sum(len(p.nodes) for p in forecast.pools)


def test_pending_pods_fill_the_existing_room_first_and_only_the_rest_make_nodeclaims():
    running = pods(2, "running", cpu="1")  # 2 cpu of the 3920m used: room for one more 1-cpu pod
    forecast = simulate(world(pods(2, "new", cpu="1"), instance_types_=types(M5)), cluster_nodes=[node("ip-1", bound=running)])
    assert [(e.name, e.node_pool, e.instance_type, e.pods) for e in forecast.existing] == [
        ("ip-1", "default", "m5.xlarge", ("default/new-0",))
    ]
    assert new_claims(forecast) == 1 and forecast.pools[0].nodes[0].pods == ("default/new-1",)
    assert forecast.to_json()["existingNodes"] == [
        {"node": "ip-1", "nodePool": "default", "instanceType": "m5.xlarge", "pods": ["default/new-0"]}
    ]
    empty = simulate(world(pods(2, "new", cpu="1"), instance_types_=types(M5)))
    assert empty.existing is None and "existingNodes" not in empty.to_json() and new_claims(empty) == 1


def test_the_existing_nodes_capacity_is_charged_against_their_pools_limits():
    # limit 4 cpu: the full m5.xlarge's 4 cpu of capacity use it all, so no type fits under what is left
    full = pods(3, "running", cpu="1200m")
    limited = world(pods(1, "new", cpu="1"), pool("default", *on_demand(), limits={"cpu": "4"}), instance_types_=types(M5))
    forecast = simulate(limited, cluster_nodes=[node("ip-1", bound=full)])
    assert [u.message for u in forecast.unschedulable] == [
        "all available instance types exceed limits for nodepool (NodePool=default)"
    ]
    assert simulate(limited).unschedulable == ()  # from an empty cluster the limit leaves room
    other_pool = simulate(limited, cluster_nodes=[node("ip-1", bound=full, pool_name="other")])
    assert other_pool.unschedulable == ()  # another pool's node is not charged to this one


def test_the_daemon_pods_already_running_are_not_counted_twice():
    agent = pods(1, "agent", cpu="500m")[0]
    daemon = DaemonSet("agent", agent.template)
    limited = world((), daemon_sets=(daemon,), instance_types_=types(M5))
    running = ExistingNode(node("ip-1", daemon_pods=[agent]), limited.daemon_sets)
    missing = ExistingNode(node("ip-2"), limited.daemon_sets)
    assert running.remaining["cpu"] == missing.remaining["cpu"] == XLARGE.allocatable["cpu"] - 500
    assert running.remaining["pods"] == XLARGE.allocatable["pods"] - 1000


def test_the_pods_on_a_node_keep_an_anti_affine_pod_away():
    web = pods(1, "web", cpu="100m")  # labelled app=web
    one_per_node = (AffinityTerm(HOSTNAME, LabelSelector((("app", "web"),))),)
    pending = pods(1, "web2", cpu="100m", labels={"app": "web"}, anti_affinity=one_per_node)
    forecast = simulate(world(pending, instance_types_=types(M5)), cluster_nodes=[node("ip-1", bound=web)])
    assert forecast.existing == () and new_claims(forecast) == 1
    free = simulate(world(pending, instance_types_=types(M5)), cluster_nodes=[node("ip-1")])
    assert [e.pods for e in free.existing] == [("default/web2-0",)] and new_claims(free) == 0


def test_initialized_nodes_are_tried_before_the_others_whatever_their_names():
    run = provision(world(pods(1, "new"), instance_types_=types(M5)), cluster_nodes=[node("a", initialized=False), node("b")])
    assert [(n.node.name, [p.uid for p in n.pods]) for n in run.last.existing] == [("b", ["default/new-0"]), ("a", [])]


def test_a_nodes_zone_is_a_spread_domain_though_no_pool_offers_it():
    # countDomains: the tainted node in us-west-2a makes 2a a domain none of the pods can take, so a zone
    # spread of skew 1 admits one pod in 2b (the only zone the pool launches in) and leaves two pending
    zone_b = pool("default", *on_demand(Requirement(labels.ZONE, "In", ("us-west-2b",))))
    spread = (Spread(labels.ZONE, 1, "DoNotSchedule", LabelSelector((("app", "web"),))),)
    tainted = replace(node("ip-a"), taints=(Taint("dedicated", "x", "NoSchedule"),))
    world_ = world(pods(3, "web", cpu="500m", spreads=spread), zone_b, instance_types_=types(M5))
    assert sum(len(u.pods) for u in simulate(world_, max_rounds=1, cluster_nodes=[tainted]).unschedulable) == 2
    in_flight = replace(tainted, registered=False)  # a NodeClaim not yet a Node adds no domain
    assert simulate(world_, max_rounds=1, cluster_nodes=[in_flight]).unschedulable == ()
