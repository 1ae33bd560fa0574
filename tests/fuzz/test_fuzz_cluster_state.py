"""The cluster-state snapshot front door (``preview --cluster-state``) on hostile input: any bytes, and
kubectl's output (NodeClaims, Nodes, Pods) with values replaced anywhere, give a state or one line naming
the file (exit 2); never a traceback, and a state read is one whose fleet can be counted and whose nodes
and pods the scheduler can start from."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_kube import NODECLAIMS, NODES, PODS
from support.hostile import PROFILE, TEXT_EDITS, as_text, mutated, run
from support.preview_objects import node_class, node_pool

from karpenter_gitops.core.cluster import ClusterState
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import cluster_state, existing_cluster

ITEMS = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", **i} for i in NODECLAIMS["items"]]
NODE_WITH_ROOM = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "ip-10-0-1-2.ec2.internal", "labels": {"karpenter.sh/nodepool": "general"}},
    "spec": {"taints": [{"key": "dedicated", "value": "web", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "58"}, "allocatable": {"cpu": "3920m", "memory": "15Gi"}},
}  # fmt: skip
IN_FLIGHT = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
    "metadata": {"name": "general-x1", "labels": {"karpenter.sh/nodepool": "general"}},
    "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}], "startupTaints": [{"key": "a", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "2", "memory": "8Gi"}, "allocatable": {"cpu": "1930m"}},
}  # fmt: skip
ITEMS += [{"apiVersion": "v1", "kind": "Node", **i} for i in NODES["items"]] + [NODE_WITH_ROOM, IN_FLIGHT]
POD_ITEMS = [{"apiVersion": "v1", "kind": "Pod", **i} for i in PODS["items"]]
POD_ITEMS += [
    {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "agent-x", "namespace": "kube-system",
                     "ownerReferences": [{"kind": "DaemonSet", "name": "agent", "controller": True}]},
        "spec": {"nodeName": "ip-10-0-1-2.ec2.internal", "tolerations": [{"operator": "Exists"}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                     "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}},
                 "containers": [{"name": "a", "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}},
                                 "ports": [{"containerPort": 9100, "hostPort": 9100}]}]},
        "status": {"phase": "Running"},
    },
    {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pending", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}],
                 "initContainers": [{"name": "i", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
                 "containers": [{"name": "c"}]},
        "status": {"phase": "Pending"},
    },
]  # fmt: skip
SEEDS = st.sampled_from(
    [{"apiVersion": "v1", "kind": "List", "items": [*ITEMS, *POD_ITEMS]}, NODECLAIMS, NODES, PODS, *POD_ITEMS]
)


def read_or_refuse(path) -> ClusterState | None:
    try:
        state = cluster_state.read(path)
    except InputError as error:
        assert "\n" not in str(error) and str(error).startswith(str(path)), str(error)
        return None
    assert all(node.name is not None and node.node_pool for node in state.fleet)
    known = existing_cluster.cluster(state)  # what the scheduler starts from: every pod read again, never a traceback
    assert len(known.nodes) <= len(state.nodes) + len(state.node_claims) and len(known.pending) <= len(state.pods)
    return state


@PROFILE
@given(data=st.binary(max_size=2_000))
def test_any_bytes_are_a_state_or_one_line(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("state") / "cluster.yaml"
    path.write_bytes(data)
    read_or_refuse(path)


@PROFILE
@given(docs=st.lists(mutated(SEEDS), min_size=1, max_size=3), edit=TEXT_EDITS)
def test_kubectls_output_with_hostile_values_is_a_state_or_one_line(tmp_path_factory, docs, edit):
    path = tmp_path_factory.mktemp("state") / "cluster.yaml"
    path.write_text(as_text(docs, edit))
    read_or_refuse(path)


@settings(PROFILE, max_examples=max(10, PROFILE.max_examples // 10))
@given(docs=st.lists(mutated(SEEDS), min_size=1, max_size=2), edit=TEXT_EDITS)
def test_preview_keeps_the_front_door_contract_on_a_hostile_snapshot(tmp_path_factory, docs, edit):
    directory = tmp_path_factory.mktemp("preview")
    for side, pool in (("base", node_pool()), ("head", node_pool(name="general-2"))):
        (directory / side).mkdir()
        (directory / side / "karpenter.yaml").write_text(yaml.safe_dump_all([node_class(), pool]))
    (directory / "cluster.yaml").write_text(as_text(docs, edit))
    argv = ["preview", "--manifests", str(directory / "head"), "--base", str(directory / "base")]
    run([*argv, "--cluster-state", str(directory / "cluster.yaml"), "--kubernetes-version", "1.32", "--format", "json"])
