"""``karpenter-gitops embedded-aws -- COMMAND``: the AWS environment COMMAND is given, a command that cannot
run, and COMMAND reading the seeded world through that environment, its exit code passed on."""

from __future__ import annotations

import os
import sys

from support.cli import run_cli
from support.command_runs import masked, transcript

SHOW_AWS_ENVIRONMENT = "import os; [print(k, '=', v) for k, v in sorted(os.environ.items()) if k.startswith('AWS_')]"
READ_WORLD = """
import boto3, sys
images = boto3.client("ec2").describe_images(Owners=["self"])["Images"]
print(sorted(i["State"] for i in images if i["Name"].startswith("payments-node-")))
sys.exit(7)
"""


def test_embedded_aws_environment(in_project, capfd, snapshot, monkeypatch):
    """COMMAND is another process: its output reaches the terminal itself, so file descriptors are captured."""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    text = transcript(capfd, "embedded-aws", "--", sys.executable, "-c", SHOW_AWS_ENVIRONMENT)
    assert masked(text, PYTHON=sys.executable) == snapshot


def test_embedded_aws_unknown_command(in_project, capsys, snapshot):
    assert transcript(capsys, "embedded-aws", "--", "no-such-command-here") == snapshot


def test_the_command_reads_the_world_and_its_exit_code_is_ours(capfd):
    code, out, _ = run_cli(capfd, "embedded-aws", "--", sys.executable, "-c", READ_WORLD)
    assert code == 7
    assert "'pending'" in out and "'available'" in out  # the world's payments images, pending one included
