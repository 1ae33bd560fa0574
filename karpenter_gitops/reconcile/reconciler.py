"""The one reconcile entry point: what Karpenter will resolve, launch and report, before it does.

Used by the CLI (``plan``), the Pulumi dynamic provider and the PR preview alike. It judges the
objects, runs the declared steps (:mod:`karpenter_gitops.reconcile.steps`) against AWS, hands
what they observed to the judge once, and puts their results together as a :class:`Plan`.

Layer: the top of reconcile/; imports steps (and the results it puts together), context, judge, adapters and core.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.judge import Judge, once
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.reconcile.conditions import ClassStatus
from karpenter_gitops.reconcile.context import Run
from karpenter_gitops.reconcile.mapping import PoolMapping
from karpenter_gitops.reconcile.overlays import Overlays
from karpenter_gitops.reconcile.steps import STEPS

Progress = Callable[[str], None]


def uses_alias(inputs: Inputs) -> bool:
    return any(term.alias for nc in inputs.node_classes for term in nc.spec.ami_selector_terms or ())


def reconcile(
    inputs: Inputs,
    *,
    release: versions.Release = versions.DEFAULT,
    kubernetes: versions.Kubernetes | None = None,
    aws: AwsSession | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Plan:
    """Resolve every object of ``inputs`` against AWS and predict Karpenter's view of it."""
    unrendered = next((obj for obj in inputs.objects if obj.unrendered), None)
    if unrendered is not None:  # its placeholder would be looked up in AWS as if it were a name
        raise InputError(
            f"not rendered: {unrendered.kind}/{unrendered.name} {unrendered.unrendered[0]} holds a template placeholder, "
            "which plan would look up in AWS",
            unrendered.source.file,
            hint=f"render it with envsubst/terraform/helm first and plan the result, e.g. envsubst < {unrendered.source.file} | karpenter-gitops plan -",
        )
    kubernetes = kubernetes or inputs.cluster.kubernetes
    if kubernetes is None and uses_alias(inputs):
        raise InputError(
            "alias AMI selectors need the cluster's Kubernetes version",
            hint="set karpenter-gitops:cluster.kubernetesVersion or pass --kubernetes-version",
        )
    aws = aws or AwsSession()
    judge = Judge(release, inputs.policy)
    findings = judge.objects(inputs)
    run = Run(inputs, release, kubernetes, aws, cache_dir, tuple(findings))
    results = STEPS.run(run, inputs.node_classes, inputs.node_pools, progress or (lambda _message: None))

    overlays = results.once("overlays", Overlays)
    pools = {
        name: dataclasses.replace(m.plan, overlays=overlays.pools.get(name))
        for name, m in results.each("mapping", PoolMapping).items()
    }
    findings = once(findings + judge.findings(results.observed))
    findings.sort(key=lambda f: f.sort_key)
    return Plan(
        node_classes={name: status.plan for name, status in results.each("conditions", ClassStatus).items()},
        node_pools=pools,
        findings=tuple(findings),
        aws_calls=aws.call_counts(),
        transient=tuple(dict.fromkeys(results.transient)),
        node_overlays=overlays.plan,
    )
