"""``karpenter-gitops plan``: the demo stack against the embedded AWS, as JSON and as text."""

from __future__ import annotations

import pytest
from _command_runs import in_project, masked, run  # noqa: F401 - the fixture is used by name


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_plan(in_project, capsys, snapshot, catalogue_cache, fmt):
    aws = ("--embedded-aws", "--cache-dir", str(catalogue_cache))
    argv = ("plan", "--stack", "demo", *aws, *(("--format", fmt) if fmt == "json" else ()))
    assert masked(run(capsys, *argv), CACHE=catalogue_cache) == snapshot
