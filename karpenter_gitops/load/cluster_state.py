"""A cluster-state snapshot: the NodeClaims and Nodes a CI job without cluster credentials counts.

The file is what ``kubectl get nodeclaims,nodes -o yaml`` (or ``-o json``) prints, a ``kind: List``
with ``items``; the API server's own ``NodeClaimList`` and ``NodeList``; or the objects as a
multi-document YAML stream; ``verify --write-cluster-state``
writes it. Read strictly: a file that is not such output is one :class:`InputError` naming the file,
the place in it and what was expected. Items of other kinds (a ``kubectl get all`` mixed in) are passed
over with a note. What comes out is the :class:`~karpenter_gitops.core.cluster.ClusterState` a live
read makes, so everything downstream is the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from karpenter_gitops.core.cluster import NODE_API, NODECLAIM_API, ClusterState
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import files

EXPECTED = "the output of `kubectl get nodeclaims,nodes -o yaml` (a kind: List with items, or the objects as YAML documents)"
_HINT = "write it with `kubectl get nodeclaims,nodes -o yaml > FILE` or `karpenter-gitops verify --write-cluster-state FILE`"


def read(path: Path) -> ClusterState:
    """The NodeClaims and Nodes of a snapshot file."""
    name = files.display(path)
    items = list(_items(files.read_documents(path), name))
    claims, nodes, others = [], [], Counter[str]()
    for where, item in items:
        kind = item["kind"]
        if kind == NODECLAIM_API[1] and str(item.get("apiVersion", "")).startswith("karpenter.sh/"):
            claims.append(_checked(item, where, name))
        elif kind == NODE_API[1] and item.get("apiVersion") == NODE_API[0]:
            nodes.append(_checked(item, where, name))
        else:
            others[f"{item.get('apiVersion')}/{kind}" if kind in (NODECLAIM_API[1], NODE_API[1]) else kind] += 1
    if others and not claims and not nodes:
        raise InputError(f"holds no NodeClaim or Node (only {_kinds(others)}): expected {EXPECTED}", name, hint=_HINT)
    notes = (f"{name}: passed over {sum(others.values())} item(s) that are not NodeClaims or Nodes ({_kinds(others)})",)
    return ClusterState.of(claims, nodes, notes if others else ())


def _kinds(counted: Counter[str]) -> str:
    shown = sorted(counted)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


def _items(documents: list[Any], name: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(where, object) for every object of every document: a List's items, or the document itself."""
    found = [doc for doc in documents if doc is not None]
    if not found:
        raise InputError(f"empty: expected {EXPECTED}", name, hint=_HINT)
    for number, doc in enumerate(found, 1):
        where = f"document {number}" if len(found) > 1 else "the document"
        if not isinstance(doc, Mapping) or not isinstance(doc.get("kind"), str) or not doc["kind"]:
            raise InputError(f"{where} is not a Kubernetes object (no kind): expected {EXPECTED}", name, hint=_HINT)
        if not doc["kind"].endswith("List"):
            yield where, doc
            continue
        items = doc.get("items")
        if not isinstance(items, list):
            raise InputError(f"{where}: a {doc['kind']} without a list of items: expected {EXPECTED}", name, hint=_HINT)
        # the API server's own typed list (a NodeClaimList) leaves each item's kind and apiVersion to the list
        typed = {"kind": doc["kind"][: -len("List")], "apiVersion": doc.get("apiVersion")} if doc["kind"] != "List" else {}
        for index, item in enumerate(items):
            if not isinstance(item, Mapping) or not isinstance({**typed, **item}.get("kind"), str):
                raise InputError(f"{where}, items[{index}] is not a Kubernetes object (no kind)", name, hint=_HINT)
            yield f"{where}, items[{index}]", {**typed, **item}


def _checked(item: Mapping[str, Any], where: str, name: str) -> Mapping[str, Any]:
    """A NodeClaim or Node whose counted fields have the types the API server gives them."""
    kind = item["kind"]
    metadata = item.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise InputError(f"{where}: a {kind} without metadata.name", name, hint=_HINT)
    what = f"{where} ({kind} {metadata['name']!r})"
    labels = metadata.get("labels")
    if labels is not None and not (
        isinstance(labels, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())
    ):
        raise InputError(f"{what}: metadata.labels is not a map of strings", name, hint=_HINT)
    status = item.get("status")
    if status is not None and not isinstance(status, Mapping):
        raise InputError(f"{what}: status is not a map", name, hint=_HINT)
    for field in ("nodeName", "imageID") if kind == NODECLAIM_API[1] else ():
        value = (status or {}).get(field)
        if value is not None and not isinstance(value, str):
            raise InputError(f"{what}: status.{field} is not a string", name, hint=_HINT)
    return item
