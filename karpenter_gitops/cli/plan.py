"""``karpenter-gitops plan``: the reconciliation against AWS, before anything reaches the cluster."""

from __future__ import annotations

import contextlib
import json
import sys

import click

from karpenter_gitops.cli import options
from karpenter_gitops.cli.group import cli


@cli.command("plan")
@click.option("--stack", metavar="NAME", help="Plan stacks/Pulumi.NAME.yaml.")
@click.option("--manifests", "manifests", metavar="PATH", multiple=True, help="Plan manifest files or directories.")
@options.aws
@options.cache_dir
@options.karpenter_version
@options.output_format("text", "json")
def plan_command(stack, manifests, embedded_aws, aws_fixture, kubernetes_version, cache_dir, karpenter_version, fmt):
    """Resolve what Karpenter will resolve from AWS and predict its status, before anything is applied.

    Exit 0: every EC2NodeClass predicted Ready and no error finding; 1: persistent problems;
    3: transient AWS trouble (nothing decided, retry); 2: usage or unreadable input.
    """
    from rich.console import Console

    from karpenter_gitops.adapters.aws.target import aws_target
    from karpenter_gitops.app.plan import planner
    from karpenter_gitops.app.sources import read_sources
    from karpenter_gitops.output.plan_text import print_plan

    sources = read_sources(options.stack_or_manifests(stack, manifests), karpenter_version)
    options.check_fixture(embedded_aws, aws_fixture)
    status = Console(stderr=True)
    with contextlib.ExitStack() as stack_:
        target = stack_.enter_context(aws_target(embedded_aws, aws_fixture, sources.aws_region))
        spinner = stack_.enter_context(status.status("planning…")) if status.is_terminal and fmt == "text" else None
        plan = planner(
            target,
            sources.version,
            kubernetes_version=kubernetes_version,
            cache_dir=cache_dir,
            progress=spinner.update if spinner else None,
        )(sources.inputs)
    if fmt == "json":
        click.echo(json.dumps(plan.to_json(), indent=2))
    else:
        print_plan(plan, Console(width=None if sys.stdout.isatty() else 120))
    sys.exit(plan.exit_code)
