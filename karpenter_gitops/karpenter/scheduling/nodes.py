"""Instance types as Karpenter's AWS provider builds them for one EC2NodeClass: capacity, overhead, offerings.

``Allocatable = Capacity − (kube-reserved + system-reserved + eviction threshold)`` per key, from one
``DescribeInstanceTypes`` entry and the class's kubelet block, block devices and network interfaces
(``pkg/providers/instancetype/types.go`` of the AWS provider v1.15.0):

* capacity: vCPUs; memory ``SizeInMiB`` (−64 Mi on arm64) minus ``ceil(size × vm-memory-overhead-percent)``
  Mi; pods = ``maxPods``, else the ENI limit ``usableENIs × (IPv4 per ENI − 1) + 2`` (families with
  ENI-limited density), else 110, then capped by ``podsPerCore × vCPUs``; ephemeral storage from
  RAID0 instance store, the block device mappings or the family's default volume; GPUs, Neuron, EFA.
* kube-reserved: memory ``11 × pods + 255`` Mi (pods: the ENI limit for AL2/AL2023/Custom), cpu
  6 % / 1 % / 0.5 % / 0.25 % tiers, 1Gi storage; the class's ``kubeReserved`` replaces per key.
* system-reserved: only what the class sets. Eviction: 100Mi memory and 10 % of storage, or
  ``evictionHard`` ``memory.available`` / ``nodefs.available`` (absolute or percent; 100 % means 0).

Offerings: one per zone (the type's zones ∩ the class's subnet zones) and capacity type, priced from
a :class:`PriceTable`; an offering without a price is unavailable, as Karpenter has it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter import kubelet as kubelet_cel
from karpenter_gitops.karpenter.amifamily.protocol import FamilyTraits
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.resources import CPU, MEMORY, PODS, STORAGE

VM_MEMORY_OVERHEAD_PERCENT = 0.075  # --vm-memory-overhead-percent default
MEMORY_AVAILABLE, NODEFS_AVAILABLE = "memory.available", "nodefs.available"
NVIDIA_GPU, AMD_GPU, NEURON, NEURON_CORE = "nvidia.com/gpu", "amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"
GAUDI, EFA, POD_ENI = "habana.ai/gaudi", "vpc.amazonaws.com/efa", "vpc.amazonaws.com/pod-eni"
#: Resources that make a type "exotic": the launch prefers types without them (ExoticInstanceTypeFilter).
EXOTIC = (NEURON, NEURON_CORE, AMD_GPU, NVIDIA_GPU, GAUDI)
ON_DEMAND, SPOT = "on-demand", "spot"
HOURS_PER_MONTH = 730


class NodeClassError(ValueError):
    """The class's kubelet block cannot be resolved for some type: Karpenter then lists no instance types."""


@dataclass(frozen=True)
class BlockDevice:
    device_name: str | None = None
    volume_size: str | None = None
    root_volume: bool = False


