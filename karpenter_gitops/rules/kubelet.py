"""``spec.kubelet`` as Karpenter 1.15 checks it: the block the API server no longer checks.

From 1.15 the EC2NodeClass CRD keeps any kubelet field (the ``cel/kubelet-*`` rules end there).
Karpenter checks the block when it reconciles the class and reports a mistake as
``ValidationSucceeded=False``, so the apply succeeds and no node ever launches. These rules make
the same checks offline, in Karpenter's words (v1.15.0, ``pkg/apis/v1/kubeletconfiguration_validation.go``
and ``pkg/controllers/nodeclass/validation.go``), one rule per condition reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops import families
from karpenter_gitops.core import kubelet_cel
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.core.kubelet_fields import KUBELET_CONFIGURATION_FIELDS
from karpenter_gitops.core.model import EC2NODECLASS, QUANTITY, KubeletConfiguration
from karpenter_gitops.core.schema import crd_regex, fields_of
from karpenter_gitops.rules.registry import rule

KINDS = (EC2NODECLASS,)
OPEN = KubeletConfiguration.OPEN_SINCE
_V115 = {"karpenterVersion": "1.15"}
CEL_GATE = "NodeClassCEL"  # Karpenter's AWS feature gate for expressions in spec.kubelet, off by default

#: The twelve fields Karpenter reads itself and maps for every family (its ParsedKubeletConfig).
MANAGED = frozenset(fields_of(KubeletConfiguration))
EVICTION_SIGNALS = ("memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available")
RESERVABLE = ("cpu", "memory", "ephemeral-storage", "pid")
_OWNED = {"registerWithTaints": "Karpenter sets it from the NodeClaim's taints so the node registers unschedulable until it's ready"}
# The Go type the upstream KubeletConfiguration gives each managed field, for the decoder's message.
_GO_TYPES = {
    "clusterDNS": "[]string", "cpuCFSQuota": "bool", "maxPods": "int32", "podsPerCore": "int32",
    "evictionMaxPodGracePeriod": "int32", "imageGCHighThresholdPercent": "int32", "imageGCLowThresholdPercent": "int32",
    **dict.fromkeys(("kubeReserved", "systemReserved", "evictionHard", "evictionSoft", "evictionSoftGracePeriod"), "map[string]string"),
}
_DURATION = re.compile(r"^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+\Z|^[-+]?0\Z")


Said = tuple[str, str | None]  # Karpenter's message, and where to point when not at the path it starts with


def _said(text: str, where: str | None = None) -> Said:
    return text, where


def _violations(said: Iterator[Said]) -> Iterator[Violation]:
    """Karpenter's messages ``"<path>: <what>"`` as violations at their path (or ``where``), the path shown once."""
    for text, where in said:
        path, colon, what = text.partition(": ")
        is_path = colon and path.startswith("spec.") and " " not in path
        yield Violation(where or path, what) if is_path else Violation(where or "spec.kubelet", text)


def _kubelet(obj) -> Mapping[str, Any] | None:
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


def _strings(kubelet: Mapping[str, Any], field: str) -> Mapping[str, str]:
    value = kubelet.get(field)
    return value if isinstance(value, Mapping) and all(isinstance(v, str) for v in value.values()) else {}


def _integer(kubelet: Mapping[str, Any], field: str) -> int | None:
    value = kubelet.get(field)
    return int(value) if _fits("int32", value) else None


def _is_quantity(text: str) -> bool:
    return bool(crd_regex(QUANTITY).search(text))


