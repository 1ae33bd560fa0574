"""The ``karpenter-gitops`` command line.

Exit codes are a contract other tools depend on:
0 = no error findings; 1 = at least one error finding (or a persistent problem);
2 = usage error or unreadable input; 3 = transient failure, nothing decided, retry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import os
import sys
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

import click

from karpenter_gitops.core import schema, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.judge import crd
from karpenter_gitops.judge.validate import Report, validate
from karpenter_gitops.load import config, locate
from karpenter_gitops.output.preview import DEFAULT_BUDGET

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


def _check_kubernetes_version(_ctx, param, value: str | None) -> str | None:
    """Refuse ``--kubernetes-version 1.x`` here, as a usage error, not as a traceback deep in alias resolution."""
    from karpenter_gitops.families.aliases import kubernetes_minor

    if value is not None:
        try:
            kubernetes_minor(value)
        except ValueError as err:
            raise click.BadParameter(str(err), param=param) from None
    return value


def _aws_options(func):
    """``--embedded-aws``, ``--aws-fixture`` and ``--kubernetes-version``: what a command reading AWS takes."""
    options = (
        click.option(
            "--embedded-aws", is_flag=True, help="Run against moto on 127.0.0.1, seeded from a world fixture."
        ),
        click.option("--aws-fixture", metavar="FILE", type=click.Path(), help="World fixture for --embedded-aws."),
        click.option(
            "--kubernetes-version",
            metavar="X.Y",
            callback=_check_kubernetes_version,
            help="Cluster version for alias AMIs (default: the stack's).",
        ),
    )
    for option in reversed(options):
        func = option(func)
    return func


def stack_aws_region(files) -> str | None:
    """The ``aws:region`` of the first stack file among parsed ``files``, if any."""
    for _name, docs in files:
        if len(docs) == 1 and config.is_stack_document(docs[0]):
            region = (docs[0].get("config") or {}).get("aws:region")
            if isinstance(region, str) and region:
                return region
    return None


@contextlib.contextmanager
def aws_target(
    embedded_aws: bool,
    aws_fixture: str | None,
    kubernetes_version: str | None,
    cluster: config.Cluster,
    stack_region: str | None = None,
):
    """The AwsSession to read (real AWS, or moto seeded from a world) and the cluster's Kubernetes version.

    The version is the flag's, else the stack's, else the embedded world's. Real AWS takes the
    region from the environment, else ``stack_region`` (the stack's ``aws:region``, as the Pulumi
    provider does), else the profile; no region or no credentials is one line and exit 2, before
    any call, rather than one failed lookup per resolution.
    """
    from karpenter_gitops.adapters.aws import embedded
    from karpenter_gitops.adapters.aws.client import AwsSession
    from karpenter_gitops.adapters.aws.errors import PersistentAWSError

    if aws_fixture and not embedded_aws:
        raise click.UsageError("--aws-fixture needs --embedded-aws")
    with embedded.embedded_aws(aws_fixture) if embedded_aws else contextlib.nullcontext() as world:
        try:
            if world:
                session = world.session()
            else:
                named = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                session = AwsSession(None if named else stack_region)
                session.require_credentials()
        except PersistentAWSError as error:  # the user's setup, not AWS's answer
            raise InputError(error.detail) from None
        world_version = world.world.kubernetes_version if world else None
        yield session, kubernetes_version or cluster.kubernetes_version or world_version


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
            where = click.style(f"  {finding.file}:{finding.line}", dim=True) if finding.line else ""
            click.echo(f"  {label} {finding.path}: {finding.message}  [{finding.rule}]{where}")
            if finding.hint:
                hint = finding.hint.replace("\n", "\n" + " " * 15)  # multi-line hints (TOML, MIME) stay indented
                click.echo(click.style(f"          fix: {hint}", dim=True))
    if report.policy:
        click.echo(click.style(f"active waivers: {len(report.waivers)}", bold=True))
        for waiver in report.waivers:
            kind = f"{waiver.kind}/" if waiver.kind else ""
            click.echo(f"  {waiver.rule} on {kind}{waiver.object} until {waiver.expires.isoformat()}: {waiver.reason}")
    colour = "red" if report.errors else ("yellow" if report.warnings else "green")
    click.echo(click.style(_summary(report, version), fg=colour, bold=True))


def _summary(report: Report, version: versions.Version) -> str:
    return (
        f"{report.objects} object(s) checked against Karpenter {versions.show(version)}: "
        f"{report.errors} error(s), {report.warnings} warning(s)"
    )


_GITHUB_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def print_github(report: Report, version: versions.Version) -> None:
    """One GitHub Actions workflow command per finding, so each shows as an annotation on its line."""
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for finding in report.findings:
        waiver = report.waived.get(finding)
        command = "notice" if waiver else _GITHUB_COMMANDS[finding.severity]
        properties = {"file": finding.file, "line": finding.line, "title": finding.rule}
        listed = ",".join(f"{key}={_github_property(str(value))}" for key, value in properties.items() if value)
        message = f"{finding.kind}/{finding.name} {finding.path}: {finding.message}"
        if waiver:
            message += f" (waived until {waiver.expires.isoformat()}: {waiver.reason})"
        if finding.hint:
            message += f"\nfix: {finding.hint}"
        click.echo(f"::{command} {listed}::{_github_data(message)}")
    click.echo(_summary(report, version))


def _github_data(text: str) -> str:
    """Escape a workflow command's message as GitHub's toolkit does (``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    """Escape a workflow command's property value (``escapeProperty``): also ``:`` and ``,``."""
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


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
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="Output format; github prints GitHub Actions annotations (::error file=…,line=…::…).",
)
def validate_command(paths, stack, crd_paths, policy, waiver_file, karpenter_version, fmt) -> None:
    """Check manifests and stack config offline with Karpenter's rules and stricter ones.

    PATHS are manifest files, directories of manifests, or Pulumi stack files. With --policy the
    hygiene policies run too, waivers apply (waived findings are listed but do not fail the run)
    and an expired waiver is an error.
    """
    crds = crd.load(crd_paths) if crd_paths else None
    read = list(config.read_files(input_paths(paths, stack)))
    files = [(file.name, file.documents) for file in read]
    version = resolve_version(karpenter_version, files)
    inputs = config.load_documents(files, version)
    report = validate(inputs, version, policy=policy, waivers=policy_waivers(policy, waiver_file))
    if crds is not None:
        report = with_crd_check(report, inputs, crds)
    report = dataclasses.replace(report, findings=locate.with_lines(report.findings, {f.name: f.text for f in read}))
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    elif fmt == "github":
        print_github(report, version)
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
@_aws_options
@click.option("--cache-dir", type=click.Path(path_type=Path), help="Instance-type catalogue cache directory.")
@_version_option
@_format_option
def plan_command(stack, manifests, embedded_aws, aws_fixture, kubernetes_version, cache_dir, karpenter_version, fmt):
    """Resolve what Karpenter will resolve from AWS and predict its status, before anything is applied.

    Exit 0: every EC2NodeClass predicted Ready and no error finding; 1: persistent problems;
    3: transient AWS trouble (nothing decided, retry); 2: usage or unreadable input.
    """
    from rich.console import Console

    from karpenter_gitops.output.plan_text import print_plan
    from karpenter_gitops.reconcile import reconcile

    files = config.read(_plan_inputs(stack, manifests))
    version = resolve_version(karpenter_version, files)
    inputs = config.load_documents(files, version)
    status = Console(stderr=True)
    with contextlib.ExitStack() as stack_:
        session, kube = stack_.enter_context(
            aws_target(embedded_aws, aws_fixture, kubernetes_version, inputs.cluster, stack_aws_region(files))
        )
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


