"""``kubelet/`` rules on the CEL expressions of ``spec.kubelet`` (Karpenter 1.15's NodeClassCEL gate): an
expression without the gate (KubeletExpressionsDisabled), one that does not compile to a number
(KubeletExpressionInvalid), and one our checker cannot model (said, not judged)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.karpenter import kubelet as kubelet_cel
from karpenter_gitops.rules.kubelet.configuration import (
    KINDS,
    OPEN,
    V115,
    Said,
    is_quantity,
    kubelet_block,
    said,
    string_map,
    violations,
)
from karpenter_gitops.rules.registry import rule

CEL_GATE = "NodeClassCEL"  # Karpenter's AWS feature gate for expressions in spec.kubelet, off by default


def expressions(kubelet: Mapping[str, Any]) -> list[str]:
    """The paths of CEL expressions in the block: a string maxPods, a reserved value that is no quantity."""
    return list(expression_texts(kubelet))


def expression_texts(kubelet: Mapping[str, Any]) -> dict[str, str]:
    """Path → expression, in the order Karpenter checks them: maxPods, then kubeReserved, then systemReserved.
    Karpenter walks each map in Go's random order; we take the keys sorted, so the first reported is stable."""
    found = {"spec.kubelet.maxPods": kubelet["maxPods"]} if isinstance(kubelet.get("maxPods"), str) else {}
    for field in ("kubeReserved", "systemReserved"):
        values = string_map(kubelet, field)
        found |= {f"spec.kubelet.{field}[{key}]": values[key] for key in sorted(values) if not is_quantity(values[key])}
    return found


@rule(
    "kubelet/expressions-disabled",
    Severity.ERROR,
    KINDS,
    "A CEL expression in spec.kubelet (maxPods as a string, or a kubeReserved/systemReserved value such "
    'as "vcpus * 10") needs Karpenter\'s NodeClassCEL feature gate, which is off by default; without it '
    "the class is ValidationSucceeded=False (KubeletExpressionsDisabled).",
    "Write plain numbers and quantities, or run Karpenter with the gate (--aws-feature-gates NodeClassCEL=true) "
    "and say so in the stack: karpenter-gitops:cluster.featureGates: {NodeClassCEL: true}.",
    since=OPEN,
    good=({**V115, "spec": {"kubelet": {"maxPods": 58, "kubeReserved": {"cpu": "70m"}}}},),
    bad=({**V115, "spec": {"kubelet": {"maxPods": "min(max_pods, 110)"}}},),
)
def expressions_disabled(obj, ctx) -> Iterator[Violation]:
    yield from violations(disabled(obj, ctx.inputs.cluster))


def disabled(obj, cluster: Cluster) -> Iterator[Said]:
    kubelet = kubelet_block(obj)
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
        {
            **V115,
            "featureGates": {CEL_GATE: True},
            "spec": {
                "kubelet": {"maxPods": "min(max_pods, 110)", "kubeReserved": {"cpu": "max(70, vcpus * 10)", "memory": "1Gi"}}
            },
        },
    ),
    bad=(
        {**V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"maxPods": "max_pods * 0.9"}}},
        {**V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"kubeReserved": {"memory": "memory_mb / 100"}}}},
        {**V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"systemReserved": {"cpu": "vcpus > 8"}}}},
    ),
)
def expression_invalid(obj, ctx) -> Iterator[Violation]:
    for (text, where), hint in not_compiling(obj, ctx.inputs.cluster):
        yield Violation(where or "spec.kubelet", text, hint)


def not_compiling(obj, cluster: Cluster, *, snippets: bool = False) -> Iterator[tuple[Said, str]]:
    """Each expression that does not compile: Karpenter's message (one line unless ``snippets``) and our hint."""
    kubelet = kubelet_block(obj)
    if kubelet is None or not cluster.gate(CEL_GATE):
        return
    for path, text in expression_texts(kubelet).items():  # one pass: checked even beside other mistakes
        checked = kubelet_cel.check(text)
        if (message := kubelet_cel.compile_failure(path, checked, snippets=snippets)) is not None:
            yield said(message, path), _expression_hint(checked)


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
    good=({**V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"maxPods": "vcpus > 8 ? 110 : 58"}}},),
    bad=({**V115, "featureGates": {CEL_GATE: True}, "spec": {"kubelet": {"maxPods": "[vcpus, 8].map(x, x * 2)[0]"}}},),
)
def expression_unchecked(obj, ctx) -> Iterator[Violation]:
    kubelet = kubelet_block(obj)
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
