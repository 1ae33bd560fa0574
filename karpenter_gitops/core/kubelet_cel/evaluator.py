"""Evaluating a checked kubelet expression with cel-go's run-time semantics.

int64 and uint64 overflow are errors, integer division and remainder truncate toward zero, a
double divided by zero is infinite or NaN, and the errors are cel-go's words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core.kubelet_cel.checker import (
    ADDITIONS,
    INT64_MAX,
    INT64_MIN,
    MULTIPLICATIONS,
    RELATIONS,
    UINT64_MAX,
    VARIABLES,
    Checked,
    Uint,
    Unsupported,
    arguments,
    literal,
    unary_run,
)

if TYPE_CHECKING:
    from lark import Tree


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


def evaluate(checked: Checked, variables: Vars) -> int | float:
    """The value of a compiled expression, int or float (a CEL double, maybe non-finite); EvalError on failure,
    Unsupported where we cannot follow cel-go."""
    if not checked.compiles:
        raise ValueError(f"{checked.expression!r} does not compile")
    binding = variables.binding()
    outcome = _evaluated(checked, tuple((name, binding[name]) for name in sorted(checked.names)))
    if isinstance(outcome, EvalError):
        raise EvalError(str(outcome))
    return outcome


@lru_cache(maxsize=65536)
def _evaluated(checked: Checked, binding: tuple[tuple[str, Any], ...]) -> int | float | EvalError:
    """One evaluation per distinct value of the variables an expression reads: instance types share most."""
    try:
        return _Evaluator(dict(binding)).visit(checked.tree)
    except EvalError as error:
        return error
    except RecursionError as error:
        raise Unsupported("nested too deeply") from error
    except TypeError:  # a dyn value of a type the function has no overload for, found at run time
        return EvalError("no such overload")


def _int(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise EvalError("integer overflow")
    return value


def _uint(value: int) -> Uint:
    if not 0 <= value <= UINT64_MAX:
        raise EvalError("unsigned integer overflow")
    return Uint(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Uint):
        return "uint"
    return {int: "int", float: "double", str: "string", bytes: "bytes", tuple: "list", dict: "map"}.get(type(value), "null_type")


def _divide(left: Any, right: Any) -> Any:
    if isinstance(left, float):
        if right == 0:
            return math.copysign(math.inf, left) * math.copysign(1, right) if left and not math.isnan(left) else math.nan
        return left / right
    if right == 0:
        raise EvalError("division by zero")
    quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
    return _uint(quotient) if isinstance(left, Uint) else _int(quotient)


def _modulo(left: int, right: int) -> int:
    if right == 0:
        raise EvalError("modulus by zero")
    if isinstance(left, Uint):
        return Uint(left % right)
    if left == INT64_MIN and right == -1:
        raise EvalError("integer overflow")
    return left - right * _divide(left, right)  # Go's remainder: the sign of the dividend


_ARITHMETIC_KINDS = {"_+_": ("int", "uint", "double", "string", "bytes", "list"), "_%_": ("int", "uint")}


def _arith(op: str, left: Any, right: Any) -> Any:
    if left is None:
        raise EvalError(f"no such overload: {op}")
    if _kind(left) != _kind(right) or _kind(left) not in _ARITHMETIC_KINDS.get(op, ("int", "uint", "double")):
        raise EvalError("no such overload")
    if op == "_/_":
        return _divide(left, right)
    if op == "_%_":
        return _modulo(left, right)
    if isinstance(left, (str, bytes, tuple)):
        return left + right
    value = {"_+_": lambda: left + right, "_-_": lambda: left - right, "_*_": lambda: left * right}[op]()
    if isinstance(left, float):
        return value
    return _uint(value) if isinstance(left, Uint) else _int(value)


def _equal(left: Any, right: Any) -> bool:
    numeric = ("int", "uint", "double")
    if _kind(left) in numeric and _kind(right) in numeric:
        return left == right
    if _kind(left) != _kind(right):
        return False
    if isinstance(left, tuple):
        return len(left) == len(right) and all(_equal(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    return left == right


def _compare(op: str, left: Any, right: Any) -> bool:
    numeric = {_kind(left), _kind(right)} <= {"int", "uint", "double"}  # cel-go compares numbers across types at runtime
    if left is None:
        raise EvalError(f"no such overload: {op}")
    if not numeric and (_kind(left) != _kind(right) or isinstance(left, (tuple, dict))):
        raise EvalError("no such overload")
    return {"_<_": left < right, "_<=_": left <= right, "_>_": left > right, "_>=_": left >= right}[op]


_GO_INT = re.compile(r"^[+-]?\d+$")
_GO_UINT = re.compile(r"^\d+$")
# Go's ParseFloat: its float literals (underscores between digits, hex with a p exponent) and inf/nan words.
_DIGITS, _HEX = r"\d(?:_?\d)*", r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_GO_FLOAT = re.compile(rf"^[+-]?(?:(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?|inf|infinity|nan)$", re.I)
_GO_HEX_FLOAT = re.compile(rf"^[+-]?0[xX]_?(?:{_HEX}(?:\.(?:{_HEX})?)?|\.{_HEX})[pP][+-]?{_DIGITS}$")


def _to_int(value: Any) -> int:
    if isinstance(value, float):
        if math.isnan(value) or not INT64_MIN < value < INT64_MAX:
            raise EvalError("integer overflow")
        return int(value)
    if isinstance(value, str):
        if not _GO_INT.match(value) or not INT64_MIN <= int(value) <= INT64_MAX:
            raise EvalError("type conversion error from 'string' to 'int'")
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise EvalError(f"no such overload: int({_kind(value)})")
    return _int(int(value))


def _to_uint(value: Any) -> Uint:
    if isinstance(value, float):
        if math.isnan(value) or not 0 <= value < UINT64_MAX:
            raise EvalError("unsigned integer overflow")
        return Uint(int(value))
    if isinstance(value, str):
        if not _GO_UINT.match(value) or int(value) > UINT64_MAX:
            raise EvalError("type conversion error from 'string' to 'uint'")
        return Uint(int(value))
    if isinstance(value, bool) or not isinstance(value, int):
        raise EvalError(f"no such overload: uint({_kind(value)})")
    return _uint(int(value))


def _to_double(value: Any) -> float:
    if isinstance(value, str):
        text = value.lower().lstrip("+-")
        number = float(value) if _GO_FLOAT.match(value) else None
        if _GO_HEX_FLOAT.match(value):
            number = float.fromhex(value.replace("_", ""))
        if number is None or (math.isinf(number) and text not in ("inf", "infinity")):
            raise EvalError("type conversion error from 'string' to 'double'")
        return number
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise EvalError(f"no such overload: double({_kind(value)})")
    return float(value)


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        raise Unsupported("string(double) is not modelled")
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (int, str)):
        return str(value)
    raise EvalError(f"no such overload: string({_kind(value)})")


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    truth = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}
    if isinstance(value, str) and value in truth:
        return truth[value]
    raise EvalError("type conversion error from 'string' to 'bool'")


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes, tuple, dict)):
        return len(value)
    raise EvalError("no such overload: size")


def _pick(name: str, better: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """Karpenter's max/min: the left argument when strictly better, else the right (a NaN on the left loses)."""
    def choose(left: Any, right: Any) -> Any:
        if not {_kind(left), _kind(right)} <= {"int", "double"}:
            raise EvalError(f"no such overload: {name}({_kind(left)}, {_kind(right)})")
        if isinstance(left, float) or isinstance(right, float):
            left, right = float(left), float(right)
        return left if better(left, right) else right
    return choose