@dataclass(frozen=True)
class NodeClassSettings:
    """What of an EC2NodeClass (and Karpenter's flags) decides its instance types' resources."""

    name: str
    traits: FamilyTraits = FamilyTraits()
    max_pods: int | str | None = None  # a string is a CEL expression (honoured with the NodeClassCEL gate)
    pods_per_core: int | None = None
    kube_reserved: Mapping[str, str] = field(default_factory=dict)
    system_reserved: Mapping[str, str] = field(default_factory=dict)
    eviction_hard: Mapping[str, str] = field(default_factory=dict)
    block_devices: tuple[BlockDevice, ...] = ()
    raid0: bool = False
    network_interfaces: tuple[tuple[int, str], ...] | None = None  # (networkCardIndex, interfaceType); None: unset
    zones: frozenset[str] | None = None  # the subnets' zones; None: every zone offering the type
    zone_ids: Mapping[str, str] = field(default_factory=dict)
    vm_memory_overhead_percent: float = VM_MEMORY_OVERHEAD_PERCENT
    reserved_enis: int = 0
    node_class_cel: bool = False  # the AWS NodeClassCEL feature gate

    @classmethod
    def from_manifest(cls, name: str, spec: Mapping[str, Any], traits: FamilyTraits, **options: Any) -> NodeClassSettings:
        """From an EC2NodeClass ``spec`` as written (1.15's kubelet block is open, so it is read raw)."""
        kubelet_block = spec.get("kubelet")
        kubelet: Mapping[str, Any] = kubelet_block if isinstance(kubelet_block, Mapping) else {}
        devices = tuple(
            BlockDevice(d.get("deviceName"), (d.get("ebs") or {}).get("volumeSize"), bool(d.get("rootVolume")))
            for d in spec.get("blockDeviceMappings") or ()
            if isinstance(d, Mapping)
        )
        interfaces = spec.get("networkInterfaces")
        return cls(
            name, traits,
            max_pods=kubelet.get("maxPods"), pods_per_core=kubelet.get("podsPerCore"),
            kube_reserved=dict(kubelet.get("kubeReserved") or {}), system_reserved=dict(kubelet.get("systemReserved") or {}),
            eviction_hard=dict(kubelet.get("evictionHard") or {}), block_devices=devices,
            raid0=spec.get("instanceStorePolicy") == "RAID0",
            network_interfaces=None if interfaces is None else tuple(
                (int(i.get("networkCardIndex", 0)), str(i.get("interfaceType", "interface"))) for i in interfaces if isinstance(i, Mapping)),
            **options,
        )  # fmt: skip


@dataclass(frozen=True)
class Overhead:
    kube_reserved: Mapping[str, int]
    system_reserved: Mapping[str, int]
    eviction_threshold: Mapping[str, int]

    @property
    def total(self) -> resources.Vector:
        return resources.merge(self.kube_reserved, self.system_reserved, self.eviction_threshold)

    def to_json(self) -> dict[str, Any]:
        return {
            "kubeReserved": resources.as_quantities(self.kube_reserved),
            "systemReserved": resources.as_quantities(self.system_reserved),
            "evictionThreshold": resources.as_quantities(self.eviction_threshold),
        }


@dataclass(frozen=True)
class Offering:
    """Where a type can be bought: zone × capacity type, at a price per hour."""

    zone: str
    capacity_type: str
    price: float
    available: bool = True
    zone_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"zone": self.zone, "capacityType": self.capacity_type, "price": self.price, "available": self.available}
        return {**out, "zoneId": self.zone_id} if self.zone_id else out


@dataclass(frozen=True, eq=False)
class InstanceType:
    """One instance type as the scheduler sees it for one EC2NodeClass. Identity-hashed."""

    name: str
    requirements: Requirements
    capacity: Mapping[str, int]
    overhead: Overhead
    offerings: tuple[Offering, ...]

    @property
    def allocatable(self) -> resources.Vector:
        cached = self.__dict__.get("_allocatable")
        if cached is None:
            cached = resources.subtract(self.capacity, self.overhead.total)
            object.__setattr__(self, "_allocatable", cached)
        return cached

    @property
    def exotic(self) -> bool:
        """Metal sizes and accelerator types: the launch drops them while anything else fits."""
        size = self.requirements.get(labels.SIZE)
        if size is not None and any("metal" in value for value in size.values):
            return True
        return any(self.capacity.get(name, 0) for name in EXOTIC)

    def to_json(self) -> dict[str, Any]:
        """As Karpenter's ``cloudprovider.InstanceType`` is fed to its scheduler in a differential run."""
        requirements = []
        for key in sorted(self.requirements):
            allowed = self.requirements[key]
            requirements.append(
                {"key": key, "operator": allowed.operator, **({"values": sorted(allowed.values)} if allowed.values else {})}
            )
        return {
            "name": self.name,
            "requirements": requirements,
            "capacity": resources.as_quantities(self.capacity),
            "overhead": self.overhead.to_json(),
            "offerings": [o.to_json() for o in self.offerings],
        }