def _threshold_problem(field: str, key: str, value: str) -> str | None:
    """A percentage (0–100) or a non-negative quantity, as the kubelet reads an eviction threshold."""
    if value.endswith("%"):
        try:
            percent = float(value[:-1])
        except ValueError:
            percent = -1.0
        return None if 0 <= percent <= 100 else f'spec.kubelet.{field}[{key}]: "{value}" must be a percentage or a resource quantity'
    if not _is_quantity(value):
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
        {**_V115, "spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}],
                           "kubelet": {"maxPods": 110, "shutdownGracePeriod": "30s", "kubeReserved": {"cpu": "100m"}}}},
    ),
    bad=(
        {**_V115, "spec": {"kubelet": {"maxPod": 110}}},
        {**_V115, "spec": {"kubelet": {"evictionSoft": {"memory.available": "10%"}}}},
        {**_V115, "spec": {"kubelet": {"registerWithTaints": [{"key": "a", "effect": "NoSchedule"}]}}},
    ),
)
def invalid_configuration(obj, ctx) -> Iterator[Violation]:
    yield from _violations(_invalid(obj))


def _invalid(obj) -> Iterator[Said]:
    if (kubelet := _kubelet(obj)) is not None:
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
            kind = _json_kind(next((v for v in value.values() if not isinstance(v, str)), value) if isinstance(value, Mapping) else value)
            yield _said(f"spec.kubelet: json: cannot unmarshal {kind} into Go struct field "
                        f"KubeletConfiguration.{field} of type {shown}", f"spec.kubelet.{field}")
            return
    for field in kubelet:
        if field not in KUBELET_CONFIGURATION_FIELDS:
            yield _said(f'spec.kubelet: unknown field "{field}"', f"spec.kubelet.{field}")


def _semantics(kubelet: Mapping[str, Any]) -> Iterator[Said]:
    for field in sorted(_OWNED):
        if field in kubelet:
            yield _said(f"spec.kubelet.{field}: can't be set, {_OWNED[field]}")
    for field in ("evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim"):
        signals = _strings(kubelet, field)
        for key in sorted(signals):
            if key not in EVICTION_SIGNALS:
                yield _said(f'spec.kubelet.{field}: "{key}" isn\'t a valid eviction signal, must be one of {", ".join(EVICTION_SIGNALS)}')
            check = _grace_problem if field == "evictionSoftGracePeriod" else _threshold_problem
            if (problem := check(field, key, signals[key])) is not None:
                yield _said(problem)
    soft, grace = _strings(kubelet, "evictionSoft"), _strings(kubelet, "evictionSoftGracePeriod")
    for signal in sorted(set(soft) - set(grace)):
        yield _said(f"spec.kubelet.evictionSoft[{signal}]: has no matching evictionSoftGracePeriod")
    for signal in sorted(set(grace) - set(soft)):
        yield _said(f"spec.kubelet.evictionSoftGracePeriod[{signal}]: has no matching evictionSoft")
    for field in ("kubeReserved", "systemReserved"):
        reserved = _strings(kubelet, field)
        for key in sorted(reserved):
            if key not in RESERVABLE:
                yield _said(f'spec.kubelet.{field}: "{key}" isn\'t a reservable resource, must be one of {", ".join(RESERVABLE)}')
            if reserved[key].startswith("-"):
                yield _said(f'spec.kubelet.{field}[{key}]: "{reserved[key]}" can\'t be a negative resource quantity')
    for field in ("imageGCHighThresholdPercent", "imageGCLowThresholdPercent"):
        if (value := _integer(kubelet, field)) is not None and not 0 <= value <= 100:
            yield _said(f"spec.kubelet.{field}: {value} must be between 0 and 100")
    for field in ("podsPerCore", "evictionMaxPodGracePeriod", "maxPods"):
        if (value := _integer(kubelet, field)) is not None and value < 0:
            yield _said(f"spec.kubelet.{field}: {value} can't be negative")
    high, low = _integer(kubelet, "imageGCHighThresholdPercent"), _integer(kubelet, "imageGCLowThresholdPercent")
    if high is not None and low is not None and high <= low:
        yield _said(f"spec.kubelet: imageGCHighThresholdPercent ({high}) must be greater than imageGCLowThresholdPercent ({low})")


def expressions(kubelet: Mapping[str, Any]) -> list[str]:
    """The paths of CEL expressions in the block: a string maxPods, a reserved value that is no quantity."""
    return list(expression_texts(kubelet))


