"""The ``karpenter-gitops`` command line: one thin module per command over :mod:`karpenter_gitops.app`.

Exit codes are a contract other tools depend on:
0 = no error findings; 1 = at least one error finding (or a persistent problem);
2 = usage error or unreadable input; 3 = transient failure, nothing decided, retry.

Layer: the top; imports app and below.
"""

from karpenter_gitops.cli import bump, embedded_aws, pack_config, plan, policy_pack, preview, render, rules, validate, verify  # noqa: F401  (register the commands)
from karpenter_gitops.cli.group import cli
from karpenter_gitops.cli.entry import main

__all__ = ["cli", "main"]
