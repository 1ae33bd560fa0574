"""``karpenter-gitops embedded-aws -- COMMAND``: the AWS environment COMMAND is given, and a command that cannot run."""

from __future__ import annotations

import os
import sys

from support.command_runs import masked, transcript

SHOW_AWS_ENVIRONMENT = "import os; [print(k, '=', v) for k, v in sorted(os.environ.items()) if k.startswith('AWS_')]"


def test_embedded_aws_environment(in_project, capfd, snapshot, monkeypatch):
    """COMMAND is another process: its output reaches the terminal itself, so file descriptors are captured."""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    text = transcript(capfd, "embedded-aws", "--", sys.executable, "-c", SHOW_AWS_ENVIRONMENT)
    assert masked(text, PYTHON=sys.executable) == snapshot


def test_embedded_aws_unknown_command(in_project, capsys, snapshot):
    assert transcript(capsys, "embedded-aws", "--", "no-such-command-here") == snapshot
