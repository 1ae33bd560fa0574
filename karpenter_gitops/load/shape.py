"""Refuse YAML documents no Kubernetes tool would read: self-referencing, too deep, or alias bombs.

PyYAML builds an alias as a shared reference, so ``spec: &s {tags: {self: *s}}`` becomes a
value that contains itself, and a few nested anchors can stand for millions of values. kubectl and
Pulumi (Go YAML) refuse both (go-yaml reports an anchor that "contains itself" and "excessive
aliasing"); walking either here would recurse forever or for hours. One linear pass over the
distinct values measures the nesting depth and the size the aliases expand to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from karpenter_gitops.core.errors import InputError

# Karpenter objects and stack files nest about a dozen levels; far deeper is a mistake or an attack.
MAX_DEPTH = 64
# As go-yaml: aliasing is excessive when it expands past this many values and ten times the document.
MAX_EXPANDED = 400_000


def _children(value: Any) -> list[Any]:
    if isinstance(value, Mapping):
        return [*value.keys(), *value.values()]
    if isinstance(value, list):
        return value
    return []


def check(document: Any, index: int, file: str) -> None:
    """Raise an InputError naming document ``index`` (1-based) of ``file`` when it cannot be read safely."""
    where = f"document {index}"
    expanded: dict[int, int] = {}  # id of a container -> values it expands to, once done
    on_path: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(document, 1, False)]
    while stack:
        value, depth, leaving = stack.pop()
        children = _children(value)
        if leaving:
            on_path.discard(id(value))
            expanded[id(value)] = 1 + sum(expanded.get(id(child), 1) for child in children)
            continue
        if not children or id(value) in expanded:
            continue
        if id(value) in on_path:
            raise InputError(f"{where}: a YAML alias refers to a value that contains it", file,
                             hint="an anchor (&name) cannot be used (*name) inside its own value")
        if depth > MAX_DEPTH:
            raise InputError(f"{where}: values nested more than {MAX_DEPTH} levels deep", file,
                             hint="no Karpenter object nests that deep; check the brackets and indentation")
        on_path.add(id(value))
        stack.append((value, depth, True))
        stack.extend((child, depth + 1, False) for child in children)
    total = expanded.get(id(document), 1)
    if total > MAX_EXPANDED and total > 10 * len(expanded):
        raise InputError(f"{where}: YAML aliases expand to {total:,} values", file,
                         hint="write the values out, or use fewer nested aliases")
