"""Template placeholders left in a manifest: ``${CLUSTER_NAME}`` (envsubst, Terraform's templatefile),
``{{ .Values.x }}`` (Helm) and ``<<CLUSTER_NAME>>`` (a blueprint's sed), which a repository substitutes
before it applies the file.

Such a value is not the value Karpenter will see, so it is neither judged nor looked up in AWS: a
role named ``KarpenterNodeRole-${CLUSTER_NAME}`` is not missing, it is not rendered yet. userData and
annotations are left out, as the text there is the user's own (a shell script's ``${VAR}``, a
tool's annotation) rather than a value of the object.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from typing import Any

from karpenter_gitops.core.findings import Violation
from karpenter_gitops.core.name_validation import has_placeholder
from karpenter_gitops.core.schema_fields import fields_of

# Quick evidence in a document's packed bytes: a document without any of them holds no placeholder.
_MARKS = (b"${", b"{{", b"<<")
_USERS_OWN_TEXT = frozenset({"userData", "annotations"})
_SHELL_VARIABLE = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")  # what envsubst replaces; ${var.x} is Terraform's


def not_rendered(file: str, placeholders: list[tuple[str, str]]) -> Violation:
    """What a file whose objects hold ``placeholders`` ((path, text), in file order) is told, once, at the first."""
    path, text = placeholders[0]
    more = f" (and {len(placeholders) - 1} more value(s) in this file)" if len(placeholders) > 1 else ""
    message = (
        f"not rendered: {text!r} holds a template placeholder{more}, so such values are not checked; "
        "render with envsubst/terraform/helm first"
    )
    return Violation(path, message, rendering(text, file, "validate"))


def rendering(text: str, file: str, command: str) -> str:
    """How to render a file whose placeholder is ``text`` and hand the result to ``command``, as a hint."""
    if "{{" in text:
        how = "helm template ..."
    elif "<<" in text:
        how = f"sed 's/<<NAME>>/value/g' {file}"
    elif _SHELL_VARIABLE.search(text):
        how = f"envsubst < {file}"
    else:
        return f"render {file} with terraform (templatefile) and run karpenter-gitops {command} on the result"
    return f"e.g. {how} | karpenter-gitops {command} -"


def maybe_in(packed: bytes) -> bool:
    """Whether a document, pickled, can hold a placeholder at all (most hold none, and this costs little)."""
    return any(mark in packed for mark in _MARKS)


def found(doc: Mapping[str, Any], spec_cls: type) -> Iterator[tuple[str, str]]:
    """(path, text) of every placeholder in an object's name and spec, paths written as findings write them."""
    metadata = doc.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if isinstance(name, str) and has_placeholder(name):
        yield "metadata.name", name
    yield from _walk(doc.get("spec"), spec_cls, "spec")


def _walk(value: Any, cls: type | None, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if has_placeholder(value):
            yield path, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, cls, f"{path}[{index}]")
    elif isinstance(value, Mapping):
        table = fields_of(cls) if cls is not None and dataclasses.is_dataclass(cls) else {}
        for key, inner in value.items():
            field = table.get(key)
            if key in _USERS_OWN_TEXT:
                continue
            if field is not None and field.kind == "map":
                yield from _map(inner, f"{path}.{key}")
            else:
                child = field.item if field is not None and field.kind in ("model", "list") else None
                yield from _walk(inner, child, f"{path}.{key}")


def _map(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """A map field's entries, each at ``path[key]`` as findings name them; a key can be the placeholder."""
    if not isinstance(value, Mapping):
        return
    for key, inner in value.items():
        if isinstance(key, str) and has_placeholder(key):
            yield f"{path}[{key}]", key
        elif isinstance(inner, str) and has_placeholder(inner):
            yield f"{path}[{key}]", inner
