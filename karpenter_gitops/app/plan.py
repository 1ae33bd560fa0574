"""The ``plan`` use case: resolve what Karpenter will resolve from AWS and predict what it will report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from karpenter_gitops.adapters.aws.target import Target
from karpenter_gitops.core import versions
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.plan import Plan
from karpenter_gitops.reconcile import Progress, reconcile


def planner(
    target: Target,
    release: versions.Release,
    *,
    kubernetes: str | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Callable[[Inputs], Plan]:
    """Plans inputs against one AWS target. The cluster's Kubernetes version is the one given, else
    the inputs' stack's, else the embedded world's."""

    def plan(inputs: Inputs) -> Plan:
        kube = kubernetes or inputs.cluster.kubernetes or target.world_kubernetes
        return reconcile(
            inputs, release=release, kubernetes=kube, aws=target.session, cache_dir=cache_dir, progress=progress
        )

    return plan