@dataclass(frozen=True)
class PriceTable:
    """Hourly prices and where they come from.

    On-demand is one price per type for every zone (as Karpenter holds it). Spot is per (type, zone);
    ``spot=None`` means unknown, and then spot offerings cost the on-demand price, which is what
    Karpenter itself assumes until its first spot price update.
    """

    on_demand: Mapping[str, float]
    source: str
    spot: Mapping[tuple[str, str], float] | None = None

    def price(self, instance_type: str, zone: str, capacity_type: str) -> float | None:
        if capacity_type == SPOT and self.spot is not None:
            return self.spot.get((instance_type, zone))
        return self.on_demand.get(instance_type)


# --- capacity -------------------------------------------------------------------------------


def _network(info: Mapping[str, Any]) -> tuple[int, int]:
    """(ENIs of the default network card, IPv4 addresses per ENI), as Karpenter reads them."""
    network = info.get("NetworkInfo") or {}
    cards = network.get("NetworkCards") or ()
    index = network.get("DefaultNetworkCardIndex", 0)
    enis = cards[index]["MaximumNetworkInterfaces"] if 0 <= index < len(cards) else network.get("MaximumNetworkInterfaces", 0)
    return int(enis), int(network.get("Ipv4AddressesPerInterface", 0))


def eni_limited_pods(info: Mapping[str, Any], reserved_enis: int, settings: NodeClassSettings) -> int:
    """``usableENIs × (IPv4 per ENI − 1) + 2``; EFA-only interfaces on card 0 use an ENI each."""
    enis, addresses = _network(info)
    efa_only = sum(1 for card, kind in settings.network_interfaces or () if card == 0 and kind == "efa-only")
    usable = max(enis - reserved_enis - efa_only, 0)
    return usable * (addresses - 1) + 2 if usable else 0


def _vcpus(info: Mapping[str, Any]) -> int:
    return int(info["VCpuInfo"]["DefaultVCpus"])


def _cel_vars(info: Mapping[str, Any], max_pods: int) -> kubelet_cel.Vars:
    enis, addresses = _network(info)
    return kubelet_cel.Vars(_vcpus(info), int(info["MemoryInfo"]["SizeInMiB"]), enis, addresses, max_pods, info["InstanceType"])


def _expression(expression: str, info: Mapping[str, Any], max_pods: int) -> int:
    checked = kubelet_cel.check(expression)
    failure = kubelet_cel.compile_failure("spec.kubelet", checked, snippets=False)
    if failure or not checked.compiles:
        raise NodeClassError(failure or f"cannot evaluate {expression!r}")
    outcome = kubelet_cel.result(checked, _cel_vars(info, max_pods))
    if outcome.error is not None or outcome.value is None:
        raise NodeClassError(outcome.error or f"cannot evaluate {expression!r}")
    return outcome.value


def _default_pods(info: Mapping[str, Any], settings: NodeClassSettings) -> int:
    """Pods without maxPods: the ENI limit or 110, capped by podsPerCore."""
    count = eni_limited_pods(info, settings.reserved_enis, settings) if settings.traits.eni_limited_pods else 110
    if settings.pods_per_core and settings.traits.pods_per_core:
        count = min(settings.pods_per_core * _vcpus(info), count)
    return count


def pods(info: Mapping[str, Any], settings: NodeClassSettings) -> int:
    """The pods capacity (``maxPods``, a CEL expression with the gate on, or the family default)."""
    max_pods = settings.max_pods
    if isinstance(max_pods, str):
        if not settings.node_class_cel:
            max_pods = None  # with the gate off Karpenter falls back to the family default
        else:
            value = _expression(max_pods, info, _default_pods(info, settings))
            if not 0 <= value <= kubelet_cel.INT32_MAX:
                raise NodeClassError(
                    f"maxPods expression evaluated to a value outside the valid range (instance-type={info['InstanceType']})"
                )
            max_pods = value
    if max_pods is None:
        return _default_pods(info, settings)
    count = int(max_pods)
    if settings.pods_per_core and settings.traits.pods_per_core:
        count = min(settings.pods_per_core * _vcpus(info), count)
    return count


