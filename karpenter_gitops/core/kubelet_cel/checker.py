"""Parsing and type-checking a kubelet expression as cel-go does, in Karpenter 1.15's environment.

celpy's grammar parses CEL; the checker here gives every node its type and location by cel-go's
rules (overloads with type parameters, dyn and error assignable to anything, no implicit int/double
mixing) and says what it refuses in cel-go's words. Why it stays beside the native runtime, which
evaluates: an expression that does not compile must be refused in Karpenter's words, which are
cel-go's (its error recovery reports every error, it prints ``int.(double)`` for member calls and
the argument types of a missing overload), and the C++ runtime's compile errors say it otherwise.
Pure: it reads nothing but celpy's packaged grammar.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core.kubelet_cel.cel_literals import literal
from karpenter_gitops.core.kubelet_cel.cel_types import (
    assignable,
    BOOL,
    BYTES,
    DOUBLE,
    DYN,
    ERROR,
    FREE,
    INT,
    joined,
    list_of,
    map_of,
    match_overload,
    MEMBER_OVERLOADS,
    NULL,
    OVERLOADS,
    STRING,
    T,
    TYPE_NAMES,
    UINT,
    UNMODELLED,
    VARIABLES,
)

if TYPE_CHECKING:  # celpy and lark load on the first check: commands that meet no expression never pay for them
    from lark import Lark, Token, Tree


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
    """Parse with celpy, then type-check against Karpenter's declarations."""
    from lark.exceptions import LarkError, UnexpectedInput

    try:
        tree = _parser().parse(expression)
    except UnexpectedInput as error:
        line, column = max(error.line, 1), max(error.column - 1, 0)
        return Checked(expression, issues=(Issue(line, column, f"Syntax error: {str(error).splitlines()[0]}"),))
    except LarkError as error:
        return Checked(expression, issues=(Issue(1, 0, f"Syntax error: {str(error).splitlines()[0]}"),))
    checker = _Checker(expression)
    try:
        output, _ = checker.visit(tree)
    except Unsupported as why:
        return Checked(expression, unsupported=str(why))
    except RecursionError:  # cel-go refuses deep nesting with its own limit, which we do not model
        return Checked(expression, unsupported="nested too deeply")
    if checker.parse_issues or checker.issues:
        return Checked(expression, issues=tuple(checker.parse_issues or checker.issues))
    return Checked(expression, output=_settled(output), dynamic=checker.dynamic, names=frozenset(checker.names))


def _mentions(t: T, wanted: tuple[T, ...]) -> bool:
    return t in wanted or any(_mentions(p, wanted) for p in t.params)


def _keyword(token: Token) -> Token:
    """celpy's lexer callback for true/false, keeping the token's position (celpy's drops it)."""
    return token.new_borrow_pos("BOOL_LIT", token.value, token) if token.value in ("true", "false") else token


@lru_cache(maxsize=1)
def _parser() -> Lark:
    """celpy's CEL grammar (its package's cel.lark) in a parser of our own, so every node knows where it is."""
    from lark import Lark

    return Lark.open_from_package("celpy", "cel.lark", parser="lalr", start="expr", g_regex_flags=re.M,
                                  lexer_callbacks={"IDENT": _keyword}, propagate_positions=True,
                                  maybe_placeholders=False, priority="invert")


def _settled(t: T) -> T:
    """A type after checking: free element types print as dyn."""
    return T(t.name, tuple(_settled(p) for p in t.params)) if t.params else (DYN if t == FREE else t)


def _position(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1)


def _after(text: str, offset: int) -> int:
    """The offset of the next token after ``offset``, past blanks and comments (where an operator is)."""
    while offset < len(text):
        if text[offset].isspace():
            offset += 1
        elif text.startswith("//", offset):
            offset = text.find("\n", offset) if "\n" in text[offset:] else len(text)
        else:
            break
    return offset




Typed = tuple[T, int]  # a node's type and its location (the offset cel-go reports errors about it at)


