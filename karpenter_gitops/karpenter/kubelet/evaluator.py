"""Evaluating a checked kubelet expression on the native CEL runtime (cel-expr-python), as cel-go would.

The C++ runtime has cel-go's semantics where Karpenter's expressions need them (int64 and uint64
overflow are errors, integer division and remainder truncate toward zero, a double divided by zero
is infinite or NaN); :mod:`karpenter_gitops.core.cel_go` gives it Go's string conversions and
cel-go's words for its errors. Karpenter's own ``max``/``min`` are declared here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from karpenter_gitops.core import cel_go
from karpenter_gitops.karpenter.kubelet.cel_types import DOUBLE, INT, STRING, VARIABLES
from karpenter_gitops.karpenter.kubelet.checker import Checked, Unsupported


class EvalError(Exception):
    """An evaluation error, in cel-go's words (``division by zero``, ``integer overflow``, ...)."""


@dataclass(frozen=True)
class Vars:
    """The variables Karpenter binds for one instance type (its InstanceTypeVars)."""

    vcpus: int
    memory_mib: int
    default_enis: int
    ips_per_eni: int
    max_pods: int
    instance_type: str

    def binding(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in VARIABLES}


def evaluate(checked: Checked, variables: Vars) -> Any:
    """The value of a compiled expression (a CEL double as a float, maybe non-finite); EvalError on failure,
    Unsupported where we cannot follow cel-go."""
    if not checked.compiles:
        raise ValueError(f"{checked.expression!r} does not compile")
    binding = variables.binding()
    outcome = _evaluated(checked.expression, tuple((name, binding[name]) for name in sorted(checked.names)))
    if isinstance(outcome, EvalError):
        raise EvalError(str(outcome))
    return outcome


@lru_cache(maxsize=65536)
def _evaluated(expression: str, binding: tuple[tuple[str, Any], ...]) -> Any:
    """One evaluation per distinct value of the variables an expression reads: instance types share most."""
    try:
        value = _program(expression).eval(data=dict(binding))
    except RuntimeError as error:  # the runtime gave up (its budgets): no verdict
        raise Unsupported(f"the CEL runtime failed: {error}") from None
    if value.type().name() == "ERROR":
        words = cel_go.cel_go_words(value.value())
        if words.startswith(cel_go.UNMODELLED):
            raise Unsupported(f"{words.removeprefix(cel_go.UNMODELLED)} is not modelled")
        return EvalError(words)
    return value.value()


def _pick(better: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """Karpenter's max/min: the left argument when strictly better, else the right (a NaN on the left loses);
    with a double on either side both are doubles."""

    def choose(left: Any, right: Any) -> Any:
        if isinstance(left, float) or isinstance(right, float):
            left, right = float(left), float(right)
        return left if better(left, right) else right

    return choose


_CONVERSIONS = ("int", "uint", "double", "bool", "string")


@lru_cache(maxsize=1)
def _environment() -> Any:
    """Karpenter's declarations, with Go's conversions; the runtime loads here, with the first expression."""
    from cel_expr_python import cel

    types = {INT: cel.Type.INT, DOUBLE: cel.Type.DOUBLE, STRING: cel.Type.STRING}
    signatures = (
        (types[INT], types[INT], types[INT]),
        (types[DOUBLE], types[DOUBLE], types[DOUBLE]),
        (types[INT], types[DOUBLE], types[DOUBLE]),
        (types[DOUBLE], types[INT], types[DOUBLE]),
    )
    karpenters = [
        cel.FunctionDecl(
            name,
            [
                cel.Overload(f"{name}_{left.name().lower()}_{right.name().lower()}", result, [left, right], impl=_pick(better))
                for left, right, result in signatures
            ],
        )
        for name, better in (("max", lambda a, b: a > b), ("min", lambda a, b: a < b))
    ]
    return cel.NewEnv(
        variables={name: types[t] for name, t in VARIABLES.items()},
        functions=[*karpenters, *cel_go.conversions(*_CONVERSIONS)],
    )


@lru_cache(maxsize=1024)
def _program(expression: str) -> Any:
    try:
        return _environment().compile(cel_go.with_go_conversions(expression, *_CONVERSIONS))
    except RuntimeError as error:  # our checker passed it: a disagreement, not a verdict
        raise Unsupported(f"the CEL runtime does not compile it: {cel_go.compile_error(error)}") from None
