"""``karpenter-gitops --help``: every command listed with its summary; a command's own help; a command it does not have."""

from __future__ import annotations

import pytest
from _command_runs import in_project, run  # noqa: F401 - the fixture is used by name


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(("--help",), id="group-help"),
        pytest.param(("rules", "-h"), id="command-help"),
        pytest.param(("valdate", "x.yaml"), id="unknown-command"),
    ],
)
def test_help(in_project, capsys, snapshot, argv):
    assert run(capsys, *argv) == snapshot
