"""Amazon Linux 2023: nodeadm reads NodeConfig documents (:mod:`.userdata.nodeconfig`); there is no bootstrap.sh.

Karpenter keeps MIME parts as they are (custom parts first, its own NodeConfig last); plain
userData that loads as a YAML map becomes a NodeConfig part, anything else a shell-script part.
Taints reach the node through ``spec.kubelet.config.registerWithTaints``.
"""

from __future__ import annotations

import re

from karpenter_gitops.core import versions, yaml_reader
from karpenter_gitops.karpenter.amifamily.protocol import (
    LATEST,
    VARIANTS,
    Alias,
    AliasParameter,
    Family,
)
from karpenter_gitops.karpenter.amifamily.userdata import bootstrap, common, go_multipart, mime, nodeconfig, rendered, taints
from karpenter_gitops.karpenter.amifamily.userdata.problems import AL2023_BOOTSTRAP, OWN_BOOTSTRAP, Problem

_LEGACY = re.compile(r"^[^#\n]*(bootstrap\.sh|--kubelet-extra-args)", re.MULTILINE)
_NODEADM_INIT = re.compile(r"^[^#\n]*\bnodeadm\s+init\b", re.MULTILINE)


def check(text: str) -> list[Problem]:
    archive = mime.read(text)
    problems = mime.karpenter_problems(text, "AL2023") + common.bottlerocket_settings_elsewhere(text, "AL2023")
    for part in archive.parts:
        configs = nodeconfig.node_configs(part)
        if configs is None:
            problems.extend(_legacy_bootstrap(part.body))
            if _NODEADM_INIT.search(part.body):
                problems.append(
                    Problem(
                        OWN_BOOTSTRAP,
                        "this userData runs nodeadm init itself, and nodeadm runs again with the NodeConfig Karpenter "
                        "appends, so the node is initialised twice with different settings",
                        "remove the nodeadm call and give settings as a NodeConfig part; or bootstrap yourself with "
                        "amiFamily: Custom",
                    )
                )
        else:
            problems.extend(nodeconfig.review(configs, managed=True))
    return problems


def _legacy_bootstrap(script: str) -> list[Problem]:
    if not _LEGACY.search(script):
        return []
    call = next((c for c in bootstrap.invocations(script) if c.via_bootstrap and c.kubelet_args), None)
    if call is None:
        hint = "put kubelet settings in a NodeConfig part (spec.kubelet.config / spec.kubelet.flags)"
    else:
        flags = taints.with_taints(call.kubelet_args, ())
        config = nodeconfig.snippet(tuple(t.repaired() for t in call.taints), tuple(flags))
        hint = f"replace the bootstrap.sh call with a NodeConfig part (Content-Type: {mime.NODECONFIG}):\n{config}"
    return [
        Problem(
            AL2023_BOOTSTRAP,
            "AL2023 nodes boot with nodeadm: there is no /etc/eks/bootstrap.sh and --kubelet-extra-args is not read, "
            "so the kubelet flags (and taints) in this script never reach the kubelet",
            hint,
        )
    ]


def render(text: str, release: versions.Release) -> str | None:
    """Karpenter's merge (``Nodeadm.Script``): the user's parts, each with its Content-Type alone, then its
    own NodeConfig; None when its reader refuses the MIME (``userdata/mime`` says why). Plain text that
    reads as a YAML map is a NodeConfig part, anything else a script part; text this reader cannot
    parse gets the shorter NodeConfig type, so the rendering stays a lower bound. The NodeConfig
    carries no kubelet settings of spec.kubelet and no cluster CIDR (unknown offline): only more bytes."""
    if text and mime.is_mime(text):
        try:
            found = go_multipart.karpenter_read(text)
        except go_multipart.GoError:
            return None
        parts = [(part.content_type, part.body) for part in found]
    elif text:
        try:
            plain = yaml_reader.document(text, unique_keys=False)
        except yaml_reader.YAMLError:
            plain = None
        parts = [(mime.NODECONFIG if plain is None or isinstance(plain, dict) else rendered.SHELL_SCRIPT, text)]
    else:
        parts = []
    key, effect = rendered.REGISTRATION_TAINT
    labels = rendered.node_label_flag(rendered.validation_labels(release))
    config = (
        "# Karpenter Generated NodeConfig\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nmetadata: {}\n"
        "spec:\n  cluster: {}\n  containerd: {}\n  instance:\n    localStorage: {}\n  kubelet:\n    config:\n"
        f"      registerWithTaints:\n      - effect: {effect}\n        key: {key}\n"
        + (f"    flags:\n    - {labels}\n" if labels else "")
    )
    return rendered.mime_archive((((("Content-Type", kind),), body) for kind, body in [*parts, (mime.NODECONFIG, config)]))


# --- the family ---------------------------------------------------------------------------------


def parameters(alias: Alias, k: str, release: versions.Release) -> tuple[AliasParameter, ...]:
    variants = [("x86_64", "standard"), ("x86_64", "nvidia"), ("x86_64", "neuron"), ("arm64", "standard")]
    if release >= (1, 4):
        variants.append(("arm64", "nvidia"))

    def path(arch: str, variant: str) -> str:
        leaf = "recommended" if alias.version == LATEST else f"amazon-eks-node-al2023-{arch}-{variant}-{k}-{alias.version}"
        return f"/aws/service/eks/optimized-ami/{k}/amazon-linux-2023/{arch}/{variant}/{leaf}/image_id"

    return tuple(AliasParameter(path(arch, variant), (VARIANTS[variant],)) for arch, variant in variants)


FAMILY = Family(
    "AL2023",
    image_name=re.compile(r"^amazon-eks-node-al2023-[a-z0-9_]+-[a-z]+-(?P<k8s>\d+\.\d+)-v\d{8}"),
    alias="al2023",
    version_format=re.compile(r"^v\d{8}\Z"),
    version_example="al2023@v20240807",
    parameters=parameters,
    check_userdata=check,
    unsupported_types=("a1.",),  # Karpenter's FilterForNodeClass: AL2023 does not boot on A1
    arbitrary_kubelet=True,  # nodeadm's NodeConfig takes the whole KubeletConfiguration
    render_userdata=render,
)
