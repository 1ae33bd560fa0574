"""Waivers, read strictly: a reasoned, expiring exception to one rule for named objects (or a glob like ``gpu-*``).

Waivers live in the stack config (``karpenter-gitops:waivers``) or in a file (``karpenter_gitops_policies/waivers.yaml``
by default), both as a list of entries:

.. code-block:: yaml

    waivers:
      - rule: policy/imds-hop-limit
        object: gpu-*            # an object name or an fnmatch glob
        kind: EC2NodeClass       # optional: only objects of this kind
        reason: CUDA images read the region from IMDS until PLAT-123 moves them to IRSA
        expires: 2026-09-30      # ISO date; the waiver holds through that day

An expired waiver stops waiving and is itself an error (``policy/waiver-expired``, see
:mod:`karpenter_gitops.judge.waiving`), so exceptions cannot outlive their reason silently. Rules that mirror Karpenter (origin ``karpenter``) cannot be
waived: the API server or controller would still reject the object, whatever the report says. Entries are validated strictly: an unknown rule id or field,
a missing reason or a malformed date is an InputError naming the entry.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import NAMESPACE, Waiver
from karpenter_gitops.core.model import STACK_KEY as KINDS  # its keys: every kind an object can have
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.load.files import display, enclosing_project, parse_yaml, read_text
from karpenter_gitops.load.keys import WAIVER_KEYS
from karpenter_gitops.load.policy_settings import known_rule, unwaivable

STACK_KEY = f"{NAMESPACE}:waivers"
_REQUIRED = tuple(name for name, key in WAIVER_KEYS.items() if key.required)


def parse(value: Any, file: str, key: str = "waivers") -> tuple[Waiver, ...]:
    """Waivers from a list of entries; ``key`` names the list in error messages."""
    if not isinstance(value, list):
        raise InputError(f"'{key}' must be a list of waivers", file, hint="each entry has rule, object, reason, expires")
    return tuple(_entry(item, f"{key}[{index}]", file) for index, item in enumerate(value))


def from_stack(value: Any, stack_file: str) -> tuple[Waiver, ...]:
    """The stack's ``karpenter-gitops:waivers``: its entries, or the path of a waiver file, relative to the Pulumi
    project the stack file belongs to (the nearest directory above it holding ``Pulumi.yaml``), as the policy pack
    reads it. A file named but missing is an InputError."""
    if not isinstance(value, str):
        return parse(value, stack_file, STACK_KEY)
    path = Path(value).expanduser()
    if not path.is_absolute():
        above = Path(stack_file).parent
        path = (enclosing_project(above) or above) / path
    if not path.is_file():
        raise InputError(
            f"{STACK_KEY}: the waiver file {str(path)!r} does not exist",
            stack_file,
            hint="fix the path, or list the waivers here",
        )
    return read_file(path)


def parse_file(docs: list[Any], file: str) -> tuple[Waiver, ...]:
    """Waivers from a parsed waiver file: one document ``{waivers: [...]}``."""
    real = [d for d in docs if d is not None]
    if len(real) != 1 or not isinstance(real[0], Mapping) or set(real[0]) != {"waivers"}:
        raise InputError(
            "a waiver file holds one mapping with a single key 'waivers'",
            file,
            hint="waivers: [{rule: ..., object: ..., reason: ..., expires: YYYY-MM-DD}]",
        )
    return parse(real[0]["waivers"], file)


def _entry(item: Any, where: str, file: str) -> Waiver:
    if not isinstance(item, Mapping):
        raise InputError(f"{where}: a waiver must be a mapping", file, hint=f"fields: {', '.join(WAIVER_KEYS)}")
    for name in item:
        if name not in WAIVER_KEYS:
            raise InputError(f"{where}: unknown field {name!r}", file, hint=did_you_mean(str(name), WAIVER_KEYS))
    missing = [name for name in _REQUIRED if item.get(name) in (None, "")]
    if missing:
        raise InputError(
            f"{where}: missing {', '.join(missing)}",
            file,
            hint="every waiver needs a rule, an object, a reason and an expiry date",
        )
    rule = known_rule(item["rule"], where, file)
    refused = unwaivable(rule)
    if refused is not None:
        why, hint = refused
        raise InputError(f"{where}: {why}", file, hint=hint)
    kind = item.get("kind")
    if kind is not None and (not isinstance(kind, str) or kind not in KINDS):  # a list or mapping cannot be looked up
        raise InputError(
            f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}",
            file,
            hint=did_you_mean(str(kind), KINDS) or "leave kind out to waive objects of any kind",
        )
    for name in ("object", "reason"):
        if not isinstance(item[name], str):
            raise InputError(f"{where}: {name} must be a string", file)
    return Waiver(rule.id, item["object"], item["reason"], _date(item["expires"], where, file), kind, file, where)


def _date(value: Any, where: str, file: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise InputError(f"{where}: expires {value!r} is not an ISO date", file, hint="write it as YYYY-MM-DD") from None


def read_file(path: str | Path) -> tuple[Waiver, ...]:
    """Waivers from a waiver file (``karpenter_gitops_policies/waivers.yaml``); a malformed one is an InputError."""
    name = display(Path(path))
    return parse_file(parse_yaml(read_text(Path(path)), name), name)
