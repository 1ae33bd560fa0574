"""The ``karpenter-gitops`` command line.

Exit codes are a contract other tools depend on:
0 = no error findings; 1 = at least one error finding (or a persistent problem);
2 = usage error or unreadable input; 3 = transient failure, nothing decided, retry.
"""

from __future__ import annotations

import dataclasses
import contextlib
import json
import sys
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

import click

from karpenter_gitops import config, crd, versions
from karpenter_gitops.errors import InputError
from karpenter_gitops.findings import Severity
from karpenter_gitops.validate import Report, validate

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_TRANSIENT = 0, 1, 2, 3
DEFAULT_WAIVERS = Path("policies/waivers.yaml")

_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def _version_option(func):
    return click.option(
        "--karpenter-version",
        "karpenter_version",
        metavar="X.Y",
        help=f"Karpenter release to validate against (default: the stack's cluster.karpenterVersion, "
        f"else {versions.show(versions.DEFAULT)}).",
    )(func)


def _format_option(func):
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="Output format.",
    )(func)


def resolve_version(flag: str | None, files) -> versions.Version:
    if flag:
        try:
            return versions.parse(flag)
        except ValueError as err:
            raise click.BadParameter(str(err), param_hint="--karpenter-version") from None
    return config.stack_karpenter_version(files) or versions.DEFAULT


def input_paths(paths: Sequence[str], stack: str | None) -> list[Path]:
    chosen = [Path(p) for p in paths]
    if stack:
        chosen.append(config.stack_file(stack))
    if not chosen:
        raise click.UsageError("give at least one PATH or --stack NAME")
    return chosen


def print_report(report: Report, version: versions.Version) -> None:
    for note in report.notes:
        click.echo(click.style(f"note: {note}", dim=True), err=True)
    for (kind, name, file), group in groupby(report.findings, key=lambda f: (f.kind, f.name, f.file)):
        click.echo(click.style(f"{kind}/{name}", bold=True) + (f"  ({file})" if file else ""))
        for finding in group:
            if finding in report.waived:
                label = click.style(f"{'waived':<7}", dim=True)
            else:
                label = click.style(f"{finding.severity.value:<7}", fg=_COLOURS[finding.severity])
            click.echo(f"  {label} {finding.path}: {finding.message}  [{finding.rule}]")
            if finding.hint:
                click.echo(click.style(f"          fix: {finding.hint}", dim=True))
    if report.policy:
        click.echo(click.style(f"active waivers: {len(report.waivers)}", bold=True))
        for waiver in report.waivers:
            kind = f"{waiver.kind}/" if waiver.kind else ""
            click.echo(f"  {waiver.rule} on {kind}{waiver.object} until {waiver.expires.isoformat()}: {waiver.reason}")
    summary = (
        f"{report.objects} object(s) checked against Karpenter {versions.show(version)}: "
        f"{report.errors} error(s), {report.warnings} warning(s)"
    )
    colour = "red" if report.errors else ("yellow" if report.warnings else "green")
    click.echo(click.style(summary, fg=colour, bold=True))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="karpenter-gitops")
def cli() -> None:
    """Make Karpenter EC2NodeClass / NodePool changes safe to ship through Git."""


def with_crd_check(report: Report, inputs: config.Inputs, crds: crd.Crds) -> Report:
    """The report plus what the user's CRDs (schema and CEL rules) say about the same objects."""
    findings, notes = crd.check_inputs(crds, inputs)
    merged = sorted(report.findings + tuple(findings), key=lambda f: f.sort_key)
    return dataclasses.replace(report, findings=tuple(merged), notes=report.notes + tuple(notes))


def policy_waivers(policy: bool, waiver_file: str | None):
    """The waivers of a --policy run: the named file, else the default file if there is one."""
    if waiver_file and not policy:
        raise click.UsageError("--waivers only applies with --policy")
    if waiver_file:
        return config.load_waivers(waiver_file)
    return config.load_waivers(DEFAULT_WAIVERS) if policy and DEFAULT_WAIVERS.is_file() else ()


