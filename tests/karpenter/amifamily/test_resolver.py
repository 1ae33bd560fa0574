"""Instance type → AMI under strict matching, per NodePool: x86 and arm, standard, GPU and Neuron types over
the images of Bottlerocket, AL2, AL2023 and custom selectors."""

from __future__ import annotations

import pytest
from moto.ec2.models.instance_types import INSTANCE_TYPES

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import (
    MinValuesShortfall,
    Requirement,
    Requirements,
)
from karpenter_gitops.core.resolved import AMI
from karpenter_gitops.karpenter import amifamily
from karpenter_gitops.karpenter.amifamily.resolver import (
    LabelledCatalogue,
    Mapper,
    NodeClassTarget,
    map_instance_types,
)
from karpenter_gitops.load.into_inputs import load_documents

ZONES = ("us-west-2a", "us-west-2b", "us-west-2c")
MIXED_TYPES = ("m5.large", "m7g.large", "g5.xlarge", "g5g.xlarge", "inf2.xlarge")
STANDARD = (Requirement(labels.ACCELERATOR_COUNT, "DoesNotExist"), Requirement(labels.GPU_COUNT, "DoesNotExist"))
NVIDIA = (Requirement(labels.GPU_COUNT, "Exists"),)
NEURON = (Requirement(labels.ACCELERATOR_COUNT, "Exists"),)


def ami(id_: str, arch: str, variant: tuple[Requirement, ...] = (), created: str = "2024-08-01T00:00:00Z") -> AMI:
    return AMI(id_, id_, arch, created, False, (Requirement(labels.ARCH, "In", (arch,)), *variant))


# Status order. The nvidia AMI is the newest, so lenient matching would hand it every amd64 type.
BOTTLEROCKET = (
    ami("ami-x86gpu", "amd64", NVIDIA, "2024-08-04T00:00:00Z"),
    ami("ami-x86std", "amd64", STANDARD, "2024-08-03T00:00:00Z"),
    ami("ami-x86std", "amd64", NEURON, "2024-08-03T00:00:00Z"),
    ami("ami-armstd", "arm64", STANDARD, "2024-08-02T00:00:00Z"),
    ami("ami-armgpu", "arm64", NVIDIA, "2024-08-01T00:00:00Z"),
)  # fmt: skip
AL2 = (
    ami("ami-al2x86", "amd64", STANDARD), ami("ami-al2arm", "arm64", STANDARD),
    ami("ami-al2gpu", "amd64", NEURON), ami("ami-al2gpu", "amd64", NVIDIA),
)  # fmt: skip
AL2023 = (
    ami("ami-x86std", "amd64", STANDARD), ami("ami-x86nvidia", "amd64", NVIDIA), ami("ami-x86neuron", "amd64", NEURON),
    ami("ami-armstd", "arm64", STANDARD), ami("ami-armnvidia", "arm64", NVIDIA),
)  # fmt: skip


@pytest.fixture(scope="module")
def catalogue() -> LabelledCatalogue:
    return LabelledCatalogue(INSTANCE_TYPES.values(), {name: ZONES for name in INSTANCE_TYPES}, "us-west-2")


@pytest.fixture(scope="module")
def mapper(catalogue) -> Mapper:
    return Mapper(catalogue)


def node_pool(*requirements: dict, name: str = "default"):
    doc = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                    "requirements": list(requirements),
                }
            }
        },
    }
    (pool,) = load_documents([(f"{name}.yaml", [doc])]).node_pools
    return pool


def req(key: str, operator: str, *values: str, **extra) -> dict:
    return {"key": key, "operator": operator, "values": list(values), **extra}


MIXED_POOL = node_pool(req(labels.INSTANCE_TYPE, "In", *MIXED_TYPES))


def target(amis, family: str = "Bottlerocket", **kwargs) -> NodeClassTarget:
    """A class of ``family``, with what that family's module says about instance types."""
    known = amifamily.by_name(family)
    facts = {"windows_build": known.windows_build, "unsupported_types": known.unsupported_types}
    return NodeClassTarget("default", family, tuple(amis), **{**facts, **kwargs})


