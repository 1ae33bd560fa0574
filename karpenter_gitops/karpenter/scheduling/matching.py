"""The scheduler's matching rules, with Karpenter's wording when they fail.

Node requirements (``Compatible``/``Intersects`` of ``pkg/scheduling/requirements.go``), taints and
tolerations (Kubernetes' ``ToleratesTaint``, comparison operators enabled as Karpenter 1.15 calls it)
and label selectors (``metav1.LabelSelectorAsSelector``). Messages are Karpenter's own, so a report
can quote what its events would say; where Go iterates a map, keys are taken in sorted order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import DOES_NOT_EXIST, EXISTS, IN, NOT_IN, Requirements, ValueSet

NODEPOOL = "karpenter.sh/nodepool"
HOSTNAME = "kubernetes.io/hostname"
NODECLASS = "karpenter.k8s.aws/ec2nodeclass"
REGISTERED = "karpenter.sh/registered"
INITIALIZED = "karpenter.sh/initialized"

#: Labels Karpenter knows the values of (core ``WellKnownLabels`` plus the AWS provider's additions):
#: a pod may ask for one a NodePool does not define.
WELL_KNOWN = frozenset({
    NODEPOOL, labels.ZONE, labels.REGION, labels.INSTANCE_TYPE, labels.ARCH, labels.OS, labels.CAPACITY_TYPE,
    labels.WINDOWS_BUILD, labels.CAPACITY_RESERVATION_ID, labels.CAPACITY_RESERVATION_TYPE,
    labels.CAPACITY_RESERVATION_INTERRUPTIBLE, labels.HYPERVISOR, labels.ENCRYPTION_IN_TRANSIT, labels.CATEGORY,
    labels.CAPABILITY_FLEX, labels.FAMILY, labels.GENERATION, labels.SIZE, labels.LOCAL_NVME, labels.CPU,
    labels.CPU_MANUFACTURER, labels.CPU_CLOCK, labels.MEMORY, labels.EBS_BANDWIDTH, labels.NETWORK_BANDWIDTH,
    labels.GPU_NAME, labels.GPU_MANUFACTURER, labels.GPU_COUNT, labels.GPU_MEMORY, labels.ACCELERATOR_NAME,
    labels.ACCELERATOR_MANUFACTURER, labels.ACCELERATOR_COUNT, labels.ZONE_ID, labels.TENANCY,
    "karpenter.k8s.aws/placement-group-id", "karpenter.k8s.aws/placement-group-partition",
})  # fmt: skip
#: Label domains only Karpenter may set (a pod requiring a key there, other than a well-known one, is ignored).
RESTRICTED_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
RESTRICTED_LABELS = frozenset({HOSTNAME})


# --- requirements ---------------------------------------------------------------------------


def describe(key: str, allowed: ValueSet) -> str:
    """Karpenter's ``Requirement.String()``: ``key In [a b c d e and 2 others] >=4 minValues 2``."""
    operator = allowed.operator
    if operator in (EXISTS, DOES_NOT_EXIST):
        text = f"{key} {operator}"
    else:
        values = sorted(allowed.values)
        if len(values) > 5:
            values = [*values[:5], f"and {len(values) - 5} others"]
        text = f"{key} {operator} [{' '.join(values)}]"
    if allowed.gte is not None:
        text += f" >={allowed.gte}"
    if allowed.lte is not None:
        text += f" <={allowed.lte}"
    if allowed.min_values is not None:
        text += f" minValues {allowed.min_values}"
    return text


def describe_all(requirements: Requirements) -> str:
    """Karpenter's ``Requirements.String()``: sorted, restricted labels (hostname) left out."""
    return ", ".join(sorted(describe(key, requirements[key]) for key in requirements if key not in RESTRICTED_LABELS))


def intersection_error(existing: Requirements, incoming: Requirements) -> str | None:
    """Karpenter's ``Intersects``: why the two share no node, or None. Keys only one side has pass."""
    problems = []
    for key in sorted(existing.keys() & incoming.keys()):
        mine, theirs = existing[key], incoming[key]
        if not mine.overlaps(theirs) and not (mine.tolerates_absence and theirs.tolerates_absence):
            problems.append(f"key {key}, {describe(key, theirs)} not in {describe(key, mine)}")
    return "; ".join(problems) or None


def compatible(existing: Requirements, incoming: Requirements, allow_undefined: frozenset[str] = WELL_KNOWN) -> bool:
    """``compatibility_error(...) is None`` without building the message (the hot path)."""
    for key, theirs in incoming.items():
        mine = existing.get(key)
        if mine is None:
            if key not in allow_undefined and not theirs.tolerates_absence:
                return False
        elif not mine.overlaps(theirs) and not (mine.tolerates_absence and theirs.tolerates_absence):
            return False
    return True


