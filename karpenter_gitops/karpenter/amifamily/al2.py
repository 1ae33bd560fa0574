"""Amazon Linux 2: shell (or MIME) userData, and the ``/etc/eks/bootstrap.sh`` calls in it
(read by :mod:`.userdata.bootstrap`)."""

from __future__ import annotations

import re

from karpenter_gitops.core import versions
from karpenter_gitops.karpenter.amifamily.protocol import (
    LATEST,
    NEURON,
    NVIDIA,
    STANDARD,
    Alias,
    AliasParameter,
    Family,
)
from karpenter_gitops.karpenter.amifamily.userdata import bootstrap, common, go_multipart, mime, rendered
from karpenter_gitops.karpenter.amifamily.userdata.problems import OWN_BOOTSTRAP, Problem


def check(text: str) -> list[Problem]:
    archive = mime.read(text)
    problems = mime.karpenter_problems(text, "AL2") + common.bottlerocket_settings_elsewhere(text, "AL2")
    for part in archive.parts:
        calls = list(bootstrap.invocations(part.body))
        problems.extend(bootstrap.review(calls, managed=True))
        if any(call.via_bootstrap for call in calls):
            problems.append(
                Problem(
                    OWN_BOOTSTRAP,
                    "this userData runs /etc/eks/bootstrap.sh itself, and Karpenter appends its own bootstrap.sh call "
                    "after it, so the node bootstraps twice with different arguments",
                    "remove the bootstrap.sh call: set kubelet settings in spec.kubelet and labels and taints in the "
                    "NodePool; or bootstrap yourself with amiFamily: Custom",
                )
            )
    return problems


def render(text: str, release: versions.Release) -> str | None:
    """Karpenter's merge (``EKS.Script``): the user's parts (a script wrapped as one), then its bootstrap.sh
    part, in one archive; None when its reader refuses the MIME (``userdata/mime`` says why). Parts keep
    their Content-Type only here, so a part with more headers renders larger at Karpenter's."""
    parts: list[tuple[tuple[tuple[str, str], ...], str]] = []
    if text and mime.is_mime(text):
        try:
            found = go_multipart.karpenter_read(text)
        except go_multipart.GoError:
            return None
        parts = [((("Content-Type", part.content_type),) if part.content_type else (), part.body) for part in found]
    elif text:
        parts = [((("Content-Type", rendered.SHELL_SCRIPT),), text)]
    script = (
        "#!/bin/bash -xe\n"
        "exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n"
        "/etc/eks/bootstrap.sh '' --apiserver-endpoint ''  \\\n"
        f"--kubelet-extra-args '{rendered.kubelet_extra_args(release)}'"
    )
    return rendered.mime_archive([*parts, ((("Content-Type", rendered.SHELL_SCRIPT),), script)])


# --- the family ---------------------------------------------------------------------------------


def parameters(alias: Alias, k: str, _: versions.Release) -> tuple[AliasParameter, ...]:
    def path(directory: str, image: str) -> str:
        leaf = "recommended" if alias.version == LATEST else f"{image}-{k}-{alias.version}"
        return f"/aws/service/eks/optimized-ami/{k}/{directory}/{leaf}/image_id"

    return (
        AliasParameter(path("amazon-linux-2", "amazon-eks-node"), (STANDARD,)),
        AliasParameter(path("amazon-linux-2-arm64", "amazon-eks-arm64-node"), (STANDARD,)),
        AliasParameter(path("amazon-linux-2-gpu", "amazon-eks-gpu-node"), (NEURON, NVIDIA)),
    )


def unsupported(kubernetes: versions.Kubernetes, release: versions.Release) -> str | None:
    """Karpenter 1.6+ refuses AL2 aliases on Kubernetes 1.33+, for which no AL2 EKS AMI is published."""
    if kubernetes >= (1, 33) and release >= (1, 6):
        return f"AL2 AMIs are not published for Kubernetes {versions.show(kubernetes)} and later; use al2023 or bottlerocket"
    return None


FAMILY = Family(
    "AL2",
    image_name=re.compile(r"^amazon-eks-(?:gpu-|arm64-)?node-(?P<k8s>\d+\.\d+)-v\d{8}"),
    alias="al2",
    version_format=re.compile(r"^v\d{8}\Z"),
    version_example="al2@v20240807",
    parameters=parameters,
    unsupported=unsupported,
    check_userdata=check,
    render_userdata=render,
)