def test_bottlerocket_four_amis_five_requirement_sets(catalogue):
    offered = catalogue.requirements()
    assert map_instance_types(BOTTLEROCKET, {name: offered[name] for name in MIXED_TYPES}) == {
        "m5.large": "ami-x86std",
        "m7g.large": "ami-armstd",
        "g5.xlarge": "ami-x86gpu",
        "g5g.xlarge": "ami-armgpu",
        "inf2.xlarge": "ami-x86std",  # via the neuron requirement set
    }


def test_node_labels_match_the_standard_ami_under_strict_matching():
    """The capacity-cache check of #7925: a real m5.large node has no gpu-count label."""
    node = Requirements.from_labels({labels.ARCH: "amd64", labels.INSTANCE_TYPE: "m5.large"})
    assert map_instance_types(BOTTLEROCKET, {"m5.large": node}) == {"m5.large": "ami-x86std"}


def test_each_type_of_a_node_pool_gets_its_own_variant(mapper):
    result = mapper.map_node_pool(target(BOTTLEROCKET), MIXED_POOL)
    assert result.to_json() == {
        "nodePool": "default",
        "nodeClass": "default",
        "instanceTypes": {
            "g5.xlarge": "ami-x86gpu",
            "g5g.xlarge": "ami-armgpu",
            "inf2.xlarge": "ami-x86std",
            "m5.large": "ami-x86std",
            "m7g.large": "ami-armstd",
        },  # fmt: skip
        "unservedInstanceTypes": [],
        "minValuesShortfalls": [],
        "noInstanceTypes": None,
    }


def test_al2_has_no_arm64_gpu_ami(mapper):
    result = mapper.map_node_pool(target(AL2, "AL2"), MIXED_POOL)
    assert dict(result.instance_types) == {
        "m5.large": "ami-al2x86", "m7g.large": "ami-al2arm", "g5.xlarge": "ami-al2gpu", "inf2.xlarge": "ami-al2gpu",
    }  # fmt: skip
    (unserved,) = result.unserved
    assert unserved.type == "g5g.xlarge"
    assert unserved.reason.startswith("GPU instance type but no selected arm64 AMI carries a GPU variant")


def test_al2023_serves_arm64_gpus_with_the_arm_nvidia_ami(mapper):
    result = mapper.map_node_pool(target(AL2023, "AL2023"), MIXED_POOL)
    assert dict(result.instance_types) == {
        "m5.large": "ami-x86std", "m7g.large": "ami-armstd", "g5.xlarge": "ami-x86nvidia",
        "g5g.xlarge": "ami-armnvidia", "inf2.xlarge": "ami-x86neuron",
    }  # fmt: skip
    assert result.unserved == ()


def test_custom_amis_cannot_be_told_apart_so_gpu_types_take_them(mapper):
    custom = (ami("ami-mine-x86", "amd64"), ami("ami-mine-arm", "arm64"))
    pool = node_pool(req(labels.INSTANCE_TYPE, "In", "g5.xlarge", "p4d.24xlarge", "g5g.xlarge", "m5.large"))
    result = mapper.map_node_pool(target(custom, "Custom"), pool)
    assert dict(result.instance_types) == {
        "g5.xlarge": "ami-mine-x86", "p4d.24xlarge": "ami-mine-x86", "m5.large": "ami-mine-x86",
        "g5g.xlarge": "ami-mine-arm",
    }  # fmt: skip


def test_unserved_reasons(mapper):
    only_x86 = [ami("ami-mine-x86", "amd64")]
    result = mapper.map_node_pool(target(only_x86, "Custom"), node_pool(req(labels.INSTANCE_TYPE, "In", "m7g.large")))
    assert [u.to_json() for u in result.unserved] == [
        {"type": "m7g.large", "reason": "arm64 allowed but only amd64 AMIs selected"}
    ]
    no_neuron = [a for a in AL2023 if a.id != "ami-x86neuron"]
    result = mapper.map_node_pool(target(no_neuron, "AL2023"), MIXED_POOL)
    assert [(u.type, u.reason) for u in result.unserved] == [("inf2.xlarge", "no amd64 AMI for accelerator (neuron) variant")]
    gpu_only = [ami("ami-x86nvidia", "amd64", NVIDIA)]
    result = mapper.map_node_pool(target(gpu_only, "AL2023"), node_pool(req(labels.INSTANCE_TYPE, "In", "m5.large")))
    assert result.unserved[0].reason.startswith("no amd64 AMI for the standard variant")


