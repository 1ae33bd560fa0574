"""The cluster-state snapshot front door (``preview --cluster-state``) on hostile input: any bytes, and
kubectl's output with values replaced anywhere, give a state or one line naming the file (exit 2); never a
traceback, and a state read is one whose fleet can be counted."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fake_kube import NODECLAIMS, NODES
from support.hostile import PROFILE, TEXT_EDITS, as_text, mutated, run
from support.preview_objects import node_class, node_pool

from karpenter_gitops.core.cluster import ClusterState
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import cluster_state

ITEMS = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", **i} for i in NODECLAIMS["items"]]
ITEMS += [{"apiVersion": "v1", "kind": "Node", **i} for i in NODES["items"]]
SEEDS = st.sampled_from([{"apiVersion": "v1", "kind": "List", "items": ITEMS}, NODECLAIMS, NODES])


def read_or_refuse(path) -> ClusterState | None:
    try:
        state = cluster_state.read(path)
    except InputError as error:
        assert "\n" not in str(error) and str(error).startswith(str(path)), str(error)
        return None
    assert all(node.name is not None and node.node_pool for node in state.fleet)
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
