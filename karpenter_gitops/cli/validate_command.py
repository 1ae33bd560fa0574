"""``karpenter-gitops validate``: offline checks of manifests and stack files."""

from __future__ import annotations

import datetime as dt
import json

import click

from karpenter_gitops.cli import options
from karpenter_gitops.core.inputs import DEFAULT_WAIVERS
from karpenter_gitops.core.outcome import Outcome


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@options.stacks("Also read stacks/Pulumi.NAME.yaml; several (or --all-stacks) judge each stack as its own cluster.")
@click.option(
    "--crd",
    "crd_paths",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Also check with these CRDs (a file, or a directory such as the Helm chart's crds/); repeatable.",
)
@click.option(
    "--context",
    "context_paths",
    multiple=True,
    type=click.Path(allow_dash=True),
    metavar="PATH",
    help="The rest of the repository (e.g. --context .): its EC2NodeClasses resolve NodePool references; "
    "nothing there is judged. Repeatable.",
)
@click.option("--policy", is_flag=True, help="Also report the house-style policies (advisory unless raised) and apply waivers.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Judge again even when nothing changed since a run with the same inputs and options (the verdict cache "
    "under the user cache directory is neither read nor written).",
)
@click.option(
    "--waivers",
    "waiver_file",
    type=click.Path(),
    metavar="FILE",
    help=f"Waiver file for --policy (default: {DEFAULT_WAIVERS} when it exists).",
)
@options.policy_file
@options.karpenter
@options.allow_empty
@options.show_info
@options.quiet
@options.output_format(
    "text",
    "json",
    "jsonl",
    "github",
    help="Output format; jsonl prints one JSON object per finding, then one with the summary (from 100 MB of input, "
    "the run is judged in parts, each part's findings printed as it is judged, in memory that does not grow with "
    "the input); github prints GitHub Actions annotations (::error file=…,line=…::…).",
)
def validate_command(paths, stacks, all_stacks, crd_paths, context_paths, policy, no_cache, waiver_file, policy_file, release, allow_empty, show_info, quiet, fmt) -> Outcome:
    """Check manifests and stack config offline with Karpenter's rules and stricter ones.

    PATHS are manifest files, directories of manifests (hidden entries below them are passed over),
    Pulumi stack files, or - for a YAML stream on standard input (helm template ... | validate -).
    YAML that is not Kubernetes (templates, CloudFormation) is skipped with a note. With --policy the
    house-style policies are reported too (as warnings: they fail the run only where a policy file
    or the stack raises them to errors) and waivers apply (waived findings are listed but do not
    fail the run). --policy-file implies --policy; a team that enforces encryption keeps
    `rules: {policy/ebs-encrypted: {severity: error}}` in e.g. policies/karpenter.yaml and runs
    `karpenter-gitops validate deploy/ --policy-file policies/karpenter.yaml`. A run that finds no
    Karpenter object exits 2 unless --allow-empty.
    """
    from karpenter_gitops.app.sources import read_policy_file
    from karpenter_gitops.app.validate import Verdict, crds_at, validate_once, validate_sources, waivers_for
    from karpenter_gitops.app.validate_stream import MAX_STREAM_BYTES
    from karpenter_gitops.load.files import MAX_FILE_BYTES
    from karpenter_gitops.output.report_text import print_github, print_jsonl, print_text

    policy = policy or policy_file is not None
    if waiver_file and not policy:
        raise click.UsageError("--waivers only applies with --policy")
    house = read_policy_file(policy_file) if policy_file else None
    waivers = waivers_for(policy, waiver_file)
    crds = []  # loaded on the first judgement: a cached verdict needs no CRD compiled

    def judged(paths_: list) -> tuple:
        if not crds:
            crds.append(crds_at(crd_paths))
        sources = options.sources(paths_, release).with_policy(house)
        options.require_objects(sources, allow_empty)
        return sources, validate_sources(sources, policy=policy, waivers=waivers, crds=crds[0], context=context_paths)

    if options.is_fleet(stacks, all_stacks):
        return _fleet(options.fleet_stacks(paths, stacks, all_stacks), judged, fmt)

    def verdict(paths_: list) -> Verdict:
        if not crds:
            crds.append(crds_at(crd_paths))
        split = options.halves(paths_, release, stdin, house=house, policy=policy, waivers=waivers, crds=crds[0], context=context_paths)
        if split is not None:
            return split
        sources, report = judged(paths_)
        return Verdict(report, sources.release, sources.note)

    run_paths = options.input_paths(paths, stacks[0] if stacks else None)
    stdin = options.kept_stdin(run_paths, MAX_STREAM_BYTES if fmt == "jsonl" else MAX_FILE_BYTES)
    if fmt == "jsonl":
        streamed = options.stream(run_paths, release, stdin, house=house, policy=policy, waivers=waivers,
                                  crd_paths=crd_paths, context=context_paths)
        if streamed is not None:
            return _print_stream(streamed)

    gates = options.given_feature_gates()
    run, cached = validate_once(
        run_paths,
        verdict,
        options={
            "release": repr(release),
            "policy": policy,
            "allow_empty": allow_empty,
            "feature_gates": repr(sorted((gates or {}).items())),
            "today": dt.date.today().isoformat() if policy else None,  # a waiver may expire overnight
        },
        extra=[*crd_paths, *context_paths, *waiver_files(policy, waiver_file), *([policy_file] if policy_file else [])],
        cache=not no_cache,
        note=lambda text: click.echo(f"karpenter-gitops: {text}", err=True),
    )
    if cached and run.release_note:
        click.echo(f"karpenter-gitops: {run.release_note}", err=True)
    report = run.report
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    elif fmt == "jsonl":
        print_jsonl(report)
    elif fmt == "github":
        print_github(report, run.release)
    else:
        print_text(report, run.release, show_info=show_info, quiet=quiet)
    return report.exit_code


def _print_stream(streamed) -> Outcome:
    """A run judged part by part: each part's findings as it is judged, the summary of all of them last."""
    from karpenter_gitops.judge.report import Tally
    from karpenter_gitops.output.report_text import print_jsonl_findings, print_jsonl_summary

    tally = Tally()
    for report in streamed.reports:
        print_jsonl_findings(report)
        tally += report.tally()
    print_jsonl_summary(tally)
    return tally.exit_code


def waiver_files(policy: bool, waiver_file: str | None) -> list[str]:
    """The waiver file a run reads, for the verdict cache's key."""
    if waiver_file:
        return [waiver_file]
    return [str(DEFAULT_WAIVERS)] if policy and DEFAULT_WAIVERS.is_file() else []


def _fleet(stacks: list[str], judged, fmt: str) -> Outcome:
    """Each stack judged on its own; one report grouped by stack, a fleet summary, the worst exit code."""
    from karpenter_gitops.app.fleet import run_fleet
    from karpenter_gitops.load.stacks import stack_file
    from karpenter_gitops.output.report_text import print_fleet_summary, print_github, print_text

    def one(stack: str):
        sources, report = judged([stack_file(stack)])
        return (sources.release, report), report.exit_code

    fleet = run_fleet(stacks, one)
    if fmt == "json":
        by_stack = {stack: report.to_json() for stack, (_, report) in fleet.results.items()}
        totals = {key: sum(r["summary"][key] for r in by_stack.values()) for key in ("errors", "warnings", "objects")}
        click.echo(json.dumps({"stacks": by_stack, "summary": {"stacks": len(by_stack), **totals}}, indent=2))
    else:
        for stack, (release, report) in fleet.results.items():
            click.echo(click.style(f"== stack {stack}", bold=True))
            (print_github if fmt == "github" else print_text)(report, release)
        print_fleet_summary({stack: report for stack, (_, report) in fleet.results.items()})
    return fleet.exit_code

