"""``kubelet/`` rules: ``spec.kubelet`` as Karpenter 1.15 checks it, the block the API server no longer checks.

From 1.15 the EC2NodeClass CRD keeps any kubelet field (the ``cel/kubelet-*`` rules end there).
Karpenter checks the block when it reconciles the class and reports a mistake as
``ValidationSucceeded=False``, so the apply succeeds and no node ever launches. These rules make
the same checks offline, in Karpenter's words (v1.15.0, ``pkg/apis/v1/kubeletconfiguration_validation.go``
and ``pkg/controllers/nodeclass/validation.go``), one rule per condition reason: the block itself in
:mod:`.configuration`, its CEL expressions in :mod:`.expressions`. :mod:`.validation` gives the reason
Karpenter reports first; :mod:`.evaluation` evaluates the expressions per instance type, as the
reconciliation does for the ``live/kubelet-expression-*`` rules.
"""

from karpenter_gitops.rules.kubelet.configuration import OPEN
from karpenter_gitops.rules.kubelet.evaluation import (
    EVALUATION_FAILED,
    Evaluated,
    cel_variables,
    evaluate_expressions,
    evaluates,
    failure_hint,
    first_failure,
    implausible,
)
from karpenter_gitops.rules.kubelet.expressions import CEL_GATE, expression_texts
from karpenter_gitops.rules.kubelet.validation import validation_failure

__all__ = [
    "CEL_GATE",
    "EVALUATION_FAILED",
    "OPEN",
    "Evaluated",
    "cel_variables",
    "evaluate_expressions",
    "evaluates",
    "expression_texts",
    "failure_hint",
    "first_failure",
    "implausible",
    "validation_failure",
]