def test_al2023_drops_a1_and_windows_keeps_amd64_only(mapper):
    pool = node_pool(req(labels.INSTANCE_TYPE, "In", "a1.large", "m6g.large", "m5.large"))
    arm_and_x86 = [ami("ami-x86", "amd64", STANDARD), ami("ami-arm", "arm64", STANDARD)]
    assert set(mapper.map_node_pool(target(arm_and_x86, "AL2023"), pool).instance_types) == {"m6g.large", "m5.large"}
    assert set(mapper.map_node_pool(target(arm_and_x86, "AL2"), pool).instance_types) == {
        "a1.large", "m6g.large", "m5.large",
    }  # fmt: skip
    windows = [
        AMI("ami-win", "win", "amd64", "2024-08-01T00:00:00Z", False, (
            Requirement(labels.ARCH, "In", ("amd64",)), Requirement(labels.OS, "In", ("windows",)),
            Requirement(labels.WINDOWS_BUILD, "In", ("10.0.20348",)),
        )),
    ]  # fmt: skip
    result = mapper.map_node_pool(target(windows, "Windows2022"), pool)
    assert (dict(result.instance_types), result.unserved) == ({"m5.large": "ami-win"}, ())
    wrong_build = mapper.map_node_pool(target(windows, "Windows2019"), pool)
    assert wrong_build.unserved[0].reason.startswith("no compatible AMI: ami-win: node.kubernetes.io/windows-build")


def test_operators_select_instance_types(mapper):
    pool = node_pool(
        req(labels.CATEGORY, "In", "m"),
        req(labels.GENERATION, "Gte", "7"),
        req(labels.CPU, "Lte", "2"),
        req(labels.ARCH, "In", "arm64"),
        req(labels.FAMILY, "NotIn", "m7gd"),
    )
    allowed = set(mapper.map_node_pool(target(AL2023, "AL2023"), pool).instance_types)
    assert {"m7g.medium", "m7g.large", "m8g.large"} <= allowed
    assert not {"m7g.xlarge", "m6g.large", "m7gd.large", "m7i.large"} & allowed


def test_gpu_requirements_exclude_types_without_gpus(mapper):
    pool = node_pool(req(labels.GPU_COUNT, "Gt", "0"), req(labels.ARCH, "In", "arm64"))
    result = mapper.map_node_pool(target(AL2023, "AL2023"), pool)
    assert result.instance_types and all(name.startswith("g5g.") for name in result.instance_types)


def test_node_pool_that_admits_nothing_names_the_requirement(mapper):
    result = mapper.map_node_pool(target(AL2023, "AL2023"), node_pool(req(labels.CPU, "Gt", "100000")))
    assert result.instance_types == {} and result.unserved == ()
    assert result.no_instance_types == f"no instance type satisfies {labels.CPU} Exists >=100001"


def test_subnet_zones_limit_the_node_pool_zones(mapper):
    pool = node_pool(req(labels.ZONE, "In", "us-west-2c"), req(labels.INSTANCE_TYPE, "In", "m5.large"))
    confined = target(AL2023, "AL2023", zones=frozenset({"us-west-2a"}))
    assert mapper.map_node_pool(confined, pool).no_instance_types.startswith(f"no instance type satisfies {labels.ZONE}")


def test_min_values_shortfall(mapper):
    pool = node_pool(req(labels.INSTANCE_TYPE, "In", "m5.large", "m5.xlarge", "c5.large", minValues=3),
                     req(labels.FAMILY, "Exists", minValues=3))  # fmt: skip
    result = mapper.map_node_pool(target(AL2023, "AL2023"), pool)
    assert result.min_values_shortfalls == (MinValuesShortfall(labels.FAMILY, 3, 2),)


def test_node_classes_sharing_amis_share_the_work(mapper):
    first = mapper.map_node_pool(target(AL2023, "AL2023"), MIXED_POOL)
    second = mapper.map_node_pool(NodeClassTarget("other", "AL2023", AL2023), MIXED_POOL)
    assert second.node_class == "other"
    assert second.instance_types is first.instance_types
