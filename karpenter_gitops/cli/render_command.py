"""``karpenter-gitops render``: the desired manifests for Argo CD / Flux, written only when sound."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import click

from karpenter_gitops.app.fleet import SharedTargets, run_fleet
from karpenter_gitops.app.plan import planner
from karpenter_gitops.app.render import render_sources
from karpenter_gitops.cli import options
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.text import visible
from karpenter_gitops.load.stacks import stack_file
from karpenter_gitops.output.report_text import print_text


@click.command("render")
@options.manifest_paths
@options.stacks("Render stacks/Pulumi.NAME.yaml; several (or --all-stacks) render each into DIR/NAME.")
@click.option(
    "--out",
    required=True,
    metavar="DIR|-",
    help="Directory to write (ours alone), or - for one YAML stream on standard output (an Argo CD plugin's generate).",
)
@options.aws
@options.reconcile
@options.karpenter
@options.allow_empty
@options.show_info
@options.repository_config
def render_command(
    paths,
    manifests,
    stacks,
    all_stacks,
    out,
    embedded_aws,
    aws_fixture,
    kubernetes,
    reconcile_,
    cache_dir,
    release,
    allow_empty,
    show_info,
) -> Outcome:
    """Write the desired manifests to DIR for Argo CD / Flux: one file per object, byte-stable, atomic.

    PATHS (or --manifests) are manifest files, directories or - for standard input, as for validate;
    paths holding no Karpenter object are refused (exit 2) unless --allow-empty.

    Refuses to write (exit 1, DIR untouched) when validation finds errors; with --reconcile or
    --embedded-aws also when the reconciliation predicts a persistent problem (exit 3, untouched,
    on transient AWS trouble). A DIR holding files render did not write is refused (exit 2).
    A fleet (several --stack, or --all-stacks) renders each stack into DIR/NAME; the exit code is the worst.
    """
    with SharedTargets(embedded_aws, aws_fixture) as targets:
        render = _renderer(targets, kubernetes, reconcile_, cache_dir, release, allow_empty, show_info)
        return _run(render, stacks, all_stacks, (*paths, *manifests), out)


def _run(render, stacks, all_stacks, manifests, out: str) -> Outcome:
    if options.is_fleet(stacks, all_stacks):
        if out == "-":
            raise click.UsageError("a fleet renders into directories: give --out DIR (each stack goes to DIR/NAME)")
        fleet = run_fleet(
            options.fleet_stacks(manifests, stacks, all_stacks),
            lambda stack: (None, render([stack_file(stack)], f"{out}/{stack}")),
        )
        failing = [stack for stack, code in fleet.exit_codes.items() if code]
        click.echo(
            f"fleet: {len(fleet.exit_codes)} stack(s) rendered into {out}"
            + (f"; refused: {', '.join(failing)}" if failing else "")
        )
        return fleet.exit_code
    return render(options.stack_or_manifests(stacks[0] if stacks else None, manifests), out)


def _renderer(targets, kubernetes, reconcile_, cache_dir, release, allow_empty: bool, show_info: bool):
    """Render one set of paths to a directory (or ``-``); the exit code. AWS, when read, is ``targets``'."""

    def render(paths, out: str) -> Outcome:
        sources = options.sources(paths, release)
        options.require_objects(sources, allow_empty)

        def plan(inputs):  # AWS is read only once the offline checks pass
            options.check_fixture(targets.embedded, targets.fixture)
            target = targets.for_stack(sources.aws_config)
            return planner(target, sources.release, kubernetes=kubernetes, cache_dir=cache_dir)(inputs)

        stream = out == "-"
        rendered = render_sources(sources, None if stream else Path(out), plan if reconcile_ or targets.embedded else None)
        if rendered.report is not None:
            with contextlib.redirect_stdout(sys.stderr) if stream else contextlib.nullcontext():
                print_text(rendered.report, sources.release, show_info=show_info)
        if stream and not rendered.refusal:
            click.echo(rendered.stream, nl=False)  # the manifests and nothing else: Argo CD parses all of stdout
            return rendered.exit_code
        for problem in rendered.problems:  # they quote AWS's answers: shown visibly, as data
            click.echo(f"  {visible(problem)}", err=True)
        if rendered.refusal:
            untouched = "nothing printed" if stream else f"{out} untouched"
            click.echo(f"karpenter-gitops: refusing to render: {visible(rendered.refusal)}; {visible(untouched)}", err=True)
            return rendered.exit_code
        click.echo(f"{'wrote' if rendered.changed else 'unchanged:'} {rendered.files} manifest(s) in {out}")
        return rendered.exit_code

    return render
