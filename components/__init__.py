"""Pulumi components: a thin shell over the engine-free core in :mod:`karpenter_gitops`."""

from components.fleet import Fleet, FleetArgs
from components.nodeclass import ClusterArgs, NodeClass, NodeClassArgs
from components.nodepool import NodePool, NodePoolArgs
from components.reconciliation import Reconciliation, ReconciliationProvider

__all__ = [
    "ClusterArgs",
    "Fleet",
    "FleetArgs",
    "NodeClass",
    "NodeClassArgs",
    "NodePool",
    "NodePoolArgs",
    "Reconciliation",
    "ReconciliationProvider",
]
