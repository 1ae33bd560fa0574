"""A cluster-state snapshot read as kubectl prints it (List, multi-document, JSON), and every way a file is not one."""

from __future__ import annotations

import json

import pytest
import yaml
from support.fake_kube import NODECLAIMS, NODES, PODS

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import cluster_state

CLAIM, STATIC = ({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", **item} for item in NODECLAIMS["items"])
(NODE,) = ({"apiVersion": "v1", "kind": "Node", **item} for item in NODES["items"])
OTHER_NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "not-karpenters", "labels": {"a": "b"}}}
(POD,) = ({"apiVersion": "v1", "kind": "Pod", **item} for item in PODS["items"])
KUBECTL_LIST = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [CLAIM, STATIC, NODE, OTHER_NODE],
    "metadata": {"resourceVersion": ""},
}


def snapshot(tmp_path, text: str):
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return path


def fleet(state) -> list[tuple]:
    return [(n.name, n.node_pool, n.instance_type, n.image_id) for n in state.fleet]


EXPECTED = [("general-abc12", "general", "m5.large", "ami-0a23000000000a001")]


BOTH_NODES = ["ip-10-0-1-1.ec2.internal", "not-karpenters"]


@pytest.mark.parametrize(
    ("text", "nodes"),
    [
        (yaml.safe_dump(KUBECTL_LIST), BOTH_NODES),
        (json.dumps(KUBECTL_LIST, indent=4), BOTH_NODES),  # kubectl get -o json
        (yaml.safe_dump_all([CLAIM, STATIC, NODE, OTHER_NODE]), BOTH_NODES),  # the objects as documents
        (  # the API's own lists, one each
            yaml.safe_dump_all([{**NODECLAIMS, "apiVersion": "karpenter.sh/v1"}, NODES, PODS]),
            ["ip-10-0-1-1.ec2.internal"],
        ),
    ],
    ids=["list", "json", "documents", "typed-lists"],
)
def test_kubectls_output_in_each_shape_gives_the_fleet(tmp_path, text, nodes):
    state = cluster_state.read(snapshot(tmp_path, text))
    assert fleet(state) == EXPECTED and state.notes == ()
    assert [n["metadata"]["name"] for n in state.nodes] == nodes  # every Node: a managed node group's takes pods too


def test_what_it_writes_reads_back_as_the_same_state(tmp_path):
    from karpenter_gitops.output.manifests import to_yaml

    state = cluster_state.read(snapshot(tmp_path, yaml.safe_dump({**KUBECTL_LIST, "items": [*KUBECTL_LIST["items"], POD]})))
    again = cluster_state.read(snapshot(tmp_path, to_yaml(state.to_list())))
    assert again == state and fleet(again) == EXPECTED and len(again.pods) == 1


