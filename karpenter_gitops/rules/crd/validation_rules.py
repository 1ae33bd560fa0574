"""A CRD's CEL rules (``x-kubernetes-validations``) compiled and evaluated with cel-expr-python, as the API server would.

cel-expr-python is Google's CEL runtime in C++ (the API server runs cel-go; both implement the same
spec). The environment mirrors what Kubernetes gives CRD rules: ``self`` (and ``oldSelf`` for
transition rules) of any type, the strings extension, and ``find`` of the Kubernetes regex library,
which the C++ runtime lacks (:func:`_find`). Conversions follow Go's rules (``int(" 4")`` is an
error, as in cel-go; see :mod:`karpenter_gitops.core.cel_go`). A rule that uses a function of the
Kubernetes libraries the runtime does not have (``quantity``, ``ip``, ``url``, ...) does not compile
here and is reported as ``crd/engine`` rather than passed. Evaluation errors are said in cel-go's
words, as the API server reports them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2
from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

from karpenter_gitops.core import cel_go
from karpenter_gitops.rules.crd.declared import CEL, ENGINE

# Patterns made only of these characters mean the same in Python's re (ASCII) as in RE2; Python's
# matches cost a microsecond where the re2 binding costs tens (Karpenter's rules: ``^([^/]+)``, ``^[^@]+``).
_PORTABLE_PATTERN = re.compile(r"[A-Za-z0-9^\[\]()/@+*?{},|_ -]*\Z")  # no POSIX classes [[:alpha:]]


@lru_cache(maxsize=256)
def _matcher(pattern: str) -> Any:
    """A compiled pattern with RE2's meaning; ``re2.error`` for a pattern RE2 refuses."""
    if _PORTABLE_PATTERN.match(pattern):
        try:
            return re.compile(pattern, re.ASCII)
        except re.error:
            pass  # RE2 has the last word on what is malformed
    return re2.compile(pattern, re2.Options())


def _find(text: str, pattern: str) -> str:
    """``find`` of the Kubernetes regex library: the first RE2 match, or ''. Raising makes a CEL error value."""
    try:
        match = _matcher(pattern).search(text)
    except re2.error:
        raise ValueError(f"invalid regex {pattern!r} in find") from None
    return match.group(0) if match else ""


_CONVERSIONS = ("int", "uint", "double", "bool")  # string() of Go and of C++ agree on everything a CRD converts
_ENVIRONMENT_FUNCTIONS = [
    cel.FunctionDecl(
        "find",
        [cel.Overload("string_find_string", cel.Type.STRING, [cel.Type.STRING, cel.Type.STRING], is_member=True, impl=_find)],
    ),
    *cel_go.conversions(*_CONVERSIONS),
]


def _environment(*variables: str) -> Any:
    return cel.NewEnv(
        variables={name: cel.Type.DYN for name in variables},
        extensions=[ext_strings.ExtStrings()],
        functions=_ENVIRONMENT_FUNCTIONS,
    )


_RULES = _environment("self")
_TRANSITION_RULES = _environment("self", "oldSelf")


@dataclass(frozen=True)
class Program:
    rule: str
    compiled: Any = None  # a cel-expr-python Expression, ready to evaluate
    transition: bool = False
    problem: str | None = None  # why the engine cannot run the rule

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the runtime's serialized checked expression, which loads in a fraction of a compile."""
        serialized = self.compiled.serialize() if self.compiled is not None else None
        return _deserialized, (self.rule, serialized, self.transition, self.problem)


def _deserialized(rule: str, serialized: bytes | None, transition: bool, problem: str | None) -> Program:
    environment = _TRANSITION_RULES if transition else _RULES
    return Program(rule, environment.deserialize(serialized) if serialized is not None else None, transition, problem)


def compile_rule(rule: str) -> Program:
    """Compile a CEL rule, or say why it cannot run here; never raises."""
    source = cel_go.with_go_conversions(rule, *_CONVERSIONS)
    try:
        compiled = _RULES.compile(source)
    except RuntimeError as err:
        try:
            compiled = _TRANSITION_RULES.compile(source)
        except RuntimeError:
            return Program(rule, problem=f"cannot compile: {cel_go.compile_error(err)}")
        return Program(rule, compiled, transition=True)
    result = compiled.return_type().name()
    if result not in ("BOOL", "DYN"):
        return Program(rule, problem=f"it gives {result.lower()} instead of a bool")
    return Program(rule, compiled)


def bound(value: Any) -> Any:
    """``self`` converted into the runtime's values once, for all the rules of one schema node: converting
    it for each rule again costs more than most rules' evaluation."""
    return _RULES.Activation({"self": value})


