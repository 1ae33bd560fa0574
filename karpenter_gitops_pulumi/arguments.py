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

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.text import did_you_mean


def camel(field: str) -> str:
    """``pin_amis`` → ``pinAmis``: a field as the stack file and the CRDs spell it."""
    head, *rest = field.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.cache
def spellings(args_type: type) -> dict[str, str]:
    """Every accepted spelling of ``args_type``'s fields (snake_case and camelCase), to the field."""
    return {spelling: field for field in args_type.__annotations__ for spelling in (field, camel(field))}


def _nested(args_type: type, field: str) -> type | None:
    """The ``*Args`` a field holds (``cluster``: ``ClusterArgs``), read with the same rules; None for other values."""
    hint = typing.get_type_hints(args_type).get(field)
    return hint if typing.is_typeddict(hint) else None


def read(args: Any, args_type: type, where: str) -> dict[str, Any]:
    """``args`` with each key spelled as its field; an unknown, doubled or missing key is an InputError at ``where``
    (the component and its name, or the stack key the values came from)."""
    name = args_type.__name__
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
        nested = _nested(args_type, field)
        fields[field] = read(value, nested, f"{where}, {field}") if nested is not None and value is not None else value
        given[field] = key
    required: frozenset[str] = getattr(
        args_type, "__required_keys__", frozenset()
    )  # what a TypedDict declares without NotRequired
    missing = [field for field in args_type.__annotations__ if field in required and field not in fields]
    if missing:
        raise InputError(f"{name} needs {', '.join(repr(m) for m in missing)}", where, hint=f"pass {name}({missing[0]}=...)")
    return fields
