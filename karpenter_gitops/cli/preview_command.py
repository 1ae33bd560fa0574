"""``karpenter-gitops preview``: a PR comment on what the change does compared with its base."""

from __future__ import annotations

import functools
import json
import sys
import tempfile
from pathlib import Path

import click

from karpenter_gitops.app.fleet import SharedTargets, run_fleet
from karpenter_gitops.app.plan import drift_replacer, forecaster, planner, read_workloads, write_picture
from karpenter_gitops.app.preview import preview_sources, pulumi_preview, rendered_head
from karpenter_gitops.app.sources import house_policy
from karpenter_gitops.cli import options
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.text import visible
from karpenter_gitops.load import cluster_state as cluster_state_file
from karpenter_gitops.load.files import STDIN
from karpenter_gitops.load.stacks import stack_file
from karpenter_gitops.output import DEFAULT_BUDGET, pr_comment
from karpenter_gitops.output.markdown import code_span
from karpenter_gitops.output.terminal import waiting


@click.command("preview")
@options.manifest_paths
@options.stacks(
    "Preview stacks/Pulumi.NAME.yaml; several (or --all-stacks) give one section per stack, within --budget together."
)
@click.option(
    "--base", "base_ref", required=True, metavar="DIR|GIT-REF", help="Compare with a directory of manifests or a Git ref."
)
@options.output_format("markdown", "json")
@click.option(
    "--budget", type=click.IntRange(min=5_000), default=DEFAULT_BUDGET, show_default=True, help="Comment size limit (characters)."
)
@click.option(
    "--full-report",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Where the full report goes when the comment is shortened.",
)
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Read NodeClaims, Nodes and Pods to count drifting nodes, say where their pods go, and start the forecast from them.",
)
@click.option(
    "--cluster-state",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The cluster from a snapshot instead: `kubectl get nodeclaims,nodes,pods -A -o yaml` output, or what "
    "`verify --write-cluster-state` wrote (without pods it counts drifting nodes only).",
)
@click.option("--pulumi-json", type=click.Path(path_type=Path), metavar="FILE", help="Fold in `pulumi preview --json` output.")
@click.option(
    "--pulumi-events", type=click.Path(path_type=Path), metavar="FILE", help="Fold in a `pulumi preview --event-log` file."
)
@click.option(
    "--workloads",
    "workload_paths",
    metavar="PATH",
    multiple=True,
    help="Forecast these workloads (files, directories, - for stdin; default: the stack's karpenter-gitops:workloads) on base and head and compare the cost "
    "(needs --reconcile or --embedded-aws).",
)
@click.option(
    "--picture",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.svg",
    help="With --workloads: write an SVG of the head's NodePools, their nodes and the pods packed on them.",
)
@options.kustomize
@options.aws
@options.reconcile
@options.policy_file
@options.karpenter
@options.allow_empty
@options.show_info
@options.repository_config
def preview_command(
    paths,
    manifests,
    allow_empty,
    stacks,
    all_stacks,
    base_ref,
    fmt,
    budget,
    full_report,
    kubeconfig,
    cluster_state,
    pulumi_json,
    pulumi_events,
    workload_paths,
    picture,
    kustomize_dir,
    embedded_aws,
    aws_fixture,
    kubernetes,
    reconcile_,
    cache_dir,
    policy_file,
    release,
    show_info,
) -> Outcome:
    """Print a PR comment (or JSON) on what the change does compared with --base.

    Summary first (objects added/changed/removed, predicted Ready, blocking errors, node impact),
    then folded details, within --budget characters. It blocks on what `validate` blocks on; the
    house-style policies are listed as policy results unless --policy-file (or the stack) raises
    them to errors. Exit codes as for plan: 0 clean, 1 blocking problems, 3 transient AWS trouble,
    2 usage or unreadable input. PATHS (or --manifests) are manifest files, directories or - for
    standard input, as for validate; a head holding no Karpenter object is refused (exit 2) unless
    --allow-empty (a change that removes every object). With --kustomize DIR the head is what kustomize
    renders from DIR, and a Git ref --base what it renders from DIR as the ref has it.
    """
    if kubeconfig and cluster_state:
        raise click.UsageError("--kubeconfig reads the cluster, --cluster-state a snapshot of it: give one")
    if picture and not (workload_paths or stacks):
        raise click.UsageError("--picture draws the forecast: give --workloads too")
    if picture and options.is_fleet(stacks, all_stacks):
        raise click.UsageError("--picture draws one stack's forecast: give one --stack")
    if workload_paths and not (reconcile_ or embedded_aws):
        raise click.UsageError("--workloads forecasts against AWS's catalogue and prices: add --reconcile or --embedded-aws")
    if kustomize_dir is not None and (paths or manifests or stacks or all_stacks):
        raise click.UsageError("--kustomize DIR is the head: give it without PATHS, --manifests or --stack")
    rendered = rendered_head(kustomize_dir) if kustomize_dir is not None else None
    pulumi = pulumi_preview(pulumi_json, pulumi_events)
    snapshot = cluster_state_file.read(cluster_state) if cluster_state else None
    house = house_policy(policy_file, options.configured_rules())
    asks_aws = reconcile_ or embedded_aws
    stdin = functools.cache(lambda: sys.stdin.read())  # read once, whichever stack asks first
    with waiting("asking AWS…", shown=asks_aws) as progress, SharedTargets(embedded_aws, aws_fixture) as targets:

        def previewed(paths):
            head = options.sources(paths, release, rendered).with_policy(house)
            options.require_objects(head, allow_empty)
            plan = forecast = replacer = None
            if asks_aws:
                options.check_fixture(embedded_aws, aws_fixture)
                kube = kubernetes or head.inputs.cluster.kubernetes  # both sides run on the head's cluster
                target = targets.for_stack(head.aws_config)
                plan = planner(target, head.release, kubernetes=kube, cache_dir=cache_dir, progress=progress)
                replacer = drift_replacer(target, head.release, cache_dir=cache_dir)
                forecast_paths = workload_paths or head.workload_paths  # the stack's karpenter-gitops:workloads, unless given
                if forecast_paths:
                    workloads = read_workloads(forecast_paths, kube or target.world_kubernetes, stdin)
                    forecast = forecaster(target, head.release, workloads, forecast_paths, cache_dir=cache_dir)
            return preview_sources(
                head,
                base_ref,
                paths,
                plan=plan,
                kubeconfig=kubeconfig,
                cluster_state=snapshot,
                pulumi=pulumi,
                forecast=forecast,
                replacer=replacer,
                kustomized=kustomize_dir,
            )

        if options.is_fleet(stacks, all_stacks):
            return _fleet(
                options.fleet_stacks((*paths, *manifests), stacks, all_stacks), previewed, fmt, budget, full_report, show_info
            )
        head_paths = [STDIN] if rendered else options.stack_or_manifests(stacks[0] if stacks else None, (*paths, *manifests))
        report = previewed(head_paths)
    if picture:
        if not report.cost:
            raise click.UsageError(
                "--picture draws the forecast: give --workloads (or name them in the stack's "
                "karpenter-gitops:workloads) and --reconcile or --embedded-aws"
            )
        write_picture(report.cost.head, picture)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        target_file = full_report or Path(tempfile.gettempdir()) / "karpenter-preview-full.md"
        click.echo(_comment(report, budget, target_file, show_info), nl=False)
    return report.exit_code


