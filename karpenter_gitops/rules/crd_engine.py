"""Judge objects with the real Karpenter CRDs, as the API server would.

The user gives the CRD files of their release (e.g. the ``crds/`` folder of the Karpenter Helm
chart). For ``EC2NodeClass`` and ``NodePool`` we take the served ``v1`` ``openAPIV3Schema`` and:

* do what the API server does before validating: drop ``status`` (a subresource), drop nulls of
  non-nullable fields and fill ``default`` values;
* validate the structural schema with ``jsonschema``; unknown fields are errors, as
  ``kubectl apply --validate=strict`` reports them; ``x-kubernetes-list-type: set`` means unique
  items; of the formats only ``date-time`` is checked (int32/int64 ranges are not); ObjectMeta,
  which the CRD leaves open, gets the API server's ``metadata.name`` check;
* evaluate every ``x-kubernetes-validations`` rule with ``celpy``, ``self`` bound to the node that
  carries the rule, unless the schema already found errors the API server treats as blocking.

Violations are observed under the three ids of :mod:`karpenter_gitops.rules.crd`.

Transition rules (those reading ``oldSelf``) need the live object; they are listed in
:attr:`Outcome.skipped`, never counted as passing.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import lru_cache
from typing import Any

import celpy
import re2
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError
from jsonschema import FormatChecker, ValidationError, validators

from karpenter_gitops.core.findings import Observation, Violation
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.names import SUBDOMAIN_FORMAT
from karpenter_gitops.core.model import (
    EC2NODECLASS,
    EC2NODECLASS_API,
    NODEPOOL,
    NODEPOOL_API,
)
from karpenter_gitops.rules.crd import CEL, ENGINE, SCHEMA

SERVED_VERSION = "v1"
API_OF_KIND = {EC2NODECLASS: EC2NODECLASS_API, NODEPOOL: NODEPOOL_API}
# Schema errors after which the API server does not run CEL rules (apiextensions hasBlockingErr).
_BLOCKING = frozenset({"type", "required", "enum", "maxLength", "maxItems", "maxProperties", "additionalProperties"})
# ObjectMeta is validated by the API server, not the CRD (whose schema says only "object").
_DNS_SUBDOMAIN = f"^{SUBDOMAIN_FORMAT}$"
_OBJECT_META = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "maxLength": 253, "pattern": _DNS_SUBDOMAIN}},
}
# Keywords whose OpenAPI v3 meaning is the same in JSON Schema 2020-12.
_SAME_KEYWORDS = (
    "enum",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "required",
)


@dataclass(frozen=True)
class Skipped:
    """CEL rules not evaluated, and why (never counted as passing); ``*`` stands for all of them."""

    path: str
    rule: str
    reason: str


TRANSITION = "transition rule: needs the live object (oldSelf)"
BLOCKED = "the object has schema errors, and then the API server skips CEL rules too"


@dataclass(frozen=True)
class Outcome:
    observations: tuple[Observation, ...]
    skipped: tuple[Skipped, ...] = ()


# --- OpenAPI (structural) schema -> JSON Schema --------------------------------------------


def to_json_schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """Translate one structural-schema node; objects reject fields they do not declare."""
    out: dict[str, Any] = {key: node[key] for key in _SAME_KEYWORDS if key in node}
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    elif "type" in node:
        out["type"] = [node["type"], "null"] if node.get("nullable") else node["type"]
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if isinstance(node.get("items"), Mapping):
        out["items"] = to_json_schema(node["items"])
    if "properties" in node:
        out["properties"] = {key: to_json_schema(child) for key, child in node["properties"].items()}
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        out["additionalProperties"] = to_json_schema(extra)
    elif node.get("type") == "object" and not node.get("x-kubernetes-preserve-unknown-fields") and extra is not True:
        out["additionalProperties"] = False
    return out


def _unknown_fields(validator, allowed, instance, schema):
    """Report each undeclared field at its own path, as kubectl's strict validation does."""
    if allowed is False:
        if validator.is_type(instance, "object"):
            for key in instance.keys() - schema.get("properties", {}).keys():
                yield ValidationError(f"unknown field {key!r}", path=[key])
    else:
        yield from _BASE.VALIDATORS["additionalProperties"](validator, allowed, instance, schema)


def _required(validator, required, instance, schema):
    """Report a missing field at its own path with the API server's wording."""
    if validator.is_type(instance, "object"):
        for key in required:
            if key not in instance:
                yield ValidationError("Required value", path=[key])


