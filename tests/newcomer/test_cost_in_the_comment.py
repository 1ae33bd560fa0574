"""A newcomer's pull request that changes what Karpenter launches: a fresh repository of their own with two
commits, the installed console script run as they would type it, ``preview --base HEAD~1`` against the
embedded AWS. The comment leads with the monthly change, lists only the NodePool that changes and folds how
the figures are made; without prices it says the cost is not known. Then the CI job without cluster
credentials: the node counts come from a snapshot file."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from test_newcomer_repositories import CLASS, POOL, karpenter_gitops

pytestmark = [pytest.mark.packaging, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]

WEB = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop"},
    "spec": {
        "replicas": 6,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "web:1", "resources": {"requests": {"cpu": "1", "memory": "2Gi"}}}]},
        },
    },
}
MEMORY_FAMILY = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["r5"]}


def git(root, *argv: str) -> None:
    subprocess.run(["git", "-C", str(root), *argv], check=True, capture_output=True)


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    return memory_family_change(tmp_path_factory.mktemp("infra"))


def memory_family_change(root: Path) -> Path:
    """Commit 1: a NodeClass, a NodePool and the app. Commit 2: the pool moves to a memory-optimised family."""
    (root / "karpenter").mkdir()
    (root / "apps").mkdir()
    (root / "karpenter" / "nodeclass.yaml").write_text(CLASS)
    (root / "karpenter" / "nodepool.yaml").write_text(POOL)
    (root / "apps" / "web.yaml").write_text(yaml.safe_dump(WEB))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=New", "-c", "user.email=new@example.com", "commit", "-q", "-m", "karpenter")
    pool = yaml.safe_load(POOL)
    pool["spec"]["template"]["spec"]["requirements"].append(MEMORY_FAMILY)
    (root / "karpenter" / "nodepool.yaml").write_text(yaml.safe_dump(pool))
    git(root, "-c", "user.name=New", "-c", "user.email=new@example.com", "commit", "-q", "-am", "memory-optimised nodes")
    return root


def test_the_comment_leads_with_the_monthly_change(repository):
    code, out, err = karpenter_gitops(
        repository, "preview", "karpenter", "--base", "HEAD~1", "--embedded-aws", "--workloads", "apps"
    )
    assert code in (0, 1), err
    summary = next(line for line in out.splitlines() if line.startswith("**Monthly cost**"))
    assert summary.startswith("**Monthly cost** of the workloads (6 pod(s)): +$") and "%) — $" in summary
    section = out[out.index("#### Cost forecast") :]
    assert section.splitlines()[2].startswith("**Monthly cost**: +$")
    table = section[: section.index("<details>")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == 1 and rows[0].startswith("| `general` | $")
    details = section[section.index("<details><summary>How these figures are made</summary>") :]
    assert "× r5." in details and "on-demand" in details and "A month is 730 hours" in details


def test_json_carries_the_same_change(repository):
    code, out, _ = karpenter_gitops(
        repository, "preview", "karpenter", "--base", "HEAD~1", "--embedded-aws", "--workloads", "apps", "--format", "json"
    )
    cost = json.loads(out)["cost"]
    assert cost["unknown"] is None and cost["monthlyChange"]["low"] > 0 and cost["monthlyChange"]["percentLow"] > 0
    assert [p["nodePool"] for p in cost["nodePools"] if p["changed"]] == ["general"]


def test_a_ci_job_without_credentials_counts_nodes_from_a_snapshot(repository, tmp_path):
    snapshot = tmp_path / "cluster-state.yaml"
    snapshot.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {
                        "apiVersion": "karpenter.sh/v1",
                        "kind": "NodeClaim",
                        "metadata": {
                            "name": f"general-{i}",
                            "labels": {"karpenter.sh/nodepool": "general", "karpenter.k8s.aws/instance-family": "m5"},
                        },
                        "status": {"nodeName": f"ip-10-0-0-{i}"},
                    }
                    for i in range(4)
                ],
            }
        )
    )
    code, out, err = karpenter_gitops(repository, "preview", "karpenter", "--base", "HEAD~1", "--cluster-state", str(snapshot))
    assert code == 0, err
    assert "**Node impact**: 4 of 4 node(s) in the affected NodePools would be replaced" in out  # m5 is no longer allowed
    assert "| `general` | 4 | 4 | RequirementsDrifted 4 |" in out
    code, out, err = karpenter_gitops(repository, "preview", "karpenter", "--base", "HEAD~1", "--cluster-state", "apps/web.yaml")
    assert code == 2 and out == "" and "apps/web.yaml: holds no NodeClaim, Node or Pod (only Deployment)" in err