def _fleet(stacks, previewed, fmt: str, budget: int, full_report, show_info: bool) -> Outcome:
    """One section per stack (each within an equal share of --budget), JSON keyed by stack, the worst exit code."""
    fleet = run_fleet(stacks, lambda stack: ((report := previewed([stack_file(stack)])), report.exit_code))
    if fmt == "json":
        click.echo(
            json.dumps(
                {
                    "stacks": {s: r.to_json() for s, r in fleet.results.items()},
                    "summary": {"stacks": len(stacks), "exitCodes": fleet.exit_codes},
                },
                indent=2,
            )
        )
        return fleet.exit_code
    share = max(budget // len(stacks), 1_000)
    directory = full_report.parent if full_report else Path(tempfile.gettempdir())
    sections = [
        f"## Stack {code_span(visible(stack))}\n\n{_comment(report, share, directory / f'karpenter-preview-full-{stack}.md', show_info)}"
        for stack, report in fleet.results.items()
    ]
    click.echo("".join(sections), nl=False)
    return fleet.exit_code


def _comment(report, budget: int, full_report: Path, show_info: bool) -> str:
    """The comment within ``budget``; when it had to be shortened, the full report is written first
    (a comment must not point at a missing report)."""
    comment, shortened = pr_comment.markdown(report, budget, str(full_report), show_info=show_info)
    if shortened:
        try:
            full_report.parent.mkdir(parents=True, exist_ok=True)
            full_report.write_text(pr_comment.markdown(report, None, show_info=show_info)[0], encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write the full report: {error.strerror or error}", str(full_report)) from None
    return comment
