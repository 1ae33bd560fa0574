"""``karpenter-gitops preview``: a PR comment on what the change does compared with its base."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from karpenter_gitops.cli import options
from karpenter_gitops.cli.group import cli
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.output import DEFAULT_BUDGET


@cli.command("preview")
@options.stacks("Preview stacks/Pulumi.NAME.yaml; several (or --all-stacks) give one section per stack, within --budget together.")
@click.option("--manifests", "manifests", metavar="PATH", multiple=True, help="Manifest files or directories.")
@click.option("--base", "base_ref", required=True, metavar="DIR|GIT-REF", help="Compare with a directory of manifests or a Git ref.")
@options.output_format("markdown", "json")
@click.option("--budget", type=click.IntRange(min=5_000), default=DEFAULT_BUDGET, show_default=True, help="Comment size limit (characters).")
@click.option("--full-report", type=click.Path(path_type=Path), metavar="FILE", help="Where the full report goes when the comment is shortened.")
@click.option("--kubeconfig", type=click.Path(path_type=Path), metavar="FILE", help="Read NodeClaims and Nodes to count drifting nodes.")
@click.option("--pulumi-json", type=click.Path(path_type=Path), metavar="FILE", help="Fold in `pulumi preview --json` output.")
@click.option("--pulumi-events", type=click.Path(path_type=Path), metavar="FILE", help="Fold in a `pulumi preview --event-log` file.")
@options.aws
@options.reconcile
@options.karpenter_version
def preview_command(
    stacks, all_stacks, manifests, base_ref, fmt, budget, full_report, kubeconfig, pulumi_json, pulumi_events,
    embedded_aws, aws_fixture, kubernetes_version, reconcile_, cache_dir, karpenter_version,
):
    """Print a PR comment (or JSON) on what the change does compared with --base.

    Summary first (objects added/changed/removed, predicted Ready, blocking errors, node impact),
    then folded details, within --budget characters. Exit codes as for plan: 0 clean, 1 blocking
    problems, 3 transient AWS trouble, 2 usage or unreadable input.
    """
    import tempfile

    from karpenter_gitops.adapters.aws.target import aws_target
    from karpenter_gitops.app.plan import planner
    from karpenter_gitops.app.preview import preview_sources, pulumi_preview
    from karpenter_gitops.app.sources import read_sources
    from karpenter_gitops.output import preview

    pulumi = pulumi_preview(pulumi_json, pulumi_events)
    with contextlib.ExitStack() as scope:
        targets: dict = {}

        def previewed(paths):
            head = read_sources(paths, karpenter_version)
            plan = None
            if reconcile_ or embedded_aws:
                options.check_fixture(embedded_aws, aws_fixture)
                region = None if embedded_aws else head.aws_region  # the embedded world has one region
                if region not in targets:
                    targets[region] = scope.enter_context(aws_target(embedded_aws, aws_fixture, head.aws_region))
                kube = kubernetes_version or head.inputs.cluster.kubernetes_version  # both sides run on the head's cluster
                plan = planner(targets[region], head.version, kubernetes_version=kube, cache_dir=cache_dir)
            return preview_sources(head, base_ref, paths, plan=plan, kubeconfig=kubeconfig, pulumi=pulumi)

        if options.is_fleet(stacks, all_stacks):
            _fleet(options.fleet_stacks(manifests, stacks, all_stacks), previewed, fmt, budget, full_report)
        report = previewed(options.stack_or_manifests(stacks[0] if stacks else None, manifests))
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        target_file = full_report or Path(tempfile.gettempdir()) / "karpenter-preview-full.md"
        comment, shortened = preview.markdown(report, budget, str(target_file))
        if shortened:  # written before the comment is printed: a comment must not point at a missing report
            try:
                target_file.parent.mkdir(parents=True, exist_ok=True)
                target_file.write_text(preview.markdown(report, None)[0], encoding="utf-8")
            except OSError as error:
                raise InputError(f"cannot write the full report: {error.strerror or error}", str(target_file)) from None
        click.echo(comment, nl=False)
    sys.exit(report.exit_code)


def _fleet(stacks, previewed, fmt: str, budget: int, full_report) -> None:
    """One section per stack (each within an equal share of --budget), JSON keyed by stack, the worst exit code."""
    import tempfile

    from karpenter_gitops.app.fleet import run_fleet
    from karpenter_gitops.load.stacks import stack_file
    from karpenter_gitops.output import preview

    fleet = run_fleet(stacks, lambda stack: ((report := previewed([stack_file(stack)])), report.exit_code))
    if fmt == "json":
        click.echo(json.dumps({"stacks": {s: r.to_json() for s, r in fleet.results.items()},
                               "summary": {"stacks": len(stacks), "exitCodes": fleet.exit_codes}}, indent=2))
        sys.exit(fleet.exit_code)
    share = max(budget // len(stacks), 1_000)
    directory = full_report.parent if full_report else Path(tempfile.gettempdir())
    for stack, report in fleet.results.items():
        target_file = directory / f"karpenter-preview-full-{stack}.md"
        comment, shortened = preview.markdown(report, share, str(target_file))
        if shortened:
            try:
                target_file.parent.mkdir(parents=True, exist_ok=True)
                target_file.write_text(preview.markdown(report, None)[0], encoding="utf-8")
            except OSError as error:
                raise InputError(f"cannot write the full report: {error.strerror or error}", str(target_file)) from None
        click.echo(f"## Stack `{stack}`\n\n{comment}", nl=False)
    sys.exit(fleet.exit_code)

