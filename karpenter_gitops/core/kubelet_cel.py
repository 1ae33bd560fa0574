"""The CEL environment Karpenter 1.15 gives kubelet expressions, checked and evaluated as cel-go does.

Karpenter (``pkg/cel/environment.go``) declares six variables (``vcpus``, ``memory_mib``,
``default_enis``, ``ips_per_eni``, ``max_pods``: int; ``instance_type``: string) and ``max``/``min``
with int and double overloads on top of CEL's standard library, and wants an int or double out.
celpy's grammar parses CEL, but celpy neither type-checks nor does int64 arithmetic, so this module
walks the parse tree with its own checker (cel-go's overload rules: no implicit int/double mixing)
and its own evaluator (int64/uint64 overflow is an error, integer division truncates), and says the
errors in cel-go's words and layout. Constructs outside the subset modelled here (macros,
timestamps, durations, messages) get no verdict (``unsupported``) rather than a guess. Pure: it
reads nothing but celpy's packaged grammar.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # celpy and lark load on the first check: commands that meet no expression never pay for them
    from lark import Lark, Token, Tree

INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
INT32_MAX = 2**31 - 1


# --- types ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class T:
    """A CEL type as cel-go prints it: ``int``, ``list(int)``, ``map(string, int)``, ``type(int)``."""

    name: str
    params: tuple[T, ...] = ()

    def __str__(self) -> str:
        if self.name == "map":
            return f"map({self.params[0]}, {self.params[1]})"
        return f"{self.name}({self.params[0]})" if self.params else ("dyn" if self.name == "*free*" else self.name)


INT, UINT, DOUBLE, BOOL, STRING, BYTES = T("int"), T("uint"), T("double"), T("bool"), T("string"), T("bytes")
NULL, DYN, ERROR = T("null_type"), T("dyn"), T("*error*")
FREE = T("*free*")  # an unbound type parameter (an empty list's element): binds to anything, printed as dyn
# Only reachable through null, which cel-go lets stand for these message types.
TIMESTAMP, DURATION = T("google.protobuf.Timestamp"), T("google.protobuf.Duration")
NUMBERS = (INT, UINT, DOUBLE)


def list_of(element: T) -> T:
    return T("list", (element,))


def map_of(key: T, value: T) -> T:
    return T("map", (key, value))


VARIABLES: Mapping[str, T] = {
    "vcpus": INT, "memory_mib": INT, "default_enis": INT, "ips_per_eni": INT, "max_pods": INT, "instance_type": STRING,
}
# Names cel-go resolves to type values (``int`` alone is ``type(int)``): not modelled, no verdict.
_TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "null_type", "dyn", "list", "map", "type"})

# Overloads: parameter patterns → result; "A"/"B" are type parameters, list/map patterns nest them.
_A, _B = T("A"), T("B")
_Sig = tuple[tuple[T, ...], T]
_COMPARABLE = (BOOL, INT, UINT, DOUBLE, STRING, BYTES, TIMESTAMP, DURATION)
# Karpenter's own: max/min of two ints is an int, any double makes a double.
_MAX_MIN = (((INT, INT), INT), ((DOUBLE, DOUBLE), DOUBLE), ((INT, DOUBLE), DOUBLE), ((DOUBLE, INT), DOUBLE))
_OVERLOADS: Mapping[str, tuple[_Sig, ...]] = {
    "_+_": (*(((t, t), t) for t in (INT, UINT, DOUBLE, STRING, BYTES)), ((list_of(_A), list_of(_A)), list_of(_A)),
            ((TIMESTAMP, DURATION), TIMESTAMP), ((DURATION, TIMESTAMP), TIMESTAMP), ((DURATION, DURATION), DURATION)),
    "_-_": (*(((t, t), t) for t in NUMBERS),
            ((TIMESTAMP, TIMESTAMP), DURATION), ((TIMESTAMP, DURATION), TIMESTAMP), ((DURATION, DURATION), DURATION)),
    "_*_": tuple(((t, t), t) for t in NUMBERS),
    "_/_": tuple(((t, t), t) for t in NUMBERS),
    "_%_": tuple(((t, t), t) for t in (INT, UINT)),
    "-_": (((INT,), INT), ((DOUBLE,), DOUBLE)),
    "!_": (((BOOL,), BOOL),),
    "_&&_": (((BOOL, BOOL), BOOL),),
    "_||_": (((BOOL, BOOL), BOOL),),
    "_?_:_": (((BOOL, _A, _A), _A),),
    "_==_": (((_A, _A), BOOL),),
    "_!=_": (((_A, _A), BOOL),),
    **{op: tuple(((t, t), BOOL) for t in _COMPARABLE) for op in ("_<_", "_<=_", "_>_", "_>=_")},
    "@in": (((_A, list_of(_A)), BOOL), ((_A, map_of(_A, _B)), BOOL)),
    "_[_]": (((list_of(_A), INT), _A), ((map_of(_A, _B), _A), _B)),
    "max": _MAX_MIN,
    "min": _MAX_MIN,
    "size": (((STRING,), INT), ((BYTES,), INT), ((list_of(_A),), INT), ((map_of(_A, _B),), INT)),
    "int": (((INT,), INT), ((UINT,), INT), ((DOUBLE,), INT), ((STRING,), INT), ((TIMESTAMP,), INT)),
    "uint": (((UINT,), UINT), ((INT,), UINT), ((DOUBLE,), UINT), ((STRING,), UINT)),
    "double": (((DOUBLE,), DOUBLE), ((INT,), DOUBLE), ((UINT,), DOUBLE), ((STRING,), DOUBLE)),
    "string": tuple(((t,), STRING) for t in (STRING, INT, UINT, DOUBLE, BOOL, BYTES, TIMESTAMP, DURATION)),
    "bool": (((BOOL,), BOOL), ((STRING,), BOOL)),
    "bytes": (((BYTES,), BYTES), ((STRING,), BYTES)),
    "dyn": (((_A,), DYN),),
    "matches": (((STRING, STRING), BOOL),),
}
# Receiver-style overloads (``x.size()``): the receiver is the first parameter.
_MEMBER_OVERLOADS: Mapping[str, tuple[_Sig, ...]] = {
    "size": _OVERLOADS["size"],
    **{name: (((STRING, STRING), BOOL),) for name in ("contains", "startsWith", "endsWith", "matches")},
}
# Declared by cel-go's standard library or its macros but not modelled here: no verdict on them.
_UNMODELLED = frozenset({
    "has", "all", "exists", "exists_one", "map", "filter", "timestamp", "duration", "type",
    "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
    "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
})


# --- checking ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    """One cel-go compile error: 1-based line, 0-based column, message."""

    line: int
    column: int
    message: str


class Unsupported(Exception):
    """The expression uses CEL this module does not model; there is no verdict."""


@dataclass(frozen=True)
class Checked:
    """An expression parsed and type-checked in Karpenter's environment."""

    expression: str
    output: T | None = None  # its type when it compiles
    issues: tuple[Issue, ...] = ()
    unsupported: str | None = None  # why there is no verdict
    tree: Any = field(default=None, compare=False, repr=False)
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
        return Checked(expression, unsupported=str(why), tree=tree)
    except RecursionError:  # cel-go refuses deep nesting with its own limit, which we do not model
        return Checked(expression, unsupported="nested too deeply", tree=tree)
    if checker.parse_issues or checker.issues:
        return Checked(expression, issues=tuple(checker.parse_issues or checker.issues), tree=tree)
    return Checked(expression, output=_settled(output), tree=tree, dynamic=checker.dynamic, names=frozenset(checker.names))


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


