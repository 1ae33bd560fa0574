"""The EC2NodeClass CRD's CEL rules on ``spec.kubelet`` (``cel/``), up to Karpenter 1.14.

From 1.15 the CRD keeps any kubelet field and Karpenter checks the block itself: the ``kubelet/`` rules
of :mod:`karpenter_gitops.rules.kubelet` take over there.
"""

from __future__ import annotations

from karpenter_gitops.core import schema_fields
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import EC2NODECLASS, EC2NodeClassSpec, KubeletConfiguration
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
ERROR = Severity.ERROR

_RESERVED_KEYS = ("cpu", "memory", "ephemeral-storage", "pid")
_EVICTION_SIGNALS = (
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
)
_KUBELET_MAPS = {
    "kubeReserved": _RESERVED_KEYS,
    "systemReserved": _RESERVED_KEYS,
    "evictionHard": _EVICTION_SIGNALS,
    "evictionSoft": _EVICTION_SIGNALS,
    "evictionSoftGracePeriod": _EVICTION_SIGNALS,
}
_KUBELET_ATTR = {
    wire: f.attr for wire, f in schema_fields.fields_of(schema_fields.fields_of(EC2NodeClassSpec)["kubelet"].item).items()
}


def _compact_list(names) -> str:
    return "[" + ",".join(f"'{name}'" for name in names) + "]"


@rule(
    "cel/kubelet-map-keys",
    ERROR,
    KINDS,
    "CEL: kubeReserved/systemReserved take cpu, memory, ephemeral-storage, pid; eviction maps take the six eviction signals.",
    "Use one of the keys the message lists.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet/
    good=({"spec": {"kubelet": {"kubeReserved": {"cpu": "100m"}, "evictionHard": {"memory.available": "5%"}}}},),
    bad=(
        {"karpenterVersion": "1.14", "spec": {"kubelet": {"kubeReserved": {"gpu": "1"}}}},
        {"karpenterVersion": "1.14", "spec": {"kubelet": {"evictionHard": {"memory": "5%"}}}},
    ),
)
def kubelet_map_keys(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    for wire, allowed in _KUBELET_MAPS.items():
        values = getattr(kubelet, _KUBELET_ATTR[wire]) or {}
        if any(key not in allowed for key in values):
            yield Violation(f"spec.kubelet.{wire}", f"valid keys for {wire} are {_compact_list(allowed)}")


@rule(
    "cel/kubelet-reserved-not-negative",
    ERROR,
    KINDS,
    "CEL: kubeReserved and systemReserved quantities cannot be negative.",
    "Use a positive quantity, e.g. 100m or 1Gi.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet/
    good=({"spec": {"kubelet": {"systemReserved": {"memory": "100Mi"}}}},),
    bad=({"karpenterVersion": "1.14", "spec": {"kubelet": {"systemReserved": {"memory": "-100Mi"}}}},),
)
def kubelet_reserved_not_negative(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    for wire in ("kubeReserved", "systemReserved"):
        values = getattr(kubelet, _KUBELET_ATTR[wire]) or {}
        if any(isinstance(v, str) and v.startswith("-") for v in values.values()):
            yield Violation(f"spec.kubelet.{wire}", f"{wire} value cannot be a negative resource quantity")


@rule(
    "cel/kubelet-image-gc-thresholds",
    ERROR,
    KINDS,
    "CEL: the image GC high threshold must be above the low threshold.",
    "Raise imageGCHighThresholdPercent above imageGCLowThresholdPercent.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet/
    good=({"spec": {"kubelet": {"imageGCHighThresholdPercent": 85, "imageGCLowThresholdPercent": 80}}},),
    bad=(
        {"karpenterVersion": "1.14", "spec": {"kubelet": {"imageGCHighThresholdPercent": 80, "imageGCLowThresholdPercent": 85}}},
    ),
)
def kubelet_image_gc_thresholds(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    high, low = kubelet.image_gc_high_threshold_percent, kubelet.image_gc_low_threshold_percent
    if high is not None and low is not None and high <= low:
        yield Violation("spec.kubelet", "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent")


@rule(
    "cel/kubelet-eviction-soft-grace-period",
    ERROR,
    KINDS,
    "CEL: evictionSoft and evictionSoftGracePeriod must name the same signals.",
    "Give each soft eviction signal a grace period, and each grace period a soft threshold.",
    until=KubeletConfiguration.OPEN_SINCE,  # from then the CRD keeps the block open: see rules/kubelet/
    good=(
        {
            "spec": {
                "kubelet": {"evictionSoft": {"memory.available": "10%"}, "evictionSoftGracePeriod": {"memory.available": "1m"}}
            }
        },
    ),
    bad=({"karpenterVersion": "1.14", "spec": {"kubelet": {"evictionSoft": {"memory.available": "10%"}}}},),
)
def kubelet_eviction_soft_grace_period(obj, ctx):
    kubelet = obj.spec.kubelet
    if kubelet is None:
        return
    soft, grace = kubelet.eviction_soft, kubelet.eviction_soft_grace_period
    if soft is not None and any(key not in (grace or {}) for key in soft):
        yield Violation("spec.kubelet", "evictionSoft OwnerKey does not have a matching evictionSoftGracePeriod")
    if grace is not None and any(key not in (soft or {}) for key in grace):
        yield Violation("spec.kubelet", "evictionSoftGracePeriod OwnerKey does not have a matching evictionSoft")
