"""NodeConfig documents: what nodeadm reads on AL2023, and the taints they register.

Karpenter keeps MIME parts as they are; a part of type ``application/node.eks.aws`` (or plain
userData that loads as a YAML map) is a NodeConfig. AL2023 reads them under Karpenter's own
NodeConfig; a Custom image reads only what the userData holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from karpenter_gitops.core import yaml_reader
from karpenter_gitops.karpenter.amifamily.userdata import mime, taints
from karpenter_gitops.karpenter.amifamily.userdata.problems import NODECONFIG, REGISTER_TAINTS_FLAG, Problem

API_VERSION = "node.eks.aws/v1alpha1"
KIND = "NodeConfig"
_ENTRY = "write each entry as {key: example.com/dedicated, value: gpu, effect: NoSchedule}"


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
            problems.append(
                Problem(
                    NODECONFIG,
                    f"a NodeConfig part declares apiVersion {document.get('apiVersion')!r} and kind "
                    f"{document.get('kind')!r}; nodeadm reads apiVersion {API_VERSION}, kind {KIND}",
                    header,
                )
            )
        if managed and _register_flag(document):
            problems.append(
                Problem(
                    REGISTER_TAINTS_FLAG,
                    "spec.kubelet.flags sets --register-with-taints, which overrides the registerWithTaints Karpenter "
                    "writes into the kubelet config: the node registers without the NodePool's taints and without "
                    "karpenter.sh/unregistered:NoExecute",
                    "remove --register-with-taints from the flags and declare the taints in the NodePool's "
                    "spec.template.spec.taints (or startupTaints)",
                )
            )
        found, malformed = taints_of(document)
        problems.extend(
            Problem(NODECONFIG, f"registerWithTaints entry {entry!r} is not a mapping with a key", _ENTRY) for entry in malformed
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
    return tuple(t for t in parsed if t is not None) + from_flags, [e for e, t in zip(entries, parsed, strict=True) if t is None]


def snippet(found: tuple[taints.Taint, ...], flags: tuple[str, ...] = ()) -> str:
    """A NodeConfig fragment registering ``found`` (and setting other kubelet ``flags``)."""
    kubelet: dict[str, Any] = {}
    if found:
        kubelet["config"] = {"registerWithTaints": [t.as_dict() for t in found]}
    if flags:
        kubelet["flags"] = list(flags)
    body = yaml.safe_dump({"spec": {"kubelet": kubelet}}, sort_keys=False, default_flow_style=False)
    return f"apiVersion: {API_VERSION}\nkind: {KIND}\n{body.rstrip()}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