def _print_bump(result, file: str, diff: str, outcome: str) -> None:
    """A bump in text: each class's pin move (or why not), the notes, the diff of the file, what happened to it."""
    from karpenter_gitops.app.bump import describe_terms

    click.echo(click.style(file, bold=True))
    for change in result.changes:
        move = f"{describe_terms(change.old)} → {describe_terms(change.new)}"
        click.echo(f"  {click.style('bump ', fg='green')} {change.node_class}: {move}")
        click.echo(click.style(f"         {change.reason}", dim=True))
    for problem in result.problems:
        click.echo(f"  {click.style('error', fg='red')} {problem.node_class}: {problem.message}")
    for kept in result.unchanged:
        click.echo(f"  {click.style('keep ', dim=True)} {kept.node_class}: {kept.reason}")
    for note in result.notes:
        click.echo(click.style(f"note: {note}", dim=True))
    click.echo(diff, nl=False)
    click.echo(click.style(outcome, bold=True))


@cli.command("bump")
@click.option("--stack", metavar="NAME", required=True, help="Bump the AMI pins of stacks/Pulumi.NAME.yaml.")
@click.option("--class", "class_names", metavar="NAME", multiple=True, help="Only this EC2NodeClass; repeatable.")
@click.option("--pin-latest", is_flag=True, help="Also pin @latest aliases to the release they resolve to today.")
@click.option("--dry-run", is_flag=True, help="Show the changes and the diff; write nothing.")
@_aws_options
@_format_option
def bump_command(stack, class_names, pin_latest, dry_run, embedded_aws, aws_fixture, kubernetes_version, fmt):
    """Move AMI pins to the newest safe images as an edit of the stack file, for review.

    Alias classes pin the alias version; custom-AMI classes pin id terms resolved from their
    karpenter-gitops:amiSources selector. Exit 0: nothing to bump, or bumped; 1: a pinned class
    cannot be resolved; 3: transient AWS trouble (nothing written); 2: usage or unreadable input.
    """
    from karpenter_gitops.app import bump

    path = config.stack_file(stack)
    file = os.path.relpath(path)
    text = config.read_text(path)
    files = [(file, config.parse_yaml(text, file))]
    version = resolve_version(None, files)
    inputs = config.load_documents(files, version)
    unknown = sorted(set(class_names) - {nc.name for nc in inputs.node_classes})
    if unknown:
        raise click.BadParameter(f"no EC2NodeClass {', '.join(unknown)} in {file}", param_hint="--class")
    try:
        target = aws_target(embedded_aws, aws_fixture, kubernetes_version, inputs.cluster, stack_aws_region(files))
        with target as (session, kube):
            catalog = bump.AwsAmiCatalog(session, kube, version)
            result = bump.plan_bump(inputs, catalog, classes=class_names, pin_latest=pin_latest)
    except bump.AwsUnavailable as error:
        click.echo(f"karpenter-gitops: AWS did not answer; nothing written, retry: {error}", err=True)
        if fmt == "json":
            click.echo(json.dumps({"transient": str(error), "file": file, "written": False}, indent=2))
        sys.exit(EXIT_TRANSIENT)
    edited = bump.rewrite_stack(text, result.changes, file)
    diff = bump.stack_diff(text, edited, file)
    written = bool(diff) and not dry_run
    if written:
        try:
            bump.write_atomically(path, edited)
        except OSError as error:  # the old file is still whole: the write is all or nothing
            raise InputError(f"cannot write the bumped pins: {error.strerror or error}", file) from None
    if fmt == "json":
        click.echo(json.dumps({**result.to_json(), "file": file, "written": written, "diff": diff}, indent=2))
    else:
        untouched = "dry run: nothing written" if diff else f"nothing to bump: {file} untouched"
        outcome = f"wrote {file}" if written else untouched
        _print_bump(result, file, diff, outcome)
    sys.exit(EXIT_FINDINGS if result.problems else EXIT_OK)


