"""The NodeOverlay CRD's CEL rules (``cel/``; ``karpenter.sh/v1alpha1``, from Karpenter 1.7).

A NodeOverlay changes the price or the capacity Karpenter assumes for the instance types its
requirements match, and so what every NodePool launches first. The API server refuses the ones
these rules find; the label-key rules are the NodePool's, with the same per-release domains.
"""

from __future__ import annotations

from collections.abc import Iterator

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEOVERLAY, NODEOVERLAY_SINCE
from karpenter_gitops.rules.cel.nodepool import is_non_negative_int64, numeric_operators
from karpenter_gitops.rules.label_keys import domain_messages, key_suggestion
from karpenter_gitops.rules.registry import rule

KINDS = (NODEOVERLAY,)
ERROR = Severity.ERROR
_RESTRICTED_CAPACITY = ("cpu", "memory", "ephemeral-storage", "pods")


def _overlay(spec: dict) -> dict:
    """An example: the base NodeOverlay of rules/examples.py with this spec."""
    return {"kind": NODEOVERLAY, "spec": spec}


_GPU = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}


def requirements(obj) -> Iterator[tuple[int, object]]:
    """(index, requirement) of each requirement the schema layer could load (our rule reads them so too)."""
    for index, requirement in enumerate(obj.spec.requirements or ()):
        if requirement is not None:
            yield index, requirement


@rule(
    "cel/overlay-price-exclusive",
    ERROR,
    KINDS,
    "CEL: a NodeOverlay sets the price or adjusts it, not both.",
    "Keep price (an absolute hourly price) or priceAdjustment (+/- an amount or a percentage).",
    since=NODEOVERLAY_SINCE,
    good=(_overlay({"requirements": [_GPU], "priceAdjustment": "-10%"}),),
    bad=(_overlay({"requirements": [_GPU], "price": "1.2", "priceAdjustment": "-10%"}),),
)
def price_exclusive(obj, ctx):
    if obj.spec.price is not None and obj.spec.price_adjustment is not None:
        yield Violation("spec", "cannot set both 'price' and 'priceAdjustment'")


@rule(
    "cel/overlay-capacity-restricted",
    ERROR,
    KINDS,
    "CEL: an overlay's capacity adds extended resources; it may not change cpu, memory, ephemeral-storage or pods.",
    "Name an extended resource (e.g. smarter-devices/fuse); Karpenter computes cpu, memory and pods itself.",
    since=NODEOVERLAY_SINCE,
    good=(_overlay({"requirements": [_GPU], "capacity": {"smarter-devices/fuse": 1}}),),
    bad=(_overlay({"requirements": [_GPU], "capacity": {"cpu": "8"}}),),
)
def capacity_restricted(obj, ctx):
    if any(key in _RESTRICTED_CAPACITY for key in obj.spec.capacity or {}):
        yield Violation("spec.capacity", "invalid resource restricted")


@rule(
    "cel/overlay-label-domain-restricted",
    ERROR,
    KINDS,
    "CEL: overlay requirements may use Karpenter's and AWS's well-known labels, not other keys in their domains.",
    "Use a well-known label (the hint names the closest) or your own domain.",
    since=NODEOVERLAY_SINCE,
    good=(_overlay({"requirements": [_GPU]}),),
    bad=(_overlay({"requirements": [{"key": "karpenter.k8s.aws/instance-pods", "operator": "Exists"}]}),),
)
def label_domain_restricted(obj, ctx):
    for index, requirement in requirements(obj):
        for message in domain_messages(requirement.key or "", ctx.release):
            yield Violation(f"spec.requirements[{index}].key", message, key_suggestion(requirement.key, ctx.release))


@rule(
    "cel/overlay-hostname-restricted",
    ERROR,
    KINDS,
    "CEL: kubernetes.io/hostname is unique per node, so an overlay cannot select on it.",
    "Select instance types by their labels instead.",
    since=NODEOVERLAY_SINCE,
    good=(_overlay({"requirements": [_GPU]}),),
    bad=(_overlay({"requirements": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]}),),
)
def hostname_restricted(obj, ctx):
    for index, requirement in requirements(obj):
        if requirement.key == "kubernetes.io/hostname":
            yield Violation(f"spec.requirements[{index}].key", 'label "kubernetes.io/hostname" is restricted')


@rule(
    "cel/overlay-requirement-values",
    ERROR,
    KINDS,
    "CEL: In and NotIn need at least one value; Gt/Lt (and Gte/Lte since 1.9) exactly one non-negative integer.",
    "Give the values the operator needs.",
    since=NODEOVERLAY_SINCE,
    good=(_overlay({"requirements": [_GPU, {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4"]}]}),),
    bad=(
        _overlay({"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "NotIn", "values": []}]}),
        _overlay({"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4", "8"]}]}),
    ),
)
def requirement_values(obj, ctx):
    operators, _ = numeric_operators(ctx.release)
    quoted = [f"'{operator}'" for operator in operators]  # the overlay CRD lists them without a serial comma
    numeric_message = f"requirements operator {', '.join(quoted[:-1])} or {quoted[-1]} must have a single positive integer value"
    for index, requirement in requirements(obj):
        values = requirement.values or ()
        if requirement.operator in ("In", "NotIn") and not values:
            yield Violation("spec.requirements", f"requirements with operator '{requirement.operator}' must have a value defined")
        if requirement.operator in operators and not (len(values) == 1 and is_non_negative_int64(values[0])):
            yield Violation(f"spec.requirements[{index}]", numeric_message)
