"""What every step of one reconciliation may read, and the two things its results are made of.

:class:`Run` is the steps' shared input: the objects, the Karpenter release, the cluster's Kubernetes
version, the AWS session and the findings the judge made on the objects before any step ran. A step's
observations (what only AWS reveals, under the ``live/`` rules) and its notes on transient trouble
travel in its result; :func:`observation` and :func:`unverified` make them the same way for every step.

Layer: the bottom of reconcile/; imports adapters and core.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Observation, Violation
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.model import EC2NodeClass, NodeOverlay, NodePool
from karpenter_gitops.karpenter.status.nodeclass_conditions import Resolution, StepOutcome


@dataclass(frozen=True)
class Run:
    inputs: Inputs
    release: versions.Release  # the Karpenter release
    kubernetes: versions.Kubernetes | None  # the cluster's, for alias AMI selectors
    aws: AwsSession
    cache_dir: Path | None  # where the instance-type catalogue is cached
    findings: tuple[Finding, ...]  # the judge's on the objects: the overlay step reads which ones Karpenter never sees


def observation(
    obj: EC2NodeClass | NodePool | NodeOverlay, rule: str, path: str, message: str, hint: str | None = None
) -> Observation:
    return Observation(rule, obj.kind, obj.name, Violation(path, message, hint), obj.source)


def unverified(node_class: EC2NodeClass, what: str, outcome: StepOutcome) -> tuple[str, ...]:
    """The transient note of one of a class's look-ups, when AWS could not answer it."""
    if outcome.resolution is not Resolution.TRANSIENT_ERROR:
        return ()
    return (f"EC2NodeClass {node_class.name}: {what} unverified: {outcome.message}",)
