"""Well-known label keys, and the requirements Karpenter computes for one EC2 instance type.

Input is one ``DescribeInstanceTypes`` entry exactly as boto3 returns it, plus the zones that
offer the type. Every well-known label the type has no value for is ``DoesNotExist``: strict AMI
matching relies on that (a non-GPU type must *say* it has no GPU to be refused a GPU AMI).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from karpenter_gitops.core.requirements import Requirements, ValueSet

ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
WINDOWS_BUILD = "node.kubernetes.io/windows-build"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
ZONE_ID = "topology.k8s.aws/zone-id"
CAPACITY_TYPE = "karpenter.sh/capacity-type"

_AWS = "karpenter.k8s.aws/"
HYPERVISOR = _AWS + "instance-hypervisor"
ENCRYPTION_IN_TRANSIT = _AWS + "instance-encryption-in-transit-supported"
CATEGORY = _AWS + "instance-category"
CAPABILITY_FLEX = _AWS + "instance-capability-flex"
FAMILY = _AWS + "instance-family"
GENERATION = _AWS + "instance-generation"
LOCAL_NVME = _AWS + "instance-local-nvme"
SIZE = _AWS + "instance-size"
CPU = _AWS + "instance-cpu"
CPU_MANUFACTURER = _AWS + "instance-cpu-manufacturer"
CPU_CLOCK = _AWS + "instance-cpu-sustained-clock-speed-mhz"
MEMORY = _AWS + "instance-memory"
EBS_BANDWIDTH = _AWS + "instance-ebs-bandwidth"
NETWORK_BANDWIDTH = _AWS + "instance-network-bandwidth"
GPU_NAME = _AWS + "instance-gpu-name"
GPU_MANUFACTURER = _AWS + "instance-gpu-manufacturer"
GPU_COUNT = _AWS + "instance-gpu-count"
GPU_MEMORY = _AWS + "instance-gpu-memory"
ACCELERATOR_NAME = _AWS + "instance-accelerator-name"
ACCELERATOR_MANUFACTURER = _AWS + "instance-accelerator-manufacturer"
ACCELERATOR_COUNT = _AWS + "instance-accelerator-count"
TENANCY = _AWS + "instance-tenancy"
CAPACITY_RESERVATION_ID = _AWS + "capacity-reservation-id"
CAPACITY_RESERVATION_TYPE = _AWS + "capacity-reservation-type"
CAPACITY_RESERVATION_INTERRUPTIBLE = _AWS + "capacity-reservation-interruptible"

# Every key an instance type defines, valued or not; the unvalued ones become DoesNotExist.
INSTANCE_TYPE_KEYS = (
    INSTANCE_TYPE, ARCH, OS, ZONE, REGION, WINDOWS_BUILD, CAPACITY_TYPE,
    HYPERVISOR, ENCRYPTION_IN_TRANSIT, CATEGORY, CAPABILITY_FLEX, FAMILY, GENERATION, LOCAL_NVME, SIZE,
    CPU, CPU_MANUFACTURER, CPU_CLOCK, MEMORY, EBS_BANDWIDTH, NETWORK_BANDWIDTH,
    GPU_NAME, GPU_MANUFACTURER, GPU_COUNT, GPU_MEMORY,
    ACCELERATOR_NAME, ACCELERATOR_MANUFACTURER, ACCELERATOR_COUNT, TENANCY,
    CAPACITY_RESERVATION_ID, CAPACITY_RESERVATION_TYPE, CAPACITY_RESERVATION_INTERRUPTIBLE,
)  # fmt: skip

KUBE_ARCHITECTURES = {"x86_64": "amd64", "arm64": "arm64"}
_CAPACITY_TYPES = ("on-demand", "spot")
_TENANCIES = ("default", "dedicated")
_NAME_SCHEME = re.compile(r"(^[a-z]+)(\-[0-9]+tb)?([0-9]+).*\.")


def kube_architecture(info: Mapping[str, Any]) -> str | None:
    """The Kubernetes arch of a type, or None for ones Karpenter never lists (i386-only, Mac)."""
    for architecture in info.get("ProcessorInfo", {}).get("SupportedArchitectures", ()):
        if architecture in KUBE_ARCHITECTURES:
            return KUBE_ARCHITECTURES[architecture]
    return None


def _kebab(text: str) -> str:
    return text.replace(" ", "-").lower()


def _only(entries: Any) -> Mapping[str, Any] | None:
    """Karpenter labels GPUs and accelerators only when the type lists exactly one kind."""
    return entries[0] if entries and len(entries) == 1 else None


def instance_type_labels(
    info: Mapping[str, Any],
    zones: Iterable[str],
    region: str,
    *,
    zone_ids: Iterable[str] = (),
    windows_build: str | None = None,
) -> dict[str, tuple[str, ...]]:
    """Values per well-known key (empty tuple: no value); the raw material of the requirements."""
    name = info["InstanceType"]
    arch = kube_architecture(info)
    zones = tuple(sorted(set(zones)))
    processor = info.get("ProcessorInfo", {})
    values: dict[str, tuple[str, ...]] = {key: () for key in INSTANCE_TYPE_KEYS}

    def put(key: str, *vals: Any) -> None:
        values[key] = tuple(str(v) for v in vals)

    put(INSTANCE_TYPE, name)
    if arch:
        put(ARCH, arch)
    if windows_build is None:
        put(OS, "linux")
    elif arch == "amd64":
        put(OS, "windows")
        put(WINDOWS_BUILD, windows_build)
    put(ZONE, *zones)
    put(REGION, region)
    if zone_ids:
        values[ZONE_ID] = tuple(sorted(set(zone_ids)))
    if zones:  # capacity types come from offerings, which exist only where a zone offers the type
        put(CAPACITY_TYPE, *(c for c in _CAPACITY_TYPES if c in info.get("SupportedUsageClasses", ())))
    put(CPU, info["VCpuInfo"]["DefaultVCpus"])
    put(MEMORY, info["MemoryInfo"]["SizeInMiB"])
    if info.get("Hypervisor"):
        put(HYPERVISOR, info["Hypervisor"])
    put(ENCRYPTION_IN_TRANSIT, str(bool(info.get("NetworkInfo", {}).get("EncryptionInTransitSupported"))).lower())
    put(TENANCY, *_TENANCIES)

    if scheme := _NAME_SCHEME.match(name):
        put(CATEGORY, scheme.group(1))
        put(GENERATION, scheme.group(3))
    family, dot, size = name.partition(".")
    if dot and "." not in size:
        put(FAMILY, family)
        put(SIZE, size)
    put(CAPABILITY_FLEX, str("-flex" in family).lower())

    storage = info.get("InstanceStorageInfo")
    if storage and storage.get("NvmeSupport") != "unsupported":
        put(LOCAL_NVME, storage["TotalSizeInGB"])
    ebs = info.get("EbsInfo", {})
    if ebs.get("EbsOptimizedSupport") == "default" and "EbsOptimizedInfo" in ebs:
        put(EBS_BANDWIDTH, ebs["EbsOptimizedInfo"]["MaximumBandwidthInMbps"])
    # Karpenter reads a generated table; the sum of the network cards' baselines is its source.
    if cards := info.get("NetworkInfo", {}).get("NetworkCards"):
        put(NETWORK_BANDWIDTH, round(sum(c.get("BaselineBandwidthInGbps", 0) for c in cards) * 1000))

    if gpu := _only(info.get("GpuInfo", {}).get("Gpus")):
        put(GPU_NAME, _kebab(gpu["Name"]))
        put(GPU_MANUFACTURER, _kebab(gpu["Manufacturer"]))
        put(GPU_COUNT, gpu["Count"])
        put(GPU_MEMORY, gpu["MemoryInfo"]["SizeInMiB"])
    if "NeuronInfo" in info:
        if device := _only(info["NeuronInfo"].get("NeuronDevices")):
            put(ACCELERATOR_NAME, _kebab(device["Name"]))
            put(ACCELERATOR_MANUFACTURER, "aws")
            put(ACCELERATOR_COUNT, device["Count"])
    elif accelerator := _only(info.get("InferenceAcceleratorInfo", {}).get("Accelerators")):
        put(ACCELERATOR_NAME, _kebab(accelerator["Name"]))
        put(ACCELERATOR_MANUFACTURER, _kebab(accelerator["Manufacturer"]))
        put(ACCELERATOR_COUNT, accelerator["Count"])

    if manufacturer := processor.get("Manufacturer"):
        put(CPU_MANUFACTURER, _kebab(manufacturer))
    if ghz := processor.get("SustainedClockSpeedInGhz"):
        put(CPU_CLOCK, math.floor(ghz * 1000 + 0.5))
    return values


def instance_type_requirements(
    info: Mapping[str, Any],
    zones: Iterable[str],
    region: str,
    *,
    zone_ids: Iterable[str] = (),
    windows_build: str | None = None,
) -> Requirements:
    """The requirements of one instance type: ``In`` its values, ``DoesNotExist`` where it has none.

    ``windows_build`` is set for Windows AMI families: the OS becomes windows (amd64 only).
    """
    labels = instance_type_labels(info, zones, region, zone_ids=zone_ids, windows_build=windows_build)
    return Requirements((key, ValueSet(False, frozenset(vals))) for key, vals in labels.items())