_LITERAL_FLOAT = re.compile(r"^-?(\d+\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+([eE][+-]?\d+)?)$")


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
            if not _assignable(operand, BOOL):
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
        return self._operation(node, _RELATIONS)

    def _addition(self, node: Tree) -> Typed:
        return self._operation(node, _ADDITIONS)

    def _multiplication(self, node: Tree) -> Typed:
        return self._operation(node, _MULTIPLICATIONS)

    def _unary(self, node: Tree) -> Typed:
        run, operand = _unary_run(node) if len(node.children) == 2 else ([], node.children[0])
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
        if root is not None and root.value not in VARIABLES and root.value not in _TYPE_NAMES:
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
        if name.value in _UNMODELLED:
            raise Unsupported(f"{name.value}() is not modelled")
        receiver = self.visit(target)
        args = [receiver, *(self.visit(arg) for arg in _arguments(rest))]
        where = self.text.index("(", name.end_pos)
        if name.value in _MEMBER_OVERLOADS:
            return self.call(name.value, args, where, member=True), where
        if name.value in _OVERLOADS:  # a global function called on a receiver: declared, so no overload matches
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
        if token.value in _TYPE_NAMES:
            raise Unsupported("type values are not modelled")
        return self.report(token.start_pos, f"undeclared reference to '{token.value}' (in container '')"), token.start_pos

    def _ident_arg(self, node: Tree) -> Typed:
        name, *rest = node.children
        if name.value in _UNMODELLED:
            raise Unsupported(f"{name.value}() is not modelled")
        args = [self.visit(arg) for arg in _arguments(rest)]
        where = self.text.index("(", name.end_pos)
        if name.value in _OVERLOADS:
            return self.call(name.value, args, where), where
        if name.value in _MEMBER_OVERLOADS:  # declared only receiver-style, so no global overload matches
            return self.no_overload(name.value, [t for t, _ in args], where), where
        return self.report(where, f"undeclared reference to '{name.value}' (in container '')"), where

    def _list_lit(self, node: Tree) -> Typed:
        elements = [self.visit(e)[0] for e in _arguments(node.children)]
        return list_of(_joined(elements)), node.meta.start_pos

    def _map_lit(self, node: Tree) -> Typed:
        entries = node.children[0].children if node.children else []
        types = [self.visit(e)[0] for e in entries]
        return map_of(_joined(types[0::2]), _joined(types[1::2])), node.meta.start_pos

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
        overloads = (_MEMBER_OVERLOADS if member else _OVERLOADS)[name]
        results = [r for sig in overloads if (r := _match(sig, types)) is not None]
        if not results:
            return self.no_overload(name, types, where, member=member)
        return results[0] if all(r == results[0] for r in results) else DYN

    def no_overload(self, name: str, args: list[T], where: int, *, member: bool = False) -> T:
        shown = [_shown(t) for t in args]
        listed = f"{shown[0]}.({', '.join(shown[1:])})" if member else f"({', '.join(shown)})"
        return self.report(where, f"found no matching overload for '{name}' applied to '{listed}'")


