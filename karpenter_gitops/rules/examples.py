"""Good and bad examples of rules, as JSON merge patches (RFC 7386) onto valid base objects.

An example patches the base EC2NodeClass, or the base NodePool when it says ``kind: NodePool``
(or the rule judges only NodePools). Some keys steer the harness instead of patching:
``karpenterVersion`` picks the release to validate against, and ``duplicate: true`` adds the
object twice; ``controller`` adds a stack file holding that controller block (cluster ``demo``);
``stack: true`` declares the objects in a stack file (one whole cluster) instead of manifests, and
``featureGates`` does too, with those gates in its cluster block.
The other base object is always present, so cross-object rules resolve.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import json_merge_patch

from karpenter_gitops.core import versions
from karpenter_gitops.core.model import NAMESPACED, STACK_KEY
from karpenter_gitops.rules.registry import Rule

BASE_NODECLASS: Mapping[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "default"},
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@v20240807"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    },
}
BASE_NODEPOOL: Mapping[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "general"},
    "spec": {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}],
                "expireAfter": "720h",
            }
        },
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m"},
        "limits": {"cpu": "1000", "memory": "1000Gi"},
    },
}
BASE_NODEOVERLAY: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1alpha1",
    "kind": "NodeOverlay",
    "metadata": {"name": "gpu-discount"},
    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]}]},
}
BASE_CAPACITYBUFFER: dict[str, Any] = {
    "apiVersion": "autoscaling.x-k8s.io/v1beta1",
    "kind": "CapacityBuffer",
    "metadata": {"name": "spare", "namespace": "default"},
    "spec": {"podTemplateRef": {"name": "spare-pod"}, "replicas": 2},
}
_CONTROL_KEYS = ("karpenterVersion", "duplicate", "controller", "stack", "featureGates", "also")


def merge_patch(target: Any, patch: Any) -> Any:
    """``patch`` applied to ``target`` by RFC 7386 (mappings merge, ``None`` deletes, anything else replaces),
    neither of them changed: json-merge-patch writes into its first argument and keeps the patch's values,
    so it is given copies of both."""
    return json_merge_patch.merge(copy.deepcopy(target), copy.deepcopy(patch))


Files = list[tuple[str, list[Any]]]


_BASES = {
    "EC2NodeClass": BASE_NODECLASS,
    "NodePool": BASE_NODEPOOL,
    "NodeOverlay": BASE_NODEOVERLAY,
    "CapacityBuffer": BASE_CAPACITYBUFFER,
}


def example_documents(rule: Rule, example: Mapping[str, Any]) -> tuple[Files, versions.Release]:
    """The files (name, YAML documents) and the release an example of ``rule`` is judged with."""
    kind = example.get("kind") or (next(iter(rule.kinds)) if len(rule.kinds) == 1 else "EC2NodeClass")
    base, other = {
        "NodePool": (BASE_NODEPOOL, BASE_NODECLASS),
        "NodeOverlay": (BASE_NODEOVERLAY, BASE_NODEPOOL),
        "CapacityBuffer": (BASE_CAPACITYBUFFER, BASE_NODEPOOL),
    }.get(kind, (BASE_NODECLASS, BASE_NODEPOOL))
    patch = {k: v for k, v in example.items() if k not in _CONTROL_KEYS}
    doc = merge_patch(base, patch)
    docs = [doc, doc] if example.get("duplicate") else [doc]
    release = versions.parse(example.get("karpenterVersion", versions.show(versions.DEFAULT)))
    # ``also``: more objects beside it, each a patch of its kind's base (a rule about two overlays needs both)
    docs = docs + [copy.deepcopy(other)] + [merge_patch(_BASES[extra["kind"]], extra) for extra in example.get("also", ())]
    in_stack = example.get("stack") or "featureGates" in example
    files = (
        [("stack.yaml", [{"config": _stack_config(docs, example.get("featureGates"))}])] if in_stack else [("example.yaml", docs)]
    )
    if "controller" in example:
        stack = {"karpenter-gitops:cluster": {"name": "demo"}, "karpenter-gitops:controller": example["controller"]}
        files.append(("controller-stack.yaml", [{"config": stack}]))
    return files, release


def _stack_config(docs: list[Mapping[str, Any]], gates: Mapping[str, bool] | None) -> dict[str, Any]:
    """The objects of ``docs`` as a stack file declares them: specs by name (``namespace/name`` for a
    namespaced kind) under the stack keys; ``gates``, the cluster block's feature gates."""
    config: dict[str, Any] = {"karpenter-gitops:cluster": {"name": "demo", **({"featureGates": dict(gates)} if gates else {})}}
    for doc in docs:
        metadata = doc["metadata"]
        name = (
            f"{metadata['namespace']}/{metadata['name']}"
            if doc["kind"] in NAMESPACED and metadata.get("namespace")
            else metadata["name"]
        )
        config.setdefault(f"karpenter-gitops:{STACK_KEY[doc['kind']]}", {})[name] = doc["spec"]
    return config
