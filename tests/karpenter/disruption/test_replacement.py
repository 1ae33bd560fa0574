"""Where a NodePool's drifted nodes' pods go when the nodes are replaced (``SimulateScheduling``): the
remaining nodes' room first, then new NodeClaims of the head's NodePools; pods that fit nowhere say why."""

from __future__ import annotations

from support.simulation import on_demand, pods, pool, types, world
from support.simulation import state_node as node

from karpenter_gitops.karpenter.disruption.replacement import replacement
from karpenter_gitops.karpenter.scheduling.existing import Cluster, StateNode
from karpenter_gitops.karpenter.scheduling.pods import DaemonSet

M5 = ("m5.large", "m5.xlarge", "m5.2xlarge", "m5.4xlarge")


def cluster(*nodes: StateNode, pending=(), daemon_sets=()) -> Cluster:
    return Cluster(tuple(nodes), tuple(pending), tuple(daemon_sets))


def test_pods_move_to_the_room_left_on_other_nodes_then_to_new_nodeclaims():
    drifted = node("ip-old", bound=pods(2, "shop", cpu="1500m"))
    other = node("ip-other", bound=pods(1, "busy", cpu="2"))  # 1920m left: room for one of them
    head = world((), pool("default", *on_demand()), instance_types_=types(M5))
    result = replacement(head, cluster(drifted, other), frozenset({"ip-old"}))
    assert result.nodes == ("ip-old",)
    assert [(m.pod, m.node, m.to, m.new) for m in result.moves] == [
        ("default/shop-0", "ip-old", "ip-other", False),
        ("default/shop-1", "ip-old", "replacement-default-1", True),
    ]
    (claim,) = result.node_claims
    assert claim.node_pool == "default" and claim.capacity_type == "on-demand" and claim.instance_types[0] == "m5.large"
    assert result.to_json()["moves"][1] == {
        "pod": "default/shop-1", "from": "ip-old", "to": "replacement-default-1", "newNodeClaim": True, "reason": None,
    }  # fmt: skip


def test_a_drifted_node_takes_none_of_the_pods_and_daemon_pods_do_not_move():
    agent = pods(1, "agent", cpu="100m")[0]
    first = node("ip-a", bound=pods(1, "a", cpu="1"), daemon_pods=[agent])
    second = node("ip-b", bound=pods(1, "b", cpu="1"))  # drifted too: though it has room, nothing lands there
    head = world((), instance_types_=types(M5))
    result = replacement(
        head, cluster(first, second, daemon_sets=[DaemonSet("agent", agent.template)]), frozenset({"ip-a", "ip-b"})
    )
    assert {m.pod for m in result.moves} == {"default/a-0", "default/b-0"}  # not the daemon pod
    assert all(m.new for m in result.moves) and len(result.node_claims) == 1


def test_a_pod_that_fits_nowhere_in_the_head_says_karpenters_reason():
    gpu_only = pods(1, "train", cpu="1", node_selector={"karpenter.k8s.aws/instance-gpu-count": "1"})
    result = replacement(world((), instance_types_=types(M5)), cluster(node("ip-old", bound=gpu_only)), frozenset({"ip-old"}))
    (move,) = result.moves
    assert move.to is None and result.stuck == (move,) and result.node_claims == ()
    assert move.reason is not None and move.reason.startswith("no instance type met all requirements")


def test_a_pod_that_would_land_on_an_uninitialized_node_keeps_the_node_from_being_replaced():
    starting = node("ip-new", initialized=False)
    result = replacement(
        world((), instance_types_=types(M5)), cluster(node("ip-old", bound=pods(1, "a")), starting), frozenset({"ip-old"})
    )
    (move,) = result.moves
    assert move.to is None and move.reason == "would schedule against uninitialized node/ip-new"
