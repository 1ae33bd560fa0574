"""Objects Karpenter reads only behind an alpha feature gate, off unless the cluster turns it on.

A NodeOverlay, a CapacityBuffer and a static NodePool (``spec.replicas``) are accepted by the API
server whatever the gates say; with the gate off, Karpenter starts no controller for them (its
``pkg/controllers/controllers.go``) and the provisioner passes static pools over, so the object
sits in the cluster doing nothing. The gates and their defaults are Karpenter's
(``pkg/operator/options``: ``NodeOverlay`` and ``StaticCapacity`` from 1.7, ``CapacityBuffer`` from
1.14, all alpha and off through 1.15); the stack says which it runs with in
``karpenter-gitops:cluster.featureGates``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from karpenter_gitops.controller.iam import HELM_FEATURE_GATES
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import CAPACITYBUFFER, NODEOVERLAY, NODEOVERLAY_SINCE, NODEPOOL
from karpenter_gitops.rules.registry import rule


@dataclass(frozen=True)
class Gate:
    """One of Karpenter's feature gates: its name and what Karpenter leaves undone without it."""

    name: str
    what: str


FEATURE_OFF = "gate/feature-off"

#: The gate each kind needs (a NodePool only when it is static).
GATES = {
    NODEOVERLAY: Gate("NodeOverlay", "applies no price or capacity from NodeOverlays"),
    CAPACITYBUFFER: Gate("CapacityBuffer", "keeps no spare capacity for CapacityBuffers"),
    NODEPOOL: Gate("StaticCapacity", "launches no nodes for a static NodePool (spec.replicas)"),
}


def hint(gate: Gate) -> str:
    """How to turn ``gate`` on, and to say so in the stack (whose controller block passes it to the Helm release)."""
    block, key = HELM_FEATURE_GATES[gate.name]
    return (
        f"Run Karpenter with --feature-gates {gate.name}=true (Helm: settings.{block}.{key}=true) "
        f"and declare it: karpenter-gitops:cluster.featureGates: {{{gate.name}: true}} in the stack, "
        f"--feature-gates {gate.name}=true with manifests; or drop the object."
    )


@rule(
    FEATURE_OFF,
    Severity.INFO,
    tuple(GATES),
    "Karpenter reads NodeOverlays, CapacityBuffers and static NodePools (spec.replicas) only with their alpha "
    "feature gate on (NodeOverlay, CapacityBuffer, StaticCapacity: off by default through 1.15); with it off the "
    "API server accepts the object and Karpenter ignores it. The stack's cluster.featureGates says which gates run.",
    "Turn the gate on (--feature-gates NAME=true, Helm settings.featureGates) and declare it in "
    "karpenter-gitops:cluster.featureGates, or drop the object.",
    origin="ours",
    since=NODEOVERLAY_SINCE,
    good=(
        {"kind": NODEOVERLAY, "featureGates": {"NodeOverlay": True}},
        {"kind": NODEPOOL, "karpenterVersion": "1.8"},
        {"kind": NODEPOOL, "karpenterVersion": "1.8", "spec": {"replicas": 3}, "featureGates": {"StaticCapacity": True}},
    ),
    bad=(
        {"kind": NODEOVERLAY},
        {"kind": CAPACITYBUFFER, "featureGates": {"NodeOverlay": True}},
        {"kind": NODEPOOL, "karpenterVersion": "1.8", "spec": {"replicas": 3}},
    ),
)
def feature_off(obj, ctx) -> Iterator[Violation]:
    gate = GATES[obj.kind]
    if obj.blocked or obj.kind == NODEPOOL and obj.spec.replicas is None:
        return  # the API server refuses a blocked object: whether Karpenter would read it is moot
    if not ctx.inputs.cluster.gate(gate.name):
        path = "spec.replicas" if obj.kind == NODEPOOL else "spec"
        yield Violation(
            path,
            f"Karpenter {gate.what} while its {gate.name} feature gate is off (alpha, off by default); "
            "the cluster's declared featureGates do not turn it on",
            hint(gate),
        )
