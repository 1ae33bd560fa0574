"""AMI aliases as Karpenter reads them: ``family@version`` → the SSM parameters to look up, each
with the requirement sets (variants) its image serves. Pure: no I/O.

Mirrors ``pkg/providers/amifamily/{al2,al2023,bottlerocket,windows,types}.go`` (see the
reference, §2.2–2.3), including which Karpenter release added which variant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from karpenter_gitops.core import versions
from karpenter_gitops.core.requirements import DOES_NOT_EXIST, EXISTS, IN, Requirement

ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
WINDOWS_BUILD = "node.kubernetes.io/windows-build"
GPU_COUNT = "karpenter.k8s.aws/instance-gpu-count"
ACCELERATOR_COUNT = "karpenter.k8s.aws/instance-accelerator-count"

RequirementSet = tuple[Requirement, ...]

STANDARD: RequirementSet = (Requirement(ACCELERATOR_COUNT, DOES_NOT_EXIST), Requirement(GPU_COUNT, DOES_NOT_EXIST))
NVIDIA: RequirementSet = (Requirement(GPU_COUNT, EXISTS),)
NEURON: RequirementSet = (Requirement(ACCELERATOR_COUNT, EXISTS),)
VARIANTS = {"standard": STANDARD, "nvidia": NVIDIA, "neuron": NEURON}

WINDOWS_BUILDS = {"windows2019": "10.0.17763", "windows2022": "10.0.20348", "windows2025": "10.0.26100"}
FAMILIES = ("al2", "al2023", "bottlerocket", *WINDOWS_BUILDS)
LATEST = "latest"

#: EC2 architecture → Kubernetes architecture; images of any other architecture are skipped.
KUBERNETES_ARCH = {"x86_64": "amd64", "arm64": "arm64"}

_ALIAS = re.compile(r"^([a-z0-9]+)@(.+)$")
_KUBERNETES_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$")


class AliasError(ValueError):
    """An alias Karpenter cannot resolve at all (malformed, or an unknown family or version)."""


class UnsupportedAlias(AliasError):
    """A well-formed alias that Karpenter refuses for this Kubernetes version (AMIsReady=False, UnsupportedAlias)."""


@dataclass(frozen=True)
class Alias:
    family: str
    version: str

    def __str__(self) -> str:
        return f"{self.family}@{self.version}"


@dataclass(frozen=True)
class AliasParameter:
    """One SSM parameter an alias reads, and the requirement sets (without arch) its image serves."""

    path: str
    requirement_sets: tuple[RequirementSet, ...]


def parse_alias(text: str) -> Alias:
    match = _ALIAS.match(text.strip())
    if not match:
        raise AliasError(f"alias {text!r} is improperly formatted, must match the format 'family@version'")
    family, version = match.groups()
    if family not in FAMILIES:
        raise AliasError(f"alias family {family!r} is not supported, use one of {', '.join(FAMILIES)}")
    if family in WINDOWS_BUILDS and version != LATEST:
        raise AliasError(f"alias {text!r}: windows families may only specify version 'latest'")
    return Alias(family, version)


def kubernetes_minor(text: str) -> versions.Version:
    """``1.32`` or ``v1.32.1`` → ``(1, 32)``."""
    match = _KUBERNETES_VERSION.match(str(text).strip())
    if not match:
        raise ValueError(f"{text!r} is not a Kubernetes version (expected e.g. 1.32)")
    return int(match.group(1)), int(match.group(2))


def alias_parameters(
    alias: Alias, kubernetes_version: str, karpenter_version: versions.Version = versions.DEFAULT
) -> tuple[AliasParameter, ...]:
    """The SSM parameters ``alias`` reads on a cluster running ``kubernetes_version``, in Karpenter's order.

    Raises UnsupportedAlias for the combinations Karpenter refuses (AL2 on 1.33+, Windows 2025 before 1.35).
    """
    major, minor = kubernetes_minor(kubernetes_version)
    k = f"{major}.{minor}"
    if alias.family == "al2" and (major, minor) >= (1, 33) and karpenter_version >= (1, 6):
        raise UnsupportedAlias(f"AL2 AMIs are not published for Kubernetes {k} and later; use al2023 or bottlerocket")
    if alias.family == "windows2025" and (major, minor) < (1, 35):
        raise UnsupportedAlias(f"windows2025 requires Kubernetes 1.35 or later (cluster runs {k})")
    builder = {"al2": _al2, "al2023": _al2023, "bottlerocket": _bottlerocket}.get(alias.family, _windows)
    return builder(alias, k, karpenter_version)


def _al2(alias: Alias, k: str, _: versions.Version) -> tuple[AliasParameter, ...]:
    def path(directory: str, image: str) -> str:
        leaf = "recommended" if alias.version == LATEST else f"{image}-{k}-{alias.version}"
        return f"/aws/service/eks/optimized-ami/{k}/{directory}/{leaf}/image_id"
    return (
        AliasParameter(path("amazon-linux-2", "amazon-eks-node"), (STANDARD,)),
        AliasParameter(path("amazon-linux-2-arm64", "amazon-eks-arm64-node"), (STANDARD,)),
        AliasParameter(path("amazon-linux-2-gpu", "amazon-eks-gpu-node"), (NEURON, NVIDIA)),
    )


def _al2023(alias: Alias, k: str, karpenter_version: versions.Version) -> tuple[AliasParameter, ...]:
    variants = [("x86_64", "standard"), ("x86_64", "nvidia"), ("x86_64", "neuron"), ("arm64", "standard")]
    if karpenter_version >= (1, 4):
        variants.append(("arm64", "nvidia"))

    def path(arch: str, variant: str) -> str:
        leaf = "recommended" if alias.version == LATEST else f"amazon-eks-node-al2023-{arch}-{variant}-{k}-{alias.version}"
        return f"/aws/service/eks/optimized-ami/{k}/amazon-linux-2023/{arch}/{variant}/{leaf}/image_id"
    return tuple(AliasParameter(path(arch, variant), (VARIANTS[variant],)) for arch, variant in variants)


def _bottlerocket(alias: Alias, k: str, karpenter_version: versions.Version) -> tuple[AliasParameter, ...]:
    version = alias.version.lstrip("v")
    neuron_on_standard = karpenter_version >= (1, 3)  # before v1.3.0 neuron types got the nvidia image

    def path(flavour: str, arch: str) -> str:
        return f"/aws/service/bottlerocket/aws-k8s-{k}{flavour}/{arch}/{version}/image_id"
    return (
        AliasParameter(path("", "x86_64"), (STANDARD, NEURON) if neuron_on_standard else (STANDARD,)),
        AliasParameter(path("", "arm64"), (STANDARD,)),
        AliasParameter(path("-nvidia", "x86_64"), (NVIDIA,) if neuron_on_standard else (NVIDIA, NEURON)),
        AliasParameter(path("-nvidia", "arm64"), (NVIDIA,)),
    )


def _windows(alias: Alias, k: str, _: versions.Version) -> tuple[AliasParameter, ...]:
    year = alias.family.removeprefix("windows")
    requirements = (Requirement(OS, IN, ("windows",)), Requirement(WINDOWS_BUILD, IN, (WINDOWS_BUILDS[alias.family],)))
    path = f"/aws/service/ami-windows-latest/Windows_Server-{year}-English-Core-EKS_Optimized-{k}/image_id"
    return (AliasParameter(path, (requirements,)),)


def image_requirements(known_sets: tuple[RequirementSet, ...], kubernetes_arch: str) -> tuple[RequirementSet, ...]:
    """Each known set plus ``kubernetes.io/arch In [arch]``, sorted; an image with no known sets gets arch only."""
    arch = Requirement(ARCH, IN, (kubernetes_arch,))
    return tuple(tuple(sorted((*known, arch))) for known in known_sets or ((),))
