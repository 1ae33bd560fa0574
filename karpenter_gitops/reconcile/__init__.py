"""The reconciliation: what Karpenter will resolve, launch and report, before it does.

Shaped like Karpenter's controllers: small steps, each owning one concern, with their dependencies
declared in one place (:mod:`~karpenter_gitops.reconcile.steps`) and kept by a small engine
(:mod:`~karpenter_gitops.reconcile.graph`): a step runs only once what it needs is ready, and a
transient failure of one step leaves exactly its dependents awaiting. Every failure is classified
transient (retry; nothing decided) or persistent. What only AWS reveals is observed under the
``live/`` rules and judged with everything else. :mod:`~karpenter_gitops.karpenter.disruption.drift` forecasts
which nodes a change drifts, from two plans.

Layer: imports judge, adapters and below; inside it, the contract in pyproject.toml orders its modules.
"""

from karpenter_gitops.reconcile.reconciler import Progress, reconcile

__all__ = ["Progress", "reconcile"]