class _Checker:
    """cel-go's checker for this environment: every node's type and location, the issues in its words."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.issues: list[Issue] = []
        self.parse_issues: list[Issue] = []
        self.dynamic = False
        self.names: set[str] = set()
        self.positive: set[int] = set()  # ids of literal tokens whose minus sign cel-go reads as an operator

    def report(self, offset: int, message: str, *, parsing: bool = False) -> T:
        """Record an issue; ``parsing`` marks what cel-go's parser refuses, which leaves nothing to check."""
        (self.parse_issues if parsing else self.issues).append(Issue(*_position(self.text, offset), message))
        return ERROR

    def operator_at(self, left: Tree) -> int:
        return _after(self.text, left.meta.end_pos)

    def visit(self, node: Tree) -> Typed:
        handler = getattr(self, f"_{node.data}", None)
        if handler is None:
            raise Unsupported(f"{node.data} is not modelled")
        typed = handler(node)
        self.dynamic = self.dynamic or _mentions(typed[0], (DYN, NULL, FREE))
        return typed

    def _only(self, node: Tree) -> Typed:
        return self.visit(node.children[0])

    _member = _primary = _paren_expr = _only

    # precedence levels: one child passes through, more make a call
    def _expr(self, node: Tree) -> Typed:
        if len(node.children) == 1:
            return self._only(node)
        condition, yes, no = node.children
        where = self.operator_at(condition)
        return self.call("_?_:_", [self.visit(condition), self.visit(yes), self.visit(no)], where), where

    def _logical(self, node: Tree) -> Typed:
        """cel-go checks each side of && and || on its own: bool (or dyn) wanted."""
        if len(node.children) == 1:
            return self._only(node)
        left, right = node.children
        result = BOOL
        for operand, location in (self.visit(left), self.visit(right)):
            if not assignable(operand, BOOL):
                result = self.report(location, f"expected type 'bool' but found '{_shown(operand)}'")
        return result, self.operator_at(left)

    _conditionalor = _conditionaland = _logical

    def _operation(self, node: Tree, names: Mapping[str, str]) -> Typed:
        if len(node.children) == 1:
            return self._only(node)
        op, right = node.children
        left = op.children[0]
        where = self.operator_at(left)
        return self.call(names[op.data], [self.visit(left), self.visit(right)], where), where

    def _relation(self, node: Tree) -> Typed:
        return self._operation(node, RELATIONS)

    def _addition(self, node: Tree) -> Typed:
        return self._operation(node, ADDITIONS)

    def _multiplication(self, node: Tree) -> Typed:
        return self._operation(node, MULTIPLICATIONS)

    def _unary(self, node: Tree) -> Typed:
        run, operand = unary_run(node) if len(node.children) == 2 else ([], node.children[0])
        if len(set(run)) > 1:
            second = _after(self.text, node.meta.start_pos + 1)
            return self.report(second, "Syntax error: no viable alternative at input", parsing=True), second
        head, chained = _signed_head(operand)
        # celpy lexes a minus sign into the literal that follows it ("--5" is - and -5, "-1u.size()" is
        # (-1u).size()); cel-go keeps it an operator when it follows another one or when a uint follows it
        moved = head is not None and set(run) <= {"unary_neg"} and bool(run or head.type == "UINT_LIT")
        if moved:
            self.positive.add(id(head))
            run = [*run, "unary_neg"]
        if len(run) % 2 == 0:  # cel-go drops an even run: the operand, where it is
            typed, where = self.visit(operand)
            return typed, (head.start_pos + 1 if moved and not chained else where)
        where = node.meta.start_pos
        return self.call("!_" if run[0] == "unary_not" else "-_", [self.visit(operand)], where), where

    def _member_dot(self, node: Tree) -> Typed:
        target, _name = node.children
        where = self.operator_at(target)
        root = _root_ident(target)
        if root is not None and root.value not in VARIABLES and root.value not in TYPE_NAMES:
            return self.report(root.start_pos, f"undeclared reference to '{root.value}' (in container '')"), root.start_pos
        operand, _ = self.visit(target)
        if operand in (ERROR, DYN, FREE):
            return DYN, where
        if operand.name == "map":
            return operand.params[1], where
        self.report(where, f"type '{_shown(operand)}' does not support field selection")
        return DYN, where  # cel-go goes on with dyn here

    def _member_dot_arg(self, node: Tree) -> Typed:
        target, name, *rest = node.children
        if name.value in UNMODELLED:
            raise Unsupported(f"{name.value}() is not modelled")
        receiver = self.visit(target)
        args = [receiver, *(self.visit(arg) for arg in arguments(rest))]
        where = self.text.index("(", name.end_pos)
        if name.value in MEMBER_OVERLOADS:
            return self.call(name.value, args, where, member=True), where
        if name.value in OVERLOADS:  # a global function called on a receiver: declared, so no overload matches
            return self.no_overload(name.value, [t for t, _ in args], where, member=True), where
        return self.report(where, f"undeclared reference to '{name.value}' (in container '')"), where

    def _member_index(self, node: Tree) -> Typed:
        target, index = node.children
        where = self.operator_at(target)
        return self.call("_[_]", [self.visit(target), self.visit(index)], where), where

    def _ident(self, node: Tree) -> Typed:
        token = node.children[0]
        if token.value in VARIABLES:
            self.names.add(token.value)
            return VARIABLES[token.value], token.start_pos
        if token.value in TYPE_NAMES:
            raise Unsupported("type values are not modelled")
        return self.report(token.start_pos, f"undeclared reference to '{token.value}' (in container '')"), token.start_pos

    def _ident_arg(self, node: Tree) -> Typed:
        name, *rest = node.children
        if name.value in UNMODELLED:
            raise Unsupported(f"{name.value}() is not modelled")
        args = [self.visit(arg) for arg in arguments(rest)]
        where = self.text.index("(", name.end_pos)
        if name.value in OVERLOADS:
            return self.call(name.value, args, where), where
        if name.value in MEMBER_OVERLOADS:  # declared only receiver-style, so no global overload matches
            return self.no_overload(name.value, [t for t, _ in args], where), where
        return self.report(where, f"undeclared reference to '{name.value}' (in container '')"), where

    def _list_lit(self, node: Tree) -> Typed:
        elements = [self.visit(e)[0] for e in arguments(node.children)]
        return list_of(joined(elements)), node.meta.start_pos

    def _map_lit(self, node: Tree) -> Typed:
        entries = node.children[0].children if node.children else []
        types = [self.visit(e)[0] for e in entries]
        return map_of(joined(types[0::2]), joined(types[1::2])), node.meta.start_pos

    def _literal(self, node: Tree) -> Typed:
        token: Token = node.children[0]
        start = token.start_pos
        if id(token) in self.positive:  # its minus sign is an operator in cel-go's reading (see _unary)
            token, start = token.update(value=token.value[1:]), start + 1
        try:
            literal(token)
        except ValueError as error:
            return self.report(start, str(error), parsing=True), start
        return _LITERAL_TYPES.get(token.type, STRING), start

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


