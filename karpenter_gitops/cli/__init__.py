"""The ``karpenter-gitops`` command line: one thin module per command (``<command>_command``) over
:mod:`karpenter_gitops.app`.

Exit codes are a contract other tools depend on:
0 = no error findings; 1 = at least one error finding (or a persistent problem);
2 = usage error or unreadable input; 3 = transient failure, nothing decided, retry.

Layer: the top; imports app and below.
"""

from karpenter_gitops.cli import (  # noqa: F401  (register the commands)
    bump_command,
    embedded_aws_command,
    pack_config_command,
    plan_command,
    policy_pack_command,
    preview_command,
    render_command,
    rules_command,
    validate_command,
    verify_command,
)
from karpenter_gitops.cli.group import cli
from karpenter_gitops.cli.entry import main

__all__ = ["cli", "main"]