def memory_mib(info: Mapping[str, Any], settings: NodeClassSettings) -> int:
    """Memory capacity in Mi: the reported size (−64 Mi of CMA on Graviton) less the VM overhead."""
    size = int(info["MemoryInfo"]["SizeInMiB"])
    architectures = (info.get("ProcessorInfo") or {}).get("SupportedArchitectures") or ()
    if architectures and architectures[0] == "arm64":
        size -= 64
    return size - math.ceil(size * 1024 * 1024 * settings.vm_memory_overhead_percent / 1024 / 1024)


def ephemeral_storage(info: Mapping[str, Any], settings: NodeClassSettings) -> int:
    """Ephemeral storage in milli-bytes: RAID0 instance store, a mapped volume, or the family's default."""
    storage = info.get("InstanceStorageInfo") or {}
    if settings.raid0 and storage.get("TotalSizeInGB") is not None:
        return resources.milli(f"{storage['TotalSizeInGB']}G")
    devices = settings.block_devices
    if devices:
        root = next((d for d in devices if d.root_volume), None)
        if root is not None and root.volume_size:
            return resources.milli(root.volume_size)
        if settings.traits.ephemeral_device is None:  # Custom: the last mapping, else the default
            return resources.milli(devices[-1].volume_size or settings.traits.ephemeral_size)
        mapped = next((d for d in devices if d.device_name == settings.traits.ephemeral_device), None)
        if mapped is not None and mapped.volume_size:
            return resources.milli(mapped.volume_size)
    return resources.milli(settings.traits.ephemeral_size)


def _accelerators(info: Mapping[str, Any], settings: NodeClassSettings) -> resources.Vector:
    gpus = (info.get("GpuInfo") or {}).get("Gpus") or ()

    def by(maker: str) -> int:
        return sum(int(g.get("Count", 0)) for g in gpus if g.get("Manufacturer") == maker)

    devices = (info.get("NeuronInfo") or {}).get("NeuronDevices") or ()
    neuron_cores = int(devices[0].get("Count", 0)) * int((devices[0].get("CoreInfo") or {}).get("Count", 0)) if devices else 0
    if settings.network_interfaces is not None:
        efa = sum(1 for _, kind in settings.network_interfaces if kind == "efa-only")
    else:
        efa = int(((info.get("NetworkInfo") or {}).get("EfaInfo") or {}).get("MaximumEfaInterfaces", 0))
    counts = {
        NVIDIA_GPU: by("NVIDIA"),
        AMD_GPU: by("AMD"),
        NEURON: sum(int(d.get("Count", 0)) for d in devices),
        NEURON_CORE: neuron_cores,
        GAUDI: by("Habana"),
        EFA: efa,
        POD_ENI: 0,
    }
    return {name: count * resources.MILLI for name, count in counts.items()}


def capacity(info: Mapping[str, Any], settings: NodeClassSettings) -> resources.Vector:
    """Karpenter's ``computeCapacity`` (pod-eni is 0: the per-type trunking table is not carried)."""
    return {
        CPU: _vcpus(info) * resources.MILLI,
        MEMORY: memory_mib(info, settings) * 1024 * 1024 * resources.MILLI,
        STORAGE: ephemeral_storage(info, settings),
        PODS: pods(info, settings) * resources.MILLI,
        **_accelerators(info, settings),
    }


# --- overhead -------------------------------------------------------------------------------

_CPU_TIERS = ((0, 1000, 0.06), (1000, 2000, 0.01), (2000, 4000, 0.005), (4000, 1 << 31, 0.0025))


def kube_reserved_cpu(vcpus: int) -> int:
    """Millicores: each tier's share truncated to whole millicores, as Karpenter's float arithmetic does."""
    cpu, total = vcpus * 1000, 0
    for start, end, share in _CPU_TIERS:
        if cpu >= start:
            total += int(float(min(cpu, end) - start) * share)
    return total  # the cpu vector is in millicores already


def _reserved(values: Mapping[str, str], info: Mapping[str, Any], settings: NodeClassSettings, max_pods: int) -> resources.Vector:
    """A kubeReserved/systemReserved map: quantities, and CEL expressions when the gate is on (else dropped)."""
    out: resources.Vector = {}
    for key, value in values.items():
        try:
            out[key] = resources.milli(value)
        except resources.QuantityError:
            if settings.node_class_cel:
                out[key] = resources.milli(kubelet_cel.reserved_quantity(key, _expression(str(value), info, max_pods)))
    return out


