"""What a rule reads of an object with blocking schema errors, so that its verdict stands only on well-formed fields.

The API server reports every schema error of an object at once and then runs none of its CEL rules; this
project's rules and its mirrors of Karpenter's controller still judge such an object, so one push shows
every mistake (a missing selector beside an IMDS hop limit that lets pods reach the node role, an unknown
Bottlerocket setting). A rule may only speak where what it read is well-formed: a field left out for its
wrong type, a required field that is missing or a value outside the enum would otherwise make it report
the schema error again, in other words, or judge a value that is not there.

So the rule runs on a watched copy of the object (:func:`watched`) that records the path of every field the
rule reads, and its violations are kept only when no field read holds, contains or lies inside a field
with such an error (:func:`well_formed`). Stepping into a nested object is no read of it; reading a list or
map is a read of all of it; reading the manifest itself (``raw``) is a read of everything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from functools import cache
from typing import Any

from karpenter_gitops.core.schema_fields import fields_of

_WHOLE = ""  # the path of a read of the whole object (its manifest)
_MANIFEST = frozenset({"raw", "document"})


def watched(obj: Any, reads: set[str]) -> Any:
    """A copy of the Karpenter object ``obj`` whose spec (and manifest) record each read into ``reads``."""
    cls: type = type(obj)
    copy: Any = object.__new__(_watching_document(cls))
    for name, value in vars(obj).items():
        object.__setattr__(copy, name, value)
    object.__setattr__(copy, "spec", _watched(obj.spec, "spec", reads))
    object.__setattr__(copy, "_reads", reads)
    return copy


def well_formed(reads: Iterable[str], broken: Iterable[str]) -> bool:
    """Whether none of the paths read holds, contains or lies inside a path with a blocking schema error."""
    broken = tuple(broken)
    return not any(_related(read, path) for read in reads for path in broken)


def _related(read: str, broken: str) -> bool:
    return read == _WHOLE or read == broken or _inside(broken, read) or _inside(read, broken)


def _inside(path: str, outer: str) -> bool:
    return path.startswith((f"{outer}.", f"{outer}["))


def _watched(value: Any, path: str, reads: set[str]) -> Any:
    if isinstance(value, tuple):
        return tuple(_watched(item, f"{path}[{index}]", reads) for index, item in enumerate(value))
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    cls: type = type(value)
    wires = _wires(cls)
    copy: Any = object.__new__(_watching_model(cls))
    for name, inner in vars(value).items():
        object.__setattr__(copy, name, _watched(inner, f"{path}.{wires[name]}", reads) if name in wires else inner)
    object.__setattr__(copy, "_path", path)
    object.__setattr__(copy, "_reads", reads)
    return copy


@cache
def _wires(cls: type) -> dict[str, str]:
    return {field.attr: field.wire for field in fields_of(cls).values()}


@cache
def _watching_model(cls: type) -> type:
    """``cls`` with every read of one of its fields recorded, unless it steps into a nested object."""
    wires = _wires(cls)

    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        wire = wires.get(name)
        if wire is not None and not (dataclasses.is_dataclass(value) and not isinstance(value, type)):
            object.__getattribute__(self, "_reads").add(f"{object.__getattribute__(self, '_path')}.{wire}")
        return value

    return type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__module__": cls.__module__})


@cache
def _watching_document(cls: type) -> type:
    """A Karpenter object's class with a read of its manifest recorded as a read of everything."""

    def __getattribute__(self, name: str) -> Any:
        if name in _MANIFEST:
            object.__getattribute__(self, "_reads").add(_WHOLE)
        return object.__getattribute__(self, name)

    return type(cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__module__": cls.__module__})
