"""Issue 45 as a newcomer meets it: a repository of their own whose head commit switches a NodePool from
on-demand to spot and pins its EC2NodeClass's AMI alias; ``preview --manifests . --base <base commit>``
offline (the GitHub Action's default), through the installed console script. The comment names the pool,
each reason Karpenter will give and its nodes, never "no existing node drifts"."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
import yaml
from test_newcomer_repositories import karpenter_gitops

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch

pytestmark = [pytest.mark.packaging, pytest.mark.skipif(shutil.which("git") is None, reason="needs git")]

LATEST = merge_patch(BASE_NODECLASS, {"spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}})
PINNED = merge_patch(BASE_NODECLASS, {"spec": {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]}})
SPOT = merge_patch(
    BASE_NODEPOOL,
    {
        "spec": {
            "template": {"spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}}
        }
    },
)


def git(root, *argv: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *argv],
        check=True,
        capture_output=True,
        text=True,
        env={
            "GIT_AUTHOR_NAME": "n",
            "GIT_AUTHOR_EMAIL": "n@example.com",
            "GIT_COMMITTER_NAME": "n",
            "GIT_COMMITTER_EMAIL": "n@example.com",
            "PATH": "/usr/bin:/bin",
            "HOME": str(root),
        },
    )
    return done.stdout.strip()


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    """Two commits: on-demand with al2023@latest, then spot with the alias pinned; the base's id."""
    root = tmp_path_factory.mktemp("infra")
    git(root, "init", "-q")
    (root / "karpenter.yaml").write_text(yaml.safe_dump_all([LATEST, dict(BASE_NODEPOOL)], sort_keys=False))
    git(root, "add", "karpenter.yaml")
    git(root, "commit", "-qm", "on-demand")
    base = git(root, "rev-parse", "HEAD")
    (root / "karpenter.yaml").write_text(yaml.safe_dump_all([PINNED, SPOT], sort_keys=False))
    git(root, "commit", "-qam", "spot, pinned AMI")
    return root, base


def test_the_comment_names_the_drifting_pool_and_why(repository):
    root, base = repository
    code, out, err = karpenter_gitops(root, "preview", "--manifests", ".", "--base", base)
    assert code == 0, err
    assert "no existing node drifts" not in out
    assert "**Node impact**: 1 NodePool(s) drift: `general` (RequirementsDrifted, AMIDrift unknown offline)" in out
    assert "| `general` | RequirementsDrifted | nodes with karpenter.sh/capacity-type=on-demand |" in out
    assert "| `general` | AMIDrift | nodes not on the image the new selection gives their instance type: unknown offline |" in out


def test_the_json_report_carries_the_same_reasons(repository):
    root, base = repository
    _, out, _ = karpenter_gitops(root, "preview", "--manifests", ".", "--base", base, "--format", "json")
    impact = json.loads(out)["impact"]
    assert impact["hashVersions"] == {"nodePool": "v3", "ec2NodeClass": "v6"}  # Karpenter 1.15's
    (pool,) = impact["nodePools"]
    assert [(d["reason"], d["unknown"]) for d in pool["drifts"]] == [("RequirementsDrifted", False), ("AMIDrift", True)]