def test_a_pod_keeps_what_scheduling_reads_and_nothing_a_log_should_not_carry(tmp_path):
    state = cluster_state.read(snapshot(tmp_path, yaml.safe_dump({**KUBECTL_LIST, "items": [*KUBECTL_LIST["items"], POD]})))
    (pod,) = state.pods
    (container,) = pod["spec"]["containers"]
    assert container == {"name": "web", "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}  # no image, no env
    assert pod["spec"]["nodeName"] == "ip-10-0-1-1.ec2.internal" and pod["metadata"]["namespace"] == "shop"
    assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" and pod["status"] == {"phase": "Running"}


def test_an_empty_list_is_a_cluster_without_nodeclaims(tmp_path):
    state = cluster_state.read(snapshot(tmp_path, "apiVersion: v1\nkind: List\nitems: []\n"))
    assert state.fleet == () and state.notes == ()


def test_nodes_without_their_nodeclaims_say_so(tmp_path):
    """`kubectl get nodes -o yaml` alone: Karpenter drifts NodeClaims, so the note names the command that counts."""
    path = snapshot(tmp_path, yaml.safe_dump({**KUBECTL_LIST, "items": [NODE, OTHER_NODE]}))
    state = cluster_state.read(path)
    assert state.fleet == ()
    (note,) = state.notes
    assert note.startswith(f"{path}: holds Nodes but no NodeClaim") and "kubectl get nodeclaims,nodes,pods" in note


def test_items_of_other_kinds_are_passed_over_with_a_note(tmp_path):
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}}
    foreign = {**CLAIM, "apiVersion": "example.com/v1"}  # a NodeClaim, but not Karpenter's
    path = snapshot(tmp_path, yaml.safe_dump({**KUBECTL_LIST, "items": [*KUBECTL_LIST["items"], service, service, foreign]}))
    state = cluster_state.read(path)
    assert fleet(state) == EXPECTED
    assert state.notes == (
        f"{path}: passed over 3 item(s) that are not NodeClaims, Nodes or Pods (Service, example.com/v1/NodeClaim)",
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty: expected the output of `kubectl get nodeclaims,nodes,pods -A -o yaml`"),
        ("just text\n", "the document is not a Kubernetes object (no kind)"),
        ("- a\n- b\n", "the document is not a Kubernetes object (no kind)"),
        ("kind: List\nitems: {a: 1}\n", "the document: a List without a list of items"),
        ("kind: List\nitems: [3]\n", "the document, items[0] is not a Kubernetes object (no kind)"),
        (
            "kind: NodePool\napiVersion: karpenter.sh/v1\nmetadata: {name: general}\n",
            "holds no NodeClaim, Node or Pod (only NodePool)",
        ),
        (
            "kind: Node\napiVersion: v1\n---\nkind: Node\napiVersion: v1\nmetadata: {}\n",
            "document 1: a Node without metadata.name",
        ),
        (
            "kind: Node\napiVersion: v1\nmetadata: {name: n, labels: [a]}\n",
            "the document (Node 'n'): metadata.labels is not a map of strings",
        ),
        ("kind: Node\napiVersion: v1\nmetadata: {name: n, labels: {a: 1}}\n", "metadata.labels is not a map of strings"),
        (
            "kind: NodeClaim\napiVersion: karpenter.sh/v1\nmetadata: {name: c}\nstatus: 3\n",
            "(NodeClaim 'c'): status is not a map",
        ),
        (
            "kind: NodeClaim\napiVersion: karpenter.sh/v1\nmetadata: {name: c}\nstatus: {nodeName: [x]}\n",
            "(NodeClaim 'c'): status.nodeName is not a string",
        ),
        ("kind: List\nitems: [\n", "invalid YAML"),
        (
            "kind: Node\napiVersion: v1\nmetadata: {name: n}\nspec: {taints: [{key: 3}]}\n",
            "(Node 'n'): spec.taints is not a list",
        ),
        (
            "kind: Node\napiVersion: v1\nmetadata: {name: n}\nstatus: {allocatable: {cpu: lots}}\n",
            "(Node 'n'): status.allocatable.cpu: 'lots' is not a quantity",
        ),
        (
            "kind: NodeClaim\napiVersion: karpenter.sh/v1\nmetadata: {name: c}\nstatus: {capacity: {cpu: lots}}\n",
            "(NodeClaim 'c'): status.capacity.cpu: 'lots' is not a quantity",
        ),
        (
            "kind: NodeClaim\napiVersion: karpenter.sh/v1\nmetadata: {name: c}\nspec: {startupTaints: 3}\n",
            "(NodeClaim 'c'): spec.startupTaints is not a list of taints",
        ),
        ("kind: Pod\napiVersion: v1\nmetadata: {name: p, namespace: [a]}\n", "(Pod 'p'): metadata.namespace is not a string"),
        ("kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {nodeName: 3}\n", "(Pod 'p'): spec.nodeName is not a string"),
        ("kind: Pod\napiVersion: v1\nmetadata: {name: p}\nstatus: {phase: [x]}\n", "(Pod 'p'): status.phase is not a string"),
        (
            "kind: Pod\napiVersion: v1\nmetadata: {name: p, ownerReferences: [3]}\n",
            "(Pod 'p'): metadata.ownerReferences is not a list of owners",
        ),
        (
            "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}\n",
            "(Pod 'p'): spec.containers[0].resources.requests.cpu: 'lots' is not a quantity (hint: write a quantity",
        ),
        (
            "kind: Pod\napiVersion: v1\nmetadata: {name: p}\nspec: {tolerations: 3}\n",
            "(Pod 'p'): spec.tolerations: expected a list",
        ),
    ],
)
def test_a_file_that_is_not_kubectls_output_is_one_error_naming_it(tmp_path, text, says):
    path = snapshot(tmp_path, text)
    with pytest.raises(InputError) as raised:
        cluster_state.read(path)
    assert says in str(raised.value) and str(raised.value).startswith(str(path)) and "\n" not in str(raised.value)


def test_a_missing_file_or_a_directory_is_named(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        cluster_state.read(tmp_path / "missing.yaml")
    with pytest.raises(InputError, match="cannot read"):
        cluster_state.read(tmp_path)