def _source_options(func):
    """``--stack NAME`` or ``--manifests PATH...``: the desired state a command reads."""
    func = click.option("--manifests", "manifests", metavar="PATH", multiple=True, help="Manifest files or directories.")(func)
    return click.option("--stack", metavar="NAME", help="Read stacks/Pulumi.NAME.yaml.")(func)


def _reconcile_options(func):
    """``--reconcile/--offline`` and ``--cache-dir``: commands that ask AWS only when told to."""
    func = click.option("--cache-dir", type=click.Path(path_type=Path), help="Instance-type catalogue cache directory.")(func)
    return click.option(
        "--reconcile/--offline",
        "reconcile_",
        default=False,
        show_default=True,
        help="Also reconcile against AWS (implied by --embedded-aws).",
    )(func)


def _reconcile_each(inputs_list, version, embedded_aws, aws_fixture, kubernetes_version, cache_dir, region):
    """One plan per inputs, against one AWS target (the cluster facts of the last inputs decide the version)."""
    from karpenter_gitops.reconcile import reconcile

    cluster = inputs_list[-1].cluster
    with aws_target(embedded_aws, aws_fixture, kubernetes_version, cluster, region) as (session, kube):
        return [
            reconcile(inputs, version=version, kubernetes_version=kube, aws=session, cache_dir=cache_dir)
            for inputs in inputs_list
        ]


