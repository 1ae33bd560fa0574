"""Instance-type requirements from real DescribeInstanceTypes entries (moto ships AWS's catalogue)."""

from __future__ import annotations

import boto3
from moto import mock_aws
from moto.ec2.models.instance_types import INSTANCE_TYPES

from karpenter_gitops.core import labels
from karpenter_gitops.core.labels import instance_type_requirements
from karpenter_gitops.core.requirements import Requirements, ValueSet

ZONES = ("us-west-2a", "us-west-2b")


def requirements_of(name: str, **kwargs) -> Requirements:
    return instance_type_requirements(INSTANCE_TYPES[name], ZONES, "us-west-2", **kwargs)


def In(*vals) -> ValueSet:
    return ValueSet(False, frozenset(str(v) for v in vals))


ABSENT = ValueSet(False)


def test_m5_large_has_no_accelerators_and_says_so():
    m5 = requirements_of("m5.large")
    assert m5[labels.ARCH] == In("amd64")
    assert m5[labels.OS] == In("linux")
    assert m5[labels.INSTANCE_TYPE] == In("m5.large")
    assert m5[labels.ZONE] == In(*ZONES)
    assert m5[labels.REGION] == In("us-west-2")
    assert m5[labels.CAPACITY_TYPE] == In("on-demand", "spot")
    assert m5[labels.CPU] == In(2)
    assert m5[labels.MEMORY] == In(8192)
    assert m5[labels.HYPERVISOR] == In("nitro")
    assert m5[labels.ENCRYPTION_IN_TRANSIT] == In("false")
    assert (m5[labels.CATEGORY], m5[labels.FAMILY], m5[labels.GENERATION], m5[labels.SIZE]) == (
        In("m"), In("m5"), In(5), In("large"),
    )  # fmt: skip
    assert m5[labels.CAPABILITY_FLEX] == In("false")
    assert m5[labels.CPU_MANUFACTURER] == In("intel")
    assert m5[labels.CPU_CLOCK] == In(3100)
    assert m5[labels.EBS_BANDWIDTH] == In(4750)
    assert m5[labels.TENANCY] == In("default", "dedicated")
    for key in (
        labels.GPU_COUNT, labels.GPU_NAME, labels.ACCELERATOR_COUNT, labels.LOCAL_NVME, labels.WINDOWS_BUILD,
        labels.CAPACITY_RESERVATION_ID, labels.CAPACITY_RESERVATION_TYPE, labels.CAPACITY_RESERVATION_INTERRUPTIBLE,
    ):  # fmt: skip
        assert m5[key] == ABSENT, key


def test_graviton_gpu_and_neuron_types():
    m7g = requirements_of("m7g.large")
    assert (m7g[labels.ARCH], m7g[labels.CPU_MANUFACTURER]) == (In("arm64"), In("aws"))
    g5g = requirements_of("g5g.xlarge")
    assert (g5g[labels.GPU_NAME], g5g[labels.GPU_MANUFACTURER], g5g[labels.GPU_COUNT], g5g[labels.GPU_MEMORY]) == (
        In("t4g"), In("nvidia"), In(1), In(16384),
    )  # fmt: skip
    g5 = requirements_of("g5.xlarge")
    assert (g5[labels.GPU_NAME], g5[labels.LOCAL_NVME]) == (In("a10g"), In(250))
    inf2 = requirements_of("inf2.xlarge")  # has NeuronInfo and InferenceAcceleratorInfo: Neuron wins
    assert (inf2[labels.ACCELERATOR_NAME], inf2[labels.ACCELERATOR_MANUFACTURER], inf2[labels.ACCELERATOR_COUNT]) == (
        In("inferentia2"), In("aws"), In(1),
    )  # fmt: skip
    assert inf2[labels.GPU_COUNT] == ABSENT
    trn1 = requirements_of("trn1.32xlarge")
    assert (trn1[labels.ACCELERATOR_NAME], trn1[labels.ACCELERATOR_COUNT]) == (In("trainium"), In(16))
    p4d = requirements_of("p4d.24xlarge")
    assert (p4d[labels.GPU_NAME], p4d[labels.GPU_COUNT], p4d[labels.CAPACITY_TYPE]) == (
        In("a100"), In(8), In("on-demand", "spot"),  # capacity-block is not a Karpenter capacity type here
    )  # fmt: skip


def test_names_with_size_prefixes_and_flex():
    u = requirements_of("u-3tb1.56xlarge")
    assert (u[labels.CATEGORY], u[labels.GENERATION], u[labels.FAMILY]) == (In("u"), In(1), In("u-3tb1"))
    assert requirements_of("r8i-flex.large")[labels.CAPABILITY_FLEX] == In("true")


def test_windows_flavour_sets_os_and_build_on_amd64_only():
    windows = requirements_of("m5.large", windows_build="10.0.20348")
    assert (windows[labels.OS], windows[labels.WINDOWS_BUILD]) == (In("windows"), In("10.0.20348"))
    arm = requirements_of("m7g.large", windows_build="10.0.20348")
    assert (arm[labels.OS], arm[labels.WINDOWS_BUILD]) == (ABSENT, ABSENT)


def test_a_type_offered_nowhere_has_no_zone_and_no_capacity_type():
    nowhere = instance_type_requirements(INSTANCE_TYPES["m5.large"], (), "us-west-2")
    assert (nowhere[labels.ZONE], nowhere[labels.CAPACITY_TYPE]) == (ABSENT, ABSENT)


def test_absent_fields_become_does_not_exist():
    bare = {"InstanceType": "x1.large", "VCpuInfo": {"DefaultVCpus": 2}, "MemoryInfo": {"SizeInMiB": 1024},
            "ProcessorInfo": {"SupportedArchitectures": ["x86_64"]}}  # fmt: skip
    minimal = instance_type_requirements(bare, ZONES, "us-west-2")
    for key in (labels.HYPERVISOR, labels.CPU_MANUFACTURER, labels.CPU_CLOCK, labels.EBS_BANDWIDTH,
                labels.NETWORK_BANDWIDTH, labels.CAPACITY_TYPE):  # fmt: skip
        assert minimal[key] == ABSENT, key


@mock_aws
def test_boto3_shapes_are_accepted():
    ec2 = boto3.client("ec2", region_name="us-west-2")
    (info,) = ec2.describe_instance_types(InstanceTypes=["g5.xlarge"])["InstanceTypes"]
    offerings = ec2.describe_instance_type_offerings(
        LocationType="availability-zone", Filters=[{"Name": "instance-type", "Values": ["g5.xlarge"]}]
    )["InstanceTypeOfferings"]
    zones = {offering["Location"] for offering in offerings}
    g5 = instance_type_requirements(info, zones, "us-west-2")
    assert g5[labels.GPU_COUNT] == In(1)
    assert g5[labels.ZONE] == In(*zones) and zones
