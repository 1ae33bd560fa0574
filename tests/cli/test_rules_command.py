"""``karpenter-gitops rules``: the whole registry as JSON, and one rule as text."""

from __future__ import annotations

import pytest
from support.command_runs import transcript


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("rules", "--format", "json"), id="all-json"),
        pytest.param(("rules", "policy/imds-hop-limit"), id="one-text"),
    ],
)
def test_rules(in_project, capsys, snapshot, argv):
    assert transcript(capsys, *argv) == snapshot