def expression_texts(kubelet: Mapping[str, Any]) -> dict[str, str]:
    """Path → expression, in the order Karpenter checks them: maxPods, then kubeReserved, then systemReserved.
    Karpenter walks each map in Go's random order; we take the keys sorted, so the first reported is stable."""
    found = {"spec.kubelet.maxPods": kubelet["maxPods"]} if isinstance(kubelet.get("maxPods"), str) else {}
    for field in ("kubeReserved", "systemReserved"):
        values = _strings(kubelet, field)
        found |= {f"spec.kubelet.{field}[{key}]": values[key] for key in sorted(values) if not _is_quantity(values[key])}
    return found


@rule(
    "kubelet/expressions-disabled",
    Severity.ERROR,
    KINDS,
    "A CEL expression in spec.kubelet (maxPods as a string, or a kubeReserved/systemReserved value such "
    "as \"vcpus * 10\") needs Karpenter's NodeClassCEL feature gate, which is off by default; without it "
    "the class is ValidationSucceeded=False (KubeletExpressionsDisabled).",
    "Write plain numbers and quantities, or run Karpenter with the gate (--aws-feature-gates NodeClassCEL=true) "
    "and say so in the stack: karpenter-gitops:cluster.featureGates: {NodeClassCEL: true}.",
    since=OPEN,
    good=({**_V115, "spec": {"kubelet": {"maxPods": 58, "kubeReserved": {"cpu": "70m"}}}},),
    bad=({**_V115, "spec": {"kubelet": {"maxPods": "min(max_pods, 110)"}}},),
)
def expressions_disabled(obj, ctx) -> Iterator[Violation]:
    yield from _violations(_expressions_disabled(obj, ctx.inputs.cluster))


def _expressions_disabled(obj, cluster: Cluster) -> Iterator[Said]:
    kubelet = _kubelet(obj)
    if kubelet is not None and not cluster.gate(CEL_GATE) and (found := expressions(kubelet)):
        yield "spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled", found[0]


_VARIABLE_NAMES = ", ".join(kubelet_cel.VARIABLES)


@rule(
    "kubelet/expression-invalid",
    Severity.ERROR,
    KINDS,
    "With the NodeClassCEL gate on, Karpenter 1.15 compiles every expression in spec.kubelet (a string "
    "maxPods, a kubeReserved/systemReserved value that is no quantity) with cel-go against its variables "
    f"({_VARIABLE_NAMES}) and max/min; one that does not compile or does not give an int or a double makes "
    "the class ValidationSucceeded=False (KubeletExpressionInvalid), and no node launches.",
    "CEL never mixes int and double: write 70 or 70.0 to match the other side, or convert with double(vcpus) "
    f"/ int(...); the only names are {_VARIABLE_NAMES}; the result must be a number (a condition goes in a ternary: "
    "vcpus > 8 ? 110 : 58).",
    since=OPEN,
    good=(
        {**_V115, "featureGates": {CEL_GATE: True},
         "spec": {"kubelet": {"maxPods": "min(max_pods, 110)", "kubeReserved": {"cpu": "max(70, vcpus * 10)", "memory": "1Gi"}}}},
    ),
    bad=(
        {**_V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"maxPods": "max_pods * 0.9"}}},
        {**_V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"kubeReserved": {"memory": "memory_mb / 100"}}}},
        {**_V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"systemReserved": {"cpu": "vcpus > 8"}}}},
    ),
)
def expression_invalid(obj, ctx) -> Iterator[Violation]:
    for (text, where), hint in _expressions_invalid(obj, ctx.inputs.cluster):
        yield Violation(where or "spec.kubelet", text, hint)


def _expressions_invalid(obj, cluster: Cluster, *, snippets: bool = False) -> Iterator[tuple[Said, str]]:
    """Each expression that does not compile: Karpenter's message (one line unless ``snippets``) and our hint."""
    kubelet = _kubelet(obj)
    if kubelet is None or not cluster.gate(CEL_GATE):
        return
    for path, text in expression_texts(kubelet).items():  # one pass: checked even beside other mistakes
        checked = kubelet_cel.check(text)
        if (message := kubelet_cel.compile_failure(path, checked, snippets=snippets)) is not None:
            yield _said(message, path), _expression_hint(checked)


