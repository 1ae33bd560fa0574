"""Our NodeOverlay rule (``nodeoverlay/``): what the CRD admits but Karpenter's runtime validation refuses.

The CRD's own rules are :mod:`karpenter_gitops.rules.cel.nodeoverlay`.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEOVERLAY, NODEOVERLAY_SINCE
from karpenter_gitops.rules.cel.nodeoverlay import requirements
from karpenter_gitops.rules.label_keys import runtime_requirement_message
from karpenter_gitops.rules.registry import rule

LABEL_SYNTAX = "nodeoverlay/label-syntax"


@rule(
    LABEL_SYNTAX,
    Severity.ERROR,
    (NODEOVERLAY,),
    "A requirement key that is not a Kubernetes qualified name (name part over 63 characters, prefix over 253), or "
    "a value that is no label value (a wildcard such as 'g5*'): the CRD admits them, Karpenter's runtime validation "
    "sets the overlay ValidationSucceeded=False (RuntimeValidation) and applies it to no instance type.",
    "Shorten the key (at most 63 characters after the '/', 253 before it); list exact values instead of patterns.",
    since=NODEOVERLAY_SINCE,
    good=({"kind": NODEOVERLAY, "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}]}},),
    bad=(
        {"kind": NODEOVERLAY, "spec": {"requirements": [{"key": "example.com/" + "a" * 64, "operator": "Exists"}]}},
        {"kind": NODEOVERLAY, "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5*"]}]}},
    ),
)
def label_syntax(obj, ctx):
    for index, requirement in requirements(obj):
        if requirement.key:
            path = f"spec.requirements[{index}]"
            message = runtime_requirement_message(requirement.key, requirement.values or (), path, ctx.release)
            if message:
                yield Violation(path, message)
