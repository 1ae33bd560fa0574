"""Which instance types a NodePool can launch through its EC2NodeClass, and with which AMI.

Mirrors Karpenter v1.4+ ``MapToInstanceTypes``: each instance type takes the *first* AMI of
``status.amis`` it is strictly compatible with, so AMIs are taken in the order the AMI adapter
returns them (creation date descending, then id). Types a
NodePool allows but no AMI serves are reported with a reason a human can act on.

Work is shared: instance-type requirements are computed once per catalogue (and Windows build),
the AMI assignment once per AMI set, the allowed types once per NodePool requirement set, and
the combination once per (AMI set, NodePool requirements, NodeClass filters).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.model import NodePool
from karpenter_gitops.core.requirements import (
    MinValuesShortfall,
    Requirements,
    ValueSet,
    incompatibility,
    min_values_shortfalls,
)
from karpenter_gitops.core.resolved import AMI


class LabelledCatalogue:
    """The region's instance types as Karpenter lists them (hvm, x86_64/arm64), with requirements.

    Built from ``aws.catalogue.Catalogue``'s ``instance_types``, ``offerings`` and ``region``.
    """

    def __init__(self, instance_types: Iterable[Mapping[str, Any]], zones: Mapping[str, Iterable[str]], region: str):
        self.region = region
        self.infos = {
            info["InstanceType"]: info
            for info in instance_types
            if labels.kube_architecture(info) and "hvm" in info.get("SupportedVirtualizationTypes", ("hvm",))
        }
        self.zones = {name: frozenset(zones.get(name, ())) for name in self.infos}
        self._requirements: dict[str | None, Mapping[str, Requirements]] = {}
        self._label_values: dict[str, frozenset[str]] = {}

    def requirements(self, windows_build: str | None = None) -> Mapping[str, Requirements]:
        """Instance type → requirements, computed once per OS flavour."""
        if windows_build not in self._requirements:
            self._requirements[windows_build] = MappingProxyType(
                {
                    name: labels.instance_type_requirements(info, self.zones[name], self.region, windows_build=windows_build)
                    for name, info in self.infos.items()
                }
            )
        return self._requirements[windows_build]

    def label_values(self, key: str) -> frozenset[str]:
        """Every value the region's instance types carry for ``key`` (a family, a size...), worked out once."""
        if key not in self._label_values:
            found = (offered.get(key) for offered in self.requirements().values())
            self._label_values[key] = frozenset(
                value for value_set in found if value_set is not None and not value_set.complement for value in value_set.values
            )
        return self._label_values[key]


@dataclass(frozen=True)
class NodeClassTarget:
    """What of one EC2NodeClass decides the instance types it launches and their AMIs."""

    name: str
    ami_family: str
    amis: tuple[AMI, ...]  # in status order, as karpenter_gitops.adapters.aws.amis returns them
    zones: frozenset[str] | None = None  # zones of the resolved subnets; None when unknown
    nested_virtualization: bool = False
    connection_tracking: bool = False
    windows_build: str | None = None  # the family's Windows build, for Windows families
    unsupported_types: tuple[str, ...] = ()  # instance-type name prefixes the family's images cannot boot

    def launchable(self, info: Mapping[str, Any]) -> bool:
        """Karpenter's offline ``FilterForNodeClass`` checks for this NodeClass."""
        name = info["InstanceType"]
        if name.startswith(self.unsupported_types):
            return False
        if self.windows_build and labels.kube_architecture(info) != "amd64":
            return False
        if self.nested_virtualization and "nested-virtualization" not in info.get("ProcessorInfo", {}).get(
            "SupportedFeatures", ()
        ):
            return False
        return not (self.connection_tracking and info.get("Hypervisor") != "nitro")


@dataclass(frozen=True)
class UnservedInstanceType:
    type: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "reason": self.reason}


