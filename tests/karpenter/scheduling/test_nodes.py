"""Capacity, overhead and allocatable as Karpenter's AWS provider computes them (``pkg/providers/instancetype/types.go``
of github.com/aws/karpenter-provider-aws), worked by hand."""

from __future__ import annotations

import pytest
from support.simulation import AL2023, BOTTLEROCKET, info, types

from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.nodes import (
    BlockDevice,
    FamilyTraits,
    NodeClassError,
    NodeClassSettings,
    PriceTable,
    instance_type,
    kube_reserved_cpu,
)
from karpenter_gitops.karpenter.scheduling.resources import CPU, MEMORY, PODS, STORAGE

MI, GI = 1024**2, 1024**3


def shown(values, *names):
    return {name: resources.quantity(name, values[name]) for name in names}


def node(name: str, **settings):
    traits = settings.pop("traits", AL2023)
    return types([name], NodeClassSettings("default", traits, **settings), prices={name: 1.0})[0]


def test_m5_large_on_al2023_is_worked_by_hand():
    # m5.large (2 vCPU, 8192 MiB, 3 ENIs × 10 IPv4), AL2023, defaults:
    #   memory capacity 8192Mi − ceil(8192 × 0.075 = 614.4) = 8192 − 615 = 7577Mi
    #   pods 3 × (10 − 1) + 2 = 29; kube-reserved memory 11 × 29 + 255 = 574Mi, eviction 100Mi → 7577 − 674 = 6903Mi
    #   cpu 2000m − (6 % of 1000m = 60m + 1 % of 1000m = 10m) = 1930m
    #   ephemeral-storage 20Gi − 1Gi kube-reserved − 2Gi (10 %) eviction = 17Gi
    m5 = node("m5.large")
    assert shown(m5.capacity, CPU, MEMORY, PODS, STORAGE) == {
        "cpu": "2",
        "memory": "7577Mi",
        "pods": "29",
        "ephemeral-storage": "20Gi",
    }
    assert m5.overhead.to_json() == {
        "kubeReserved": {"cpu": "70m", "ephemeral-storage": "1Gi", "memory": "574Mi"},
        "systemReserved": {},
        "evictionThreshold": {"ephemeral-storage": "2Gi", "memory": "100Mi"},
    }
    assert shown(m5.allocatable, CPU, MEMORY, PODS, STORAGE) == {
        "cpu": "1930m",
        "memory": "6903Mi",
        "pods": "29",
        "ephemeral-storage": "17Gi",
    }


def test_graviton_loses_64mi_of_cma_before_the_vm_overhead():
    # m7g.large: 8192 − 64 = 8128Mi; ceil(8128 × 0.075 = 609.6) = 610 → 7518Mi; − 574Mi − 100Mi = 6844Mi
    m7g = node("m7g.large")
    assert shown(m7g.capacity, MEMORY) == {"memory": "7518Mi"}
    assert shown(m7g.allocatable, MEMORY) == {"memory": "6844Mi"}


def test_a_larger_type_takes_more_enis_and_lower_cpu_tiers():
    # m5.xlarge: 16384 − ceil(1228.8) = 15155Mi; pods 4 × 14 + 2 = 58 → 11 × 58 + 255 = 893Mi → 15155 − 893 − 100 = 14162Mi
    # cpu 4000 − (60 + 10 + 0.5 % of 2000 = 10) = 3920m
    m5 = node("m5.xlarge")
    assert shown(m5.allocatable, CPU, MEMORY, PODS) == {"cpu": "3920m", "memory": "14162Mi", "pods": "58"}


@pytest.mark.parametrize(("vcpus", "millicores"), [(1, 60), (2, 70), (4, 80), (8, 90), (48, 190), (96, 310)])
def test_kube_reserved_cpu_tiers(vcpus, millicores):
    # 6 % of the first core, 1 % of the second, 0.5 % of cores 3–4, 0.25 % above: 48 → 60 + 10 + 10 + 44000 × 0.0025 = 190
    assert kube_reserved_cpu(vcpus) == millicores


def test_max_pods_sets_pods_but_al2023_memory_overhead_stays_eni_limited():
    # maxPods 110: pods capacity 110; AL2023 kube-reserved memory still counts the ENI limit: 11 × 29 + 255 = 574Mi
    m5 = node("m5.large", max_pods=110)
    assert shown(m5.allocatable, PODS, MEMORY) == {"pods": "110", "memory": "6903Mi"}


def test_bottlerocket_memory_overhead_follows_max_pods():
    # Bottlerocket: 11 × 110 + 255 = 1465Mi → 7577 − 1465 − 100 = 6012Mi
    m5 = node("m5.large", max_pods=110, traits=BOTTLEROCKET)
    assert shown(m5.allocatable, PODS, MEMORY) == {"pods": "110", "memory": "6012Mi"}


def test_pods_per_core_caps_pods_except_on_bottlerocket():
    assert node("m5.large", pods_per_core=4).capacity[PODS] == 8 * resources.MILLI  # min(4 × 2, 29)
    assert node("m5.large", pods_per_core=4, traits=BOTTLEROCKET).capacity[PODS] == 29 * resources.MILLI


def test_windows_defaults_to_110_pods_and_a_50gi_volume():
    windows = FamilyTraits(
        eni_limited_pods=False, eni_limited_memory_overhead=False, ephemeral_device="/dev/sda1", ephemeral_size="50Gi"
    )
    m5 = node("m5.large", traits=windows)
    # 11 × 110 + 255 = 1465Mi; storage 50Gi − 1Gi − 5Gi = 44Gi
    assert shown(m5.allocatable, PODS, MEMORY, STORAGE) == {"pods": "110", "memory": "6012Mi", "ephemeral-storage": "44Gi"}


