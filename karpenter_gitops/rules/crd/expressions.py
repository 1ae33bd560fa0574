"""A CRD's CEL rules (``x-kubernetes-validations``) compiled and evaluated with cel-expr-python, as the API server would.

cel-expr-python is Google's CEL runtime in C++ (the API server runs cel-go; both implement the same
spec). The environment mirrors what Kubernetes gives CRD rules: ``self`` (and ``oldSelf`` for
transition rules) of any type, the strings extension, and ``find`` of the Kubernetes regex library,
which the C++ runtime lacks (:func:`_find`). ``int()`` of a string follows Go's strconv.ParseInt,
which refuses spaces the C++ runtime trims (:func:`_go_int`). A rule that uses a function of the
Kubernetes libraries the runtime does not have (``quantity``, ``ip``, ``url``, ...) does not compile
here and is reported as ``crd/engine`` rather than passed. Evaluation errors are said in cel-go's
words (:func:`_cel_go_words`), as the API server reports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2
from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

from karpenter_gitops.rules.crd.declared import CEL, ENGINE

_GO_INT = re.compile(r"[+-]?[0-9]+\Z")
_INT64 = (-(2**63), 2**63 - 1)
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


def _go_int(value: Any) -> int:
    """``int()`` as cel-go converts: strings by strconv.ParseInt (no spaces, no '_'), doubles truncated in range."""
    if isinstance(value, str):
        if not _GO_INT.match(value):
            raise ValueError(f"strconv.ParseInt: parsing {json.dumps(value)}: invalid syntax")
        if not _INT64[0] <= int(value) <= _INT64[1]:
            raise ValueError(f"strconv.ParseInt: parsing {json.dumps(value)}: value out of range")
        return int(value)
    if isinstance(value, float):
        if value != value or not -(2.0**63) <= value < 2.0**63:
            raise ValueError("integer overflow")
        return int(value)
    if not _INT64[0] <= value <= _INT64[1]:  # a uint beyond int64
        raise ValueError("integer overflow")
    return value


_GO_INT_NAME = "goInt_"  # the declared stand-in for ``int``: the standard overloads cannot be redeclared
_ENVIRONMENT_FUNCTIONS = [
    cel.FunctionDecl(
        "find",
        [cel.Overload("string_find_string", cel.Type.STRING, [cel.Type.STRING, cel.Type.STRING], is_member=True, impl=_find)],
    ),
    cel.FunctionDecl(
        _GO_INT_NAME,
        [
            cel.Overload(f"go_int_{name.lower()}", cel.Type.INT, [argument], impl=_go_int)
            for name, argument in (("STRING", cel.Type.STRING), ("INT", cel.Type.INT), ("DOUBLE", cel.Type.DOUBLE))
        ]
        + [cel.Overload("go_int_uint", cel.Type.INT, [cel.Type.UINT], impl=_go_int)],
    ),
]


def _environment(*variables: str) -> Any:
    return cel.NewEnv(
        variables={name: cel.Type.DYN for name in variables},
        extensions=[ext_strings.ExtStrings()],
        functions=_ENVIRONMENT_FUNCTIONS,
    )


_RULES = _environment("self")
_TRANSITION_RULES = _environment("self", "oldSelf")
# A CEL token that matters for renaming: string and bytes literals (skipped whole), or an identifier.
_TOKEN = re.compile(
    r"""(?P<literal>[rRbB]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)",
    re.DOTALL,
)


def _with_go_int(rule: str) -> str:
    """The rule with each global call of ``int(...)`` made a call of :data:`_GO_INT_NAME`; literals untouched."""

    def rename(match: re.Match[str]) -> str:
        if match.group("word") != "int":
            return match.group(0)
        before, after = rule[: match.start()].rstrip(), rule[match.end() :].lstrip()
        return _GO_INT_NAME if after.startswith("(") and not before.endswith(".") else match.group(0)

    return _TOKEN.sub(rename, rule)


