"""How a model declares its fields: each one's CRD facts (:func:`prop`: wire name, enum, pattern, ranges, item
counts, the release that introduced it), the marker types a field may hold, and the wire-name table the
loader (:mod:`.typed_schema`) walks, worked out once per class.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Union

from karpenter_gitops.core.versions import Release


class SecretValue(str):
    """A Pulumi secret (``{secure: v1:...}``) in a stack file: a non-empty string nobody can read offline."""

    def __new__(cls) -> SecretValue:
        return super().__new__(cls, "(secret)")


class IntOrString:
    """Marker type for Kubernetes ``x-kubernetes-int-or-string`` values (quantities)."""


@dataclass(frozen=True)
class Prop:
    """Schema facts of one field, mirrored from the CRD."""

    wire: str | None = None
    required: bool = False
    required_until: Release | None = None  # required before this release, optional (defaulted) from it
    enum: Mapping[str, Release | None] | None = None  # value -> release that added it
    pattern: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    max_properties: int | None = None
    unique: Release | None = None  # x-kubernetes-list-type: set, from this release
    value_pattern: str | None = None  # pattern for each value of a map field
    int32: bool = False  # an integer of format int32: the API server refuses one outside its range
    since: Release | None = None


def prop(wire: str | None = None, *, enum: Any = None, **facts: Any) -> Any:
    """Declare a model field: ``enum`` may be a list or a ``{value: since}`` mapping."""
    if enum is not None and not isinstance(enum, Mapping):
        enum = {value: None for value in enum}
    return dataclasses.field(default=None, metadata={"prop": Prop(wire=wire, enum=enum, **facts)})


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class Field:
    """How one model field is read: its wire name, shape, item type and CRD facts."""

    attr: str
    wire: str
    kind: str  # "scalar" | "model" | "list" | "map"
    scalar: type | None
    item: Any  # model class or scalar type for lists/maps
    prop: Prop
    models: bool = False  # a list of models (not of scalars)
    # The type whose values (the field's own, its items' or its map's values) no check of the CRD applies to:
    # a value of exactly that type is taken as it is, which most values of a manifest are.
    unchecked: type | None = None


@cache
def crd_regex(pattern: str) -> re.Pattern[str]:
    """A CRD ``pattern`` compiled to match as the API server's Go RE2 does.

    Python's ``$`` also matches before a final newline, RE2's only at the very end: without the
    translation, ``expireAfter: >`` (folded, so ``"720h\\n"``) would pass here and be rejected there.
    The CRD patterns hold no ``$`` inside a character class or escaped, so a plain swap is exact.
    """
    return re.compile(pattern.replace("$", r"\Z"))


def _unwrap_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return tp


@cache
def fields_of(cls: type) -> dict[str, Field]:
    """The wire-name -> field table of a model class, computed once."""
    hints = typing.get_type_hints(cls)
    table: dict[str, Field] = {}
    for field in dataclasses.fields(cls):
        facts: Prop | None = field.metadata.get("prop")
        if facts is None:
            continue
        tp = _unwrap_optional(hints[field.name])
        origin = typing.get_origin(tp)
        if origin is tuple:
            kind, scalar, item = "list", None, typing.get_args(tp)[0]
        elif origin in (Mapping, dict) or tp is Mapping:
            kind, scalar, item = "map", None, typing.get_args(tp)[1]
        elif dataclasses.is_dataclass(tp):
            kind, scalar, item = "model", None, tp
        else:
            kind, scalar, item = "scalar", tp, None
        wire = facts.wire or camel(field.name)
        table[wire] = Field(
            attr=field.name,
            wire=wire,
            kind=kind,
            scalar=scalar,
            item=item,
            prop=facts,
            models=kind == "list" and dataclasses.is_dataclass(item),
            unchecked=_unchecked(kind, scalar if kind == "scalar" else item, facts),
        )
    return table


PLAIN_TYPES = frozenset({str, int, bool, float})


# Facts that never judge one value: the field's name and presence, and the bounds of its list or map as a whole.
_WHOLE_FIELD_FACTS = frozenset({"wire", "required", "required_until", "min_items", "max_items", "max_properties", "unique"})
# The facts that judge a value (a map's values are judged by value_pattern and since alone); a fact added to
# Prop judges scalar and list values until it is listed above, so the unchecked path cannot skip a new check
# there; one that judges a map's values must be added to _MAP_VALUE_FACTS by hand.
_VALUE_FACTS = tuple(fact for fact in dataclasses.fields(Prop) if fact.name not in _WHOLE_FIELD_FACTS | {"value_pattern"})
_MAP_VALUE_FACTS = tuple(fact for fact in dataclasses.fields(Prop) if fact.name in ("value_pattern", "since"))


def _unchecked(kind: str, tp: type | None, facts: Prop) -> type | None:
    """``tp`` when :meth:`Loader._scalar` would take its values unchanged (a string interned): a plain type, and
    every fact that judges a value left at its default."""
    judging = _MAP_VALUE_FACTS if kind == "map" else _VALUE_FACTS
    if tp not in PLAIN_TYPES or any(getattr(facts, fact.name) != fact.default for fact in judging):
        return None
    return tp
