"""A CRD's structural (OpenAPI v3) schema as JSON Schema, and objects as the API server sees them.

The translation keeps what the API server checks: unknown fields are errors (each at its own path, as
``kubectl apply --validate=strict`` reports them), ``x-kubernetes-list-type: set`` means unique items,
patterns are RE2's, and of the formats only ``date-time`` is checked. Before validating, the API
server drops nulls of non-nullable fields and fills defaults; :func:`prepare` does the same.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime
from typing import Any

import re2
from jsonschema import FormatChecker, ValidationError, validators

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
Validator = validators.extend(
    _BASE, {"additionalProperties": _unknown_fields, "required": _required, "pattern": _pattern}
)
FORMATS = FormatChecker(formats=())
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)\Z")


@FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: Any) -> bool:
    """RFC 3339, as the API server checks ``format: date-time`` (jsonschema needs an extra for it)."""
    if isinstance(value, str):
        if not _RFC3339.match(value):
            raise ValueError("not an RFC 3339 date-time")
        datetime.fromisoformat(value.upper())  # rejects impossible dates such as 2024-02-30
    return True


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


def dotted(schema: Mapping[str, Any], parts: Iterable[Any]) -> str:
    path = ""
    for part in parts:
        path = _join(path, part, schema)
        schema = _child_schema(schema, part) or {}
    return path


def prepare(schema: Mapping[str, Any], value: Any) -> Any:
    """The object as the API server validates it: non-nullable nulls dropped, defaults filled."""
    if isinstance(value, Mapping):
        properties = schema.get("properties") or {}
        out = {}
        for key, child in value.items():
            child_schema = _child_schema(schema, key)
            if child is None and key in properties and not properties[key].get("nullable"):
                continue
            out[key] = prepare(child_schema, child) if child_schema else child
        for key, child_schema in properties.items():
            if key not in out and "default" in child_schema:
                out[key] = prepare(child_schema, copy.deepcopy(child_schema["default"]))
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [prepare(schema["items"], item) for item in value]
    return value


def as_stored(schema: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``manifest`` as the API server stores it under this schema: nulls of non-nullable fields dropped,
    defaults filled (``verify`` compares it with the stored object, so a default is not drift)."""
    return prepare(schema, as_json(manifest))


def nodes(schema: Mapping[str, Any], value: Any, path: str) -> Iterator[tuple[Mapping[str, Any], Any, str]]:
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
            yield from nodes(child_schema, child, _join(path, key, schema))


def as_json(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest as kubectl sends it: JSON, where YAML dates are strings and keys are strings."""
    return json.loads(json.dumps(manifest, default=lambda v: v.isoformat() if isinstance(v, date) else str(v)))
