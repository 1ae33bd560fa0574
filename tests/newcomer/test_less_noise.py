"""What a newcomer's first ``--policy`` run and PR comment show: the warnings, not a page of ``info``
house-style notes (shown with --show-info, always in JSON), and with --quiet the findings and the
summary line alone. The installed console script, run in a fresh repository of their own."""

from __future__ import annotations

import json

import pytest
from test_newcomer_repositories import CLASS, POOL, karpenter_gitops

pytestmark = pytest.mark.packaging

INFO_RULE = "policy/detailed-monitoring"  # the example EC2NodeClass leaves detailed monitoring off: an info note


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    root = tmp_path_factory.mktemp("infra")
    (root / "karpenter").mkdir()
    (root / "karpenter" / "nodeclass.yaml").write_text(CLASS)
    (root / "karpenter" / "nodepool.yaml").write_text(POOL)
    (root / "karpenter" / "namespace.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: karpenter}\n")
    (root / "base").mkdir()
    return root


def test_text_leaves_info_findings_out_unless_asked(repository):
    _, plain, _ = karpenter_gitops(repository, "validate", "karpenter", "--policy")
    _, shown, _ = karpenter_gitops(repository, "validate", "karpenter", "--policy", "--show-info")
    assert "warning" in plain and INFO_RULE not in plain
    assert f"[{INFO_RULE}]" in shown and "  info " in shown
    assert plain.splitlines()[-1] == shown.splitlines()[-1]  # the summary counts the same findings


def test_json_keeps_info_findings(repository):
    _, out, _ = karpenter_gitops(repository, "validate", "karpenter", "--policy", "--format", "json")
    assert INFO_RULE in {finding["rule"] for finding in json.loads(out)["findings"]}


def test_the_pr_comment_leaves_info_findings_out_unless_asked(repository):
    _, plain, _ = karpenter_gitops(repository, "preview", "karpenter", "--base", "base")
    _, shown, _ = karpenter_gitops(repository, "preview", "karpenter", "--base", "base", "--show-info")
    assert "Policy results: 2 warning(s)" in plain and INFO_RULE not in plain
    assert "| info | `EC2NodeClass/default` |" in shown and INFO_RULE in shown


def test_quiet_prints_the_findings_and_the_summary_only(repository):
    code, out, err = karpenter_gitops(repository, "validate", "karpenter", "--policy", "--quiet")
    _, loud, loud_err = karpenter_gitops(repository, "validate", "karpenter", "--policy")
    assert "note:" in loud_err and "fix:" in loud and "active waivers" in loud  # what --quiet leaves out
    assert code == 0 and err == ""
    assert "fix:" not in out and "active waivers" not in out
    findings = [line for line in loud.splitlines() if line.startswith("  warning ")]
    assert out.splitlines() == [
        line for line in loud.splitlines() if not line.startswith(("  ", "active waivers")) or line in findings
    ]