def _matches(text: str, pattern: str) -> bool:
    try:
        return re.search(pattern, text) is not None
    except re.error as error:
        raise Unsupported("a pattern Python cannot read") from error


_FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "max": _pick("max", lambda a, b: a > b), "min": _pick("min", lambda a, b: a < b), "size": _size,
    "int": _to_int, "uint": _to_uint, "double": _to_double, "string": _to_string, "bool": _to_bool,
    "bytes": lambda v: v.encode() if isinstance(v, str) else v, "dyn": lambda v: v, "matches": _matches,
    "contains": lambda text, part: part in text, "startsWith": str.startswith, "endsWith": str.endswith,
}


class _Evaluator:
    """Evaluates a tree the checker accepted, with cel-go's runtime semantics."""

    def __init__(self, binding: Mapping[str, Any]) -> None:
        self.binding = binding

    def visit(self, node: Tree) -> Any:
        return getattr(self, f"_{node.data}")(node)

    def _expr(self, node: Tree) -> Any:
        if len(node.children) == 1:
            return self.visit(node.children[0])
        condition, yes, no = node.children
        chosen = self.visit(condition)
        if not isinstance(chosen, bool):
            raise EvalError("no such overload")
        return self.visit(yes) if chosen else self.visit(no)

    def _logical(self, node: Tree, decisive: bool) -> Any:
        """CEL's commutative && / ||: a decisive side wins even over an error on the other."""
        if len(node.children) == 1:
            return self.visit(node.children[0])
        outcomes = []
        for side in node.children:
            try:
                value = self.visit(side)
            except EvalError as error:
                outcomes.append(error)
                continue
            if not isinstance(value, bool):
                outcomes.append(EvalError("no such overload"))
                continue
            if value is decisive:
                return decisive
            outcomes.append(value)
        for outcome in outcomes:
            if isinstance(outcome, EvalError):
                raise outcome
        return not decisive

    def _conditionalor(self, node: Tree) -> Any:
        return self._logical(node, True)

    def _conditionaland(self, node: Tree) -> Any:
        return self._logical(node, False)

    def _relation(self, node: Tree) -> Any:
        if len(node.children) == 1:
            return self.visit(node.children[0])
        op, right = node.children
        left_value, right_value = self.visit(op.children[0]), self.visit(right)
        name = RELATIONS[op.data]
        if name == "_==_":
            return _equal(left_value, right_value)
        if name == "_!=_":
            return not _equal(left_value, right_value)
        if name == "@in":
            members = right_value.keys() if isinstance(right_value, dict) else right_value
            return any(_equal(left_value, m) for m in members)
        return _compare(name, left_value, right_value)

    def _arithmetic(self, node: Tree, names: Mapping[str, str]) -> Any:
        if len(node.children) == 1:
            return self.visit(node.children[0])
        op, right = node.children
        return _arith(names[op.data], self.visit(op.children[0]), self.visit(right))

    def _addition(self, node: Tree) -> Any:
        return self._arithmetic(node, ADDITIONS)

    def _multiplication(self, node: Tree) -> Any:
        return self._arithmetic(node, MULTIPLICATIONS)

    def _unary(self, node: Tree) -> Any:
        if len(node.children) == 1:
            return self.visit(node.children[0])
        run, operand = unary_run(node)
        value = self.visit(operand)
        if len(run) % 2 == 0:
            return value
        if run[0] == "unary_not":
            if not isinstance(value, bool):
                raise EvalError("no such overload")
            return not value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, Uint):
            raise EvalError("no such overload")
        return -value if isinstance(value, float) else _int(-value)

    def _member(self, node: Tree) -> Any:
        return self.visit(node.children[0])

    _primary = _paren_expr = _member

    def _member_dot(self, node: Tree) -> Any:
        target, name = node.children
        value = self.visit(target)
        if not isinstance(value, dict) or name.value not in value:
            raise EvalError(f"no such key: {name.value}")
        return value[name.value]

    def _member_dot_arg(self, node: Tree) -> Any:
        target, name, *rest = node.children
        return _FUNCTIONS[name.value](self.visit(target), *(self.visit(a) for a in arguments(rest)))

    def _member_index(self, node: Tree) -> Any:
        target, index = node.children
        container, key = self.visit(target), self.visit(index)
        if isinstance(container, tuple):
            if not isinstance(key, int) or isinstance(key, bool) or not 0 <= key < len(container):
                raise EvalError(f"index out of bounds: {key}")
            return container[key]
        if isinstance(container, dict):
            found = next((k for k in container if _equal(k, key) and _kind(k) == _kind(key)), _MISSING)
            if found is _MISSING:
                raise EvalError(f"no such key: {key}")
            return container[found]
        raise EvalError("no such overload")

    def _ident(self, node: Tree) -> Any:
        return self.binding[node.children[0].value]

    def _ident_arg(self, node: Tree) -> Any:
        name, *rest = node.children
        return _FUNCTIONS[name.value](*(self.visit(a) for a in arguments(rest)))

    def _list_lit(self, node: Tree) -> Any:
        return tuple(self.visit(e) for e in arguments(node.children))

    def _map_lit(self, node: Tree) -> Any:
        entries = node.children[0].children if node.children else []
        values = [self.visit(e) for e in entries]
        return dict(zip(values[0::2], values[1::2], strict=True))

    def _literal(self, node: Tree) -> Any:
        return literal(node.children[0])


_MISSING = object()
