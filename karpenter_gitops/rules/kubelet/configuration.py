"""``kubelet/`` rules on the block itself: fields, types and values Karpenter 1.15 refuses
(InvalidKubeletConfiguration), and fields the AMI family would drop (UnsupportedKubeletConfiguration).
Also the readers of the block the other ``kubelet/`` modules share."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.kubelet_fields import KUBELET_CONFIGURATION_FIELDS
from karpenter_gitops.core.model import EC2NODECLASS, QUANTITY, KubeletConfiguration
from karpenter_gitops.core.schema_fields import crd_regex, fields_of
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
OPEN = KubeletConfiguration.OPEN_SINCE
V115 = {"karpenterVersion": "1.15"}  # examples are judged as 1.15, the first release that checks the block

#: The twelve fields Karpenter reads itself and maps for every family (its ParsedKubeletConfig).
MANAGED = frozenset(fields_of(KubeletConfiguration))
EVICTION_SIGNALS = (
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
)
RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
_OWNED = {
    "registerWithTaints": "Karpenter sets it from the NodeClaim's taints so the node registers unschedulable until it's ready"
}
# The Go type the upstream KubeletConfiguration gives each managed field, for the decoder's message.
_GO_TYPES = {
    "clusterDNS": "[]string",
    "cpuCFSQuota": "bool",
    "maxPods": "int32",
    "podsPerCore": "int32",
    "evictionMaxPodGracePeriod": "int32",
    "imageGCHighThresholdPercent": "int32",
    "imageGCLowThresholdPercent": "int32",
    **dict.fromkeys(
        ("kubeReserved", "systemReserved", "evictionHard", "evictionSoft", "evictionSoftGracePeriod"), "map[string]string"
    ),
}
_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+\Z|^[-+]?0\Z")


Said = tuple[str, str | None]  # Karpenter's message, and where to point when not at the path it starts with


def said(text: str, where: str | None = None) -> Said:
    return text, where


def violations(said: Iterator[Said]) -> Iterator[Violation]:
    """Karpenter's messages ``"<path>: <what>"`` as violations at their path (or ``where``), the path shown once."""
    for text, where in said:
        path, colon, what = text.partition(": ")
        is_path = colon and path.startswith("spec.") and " " not in path
        yield Violation(where or path, what) if is_path else Violation(where or "spec.kubelet", text)


def kubelet_block(obj) -> Mapping[str, Any] | None:
    """The class's ``spec.kubelet`` as written (the rules read fields the model does not type), or None."""
    if obj.spec.kubelet is None:  # the model loads every mapping written there: none, so the manifest need not be unpacked
        return None
    spec = obj.raw.get("spec") if isinstance(obj.raw, Mapping) else None
    kubelet = spec.get("kubelet") if isinstance(spec, Mapping) else None
    return kubelet if isinstance(kubelet, Mapping) and kubelet else None


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        whole_int32 = (isinstance(value, int) or value.is_integer()) and -(2**31) <= value < 2**31
        return "number" if whole_int32 else f"number {value}"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "object" if isinstance(value, Mapping) else "null")


def _fits(go_type: str, value: Any) -> bool:
    if go_type == "bool":
        return isinstance(value, bool)
    if go_type == "int32":
        whole = not isinstance(value, bool) and (isinstance(value, int) or isinstance(value, float) and value.is_integer())
        return whole and -(2**31) <= value < 2**31
    if go_type == "[]string":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, Mapping) and all(isinstance(item, str) for item in value.values())


def string_map(kubelet: Mapping[str, Any], field: str) -> Mapping[str, str]:
    value = kubelet.get(field)
    return value if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()) else {}


def integer_field(kubelet: Mapping[str, Any], field: str) -> int | None:
    value = kubelet.get(field)
    return int(value) if _fits("int32", value) else None


def is_quantity(text: str) -> bool:
    return bool(crd_regex(QUANTITY).search(text))


