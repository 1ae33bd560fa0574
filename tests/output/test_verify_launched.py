"""verify's launched-beside-forecast section in text and in the PR comment: cluster names shown as they are."""

from __future__ import annotations

from karpenter_gitops.karpenter.scheduling.launched import PoolLaunch
from karpenter_gitops.karpenter.status.verification import Verification
from karpenter_gitops.output import verification_text as shown

POOL = PoolLaunch("gen|eral\x1b[31m", {"m5.large": 2}, {"m5.large": 1}, {"spot": 1}, {"us-west-2a": 1}, {"on-demand": 2})


def test_text_lists_the_table_and_one_line_per_pool_and_changes_no_verdict():
    verification = Verification("https://cluster", launched=(POOL,))
    said = shown.text(verification)
    assert "NodeClaims launched beside the forecast for the workloads (information, not a finding):" in said
    assert "gen|eral\\x1b[31m: forecast 2 NodeClaim(s) (2 × m5.large), launched 1 (1 × m5.large); 1 fewer" in said
    assert "\x1b" not in said and verification.exit_code == 0
    assert "launched beside" not in shown.text(Verification("https://cluster"))


def test_the_comment_folds_the_table_and_escapes_the_cells():
    comment = shown.comment(Verification("https://cluster", launched=(POOL,)))
    assert "<details><summary>NodeClaims launched beside the forecast" in comment
    (row,) = [line for line in comment.splitlines() if line.startswith("| `gen")]
    # the pool's name is code (its pipe escaped for the table, its control character shown escaped)
    assert row == "| `gen\\|eral\\x1b[31m` | 2 × m5.large | 1 × m5.large | 1 × spot | 1 × us-west-2a |"
    assert Verification("https://cluster", launched=()).to_json()["launched"] == []
    assert "launched" not in Verification("https://cluster").to_json()
