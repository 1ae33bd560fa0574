"""Amazon Linux 2023: nodeadm reads NodeConfig documents; there is no bootstrap.sh.

Karpenter keeps MIME parts as they are (custom parts first, its own NodeConfig last); plain
userData that loads as a YAML map becomes a NodeConfig part, anything else a shell-script part.
Taints reach the node through ``spec.kubelet.config.registerWithTaints``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from karpenter_gitops.core import versions, yaml_reader
from karpenter_gitops.families import al2
from karpenter_gitops.families.protocol import (
    LATEST,
    VARIANTS,
    Alias,
    AliasParameter,
    Family,
)
from karpenter_gitops.families.userdata import common, mime, taints
from karpenter_gitops.families.userdata.problems import (
    AL2023_BOOTSTRAP,
    NODECONFIG,
    OWN_BOOTSTRAP,
    REGISTER_TAINTS_FLAG,
    Problem,
)

API_VERSION = "node.eks.aws/v1alpha1"
KIND = "NodeConfig"
_ENTRY = "write each entry as {key: example.com/dedicated, value: gpu, effect: NoSchedule}"
_LEGACY = re.compile(r"^[^#\n]*(bootstrap\.sh|--kubelet-extra-args)", re.MULTILINE)
_NODEADM_INIT = re.compile(r"^[^#\n]*\bnodeadm\s+init\b", re.MULTILINE)


@dataclass(frozen=True)
class NodeConfigs:
    """The YAML documents of one NodeConfig part, or why they do not load."""

    documents: tuple[Any, ...]
    error: str | None = None


def node_configs(part: mime.Part) -> NodeConfigs | None:
    """The NodeConfig documents of a part; None when the part is a script (or other content)."""
    if part.content_type == mime.NODECONFIG:
        try:
            return NodeConfigs(tuple(d for d in yaml_reader.documents(part.body, unique_keys=False) if d is not None))
        except yaml_reader.YAMLError as err:
            problem, line = yaml_reader.problem(err)
            return NodeConfigs((), problem + (f" (line {line} of the part)" if line else ""))
    if part.content_type is None and not part.body.lstrip().startswith("#!"):
        try:
            document = yaml_reader.document(part.body, unique_keys=False)
        except yaml_reader.YAMLError:
            return None
        return NodeConfigs((document,)) if isinstance(document, Mapping) else None
    return None


def check(text: str) -> list[Problem]:
    archive = mime.read(text)
    problems = mime.karpenter_problems(text, "AL2023") + common.bottlerocket_settings_elsewhere(text, "AL2023")
    for part in archive.parts:
        configs = node_configs(part)
        if configs is None:
            problems.extend(_legacy_bootstrap(part.body))
            if _NODEADM_INIT.search(part.body):
                problems.append(Problem(
                    OWN_BOOTSTRAP,
                    "this userData runs nodeadm init itself, and nodeadm runs again with the NodeConfig Karpenter "
                    "appends, so the node is initialised twice with different settings",
                    "remove the nodeadm call and give settings as a NodeConfig part; or bootstrap yourself with "
                    "amiFamily: Custom",
                ))
        else:
            problems.extend(review(configs, managed=True))
    return problems


def review(configs: NodeConfigs, *, managed: bool) -> list[Problem]:
    """Problems of one NodeConfig part: YAML that does not load, the wrong kind, invalid taints."""
    if configs.error:
        return [Problem(NODECONFIG, f"the NodeConfig part is not valid YAML: {configs.error}", "fix the YAML syntax")]
    problems = []
    header = f"apiVersion: {API_VERSION}\nkind: {KIND}"
    for document in configs.documents:
        if not isinstance(document, Mapping):
            problems.append(Problem(NODECONFIG, "a NodeConfig part holds a YAML document that is no mapping", header))
            continue
        if document.get("apiVersion") != API_VERSION or document.get("kind") != KIND:
            problems.append(Problem(
                NODECONFIG,
                f"a NodeConfig part declares apiVersion {document.get('apiVersion')!r} and kind "
                f"{document.get('kind')!r}; nodeadm reads apiVersion {API_VERSION}, kind {KIND}",
                header,
            ))
        if managed and _register_flag(document):
            problems.append(Problem(
                REGISTER_TAINTS_FLAG,
                "spec.kubelet.flags sets --register-with-taints, which overrides the registerWithTaints Karpenter "
                "writes into the kubelet config: the node registers without the NodePool's taints and without "
                "karpenter.sh/unregistered:NoExecute",
                "remove --register-with-taints from the flags and declare the taints in the NodePool's "
                "spec.template.spec.taints (or startupTaints)",
            ))
        found, malformed = taints_of(document)
        problems.extend(
            Problem(NODECONFIG, f"registerWithTaints entry {entry!r} is not a mapping with a key", _ENTRY)
            for entry in malformed
        )
        problems.extend(taints.review(found, managed=managed, hint=snippet(tuple(t.repaired() for t in found))))
    return problems


def _register_flag(document: Mapping[str, Any]) -> bool:
    flags = _mapping(_mapping(document.get("spec")).get("kubelet")).get("flags")
    return isinstance(flags, list) and any(str(flag).split("=", 1)[0].strip() == taints.FLAG for flag in flags)


def taints_of(document: Mapping[str, Any]) -> tuple[tuple[taints.Taint, ...], list[Any]]:
    """The taints a NodeConfig registers (registerWithTaints and kubelet flags), and entries that are no taint."""
    kubelet = _mapping(_mapping(document.get("spec")).get("kubelet"))
    entries = _mapping(kubelet.get("config")).get("registerWithTaints")
    entries = entries if isinstance(entries, list) else []
    parsed = [taints.from_mapping(e) for e in entries]
    flags = kubelet.get("flags")
    from_flags = taints.from_kubelet_args([str(f) for f in flags]) if isinstance(flags, list) else ()
    return tuple(t for t in parsed if t is not None) + from_flags, [e for e, t in zip(entries, parsed) if t is None]


def snippet(found: tuple[taints.Taint, ...], flags: tuple[str, ...] = ()) -> str:
    """A NodeConfig fragment registering ``found`` (and setting other kubelet ``flags``)."""
    kubelet: dict[str, Any] = {}
    if found:
        kubelet["config"] = {"registerWithTaints": [t.as_dict() for t in found]}
    if flags:
        kubelet["flags"] = list(flags)
    body = yaml.safe_dump({"spec": {"kubelet": kubelet}}, sort_keys=False, default_flow_style=False)
    return f"apiVersion: {API_VERSION}\nkind: {KIND}\n{body.rstrip()}"


def _legacy_bootstrap(script: str) -> list[Problem]:
    if not _LEGACY.search(script):
        return []
    call = next((c for c in al2.invocations(script) if c.via_bootstrap and c.kubelet_args), None)
    if call is None:
        hint = "put kubelet settings in a NodeConfig part (spec.kubelet.config / spec.kubelet.flags)"
    else:
        flags = taints.with_taints(call.kubelet_args, ())
        config = snippet(tuple(t.repaired() for t in call.taints), tuple(flags))
        hint = f"replace the bootstrap.sh call with a NodeConfig part (Content-Type: {mime.NODECONFIG}):\n{config}"
    return [Problem(
        AL2023_BOOTSTRAP,
        "AL2023 nodes boot with nodeadm: there is no /etc/eks/bootstrap.sh and --kubelet-extra-args is not read, "
        "so the kubelet flags (and taints) in this script never reach the kubelet",
        hint,
    )]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


# --- the family ---------------------------------------------------------------------------------


def parameters(alias: Alias, k: str, karpenter_version: versions.Version) -> tuple[AliasParameter, ...]:
    variants = [("x86_64", "standard"), ("x86_64", "nvidia"), ("x86_64", "neuron"), ("arm64", "standard")]
    if karpenter_version >= (1, 4):
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
)
