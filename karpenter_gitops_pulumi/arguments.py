"""The components' arguments as users type them: one reader for every ``*Args`` of this package.

An ``*Args`` is a TypedDict, so ``NodeClassArgs(nodePools=...)`` and ``{"nodePools": ...}`` are plain
dicts that Python never checks: a key it does not know would be ignored and a missing one would be
a ``KeyError`` deep in a constructor. :func:`read` checks them where the component starts, before it
registers anything, and accepts each field's camelCase spelling too (``pin_amis`` or ``pinAmis``, as
the stack file spells it). The spellings are made from the declared fields, so a new field gets its
alias with it; a key neither spelling knows is one line naming the component, the key and the
closest field.
"""

import functools
import typing
from collections.abc import Mapping
from typing import Any

import pulumi

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.text import did_you_mean

# The value types a field may declare, with what a value of each must be and how to say so.
_KINDS: dict[Any, tuple[type | tuple[type, ...], str]] = {
    dict: (Mapping, "a mapping"),
    list: ((list, tuple), "a list"),
    bool: (bool, "true or false"),
    str: (str, "a string"),
}


def camel(field: str) -> str:
    """``pin_amis`` → ``pinAmis``: a field as the stack file and the CRDs spell it."""
    head, *rest = field.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.cache
def _hints(args_type: type) -> dict[str, Any]:
    """The fields' declared types (``NotRequired`` taken off)."""
    return typing.get_type_hints(args_type)


@functools.cache
def spellings(args_type: type) -> dict[str, str]:
    """Every accepted spelling of ``args_type``'s fields (snake_case and camelCase), to the field."""
    return {spelling: field for field in args_type.__annotations__ for spelling in (field, camel(field))}


def _mismatch(value: Any, hint: Any, at: str) -> str | None:
    """Why ``value`` (found ``at``) cannot be the declared ``hint`` (``node_pools['gpu'] must be a mapping,
    not str``); None when it fits. Outputs fit (they are judged once known), and so does any type not in
    :data:`_KINDS` (a component object, ``Any``)."""
    if isinstance(value, pulumi.Output):
        return None
    origin = dict if typing.is_typeddict(hint) else typing.get_origin(hint) or hint
    if origin not in _KINDS:
        return None
    types, expected = _KINDS[origin]
    if not isinstance(value, types):
        return f"{at} must be {expected}, not {type(value).__name__}"
    items = () if typing.is_typeddict(hint) else typing.get_args(hint)
    if origin is dict and len(items) == 2:
        entries = typing.cast(Mapping[Any, Any], value)
        return next((m for key, item in entries.items() if (m := _mismatch(item, items[1], f"{at}[{key!r}]"))), None)
    if origin is list and items:
        listed = typing.cast(list[Any], value)
        return next((m for index, item in enumerate(listed) if (m := _mismatch(item, items[0], f"{at}[{index}]"))), None)
    return None


def read(args: Any, args_type: type, where: str, *, typed: bool = True) -> dict[str, Any]:
    """``args`` with each key spelled as its field; an unknown, doubled or missing key, or a value that cannot be
    its field's type, is an InputError at ``where`` (the component and its name, or the stack key the values
    came from). ``typed=False`` leaves the values to whoever reads them: the ``Fleet``'s are the stack's, which
    the loader judges in the stack file's words."""
    name = args_type.__name__
    required: frozenset[str] = getattr(args_type, "__required_keys__", frozenset())  # declared without NotRequired
    if not isinstance(args, Mapping):
        raise InputError(f"{name} must be a mapping, not {type(args).__name__}", where, hint=f"pass {name}(...) or a dict")
    known = spellings(args_type)
    fields: dict[str, Any] = {}
    given: dict[str, str] = {}
    for key, value in args.items():
        field = known.get(key) if isinstance(key, str) else None
        if field is None:
            raise InputError(
                f"{name} has no argument {key!r}",
                where,
                hint=did_you_mean(str(key), known) or f"its arguments: {', '.join(args_type.__annotations__)}",
            )
        if field in fields:
            raise InputError(f"{name} got {field!r} twice, as {given[field]!r} and {key!r}", where, hint="keep one")
        hint = _hints(args_type)[field]
        # None is "not given" for an optional field, and a name left unset (its use names it); else a mistake
        optional = field not in required or hint is str
        mismatch = None if not typed or (value is None and optional) else _mismatch(value, hint, f"{name}.{field}")
        if mismatch:
            raise InputError(mismatch, where)
        nested = typing.is_typeddict(hint) and value is not None
        fields[field] = read(value, hint, f"{where}, {field}") if nested else value
        given[field] = key
    missing = [field for field in args_type.__annotations__ if field in required and field not in fields]
    if missing:
        raise InputError(f"{name} needs {', '.join(repr(m) for m in missing)}", where, hint=f"pass {name}({missing[0]}=...)")
    return fields
