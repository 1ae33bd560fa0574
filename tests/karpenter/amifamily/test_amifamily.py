"""Alias → SSM parameters and variant requirement sets, as the families of ``pkg/providers/amifamily/`` of
github.com/aws/karpenter-provider-aws resolve them."""

import pytest

from karpenter_gitops.core.requirements import IN, Requirement
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.karpenter.amifamily import alias_parameters, parse_alias
from karpenter_gitops.karpenter.amifamily.protocol import (
    ARCH,
    NEURON,
    NVIDIA,
    STANDARD,
    AliasError,
    UnsupportedAlias,
    image_requirements,
)

EKS = "/aws/service/eks/optimized-ami/1.30"


def paths(alias, k8s="1.30", karpenter=(1, 14)):
    return {p.path: p.requirement_sets for p in alias_parameters(parse_alias(alias), Kubernetes.parse(k8s), karpenter)}


def test_al2023_pinned_version_reads_one_parameter_per_arch_and_variant():
    found = paths("al2023@v20240807")
    assert found == {
        f"{EKS}/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-1.30-v20240807/image_id": (STANDARD,),
        f"{EKS}/amazon-linux-2023/x86_64/nvidia/amazon-eks-node-al2023-x86_64-nvidia-1.30-v20240807/image_id": (NVIDIA,),
        f"{EKS}/amazon-linux-2023/x86_64/neuron/amazon-eks-node-al2023-x86_64-neuron-1.30-v20240807/image_id": (NEURON,),
        f"{EKS}/amazon-linux-2023/arm64/standard/amazon-eks-node-al2023-arm64-standard-1.30-v20240807/image_id": (STANDARD,),
        f"{EKS}/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.30-v20240807/image_id": (NVIDIA,),
    }


def test_al2023_latest_reads_recommended_and_arm64_nvidia_only_from_karpenter_1_4():
    assert f"{EKS}/amazon-linux-2023/x86_64/standard/recommended/image_id" in paths("al2023@latest")
    assert not any("arm64/nvidia" in p for p in paths("al2023@latest", karpenter=(1, 3)))
    assert any("arm64/nvidia" in p for p in paths("al2023@latest", karpenter=(1, 4)))


def test_al2_paths_and_gpu_image_serves_neuron_and_nvidia():
    found = paths("al2@v20240807")
    assert found[f"{EKS}/amazon-linux-2/amazon-eks-node-1.30-v20240807/image_id"] == (STANDARD,)
    assert f"{EKS}/amazon-linux-2-arm64/amazon-eks-arm64-node-1.30-v20240807/image_id" in found
    assert found[f"{EKS}/amazon-linux-2-gpu/amazon-eks-gpu-node-1.30-v20240807/image_id"] == (NEURON, NVIDIA)


@pytest.mark.parametrize("alias", ["bottlerocket@v1.32.0", "bottlerocket@1.32.0", "bottlerocket@vv1.32.0"])
def test_bottlerocket_trims_leading_v_and_serves_neuron_from_the_standard_x86_image(alias):
    found = paths(alias)
    assert found == {
        "/aws/service/bottlerocket/aws-k8s-1.30/x86_64/1.32.0/image_id": (STANDARD, NEURON),
        "/aws/service/bottlerocket/aws-k8s-1.30/arm64/1.32.0/image_id": (STANDARD,),
        "/aws/service/bottlerocket/aws-k8s-1.30-nvidia/x86_64/1.32.0/image_id": (NVIDIA,),
        "/aws/service/bottlerocket/aws-k8s-1.30-nvidia/arm64/1.32.0/image_id": (NVIDIA,),
    }


def test_bottlerocket_before_karpenter_1_3_sent_neuron_to_the_nvidia_image_and_keeps_build_suffixes():
    found = paths("bottlerocket@1.32.0-cacc4ce9", karpenter=(1, 2))
    assert found["/aws/service/bottlerocket/aws-k8s-1.30-nvidia/x86_64/1.32.0-cacc4ce9/image_id"] == (NVIDIA, NEURON)
    assert found["/aws/service/bottlerocket/aws-k8s-1.30/x86_64/1.32.0-cacc4ce9/image_id"] == (STANDARD,)
    assert "/aws/service/bottlerocket/aws-k8s-1.30/x86_64/latest/image_id" in paths("bottlerocket@latest")


def test_windows_reads_the_latest_parameter_and_requires_os_and_build():
    [(path, sets)] = paths("windows2022@latest").items()
    assert path == "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.30/image_id"
    assert sets == (
        (Requirement("kubernetes.io/os", IN, ("windows",)), Requirement("node.kubernetes.io/windows-build", IN, ("10.0.20348",))),
    )


@pytest.mark.parametrize("alias, k8s", [("al2@latest", "1.33"), ("al2@v20240807", "1.34"), ("windows2025@latest", "1.34")])
def test_guards_refuse_aliases_karpenter_refuses(alias, k8s):
    with pytest.raises(UnsupportedAlias):
        alias_parameters(parse_alias(alias), Kubernetes.parse(k8s))


def test_guards_let_supported_combinations_through():
    assert alias_parameters(parse_alias("al2@latest"), Kubernetes(1, 32))
    assert alias_parameters(parse_alias("windows2025@latest"), Kubernetes.parse("v1.35.2"))


@pytest.mark.parametrize("text", ["al2023", "AL2023@latest", "ubuntu@latest", "windows2022@v1"])
def test_malformed_or_unknown_aliases_are_alias_errors(text):
    with pytest.raises(AliasError):
        parse_alias(text)


def test_image_requirements_add_arch_to_each_known_set_or_stand_alone():
    arch = Requirement(ARCH, IN, ("arm64",))
    assert image_requirements((), "arm64") == ((arch,),)
    [with_gpu] = image_requirements((NVIDIA,), "arm64")
    assert set(with_gpu) == {arch, *NVIDIA}
    assert with_gpu == tuple(sorted(with_gpu))
