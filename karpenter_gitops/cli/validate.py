"""``karpenter-gitops validate``: offline checks of manifests and stack files."""

from __future__ import annotations

import json
import sys

import click

from karpenter_gitops.cli import options
from karpenter_gitops.cli.group import EXIT_FINDINGS, EXIT_OK, cli
from karpenter_gitops.core.inputs import DEFAULT_WAIVERS


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
@click.option(
    "--context",
    "context_paths",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="The rest of the repository (e.g. --context .): its EC2NodeClasses resolve NodePool references; "
    "nothing there is judged. Repeatable.",
)
@click.option("--policy", is_flag=True, help="Also run the hygiene policies and apply waivers.")
@click.option(
    "--waivers",
    "waiver_file",
    type=click.Path(),
    metavar="FILE",
    help=f"Waiver file for --policy (default: {DEFAULT_WAIVERS} when it exists).",
)
@options.karpenter_version
@options.output_format(
    "text", "json", "github", help="Output format; github prints GitHub Actions annotations (::error file=…,line=…::…)."
)
def validate_command(paths, stack, crd_paths, context_paths, policy, waiver_file, karpenter_version, fmt) -> None:
    """Check manifests and stack config offline with Karpenter's rules and stricter ones.

    PATHS are manifest files, directories of manifests, or Pulumi stack files. With --policy the
    hygiene policies run too, waivers apply (waived findings are listed but do not fail the run)
    and an expired waiver is an error.
    """
    from karpenter_gitops.app.sources import read_sources
    from karpenter_gitops.app.validate import crds_at, validate_sources, waivers_for
    from karpenter_gitops.output.report import print_github, print_text

    if waiver_file and not policy:
        raise click.UsageError("--waivers only applies with --policy")
    crds = crds_at(crd_paths)
    sources = read_sources(options.input_paths(paths, stack), karpenter_version)
    report = validate_sources(
        sources, policy=policy, waivers=waivers_for(policy, waiver_file), crds=crds, context=context_paths
    )
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    elif fmt == "github":
        print_github(report, sources.version)
    else:
        print_text(report, sources.version)
    sys.exit(EXIT_FINDINGS if report.errors else EXIT_OK)
