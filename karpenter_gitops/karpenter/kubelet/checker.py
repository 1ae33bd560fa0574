"""Type-checking a kubelet expression as cel-go does, in Karpenter 1.15's environment.

The native runtime's parser (:mod:`.parsed_expr`, cel-go's grammar) reads the expression and says
what does not parse in cel-go's words; the checker here gives every node its type by cel-go's rules
(overloads with type parameters, dyn and error assignable to anything, no implicit int/double
mixing) and says what it refuses in cel-go's words. Why it stays beside the native runtime, which
evaluates: an expression that does not compile must be refused in Karpenter's words, which are
cel-go's (its checker reports every error, checks each side of ``&&``/``||`` on its own, prints
``int.(double)`` for member calls, and a call with the wrong number of arguments has no matching
overload), and the C++ checker's compile errors say it otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from karpenter_gitops.karpenter.kubelet import parsed_expr
from karpenter_gitops.karpenter.kubelet.cel_types import (
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    ERROR,
    FREE,
    INT,
    MEMBER_OVERLOADS,
    NULL,
    OVERLOADS,
    STRING,
    TYPE_NAMES,
    UINT,
    UNMODELLED,
    VARIABLES,
    T,
    assignable,
    joined,
    list_of,
    map_of,
    match_overload,
)

# --- checking ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    """One cel-go compile error: 1-based line, 0-based column, message."""

    line: int
    column: int
    message: str


class Unsupported(Exception):
    """The expression uses CEL we do not model; there is no verdict."""


@dataclass(frozen=True)
class Checked:
    """An expression parsed and type-checked in Karpenter's environment."""

    expression: str
    output: T | None = None  # its type when it compiles
    issues: tuple[Issue, ...] = ()
    unsupported: str | None = None  # why there is no verdict
    # Some sub-expression is dyn (or null): its run-time errors come from cel-go's dynamic dispatch, whose
    # words ("no such overload", with or without the function) we only approximate.
    dynamic: bool = False
    names: frozenset[str] = frozenset()  # the variables it reads: its value depends on nothing else

    @property
    def compiles(self) -> bool:
        return self.output is not None and not self.issues and self.unsupported is None

    @property
    def numeric(self) -> bool:
        """What Karpenter asks of a compiled expression: an int or a double out."""
        return self.compiles and self.output in (INT, DOUBLE)

    def errors(self, *, snippets: bool = True) -> str:
        """The issues as cel-go's ``issues.Err().Error()`` prints them: position, message, the line and a caret
        (without ``snippets``: the first lines only, joined on one line)."""
        lines = self.expression.splitlines() or [""]
        shown = []
        for issue in sorted(self.issues, key=lambda i: (i.line, i.column)):
            text = f"ERROR: <input>:{issue.line}:{issue.column + 1}: {issue.message}"
            source = lines[issue.line - 1].replace("\t", " ") if issue.line <= len(lines) else ""
            shown.append(f"{text}\n | {source}\n | {'.' * issue.column}^" if snippets else text)
        return ("\n" if snippets else "; ").join(shown)


@lru_cache(maxsize=1024)
def check(expression: str) -> Checked:
    """Parse as cel-go does, then type-check against Karpenter's declarations."""
    try:
        tree, positions = parsed_expr.parse(expression)
    except parsed_expr.NotParsed as refused:
        return Checked(expression, issues=tuple(Issue(i.line, i.column, i.message) for i in refused.issues))
    checker = _Checker(expression, positions)
    try:
        output, _ = checker.visit(tree)
    except Unsupported as why:
        return Checked(expression, unsupported=str(why))
    except RecursionError:  # cel-go refuses deep nesting with its own limit, which we do not model
        return Checked(expression, unsupported="nested too deeply")
    if checker.issues:
        return Checked(expression, issues=tuple(checker.issues))
    return Checked(expression, output=_settled(output), dynamic=checker.dynamic, names=frozenset(checker.names))


def _mentions(t: T, wanted: tuple[T, ...]) -> bool:
    return t in wanted or any(_mentions(p, wanted) for p in t.params)


def _settled(t: T) -> T:
    """A type after checking: free element types print as dyn."""
    return T(t.name, tuple(_settled(p) for p in t.params)) if t.params else (DYN if t == FREE else t)


def _position(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1)


Typed = tuple[T, int]  # a node's type and its location (the offset cel-go reports errors about it at)