@cli.command("render")
@_source_options
@click.option("--out", required=True, type=click.Path(path_type=Path), metavar="DIR", help="Directory to write (ours alone).")
@_aws_options
@_reconcile_options
@_version_option
def render_command(stack, manifests, out, embedded_aws, aws_fixture, kubernetes_version, reconcile_, cache_dir, karpenter_version):
    """Write the desired manifests to DIR for Argo CD / Flux: one file per object, byte-stable, atomic.

    Refuses to write (exit 1, DIR untouched) when validation finds errors; with --reconcile or
    --embedded-aws also when the reconciliation predicts a persistent problem (exit 3, untouched,
    on transient AWS trouble). A DIR holding files render did not write is refused (exit 2).
    """
    from karpenter_gitops.output import render
    from karpenter_gitops.output.preview import not_ready

    files = config.read(_plan_inputs(stack, manifests))
    version = resolve_version(karpenter_version, files)
    inputs = config.load_documents(files, version)
    render.check_ours(out)
    secret = next((f for f in inputs.findings if f.rule == schema.SECRET), None)
    if secret:
        raise InputError(
            f"{secret.kind}/{secret.name} {secret.path} is a Pulumi secret, which render cannot decrypt; {out} untouched",
            secret.file,
            hint="render it with `pulumi up` and karpenter-gitops:renderYamlToDirectory",
        )
    report = validate(inputs, version)
    if report.errors:
        print_report(report, version)
        click.echo(f"karpenter-gitops: refusing to render: {report.errors} error finding(s); {out} untouched", err=True)
        sys.exit(EXIT_FINDINGS)
    if reconcile_ or embedded_aws:
        (plan,) = _reconcile_each(
            [inputs], version, embedded_aws, aws_fixture, kubernetes_version, cache_dir, stack_aws_region(files)
        )
        if plan.exit_code != EXIT_OK:
            problems = [f"transient: {t}" for t in plan.transient]
            problems += [f"{f.kind}/{f.name} {f.path}: {f.message}" for f in plan.findings if f.severity is Severity.ERROR]
            problems += [f"EC2NodeClass/{name} not Ready: {why}" for name, why in not_ready(plan)]
            for problem in problems:
                click.echo(f"  {problem}", err=True)
            why = "AWS trouble, nothing decided (retry)" if plan.exit_code == EXIT_TRANSIENT else "persistent problems"
            click.echo(f"karpenter-gitops: refusing to render: {why}; {out} untouched", err=True)
            sys.exit(plan.exit_code)
    rendered = render.manifest_files(inputs)
    try:
        changed = render.write_atomically(out, rendered)
    except OSError as error:  # DIR is as it was: the write is all or nothing
        raise InputError(f"cannot write: {error.strerror or error}", str(out), hint="check --out") from None
    click.echo(f"{'wrote' if changed else 'unchanged:'} {len(rendered)} manifest(s) in {out}")
    sys.exit(EXIT_OK)


