"""The ``karpenter-gitops`` command line: one module per command (``<command>_command``) that reads its options,
runs the use cases of :mod:`karpenter_gitops.app`, prints with :mod:`karpenter_gitops.output` and ends in the
exit code. A command holds more than its options: ``validate`` chooses between a cached verdict, a run split
over both cores, a stream and a fleet, and options are resolved here with the layers below (the AWS target,
stack files, standard input spooled).

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
