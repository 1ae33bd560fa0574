"""Our NodeOverlay rules (``nodeoverlay/``): what the CRD admits but Karpenter's runtime validation or its overlay
controller refuses.

The CRD's own rules are :mod:`karpenter_gitops.rules.cel.nodeoverlay`.
"""

from __future__ import annotations

from karpenter_gitops.core import labels
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEOVERLAY, NODEOVERLAY_SINCE
from karpenter_gitops.rules.cel.nodeoverlay import requirements
from karpenter_gitops.rules.label_keys import runtime_requirement_message
from karpenter_gitops.rules.registry import rule

LABEL_SYNTAX = "nodeoverlay/label-syntax"
SAME_WEIGHT_PRICE = "nodeoverlay/same-weight-price"


@rule(
    LABEL_SYNTAX,
    Severity.ERROR,
    (NODEOVERLAY,),
    "A requirement key that is not a Kubernetes qualified name (name part over 63 characters, prefix over 253), or "
    "a value that is no label value (a wildcard such as 'g5*'): the CRD admits them, Karpenter's runtime validation "
    "sets the overlay ValidationSucceeded=False (RuntimeValidation) and applies it to no instance type.",
    "Shorten the key (at most 63 characters after the '/', 253 before it); list exact values instead of patterns.",
    since=NODEOVERLAY_SINCE,
    good=(
        {
            "kind": NODEOVERLAY,
            "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}]},
        },
    ),
    bad=(
        {"kind": NODEOVERLAY, "spec": {"requirements": [{"key": "example.com/" + "a" * 64, "operator": "Exists"}]}},
        {
            "kind": NODEOVERLAY,
            "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5*"]}]},
        },
    ),
)
def label_syntax(obj, ctx):
    for index, requirement in requirements(obj):
        if requirement.key:
            path = f"spec.requirements[{index}]"
            message = runtime_requirement_message(requirement.key, requirement.values or (), path, ctx.release)
            if message:
                yield Violation(path, message)


def _certain_types(obj) -> tuple[frozenset[str], frozenset[str]] | None:
    """(instance types, instance families) an overlay prices whatever the catalogue: its requirements are
    all ``In`` on instance-type or instance-family; None when any other requirement leaves it open."""
    chosen: dict[str, frozenset[str]] = {labels.INSTANCE_TYPE: frozenset(), labels.FAMILY: frozenset()}
    found = list(requirements(obj))
    for _, requirement in found:
        if requirement.key not in chosen or requirement.operator != "In":
            return None
        chosen[requirement.key] |= frozenset(map(str, requirement.values or ()))
    return (chosen[labels.INSTANCE_TYPE], chosen[labels.FAMILY]) if found else None


def _shared(one: tuple[frozenset[str], frozenset[str]], other: tuple[frozenset[str], frozenset[str]]) -> str | None:
    """An instance type or family both price, when their sets make the overlap certain."""
    (types, families), (other_types, other_families) = one, other
    if types and other_types:
        both = types & other_types
    elif types or other_types:  # one names types, the other families: the types of those families
        named, by_family = (types, other_families) if types else (other_types, families)
        both = {t for t in named if t.split(".", 1)[0] in by_family}
    else:
        both = families & other_families
    return min(both) if both else None


_FAMILY_PRICE = {
    "weight": 10,
    "price": "0.4",
    "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}],
}


@rule(
    SAME_WEIGHT_PRICE,
    Severity.ERROR,
    (NODEOVERLAY,),
    "Two NodeOverlays of the same weight price the same instance types (their requirements name the same "
    "instance-type or instance-family values): Karpenter's overlay controller rejects the one whose name sorts "
    "first, whole and for every NodePool (ValidationSucceeded=False, Conflict). Found offline; plan finds every "
    "other overlap against the catalogue (live/overlay-conflict).",
    "Give the overlays different weights (the heavier one wins where both match), or make their requirements disjoint.",
    origin="karpenter",
    since=NODEOVERLAY_SINCE,
    good=(
        {
            "kind": NODEOVERLAY,
            "featureGates": {"NodeOverlay": True},
            "metadata": {"name": "a"},
            "spec": _FAMILY_PRICE,
            "also": [{"kind": NODEOVERLAY, "metadata": {"name": "b"}, "spec": {**_FAMILY_PRICE, "weight": 20}}],
        },
    ),
    bad=(
        {
            "kind": NODEOVERLAY,
            "featureGates": {"NodeOverlay": True},
            "metadata": {"name": "a"},
            "spec": _FAMILY_PRICE,
            "also": [{"kind": NODEOVERLAY, "metadata": {"name": "b"}, "spec": {**_FAMILY_PRICE, "price": "0.5"}}],
        },
    ),
)
def same_weight_price(obj, ctx):
    mine = _certain_types(obj)
    if mine is None or obj.blocked or (obj.spec.price is None and obj.spec.price_adjustment is None):
        return
    if not ctx.inputs.cluster.gate("NodeOverlay"):
        return  # Karpenter reads no overlay; gate/feature-off says so
    for other in ctx.inputs.node_overlays:
        theirs = _certain_types(other) if other.name > obj.name and not other.blocked else None
        if theirs is None or (other.spec.weight or 0) != (obj.spec.weight or 0):
            continue
        if other.spec.price is None and other.spec.price_adjustment is None:
            continue
        shared = _shared(mine, theirs)
        if shared:
            field = "spec.price" if obj.spec.price is not None else "spec.priceAdjustment"
            yield Violation(
                field,
                f"ValidationSucceeded=False, reason Conflict: NodeOverlay {other.name} has the same weight "
                f"({obj.spec.weight or 0}) and also prices {shared}; Karpenter keeps {other.name} (its name "
                "sorts later) and ignores this overlay everywhere",
                "give one a higher weight or make their requirements disjoint",
            )
