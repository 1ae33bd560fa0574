"""A validation report for people (grouped text) and for GitHub Actions (workflow-command annotations); SARIF
and JUnit XML through :mod:`.sarif` and :mod:`.junit`.

File names, object names and messages quote the user's files: the text shows their control
characters escaped (:func:`~karpenter_gitops.core.text.visible`), never raw on the terminal.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping
from itertools import groupby

import click

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.text import visible
from karpenter_gitops.judge.report import Report, Tally

COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
_GITHUB_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
CI_REPORTS = ("sarif", "junit")  # the formats printed as one document for a CI system: see print_ci_report

#: Reports by stack (``None``: a run that is no fleet), each with the release it was judged against.
Judged = Mapping[str | None, tuple[versions.Release, Report]]


def summary(report: Report, release: versions.Release) -> str:
    skipped = f"; {report.skipped} file(s) skipped (not Kubernetes YAML)" if report.skipped else ""
    return (
        f"{report.objects} object(s) checked against Karpenter {versions.show(release)}: "
        f"{report.errors} error(s), {report.warnings} warning(s){skipped}"
    )


def print_report(report: Report, release: versions.Release, fmt: str, *, show_info: bool = False, quiet: bool = False) -> None:
    """A report in the format asked for: text (see :func:`print_text` for ``show_info`` and ``quiet``), json, jsonl,
    github, sarif or junit."""
    if fmt in CI_REPORTS:
        print_ci_report(fmt, {None: (release, report)}, show_info=show_info)
    elif fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    elif fmt == "jsonl":
        _print_jsonl(report)
    elif fmt == "github":
        print_github(report, release)
    else:
        print_text(report, release, show_info=show_info, quiet=quiet)


def print_note(text: str) -> None:
    """A line about the run itself (a release newer than the project knows, the verdict cache), on stderr."""
    click.echo(f"karpenter-gitops: {text}", err=True)


def print_text(report: Report, release: versions.Release, *, show_info: bool = False, quiet: bool = False) -> None:
    """Findings grouped by object, each with its rule, layer, line and fix, then the active waivers and the summary.

    ``info`` findings (house-style notes, a score on a small repository) would bury the warnings, so they
    are listed only with ``show_info``; ``quiet`` leaves the findings and the summary line: no notes, fixes
    or waivers."""
    if not quiet:
        for note in report.notes:
            click.echo(click.style(f"note: {visible(note)}", dim=True), err=True)
    shown = [finding for finding in report.findings if show_info or finding.severity is not Severity.INFO]
    for (kind, name, file), group in groupby(shown, key=lambda f: (f.kind, f.name, f.file)):
        click.echo(click.style(visible(f"{kind}/{name}"), bold=True) + (f"  ({visible(file)})" if file else ""))
        for finding in group:
            if finding in report.waived:
                label = click.style(f"{'waived':<7}", dim=True)
            else:
                label = click.style(f"{finding.severity.value:<7}", fg=COLOURS[finding.severity])
            where = click.style(f"  {visible(finding.file)}:{finding.line}", dim=True) if finding.line else ""
            layer = click.style(f" ({finding.layer})", dim=True)  # who refuses it: api-server, karpenter or our rules
            click.echo(f"  {label} {visible(finding.path)}: {visible(finding.message)}  [{finding.rule}]{layer}{where}")
            if finding.hint and not quiet:  # multi-line hints (TOML, MIME) stay indented
                hint = ("\n" + " " * 15).join(visible(line) for line in finding.hint.split("\n"))
                click.echo(click.style(f"          fix: {hint}", dim=True))
    if report.waiving and not quiet:
        click.echo(click.style(f"active waivers: {len(report.waivers)}", bold=True))
        for waiver in report.waivers:
            kind = f"{waiver.kind}/" if waiver.kind else ""
            click.echo(visible(f"  {waiver.rule} on {kind}{waiver.object} {waiver.term}: {waiver.reason}"))
    colour = "red" if report.errors else ("yellow" if report.warnings else "green")
    click.echo(click.style(summary(report, release), fg=colour, bold=True))


def print_github(report: Report, release: versions.Release) -> None:
    """One GitHub Actions workflow command per finding, so each shows as an annotation on its line."""
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for finding in report.findings:
        waiver = report.waived.get(finding)
        command = "notice" if waiver else _GITHUB_COMMANDS[finding.severity]
        # the title names who refuses it, as the text format does: the API server, Karpenter or this project
        properties = {"file": finding.file, "line": finding.line, "title": f"{finding.rule} ({finding.layer})"}
        listed = ",".join(f"{key}={github_property(str(value))}" for key, value in properties.items() if value)
        message = f"{finding.kind}/{finding.name} {finding.path}: {finding.message}"
        if waiver:
            message += f" (waived {waiver.term}: {waiver.reason})"
        if finding.hint:
            message += f"\nfix: {finding.hint}"
        click.echo(f"::{command} {listed}::{github_data(message)}")
    click.echo(summary(report, release))


def github_data(text: str) -> str:
    """Escape a workflow command's message as GitHub's toolkit does (``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Escape a workflow command's property value (``escapeProperty``): also ``:`` and ``,``."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def print_ci_report(fmt: str, judged: Judged, *, show_info: bool) -> None:
    """The reports in a format a CI system reads whole: a SARIF log or a JUnit XML test report (their modules
    imported only for them: SARIF's reads every rule's description)."""
    if fmt == "sarif":
        from karpenter_gitops.output.sarif import print_sarif

        print_sarif(judged, show_info=show_info)
    else:
        from karpenter_gitops.output.junit import print_junit

        print_junit(judged, show_info=show_info)


def print_fleet(judged: Iterable[tuple[str, versions.Release, Report]], fmt: str, *, show_info: bool = False) -> None:
    """Each stack's report under its name as soon as the stack is judged, then the fleet's summary line; in
    JSON, one object holding every stack's report and the fleet's totals, printed whole at the end (a stack
    that cannot be read leaves no half document), each stack's kept as its text meanwhile; in SARIF and JUnit,
    one log or test report with every stack's (documents built whole: those reports are held to the end).
    Of the reports themselves only their counts are kept, so a fleet's memory grows with what it prints, not
    with its models and findings."""
    if fmt in CI_REPORTS:
        print_ci_report(fmt, {stack: (release, report) for stack, release, report in judged}, show_info=show_info)
        return
    totals = {"errors": 0, "warnings": 0, "objects": 0}
    failing: list[str] = []
    bodies: list[str] = []  # JSON: each stack's entry
    stacks = 0
    for stack, release, report in judged:
        stacks += 1
        if fmt == "json":
            bodies.append(f"    {json.dumps(stack)}: {json.dumps(report.to_json(), indent=2)}".replace("\n", "\n    "))
        else:
            click.echo(click.style(f"== stack {stack}", bold=True))
            (print_github if fmt == "github" else print_text)(report, release)
        for key in totals:
            totals[key] += getattr(report, key)
        if report.errors:
            failing.append(stack)
    if fmt == "json":
        summary = json.dumps({"stacks": stacks, **totals}, indent=2).replace("\n", "\n  ")
        click.echo('{\n  "stacks": {\n' + ",\n".join(bodies) + f'\n  }},\n  "summary": {summary}\n}}')
        return
    _print_fleet_summary(stacks, totals, failing)


def _print_fleet_summary(stacks: int, totals: Mapping[str, int], failing: list[str]) -> None:
    """One line for a fleet: stacks, objects, errors and warnings, and which stacks have errors."""
    errors, warnings = totals["errors"], totals["warnings"]
    line = f"fleet: {stacks} stack(s), {totals['objects']} object(s): {errors} error(s), {warnings} warning(s)"
    if failing:
        line += f"; stacks with errors: {', '.join(failing)}"
    click.echo(click.style(line, fg="red" if errors else ("yellow" if warnings else "green"), bold=True))


def _print_jsonl(report: Report) -> None:
    """JSON Lines: each finding on a line of its own (as in --format json), then the summary (and waivers) last."""
    _print_jsonl_findings(report)
    _print_jsonl_summary(report.tally())


def print_jsonl_parts(
    reports: Iterable[Report], aside: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext
) -> Tally:
    """A run judged part by part: each part's findings as soon as it is judged, the summary of all of them last;
    each printed inside ``aside()`` (a progress line on the terminal steps aside for them)."""
    tally = Tally()
    for report in reports:
        with aside():
            _print_jsonl_findings(report)
        tally += report.tally()
    with aside():
        _print_jsonl_summary(tally)
    return tally


def _print_jsonl_findings(report: Report) -> None:
    for finding in report.findings:
        click.echo(json.dumps(report.finding_json(finding)))


def _print_jsonl_summary(tally: Tally) -> None:
    click.echo(json.dumps(tally.to_json()))
