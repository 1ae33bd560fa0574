"""What a cluster runs: Karpenter's NodeClaims, each with the labels of the Node it became.

Read by :mod:`karpenter_gitops.adapters.kube`; the preview's node-impact forecast counts them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core import labels

NODEPOOL_LABEL = "karpenter.sh/nodepool"


@dataclass(frozen=True)
class FleetNode:
    """One NodeClaim, with the labels of the Node it became (or its own, before registration)."""

    name: str
    node_pool: str
    instance_type: str | None
    image_id: str | None
    labels: Mapping[str, str] = field(default_factory=dict)


def fleet_from(claims: Iterable[Mapping[str, Any]], node_labels: Mapping[str, Mapping[str, str]]) -> tuple[FleetNode, ...]:
    """NodeClaim objects (as the API returns them) joined with their Nodes' labels, sorted by name."""
    fleet = []
    for claim in claims:
        metadata = claim.get("metadata") or {}
        status = claim.get("status") or {}
        claim_labels = dict(metadata.get("labels") or {})
        merged = {**claim_labels, **node_labels.get(status.get("nodeName") or "", {})}
        pool = merged.get(NODEPOOL_LABEL)
        if not pool:
            continue  # not launched by a NodePool (e.g. a static NodeClaim made by hand)
        fleet.append(
            FleetNode(
                name=metadata.get("name", ""),
                node_pool=pool,
                instance_type=merged.get(labels.INSTANCE_TYPE),
                image_id=status.get("imageID"),
                labels=merged,
            )
        )
    return tuple(sorted(fleet, key=lambda node: node.name))
