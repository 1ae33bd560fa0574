"""A newcomer's pull request against a cluster that already runs: a fresh repository of their own with two
commits (the NodePool moves from m5 to r5), a snapshot of the cluster written as ``kubectl get
nodeclaims,nodes,pods -A -o yaml`` prints it, and ``preview --base HEAD~1 --embedded-aws --cluster-state``
run as they would type it. The forecast starts from the running nodes, and the drifted nodes' pods are
said to move onto new r5 NodeClaims."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from test_cost_in_the_comment import memory_family_change
from test_newcomer_repositories import karpenter_gitops

pytestmark = [pytest.mark.packaging, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]
NODES = 2


def node(i: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": f"ip-10-0-0-{i}",
            "labels": {
                "karpenter.sh/nodepool": "general", "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
                "karpenter.sh/capacity-type": "on-demand", "karpenter.k8s.aws/instance-family": "m5",
                "node.kubernetes.io/instance-type": "m5.xlarge", "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                "topology.kubernetes.io/zone": "us-east-1a", "kubernetes.io/hostname": f"ip-10-0-0-{i}",
            },
        },
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "58"},
                   "allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "58"}},
    }  # fmt: skip


def web_pod(i: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"web-5f7c9-{i}", "namespace": "shop", "labels": {"app": "web", "pod-template-hash": "5f7c9"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5f7c9", "controller": True}],
        },
        "spec": {"nodeName": f"ip-10-0-0-{i % NODES}", "containers": [
            {"name": "web", "image": "web:1", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]},
        "status": {"phase": "Running"},
    }  # fmt: skip


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """Commit 1: a NodeClass, a NodePool and the app. Commit 2: the pool moves to a memory-optimised family.
    Beside them, the snapshot: two m5.xlarge nodes of the pool running four of the app's six pods."""
    root = memory_family_change(tmp_path_factory.mktemp("infra"))
    claims = [
        {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
         "metadata": {"name": f"general-{i}", "labels": {"karpenter.sh/nodepool": "general"}},
         "status": {"nodeName": f"ip-10-0-0-{i}"}}
        for i in range(NODES)
    ]  # fmt: skip
    items = [*claims, *(node(i) for i in range(NODES)), *(web_pod(i) for i in range(4))]
    (root / "cluster-state.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return root


def test_the_forecast_starts_from_the_running_nodes_and_the_drifted_pods_move_to_r5(repository):
    argv = ["preview", "karpenter", "--base", "HEAD~1", "--embedded-aws", "--workloads", "apps"]
    code, out, err = karpenter_gitops(repository, *argv, "--cluster-state", "cluster-state.yaml", "--format", "json")
    assert code in (0, 1), err
    report = json.loads(out)
    head = report["cost"]["head"]["forecast"]
    # 4 of the 6 replicas run already; the other 2 fill the room the m5.xlarge nodes have left (2 × 1 cpu each)
    placed = sorted(pod for node in head["existingNodes"] for pod in node["pods"])
    assert len(placed) == 2 and sum(len(c["pods"]) for p in head["nodePools"] for c in p["nodeClaims"]) == 0
    assert any("starts from the cluster's 2 node(s)" in note for note in head["notes"])
    (pool,) = report["impact"]["nodePools"]
    moves = pool["replacement"]["moves"]
    assert pool["drifted"] == {"RequirementsDrifted": 2} and sorted(m["pod"] for m in moves) == [
        f"shop/web-5f7c9-{i}" for i in range(4)
    ]
    assert all(m["newNodeClaim"] and m["reason"] is None for m in moves)
    assert all(c["instanceTypes"][0].startswith("r5.") for c in pool["replacement"]["nodeClaims"])

    code, out, err = karpenter_gitops(repository, *argv, "--cluster-state", "cluster-state.yaml")
    assert code in (0, 1), err
    assert "<details><summary>Where the pods go when general's 2 drifted node(s) are replaced: 4 pod(s)" in out
    assert "The head's forecast starts from the cluster's nodes: 2 pod(s) fit the room left on 2 of them" in out
    assert "| `shop/web-5f7c9-0` | `ip-10-0-0-0` | new NodeClaim `replacement-general-1`: `r5." in out
