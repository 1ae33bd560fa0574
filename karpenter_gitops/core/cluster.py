"""What a cluster runs: Karpenter's NodeClaims, each with the labels of the Node it became, the Nodes
and the Pods on them.

Read live by :mod:`karpenter_gitops.adapters.kube` or from a snapshot file by
:mod:`karpenter_gitops.load.cluster_state`; both make a :class:`ClusterState`, so the preview's
node-impact forecast, its forecast from the existing nodes and verify count the same cluster whichever
way it was read. A state keeps only the fields scheduling reads (a Pod's environment, commands and
images are dropped: a CI log should not carry them), and writes itself back as the ``kind: List`` that
``kubectl get nodeclaims,nodes,pods -A -o yaml`` prints, which is what ``verify --write-cluster-state`` saves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from karpenter_gitops.core import labels

NODEPOOL_LABEL = "karpenter.sh/nodepool"
NODECLAIM_API = ("karpenter.sh/v1", "NodeClaim")
NODE_API = ("v1", "Node")
POD_API = ("v1", "Pod")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"  # a static pod's mirror: the kubelet owns it, nothing reschedules it


@dataclass(frozen=True)
class FleetNode:
    """One NodeClaim, with the labels of the Node it became (or its own, before registration)."""

    name: str
    node_pool: str
    instance_type: str | None
    image_id: str | None
    labels: Mapping[str, str] = field(default_factory=dict)
    node_name: str | None = None  # the Node it became (None before registration)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _labels(metadata: Mapping[str, Any]) -> dict[str, str]:
    """String labels only: a snapshot edited by hand may hold anything."""
    return {k: v for k, v in _mapping(metadata.get("labels")).items() if isinstance(k, str) and isinstance(v, str)}


def _claim(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata, status = _mapping(item.get("metadata")), _mapping(item.get("status"))
    spec = _picked(item.get("spec"), ("taints", "startupTaints"))  # what an in-flight NodeClaim is scheduled by
    return {
        "apiVersion": NODECLAIM_API[0],
        "kind": NODECLAIM_API[1],
        "metadata": {"name": _text(metadata.get("name")) or "", "labels": _labels(metadata)},
        **({"spec": spec} if spec else {}),
        "status": {
            "nodeName": _text(status.get("nodeName")), "imageID": _text(status.get("imageID")),
            **_picked(status, ("capacity", "allocatable")),
        },
    }  # fmt: skip


def _picked(source: Any, keys: Iterable[str]) -> dict[str, Any]:
    """The ``keys`` a mapping has (values as they are: the reader checked their types)."""
    found = _mapping(source)
    return {key: found[key] for key in keys if key in found}


def _node(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata, spec, status = _mapping(item.get("metadata")), _mapping(item.get("spec")), _mapping(item.get("status"))
    return {
        "apiVersion": NODE_API[0],
        "kind": NODE_API[1],
        "metadata": {
            "name": _text(metadata.get("name")) or "",
            "labels": _labels(metadata),
            **_picked(metadata, ("deletionTimestamp",)),
        },
        "spec": _picked(spec, ("taints", "unschedulable")),
        "status": _picked(status, ("capacity", "allocatable")),
    }


_CONTAINER_FIELDS = ("name", "resources", "restartPolicy")
_POD_SPEC_FIELDS = (
    "nodeName", "nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "overhead", "resources",
    "runtimeClassName", "schedulerName", "hostNetwork", "schedulingGates", "resourceClaims",
)  # fmt: skip


def _container(raw: Any) -> Any:
    if not isinstance(raw, Mapping):
        return raw
    ports = [
        _picked(p, ("containerPort", "hostPort", "hostIP", "protocol")) for p in raw.get("ports") or () if isinstance(p, Mapping)
    ]
    return {**_picked(raw, _CONTAINER_FIELDS), **({"ports": ports} if ports else {})}


def _volume(raw: Any) -> Any:
    """A volume as scheduling reads it: whether it claims a persistent (or ephemeral) volume, nothing of its source."""
    if not isinstance(raw, Mapping):
        return raw
    return {"name": raw.get("name"), **{key: {} for key in ("persistentVolumeClaim", "ephemeral") if key in raw}}


def _pod(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata, spec = _mapping(item.get("metadata")), _mapping(item.get("spec"))
    annotations = {k: v for k, v in _mapping(metadata.get("annotations")).items() if k == MIRROR_ANNOTATION}
    owners = [
        _picked(o, ("apiVersion", "kind", "name", "controller"))
        for o in metadata.get("ownerReferences") or ()
        if isinstance(o, Mapping)
    ]
    kept_spec = _picked(spec, _POD_SPEC_FIELDS)
    for key in ("containers", "initContainers", "volumes"):
        if isinstance(spec.get(key), list):
            kept_spec[key] = [(_volume if key == "volumes" else _container)(c) for c in spec[key]]
    kept_metadata: dict[str, Any] = {
        "name": _text(metadata.get("name")) or "",
        "namespace": _text(metadata.get("namespace")) or "default",
    }
    kept_metadata |= {"labels": _labels(metadata)} if metadata.get("labels") else {}
    kept_metadata |= {"annotations": annotations} if annotations else {}
    kept_metadata |= {"ownerReferences": owners} if owners else {}
    return {
        "apiVersion": POD_API[0], "kind": POD_API[1], "metadata": kept_metadata, "spec": kept_spec,
        "status": _picked(item.get("status"), ("phase",)),
    }  # fmt: skip


@dataclass(frozen=True)
class ClusterState:
    """The cluster's NodeClaims, Nodes and Pods, cut to what is counted (names, labels, node name, image;
    a Node's taints and resources; a Pod's scheduling fields): small, and free of anything a CI log
    should not carry."""

    node_claims: tuple[Mapping[str, Any], ...] = ()
    nodes: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()  # what reading a snapshot passed over
    pods: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def of(
        cls,
        claims: Iterable[Mapping[str, Any]],
        nodes: Iterable[Mapping[str, Any]],
        notes: tuple[str, ...] = (),
        pods: Iterable[Mapping[str, Any]] = (),
    ) -> ClusterState:
        """NodeClaim, Node and Pod objects as the API server (or kubectl) gives them."""
        return cls(
            tuple(_claim(item) for item in claims), tuple(_node(item) for item in nodes), notes, tuple(_pod(p) for p in pods)
        )

    @cached_property
    def fleet(self) -> tuple[FleetNode, ...]:
        """Each NodeClaim a NodePool launched, with its Node's labels over its own, sorted by name."""
        node_labels = {node["metadata"]["name"]: node["metadata"]["labels"] for node in self.nodes}
        fleet = []
        for claim in self.node_claims:
            metadata, status = claim["metadata"], claim["status"]
            merged = {**metadata["labels"], **node_labels.get(status["nodeName"] or "", {})}
            pool = merged.get(NODEPOOL_LABEL)
            if not pool:
                continue  # not launched by a NodePool (e.g. a static NodeClaim made by hand)
            fleet.append(
                FleetNode(
                    name=metadata["name"],
                    node_pool=pool,
                    instance_type=merged.get(labels.INSTANCE_TYPE),
                    image_id=status["imageID"],
                    labels=merged,
                    node_name=status["nodeName"],
                )
            )
        return tuple(sorted(fleet, key=lambda node: node.name))

    def to_list(self) -> dict[str, Any]:
        """The state as ``kubectl get nodeclaims,nodes,pods -A -o yaml`` prints it (a ``kind: List``)."""
        return {"apiVersion": "v1", "kind": "List", "items": [*self.node_claims, *self.nodes, *self.pods]}
