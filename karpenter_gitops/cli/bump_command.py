"""``karpenter-gitops bump``: move AMI pins forward as a reviewed edit of the stack file."""

from __future__ import annotations

import json

import click

from karpenter_gitops.adapters.aws.ami_catalog import AwsAmiCatalog, AwsUnavailable
from karpenter_gitops.adapters.aws.error_kinds import AwsUnreachable
from karpenter_gitops.adapters.aws.target import aws_target
from karpenter_gitops.app.bump import bump_stack, describe_terms, read_stack
from karpenter_gitops.cli import options
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.text import visible
from karpenter_gitops.load.stacks import stack_file
from karpenter_gitops.output.terminal import Terminal, waiting


def _print(plan, file: str, diff: str, what_happened: str) -> None:
    """A bump in text: each class's pin move (or why not), the notes, the diff of the file, what happened to it.
    AMI names and AWS's messages are data: every line goes through the terminal's parts."""
    out = Terminal(wrap=False)
    out.print((file, "bold"))
    for change in plan.changes:
        out.print("  ", ("bump ", "green"), f" {change.node_class}: {describe_terms(change.old)} → {describe_terms(change.new)}")
        out.print((f"         {change.reason}", "dim"))
    for problem in plan.problems:
        out.print("  ", ("error", "red"), f" {problem.node_class}: {problem.message}")
    for kept in plan.unchanged:
        out.print("  ", ("keep ", "dim"), f" {kept.node_class}: {kept.reason}")
    for note in plan.notes:
        out.print((f"note: {note}", "dim"))
    for line in diff.splitlines():
        out.print(line)
    out.print((what_happened, "bold"))


@click.command("bump")
@click.option("--stack", metavar="NAME", required=True, help="Bump the AMI pins of stacks/Pulumi.NAME.yaml.")
@click.option("--class", "class_names", metavar="NAME", multiple=True, help="Only this EC2NodeClass; repeatable.")
@click.option("--pin-latest", is_flag=True, help="Also pin @latest aliases to the release they resolve to today.")
@click.option("--dry-run", is_flag=True, help="Show the changes and the diff; write nothing.")
@options.aws
@options.output_format("text", "json")
def bump_command(stack, class_names, pin_latest, dry_run, embedded_aws, aws_fixture, kubernetes, fmt) -> Outcome:
    """Move AMI pins to the newest safe images as an edit of the stack file, for review.

    Alias classes pin the alias version; custom-AMI classes pin id terms resolved from their
    karpenter-gitops:amiSources selector. Exit 0: nothing to bump, or bumped; 1: a pinned class
    cannot be resolved; 3: transient AWS trouble (nothing written); 2: usage or unreadable input.
    """
    edited = read_stack(stack_file(stack))
    unknown = sorted(set(class_names) - {nc.name for nc in edited.inputs.node_classes})
    if unknown:
        raise click.BadParameter(f"no EC2NodeClass {', '.join(unknown)} in {edited.file}", param_hint="--class")
    options.check_fixture(embedded_aws, aws_fixture)
    try:
        with waiting("asking AWS…"), aws_target(embedded_aws, aws_fixture, edited.aws_config) as target:
            kube = kubernetes or edited.inputs.cluster.kubernetes or target.world_kubernetes
            catalog = AwsAmiCatalog(target.session, kube, edited.release)
            bumped = bump_stack(edited, catalog, classes=class_names, pin_latest=pin_latest, dry_run=dry_run)
    except (AwsUnavailable, AwsUnreachable) as error:  # unreachable: the probe, before any look-up
        click.echo(f"karpenter-gitops: AWS did not answer; nothing written, retry: {visible(error)}", err=True)
        if fmt == "json":
            click.echo(json.dumps({"transient": str(error), "file": edited.file, "written": False}, indent=2))
        return Outcome.TRANSIENT
    if fmt == "json":
        click.echo(
            json.dumps({**bumped.plan.to_json(), "file": edited.file, "written": bumped.written, "diff": bumped.diff}, indent=2)
        )
    else:
        untouched = "dry run: nothing written" if bumped.diff else f"nothing to bump: {edited.file} untouched"
        _print(bumped.plan, edited.file, bumped.diff, f"wrote {edited.file}" if bumped.written else untouched)
    return bumped.plan.exit_code
