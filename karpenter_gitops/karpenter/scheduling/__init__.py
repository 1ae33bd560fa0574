"""The provisioning simulation: what Karpenter would launch for a set of pods, and what it would cost.

Pure (no I/O). Layers, bottom up: ``resources`` (quantities) < ``matching`` (requirements, taints,
selectors) < ``pods`` (the workload model) < ``nodes`` (AWS capacity, overhead, offerings, prices) <
``type_index`` (bitmask indexes over instance types) < ``world`` < ``preferences`` < ``topology`` <
``failures`` (its errors in Karpenter's words) < ``node_claims`` (templates and NodeClaims) <
``scheduler`` < ``launch``, ``limits`` < ``forecast`` < ``assemble`` (a world from the project's loaded objects).
This module only hands names on.
"""

from karpenter_gitops.karpenter.amifamily.protocol import FamilyTraits
from karpenter_gitops.karpenter.scheduling.assemble import build_world
from karpenter_gitops.karpenter.scheduling.forecast import Forecast, PlannedNode, PoolForecast, Reason, Unschedulable, simulate
from karpenter_gitops.karpenter.scheduling.nodes import InstanceType, NodeClassSettings, Offering, PriceTable, instance_types
from karpenter_gitops.karpenter.scheduling.pods import UNMODELLED, DaemonSet, Pod, PodTemplate
from karpenter_gitops.karpenter.scheduling.scheduler import Options
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec, World

__all__ = [
    "UNMODELLED",
    "DaemonSet",
    "FamilyTraits",
    "Forecast",
    "InstanceType",
    "NodeClassSettings",
    "NodePoolSpec",
    "Offering",
    "Options",
    "PlannedNode",
    "Pod",
    "PodTemplate",
    "PoolForecast",
    "PriceTable",
    "Reason",
    "Unschedulable",
    "World",
    "build_world",
    "instance_types",
    "simulate",
]