@dataclass(frozen=True)
class NodePoolMapping:
    """One NodePool through one EC2NodeClass: instance type → AMI, and what cannot launch."""

    node_pool: str
    node_class: str
    instance_types: Mapping[str, str]
    unserved: tuple[UnservedInstanceType, ...] = ()
    min_values_shortfalls: tuple[MinValuesShortfall, ...] = ()
    no_instance_types: str | None = None  # why the requirements admit no instance type at all

    def to_json(self) -> dict[str, Any]:
        return {
            "nodePool": self.node_pool,
            "nodeClass": self.node_class,
            "instanceTypes": dict(sorted(self.instance_types.items())),
            "unservedInstanceTypes": [u.to_json() for u in self.unserved],
            "minValuesShortfalls": [s.to_json() for s in self.min_values_shortfalls],
            "noInstanceTypes": self.no_instance_types,
        }


def map_instance_types(amis: Sequence[AMI], instance_types: Mapping[str, Requirements]) -> dict[str, str]:
    """``MapToInstanceTypes`` with strict matching: instance type → first compatible AMI id.

    Types agreeing on every key the AMIs constrain share one answer, so the walk over the AMIs
    runs once per distinct signature rather than once per type.
    """
    ami_requirements = [(ami.id, Requirements.of(ami.requirements)) for ami in amis]
    keys = sorted({key for _, required in ami_requirements for key in required})
    by_signature: dict[tuple[ValueSet | None, ...], str | None] = {}
    mapped = {}
    for name, offered in instance_types.items():
        signature = tuple(offered.get(key) for key in keys)
        if signature not in by_signature:
            by_signature[signature] = next(
                (ami_id for ami_id, required in ami_requirements if incompatibility(offered, required) is None), None
            )
        if (ami_id := by_signature[signature]) is not None:
            mapped[name] = ami_id
    return mapped


def _carries(ami: AMI, key: str) -> bool:
    """Whether the AMI asks for ``key`` to be present, i.e. is a GPU or accelerator variant."""
    wanted = Requirements.of(ami.requirements).get(key)
    return wanted is not None and not wanted.tolerates_absence


def unserved_reason(instance_type: Requirements, amis: Sequence[AMI]) -> str:
    """Why no AMI serves an instance type, phrased as what to change."""
    if not amis:
        return "no AMI resolved for the EC2NodeClass"
    arch = next(iter(instance_type[labels.ARCH].values))
    same_arch = [ami for ami in amis if ami.architecture == arch]
    if not same_arch:
        selected = "/".join(sorted({ami.architecture for ami in amis}))
        return f"{arch} allowed but only {selected} AMIs selected"
    has_gpu = instance_type[labels.GPU_COUNT].values
    has_accelerator = instance_type[labels.ACCELERATOR_COUNT].values
    if has_gpu and not any(_carries(ami, labels.GPU_COUNT) for ami in same_arch):
        return (
            f"GPU instance type but no selected {arch} AMI carries a GPU variant "
            "(custom AMIs cannot be told apart — use a separate EC2NodeClass)"
        )
    if has_accelerator and not any(_carries(ami, labels.ACCELERATOR_COUNT) for ami in same_arch):
        return f"no {arch} AMI for accelerator (neuron) variant"
    if (
        not has_gpu
        and not has_accelerator
        and all(_carries(ami, labels.GPU_COUNT) or _carries(ami, labels.ACCELERATOR_COUNT) for ami in same_arch)
    ):
        return f"no {arch} AMI for the standard variant (only GPU/accelerator AMIs selected)"
    return "no compatible AMI: " + "; ".join(
        f"{ami.id}: {incompatibility(instance_type, Requirements.of(ami.requirements))}" for ami in same_arch
    )


# What decides which instance types an EC2NodeClass can launch: its AMI family, nested virtualization, connection tracking.
_LaunchFilters = tuple[str, bool, bool]
# A NodePool's mapping: instance type → AMI, the types no AMI serves, the minValues shortfalls, why none is allowed.
_Mapped = tuple[Mapping[str, str], tuple[UnservedInstanceType, ...], tuple[MinValuesShortfall, ...], str | None]


