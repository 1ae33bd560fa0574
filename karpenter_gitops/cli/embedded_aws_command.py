"""``karpenter-gitops embedded-aws -- COMMAND``: try ``pulumi preview`` without an AWS account."""

from __future__ import annotations

import click

from karpenter_gitops.app import embedded_aws


@click.command("embedded-aws", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--aws-fixture", metavar="FILE", type=click.Path(), help="World fixture to seed (default: the packaged world).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def embedded_aws_command(aws_fixture, command) -> int:
    """Run COMMAND with AWS pointing at moto on 127.0.0.1, seeded from a world fixture.

    Endpoint, region and dummy credentials reach COMMAND through the standard AWS environment, so
    `karpenter-gitops embedded-aws -- pulumi preview` reconciles a stack against the world's images,
    subnets and instance profiles. Exits with COMMAND's exit code.
    """
    return embedded_aws.run(list(command), aws_fixture)  # COMMAND's exit status, which may be any number