def compatibility_error(
    existing: Requirements, incoming: Requirements, allow_undefined: frozenset[str] = WELL_KNOWN
) -> str | None:
    """Karpenter's ``Compatible``: a custom label the incoming side requires must be defined on the existing side."""
    for key in sorted(incoming):
        if key in allow_undefined or key in existing or incoming[key].tolerates_absence:
            continue
        return f'label "{key}" does not have known values{_typo_hint(existing, key, allow_undefined)}'
    return intersection_error(existing, incoming)


def _typo_hint(existing: Requirements, key: str, allow_undefined: frozenset[str]) -> str:
    suffix = key.partition("/")[2] or key
    for known in [*sorted(allow_undefined), *sorted(existing)]:
        if key in known or known.endswith(suffix):
            return f' (typo of "{known}"?)'
    return ""


def restricted_label_error(key: str) -> str | None:
    """Karpenter's ``IsRestrictedLabel`` for a key a pod selects on (the pod is then ignored), or None."""
    if key in WELL_KNOWN:
        return None
    domain = key.partition("/")[0] if "/" in key else ""
    restricted = any(domain == d or domain.endswith("." + d) for d in RESTRICTED_DOMAINS) or key in RESTRICTED_LABELS
    if not restricted:
        return None
    return (
        f"using label {key} is not allowed as it might interfere with the internal provisioning logic; "
        f"specify a well known label: [{' '.join(sorted(WELL_KNOWN))}], or a custom label that does not use a "
        f"restricted domain: [{' '.join(sorted(RESTRICTED_DOMAINS))}]"
    )


# --- taints and tolerations -------------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Taint:
    key: str
    value: str = ""
    effect: str = ""

    def __str__(self) -> str:  # Karpenter's pretty.Taint
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, **({"value": self.value} if self.value else {}), "effect": self.effect}


_DECIMAL_INTEGER = re.compile(r"^(0|-?[1-9][0-9]*)$")


@dataclass(frozen=True, order=True)
class Toleration:
    key: str = ""
    operator: str = ""  # "" means Equal
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' ``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        if self.operator == "Exists":
            return True
        if self.operator in ("Lt", "Gt"):
            if not (_DECIMAL_INTEGER.match(self.value) and _DECIMAL_INTEGER.match(taint.value)):
                return False
            theirs, mine = int(taint.value), int(self.value)
            return theirs < mine if self.operator == "Lt" else theirs > mine
        return False

    def to_json(self) -> dict[str, Any]:
        fields = {"key": self.key, "operator": self.operator, "value": self.value, "effect": self.effect}
        return {name: value for name, value in fields.items() if value}


#: The toleration Karpenter adds while relaxing a pod when some NodePool has a PreferNoSchedule taint.
PREFER_NO_SCHEDULE = Toleration(operator="Exists", effect="PreferNoSchedule")


def untolerated(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> str | None:
    """Karpenter's ``Taints.Tolerates``: every taint, of any effect, must be tolerated; the error or None."""
    tolerations = tuple(tolerations)
    problems = [
        f"did not tolerate taint (taint={taint})"
        for taint in taints
        if not any(toleration.tolerates(taint) for toleration in tolerations)
    ]
    return "; ".join(problems) or None


# --- label selectors --------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelSelector:
    """``metav1.LabelSelector``; ``None`` in a term means a selector that selects nothing."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (key, operator, values)

    def matches(self, pod_labels: Mapping[str, str]) -> bool:
        for key, value in self.match_labels:
            if pod_labels.get(key) != value:
                return False
        for key, operator, values in self.match_expressions:
            present = key in pod_labels
            if operator == IN and not (present and pod_labels[key] in values):
                return False
            if operator == NOT_IN and present and pod_labels[key] in values:
                return False
            if operator == EXISTS and not present:
                return False
            if operator == DOES_NOT_EXIST and present:
                return False
            if operator not in (IN, NOT_IN, EXISTS, DOES_NOT_EXIST):
                return False  # an invalid selector selects nothing (labels.Nothing())
        return True

    def with_expression(self, key: str, values: tuple[str, ...]) -> LabelSelector:
        return LabelSelector(self.match_labels, (*self.match_expressions, (key, IN, values)))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.match_labels:
            out["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            out["matchExpressions"] = [
                {"key": k, "operator": o, **({"values": list(v)} if v else {})} for k, o, v in self.match_expressions
            ]
        return out