def run(program: Program, variables: Mapping[str, Any] | None = None, *, activation: Any = None) -> Any:
    """The rule's value for ``variables`` (JSON values) or an :func:`bound` ``activation``, or an
    :class:`EvalError` in cel-go's words."""
    try:
        value = program.compiled.eval(activation) if activation is not None else program.compiled.eval(data=dict(variables))
    except Exception as err:  # the runtime's iteration budget raises; an engine bug must not crash validation
        raise EngineFailure(f"{type(err).__name__}: {err}") from None
    kind = value.type().name()
    if kind == "ERROR":
        return EvalError(cel_go.cel_go_words(value.value()))
    return value.value()


@dataclass(frozen=True)
class EvalError:
    """A rule that fails on the data (the API server rejects the object with this text)."""

    message: str


class EngineFailure(Exception):
    """The runtime gave up (its iteration budget, an internal error): nothing was decided."""


def evaluate(program: Program, message: str | None, value: Any, activation: Any = None) -> tuple[str, str] | None:
    """``None`` when the rule holds for the value (or its :func:`bound` ``activation``), else the rule id and
    message to report."""
    rule = program.rule
    if program.problem:
        return ENGINE, f"rule not checked, {program.problem}: {rule}"
    if activation is not None:  # most rules hold: ask that in the fewest calls, and the rest below again
        try:
            if program.compiled.eval(activation).value() is True:
                return None
        except Exception:  # run() below raises it again, in the engine's words
            pass
    try:
        result = run(program, {"self": value}, activation=activation)
    except EngineFailure as err:
        return ENGINE, f"rule not checked, the engine failed ({err}): {rule}"
    if isinstance(result, EvalError):
        return CEL, f"{result.message} evaluating rule: {rule}"
    if not isinstance(result, bool):
        return ENGINE, f"rule not checked, it gave {type(result).__name__} instead of a bool: {rule}"
    return None if result else (CEL, message or f"failed rule: {rule}")


@dataclass(frozen=True)
class RuleTree:
    """The part of a structural schema that carries CEL rules, compiled: walking an object through it visits
    only the values some rule reads, and builds a path only for those."""

    rules: tuple[tuple[Program, str | None], ...]  # the node's own rules, each with the CRD's message
    declared: frozenset[str]  # every property the schema node declares (with rules below it or not)
    properties: Mapping[str, RuleTree]  # those with rules at or below them
    items: RuleTree | None = None
    entries: RuleTree | None = None  # additionalProperties: the values of a map
    transitions: tuple[str, ...] = ()  # the node's transition rules (they need oldSelf: never run offline)

    def visits(self, value: Any, path: str = "") -> list[tuple[RuleTree, Any, str]]:
        """(node, value, path) of every present value whose node has rules, parents before their children, in
        the value's order; paths in our format (``a.b[0][key]``). Walked with a stack of its own: generators
        nested as deep as the object cost a frame per level for every value they hand up."""
        found: list[tuple[RuleTree, Any, str]] = []
        pending: list[tuple[RuleTree, Any, str]] = [(self, value, path)]
        while pending:
            tree, value, path = pending.pop()
            if value is None:
                continue
            if tree.rules:
                found.append((tree, value, path))
            children: list[tuple[RuleTree, Any, str]] = []
            if isinstance(value, dict):
                for key, child in value.items():
                    if key in tree.declared:
                        if (below := tree.properties.get(key)) is not None:
                            children.append((below, child, f"{path}.{key}" if path else key))
                    elif tree.entries is not None:
                        children.append((tree.entries, child, f"{path}[{key}]"))
            elif isinstance(value, list) and tree.items is not None:
                children = [(tree.items, child, f"{path}[{index}]") for index, child in enumerate(value)]
            pending.extend(reversed(children))
        return found


def rule_tree(schema: Mapping[str, Any]) -> RuleTree | None:
    """The rules of a structural schema compiled in place, or None where no node at or below has any."""
    properties = schema.get("properties") or {}
    below = {key: tree for key, child in properties.items() if (tree := rule_tree(child)) is not None}
    items = rule_tree(schema["items"]) if isinstance(schema.get("items"), dict) else None
    extra = schema.get("additionalProperties")
    entries = rule_tree(extra) if isinstance(extra, dict) else None
    rules = tuple((_compiled(v["rule"]), v.get("message")) for v in schema.get("x-kubernetes-validations") or ())
    if not (rules or below or items or entries):
        return None
    transitions = tuple(program.rule for program, _ in rules if program.transition)
    return RuleTree(rules, frozenset(properties), below, items, entries, transitions)


@lru_cache(maxsize=4096)
def _compiled(rule: str) -> Program:
    """Each distinct rule compiled once, however many nodes and CRDs carry it."""
    return compile_rule(rule)
