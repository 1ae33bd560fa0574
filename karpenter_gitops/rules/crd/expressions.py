"""A CRD's CEL rules (``x-kubernetes-validations``) compiled and evaluated with celpy, as the API server would.

celpy lacks a few functions of the Kubernetes CEL environment (:data:`EXTENSIONS` adds them); a rule
that uses any other function it lacks, or that does not compile, is reported as ``crd/engine`` rather
than passed. Rules that read ``oldSelf`` are transition rules: they need the live object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import celpy
import re2
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError

from karpenter_gitops.rules.crd.declared import CEL, ENGINE

_GO_INT = re.compile(r"[+-]?[0-9]+\Z")
_MACROS = frozenset({"has", "dyn", "all", "exists", "exists_one", "filter", "map"})


def _find(text: Any, pattern: Any) -> Any:
    """``find`` of the Kubernetes regex library: the first RE2 match, or ''."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        return CELEvalError("no such overload: find", TypeError, (text, pattern))
    try:
        match = re2.search(pattern, text)
    except re2.error as err:
        return CELEvalError("invalid regex in find", type(err), err.args)
    return celtypes.StringType(match.group(0) if match else "")


def _split(text: Any, separator: Any) -> Any:
    """``split`` of the CEL strings extension (Go's strings.Split)."""
    if not isinstance(text, str) or not isinstance(separator, str):
        return CELEvalError("no such overload: split", TypeError, (text, separator))
    parts = list(text) if separator == "" else text.split(separator)
    return celtypes.ListType(celtypes.StringType(part) for part in parts)


def _int(value: Any) -> Any:
    """``int()`` that parses strings as CEL-go does (strconv.ParseInt: no spaces, no '_')."""
    if isinstance(value, str) and not _GO_INT.match(value):
        return CELEvalError(f"cannot convert {str(value)!r} to int", ValueError, (value,))
    return celtypes.IntType(value)


# What the Kubernetes CEL environment has and celpy lacks (or does differently).
EXTENSIONS = {"find": _find, "split": _split, "int": _int}
_KNOWN_FUNCTIONS = frozenset(celpy.evaluation.base_functions) | EXTENSIONS.keys() | _MACROS
_ENVIRONMENT = celpy.Environment()


@dataclass(frozen=True)
class Program:
    rule: str
    runner: Any = None  # a celpy Runner, ready to evaluate
    transition: bool = False
    problem: str | None = None  # why the engine cannot run the rule


def _references(tree: Any) -> tuple[set[str], set[str]]:
    """The identifiers and the function/macro names a parsed CEL expression (a lark tree) uses."""
    identifiers, functions = set(), set()
    for node in tree.iter_subtrees():
        if node.data == "ident":
            identifiers.add(str(node.children[0]))
        elif node.data == "ident_arg":
            functions.add(str(node.children[0]))
        elif node.data == "member_dot_arg":
            functions.add(str(node.children[1]))
    return identifiers, functions


def compile_rule(rule: str) -> Program:
    """Compile a CEL rule, or say why it cannot run here; never raises."""
    try:
        tree = _ENVIRONMENT.compile(rule)
    except Exception as err:  # celpy raises several parser error types
        return Program(rule, problem=f"cannot compile: {err}")
    identifiers, functions = _references(tree)
    if "oldSelf" in identifiers:
        return Program(rule, transition=True)
    unknown = sorted(functions - _KNOWN_FUNCTIONS)
    if unknown:
        return Program(rule, problem=f"uses CEL functions this engine lacks: {', '.join(unknown)}")
    return Program(rule, runner=_ENVIRONMENT.program(tree, functions=EXTENSIONS))


@lru_cache(maxsize=16384)
def evaluate(program: Program, message: str | None, value_json: str) -> tuple[str, str] | None:
    """``None`` when the rule holds for the value, else the rule id and message to report.

    Memoized: celpy interprets slowly, and the same nodes recur across objects and runs.
    """
    rule = program.rule
    if program.problem:
        return ENGINE, f"rule not checked, {program.problem}: {rule}"
    try:
        result = program.runner.evaluate({"self": json_to_cel(json.loads(value_json))})
    except CELEvalError as err:
        result = err
    except Exception as err:  # an engine bug must not crash validation
        return ENGINE, f"rule not checked, the engine failed ({type(err).__name__}: {err}): {rule}"
    if isinstance(result, CELEvalError):
        return CEL, f"{result.args[0]} evaluating rule: {rule}"
    if not isinstance(result, celtypes.BoolType):
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