_ADDITIONS = {"addition_add": "_+_", "addition_sub": "_-_"}
_MULTIPLICATIONS = {"multiplication_mul": "_*_", "multiplication_div": "_/_", "multiplication_mod": "_%_"}
_LITERAL_TYPES = {"INT_LIT": INT, "UINT_LIT": UINT, "FLOAT_LIT": DOUBLE, "BOOL_LIT": BOOL, "NULL_LIT": NULL, "BYTES_LIT": BYTES}


def _shown(t: T) -> str:
    """A type as cel-go's error messages print it (``null``, ``!error!``), which differs from its type names."""
    if t.params:
        inner = ", ".join(_shown(p) for p in t.params)
        return f"{t.name}({inner})"
    return {"null_type": "null", "*error*": "!error!", "*free*": "dyn"}.get(t.name, t.name)


_RELATIONS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_",
              "relation_eq": "_==_", "relation_ne": "_!=_", "relation_in": "@in"}


def _arguments(children: list) -> list[Tree]:
    return list(children[0].children) if children and _is_tree(children[0]) and children[0].data == "exprlist" else []


def _is_tree(node: Any) -> bool:
    return hasattr(node, "children")  # a lark Tree; its Tokens are strings


def _unary_run(node: Tree) -> tuple[list[str], Tree]:
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


def _match(sig: _Sig, args: list[T]) -> T | None:
    params, result = sig
    if len(params) != len(args):
        return None
    bound: dict[str, T] = {}
    for param, arg in zip(params, args, strict=True):
        if not _unify(param, arg, bound):
            return None
    return _substitute(result, bound)


def _unify(param: T, arg: T, bound: dict[str, T]) -> bool:
    if param.name in ("A", "B"):
        seen = bound.get(param.name)
        if seen is None:
            bound[param.name] = arg
            return True
        if not _assignable(arg, seen):
            return False
        if seen == FREE or (arg != FREE and _less_specific(arg, seen)):  # cel-go's mostGeneral(arg, seen)
            bound[param.name] = arg
        return True
    if arg in (DYN, ERROR, FREE):
        return True
    if arg == NULL and param in (TIMESTAMP, DURATION):
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(_unify(p, a, bound) for p, a in zip(param.params, arg.params, strict=True))


