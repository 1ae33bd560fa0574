"""The ``karpenter-gitops`` command line.

Exit codes are a contract other tools depend on:
0 = no error findings; 1 = at least one error finding (or a persistent problem);
2 = usage error or unreadable input; 3 = transient failure, nothing decided, retry.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

import click

from karpenter_gitops import config, versions
from karpenter_gitops.errors import InputError
from karpenter_gitops.findings import Severity
from karpenter_gitops.validate import Report, validate

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_TRANSIENT = 0, 1, 2, 3

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
            label = click.style(f"{finding.severity.value:<7}", fg=_COLOURS[finding.severity])
            click.echo(f"  {label} {finding.path}: {finding.message}  [{finding.rule}]")
            if finding.hint:
                click.echo(click.style(f"          fix: {finding.hint}", dim=True))
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


@cli.command("validate")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--stack", metavar="NAME", help="Also read stacks/Pulumi.NAME.yaml.")
@_version_option
@_format_option
def validate_command(paths, stack, karpenter_version, fmt) -> None:
    """Check manifests and stack config offline with Karpenter's rules and stricter ones.

    PATHS are manifest files, directories of manifests, or Pulumi stack files.
    """
    files = config.read(input_paths(paths, stack))
    version = resolve_version(karpenter_version, files)
    report = validate(config.load_documents(files, version), version)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_report(report, version)
    sys.exit(EXIT_FINDINGS if report.errors else EXIT_OK)


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
