"""A cluster-state snapshot: the NodeClaims, Nodes and Pods a CI job without cluster credentials counts.

The file is what ``kubectl get nodeclaims,nodes,pods -A -o yaml`` (or ``-o json``) prints, a ``kind: List``
with ``items``; the API server's own ``NodeClaimList``, ``NodeList`` and ``PodList``; or the objects as a
multi-document YAML stream; ``verify --write-cluster-state`` writes it. Pods are optional (``kubectl get
nodeclaims,nodes -o yaml`` counts drifting nodes; the forecast from the existing nodes wants the pods too).
Read strictly: a file that is not such output is one :class:`InputError` naming the file, the place in it
and what was expected; a Pod is read as the workloads are (:func:`~karpenter_gitops.load.workloads.pod_template`),
so a quantity that is none is named with its field. Items of other kinds (a ``kubectl get all`` mixed in)
are passed over with a note. What comes out is the :class:`~karpenter_gitops.core.cluster.ClusterState` a
live read makes, so everything downstream is the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from karpenter_gitops.core.cluster import NODE_API, NODECLAIM_API, POD_API, ClusterState
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Source
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.load import files
from karpenter_gitops.load.workloads import PodSpecError, pod_template

EXPECTED = (
    "the output of `kubectl get nodeclaims,nodes,pods -A -o yaml` (a kind: List with items, or the objects as YAML documents)"
)
_HINT = (
    "write it with `kubectl get nodeclaims,nodes,pods -A -o yaml > FILE` or `karpenter-gitops verify --write-cluster-state FILE`"
)
_KINDS = {NODECLAIM_API[1]: "karpenter.sh/", NODE_API[1]: NODE_API[0], POD_API[1]: POD_API[0]}


def read(path: Path) -> ClusterState:
    """The NodeClaims, Nodes and Pods of a snapshot file."""
    name = files.display(path)
    items = list(_items(files.read_documents(path), name))
    found: dict[str, list[Mapping[str, Any]]] = {kind: [] for kind in _KINDS}
    others = Counter[str]()
    for where, item in items:
        kind, api = item["kind"], str(item.get("apiVersion", ""))
        if kind in _KINDS and (api.startswith(_KINDS[kind]) if kind == NODECLAIM_API[1] else api == _KINDS[kind]):
            found[kind].append(_checked(item, where, name))
        else:
            others[f"{item.get('apiVersion')}/{kind}" if kind in _KINDS else kind] += 1
    claims, nodes, pods = found[NODECLAIM_API[1]], found[NODE_API[1]], found[POD_API[1]]
    if others and not claims and not nodes and not pods:
        raise InputError(f"holds no NodeClaim, Node or Pod (only {_kinds(others)}): expected {EXPECTED}", name, hint=_HINT)
    notes = []
    if others:
        notes.append(
            f"{name}: passed over {sum(others.values())} item(s) that are not NodeClaims, Nodes or Pods ({_kinds(others)})"
        )
    if nodes and not claims:  # `kubectl get nodes` alone: Karpenter drifts NodeClaims, so nothing would count
        notes.append(f"{name}: holds Nodes but no NodeClaim, which is what drift is counted on; {_HINT}")
    return ClusterState.of(claims, nodes, tuple(notes), pods)


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
    if kind in (NODE_API[1], NODECLAIM_API[1]):
        _check_node(item, what, name)
    elif kind == POD_API[1]:
        _check_pod(item, metadata, what, name)
    return item


def _check_node(item: Mapping[str, Any], what: str, name: str) -> None:
    """A Node's (or an in-flight NodeClaim's) taints and resources, which an existing node is scheduled by."""
    spec = item.get("spec")
    if spec is not None and not isinstance(spec, Mapping):
        raise InputError(f"{what}: spec is not a map", name, hint=_HINT)
    for field in ("taints", "startupTaints"):
        taints = (spec or {}).get(field)
        if taints is not None and not (
            isinstance(taints, list)
            and all(
                isinstance(t, Mapping) and all(isinstance(t.get(f, ""), str) for f in ("key", "value", "effect")) for t in taints
            )
        ):
            raise InputError(f"{what}: spec.{field} is not a list of taints (key, value, effect strings)", name, hint=_HINT)
    for field in ("capacity", "allocatable"):
        value = (item.get("status") or {}).get(field)
        if value is None:
            continue
        if not isinstance(value, Mapping):
            raise InputError(f"{what}: status.{field} is not a map of quantities", name, hint=_HINT)
        try:
            resources.vector(value)
        except resources.QuantityError as error:
            raise InputError(f"{what}: status.{field}.{error}", name, hint=_HINT) from None


def _check_pod(item: Mapping[str, Any], metadata: Mapping[str, Any], what: str, name: str) -> None:
    """A Pod's namespace, node, phase and owners, and its spec read as the scheduler reads it."""
    namespace = metadata.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise InputError(f"{what}: metadata.namespace is not a string", name, hint=_HINT)
    owners = metadata.get("ownerReferences")
    if owners is not None and not (
        isinstance(owners, list) and all(isinstance(o, Mapping) and isinstance(o.get("kind", ""), str) for o in owners)
    ):
        raise InputError(f"{what}: metadata.ownerReferences is not a list of owners", name, hint=_HINT)
    if not isinstance(item.get("spec", {}), Mapping):
        raise InputError(f"{what}: spec is not a map", name, hint=_HINT)
    if not isinstance((item.get("spec") or {}).get("nodeName", ""), str):
        raise InputError(f"{what}: spec.nodeName is not a string", name, hint=_HINT)
    if not isinstance((item.get("status") or {}).get("phase", ""), str):
        raise InputError(f"{what}: status.phase is not a string", name, hint=_HINT)
    try:
        pod_template(item, namespace or "default", f"Pod/{metadata['name']}", Source(name))
    except PodSpecError as error:
        hint = f"{error.hint}; {_HINT}" if error.hint else _HINT
        raise InputError(f"{what}: {error}", name, hint=hint) from None
