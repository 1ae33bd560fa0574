"""``karpenter-gitops verify``: after ``pulumi up`` or a sync, did the cluster do what the pull request said?"""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click

from karpenter_gitops.adapters import kube
from karpenter_gitops.adapters.aws.error_kinds import TransientAWSError
from karpenter_gitops.adapters.aws.target import aws_target
from karpenter_gitops.app.plan import forecaster, planner, read_workloads
from karpenter_gitops.app.verify import objects_in_pulumi_state, verify_sources
from karpenter_gitops.cli import options
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.text import visible
from karpenter_gitops.output import verification_text as shown
from karpenter_gitops.output.terminal import waiting


@click.command("verify")
@click.option("--stack", metavar="NAME", help="Verify what stacks/Pulumi.NAME.yaml renders.")
@click.option("--manifests", "manifests", metavar="PATH", multiple=True, help="Verify manifest files or directories.")
@click.option(
    "--kubeconfig",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="The cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the pod's service account in a cluster).",
)
@click.option("--context", metavar="NAME", help="The kubeconfig context (default: its current one).")
@click.option(
    "--wait",
    "wait_seconds",
    type=click.FloatRange(min=0),
    default=60,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for Karpenter to reconcile an EC2NodeClass before calling it unreconciled.",
)
@click.option(
    "--predict/--no-predict",
    default=True,
    show_default=True,
    help="Compare conditions and nodes with plan's prediction (reads AWS); --no-predict checks drift only.",
)
@click.option(
    "--workloads",
    "workload_paths",
    metavar="PATH",
    multiple=True,
    help="List the NodeClaims Karpenter launched beside the forecast for these workloads (files, directories, - for "
    "stdin; default: the stack's karpenter-gitops:workloads).",
)
@click.option(
    "--write-cluster-state",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also save the NodeClaims, Nodes and Pods read, as `kubectl get nodeclaims,nodes,pods -A -o yaml` would: a "
    "later job without cluster credentials passes it to `preview --cluster-state`.",
)
@click.option(
    "--pulumi-state",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="The stack's `pulumi stack export`: objects its program declares in code are known, not listed as 'not in Git'.",
)
@options.aws
@options.cache_dir
@options.karpenter
@options.output_format("text", "json", "comment")
@options.repository_config
def verify_command(
    stack,
    manifests,
    kubeconfig,
    context,
    wait_seconds,
    predict,
    workload_paths,
    write_cluster_state,
    pulumi_state,
    embedded_aws,
    aws_fixture,
    kubernetes,
    cache_dir,
    release,
    fmt,
) -> Outcome:
    """Compare the live cluster with Git and with plan's prediction. Read-only: get and list, nothing else.

    Reports live specs that differ from what Git renders (fields the API server defaulted are not
    drift), EC2NodeClass conditions that differ from the prediction, and NodeClaims whose instance
    type or image the prediction does not map. Exit 0: as predicted; 1: the cluster differs;
    2: usage, unreadable input, an unusable kubeconfig or RBAC that forbids a read; 3: the cluster
    or AWS could not be asked, or Karpenter had not reconciled by --wait (retry). With --workloads,
    the NodeClaims launched per NodePool are listed beside the forecast for them: information, not a finding.
    """
    options.check_fixture(embedded_aws, aws_fixture)
    if workload_paths and not predict:
        raise click.UsageError(
            "--workloads sets the launched NodeClaims beside the forecast, which needs the prediction: drop --no-predict"
        )
    sources = options.sources(options.stack_or_manifests(stack, manifests), release)
    in_pulumi_state = objects_in_pulumi_state(pulumi_state) if pulumi_state else frozenset()
    workload_paths = workload_paths or (sources.workload_paths if predict else ())  # the stack's own, unless given
    # read before the cluster or AWS is: unreadable workloads end the run with nothing asked
    workloads = (
        read_workloads(workload_paths, kubernetes or sources.inputs.cluster.kubernetes, stdin=lambda: sys.stdin.read())
        if workload_paths
        else None
    )
    try:
        with contextlib.ExitStack() as scope:
            progress = scope.enter_context(waiting("verifying…"))
            plan = forecast = None
            if predict:
                target = scope.enter_context(aws_target(embedded_aws, aws_fixture, sources.aws_config))
                plan = planner(target, sources.release, kubernetes=kubernetes, cache_dir=cache_dir)
                if workloads is not None:
                    forecast = forecaster(target, sources.release, workloads, workload_paths, cache_dir=cache_dir)
            verification = verify_sources(
                sources,
                kubeconfig,
                context,
                plan=plan,
                wait_seconds=wait_seconds,
                progress=progress,
                forecast=forecast,
                write_cluster_state=write_cluster_state,
                in_pulumi_state=in_pulumi_state,
            )
    except (kube.ClusterUnavailable, TransientAWSError) as error:
        click.echo(f"karpenter-gitops: cannot verify now: {visible(error)}", err=True)
        return Outcome.TRANSIENT
    if fmt == "json":
        click.echo(json.dumps(verification.to_json(), indent=2))
    elif fmt == "comment":
        click.echo(shown.comment(verification), nl=False)
    else:
        click.echo(shown.text(verification), nl=False)
    return verification.exit_code
