"""``karpenter-gitops validate``: every output format, on a stack, manifests, broken input and the policy."""

from __future__ import annotations

import pytest
from support.command_runs import transcript


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("validate", "--stack", "demo"), id="stack-text"),
        pytest.param(("validate", "examples/manifests", "--format", "json"), id="manifests-json"),
        pytest.param(("validate", "examples/broken"), id="broken-text"),
        pytest.param(("validate", "examples/broken", "--format", "json"), id="broken-json"),
        pytest.param(("validate", "examples/broken", "--format", "github"), id="broken-github"),
        pytest.param(("validate", "--stack", "dev", "examples/manifests", "--policy", "--format", "json"), id="policy-json"),
        pytest.param(("validate", "--stack", "pinned", "--policy"), id="pinned-policy-text"),
    ],
)
def test_validate(in_project, capsys, snapshot, argv):
    assert transcript(capsys, *argv) == snapshot