def test_eviction_hard_percentages_and_quantities_replace_the_defaults():
    # memory.available 5 % of 7577Mi = 7945060352 B × 0.05 = 397253017.6 → 397253018 B
    m5 = node("m5.large", eviction_hard={"memory.available": "5%", "nodefs.available": "15%"})
    assert m5.overhead.eviction_threshold[MEMORY] == 397253018 * resources.MILLI
    # nodefs.available 15 % of 20Gi = 3Gi exactly → 20 − 1 − 3 = 16Gi
    assert shown(m5.allocatable, STORAGE) == {"ephemeral-storage": "16Gi"}
    assert node("m5.large", eviction_hard={"memory.available": "100%"}).overhead.eviction_threshold[MEMORY] == 0  # 100 % disables
    assert shown(node("m5.large", eviction_hard={"memory.available": "500Mi"}).allocatable, MEMORY) == {"memory": "6503Mi"}


def test_kube_and_system_reserved_replace_per_key():
    m5 = node("m5.large", kube_reserved={"cpu": "200m"}, system_reserved={"memory": "100Mi"})
    # cpu 2000 − 200 = 1800m; memory keeps the computed 574Mi kube-reserved, plus 100Mi system: 6903 − 100 = 6803Mi
    assert shown(m5.allocatable, CPU, MEMORY) == {"cpu": "1800m", "memory": "6803Mi"}


def test_ephemeral_storage_from_raid0_and_block_devices():
    # RAID0 on m5d.large: 75G (decimal) − 1Gi − 10 % (7.5G) = 75e9 − 1073741824 − 7.5e9 bytes
    assert node("m5d.large", raid0=True).allocatable[STORAGE] == (75 * 10**9 - GI - 75 * 10**8) * resources.MILLI
    # a root volume wins; else the family's device; Custom takes the last mapping
    assert shown(node("m5.large", block_devices=(BlockDevice("/dev/xvda", "100Gi", True),)).allocatable, STORAGE) == {
        "ephemeral-storage": "89Gi"
    }
    assert node("m5.large", block_devices=(BlockDevice("/dev/xvda", "50Gi"),)).capacity[STORAGE] == 50 * GI * resources.MILLI
    bottlerocket = (BlockDevice("/dev/xvda", "4Gi"), BlockDevice("/dev/xvdb", "60Gi"))
    assert node("m5.large", traits=BOTTLEROCKET, block_devices=bottlerocket).capacity[STORAGE] == 60 * GI * resources.MILLI
    custom = FamilyTraits(ephemeral_device=None)
    assert (
        node(
            "m5.large", traits=custom, block_devices=(BlockDevice("/dev/xvda", "30Gi"), BlockDevice("/dev/xvdb", "80Gi"))
        ).capacity[STORAGE]
        == 80 * GI * resources.MILLI
    )


def test_accelerators_become_capacity():
    g5 = node("g5.xlarge")
    assert g5.capacity["nvidia.com/gpu"] == 1 * resources.MILLI and g5.exotic
    assert node("m5.metal").exotic and not node("m5.large").exotic


def test_max_pods_expressions_need_the_node_class_cel_gate():
    assert node("m5.large", max_pods="vcpus * 8").capacity[PODS] == 29 * resources.MILLI  # gate off: the family default
    assert node("m5.large", max_pods="vcpus * 8", node_class_cel=True).capacity[PODS] == 16 * resources.MILLI
    with pytest.raises(NodeClassError):
        node("m5.large", max_pods="vcpus / 0", node_class_cel=True)


def test_offerings_follow_the_subnets_and_need_a_price():
    settings = NodeClassSettings("default", zones=frozenset({"us-west-2a"}))
    m5 = instance_type(info("m5.large"), ("us-west-2a", "us-west-2b"), "us-west-2", settings, PriceTable({}, "none"))
    assert [(o.zone, o.capacity_type, o.available) for o in m5.offerings] == [
        ("us-west-2a", "on-demand", False),
        ("us-west-2a", "spot", False),
    ]  # no price: unavailable, as Karpenter has it
    priced = PriceTable({"m5.large": 0.096}, "static", {("m5.large", "us-west-2a"): 0.03})
    m5 = instance_type(info("m5.large"), ("us-west-2a",), "us-west-2", settings, priced)
    assert {(o.capacity_type, o.price) for o in m5.offerings} == {("on-demand", 0.096), ("spot", 0.03)}
    unknown_spot = PriceTable({"m5.large": 0.096}, "static")
    assert {o.price for o in instance_type(info("m5.large"), ("us-west-2a",), "us-west-2", settings, unknown_spot).offerings} == {
        0.096
    }


def test_from_manifest_reads_the_open_kubelet_block():
    spec = {
        "kubelet": {"maxPods": 50, "kubeReserved": {"cpu": "1"}},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "40Gi"}}],
        "instanceStorePolicy": "RAID0",
        "networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 1, "interfaceType": "efa-only"}],
    }
    settings = NodeClassSettings.from_manifest("gpu", spec, AL2023)
    assert (settings.max_pods, settings.kube_reserved, settings.raid0, settings.network_interfaces) == (
        50,
        {"cpu": "1"},
        True,
        ((0, "efa-only"),),
    )
    assert settings.block_devices == (BlockDevice("/dev/xvda", "40Gi", True),)
