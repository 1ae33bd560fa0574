"""A CRD's structural (OpenAPI v3) schema as JSON Schema, and objects as the API server sees them.

The translation keeps what the API server checks: unknown fields are errors (each at its own path, as
``kubectl apply --validate=strict`` reports them), ``x-kubernetes-list-type: set`` means unique items,
patterns are RE2's, and of the formats only ``date-time`` is checked. Before validating, the API
server drops nulls of non-nullable fields and fills defaults; :func:`prepare` does the same.

jsonschema-rs validates (natively, in Rust); :class:`SchemaValidator` says its errors in the words
this check has always used. Its regexes are ECMA-262's, so each RE2 pattern is rewritten where the
two differ (``\\s`` and ``.``); a pattern that cannot be rewritten is matched by RE2 itself.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import date, datetime
from typing import Any

import jsonschema_rs
import re2

# Keywords whose OpenAPI v3 meaning is the same in JSON Schema 2020-12 (``pattern`` is translated).
_SAME_KEYWORDS = (
    "enum",
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
_RE2_PATTERN = "x-re2-pattern"  # our keyword for a pattern ECMA-262 cannot say: RE2 matches it, in Python
# RE2's classes in ECMA-262 terms (RE2's \s is ASCII whitespace without \v; its . stops only at \n).
_SPACE = "\\t\\n\\f\\r "
_OUTSIDE_CLASS = {"\\s": f"[{_SPACE}]", "\\S": f"[^{_SPACE}]", ".": "[^\\n]"}


def ecma_pattern(pattern: str) -> str | None:
    """An RE2 pattern as an ECMA-262 one that matches the same strings, or None when it cannot be said so."""
    out, index, in_class = [], 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            escape = pattern[index : index + 2]
            if escape[1:] in ("p", "P", "Q", "E", "z", "A", "C") or (in_class and escape == "\\S"):
                return None  # RE2's own escapes
            out.append(_SPACE if in_class and escape == "\\s" else _OUTSIDE_CLASS.get(escape, escape) if not in_class else escape)
            index += 2
            continue
        if in_class:
            if pattern.startswith("[:", index):
                return None  # a POSIX class
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            if pattern.startswith(("]", "^]"), index + 1):
                return None  # a literal ']' first in a class: rare, and read differently
            in_class = True
            out.append(char)
        elif pattern.startswith("(?", index) and not pattern.startswith(("(?:", "(?P<", "(?<"), index):
            return None  # flags: (?s) changes what '.' means
        else:
            out.append(_OUTSIDE_CLASS.get(char, char))
        index += 1
    return "".join(out)


def to_json_schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """Translate one structural-schema node; objects reject fields they do not declare."""
    out: dict[str, Any] = {key: node[key] for key in _SAME_KEYWORDS if key in node}
    if "pattern" in node:
        translated = ecma_pattern(node["pattern"])
        out["pattern" if translated is not None else _RE2_PATTERN] = translated if translated is not None else node["pattern"]
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


class _Re2Pattern:
    """``x-re2-pattern``: a pattern jsonschema-rs's regexes cannot say, matched by RE2."""

    def __init__(self, parent: Any, pattern: str, schema_path: Any) -> None:
        self.pattern = re2.compile(pattern)

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and not self.pattern.search(instance):
            raise ValueError(f"{instance!r} does not match {self.pattern.pattern!r}")


_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)\Z")


def _is_date_time(value: str) -> bool:
    """RFC 3339, as the API server checks ``format: date-time`` (a space may separate date and time)."""
    if not _RFC3339.match(value):
        return False
    try:
        datetime.fromisoformat(value.upper())  # rejects impossible dates such as 2024-02-30
    except ValueError:
        return False
    return True


def _by_limit(empty: str, one: str, other: str) -> Callable[[Any, Mapping[str, str]], str]:
    return lambda kind, _: empty if kind.limit == 0 else one if kind.limit == 1 else other


# python-jsonschema's words after the value, which our CRD findings have always printed, by jsonschema-rs's kind.
_WORDS: Mapping[str, Callable[[Any, Mapping[str, str]], str]] = {
    "enum": lambda kind, _: f"is not one of {list(kind.options)!r}",
    "type": lambda kind, _: f"is not of type {', '.join(repr(t) for t in kind.types)}",
    "pattern": lambda kind, originals: f"does not match {originals.get(kind.pattern, kind.pattern)!r}",
    "maxLength": _by_limit("is expected to be empty", "is too long", "is too long"),
    "maxItems": _by_limit("is expected to be empty", "is too long", "is too long"),
    "maxProperties": _by_limit("is expected to be empty", "has too many properties", "has too many properties"),
    "minLength": _by_limit("is too short", "should be non-empty", "is too short"),
    "minItems": _by_limit("is too short", "should be non-empty", "is too short"),
    "minProperties": _by_limit("", "should be non-empty", "does not have enough properties"),
    "minimum": lambda kind, _: f"is less than the minimum of {kind.limit!r}",
    "maximum": lambda kind, _: f"is greater than the maximum of {kind.limit!r}",
    "uniqueItems": lambda kind, _: "has non-unique elements",
    "format": lambda kind, _: f"is not a {kind.format!r}",
}


def _message(error: Any, originals: Mapping[str, str]) -> str:
    """One jsonschema-rs error in the words of the rest of our CRD findings; its own words for other kinds."""
    words = _WORDS.get(error.kind.name)
    return f"{error.instance!r} {words(error.kind, originals)}" if words else str(error.message)


