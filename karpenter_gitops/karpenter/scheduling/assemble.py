"""A world from the objects the project already loads: NodePools, EC2NodeClasses, the catalogue, prices, workloads.

Each EC2NodeClass gets the instance types Karpenter would list for it: the catalogue's types (only
those an AMI of the class serves, when the caller says which), in the class's subnet zones, with the
class's kubelet block, block devices and network interfaces, and the AMI family's traits. What the
world leaves out is said once in its notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from karpenter_gitops.core.model import EC2NodeClass, NodePool
from karpenter_gitops.karpenter.amifamily.protocol import FamilyTraits
from karpenter_gitops.karpenter.amifamily.resolver import LabelledCatalogue
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.nodes import NodeClassSettings, PriceTable, instance_types
from karpenter_gitops.karpenter.scheduling.pods import DaemonSet, Pod
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec, World

EMPTY_CLUSTER = "the cluster is taken as empty: nodes it already runs, and their pods, are not counted"
FROM_CLUSTER = "the forecast starts from the cluster's {} node(s) and the pods on them"
SPOT_UNKNOWN = (
    "spot prices are not known: spot offerings are priced at on-demand, as Karpenter does before its first spot price update"
)


def build_world(
    node_pools: Iterable[NodePool],
    node_classes: Iterable[EC2NodeClass],
    catalogue: LabelledCatalogue,
    prices: PriceTable,
    pods: Iterable[Pod],
    daemon_sets: Iterable[DaemonSet] = (),
    *,
    traits: Mapping[str, FamilyTraits] | None = None,  # by EC2NodeClass name; AL2023's when absent
    subnet_zones: Mapping[str, Iterable[str]] | None = None,  # by EC2NodeClass name; every zone when absent
    served: Mapping[str, Iterable[str]] | None = None,  # by EC2NodeClass name: the types an AMI serves
    node_overlays: int = 0,
    cluster_nodes: int | None = None,  # the nodes the forecast starts from (None: an empty cluster)
    **settings: Any,  # vm_memory_overhead_percent, reserved_enis, node_class_cel
) -> World:
    """The world one simulation runs in; NodePools whose limits are no quantities are left out with a note."""
    notes = [EMPTY_CLUSTER if cluster_nodes is None else FROM_CLUSTER.format(cluster_nodes)]
    if prices.spot is None:
        notes.append(SPOT_UNKNOWN)
    if node_overlays:
        notes.append(f"{node_overlays} NodeOverlay(s) not applied: the NodeOverlay gate is off by default (alpha)")
    types = {}
    for node_class in node_classes:
        raw_spec = node_class.raw.get("spec")
        spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
        zones = (subnet_zones or {}).get(node_class.name)
        class_settings = NodeClassSettings.from_manifest(
            node_class.name,
            spec,
            (traits or {}).get(node_class.name, FamilyTraits()),
            zones=frozenset(zones) if zones is not None else None,
            **settings,
        )
        if spec.get("capacityReservationSelectorTerms"):
            notes.append(f"EC2NodeClass {node_class.name}: capacity reservations are not modelled (no reserved offerings)")
        names = (served or {}).get(node_class.name)
        types[node_class.name] = instance_types(
            catalogue.infos.values(),
            catalogue.zones,
            catalogue.region,
            class_settings,
            prices,
            names,
            catalogue.requirements(class_settings.traits.windows_build),
        )
    specs = []
    for pool in node_pools:
        try:
            specs.append(NodePoolSpec.from_node_pool(pool))
        except resources.QuantityError as error:
            notes.append(f"NodePool {pool.name} left out: spec.limits.{error}")
    return World(tuple(specs), types, tuple(pods), tuple(daemon_sets), prices.source, tuple(notes))
