"""``verify --write-cluster-state`` against the real API server, read back by ``preview --cluster-state``:
the snapshot gives the node counts ``--kubeconfig`` gives, so a CI job without credentials comments the same."""

from __future__ import annotations

import json
import uuid

import pytest
import yaml
from support.api_server import kube_client
from support.preview_objects import node_class, node_pool

pytestmark = pytest.mark.real

CLAIMS = ("karpenter.sh", "v1", "nodeclaims")
ON_DEMAND = {"karpenter.sh/capacity-type": "on-demand"}  # as Karpenter labels them: the pool's requirement holds


def launched(api_server, pool: str, count: int) -> None:
    """``count`` NodeClaims of ``pool``, all but the last registered as a Node (labels on the Node only)."""
    from kubernetes import client

    custom, core = client.CustomObjectsApi(kube_client(api_server)), client.CoreV1Api(kube_client(api_server))
    for index in range(count):
        name = f"{pool}-{index}"
        registered = index < count - 1
        body = {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodeClaim",
            "metadata": {"name": name, "labels": {} if registered else {"karpenter.sh/nodepool": pool, **ON_DEMAND}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [],
            },
        }
        custom.create_cluster_custom_object(*CLAIMS, body)
        stored = custom.get_cluster_custom_object(*CLAIMS, name)
        stored["status"] = {"imageID": "ami-0a23000000000a001", **({"nodeName": f"node-{name}"} if registered else {})}
        custom.replace_cluster_custom_object_status(*CLAIMS, name, stored)
        if registered:
            labels = {"karpenter.sh/nodepool": pool, **ON_DEMAND, "node.kubernetes.io/instance-type": "m5.large"}
            core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{name}", "labels": labels}})


def test_the_snapshot_of_a_real_cluster_counts_what_the_cluster_counts(api_server, tmp_path, cli, monkeypatch):
    pool = f"snap-{uuid.uuid4().hex[:8]}"
    launched(api_server, pool, 3)
    monkeypatch.chdir(tmp_path)
    for side, docs in (
        ("base", [node_class(), node_pool(name=pool)]),
        ("head", [node_class(userData="x"), node_pool(name=pool)]),
    ):
        (tmp_path / side).mkdir()
        (tmp_path / side / "karpenter.yaml").write_text(yaml.safe_dump_all(docs))
    snapshot = tmp_path / "cluster-state.yaml"
    kubeconfig = str(api_server.kubeconfig)
    code, _, err = cli("verify", "--manifests", "head", "--kubeconfig", kubeconfig, "--no-predict", "--wait", "0",
                       "--write-cluster-state", snapshot)  # fmt: skip
    assert code == 1 and snapshot.exists(), err  # Git's objects were never applied: drift, and the snapshot is written
    preview = ("preview", "--manifests", "head", "--base", "base", "--kubernetes-version", "1.32", "--format", "json")
    impact = {}
    for source in (("--kubeconfig", kubeconfig), ("--cluster-state", snapshot)):
        code, out, err = cli(*preview, *source)
        assert code == 0, err
        impact[source[0]] = json.loads(out)["impact"]
    ours = [p for p in impact["--kubeconfig"]["nodePools"] if p["nodePool"] == pool]
    assert ours and ours[0]["nodes"] == 3 and ours[0]["drifted"] == {"NodeClassDrift": 3}
    assert impact["--cluster-state"] == impact["--kubeconfig"]
