"""Windows 2019/2022/2025: userData is plain PowerShell that Karpenter wraps in <powershell> tags."""

from __future__ import annotations

import re
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.requirements import IN, Requirement
from karpenter_gitops.karpenter.amifamily.protocol import (
    OS,
    WINDOWS_BUILD,
    Alias,
    AliasParameter,
    Family,
    Parameters,
)
from karpenter_gitops.karpenter.amifamily.userdata import common, rendered
from karpenter_gitops.karpenter.amifamily.userdata.problems import OWN_BOOTSTRAP, POWERSHELL_TAGS, Problem

_TAG = re.compile(r"</?powershell>", re.IGNORECASE)
_BOOTSTRAP = re.compile(r"^[^#\n]*Start-EKSBootstrap\.ps1", re.MULTILINE | re.IGNORECASE)


def check(text: str) -> list[Problem]:
    problems = common.bottlerocket_settings_elsewhere(text, "Windows")
    if _TAG.search(text):
        problems.append(
            Problem(
                POWERSHELL_TAGS,
                "userData has <powershell> tags, but Karpenter adds its own around userData and its bootstrap "
                "command; the inner </powershell> ends the script before Karpenter's bootstrap runs",
                "remove the <powershell> and </powershell> lines and keep only the PowerShell commands",
            )
        )
    if _BOOTSTRAP.search(text):
        problems.append(
            Problem(
                OWN_BOOTSTRAP,
                "this userData runs Start-EKSBootstrap.ps1 itself, and Karpenter appends its own call after it, so "
                "the node bootstraps twice with different arguments",
                "remove the bootstrap call: set kubelet settings in spec.kubelet and labels and taints in the NodePool; "
                "or bootstrap yourself with amiFamily: Custom",
            )
        )
    return problems


def render(text: str, release: versions.Release) -> str:
    """Karpenter's merge (``Windows.Script``): the user's PowerShell, then its Start-EKSBootstrap.ps1 call,
    inside one <powershell> block."""
    return (
        "<powershell>\n"
        + (text + "\n" if text else "")
        + '[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1"\n'
        + "& $EKSBootstrapScriptFile -EKSClusterName '' -APIServerEndpoint ''"
        + f" -KubeletExtraArgs '{rendered.kubelet_extra_args(release)}'\n</powershell>"
    )


# --- the families ---------------------------------------------------------------------------------


def _parameters(build: str) -> Parameters:
    def parameters(alias: Alias, k: str, _: versions.Release) -> tuple[AliasParameter, ...]:
        year = alias.family.removeprefix("windows")
        requirements = (Requirement(OS, IN, ("windows",)), Requirement(WINDOWS_BUILD, IN, (build,)))
        path = f"/aws/service/ami-windows-latest/Windows_Server-{year}-English-Core-EKS_Optimized-{k}/image_id"
        return (AliasParameter(path, (requirements,)),)

    return parameters


def _needs_kubernetes_1_35(kubernetes: versions.Kubernetes, _release: versions.Release) -> str | None:
    if kubernetes < (1, 35):
        return f"windows2025 requires Kubernetes 1.35 or later (cluster runs {versions.show(kubernetes)})"
    return None


def _windows(year: str, build: str, **facts: Any) -> Family:
    return Family(
        f"Windows{year}",
        alias=f"windows{year}",
        parameters=_parameters(build),
        check_userdata=check,
        windows_build=build,
        render_userdata=render,
        image_name=re.compile(rf"^Windows_Server-{year}-English-(?:Core|Full)-EKS_Optimized-(?P<k8s>\d+\.\d+)"),
        eni_limited_pods=False,
        eni_limited_memory_overhead=False,
        ephemeral_device="/dev/sda1",
        ephemeral_size="50Gi",
        **facts,  # Windows nodes default to 110 pods, on a 50Gi root volume
    )


FAMILIES = (
    _windows("2019", "10.0.17763"),
    _windows("2022", "10.0.20348"),
    _windows("2025", "10.0.26100", since=versions.Release((1, 9)), unsupported=_needs_kubernetes_1_35),
)
