"""Helpers for the rule tests: validate patched base objects, read CEL messages from the real CRDs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import yaml

from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch
from support.upstream import crds

# The releases the rule tests read CRD messages of, as (major, minor) -> tag.
RELEASES = {(1, 0): "v1.0.14", (1, 4): "v1.4.4", (1, 8): "v1.8.8", (1, 14): "v1.14.1"}


def findings(*docs: Mapping[str, Any], release=(1, 14)) -> list:
    """All findings for ``docs`` validated together at ``version``."""
    inputs = load_documents([("x.yaml", [dict(d) for d in docs])], release)
    return list(validate(inputs, release).findings)


def node_class(patch: Mapping[str, Any] | None = None) -> dict:
    return merge_patch(BASE_NODECLASS, patch or {})


def node_pool(patch: Mapping[str, Any] | None = None) -> dict:
    return merge_patch(BASE_NODEPOOL, patch or {})


def requirements(*items: Mapping[str, Any]) -> dict:
    """A NodePool patch that replaces the requirements."""
    return {"spec": {"template": {"spec": {"requirements": list(items)}}}}


def fired(found: list, rule_id: str) -> list[tuple[str, str]]:
    """(path, message) of the findings of one rule."""
    return [(f.path, f.message) for f in found if f.rule == rule_id]


def _validations(node: Any) -> Iterator[dict]:
    if isinstance(node, Mapping):
        yield from node.get("x-kubernetes-validations") or ()
        for value in node.values():
            yield from _validations(value)
    elif isinstance(node, list):
        for value in node:
            yield from _validations(value)


@cache
def crd_messages(release: str, crd: str) -> frozenset[str]:
    """Messages of every CEL rule of a CRD that can be evaluated offline (no ``oldSelf``)."""
    data = yaml.safe_load((crds(release) / crd).read_text(encoding="utf-8"))
    schema = next(v for v in data["spec"]["versions"] if v["name"] == "v1")["schema"]
    return frozenset(v["message"] for v in _validations(schema) if "oldSelf" not in v["rule"])


def stack_with(tmp_path, cluster: str) -> str:
    """A stack file whose class sets a kubelet expression (1.15, behind NodeClassCEL), under the ``cluster`` block given."""
    path = tmp_path / "Pulumi.gated.yaml"
    path.write_text(
        f"config:\n  karpenter-gitops:cluster: {cluster}\n  karpenter-gitops:nodeClasses:\n    default:\n"
        "      amiSelectorTerms: [{alias: al2023@latest}]\n      role: R\n"
        "      subnetSelectorTerms: [{id: subnet-1}]\n      securityGroupSelectorTerms: [{id: sg-1}]\n"
        "      kubelet: {maxPods: 'min(max_pods, 110)'}\n"
    )
    return str(path)