def _threshold_problem(field: str, key: str, value: str) -> str | None:
    """A percentage (0–100) or a non-negative quantity, as the kubelet reads an eviction threshold."""
    if value.endswith("%"):
        try:
            percent = float(value[:-1])
        except ValueError:
            percent = -1.0
        return (
            None if 0 <= percent <= 100 else f'spec.kubelet.{field}[{key}]: "{value}" must be a percentage or a resource quantity'
        )
    if not is_quantity(value):
        return f'spec.kubelet.{field}[{key}]: "{value}" must be a percentage or a resource quantity'
    return f'spec.kubelet.{field}[{key}]: "{value}" can\'t be a negative resource quantity' if value.startswith("-") else None


def _grace_problem(field: str, key: str, value: str) -> str | None:
    if not _DURATION.match(value):
        return f'spec.kubelet.{field}[{key}]: "{value}" must be a duration'
    negative = value.startswith("-") and any(digit in "123456789" for digit in value)
    return f'spec.kubelet.{field}[{key}]: "{value}" can\'t be a negative duration' if negative else None


@rule(
    "kubelet/invalid-configuration",
    Severity.ERROR,
    KINDS,
    "From Karpenter 1.15 the CRD takes any spec.kubelet field and Karpenter checks the block itself: "
    "an unknown field, a value of the wrong type, an eviction signal or reserved resource it does not "
    "know, a negative or out-of-range value, unmatched soft eviction settings or a field Karpenter sets "
    "itself make the class ValidationSucceeded=False (InvalidKubeletConfiguration), and no node launches.",
    "Fix the field the message names; field names are those of the upstream KubeletConfiguration.",
    since=OPEN,
    good=(
        {
            **V115,
            "spec": {
                "amiSelectorTerms": [{"alias": "al2023@latest"}],
                "kubelet": {"maxPods": 110, "shutdownGracePeriod": "30s", "kubeReserved": {"cpu": "100m"}},
            },
        },
    ),
    bad=(
        {**V115, "spec": {"kubelet": {"maxPod": 110}}},
        {**V115, "spec": {"kubelet": {"evictionSoft": {"memory.available": "10%"}}}},
        {**V115, "spec": {"kubelet": {"registerWithTaints": [{"key": "a", "effect": "NoSchedule"}]}}},
    ),
)
def invalid_configuration(obj, ctx) -> Iterator[Violation]:
    yield from violations(invalid(obj))


def invalid(obj) -> Iterator[Said]:
    if (kubelet := kubelet_block(obj)) is not None:
        yield from _upstream_type(kubelet)
        yield from _semantics(kubelet)


def _upstream_type(kubelet: Mapping[str, Any]) -> Iterator[Said]:
    """The strict decode into the upstream struct: a wrong type alone, else every unknown field."""
    for field, go_type in _GO_TYPES.items():
        value = kubelet.get(field)
        if value is None or (field == "maxPods" and isinstance(value, str)):  # a string maxPods is an expression
            continue
        if not _fits(go_type, value):
            shown = "string" if go_type == "map[string]string" and isinstance(value, Mapping) else go_type
            kind = _json_kind(
                next((v for v in value.values() if not isinstance(v, str)), value) if isinstance(value, Mapping) else value
            )
            yield said(
                f"spec.kubelet: json: cannot unmarshal {kind} into Go struct field KubeletConfiguration.{field} of type {shown}",
                f"spec.kubelet.{field}",
            )
            return
    for field in kubelet:
        if field not in KUBELET_CONFIGURATION_FIELDS:
            yield said(f'spec.kubelet: unknown field "{field}"', f"spec.kubelet.{field}")