@cli.command("validate")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--stack", metavar="NAME", help="Also read stacks/Pulumi.NAME.yaml.")
@click.option(
    "--crd",
    "crd_paths",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Also check with these CRDs (a file, or a directory such as the Helm chart's crds/); repeatable.",
)
@click.option("--policy", is_flag=True, help="Also run the hygiene policies and apply waivers.")
@click.option(
    "--waivers",
    "waiver_file",
    type=click.Path(),
    metavar="FILE",
    help=f"Waiver file for --policy (default: {DEFAULT_WAIVERS} when it exists).",
)
@_version_option
@_format_option
def validate_command(paths, stack, crd_paths, policy, waiver_file, karpenter_version, fmt) -> None:
    """Check manifests and stack config offline with Karpenter's rules and stricter ones.

    PATHS are manifest files, directories of manifests, or Pulumi stack files. With --policy the
    hygiene policies run too, waivers apply (waived findings are listed but do not fail the run)
    and an expired waiver is an error.
    """
    crds = crd.load(crd_paths) if crd_paths else None
    files = config.read(input_paths(paths, stack))
    version = resolve_version(karpenter_version, files)
    inputs = config.load_documents(files, version)
    report = validate(inputs, version, policy=policy, waivers=policy_waivers(policy, waiver_file))
    if crds is not None:
        report = with_crd_check(report, inputs, crds)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_report(report, version)
    sys.exit(EXIT_FINDINGS if report.errors else EXIT_OK)


def _plan_inputs(stack: str | None, manifests: Sequence[str]) -> list[Path]:
    if bool(stack) == bool(manifests):
        raise click.UsageError("give exactly one of --stack NAME or --manifests PATH...")
    return input_paths(manifests, stack)


@cli.command("plan")
@click.option("--stack", metavar="NAME", help="Plan stacks/Pulumi.NAME.yaml.")
@click.option("--manifests", "manifests", metavar="PATH", multiple=True, help="Plan manifest files or directories.")
@click.option("--embedded-aws", is_flag=True, help="Run against moto on 127.0.0.1, seeded from a world fixture.")
@click.option("--aws-fixture", metavar="FILE", type=click.Path(), help="World fixture for --embedded-aws.")
@click.option("--kubernetes-version", metavar="X.Y", help="Cluster version for alias AMIs (default: the stack's).")
@click.option("--cache-dir", type=click.Path(path_type=Path), help="Instance-type catalogue cache directory.")
@_version_option
@_format_option
def plan_command(stack, manifests, embedded_aws, aws_fixture, kubernetes_version, cache_dir, karpenter_version, fmt):
    """Resolve what Karpenter will resolve from AWS and predict its status, before anything is applied.

    Exit 0: every EC2NodeClass predicted Ready and no error finding; 1: persistent problems;
    3: transient AWS trouble (nothing decided, retry); 2: usage or unreadable input.
    """
    from rich.console import Console

    from karpenter_gitops.aws import embedded
    from karpenter_gitops.aws.client import AwsSession
    from karpenter_gitops.plan_text import print_plan
    from karpenter_gitops.reconcile import reconcile

    if aws_fixture and not embedded_aws:
        raise click.UsageError("--aws-fixture needs --embedded-aws")
    files = config.read(_plan_inputs(stack, manifests))
    version = resolve_version(karpenter_version, files)
    inputs = config.load_documents(files, version)
    status = Console(stderr=True)
    with contextlib.ExitStack() as stack_:
        world = stack_.enter_context(embedded.embedded_aws(aws_fixture)) if embedded_aws else None
        session = world.session() if world else AwsSession()
        kube = kubernetes_version or inputs.cluster.kubernetes_version or (world.world.kubernetes_version if world else None)
        spinner = stack_.enter_context(status.status("planning…")) if status.is_terminal and fmt == "text" else None
        plan = reconcile(
            inputs,
            version=version,
            kubernetes_version=kube,
            aws=session,
            cache_dir=cache_dir,
            progress=spinner.update if spinner else None,
        )
    if fmt == "json":
        click.echo(json.dumps(plan.to_json(), indent=2))
    else:
        print_plan(plan, Console(width=None if sys.stdout.isatty() else 120))
    sys.exit(plan.exit_code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; user errors become one line on stderr and exit 2, never a traceback."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="karpenter-gitops", standalone_mode=False)
    except InputError as err:
        click.echo(f"karpenter-gitops: error: {err}", err=True)
        return EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("karpenter-gitops: aborted", err=True)
        return EXIT_USAGE
    except click.ClickException as err:
        err.show()
        return EXIT_USAGE
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return EXIT_OK
