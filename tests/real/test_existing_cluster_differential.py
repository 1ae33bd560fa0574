"""Our forecast from an existing cluster against Karpenter's own scheduler (v1.15.0, the karpenter-scheduler
`make tools` builds): the same Nodes and the pods bound to them (as ``kubectl get nodes,pods -o json`` gives
them) are fed to both, read on our side by the cluster-state reader, and one Solve places the pending pods.
Compared: per existing node the workloads of the pods it takes, the new NodeClaims per NodePool with their
workloads, and the pods left pending. Replicas of one workload are interchangeable (as in
tests/real/test_simulation_differential.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from support import scheduler as ks
from support.simulation import on_demand, pods, pool, tolerate, types, world

from karpenter_gitops.core import labels
from karpenter_gitops.core.cluster import ClusterState
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.karpenter.scheduling import simulate
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, LabelSelector, Taint
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, DaemonSet, Spread
from karpenter_gitops.load.existing_cluster import cluster

pytestmark = pytest.mark.real
M5 = ("m5.large", "m5.xlarge", "m5.2xlarge")


@pytest.fixture(scope="module")
def program():
    return ks.binary()


def node(
    name: str, type_name: str = "m5.xlarge", pool_name: str = "default", taints=(), zone: str = "us-west-2a"
) -> dict[str, Any]:
    (kind,) = types([type_name])
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "karpenter.sh/nodepool": pool_name, "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
            "karpenter.sh/capacity-type": "on-demand", "node.kubernetes.io/instance-type": type_name,
            "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": zone,
            HOSTNAME: name,
        }},
        "spec": {"providerID": f"aws:///{zone}/i-{name}", "taints": [t.to_json() for t in taints]},
        "status": {"capacity": {k: f"{v}m" for k, v in kind.capacity.items() if v},
                   "allocatable": {k: f"{v}m" for k, v in kind.allocatable.items() if v}},
    }  # fmt: skip


def bound(template_pods, on: str, owner: tuple[str, str] = ("ReplicaSet", "running")) -> list[dict[str, Any]]:
    """Pods already running on node ``on`` (their workload's name: the owner's)."""
    out = []
    for p in template_pods:
        doc = p.to_json()
        doc["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}]
        doc["spec"]["nodeName"] = on
        doc["status"] = {"phase": "Running"}
        out.append(doc)
    return out


def placements(world_, nodes: list[dict], running: list[dict], program) -> tuple[dict, dict]:
    """(ours, Karpenter's): existing node → workloads it takes, NodePool → the workloads of each new NodeClaim, pending."""
    by_uid = {p.uid: p for p in world_.pods}

    def workloads(uids) -> tuple[tuple[str, int], ...]:
        return tuple(sorted(Counter(by_uid[u].template.workload for u in uids).items()))

    document = world_.to_json()
    document["objects"] += [*nodes, *running]
    answer = ks.schedule(document, program=program)
    theirs = {
        "existing": {e["name"]: workloads(e["pods"]) for e in answer["existingNodes"]},
        "new": sorted((c["nodePool"], workloads(c["pods"])) for c in answer["nodeClaims"]),
        "pending": sorted(u["pod"] for u in answer["unschedulable"] if not u.get("ignored")),
    }
    known = cluster(ClusterState.of((), nodes, (), running))
    forecast = simulate(world_, max_rounds=1, cluster_nodes=known.nodes)
    ours = {
        "existing": {e.name: workloads(e.pods) for e in forecast.existing},
        "new": sorted((p.node_pool, workloads(n.pods)) for p in forecast.pools for n in p.nodes),
        "pending": sorted(uid for u in forecast.unschedulable for uid in u.pods),
    }
    return ours, theirs


def test_pending_pods_fill_the_room_the_running_pods_leave(program):
    pending = (*pods(3, "web", cpu="1"), *pods(2, "api", cpu="1500m", memory="3Gi"))
    world_ = world(pending, instance_types_=types(M5))
    running = [*bound(pods(2, "busy", cpu="1"), "ip-a"), *bound(pods(1, "full", cpu="3"), "ip-b")]
    ours, theirs = placements(world_, [node("ip-a"), node("ip-b")], running, program)
    assert ours == theirs
    assert ours["existing"]  # the comparison is about the existing room: some pod lands there


def test_the_existing_nodes_capacity_is_charged_to_their_pools_limits(program):
    limited = pool("default", *on_demand(), limits={"cpu": "6"})  # the two m5.xlarge count 8: nothing new may launch
    world_ = world(pods(4, "web", cpu="1500m"), limited, instance_types_=types(M5))
    running = bound(pods(3, "busy", cpu="1"), "ip-a")
    ours, theirs = placements(world_, [node("ip-a"), node("ip-b")], running, program)
    assert ours == theirs and ours["pending"]


def test_taints_and_the_running_pods_anti_affinity_keep_pods_away(program):
    dedicated = Taint("dedicated", "web", "NoSchedule")
    one_per_node = (AffinityTerm(HOSTNAME, LabelSelector((("app", "web"),))),)
    pending = (
        *pods(3, "web", cpu="500m", anti_affinity=one_per_node, tolerations=(tolerate("dedicated", "web"),)),
        *pods(2, "plain", cpu="500m"),
    )
    running = bound(pods(1, "web-old", cpu="500m", labels={"app": "web"}), "ip-a")
    nodes = [node("ip-a", taints=(dedicated,)), node("ip-b", taints=(dedicated,)), node("ip-c")]
    ours, theirs = placements(world(pending, instance_types_=types(M5)), nodes, running, program)
    assert ours == theirs


def test_daemon_pods_still_to_come_take_their_room_first(program):
    agent = pods(1, "agent", cpu="1")[0]
    daemon = DaemonSet("agent", agent.template)
    world_ = world(pods(5, "web", cpu="1"), instance_types_=types(M5), daemon_sets=(daemon,))
    document_daemon = bound([agent], "ip-a", owner=("DaemonSet", "agent"))  # running on ip-a, not yet on ip-b
    ours, theirs = placements(world_, [node("ip-a"), node("ip-b")], document_daemon, program)
    assert ours == theirs
    assert ours["existing"]["ip-b"] == (("Deployment/web", 2),)  # 1 cpu kept for the agent still to come: not 3


def test_a_nodes_zone_is_a_spread_domain_though_no_pool_offers_it(program):
    # the pool launches in us-west-2b only; a tainted node in us-west-2a makes 2a a domain with no pods that
    # none of them can take, so a zone spread of skew 1 admits one pod in 2b and leaves the rest pending
    zone_b = pool("default", *on_demand(Requirement(labels.ZONE, "In", ("us-west-2b",))))
    spread = (Spread(labels.ZONE, 1, "DoNotSchedule", LabelSelector((("app", "web"),))),)
    world_ = world(pods(3, "web", cpu="500m", spreads=spread), zone_b, instance_types_=types(M5))
    ours, theirs = placements(world_, [node("ip-a", taints=(Taint("dedicated", "x", "NoSchedule"),))], [], program)
    assert ours == theirs
    assert len(ours["pending"]) == 2
