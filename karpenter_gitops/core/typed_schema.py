"""Typed, immutable models that carry their own CRD schema constraints.

Each model is a frozen dataclass whose fields declare, through :func:`~.schema_fields.prop`, the wire name
and the OpenAPI constraints of the Karpenter CRD (enum, pattern, ranges, item counts, the release
that introduced the field). :func:`load` turns plain YAML data into a model and collects every
schema violation with its dotted path instead of stopping at the first one, so one run reports
all problems. One walker serves both kinds; the models stay plain data.

A model never holds a value of the wrong shape: a value whose type is wrong is reported and left
out (the field stays ``None``, the list item or map entry is dropped), so whatever reads a model
can trust its annotations. :attr:`Loaded.blocked` says whether loading found an error the
Kubernetes API server treats as blocking (apiextensions ``hasBlockingErr``: a wrong type, a
missing required field, a value outside the enum, too long, too many items or properties); the
API server then runs no CEL rule on that object, and the judge runs the other rules only where
the fields they read are well-formed.

Loading is most of a large run's work, and a repository's objects repeat their small parts (a fleet's
NodePools share requirements and budgets, its classes selectors and devices): plain values that passed
their checks (``_TAKEN``) and small models loaded without a violation (``_REUSED``) are taken again for an
equal value, never for one that differs, even by its type alone.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import pickle
import sys
import types
from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

from karpenter_gitops.core.findings import Violation
from karpenter_gitops.core.schema_fields import PLAIN_TYPES, Field, IntOrString, Prop, SecretValue, crd_regex, fields_of
from karpenter_gitops.core.versions import Release, show

_SHARED_LENGTH = 256
_PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL

# Rule ids of the schema layer (registered with their docs in rules/schema.py).
UNKNOWN_FIELD = "schema/unknown-field"
WRONG_TYPE = "schema/type"
REQUIRED = "schema/required"
ENUM = "schema/enum"
PATTERN = "schema/pattern"
RANGE = "schema/range"
SIZE = "schema/size"
NEWER_FIELD = "schema/version"
DUPLICATE = "schema/duplicate"
UNIQUE = "schema/unique"
API_VERSION = "schema/api-version"
UNSERVED_KIND = "schema/kind"
SECRET = "schema/secret"
# Rule ids whose violations are always blocking; schema/size is blocking only for an upper bound.
_BLOCKING = frozenset({WRONG_TYPE, REQUIRED, ENUM})
# Rule ids whose violations leave a field unfit to judge: dropped for its type, missing, outside the enum, or of a
# size the API server refuses (a lower bound too: what a rule reads there is not what the user meant either).
MALFORMED = _BLOCKING | {SIZE}


class _Shape(NamedTuple):
    """What loading needs of a model class, worked out once per class."""

    fields: dict[str, Field]  # by wire name
    required: tuple[Field, ...]
    open_since: Release | None  # the release from which its CRD keeps any field (OPEN_SINCE)
    sparse: bool  # every field has a plain default, read from the class: an instance needs only the fields given
    reused: bool  # a small model (see _height): one loaded without a violation serves every equal value after it


@cache
def _shape(cls: type) -> _Shape:
    table = fields_of(cls)
    required = tuple(field for field in table.values() if field.prop.required or field.prop.required_until)
    sparse = not hasattr(cls, "__post_init__") and all(
        field.init and field.default is not dataclasses.MISSING for field in dataclasses.fields(cls)
    )
    opened = getattr(cls, "OPEN_SINCE", None)
    return _Shape(table, required, opened, sparse, opened is None and _height(cls) <= _REUSED_HEIGHT)


#: The models of at most this many levels are reused by value: a requirement, a taint, a budget, a selector term,
#: a block device with its volume. The objects of a repository repeat them (a fleet's NodePools share their
#: requirements and budgets, its classes their selectors and devices); an object's whole spec seldom repeats, and
#: its key (the value pickled) would cost as much as all its levels below.
_REUSED_HEIGHT = 1
#: (class, release, the value pickled) -> the model a value loaded into without a violation; bounded, like _TAKEN.
_REUSED: dict[tuple[type, Release, bytes], Any] = {}
_REUSED_KEPT = 50_000


@cache
def _height(cls: type) -> int:
    """0 for a model of scalars, lists and maps of scalars; one more than its tallest model field's otherwise."""
    nested = [field.item for field in fields_of(cls).values() if field.kind == "model" or field.models]
    return 1 + max(map(_height, nested)) if nested else 0