ADDITIONS = {"addition_add": "_+_", "addition_sub": "_-_"}
MULTIPLICATIONS = {"multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_"}
_LITERAL_TYPES = {"INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "BOOL_LIT": BOOL, "NULL_LIT": NULL, "BYTES_LIT": BYTES}


def _shown(t: T) -> str:
    """A type as cel-go's error messages print it (``null``, ``!error!``), which differs from its type names."""
    if t.params:
        inner = ", ".join(_shown(p) for p in t.params)
        return f"{t.name}({inner})"
    return {"null_type": "null", "*error*": "!error!", "*free*": "dyn"}.get(t.name, t.name)


RELATIONS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
              "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "@in"}


def arguments(children: list) -> list[Tree]:
    return list(children[0].children) if children and _is_tree(children[0]) and children[0].data == "exprlist" else []


def _is_tree(node: Any) -> bool:
    return hasattr(node, "children")  # a lark Tree; its Tokens are strings


def unary_run(node: Tree) -> tuple[list[str], Tree]:
    """The prefix operators in front of an operand (``!!x``: two unary_not) and the operand."""
    run = []
    while _is_tree(node) and node.data == "unary" and len(node.children) == 2:
        run.append(node.children[0].data)
        node = node.children[1]
    return run, node


def _signed_head(node: Tree) -> tuple[Token | None, bool]:
    """The literal an operand starts with when celpy lexed a minus sign into it, and whether a member
    chain (``.f()``, ``.x``, ``[i]``) follows it."""
    chained = False
    while _is_tree(node) and node.data in ("unary", "member", "primary", "member_dot", "member_dot_arg", "member_index"):
        if node.data == "unary" and len(node.children) != 1:
            return None, chained
        chained = chained or node.data.startswith("member_")
        node = node.children[0]
    if _is_tree(node) and node.data == "literal" and node.children[0].value.startswith("-"):
        return node.children[0], chained
    return None, chained


def _root_ident(node: Tree) -> Token | None:
    """The identifier a chain of field selections starts from (``a`` in ``a.b.c``), if it is one."""
    while _is_tree(node):
        if node.data == "ident":
            return node.children[0]
        if node.data in ("member", "primary"):
            node = node.children[0]
        elif node.data == "member_dot":
            node = node.children[0]
        else:
            return None
    return None