class Mapper:
    """Maps NodePools over one catalogue, memoising every stage that repeats across NodeClasses."""

    def __init__(self, catalogue: LabelledCatalogue):
        self.catalogue = catalogue
        self._launchable: dict[_LaunchFilters, tuple[str, ...]] = {}
        self._amis: dict[tuple[str | None, tuple[AMI, ...]], dict[str, str]] = {}
        self._allowed: dict[tuple[_LaunchFilters, Requirements], tuple[str, ...]] = {}
        self._results: dict[tuple[_LaunchFilters, tuple[AMI, ...], Requirements], _Mapped] = {}

    def map_node_pool(self, target: NodeClassTarget, node_pool: NodePool) -> NodePoolMapping:
        required = Requirements.from_node_pool(node_pool)
        if target.zones is not None:
            required &= Requirements([(labels.ZONE, ValueSet(False, target.zones))])
        filters = (target.ami_family, target.nested_virtualization, target.connection_tracking)
        key = (filters, target.amis, required)
        if key not in self._results:
            self._results[key] = self._compute(target, required)
        instance_types, unserved, shortfalls, empty_reason = self._results[key]
        return NodePoolMapping(node_pool.name, target.name, instance_types, unserved, shortfalls, empty_reason)

    def _compute(self, target: NodeClassTarget, required: Requirements) -> _Mapped:
        offered = self.catalogue.requirements(target.windows_build)
        allowed = self._allowed_types(target, required)
        by_ami = self._ami_assignment(target)
        instance_types = MappingProxyType({name: by_ami[name] for name in allowed if name in by_ami})
        unserved = tuple(
            UnservedInstanceType(name, unserved_reason(offered[name], target.amis)) for name in allowed if name not in by_ami
        )
        shortfalls = min_values_shortfalls(required, (offered[name] for name in allowed))
        empty_reason = None if allowed else self._why_nothing_allowed(target, required)
        return instance_types, unserved, shortfalls, empty_reason

    def _launchable_types(self, target: NodeClassTarget) -> tuple[str, ...]:
        key = (target.ami_family, target.nested_virtualization, target.connection_tracking)
        if key not in self._launchable:
            self._launchable[key] = tuple(
                sorted(
                    name for name, info in self.catalogue.infos.items() if self.catalogue.zones[name] and target.launchable(info)
                )
            )
        return self._launchable[key]

    def _allowed_types(self, target: NodeClassTarget, required: Requirements) -> tuple[str, ...]:
        key = ((target.ami_family, target.nested_virtualization, target.connection_tracking), required)
        if key not in self._allowed:
            offered = self.catalogue.requirements(target.windows_build)
            self._allowed[key] = tuple(name for name in self._launchable_types(target) if offered[name].intersects(required))
        return self._allowed[key]

    def _ami_assignment(self, target: NodeClassTarget) -> dict[str, str]:
        key = (target.windows_build, target.amis)
        if key not in self._amis:
            self._amis[key] = map_instance_types(target.amis, self.catalogue.requirements(target.windows_build))
        return self._amis[key]

    def _why_nothing_allowed(self, target: NodeClassTarget, required: Requirements) -> str:
        """Name the first requirement that on its own rules out every instance type."""
        offered = self.catalogue.requirements(target.windows_build)
        candidates = [offered[name] for name in self._launchable_types(target)]
        if not candidates:
            return f"no instance type in the catalogue can launch with this {target.ami_family} EC2NodeClass"
        for key, allowed in sorted(required.items()):
            alone = Requirements([(key, allowed)])
            if not any(candidate.intersects(alone) for candidate in candidates):
                return f"no instance type satisfies {key} {allowed}"
        return "no instance type satisfies all the requirements together"
