"""Karpenter's words around cel-go's: how Karpenter 1.15 wraps a kubelet expression's compile error,
evaluation failure or out-of-range result, and the reserved quantity it makes of a result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core.cel_go import INT64_MAX, INT64_MIN
from karpenter_gitops.karpenter.kubelet.checker import Checked
from karpenter_gitops.karpenter.kubelet.evaluator import EvalError, Vars, evaluate

INT32_MAX = 2**31 - 1


# --- Karpenter's words ------------------------------------------------------------------------
# Karpenter wraps cel-go's errors with operatorpkg's serrors: "<what> (<key>=<value>, ...)", keys
# sorted, one parenthesis per wrap (pkg/cel/environment.go, pkg/controllers/nodeclass/validation.go,
# pkg/providers/instancetype/types.go in v1.15.0).


def _wrap(text: str, **values: Any) -> str:
    shown = ", ".join(f"{key.replace('_', '-')}={values[key]}" for key in sorted(values))
    return f"{text} ({shown})"


def _go_float(value: float) -> str:
    return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")


def compile_failure(field_path: str, checked: Checked, *, snippets: bool = True) -> str | None:
    """The KubeletExpressionInvalid message for an expression that does not compile, or None (it compiles,
    or we cannot tell). Without ``snippets`` it fits one line (cel-go's caret lines left out)."""
    if checked.unsupported is not None:
        return None
    if checked.issues:
        inner = _wrap(f"compiling expression, {checked.errors(snippets=snippets)}", expression=checked.expression)
    elif not checked.numeric:
        inner = _wrap("expression must return int or double", expression=checked.expression, output_type=checked.output)
    else:
        return None
    return _wrap(f"validating expression, {inner}", field=field_path)


@dataclass(frozen=True)
class Result:
    """One expression evaluated for one instance type as Karpenter's EvaluateExpression reads it."""

    value: int | None = None  # the int64 Karpenter keeps (a double truncated toward zero)
    error: str | None = None  # its error, in Karpenter's words, before the caller's wrap


def result(checked: Checked, variables: Vars) -> Result:
    """Karpenter's EvaluateExpression: an int64, or an error (cel-go's, or a non-finite double); Unsupported
    where we cannot follow cel-go."""
    where = {"expression": checked.expression, "instance_type": variables.instance_type}
    try:
        value = evaluate(checked, variables)
    except EvalError as error:
        return Result(error=_wrap(f"evaluating expression, {error}", **where))
    if isinstance(value, float):
        if not math.isfinite(value):
            return Result(error=_wrap("expression returned a non-finite value", **where, value=_go_float(value)))
        # Go's int64(float64) on amd64: a value out of range becomes the minimum int64.
        return Result(INT64_MIN if not INT64_MIN <= value < 2.0**63 else int(value))
    return Result(int(value))


def max_pods_failure(checked: Checked, variables: Vars, outcome: Result) -> str | None:
    """resolveMaxPods' error for one instance type, or None when the value is usable."""
    where = {"expression": checked.expression, "instance_type": variables.instance_type}
    if outcome.error is not None:
        return _wrap(f"evaluating maxPods expression, {outcome.error}", **where)
    if outcome.value is not None and not 0 <= outcome.value <= INT32_MAX:
        return _wrap(
            f"maxPods expression evaluated to a value outside the valid range [0, {INT32_MAX}]", **where, result=outcome.value
        )
    return None


def reserved_failure(checked: Checked, variables: Vars, outcome: Result, field_name: str, key: str) -> str | None:
    """evaluateResourceExpressions' error for one kubeReserved/systemReserved entry, or None."""
    where = {"expression": checked.expression, "instance_type": variables.instance_type, "field": field_name, "key": key}
    if outcome.error is not None:
        return _wrap(f"evaluating kubelet resource expression, {outcome.error}", **where)
    if outcome.value is not None and outcome.value < 0:
        return _wrap("kubelet resource expression evaluated to a negative value", **where, result=outcome.value)
    return None


def _round_up(value: int, granularity: int) -> int:
    if granularity <= 1 or value <= 0 or value % granularity == 0 or value > INT64_MAX - granularity:
        return value
    return (value // granularity + 1) * granularity


def reserved_quantity(key: str, value: int) -> str:
    """The quantity Karpenter writes for a reserved-resource result: cpu in m (up to 10m), memory in Mi
    (up to 16Mi), ephemeral-storage in Gi, anything else bare."""
    if key == "cpu":
        return f"{_round_up(value, 10)}m"
    if key == "memory":
        return f"{_round_up(value, 16)}Mi"
    return f"{value}Gi" if key == "ephemeral-storage" else str(value)
