"""The CLI run in-process, as the tests run it (the ``cli`` fixture of tests/conftest.py)."""

from __future__ import annotations

from typing import NamedTuple

from karpenter_gitops.cli import main


class CliRun(NamedTuple):
    """One run of the CLI: its exit code and what it wrote to stdout and stderr."""

    code: int
    out: str
    err: str


def run_cli(capture, *argv: object) -> CliRun:
    """The command line (paths and numbers as they print) run through the console entry point; ``capture``
    is capsys, or capfd where the command's own child writes to the terminal."""
    code = main([str(arg) for arg in argv])
    out, err = capture.readouterr()
    return CliRun(code, out, err)