@rule(
    "kubelet/expression-unchecked",
    Severity.INFO,
    KINDS,
    "An expression in spec.kubelet uses CEL our checker does not model (macros such as has() or map(), "
    "timestamps, durations, type values): it is not compiled or evaluated offline, so neither validate nor "
    "plan can say whether Karpenter takes it; Karpenter will, when it reconciles the class.",
    "Prefer the arithmetic, comparisons, ternaries, max/min and conversions Karpenter's own examples use; "
    "otherwise watch the class's ValidationSucceeded condition after the change.",
    since=OPEN,
    good=({**_V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"maxPods": "vcpus > 8 ? 110 : 58"}}},),
    bad=({**_V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"maxPods": "[vcpus, 8].map(x, x * 2)[0]"}}},),
)
def expression_unchecked(obj, ctx) -> Iterator[Violation]:
    kubelet = _kubelet(obj)
    if kubelet is None or not ctx.inputs.cluster.gate(CEL_GATE):
        return
    for path, text in expression_texts(kubelet).items():
        if (why := kubelet_cel.check(text).unsupported) is not None:
            yield Violation(path, f"not checked offline ({why}): {text}")


def _expression_hint(checked: kubelet_cel.Checked) -> str:
    said = " ".join(issue.message for issue in checked.issues)
    if "(int, double)" in said or "(double, int)" in said:
        return "CEL never mixes int and double: write both sides alike (110 or 110.0), or convert with double(...) / int(...)"
    if "undeclared reference" in said:
        return f"the only names are {_VARIABLE_NAMES} (and the functions max, min)"
    if checked.issues:
        return "fix the expression at the position the message points to"
    return f"the expression gives {checked.output}; it must give a number (a condition goes in a ternary: vcpus > 8 ? 110 : 58)"


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
    good=({**_V115, "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}], "kubelet": {"maxPods": 110}}},),
    bad=(
        {**_V115, "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}], "kubelet": {"podsPerCore": 10}}},
        {**_V115, "spec": {"amiFamily": "AL2", "amiSelectorTerms": [{"id": "ami-0123abcd"}],
                           "kubelet": {"shutdownGracePeriod": "30s", "clusterDNS": ["10.0.0.10", "10.0.0.11"]}}},
    ),
)
def unsupported_for_family(obj, ctx) -> Iterator[Violation]:
    yield from _violations(_unsupported(obj))


def _unsupported(obj) -> Iterator[Said]:
    kubelet = _kubelet(obj)
    family = families.family_of(obj)
    if kubelet is None or family.arbitrary_kubelet or not family.kubelet_checked:
        return
    dropped = sorted(set(kubelet) - MANAGED | ({"podsPerCore"} & set(kubelet) if not family.pods_per_core else set()))
    if dropped:
        yield _said(f"spec.kubelet has fields not applied by the {family.name} AMI family that would be silently "
                    f"dropped: {', '.join(dropped)}")
    dns = kubelet.get("clusterDNS")
    if isinstance(dns, list) and len(dns) > 1:
        yield _said(f"spec.kubelet.clusterDNS: the {family.name} AMI family doesn't accept multiple entries, only one, "
                    f"but {len(dns)} were set")


# Karpenter's order of the kubelet checks in its validation reconciler; the first that fails is the reason.
_REASONS: tuple[tuple[str, Callable[[Any, Cluster], Iterator[Said]]], ...] = (
    ("InvalidKubeletConfiguration", lambda obj, _cluster: _invalid(obj)),
    ("KubeletExpressionsDisabled", _expressions_disabled),
    # Karpenter stops at the first expression that does not compile, and shows cel-go's caret lines.
    ("KubeletExpressionInvalid", lambda obj, cluster: (said for said, _ in _expressions_invalid(obj, cluster, snippets=True))),
    ("UnsupportedKubeletConfiguration", lambda obj, _cluster: _unsupported(obj)),
)


def validation_failure(node_class, cluster: Cluster) -> tuple[str, str] | None:
    """(reason, message) of the ValidationSucceeded=False Karpenter 1.15+ sets for the class's kubelet
    block, or None; its checks run before it waits for the AMI, subnet, group and profile resolution."""
    for reason, check in _REASONS:
        if said := [text for text, _ in check(node_class, cluster)]:
            return reason, said[0] if reason == "KubeletExpressionInvalid" else "; ".join(said)
    return None


# --- evaluation per instance type (plan) ---------------------------------------------------------
# Karpenter 1.15's validation reconciler, once the AMIs, subnets, groups and profile are resolved,
# evaluates the expressions for every instance type it knows (pkg/providers/instancetype:
# ValidateKubeletExpressions) and stops at the first failure (KubeletExpressionEvaluationFailed).
# It walks its instance types in Go's random map order; we walk them by name, so the type the
# predicted message names is the first failing one alphabetically, the same on every run.

EVALUATION_FAILED = "KubeletExpressionEvaluationFailed"
EKS_MAX_PODS = 250  # the most pods EKS supports on a node
SMALL_NODE_MAX_PODS, SMALL_NODE_VCPUS = 110, 30  # EKS's guidance: at most 110 pods below 30 vCPUs


@dataclass(frozen=True)
class Evaluated:
    """One expression of a class evaluated for one instance type, as Karpenter evaluates it."""

    instance_type: str
    path: str
    value: int | None  # the int Karpenter uses; None when the evaluation failed
    failure: str | None  # Karpenter's message when it fails
    variables: kubelet_cel.Vars


def _eni_limited_pods(info: Mapping[str, Any], efa_only: int) -> int:
    """Karpenter's ENILimitedPods: usable ENIs of the default card × (IPv4 per ENI − 1) + 2."""
    enis, ips = _eni_limits(info)
    usable = max(enis - efa_only, 0)  # Karpenter's --reserved-enis defaults to 0
    return usable * (ips - 1) + 2 if usable else 0


def _eni_limits(info: Mapping[str, Any]) -> tuple[int, int]:
    network = info.get("NetworkInfo") or {}
    cards, index = network.get("NetworkCards") or [], network.get("DefaultNetworkCardIndex")
    enis = cards[index].get("MaximumNetworkInterfaces", 0) if isinstance(index, int) and 0 <= index < len(cards) else 0
    return enis, network.get("Ipv4AddressesPerInterface", 0)


def cel_variables(info: Mapping[str, Any], family: families.Family, max_pods: int | None, pods_per_core: int | None,
                  efa_only: int = 0) -> kubelet_cel.Vars:
    """Karpenter's buildCELVars: the instance type's facts, and max_pods as its pods() works it out."""
    vcpus = (info.get("VCpuInfo") or {}).get("DefaultVCpus", 0)
    if max_pods is None:
        max_pods = _eni_limited_pods(info, efa_only) if family.eni_limited_pods else 110
    if pods_per_core and pods_per_core > 0 and family.pods_per_core:
        max_pods = min(pods_per_core * vcpus, max_pods)
    enis, ips = _eni_limits(info)
    return kubelet_cel.Vars(vcpus, (info.get("MemoryInfo") or {}).get("SizeInMiB", 0), enis, ips, max_pods, info["InstanceType"])


def evaluates(node_class, cluster: Cluster) -> bool:
    """Whether Karpenter gets as far as evaluating the class's expressions: gate on, every one compiles."""
    kubelet = _kubelet(node_class)
    if kubelet is None or not cluster.gate(CEL_GATE) or validation_failure(node_class, cluster) is not None:
        return False
    return bool(texts := expression_texts(kubelet)) and all(kubelet_cel.check(t).compiles for t in texts.values())


def evaluate_expressions(node_class, instance_types: Iterable[Mapping[str, Any]]) -> list[Evaluated]:
    """Every expression of the class for every instance type, by type name; for one type, what follows a failed
    maxPods is not evaluated (Karpenter stops there). Call when :func:`evaluates` says Karpenter gets this far."""
    kubelet = _kubelet(node_class) or {}
    texts = expression_texts(kubelet)
    family = families.family_of(node_class)
    pods_per_core = _integer(kubelet, "podsPerCore")
    static_max_pods = _integer(kubelet, "maxPods")
    efa_only = sum(1 for n in node_class.spec.network_interfaces or () if n.network_card_index == 0 and n.interface_type == "efa-only")
    found = []
    for info in sorted(instance_types, key=lambda i: i["InstanceType"]):
        max_pods = static_max_pods
        if (text := texts.get("spec.kubelet.maxPods")) is not None:
            checked = kubelet_cel.check(text)
            variables = cel_variables(info, family, None, pods_per_core, efa_only)  # max_pods can't be its own input
            outcome = kubelet_cel.result(checked, variables)
            failure = kubelet_cel.max_pods_failure(checked, variables, outcome)
            found.append(Evaluated(variables.instance_type, "spec.kubelet.maxPods", None if failure else outcome.value, failure, variables))
            if failure:
                continue
            max_pods = outcome.value
        variables = cel_variables(info, family, max_pods, pods_per_core, efa_only)
        for path, text in texts.items():
            if path == "spec.kubelet.maxPods":
                continue
            field_name, key = path.removeprefix("spec.kubelet.").rstrip("]").split("[", 1)
            checked = kubelet_cel.check(text)
            outcome = kubelet_cel.result(checked, variables)
            failure = kubelet_cel.reserved_failure(checked, variables, outcome, field_name, key)
            found.append(Evaluated(variables.instance_type, path, None if failure else outcome.value, failure, variables))
    return found


def first_failure(evaluated: Iterable[Evaluated]) -> str | None:
    """The message Karpenter sets: the first failure of the first failing type (in our name order)."""
    return next((e.failure for e in evaluated if e.failure), None)


_FAILURE_HINTS = (
    ("by zero", "guard the divisor, e.g. (default_enis - 2) > 0 ? memory_mib / (default_enis - 2) : 255"),
    ("non-finite", "a double divided by zero is Inf or NaN: guard the divisor, e.g. x > 0.0 ? a / x : a"),
    ("integer overflow", "keep int arithmetic within int64: divide before multiplying, or bound it with min()"),
    ("outside the valid range", "clamp it: max(0, min(..., 110))"),
    ("negative value", "clamp it: max(0, ...)"),
)


def failure_hint(message: str) -> str | None:
    """Our fix for one of Karpenter's evaluation failures."""
    return next((hint for said, hint in _FAILURE_HINTS if said in message), None)


def implausible(e: Evaluated) -> str | None:
    """What is wrong with a value Karpenter accepts for this instance type, in our words; None when it is usable."""
    if e.value is None:
        return None
    v = e.variables
    if e.path == "spec.kubelet.maxPods":
        if e.value == 0:
            return "maxPods 0: no pod can run"
        if e.value > EKS_MAX_PODS:
            return f"maxPods {e.value}: more than the {EKS_MAX_PODS} EKS supports on a node"
        if e.value > SMALL_NODE_MAX_PODS and v.vcpus < SMALL_NODE_VCPUS:
            return f"maxPods {e.value} on {v.vcpus} vCPUs: EKS recommends at most {SMALL_NODE_MAX_PODS} below {SMALL_NODE_VCPUS} vCPUs"
        return None
    key = e.path.rstrip("]").split("[", 1)[1]
    quantity = kubelet_cel.reserved_quantity(key, e.value)
    if key == "memory" and int(quantity[:-2]) >= v.memory_mib:
        return f"reserves {quantity} of its {v.memory_mib}Mi memory: nothing is left for pods"
    if key == "cpu" and int(quantity[:-1]) >= v.vcpus * 1000:
        return f"reserves {quantity} of its {v.vcpus * 1000}m CPU: nothing is left for pods"
    return None