def _pattern(validator, pattern, instance, schema):
    """``pattern`` with the API server's RE2: unlike Python's ``re``, its ``$`` does not match before a final newline."""
    if validator.is_type(instance, "string") and not re2.search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_BASE = validators.validator_for({"$schema": "https://json-schema.org/draft/2020-12/schema"})
_Validator = validators.extend(
    _BASE, {"additionalProperties": _unknown_fields, "required": _required, "pattern": _pattern}
)
_FORMATS = FormatChecker(formats=())
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)\Z")


@_FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: Any) -> bool:
    """RFC 3339, as the API server checks ``format: date-time`` (jsonschema needs an extra for it)."""
    if isinstance(value, str):
        if not _RFC3339.match(value):
            raise ValueError("not an RFC 3339 date-time")
        datetime.fromisoformat(value.upper())  # rejects impossible dates such as 2024-02-30
    return True


# --- CEL ----------------------------------------------------------------------------------

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
class _Program:
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


def compile_rule(rule: str) -> _Program:
    """Compile a CEL rule, or say why it cannot run here; never raises."""
    try:
        tree = _ENVIRONMENT.compile(rule)
    except Exception as err:  # celpy raises several parser error types
        return _Program(rule, problem=f"cannot compile: {err}")
    identifiers, functions = _references(tree)
    if "oldSelf" in identifiers:
        return _Program(rule, transition=True)
    unknown = sorted(functions - _KNOWN_FUNCTIONS)
    if unknown:
        return _Program(rule, problem=f"uses CEL functions this engine lacks: {', '.join(unknown)}")
    return _Program(rule, runner=_ENVIRONMENT.program(tree, functions=EXTENSIONS))


@lru_cache(maxsize=16384)
def _verdict(program: _Program, message: str | None, value_json: str) -> tuple[str, str] | None:
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


def _rules(node: Any) -> Iterator[str]:
    """Every CEL rule text anywhere in a schema."""
    if isinstance(node, Mapping):
        for validation in node.get("x-kubernetes-validations") or ():
            yield validation["rule"]
        for child in node.values():
            yield from _rules(child)
    elif isinstance(node, list):
        for child in node:
            yield from _rules(child)


# --- walking objects along their schema -----------------------------------------------------


def _join(path: str, key: Any, schema: Mapping[str, Any]) -> str:
    """Our path format: ``a.b`` for fields, ``a[0]`` for list items, ``a[key]`` for map entries."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(schema.get("additionalProperties"), Mapping) and key not in schema.get("properties", {}):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _child_schema(schema: Mapping[str, Any], key: Any) -> Mapping[str, Any] | None:
    if isinstance(key, int):
        return schema.get("items")
    child = (schema.get("properties") or {}).get(key)
    if child is None and isinstance(schema.get("additionalProperties"), Mapping):
        child = schema["additionalProperties"]
    return child


def _dotted(schema: Mapping[str, Any], parts: Iterable[Any]) -> str:
    path = ""
    for part in parts:
        path = _join(path, part, schema)
        schema = _child_schema(schema, part) or {}
    return path


def _prepare(schema: Mapping[str, Any], value: Any) -> Any:
    """The object as the API server validates it: non-nullable nulls dropped, defaults filled."""
    if isinstance(value, Mapping):
        properties = schema.get("properties") or {}
        out = {}
        for key, child in value.items():
            child_schema = _child_schema(schema, key)
            if child is None and key in properties and not properties[key].get("nullable"):
                continue
            out[key] = _prepare(child_schema, child) if child_schema else child
        for key, child_schema in properties.items():
            if key not in out and "default" in child_schema:
                out[key] = _prepare(child_schema, copy.deepcopy(child_schema["default"]))
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_prepare(schema["items"], item) for item in value]
    return value


def as_stored(schema: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``manifest`` as the API server stores it under this schema: nulls of non-nullable fields dropped,
    defaults filled (``verify`` compares it with the stored object, so a default is not drift)."""
    return _prepare(schema, _as_json(manifest))


def _nodes(schema: Mapping[str, Any], value: Any, path: str) -> Iterator[tuple[Mapping[str, Any], Any, str]]:
    """Every present (non-null) value with the schema node that describes it."""
    if value is None:
        return
    yield schema, value, path
    if isinstance(value, Mapping):
        pairs = value.items()
    elif isinstance(value, list):
        pairs = enumerate(value)
    else:
        return
    for key, child in pairs:
        child_schema = _child_schema(schema, key)
        if child_schema is not None:
            yield from _nodes(child_schema, child, _join(path, key, schema))


