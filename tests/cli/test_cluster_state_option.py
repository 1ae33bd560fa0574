"""``verify --write-cluster-state`` saves the NodeClaims, Nodes and Pods it read; ``preview --cluster-state`` counts
from that file what ``--kubeconfig`` counts from the cluster, so a CI job without credentials can comment."""

from __future__ import annotations

import pytest
import yaml
from support.fake_kube import FakeKubernetes
from support.preview_objects import node_class, node_pool

BASE, HEAD = [node_class(), node_pool()], [node_class(userData="x"), node_pool()]


@pytest.fixture
def synced(fake_cluster, monkeypatch):
    """The fake cluster, serving (empty) lists of Karpenter's objects as well, as verify reads them."""
    empty = {"kind": "List", "items": []}
    for plural in ("karpenter.k8s.aws/v1/ec2nodeclasses", "karpenter.sh/v1/nodepools", "karpenter.sh/v1alpha1/nodeoverlays"):
        monkeypatch.setitem(FakeKubernetes.routes, f"/apis/{plural}", empty)
    return fake_cluster


def previews(tmp_path, monkeypatch, cli, *extra) -> tuple[int, str, str]:
    monkeypatch.chdir(tmp_path)
    for side, docs in (("base", BASE), ("head", HEAD)):
        (tmp_path / side).mkdir(exist_ok=True)
        (tmp_path / side / "karpenter.yaml").write_text(yaml.safe_dump_all(docs))
    return cli("preview", "--manifests", "head", "--base", "base", "--kubernetes-version", "1.32", *extra)


def impact(comment: str) -> list[str]:
    return [line for line in comment.splitlines() if line.startswith(("**Node impact**", "| `general`"))]


def test_a_snapshot_verify_wrote_counts_what_the_cluster_counts(tmp_path, monkeypatch, cli, synced):
    snapshot = tmp_path / "ci" / "cluster-state.yaml"
    write = ("verify", "--manifests", "head", "--kubeconfig", synced, "--no-predict", "--wait", "0")
    previews(tmp_path, monkeypatch, cli)
    code, _, err = cli(*write, "--write-cluster-state", snapshot)
    assert code in (0, 1), err
    written = yaml.safe_load(snapshot.read_text())
    assert written["kind"] == "List" and [(i["kind"], i["metadata"]["name"]) for i in written["items"]] == [
        ("NodeClaim", "general-abc12"),
        ("NodeClaim", "static-1"),
        ("Node", "ip-10-0-1-1.ec2.internal"),
        ("Pod", "web-7d4b9c-abcde"),
    ]
    assert "spec" not in written["items"][0]  # only what is counted is kept
    (container,) = written["items"][3]["spec"]["containers"]
    assert "env" not in container and "image" not in container  # a pod's environment never reaches the file
    _, live, _ = previews(tmp_path, monkeypatch, cli, "--kubeconfig", synced)
    code, offline, err = previews(tmp_path, monkeypatch, cli, "--cluster-state", snapshot)
    assert code == 0, err
    assert (
        impact(offline)
        == impact(live)
        == [
            "**Node impact**: 1 of 1 node(s) in the affected NodePools would be replaced; the slowest NodePool needs ~1 wave(s).",
            "| `general` | 1 | 1 | NodeClassDrift 1 | 20% | ~1 |",
        ]
    )
    # the snapshot holds the drifted node's pod, but an offline preview has no instance types to place it on
    assert "where the drifted nodes' pods go needs the head's instance types" in offline


def test_kubectls_own_json_is_read_too(tmp_path, monkeypatch, cli):
    import json

    from support.fake_kube import NODECLAIMS, NODES

    snapshot = tmp_path / "cluster.json"
    items = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", **i} for i in NODECLAIMS["items"]]
    items += [{"apiVersion": "v1", "kind": "Node", **i} for i in NODES["items"]]
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    code, out, _ = previews(tmp_path, monkeypatch, cli, "--cluster-state", snapshot)
    assert "**Node impact**: 1 of 1 node(s) in the affected NodePools would be replaced;" in out


def test_a_file_that_is_no_snapshot_is_one_line_and_exit_two(tmp_path, monkeypatch, cli):
    wrong = tmp_path / "nodepool.yaml"
    wrong.write_text(yaml.safe_dump(node_pool()))
    code, out, err = previews(tmp_path, monkeypatch, cli, "--cluster-state", wrong)
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "nodepool.yaml: holds no NodeClaim, Node or Pod (only NodePool)" in err


def test_other_kinds_are_noted_in_the_comment(tmp_path, monkeypatch, cli):
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: web}}\n- {apiVersion: v1, kind: Node, metadata: {name: n}}\n"
    )
    code, out, _ = previews(tmp_path, monkeypatch, cli, "--cluster-state", snapshot)
    assert code == 0 and "passed over 1 item(s) that are not NodeClaims, Nodes or Pods (Service)" in out
    assert "**Node impact**: 0 of 0 node(s)" in out


def test_the_cluster_and_a_snapshot_of_it_are_not_both_taken(tmp_path, monkeypatch, cli):
    code, _, err = previews(tmp_path, monkeypatch, cli, "--kubeconfig", "kc", "--cluster-state", "state.yaml")
    assert code == 2 and "give one" in err


def test_a_snapshot_that_cannot_be_written_is_named_and_nothing_is_left(tmp_path, monkeypatch, cli, synced):
    previews(tmp_path, monkeypatch, cli)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    code, _, err = cli(
        "verify", "--manifests", "head", "--kubeconfig", synced, "--no-predict", "--wait", "0",
        "--write-cluster-state", blocked / "state.yaml",
    )  # fmt: skip
    assert code == 2 and "cannot write the cluster state" in err and str(blocked / "state.yaml") in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "base", "head", "kubeconfig"]


def test_a_live_read_whose_identity_may_not_list_pods_keeps_the_nodes_and_says_so(tmp_path, monkeypatch, cli, synced):
    from support.fake_kube import FakeKubernetes

    monkeypatch.delitem(FakeKubernetes.routes, "/api/v1/pods")
    monkeypatch.setattr(FakeKubernetes, "forbidden", {"/api/v1/pods"})
    snapshot = tmp_path / "cluster-state.yaml"
    previews(tmp_path, monkeypatch, cli)
    code, out, err = cli("verify", "--manifests", "head", "--kubeconfig", synced, "--no-predict", "--wait", "0",
                         "--write-cluster-state", snapshot)  # fmt: skip
    assert code in (0, 1), err
    assert [i["kind"] for i in yaml.safe_load(snapshot.read_text())["items"]] == ["NodeClaim", "NodeClaim", "Node"]
    assert "pods not read, the forecast starts from nodes without their pods" in out + err
