"""The ``karpenter-gitops`` command group and its exit codes, which every command module shares."""

from __future__ import annotations

import click

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_TRANSIENT = 0, 1, 2, 3


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="karpenter-gitops")
def cli() -> None:
    """Make Karpenter EC2NodeClass / NodePool changes safe to ship through Git."""
