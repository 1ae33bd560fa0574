"""``karpenter-gitops plan``: the reconciliation against AWS, before anything reaches the cluster."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import click

from karpenter_gitops.adapters.aws.target import aws_target
from karpenter_gitops.app.fleet import SharedTargets, run_fleet
from karpenter_gitops.app.plan import forecaster, planner, read_workloads, write_picture
from karpenter_gitops.cli import options
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.load.stacks import stack_file
from karpenter_gitops.output.plan_text import print_plan
from karpenter_gitops.output.terminal import Terminal, waiting
from karpenter_gitops.output.workload_forecast_text import print_forecast


@click.command("plan")
@options.manifest_paths
@options.stacks("Plan stacks/Pulumi.NAME.yaml; several (or --all-stacks) plan each stack as its own cluster.")
@options.aws
@options.cache_dir
@options.karpenter
@options.allow_empty
@options.output_format("text", "json")
@click.option(
    "--workloads",
    "workload_paths",
    metavar="PATH",
    multiple=True,
    help="Forecast what Karpenter would launch for the workloads in these files or directories (- for stdin), and its cost "
    "(default: the stack's karpenter-gitops:workloads).",
)
@click.option(
    "--picture",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.svg",
    help="With --workloads: write an SVG of each NodePool's nodes and the pods packed on them.",
)
@options.repository_config
def plan_command(
    paths,
    manifests,
    stacks,
    all_stacks,
    embedded_aws,
    aws_fixture,
    kubernetes,
    cache_dir,
    release,
    allow_empty,
    fmt,
    workload_paths,
    picture,
) -> Outcome:
    """Resolve what Karpenter will resolve from AWS and predict its status, before anything is applied.

    PATHS (or --manifests) are manifest files, directories or - for standard input, as for validate.
    With --workloads, also what Karpenter would launch for those pods: NodeClaims per NodePool, the
    pods on each, $/hour and $/month, and the pods that cannot be scheduled and why.

    Exit 0: every EC2NodeClass predicted Ready and no error finding; 1: persistent problems;
    3: transient AWS trouble (nothing decided, retry); 2: usage or unreadable input.
    """
    options.check_fixture(embedded_aws, aws_fixture)
    manifests = (*paths, *manifests)
    if options.is_fleet(stacks, all_stacks):
        if workload_paths:
            raise click.UsageError("--workloads forecasts one cluster: give one --stack (or --manifests)")
        fleet = options.fleet_stacks(manifests, stacks, all_stacks)
        return _fleet(fleet, embedded_aws, aws_fixture, kubernetes, cache_dir, release, fmt)
    sources = options.sources(options.stack_or_manifests(stacks[0] if stacks else None, manifests), release)
    options.require_objects(sources, allow_empty)  # before AWS is asked anything
    workload_paths = workload_paths or sources.workload_paths  # the stack's karpenter-gitops:workloads, unless given
    if picture and not workload_paths:
        raise click.UsageError("--picture draws the forecast: give --workloads too (or name them in the stack)")
    workloads = None
    if workload_paths:  # read before AWS is: unreadable workloads end the run with nothing asked or written
        kube = kubernetes or sources.inputs.cluster.kubernetes
        workloads = read_workloads(workload_paths, kube, stdin=lambda: sys.stdin.read())
    with waiting("asking AWS…") as progress, aws_target(embedded_aws, aws_fixture, sources.aws_config) as target:
        progress("planning…")
        plan = planner(target, sources.release, kubernetes=kubernetes, cache_dir=cache_dir, progress=progress)(sources.inputs)
        forecast = None
        if workloads is not None:
            progress("forecasting…")
            forecast = forecaster(target, sources.release, workloads, workload_paths, cache_dir=cache_dir)(sources.inputs, plan)
    if picture and forecast:  # --picture was refused above unless there are workloads to forecast
        write_picture(forecast, picture)
    if fmt == "json":
        click.echo(json.dumps({**plan.to_json(), **({"forecast": forecast.to_json()} if forecast else {})}, indent=2))
    else:
        console = Terminal.for_stdout()
        print_plan(plan, console)
        if forecast:
            print_forecast(forecast, console)
    return plan.exit_code


def _fleet(stacks, embedded_aws, aws_fixture, kubernetes, cache_dir, release, fmt) -> Outcome:
    """Each stack planned as its own cluster; stacks of one region share a session, so identical AWS
    queries are asked once per run; one report grouped by stack; the worst exit code. Every stack
    file is read before AWS is, so unreadable input ends the run with nothing printed. Each stack's
    plan is let go once printed; in JSON it is written to a spool file, printed whole at the end (AWS down
    half-way prints no half document): a fleet's plans held in memory for the end took memory in proportion
    to the fleet (976 MiB at 200 stacks)."""
    sources = {stack: options.sources([stack_file(stack)], release) for stack in stacks}
    console = Terminal.for_stdout()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:  # JSON: each stack's plan, as it is made
        with SharedTargets(embedded_aws, aws_fixture) as targets, waiting("planning…") as progress:

            def one(stack: str):
                read = sources[stack]
                target = targets.for_stack(read.aws_config)
                plan = planner(target, read.release, kubernetes=kubernetes, cache_dir=cache_dir)(read.inputs)
                if fmt == "json":
                    spool.write(f"{'' if stack == stacks[0] else ','}\n    {json.dumps(stack)}: {json.dumps(plan.to_json())}")
                else:
                    console.rule((f"stack {stack}", "bold"), align="center")
                    print_plan(plan, console)
                return None, plan.exit_code

            fleet = run_fleet(stacks, one, progress=lambda stack: progress(f"planning {stack}…"))
            calls = targets.call_counts()
        if fmt == "json":
            spool.seek(0)
            click.echo('{\n  "stacks": {', nl=False)
            while chunk := spool.read(1 << 20):
                click.echo(chunk, nl=False)
            summary = {"stacks": len(stacks), "exitCodes": fleet.exit_codes, "awsCalls": calls}
            click.echo(f'\n  }},\n  "summary": {json.dumps(summary)}\n}}')
            return fleet.exit_code
    failing = [stack for stack, code in fleet.exit_codes.items() if code]
    line = f"fleet: {len(stacks)} stack(s), {sum(calls.values())} AWS call(s)"
    console.print(line + (f"; stacks not ready: {', '.join(failing)}" if failing else "; every stack ready"))
    return fleet.exit_code
    if False:
        pass
    else:
        failing = [stack for stack, code in fleet.exit_codes.items() if code]
        line = f"fleet: {len(stacks)} stack(s), {sum(calls.values())} AWS call(s)"
        console.print(line + (f"; stacks not ready: {', '.join(failing)}" if failing else "; every stack ready"))
    return fleet.exit_code
