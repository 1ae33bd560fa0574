"""The ``karpenter-gitops`` command line: one module per command (``<command>_command``), imported only when
that command runs (:mod:`.group`), that reads its options, runs the use cases of :mod:`karpenter_gitops.app`,
prints with :mod:`karpenter_gitops.output` and returns its :class:`~karpenter_gitops.core.outcome.Outcome`. A
command holds more than its options: options are resolved here with the layers below (the AWS target, stack
files). ``validate`` alone hands its whole run to :mod:`karpenter_gitops.app.validate`, which spools standard
input and chooses between a cached verdict, a run split over both cores, a stream and a fleet.

:func:`.entry.main` alone turns the outcome into the process's exit code, a contract other tools depend on:
0 = no error findings; 1 = at least one error finding (or a persistent problem); 2 = usage error or
unreadable input; 3 = transient failure, nothing decided, retry.

Layer: the top; imports app and below.
"""

from karpenter_gitops.cli.entry import main
from karpenter_gitops.cli.group import cli

__all__ = ["cli", "main"]
