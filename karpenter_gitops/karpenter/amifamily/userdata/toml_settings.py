"""Bottlerocket's userData format: TOML settings, read as a document, and the node taints they set.

Bottlerocket reads them under Karpenter's merge; a Custom image running Bottlerocket reads only
what the userData holds.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from typing import Any

from karpenter_gitops.karpenter.amifamily.userdata import taints


def load(text: str) -> Mapping[str, Any] | None:
    """The parsed TOML document, or None when the text is not TOML."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def node_taints(document: Mapping[str, Any]) -> tuple[taints.Taint, ...]:
    """The taints of ``[settings.kubernetes.node-taints]`` (``key = ["value:Effect", ...]``)."""
    found = []
    for key, specs in table(document, "settings", "kubernetes", "node-taints").items():
        for spec in specs if isinstance(specs, list) else [specs]:
            value, _, effect = str(spec).rpartition(":")
            found.append(taints.Taint(key, value or None, effect or None))
    return tuple(found)


def table(document: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    """The table under the keys of ``path``, outermost first; empty when one is missing or no table."""
    found: Any = document
    for key in path:
        found = found.get(key) if isinstance(found, Mapping) else None
    return found if isinstance(found, Mapping) else {}
