"""Pulumi components: a thin shell over the engine-free core in :mod:`karpenter_gitops`."""

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