@dataclass(frozen=True)
class Program:
    rule: str
    compiled: Any = None  # a cel-expr-python Expression, ready to evaluate
    transition: bool = False
    problem: str | None = None  # why the engine cannot run the rule


def _compile_error(err: Exception) -> str:
    """cel-expr-python's compile error without its status wrapping: ``ERROR: <input>:1:5: ...``."""
    text = str(err).strip()
    text = re.sub(r"^[A-Z_]+: ", "", text)
    return re.sub(r"\s*\[[A-Z_]+\]$", "", text).replace("\n", " ")


def compile_rule(rule: str) -> Program:
    """Compile a CEL rule, or say why it cannot run here; never raises."""
    source = _with_go_int(rule)
    try:
        compiled = _RULES.compile(source)
    except RuntimeError as err:
        try:
            compiled = _TRANSITION_RULES.compile(source)
        except RuntimeError:
            return Program(rule, problem=f"cannot compile: {_compile_error(err)}")
        return Program(rule, compiled, transition=True)
    result = compiled.return_type().name()
    if result not in ("BOOL", "DYN"):
        return Program(rule, problem=f"it gives {result.lower()} instead of a bool")
    return Program(rule, compiled)


# cel-expr-python's evaluation errors in cel-go's words, which the API server reports: (pattern, replacement).
_CEL_GO_WORDS = (
    (re.compile(r'Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
    (re.compile(r"Index error: index=(-?\d+) size=\d+$"), r"index out of bounds: \1"),
    (re.compile(r"Index error: expected integer type.*$"), "unsupported index value"),
    (re.compile(r"No matching overloads found.*$"), "no such overload"),
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r"^modulus by zero$"), "modulus by zero"),
    (re.compile(r"^cannot convert string to int$"), "type conversion error from 'string' to 'int'"),
    (re.compile(r"^.*out of (u?)int64 range$"), lambda m: f"{'unsigned ' if m.group(1) else ''}integer overflow"),
    (re.compile(r"^no_such_field.*$"), "no such key"),
)


def _cel_go_words(text: str) -> str:
    text = re.sub(r"^[A-Z_]+: ", "", str(text).strip())
    for pattern, replacement in _CEL_GO_WORDS:
        said, count = pattern.subn(replacement, text)
        if count:
            return said
    return text


def run(program: Program, variables: Mapping[str, Any]) -> Any:
    """The rule's value for ``variables`` (JSON values), or an :class:`EvalError` in cel-go's words."""
    try:
        value = program.compiled.eval(data=dict(variables))
    except RuntimeError as err:  # the runtime's iteration budget and internal errors raise
        raise EngineFailure(str(err)) from None
    kind = value.type().name()
    if kind == "ERROR":
        return EvalError(_cel_go_words(value.value()))
    return value.value()


@dataclass(frozen=True)
class EvalError:
    """A rule that fails on the data (the API server rejects the object with this text)."""

    message: str


class EngineFailure(Exception):
    """The runtime gave up (its iteration budget, an internal error): nothing was decided."""


def evaluate(program: Program, message: str | None, value: Any) -> tuple[str, str] | None:
    """``None`` when the rule holds for the value, else the rule id and message to report."""
    rule = program.rule
    if program.problem:
        return ENGINE, f"rule not checked, {program.problem}: {rule}"
    try:
        result = run(program, {"self": value})
    except EngineFailure as err:
        return ENGINE, f"rule not checked, the engine failed ({err}): {rule}"
    if isinstance(result, EvalError):
        return CEL, f"{result.message} evaluating rule: {rule}"
    if not isinstance(result, bool):
        return ENGINE, f"rule not checked, it gave {type(result).__name__} instead of a bool: {rule}"
    return None if result else (CEL, message or f"failed rule: {rule}")


def rules_in(node: Any) -> Iterator[str]:
    """Every CEL rule text anywhere in a schema."""
    if isinstance(node, Mapping):
        for validation in node.get("x-kubernetes-validations") or ():
            yield validation["rule"]
        for child in node.values():
            yield from rules_in(child)
    elif isinstance(node, list):
        for child in node:
            yield from rules_in(child)
