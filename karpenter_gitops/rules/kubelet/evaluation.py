"""Karpenter 1.15's evaluation of the kubelet expressions per instance type, for plan.

Once the AMIs, subnets, groups and profile are resolved, Karpenter's validation reconciler
evaluates the expressions for every instance type it knows (pkg/providers/instancetype:
ValidateKubeletExpressions) and stops at the first failure (KubeletExpressionEvaluationFailed).
It walks its instance types in Go's random map order; we walk them by name, so the type the
predicted message names is the first failing one alphabetically, the same on every run. The
reconciliation reports what this finds as ``live/kubelet-expression-failed`` and
``live/kubelet-expression-unusable`` (declared in :mod:`karpenter_gitops.rules.live`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter import kubelet as kubelet_cel
from karpenter_gitops.rules.kubelet.configuration import integer_field, kubelet_block
from karpenter_gitops.rules.kubelet.expressions import CEL_GATE, expression_texts
from karpenter_gitops.rules.kubelet.validation import validation_failure

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


def cel_variables(
    info: Mapping[str, Any], family: amifamily.Family, max_pods: int | None, pods_per_core: int | None, efa_only: int = 0
) -> kubelet_cel.Vars:
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
    kubelet = kubelet_block(node_class)
    if kubelet is None or not cluster.gate(CEL_GATE) or validation_failure(node_class, cluster) is not None:
        return False
    return bool(texts := expression_texts(kubelet)) and all(kubelet_cel.check(t).compiles for t in texts.values())


def evaluate_expressions(node_class, instance_types: Iterable[Mapping[str, Any]]) -> list[Evaluated]:
    """Every expression of the class for every instance type, by type name; for one type, what follows a failed
    maxPods is not evaluated (Karpenter stops there). Call when :func:`evaluates` says Karpenter gets this far."""
    kubelet = kubelet_block(node_class) or {}
    texts = expression_texts(kubelet)
    family = amifamily.family_of(node_class)
    pods_per_core = integer_field(kubelet, "podsPerCore")
    static_max_pods = integer_field(kubelet, "maxPods")
    efa_only = sum(
        1 for n in node_class.spec.network_interfaces or () if n.network_card_index == 0 and n.interface_type == "efa-only"
    )
    found = []
    for info in sorted(instance_types, key=lambda i: i["InstanceType"]):
        max_pods = static_max_pods
        if (text := texts.get("spec.kubelet.maxPods")) is not None:
            checked = kubelet_cel.check(text)
            variables = cel_variables(info, family, None, pods_per_core, efa_only)  # max_pods can't be its own input
            outcome = kubelet_cel.result(checked, variables)
            failure = kubelet_cel.max_pods_failure(checked, variables, outcome)
            found.append(
                Evaluated(variables.instance_type, "spec.kubelet.maxPods", None if failure else outcome.value, failure, variables)
            )
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