def _make(shape: _Shape, cls: type, values: dict[str, Any]) -> Any:
    """``cls(**values)``, for a class whose every field has a plain default: only the fields given are set
    on the instance, the rest read the class's defaults (a dataclass keeps each plain default as a class
    attribute), so equality, hashing, ``replace`` and pickling are as for ``cls(**values)``. A frozen
    dataclass's ``__init__`` sets all its fields (up to 22 for a class's spec), which cost as much as
    checking them; a full instance dict per model was also a third of a large run's memory."""
    if not shape.sparse:
        return cls(**values)
    made: Any = object.__new__(cls)
    for name, value in values.items():
        _set(made, name, value)
    return made


_set = object.__setattr__


def _taken(value: Any) -> Any:
    """A value as a model keeps it: short strings interned, since models of many objects share their labels, keys
    and values."""
    return sys.intern(value) if type(value) is str and len(value) <= _SHARED_LENGTH else value


_TYPE_NAMES = {str: "string", int: "integer", bool: "boolean", float: "number"}
_NOT_MAPPINGS = frozenset({str, int, float, bool, list, type(None)})  # types an isinstance(Mapping) check can skip
# (id of an enum, release) -> (the enum, the values allowed)
_ALLOWED: dict[tuple[int, Release], tuple[Mapping[str, Release | None], list[str]]] = {}
# (id of the facts, type, value, release) -> (the facts, the value kept) of plain values that
# passed Loader._scalar's checks; bounded, so that a long-lived process reading ever new values does not grow.
_TAKEN: dict[tuple[int, type, Any, Release], tuple[Prop, Any]] = {}
_TAKEN_KEPT = 100_000


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else type(value).__name__


