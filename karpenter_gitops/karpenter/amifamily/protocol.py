"""What every AMI family module provides (a :class:`Family`), and the alias pieces they share.

An alias ``family@version`` names SSM parameters; each parameter's image serves requirement sets
(variants: standard, nvidia, neuron) plus its architecture. Mirrors
``pkg/providers/amifamily/types.go`` of github.com/aws/karpenter-provider-aws. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from karpenter_gitops.core import versions
from karpenter_gitops.core.requirements import DOES_NOT_EXIST, EXISTS, IN, Requirement
from karpenter_gitops.karpenter.amifamily.userdata.problems import Problem

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

LATEST = "latest"

#: EC2 architecture → Kubernetes architecture; images of any other architecture are skipped.
KUBERNETES_ARCH = {"x86_64": "amd64", "arm64": "arm64"}

ALIAS = re.compile(r"^([a-z0-9]+)@(.+)$")


class AliasError(ValueError):
    """An alias Karpenter cannot resolve at all (malformed, or an unknown family or version)."""


class AliasStopsController(AliasError):
    """An alias with a second '@': the CRD stores it, and Karpenter's controller exits on reading it
    (log.Fatalf), so it never writes a status (the error finding is ``nodeclass/alias-format``)."""


def stops_controller(alias: str) -> bool:
    """Whether Karpenter's controller exits reading ``alias``: it splits it on every '@' and wants two parts."""
    return alias.count("@") > 1


class UnsupportedAlias(AliasError):
    """A well-formed alias that Karpenter refuses for this Kubernetes version (AMIsReady=False, UnsupportedAlias)."""


@dataclass(frozen=True)
class FamilyTraits:
    """What an AMI family changes about node resources (Karpenter's ``FeatureFlags`` and block devices)."""

    eni_limited_pods: bool = True  # SupportsENILimitedPodDensity
    eni_limited_memory_overhead: bool = True  # UsesENILimitedMemoryOverhead
    pods_per_core: bool = True  # PodsPerCoreEnabled
    ephemeral_device: str | None = "/dev/xvda"  # None: Custom (unknown device; the last mapping counts)
    ephemeral_size: str = "20Gi"
    windows_build: str | None = None  # Windows families: the OS is windows, amd64 only


@dataclass(frozen=True)
class Alias:
    """An ``amiSelectorTerms`` alias, ``family@version``."""

    family: str
    version: str

    def __str__(self) -> str:
        return f"{self.family}@{self.version}"


@dataclass(frozen=True)
class AliasParameter:
    """One SSM parameter an alias reads, and the requirement sets (without arch) its image serves."""

    path: str
    requirement_sets: tuple[RequirementSet, ...]


def image_requirements(known_sets: tuple[RequirementSet, ...], kubernetes_arch: str) -> tuple[RequirementSet, ...]:
    """Each known set plus ``kubernetes.io/arch In [arch]``, sorted; an image with no known sets gets arch only."""
    arch = Requirement(ARCH, IN, (kubernetes_arch,))
    return tuple(tuple(sorted((*known, arch))) for known in known_sets or ((),))


Parameters = Callable[[Alias, str, versions.Release], tuple[AliasParameter, ...]]


def always_supported(_kubernetes: versions.Kubernetes, _release: versions.Release) -> str | None:
    return None


def no_userdata_checks(_text: str) -> list[Problem]:
    return []


def sent_as_written(text: str, _release: versions.Release) -> str | None:
    """Custom's userData: Karpenter base64-encodes it and merges nothing in."""
    return text


@dataclass(frozen=True)
class Family:
    """One AMI family as Karpenter knows it; each family module defines its own."""

    name: str  # the amiFamily value, e.g. "AL2023"
    alias: str | None = None  # its alias family, e.g. "al2023"; None when it has no alias (Custom)
    since: versions.Release | None = None  # the Karpenter release that added it
    version_format: re.Pattern[str] | None = None  # a pinnable alias version; None: only "latest" (Windows)
    version_example: str | None = None  # a pinned alias to suggest, e.g. "al2023@v20240807"
    parameters: Parameters | None = None  # (alias, "1.32", Karpenter release) → SSM parameters, in Karpenter's order
    unsupported: Callable[[versions.Kubernetes, versions.Release], str | None] = always_supported
    """Why Karpenter refuses the alias for (Kubernetes minor, Karpenter release); None when it serves it."""
    check_userdata: Callable[[str], list[Problem]] = no_userdata_checks
    # The userData Karpenter sends EC2 for this text at a release, with the cluster's own values empty (the
    # smallest it can be, see userdata.rendered); None when Karpenter cannot merge it (another rule says why).
    render_userdata: Callable[[str, versions.Release], str | None] = sent_as_written
    windows_build: str | None = None  # node.kubernetes.io/windows-build of its images (Windows families)
    unsupported_types: tuple[str, ...] = ()  # instance-type name prefixes its images cannot boot (AL2023: a1)
    image_name: re.Pattern[str] | None = None  # how AWS names its published images; group "k8s" is the Kubernetes minor
    # How it takes spec.kubelet from 1.15 on (Karpenter's FeatureFlags): any KubeletConfiguration field
    # (AL2023), or only the twelve Karpenter maps; whether it renders podsPerCore; whether Karpenter
    # checks the block for it at all (Custom owns its userData and ignores the block).
    arbitrary_kubelet: bool = False
    pods_per_core: bool = True
    kubelet_checked: bool = True
    # Whether its default maxPods is the ENI limit (Karpenter's SupportsENILimitedPodDensity); else 110.
    eni_limited_pods: bool = True
    # Whether kube-reserved memory counts the ENI-limited pods even under maxPods (UsesENILimitedMemoryOverhead),
    # and the volume pods' ephemeral storage is on by default (None: unknown, Custom).
    eni_limited_memory_overhead: bool = True
    ephemeral_device: str | None = "/dev/xvda"
    ephemeral_size: str = "20Gi"

    @property
    def node_traits(self) -> FamilyTraits:
        """What the family changes about its nodes' capacity and overhead, for the provisioning simulation."""
        return FamilyTraits(
            self.eni_limited_pods,
            self.eni_limited_memory_overhead,
            self.pods_per_core,
            self.ephemeral_device,
            self.ephemeral_size,
            self.windows_build,
        )
