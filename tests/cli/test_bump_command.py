"""``karpenter-gitops bump``: the pinned stack's dry run against the embedded AWS, as JSON and as text."""

from __future__ import annotations

import json

import pytest
from support.command_runs import masked, transcript


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_bump_dry_run(in_project, capsys, snapshot, fmt):
    text = transcript(capsys, "bump", "--stack", "pinned", "--embedded-aws", "--dry-run", "--format", fmt)
    if fmt == "json":
        json.loads(text.split("--- stdout\n", 1)[1].split("--- stderr", 1)[0])
    assert masked(text) == snapshot
