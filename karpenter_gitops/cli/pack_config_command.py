"""``karpenter-gitops pack-config``: a policy file or a stack's policy block as the CrossGuard pack's config."""

from __future__ import annotations

import json

import click

from karpenter_gitops.app import analyze
from karpenter_gitops.app.sources import house_policy
from karpenter_gitops.cli import options
from karpenter_gitops.core.inputs import PolicySettings
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.load.stacks import stack_file


@click.command("pack-config")
@click.option("--stack", metavar="NAME", help="Read the policy block of stacks/Pulumi.NAME.yaml.")
@options.policy_file
@options.repository_config
def pack_config_command(stack, policy_file) -> Outcome:
    """Print the pack config (JSON) that makes the policy pack judge as a policy file or a stack's policy
    block says (both: the stack's block wins key by key).

    Switched-off rules become disabled policies, raised or lowered severities mandatory or advisory
    ones (production included), and rule parameters pass as they are. Use it as
    `pulumi preview --policy-pack "$(karpenter-gitops policy-pack)" --policy-pack-config FILE`.
    """
    rules = options.configured_rules()
    if stack is None and policy_file is None and rules is None:
        raise click.UsageError("give --policy-file FILE, --stack NAME or both")
    settings = house_policy(policy_file, rules) or PolicySettings()
    if stack is not None:
        settings = options.sources([stack_file(stack)], None).inputs.policy.over(settings)
    click.echo(json.dumps(analyze.pack_config(settings), indent=2, sort_keys=True))
    return Outcome.OK