def _quote(value: Any) -> str:
    """A value as the API server quotes it; escapes keep a newline from splitting the message."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def _newline_hint(value: str) -> str | None:
    if value.endswith("\n"):
        return "the value ends with a newline, as a YAML block scalar (| or >) leaves it; write it on the key's line"
    return None


class Loader:
    """Walks YAML data into models for one Karpenter release, collecting violations."""

    def __init__(self, release: Release, *, open_models: bool = True) -> None:
        self.release = release
        self.violations: list[tuple[str, Violation]] = []
        self.blocked = False
        self.open_models = open_models  # whether a model's OPEN_SINCE applies (off inside the open check itself)

    def report(self, rule: str, path: str, message: str, hint: str | None = None, *, blocking: bool = False) -> None:
        self.violations.append((rule, Violation(path, message, hint)))
        self.blocked = self.blocked or blocking or rule in _BLOCKING

    def model(self, cls: type, data: Any, path: str) -> Any:
        if type(data) is not dict and not isinstance(data, Mapping):  # dict first: the ABC check is slow
            self.report(WRONG_TYPE, path, f"Invalid value: {type_name(data)}: must be of type object")
            return None
        shape = _shape(cls)
        opened = shape.open_since
        if opened is not None and self.open_models and self.release >= opened:
            return self._checked_by_karpenter(cls, data, path)
        if not shape.reused:
            return self._built(shape, cls, data, path)
        try:
            key = (cls, self.release, pickle.dumps(data, _PICKLE_PROTOCOL))
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError):  # nothing YAML or JSON reads
            return self._built(shape, cls, data, path)
        known = _REUSED.get(key)
        if known is not None:
            return known
        reported = len(self.violations)
        made = self._built(shape, cls, data, path)
        if len(self.violations) == reported:
            if len(_REUSED) >= _REUSED_KEPT:
                _REUSED.clear()
            _REUSED[key] = made
        return made

    def _built(self, shape: _Shape, cls: type, data: Mapping[str, Any], path: str) -> Any:
        """A model of ``cls`` built from ``data``, field by field, each violation reported."""
        table = shape.fields
        values: dict[str, Any] = {}
        for key, raw in data.items():
            field = table.get(key)
            if field is not None and type(raw) is field.unchecked and field.kind == "scalar":
                values[field.attr] = _taken(raw)
                continue
            child = f"{path}.{key}" if path else str(key)
            if field is None:
                self._unknown(key, child, table)
                continue
            since = field.prop.since
            if since and self.release < since:
                self.report(
                    NEWER_FIELD,
                    child,
                    f"field {key!r} needs Karpenter {show(since)} or later; "
                    f"the {show(self.release)} API server drops it silently",
                    f"upgrade Karpenter to {show(since)}+ or remove {key!r}",
                )
                continue
            if raw is None:
                continue
            if field.kind == "scalar":
                values[field.attr] = self._scalar(field.scalar, raw, child, field.prop)
            else:
                values[field.attr] = self._value(field, raw, child)
        for field in shape.required:
            if field.prop.required_until and self.release >= field.prop.required_until:
                continue
            # The API server drops a null of a non-nullable field before validating, so a null
            # required field is as missing as an absent one.
            if data.get(field.wire) is None:
                child = f"{path}.{field.wire}" if path else field.wire
                self.report(REQUIRED, child, "Required value", f"add {field.wire!r}")
        return _make(shape, cls, values)

    def _checked_by_karpenter(self, cls: type, data: Mapping[str, Any], path: str) -> Any:
        """An object whose CRD keeps any field from this release (x-kubernetes-preserve-unknown-fields):
        the API server checks nothing inside it, so nothing here is a schema violation. The typed
        fields are loaded for the rules that read them; Karpenter's own checks of the object, made
        when it reconciles, are rules of their own (see the class's docstring)."""
        return Loader(self.release, open_models=False).model(cls, data, path)

    def _unknown(self, key: Any, path: str, table: Mapping[str, Field]) -> None:
        close = difflib.get_close_matches(str(key), list(table), n=1, cutoff=0.6)
        if not close:
            lowered = {wire.lower(): wire for wire in table}
            close = [lowered[str(key).lower()]] if str(key).lower() in lowered else []
        hint = f"did you mean {close[0]!r}?" if close else f"known fields: {', '.join(sorted(table))}"
        self.report(UNKNOWN_FIELD, path, f"unknown field {key!r}", hint)

    def _value(self, field: Field, raw: Any, path: str) -> Any:
        facts = field.prop
        if field.kind == "model":
            return self.model(field.item, raw, path)
        if field.kind == "list":
            if not isinstance(raw, list):
                self.report(WRONG_TYPE, path, f"Invalid value: {type_name(raw)}: must be of type array")
                return None
            self._count(path, len(raw), facts.min_items, facts.max_items, "items")
            if facts.unique is not None and self.release >= facts.unique:
                self._unique(path, raw)
            items = []
            for index, item in enumerate(raw):
                if type(item) is field.unchecked:
                    items.append(_taken(item))
                    continue
                if field.models:
                    value = self.model(field.item, item, f"{path}[{index}]")
                else:
                    value = self._scalar(field.item, item, f"{path}[{index}]", facts)
                if value is not None:  # a wrong-shaped item was reported and is left out
                    items.append(value)
            return tuple(items)
        if field.kind == "map":
            if type(raw) is not dict and not isinstance(raw, Mapping):
                self.report(WRONG_TYPE, path, f"Invalid value: {type_name(raw)}: must be of type object")
                return None
            self._count(path, len(raw), None, facts.max_properties, "properties")
            out = {}
            for key, value in raw.items():
                if type(value) is field.unchecked:
                    loaded = _taken(value)
                else:
                    loaded = self._scalar(field.item, value, f"{path}[{key}]", facts, map_value=True)
                if loaded is not None:
                    out[sys.intern(str(key))] = loaded
            return types.MappingProxyType(out)
        return self._scalar(field.scalar, raw, path, facts)

    def _unique(self, path: str, raw: list[Any]) -> None:
        seen = []
        for index, item in enumerate(raw):
            if item in seen:
                self.report(UNIQUE, f"{path}[{index}]", f"Duplicate value: {_quote(item)}", "list each value once")
            seen.append(item)

    def _count(self, path: str, size: int, low: int | None, high: int | None, noun: str) -> None:
        if low is not None and size < low:
            self.report(SIZE, path, f"Invalid value: {size}: should have at least {low} {noun}")
        if high is not None and size > high:
            self.report(SIZE, path, f"Too many: {size}: must have at most {high} {noun}", blocking=True)

    def _scalar(self, tp: Any, raw: Any, path: str, facts: Prop, map_value: bool = False) -> Any:
        """The value a model keeps for ``raw`` (None when it is of the wrong type), each violation reported. A
        plain value taken without a violation is remembered with the facts it was checked against: the same
        labels, keys and values recur in every object of a large run."""
        raw_type = type(raw)
        if raw_type not in PLAIN_TYPES:
            return self._checked_scalar(tp, raw, path, facts, map_value)
        key = (id(facts), raw_type, raw, self.release)  # a field's facts are a map's or not, never both
        known = _TAKEN.get(key)
        if known is not None:
            return known[1]
        reported = len(self.violations)
        value = self._checked_scalar(tp, raw, path, facts, map_value)
        if value is not None and len(self.violations) == reported:
            if len(_TAKEN) >= _TAKEN_KEPT:
                _TAKEN.clear()
            _TAKEN[key] = (facts, value)  # the facts kept alive, so that their id names them while the entry lasts
        return value

    def _checked_scalar(self, tp: Any, raw: Any, path: str, facts: Prop, map_value: bool) -> Any:
        raw_type = type(raw)
        if raw_type not in _NOT_MAPPINGS and isinstance(raw, Mapping) and set(raw) == {"secure"} and tp in (str, Any):
            self.report(SECRET, path, "a Pulumi secret: encrypted in the stack file, so it is checked at preview, not offline")
            return SecretValue()
        if tp is IntOrString:
            if isinstance(raw, bool) or not isinstance(raw, (int, str)):
                self.report(WRONG_TYPE, path, f"Invalid value: {type_name(raw)}: must be an integer or a string")
                return None
            text = str(raw)
            if facts.value_pattern and map_value and not crd_regex(facts.value_pattern).search(text):
                self.report(
                    PATTERN, path, f"Invalid value: {_quote(text)}: should match a Kubernetes quantity", _newline_hint(text)
                )
            return raw
        if tp is Any:
            return raw
        if raw_type is tp:  # the common case, and exact: a bool is no int here
            ok = True
        else:
            ok = isinstance(raw, tp) and not (tp is int and isinstance(raw, bool))
            if tp is int and isinstance(raw, float) and raw.is_integer():
                raw, ok = int(raw), True
        if not ok:
            hint = None
            if tp is str and isinstance(raw, (bool, int, float)):  # YAML read `5`, `1.30` or `true` as a non-string
                hint = f'quote it: "{json.dumps(raw)}"'
            self.report(WRONG_TYPE, path, f"Invalid value: {_quote(raw)}: must be of type {_TYPE_NAMES.get(tp, tp)}", hint)
            return None
        pattern = facts.value_pattern if map_value else facts.pattern
        if isinstance(raw, str):
            if pattern and not crd_regex(pattern).search(raw):
                self.report(PATTERN, path, f"Invalid value: {_quote(raw)}: should match '{pattern}'", _newline_hint(raw))
            if not map_value:
                if facts.max_length is not None and len(raw) > facts.max_length:
                    self.report(SIZE, path, f"Too long: may not be more than {facts.max_length} bytes", blocking=True)
                if facts.min_length is not None and len(raw) < facts.min_length:
                    self.report(SIZE, path, f"Invalid value: {_quote(raw)}: should be at least {facts.min_length} chars long")
            raw = _taken(raw)
        if facts.enum is not None and not map_value:
            self._enum(raw, path, facts.enum)
        if isinstance(raw, int) and not map_value:
            if facts.minimum is not None and raw < facts.minimum:
                self.report(RANGE, path, f"Invalid value: {raw}: should be greater than or equal to {facts.minimum}")
            if facts.maximum is not None and raw > facts.maximum:
                self.report(RANGE, path, f"Invalid value: {raw}: should be less than or equal to {facts.maximum}")
            if facts.int32 and not -(2**31) <= raw < 2**31:
                self.report(RANGE, path, f"Invalid value: {raw}: Checked value must be of type integer with format int32")
        return raw

    def _enum(self, raw: Any, path: str, enum: Mapping[str, Release | None]) -> None:
        known = _ALLOWED.get((id(enum), self.release))
        if known is None:  # kept with the enum itself, so that its id cannot be reused while it is a key
            known = _ALLOWED[id(enum), self.release] = (
                enum,
                [v for v, since in enum.items() if since is None or self.release >= since],
            )
        allowed = known[1]
        if raw in allowed:
            return
        supported = ", ".join(_quote(value) for value in allowed)
        since = enum.get(raw)
        if since is not None:
            self.report(
                ENUM,
                path,
                f"Unsupported value: {_quote(raw)}: supported values: {supported}",
                f"{raw!r} needs Karpenter {show(since)} or later",
            )
            return
        close = difflib.get_close_matches(str(raw), allowed, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else None
        self.report(ENUM, path, f"Unsupported value: {_quote(raw)}: supported values: {supported}", hint)


class Loaded(NamedTuple):
    """A model (None when the data is not an object), its ``(rule id, violation)`` pairs, and whether
    one of them blocks the object rules."""

    model: Any
    violations: list[tuple[str, Violation]]
    blocked: bool


def load(cls: type, data: Any, path: str, release: Release) -> Loaded:
    """Load ``data`` into ``cls``, collecting every violation."""
    loader = Loader(release)
    model = loader.model(cls, data, path)
    return Loaded(model, loader.violations, loader.blocked)