def _semantics(kubelet: Mapping[str, Any]) -> Iterator[Said]:
    for field in sorted(_OWNED):
        if field in kubelet:
            yield said(f"spec.kubelet.{field}: can't be set, {_OWNED[field]}")
    for field in ("evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim"):
        signals = string_map(kubelet, field)
        for key in sorted(signals):
            if key not in EVICTION_SIGNALS:
                yield said(
                    f'spec.kubelet.{field}: "{key}" isn\'t a valid eviction signal, must be one of {", ".join(EVICTION_SIGNALS)}'
                )
            check = _grace_problem if field == "evictionSoftGracePeriod" else _threshold_problem
            if (problem := check(field, key, signals[key])) is not None:
                yield said(problem)
    soft, grace = string_map(kubelet, "evictionSoft"), string_map(kubelet, "evictionSoftGracePeriod")
    for signal in sorted(set(soft) - set(grace)):
        yield said(f"spec.kubelet.evictionSoft[{signal}]: has no matching evictionSoftGracePeriod")
    for signal in sorted(set(grace) - set(soft)):
        yield said(f"spec.kubelet.evictionSoftGracePeriod[{signal}]: has no matching evictionSoft")
    for field in ("kubeReserved", "systemReserved"):
        reserved = string_map(kubelet, field)
        for key in sorted(reserved):
            if key not in RESERVABLE:
                yield said(f'spec.kubelet.{field}: "{key}" isn\'t a reservable resource, must be one of {", ".join(RESERVABLE)}')
            if reserved[key].startswith("-"):
                yield said(f'spec.kubelet.{field}[{key}]: "{reserved[key]}" can\'t be a negative resource quantity')
    for field in ("imageGCHighThresholdPercent", "imageGCLowThresholdPercent"):
        if (value := integer_field(kubelet, field)) is not None and not 0 <= value <= 100:
            yield said(f"spec.kubelet.{field}: {value} must be between 0 and 100")
    for field in ("podsPerCore", "evictionMaxPodGracePeriod", "maxPods"):
        if (value := integer_field(kubelet, field)) is not None and value < 0:
            yield said(f"spec.kubelet.{field}: {value} can't be negative")
    high, low = integer_field(kubelet, "imageGCHighThresholdPercent"), integer_field(kubelet, "imageGCLowThresholdPercent")
    if high is not None and low is not None and high <= low:
        yield said(f"spec.kubelet: imageGCHighThresholdPercent ({high}) must be greater than imageGCLowThresholdPercent ({low})")


@rule(
    "kubelet/unsupported-for-family",
    Severity.ERROR,
    KINDS,
    "Only AL2023 passes any kubelet field through; AL2, Bottlerocket and Windows apply the twelve fields "
    "Karpenter maps (Bottlerocket not podsPerCore) and a single clusterDNS entry, and Karpenter 1.15 "
    "refuses the class rather than drop the rest (ValidationSucceeded=False, UnsupportedKubeletConfiguration). "
    "Custom is not checked: it owns its userData.",
    "Move the setting into the family's own configuration (userData), or use AL2023.",
    since=OPEN,
    good=({**V115, "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}], "kubelet": {"maxPods": 110}}},),
    bad=(
        {**V115, "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}], "kubelet": {"podsPerCore": 10}}},
        {
            **V115,
            "spec": {
                "amiFamily": "AL2",
                "amiSelectorTerms": [{"id": "ami-0123abcd"}],
                "kubelet": {"shutdownGracePeriod": "30s", "clusterDNS": ["10.0.0.10", "10.0.0.11"]},
            },
        },
    ),
)
def unsupported_for_family(obj, ctx) -> Iterator[Violation]:
    yield from violations(unsupported(obj))


def unsupported(obj) -> Iterator[Said]:
    kubelet = kubelet_block(obj)
    family = amifamily.family_of(obj)
    if kubelet is None or family.arbitrary_kubelet or not family.kubelet_checked:
        return
    dropped = sorted(set(kubelet) - MANAGED | ({"podsPerCore"} & set(kubelet) if not family.pods_per_core else set()))
    if dropped:
        yield said(
            f"spec.kubelet has fields not applied by the {family.name} AMI family that would be silently "
            f"dropped: {', '.join(dropped)}"
        )
    dns = kubelet.get("clusterDNS")
    if isinstance(dns, list) and len(dns) > 1:
        yield said(
            f"spec.kubelet.clusterDNS: the {family.name} AMI family doesn't accept multiple entries, only one, "
            f"but {len(dns)} were set"
        )
