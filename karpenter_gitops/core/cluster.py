"""What a cluster runs: Karpenter's NodeClaims, each with the labels of the Node it became.

Read live by :mod:`karpenter_gitops.adapters.kube` or from a snapshot file by
:mod:`karpenter_gitops.load.cluster_state`; both make a :class:`ClusterState`, so the preview's
node-impact forecast and verify count the same fleet whichever way it was read. A state keeps only the
fields the fleet is made of, and writes itself back as the ``kind: List`` that ``kubectl get
nodeclaims,nodes -o yaml`` prints, which is what ``verify --write-cluster-state`` saves.
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


@dataclass(frozen=True)
class FleetNode:
    """One NodeClaim, with the labels of the Node it became (or its own, before registration)."""

    name: str
    node_pool: str
    instance_type: str | None
    image_id: str | None
    labels: Mapping[str, str] = field(default_factory=dict)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _labels(metadata: Mapping[str, Any]) -> dict[str, str]:
    """String labels only: a snapshot edited by hand may hold anything."""
    return {k: v for k, v in _mapping(metadata.get("labels")).items() if isinstance(k, str) and isinstance(v, str)}


def _claim(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata, status = _mapping(item.get("metadata")), _mapping(item.get("status"))
    return {
        "apiVersion": NODECLAIM_API[0],
        "kind": NODECLAIM_API[1],
        "metadata": {"name": _text(metadata.get("name")) or "", "labels": _labels(metadata)},
        "status": {"nodeName": _text(status.get("nodeName")), "imageID": _text(status.get("imageID"))},
    }


def _node(item: Mapping[str, Any]) -> dict[str, Any]:
    metadata = _mapping(item.get("metadata"))
    return {
        "apiVersion": NODE_API[0],
        "kind": NODE_API[1],
        "metadata": {"name": _text(metadata.get("name")) or "", "labels": _labels(metadata)},
    }


@dataclass(frozen=True)
class ClusterState:
    """The cluster's NodeClaims and the Nodes they became, cut to what is counted (names, labels,
    node name, image): small, and free of anything a CI log should not carry."""

    node_claims: tuple[Mapping[str, Any], ...] = ()
    nodes: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()  # what reading a snapshot passed over

    @classmethod
    def of(
        cls, claims: Iterable[Mapping[str, Any]], nodes: Iterable[Mapping[str, Any]], notes: tuple[str, ...] = ()
    ) -> ClusterState:
        """NodeClaim and Node objects as the API server (or kubectl) gives them; only the Nodes some
        NodeClaim became are kept, so ``nodes`` may be a stream of the whole cluster's."""
        kept_claims = tuple(_claim(item) for item in claims)
        wanted = {claim["status"]["nodeName"] for claim in kept_claims} - {None}
        kept_nodes = tuple(_node(item) for item in nodes if _text(_mapping(item.get("metadata")).get("name")) in wanted)
        return cls(kept_claims, kept_nodes, notes)

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
                )
            )
        return tuple(sorted(fleet, key=lambda node: node.name))

    def to_list(self) -> dict[str, Any]:
        """The state as ``kubectl get nodeclaims,nodes -o yaml`` prints it (a ``kind: List``)."""
        return {"apiVersion": "v1", "kind": "List", "items": [*self.node_claims, *self.nodes]}