class _Checker:
    """cel-go's checker for this environment: every node's type, the issues in its words."""

    def __init__(self, text: str, positions: Mapping[int, int]) -> None:
        self.text = text
        self.positions = positions
        self.issues: list[Issue] = []
        self.dynamic = False
        self.names: set[str] = set()

    def report(self, offset: int, message: str) -> T:
        self.issues.append(Issue(*_position(self.text, offset), message))
        return ERROR

    def visit(self, node: Any) -> Typed:
        kind = node.WhichOneof("expr_kind")
        handler = getattr(self, f"_{kind}", None)
        if handler is None:
            raise Unsupported(f"{kind or 'an empty node'} is not modelled")  # comprehensions: the macros
        typed: Typed = handler(getattr(node, kind), self.positions.get(node.id, 0))
        self.dynamic = self.dynamic or _mentions(typed[0], (DYN, NULL, FREE))
        return typed

    def _const_expr(self, constant: Any, where: int) -> Typed:
        kind = constant.WhichOneof("constant_kind")
        if kind not in _CONSTANT_TYPES:
            raise Unsupported(f"{kind} literals are not modelled")
        return _CONSTANT_TYPES[kind], where

    def _ident_expr(self, ident: Any, where: int) -> Typed:
        name = ident.name
        if name in VARIABLES:
            self.names.add(name)
            return VARIABLES[name], where
        if name in TYPE_NAMES or name.startswith("."):
            raise Unsupported("type values and root-scoped names are not modelled")
        return self.report(where, f"undeclared reference to '{name}' (in container '')"), where

    def _select_expr(self, select: Any, where: int) -> Typed:
        if select.test_only:
            raise Unsupported("has() is not modelled")
        root = _root_ident(select.operand)
        if root is not None and root.ident_expr.name not in VARIABLES and root.ident_expr.name not in TYPE_NAMES:
            if root.ident_expr.name.startswith("."):
                raise Unsupported("root-scoped names are not modelled")
            at = self.positions.get(root.id, 0)  # cel-go resolves a.b.c as a name first: it names the root
            return self.report(at, f"undeclared reference to '{root.ident_expr.name}' (in container '')"), at
        operand, _ = self.visit(select.operand)
        if operand in (ERROR, DYN, FREE):
            return DYN, where
        if operand.name == "map":
            return operand.params[1], where
        self.report(where, f"type '{_shown(operand)}' does not support field selection")
        return DYN, where  # cel-go goes on with dyn here

    def _call_expr(self, call: Any, where: int) -> Typed:
        name = call.function
        if name in _LOGICAL:
            return self.logical(call.args, where), where
        if name in UNMODELLED or name.startswith("."):
            raise Unsupported(f"{name}() is not modelled")
        member = call.HasField("target")
        args = [self.visit(arg) for arg in ((call.target, *call.args) if member else call.args)]
        if name in (MEMBER_OVERLOADS if member else OVERLOADS):
            return self.call(name, args, where, member=member), where
        if name in (OVERLOADS if member else MEMBER_OVERLOADS):  # declared the other way only: no overload matches
            return self.no_overload(name, [t for t, _ in args], where, member=member), where
        return self.report(where, f"undeclared reference to '{name}' (in container '')"), where

    def logical(self, operands: Any, where: int) -> T:
        """cel-go checks each side of && and || on its own: bool (or dyn) wanted."""
        result = BOOL
        for operand, location in map(self.visit, operands):
            if not assignable(operand, BOOL):
                result = self.report(location, f"expected type 'bool' but found '{_shown(operand)}'")
        return result

    def _list_expr(self, created: Any, where: int) -> Typed:
        if created.optional_indices:
            raise Unsupported("optional list elements are not modelled")
        return list_of(joined([self.visit(e)[0] for e in created.elements])), where

    def _struct_expr(self, created: Any, where: int) -> Typed:
        if created.message_name or any(e.optional_entry for e in created.entries):
            raise Unsupported("message literals and optional entries are not modelled")
        keys = [self.visit(entry.map_key)[0] for entry in created.entries]
        values = [self.visit(entry.value)[0] for entry in created.entries]
        return map_of(joined(keys), joined(values)), where

    # overload resolution
    def call(self, name: str, args: list[Typed], where: int, *, member: bool = False) -> T:
        types = [t for t, _ in args]
        overloads = (MEMBER_OVERLOADS if member else OVERLOADS)[name]
        results = [r for sig in overloads if (r := match_overload(sig, types)) is not None]
        if not results:
            return self.no_overload(name, types, where, member=member)
        return results[0] if all(r == results[0] for r in results) else DYN

    def no_overload(self, name: str, args: list[T], where: int, *, member: bool = False) -> T:
        shown = [_shown(t) for t in args]
        listed = f"{shown[0]}.({', '.join(shown[1:])})" if member else f"({', '.join(shown)})"
        return self.report(where, f"found no matching overload for '{name}' applied to '{listed}'")


_LOGICAL = frozenset({"_&&_", "_||_"})
_CONSTANT_TYPES = {
    "null_value": NULL,
    "bool_value": BOOL,
    "int64_value": INT,
    "uint64_value": UINT,
    "double_value": DOUBLE,
    "string_value": STRING,
    "bytes_value": BYTES,
}


def _shown(t: T) -> str:
    """A type as cel-go's error messages print it (``null``, ``!error!``), which differs from its type names."""
    if t.params:
        inner = ", ".join(_shown(p) for p in t.params)
        return f"{t.name}({inner})"
    return {"null_type": "null", "*error*": "!error!", "*free*": "dyn"}.get(t.name, t.name)


def _root_ident(node: Any) -> Any | None:
    """The identifier node a chain of field selections starts from (``a`` in ``a.b.c``), if it is one."""
    while node.WhichOneof("expr_kind") == "select_expr":
        node = node.select_expr.operand
    return node if node.WhichOneof("expr_kind") == "ident_expr" else None
