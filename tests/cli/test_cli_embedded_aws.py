"""`embedded-aws -- COMMAND`: the command reads the seeded world through the standard AWS environment."""

from __future__ import annotations

import sys

from karpenter_gitops.cli import main

READ_WORLD = """
import boto3, sys
images = boto3.client("ec2").describe_images(Owners=["self"])["Images"]
print(sorted(i["State"] for i in images if i["Name"].startswith("payments-node-")))
sys.exit(7)
"""


def test_the_command_reads_the_world_and_its_exit_code_is_ours(capfd):
    assert main(["embedded-aws", "--", sys.executable, "-c", READ_WORLD]) == 7
    out, _ = capfd.readouterr()
    assert "'pending'" in out and "'available'" in out  # the world's payments images, pending one included


def test_an_unknown_command_is_one_line_and_exit_2(capsys):
    assert main(["embedded-aws", "--", "no-such-command-here"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot run 'no-such-command-here'" in err