@cli.command("preview")
@_source_options
@click.option("--base", "base_ref", required=True, metavar="DIR|GIT-REF", help="Compare with a directory of manifests or a Git ref.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True, help="Output format.")
@click.option("--budget", type=click.IntRange(min=5_000), default=DEFAULT_BUDGET, show_default=True, help="Comment size limit (characters).")
@click.option("--full-report", type=click.Path(path_type=Path), metavar="FILE", help="Where the full report goes when the comment is shortened.")
@click.option("--kubeconfig", type=click.Path(path_type=Path), metavar="FILE", help="Read NodeClaims and Nodes to count drifting nodes.")
@click.option("--pulumi-json", type=click.Path(path_type=Path), metavar="FILE", help="Fold in `pulumi preview --json` output.")
@click.option("--pulumi-events", type=click.Path(path_type=Path), metavar="FILE", help="Fold in a `pulumi preview --event-log` file.")
@_aws_options
@_reconcile_options
@_version_option
def preview_command(
    stack, manifests, base_ref, fmt, budget, full_report, kubeconfig, pulumi_json, pulumi_events,
    embedded_aws, aws_fixture, kubernetes_version, reconcile_, cache_dir, karpenter_version,
):
    """Print a PR comment (or JSON) on what the change does compared with --base.

    Summary first (objects added/changed/removed, predicted Ready, blocking errors, node impact),
    then folded details, within --budget characters. Exit codes as for plan: 0 clean, 1 blocking
    problems, 3 transient AWS trouble, 2 usage or unreadable input.
    """
    import tempfile

    from karpenter_gitops.adapters import git as base_source
    from karpenter_gitops.load import pulumi_events as events
    from karpenter_gitops.output import preview
    from karpenter_gitops.reconcile import impact

    paths = _plan_inputs(stack, manifests)
    files = config.read(paths)
    version = resolve_version(karpenter_version, files)
    head = config.load_documents(files, version)
    base = base_source.load_base(base_ref, paths, version)
    pulumi_sources = []
    if pulumi_json:
        pulumi_sources.append(events.parse_preview_json(config.read_text(pulumi_json), str(pulumi_json)))
    if pulumi_events:
        pulumi_sources.append(events.parse_event_log(config.read_text(pulumi_events), str(pulumi_events)))
    pulumi = events.merge(pulumi_sources)
    fleet, impact_note = None, None
    if kubeconfig:
        from karpenter_gitops.adapters import kube

        try:
            fleet = kube.read_fleet(kubeconfig)
        except kube.ClusterUnavailable as error:
            impact_note = f"cluster not read: {error}"
    base_plan = head_plan = None
    if reconcile_ or embedded_aws:
        base_plan, head_plan = _reconcile_each(
            [base, head], version, embedded_aws, aws_fixture, kubernetes_version, cache_dir, stack_aws_region(files)
        )
    report = preview.Preview.build(
        base_ref,
        base,
        head,
        validate(head, version, policy=True, waivers=policy_waivers(True, None)),
        None if impact_note else impact.forecast(base, head, base_plan, head_plan, fleet),
        head_plan=head_plan,
        base_plan=base_plan,
        impact_note=impact_note,
        pulumi=pulumi,
        notes=head.notes,
    )
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        target = full_report or Path(tempfile.gettempdir()) / "karpenter-preview-full.md"
        comment, shortened = preview.markdown(report, budget, str(target))
        if shortened:  # written before the comment is printed: a comment must not point at a missing report
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(preview.markdown(report, None)[0], encoding="utf-8")
            except OSError as error:
                raise InputError(f"cannot write the full report: {error.strerror or error}", str(target)) from None
        click.echo(comment, nl=False)
    sys.exit(report.exit_code)


@cli.command("rules")
@click.argument("rule_id", required=False)
@_format_option
def rules_command(rule_id, fmt) -> None:
    """List the rule catalogue, or explain one rule (its fix and examples) with RULE_ID."""
    from karpenter_gitops.rules import registry

    def describe(rule) -> dict:
        since = versions.show(rule.since) if rule.since else None
        until = versions.show(rule.until) if rule.until else None
        return {
            "id": rule.id,
            "severity": rule.severity.value,
            "kinds": sorted(rule.kinds),
            "origin": rule.origin,
            "policy": rule.policy,
            "since": since,
            "until": until,
            "doc": rule.doc,
            "fix": rule.fix,
            # Transition rules judge an (old, new) pair; their examples live with their checks.
            "good": list(rule.good or getattr(TRANSITIONS.get(rule.id), "good", ())),
            "bad": list(rule.bad or getattr(TRANSITIONS.get(rule.id), "bad", ())),
        }

    from karpenter_gitops.rules.transitions import TRANSITIONS

    if rule_id:
        if rule_id not in registry.RULES:
            close = difflib.get_close_matches(rule_id, list(registry.RULES), n=1)
            raise InputError(f"no rule {rule_id!r}", hint=f"did you mean {close[0]!r}?" if close else "run `karpenter-gitops rules`")
        chosen = [registry.RULES[rule_id]]
    else:
        chosen = sorted(registry.RULES.values(), key=lambda r: r.id)
    if fmt == "json":
        click.echo(json.dumps([describe(r) for r in chosen], indent=2))
        return
    for rule in chosen:
        info = describe(rule)
        since, until = info["since"], info["until"]
        scope = (
            f"{since} until {until}" if since and until
            else f"{since}+" if since
            else f"before {until}" if until
            else "all releases"
        )
        label = click.style(f"{rule.severity.value:<7}", fg=_COLOURS[rule.severity])
        click.echo(f"{click.style(rule.id, bold=True)}  {label} {'/'.join(info['kinds'])}  {rule.origin}{' policy' if rule.policy else ''}  [{scope}]")
        click.echo(f"    {rule.doc}")
        if rule_id:
            click.echo(f"    fix: {rule.fix}")
            for word in ("good", "bad"):
                examples = info[word]
                for example in examples:
                    click.echo(f"    {word}: {json.dumps(example)}")


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