def _eviction_signal(capacity_milli: int, value: str) -> int:
    if value.endswith("%"):
        percent = float(value[:-1])
        percent = 0.0 if percent == 100 else percent
        return math.ceil(capacity_milli / resources.MILLI / 100 * percent) * resources.MILLI
    return resources.milli(value)


def overhead(info: Mapping[str, Any], settings: NodeClassSettings, node_capacity: Mapping[str, int]) -> Overhead:
    """Karpenter's kube-reserved, system-reserved and eviction threshold for one type."""
    pods_count = node_capacity[PODS] // resources.MILLI
    memory_pods = eni_limited_pods(info, 0, settings) if settings.traits.eni_limited_memory_overhead else pods_count
    kube = {
        MEMORY: (11 * memory_pods + 255) * 1024 * 1024 * resources.MILLI,
        STORAGE: resources.milli("1Gi"),
        CPU: kube_reserved_cpu(_vcpus(info)),
    }
    kube.update(_reserved(settings.kube_reserved, info, settings, pods_count))
    system = _reserved(settings.system_reserved, info, settings, pods_count)
    eviction = {
        MEMORY: resources.milli("100Mi"),
        STORAGE: math.ceil(node_capacity[STORAGE] / resources.MILLI / 100 * 10) * resources.MILLI,
    }
    if MEMORY_AVAILABLE in settings.eviction_hard:
        eviction[MEMORY] = _eviction_signal(node_capacity[MEMORY], settings.eviction_hard[MEMORY_AVAILABLE])
    if NODEFS_AVAILABLE in settings.eviction_hard:
        eviction[STORAGE] = _eviction_signal(node_capacity[STORAGE], settings.eviction_hard[NODEFS_AVAILABLE])
    return Overhead(kube, system, eviction)


# --- instance types ---------------------------------------------------------------------------


def instance_type(
    info: Mapping[str, Any],
    zones: Iterable[str],
    region: str,
    settings: NodeClassSettings,
    prices: PriceTable,
    known: Requirements | None = None,
) -> InstanceType:
    """One DescribeInstanceTypes entry for this class: requirements, capacity, overhead, offerings.

    ``known`` are the type's requirements over all its zones (``LabelledCatalogue.requirements``), used as
    they are when the class's subnets do not narrow the zones.
    """
    name = info["InstanceType"]
    offered = set(zones)
    if settings.zones is not None and not offered <= settings.zones:
        offered &= settings.zones
        known = None
    requirements = known or labels.instance_type_requirements(info, offered, region, windows_build=settings.traits.windows_build)
    node_capacity = capacity(info, settings)
    capacity_types = sorted(requirements[labels.CAPACITY_TYPE].values)
    offerings = []
    for zone in sorted(offered):
        for capacity_type in capacity_types:
            price = prices.price(name, zone, capacity_type)
            offerings.append(
                Offering(zone, capacity_type, price if price is not None else 0.0, price is not None, settings.zone_ids.get(zone))
            )
    return InstanceType(name, requirements, node_capacity, overhead(info, settings, node_capacity), tuple(offerings))


def instance_types(
    infos: Iterable[Mapping[str, Any]],
    zones: Mapping[str, Iterable[str]],
    region: str,
    settings: NodeClassSettings,
    prices: PriceTable,
    names: Iterable[str] | None = None,
    known: Mapping[str, Requirements] | None = None,
) -> tuple[InstanceType, ...]:
    """The class's instance types, by name; ``names`` restricts them (e.g. to the types an AMI serves),
    ``known`` gives requirements already computed (``LabelledCatalogue.requirements(windows_build)``)."""
    wanted = None if names is None else set(names)
    return tuple(
        instance_type(
            info, zones.get(info["InstanceType"], ()), region, settings, prices, (known or {}).get(info["InstanceType"])
        )
        for info in sorted(infos, key=lambda i: i["InstanceType"])
        if wanted is None or info["InstanceType"] in wanted
    )