# --- CRDs ---------------------------------------------------------------------------------


class Crd:
    """The served v1 schema of one kind, ready to check manifests (rules compiled once)."""

    def __init__(self, kind: str, schema: Mapping[str, Any], source: str, status_subresource: bool) -> None:
        self.kind, self.schema, self.source = kind, schema, source
        self.status_subresource = status_subresource
        converted = to_json_schema(schema)
        converted.setdefault("properties", {})["metadata"] = _OBJECT_META
        self.validator = _Validator(converted, format_checker=_FORMATS)
        self.programs = {rule: compile_rule(rule) for rule in _rules(schema)}  # once per CRD

    def check(self, manifest: Mapping[str, Any]) -> Outcome:
        """Judge one full manifest (apiVersion, kind, metadata, spec)."""
        name = _name_of(manifest)
        obj = _as_json(manifest)
        if self.status_subresource:
            obj.pop("status", None)  # the API server ignores status outside its subresource
        obj = _prepare(self.schema, obj)
        findings, blocking = [], False
        api = API_OF_KIND[self.kind]
        if obj.get("apiVersion") != api:
            message = f"apiVersion {obj.get('apiVersion')!r} is not served; this CRD serves {api!r}"
            findings.append(self._observe(SCHEMA, name, "apiVersion", message))
            blocking = True
        for error in self.validator.iter_errors(obj):
            blocking = blocking or error.validator in _BLOCKING
            findings.append(self._observe(SCHEMA, name, _dotted(self.schema, error.absolute_path), error.message))
        if blocking:
            return Outcome(tuple(findings), (Skipped("", "*", BLOCKED),))
        skipped = []
        for schema, value, path in _nodes(self.schema, obj, ""):
            for validation in schema.get("x-kubernetes-validations") or ():
                rule = validation["rule"]
                program = self.programs[rule]
                if program.transition:
                    skipped.append(Skipped(path, rule, TRANSITION))
                    continue
                verdict = _verdict(program, validation.get("message"), json.dumps(value, sort_keys=True))
                if verdict is not None:
                    rule_id, message = verdict
                    findings.append(self._observe(rule_id, name, path, message))
        return Outcome(tuple(findings), tuple(skipped))

    def _observe(self, rule: str, name: str, path: str, message: str) -> Observation:
        return Observation(rule, self.kind, name, Violation(path, message))


def _as_json(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest as kubectl sends it: JSON, where YAML dates are strings and keys are strings."""
    return json.loads(json.dumps(manifest, default=lambda v: v.isoformat() if isinstance(v, date) else str(v)))


def _name_of(manifest: Mapping[str, Any]) -> str:
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    return name if isinstance(name, str) and name else "<unnamed>"


@dataclass(frozen=True)
class Crds:
    """The CRDs found under the paths the user gave, by kind."""

    by_kind: Mapping[str, Crd]

    def check(self, manifest: Mapping[str, Any]) -> Outcome | None:
        """Judge a manifest with its kind's CRD; ``None`` when no CRD of that kind was given."""
        crd = self.by_kind.get(manifest.get("kind"))
        return crd.check(manifest) if crd else None

    def check_inputs(self, inputs: Inputs) -> tuple[list[Observation], list[str]]:
        """CRD observations for every loaded object, and notes on what was not checked.

        A transition rule is noted once per kind and path, not once per object: it never runs offline.
        """
        findings: list[Observation] = []
        notes: dict[str, None] = {}  # ordered and without repeats
        for kind in sorted({obj.kind for obj in inputs.objects} - self.by_kind.keys()):
            notes[f"no {kind} CRD given; {kind} objects were not checked against a CRD"] = None
        for obj in inputs.objects:
            outcome = self.check(obj.raw)
            if outcome is None:
                continue
            findings.extend(replace(observation, source=obj.source) for observation in outcome.observations)
            for skipped in outcome.skipped:
                if skipped.reason == BLOCKED:
                    notes[f"{obj.kind}/{obj.name}: CRD CEL rules not checked: {BLOCKED}"] = None
                else:
                    notes[f"{obj.kind}: CRD rule at {skipped.path} not checked ({skipped.reason}): {skipped.rule}"] = None
        return findings, list(notes)
