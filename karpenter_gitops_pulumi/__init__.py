"""Pulumi components over the engine-free core in :mod:`karpenter_gitops`: they check and reconcile through the
use cases of :mod:`karpenter_gitops.app`, pass the core's models, findings and errors around, and build
Karpenter's AWS side from :mod:`karpenter_gitops.controller`; the core never imports pulumi."""

from karpenter_gitops_pulumi.fleet import Fleet, FleetArgs
from karpenter_gitops_pulumi.nodeclass import ClusterArgs, NodeClass, NodeClassArgs
from karpenter_gitops_pulumi.nodepool import NodePool, NodePoolArgs
from karpenter_gitops_pulumi.reconciliation import Reconciliation, ReconciliationProvider
from karpenter_gitops_pulumi.scheduling import CapacityBuffer, CapacityBufferArgs, NodeOverlay, NodeOverlayArgs

__all__ = [
    "CapacityBuffer",
    "CapacityBufferArgs",
    "ClusterArgs",
    "Fleet",
    "FleetArgs",
    "NodeClass",
    "NodeClassArgs",
    "NodeOverlay",
    "NodeOverlayArgs",
    "NodePool",
    "NodePoolArgs",
    "Reconciliation",
    "ReconciliationProvider",
]
