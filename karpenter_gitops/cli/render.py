"""``karpenter-gitops render``: the desired manifests for Argo CD / Flux, written only when sound."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from karpenter_gitops.cli import options
from karpenter_gitops.cli.group import cli


@cli.command("render")
@options.sources
@click.option(
    "--out", required=True, metavar="DIR|-",
    help="Directory to write (ours alone), or - for one YAML stream on standard output (an Argo CD plugin's generate).",
)
@options.aws
@options.reconcile
@options.karpenter_version
def render_command(stack, manifests, out, embedded_aws, aws_fixture, kubernetes_version, reconcile_, cache_dir, karpenter_version):
    """Write the desired manifests to DIR for Argo CD / Flux: one file per object, byte-stable, atomic.

    Refuses to write (exit 1, DIR untouched) when validation finds errors; with --reconcile or
    --embedded-aws also when the reconciliation predicts a persistent problem (exit 3, untouched,
    on transient AWS trouble). A DIR holding files render did not write is refused (exit 2).
    """
    from karpenter_gitops.adapters.aws.target import aws_target
    from karpenter_gitops.app.plan import planner
    from karpenter_gitops.app.render import render_sources
    from karpenter_gitops.app.sources import read_sources
    from karpenter_gitops.output.report import print_text

    sources = read_sources(options.stack_or_manifests(stack, manifests), karpenter_version)

    def plan(inputs):  # AWS is read only once the offline checks pass
        options.check_fixture(embedded_aws, aws_fixture)
        with aws_target(embedded_aws, aws_fixture, sources.aws_region) as target:
            return planner(target, sources.version, kubernetes_version=kubernetes_version, cache_dir=cache_dir)(inputs)

    stream = out == "-"
    rendered = render_sources(sources, None if stream else Path(out), plan if reconcile_ or embedded_aws else None)
    if rendered.report is not None:
        with contextlib.redirect_stdout(sys.stderr) if stream else contextlib.nullcontext():
            print_text(rendered.report, sources.version)
    if stream and not rendered.refusal:
        click.echo(rendered.stream, nl=False)  # the manifests and nothing else: Argo CD parses all of stdout
        sys.exit(rendered.exit_code)
    for problem in rendered.problems:
        click.echo(f"  {problem}", err=True)
    if rendered.refusal:
        click.echo(f"karpenter-gitops: refusing to render: {rendered.refusal}; {'nothing printed' if stream else f'{out} untouched'}", err=True)
        sys.exit(rendered.exit_code)
    click.echo(f"{'wrote' if rendered.changed else 'unchanged:'} {rendered.files} manifest(s) in {out}")
    sys.exit(rendered.exit_code)
