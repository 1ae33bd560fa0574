"""The cluster state as the scheduler sees it: bound pods are their node's load, DaemonSet pods daemon
overhead, mirror pods stay, unbound pods are pending, terminal pods take no room."""

from __future__ import annotations

from dataclasses import replace

from support.simulation import pods

from karpenter_gitops.core.cluster import ClusterState
from karpenter_gitops.karpenter.scheduling.matching import Taint
from karpenter_gitops.karpenter.scheduling.pods import replicas
from karpenter_gitops.load.existing_cluster import cluster, not_yet_running, workload_of

NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "ip-1", "labels": {"karpenter.sh/nodepool": "general", "karpenter.sh/initialized": "true"}},
    "spec": {"taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "58"}, "allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "58"}},
}  # fmt: skip
STARTING = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "ip-2", "labels": {"karpenter.sh/nodepool": "general"}},
    "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "2"}},
}  # fmt: skip


def pod(name: str, node: str | None = "ip-1", owner: tuple[str, str] | None = None, phase: str = "Running", **metadata):
    owners = [{"kind": owner[0], "name": owner[1], "controller": True}] if owner else []
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "shop", **({"ownerReferences": owners} if owners else {}), **metadata},
        "spec": {**({"nodeName": node} if node else {}), "containers": [{"name": "c", "resources": {"requests": {"cpu": "500m"}}}]},
        "status": {"phase": phase},
    }  # fmt: skip


def test_each_pod_is_its_nodes_load_a_daemon_pod_a_mirror_pod_or_pending():
    state = ClusterState.of(
        (),
        [NODE, STARTING],
        (),
        [
            pod("web-7d4b9c-a", owner=("ReplicaSet", "web-7d4b9c"), labels={"pod-template-hash": "7d4b9c"}),
            pod("agent-x", owner=("DaemonSet", "agent")),
            pod("kube-proxy-ip-1", annotations={"kubernetes.io/config.mirror": "abc"}),
            pod("web-7d4b9c-b", node=None, owner=("ReplicaSet", "web-7d4b9c"), labels={"pod-template-hash": "7d4b9c"}),
            pod("done", phase="Succeeded"),
            pod("lost", node="ip-9"),
        ],
    )
    known = cluster(state)
    first, second = known.nodes
    assert [p.uid for p in first.pods] == ["shop/web-7d4b9c-a"] and first.pods[0].template.workload == "Deployment/web"
    assert [p.uid for p in first.daemon_pods] == ["shop/agent-x"] and [p.uid for p in first.static_pods] == [
        "shop/kube-proxy-ip-1"
    ]
    assert first.node_pool == "general" and first.initialized and first.taints == (Taint("dedicated", "web", "NoSchedule"),)
    assert first.allocatable["cpu"] == 3920 and first.capacity["cpu"] == 4000
    assert not second.initialized and second.taints == ()  # a starting node's not-ready taint is looked past
    assert second.allocatable == second.capacity  # no allocatable reported: its capacity stands for it
    assert [p.uid for p in known.pending] == ["shop/web-7d4b9c-b"]
    assert [d.name for d in known.daemon_sets] == ["agent"]
    assert known.notes == ("1 pod(s) bound to node ip-9, which the state does not hold: left out",)


def test_a_pod_names_the_workload_the_manifests_name():
    def named(**metadata) -> str:
        return workload_of({"metadata": {"name": "p", **metadata}})

    assert named() == "Pod/p"
    rs = [{"kind": "ReplicaSet", "name": "web-7d4b9c", "controller": True}]
    assert named(ownerReferences=rs, labels={"pod-template-hash": "7d4b9c"}) == "Deployment/web"
    assert named(ownerReferences=rs) == "ReplicaSet/web-7d4b9c"  # a ReplicaSet of its own
    assert named(ownerReferences=[{"kind": "StatefulSet", "name": "db", "controller": True}]) == "StatefulSet/db"


def test_the_workloads_pods_the_cluster_already_runs_are_not_added_again():
    state = ClusterState.of((), [NODE], (), [pod(f"web-{n}", owner=("StatefulSet", "web")) for n in range(2)])
    deployment = pods(3, "web", namespace="shop")  # Deployment/web: not the StatefulSet
    assert not_yet_running(deployment, cluster(state)) == deployment
    stateful = replicas(replace(deployment[0].template, workload="StatefulSet/web"), 3)
    assert not_yet_running(stateful, cluster(state)) == stateful[2:]  # 3 wanted, 2 running: one more


def test_a_launched_nodeclaim_without_its_node_is_a_node_in_flight():
    claim = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": {"name": "general-x1", "labels": {"karpenter.sh/nodepool": "general", "node.kubernetes.io/instance-type": "m5.large"}},
        "spec": {"taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}, {"key": "cni-not-ready", "effect": "NoSchedule"}],
                 "startupTaints": [{"key": "cni-not-ready", "effect": "NoSchedule"}]},
        "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "29"}},
    }  # fmt: skip
    not_launched = {**claim, "metadata": {"name": "general-x2", "labels": {}}, "status": {}}
    registered = {**claim, "metadata": {"name": "general-x3", "labels": {}}, "status": {**claim["status"], "nodeName": "ip-1"}}
    (node_, flying) = cluster(ClusterState.of([claim, not_launched, registered], [NODE])).nodes
    assert node_.name == "ip-1"  # the NodeClaim that became it is not counted twice
    assert flying.name == "general-x1" and flying.node_pool == "general" and not flying.initialized
    assert flying.taints == (Taint("dedicated", "web", "NoSchedule"),)  # its startup taint is looked past
    assert flying.capacity["cpu"] == flying.allocatable["cpu"] == 2000 and flying.pods == ()