def _patterns(node: Any) -> Iterator[tuple[str, str]]:
    """(ECMA-262 form, RE2 original) of every pattern in a structural schema."""
    if isinstance(node, Mapping):
        if isinstance(node.get("pattern"), str) and (translated := ecma_pattern(node["pattern"])) is not None:
            yield translated, node["pattern"]
        for child in node.values():
            yield from _patterns(child)
    elif isinstance(node, list):
        for child in node:
            yield from _patterns(child)


class SchemaValidator:
    """A structural schema on jsonschema-rs; errors as (keyword, path parts, message), one per unknown field
    and per missing field, each at its own path, as kubectl's strict validation and the API server say them."""

    def __init__(self, structural: Mapping[str, Any], converted: Mapping[str, Any]) -> None:
        self._originals = dict(_patterns(structural))
        self._converted = converted
        self._validator = self._built()

    def _built(self) -> Any:
        return jsonschema_rs.Draft202012Validator(
            self._converted, validate_formats=True, formats={"date-time": _is_date_time}, keywords={_RE2_PATTERN: _Re2Pattern}
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as the JSON schema it was built from (jsonschema-rs's validators do not pickle)."""
        return {"_originals": self._originals, "_converted": self._converted}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._validator = self._built()

    def errors(self, instance: Any) -> Iterator[tuple[str, list[Any], str]]:
        for error in self._validator.iter_errors(instance):
            name, path = error.kind.name, list(error.instance_path)
            if name == "additionalProperties":
                for key in error.kind.unexpected:
                    yield name, [*path, key], f"unknown field {key!r}"
            elif name == "required":
                yield name, [*path, error.kind.property], "Required value"
            elif name == _RE2_PATTERN:
                yield "pattern", path, str(error.message)
            else:
                yield name, path, _message(error, self._originals)


# Below, values are JSON (see as_json) and schemas are parsed YAML: plain dicts, tested as such (an ABC's
# isinstance costs several times more, on every node of every object).


def _join(path: str, key: Any, schema: Mapping[str, Any]) -> str:
    """Our path format: ``a.b`` for fields, ``a[0]`` for list items, ``a[key]`` for map entries."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(schema.get("additionalProperties"), dict) and key not in schema.get("properties", {}):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _child_schema(schema: Mapping[str, Any], key: Any) -> Mapping[str, Any] | None:
    if isinstance(key, int):
        return schema.get("items")
    child = (schema.get("properties") or {}).get(key)
    if child is None and isinstance(schema.get("additionalProperties"), dict):
        child = schema["additionalProperties"]
    return child


def dotted(schema: Mapping[str, Any], parts: Iterable[Any]) -> str:
    path = ""
    for part in parts:
        path = _join(path, part, schema)
        schema = _child_schema(schema, part) or {}
    return path


def prepare(schema: Mapping[str, Any], value: Any) -> Any:
    """The object as the API server validates it, in JSON values (see :func:`as_json`): non-nullable nulls
    dropped, defaults filled. One walk does both, copying what it walks (``value`` is left as it is): the
    parts no schema describes are converted whole, and a mapping with keys other than strings too."""
    kind = type(value)
    if kind is dict:
        _, properties, additional, defaults, not_nullable = _node(schema)
        out = {}
        for key, child in value.items():
            if type(key) is not str:  # YAML keys such as 1 or true: JSON's words for them
                return prepare(schema, as_json(value))
            if child is None and key in not_nullable:
                continue
            if type(child) in _JSON_SCALARS:
                out[key] = child
                continue
            child_schema = properties.get(key, additional)
            out[key] = prepare(child_schema, child) if child_schema is not None else as_json(child)
        for key, default in defaults:
            if key not in out:
                out[key] = prepare(properties[key], copy.deepcopy(default))
        return out
    if kind is list:
        items = schema.get("items")
        if not isinstance(items, dict):
            return as_json(value)
        return [item if type(item) in _JSON_SCALARS else prepare(items, item) for item in value]
    return value if kind in _JSON_SCALARS else as_json(value)


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
_Node = tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any] | None, tuple[tuple[str, Any], ...], frozenset[str]]
_NODES: dict[int, _Node] = {}
# Schema nodes worked out at most (the CRDs of one release have a few thousand); a long-lived process that
# loads CRDs again and again (the policy pack, the dynamic provider) starts over past it, never grows.
_NODES_KEPT = 50_000


def _node(schema: Mapping[str, Any]) -> _Node:
    """What :func:`prepare` asks of a mapping's schema node: the node itself (held, so that no other object
    takes its id), its properties, the schema of other keys, the properties with a default and those that
    are not nullable. Worked out once per node: looking through every property of every node for them
    cost as much as the rest of the walk."""
    found = _NODES.get(id(schema))
    if found is None:
        if len(_NODES) >= _NODES_KEPT:
            _NODES.clear()
        properties = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        found = _NODES[id(schema)] = (
            schema,
            properties,
            additional if isinstance(additional, dict) else None,
            tuple((key, child["default"]) for key, child in properties.items() if "default" in child),
            frozenset(key for key, child in properties.items() if not child.get("nullable")),
        )
    return found


def as_stored(schema: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``manifest`` as the API server stores it under this schema: nulls of non-nullable fields dropped,
    defaults filled (``verify`` compares it with the stored object, so a default is not drift)."""
    return prepare(schema, manifest)


def as_json(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest as kubectl sends it: JSON, where YAML dates are strings and keys are strings."""
    return json.loads(json.dumps(manifest, default=lambda v: v.isoformat() if isinstance(v, date) else str(v)))