def _assignable(a: T, b: T) -> bool:
    """cel-go's assignability: dyn, error and free parameters fit anything."""
    if a in (DYN, ERROR, FREE) or b in (DYN, ERROR, FREE):
        return True
    return a.name == b.name and len(a.params) == len(b.params) and all(
        _assignable(x, y) for x, y in zip(a.params, b.params, strict=True))


def _less_specific(a: T, b: T) -> bool:
    """cel-go's isEqualOrLessSpecific, which decides a literal's element type."""
    if a in (DYN, FREE):
        return True
    if b in (DYN, FREE) or a.name != b.name or len(a.params) != len(b.params):
        return False
    return all(_less_specific(x, y) for x, y in zip(a.params, b.params, strict=True))


def _joined(types: list[T]) -> T:
    """A literal's element type as cel-go's joinTypes folds it: the more general of two assignable types, else dyn."""
    joined: T | None = None
    for t in types:
        if joined is None:
            joined = t
        elif _assignable(joined, t):
            joined = joined if _less_specific(joined, t) else t
        else:
            joined = DYN
    return FREE if joined is None else joined


def _substitute(t: T, bound: dict[str, T]) -> T:
    if t.name in ("A", "B"):
        return bound.get(t.name, FREE)
    return T(t.name, tuple(_substitute(p, bound) for p in t.params)) if t.params else t


# --- literals ---------------------------------------------------------------------------------


class Uint(int):
    """A CEL uint value (an int that remembers it is unsigned)."""


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.S)


def literal(token: Token) -> Any:
    """A literal's value, or ValueError in cel-go's words for one it refuses."""
    text = token.value
    if token.type == "INT_LIT":
        value = int(text, 16) if "x" in text.lower() else int(text)
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError("invalid int literal")
        return value
    if token.type == "UINT_LIT":
        value = int(text[:-1], 16) if "x" in text.lower() else int(text[:-1])
        if not 0 <= value <= UINT64_MAX:
            raise ValueError("invalid uint literal")
        return Uint(value)
    if token.type == "FLOAT_LIT":
        if not _LITERAL_FLOAT.match(text):  # celpy takes "1." and "1.e3"; cel-go's lexer does not
            raise ValueError(f"Syntax error: no viable alternative at input '{text[text.index('.'):][:1]}'")
        value = float(text)
        if math.isinf(value):
            raise ValueError("invalid double literal")
        return value
    if token.type == "BOOL_LIT":
        return text == "true"
    if token.type == "NULL_LIT":
        return None
    raw = token.type == "BYTES_LIT"
    body = text[1:] if raw else text
    is_raw = body[:1] in "rR"
    body = body[1:] if is_raw else body
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    decoded = body if is_raw else _ESCAPE.sub(lambda m: _unescape(m.group(1)), body)
    return decoded.encode("utf-8", "surrogatepass") if raw else decoded


def _unescape(code: str) -> str:
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code[0] in "0123" and len(code) == 3:
        return chr(int(code, 8))
    return _ESCAPES.get(code, "\\" + code)


# --- evaluation -------------------------------------------------------------------------------


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
    Unsupported where this module cannot follow cel-go."""
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
        name = _RELATIONS[op.data]
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
        return self._arithmetic(node, _ADDITIONS)

    def _multiplication(self, node: Tree) -> Any:
        return self._arithmetic(node, _MULTIPLICATIONS)

    def _unary(self, node: Tree) -> Any:
        if len(node.children) == 1:
            return self.visit(node.children[0])
        run, operand = _unary_run(node)
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
        return _FUNCTIONS[name.value](self.visit(target), *(self.visit(a) for a in _arguments(rest)))

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
        return _FUNCTIONS[name.value](*(self.visit(a) for a in _arguments(rest)))

    def _list_lit(self, node: Tree) -> Any:
        return tuple(self.visit(e) for e in _arguments(node.children))

    def _map_lit(self, node: Tree) -> Any:
        entries = node.children[0].children if node.children else []
        values = [self.visit(e) for e in entries]
        return dict(zip(values[0::2], values[1::2], strict=True))

    def _literal(self, node: Tree) -> Any:
        return literal(node.children[0])


_MISSING = object()


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
    or this module cannot tell). Without ``snippets`` it fits one line (cel-go's caret lines left out)."""
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
    where this module cannot follow cel-go."""
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
        return _wrap(f"maxPods expression evaluated to a value outside the valid range [0, {INT32_MAX}]", **where, result=outcome.value)
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
