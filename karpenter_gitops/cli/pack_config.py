"""``karpenter-gitops pack-config``: the stack's policy block as the CrossGuard pack's config."""

from __future__ import annotations

import json

import click

from karpenter_gitops.cli import options
from karpenter_gitops.cli.group import cli


@cli.command("pack-config")
@click.option("--stack", metavar="NAME", required=True, help="Read the policy block of stacks/Pulumi.NAME.yaml.")
def pack_config_command(stack) -> None:
    """Print the pack config (JSON) that makes the policy pack judge as this stack's policy block says.

    Switched-off rules become disabled policies, raised or lowered severities mandatory or advisory
    ones (production included), and rule parameters pass as they are. Use it as
    `pulumi preview --policy-pack karpenter_gitops_policies --policy-pack-config FILE`.
    """
    from karpenter_gitops.app import analyze
    from karpenter_gitops.load.stacks import stack_file

    sources = options.sources([stack_file(stack)], None)
    click.echo(json.dumps(analyze.pack_config(sources.inputs.policy), indent=2, sort_keys=True))
