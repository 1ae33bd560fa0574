"""``karpenter-gitops policy-pack``: the policy pack directory to give ``pulumi preview --policy-pack``."""

from __future__ import annotations

from pathlib import Path

import click

from karpenter_gitops.app.policy_pack import policy_pack
from karpenter_gitops.core.outcome import Outcome


@click.command("policy-pack")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR", help="Write the pack here instead of the user cache.")
def policy_pack_command(out) -> Outcome:
    """Print the path of a policy pack directory that runs with this command's Python environment.

    The engine starts a pack with the virtualenv its PulumiPolicy.yaml names, else `python3` from PATH,
    which lacks the pack when the Pulumi program's virtualenv is not activated. Use it as
    `pulumi preview --policy-pack "$(karpenter-gitops policy-pack)"`.
    """
    click.echo(str(policy_pack(out)))
    return Outcome.OK
