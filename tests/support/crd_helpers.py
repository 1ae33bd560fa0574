"""Helpers shared by the CRD tests: each release's CRDs, and both sides' error verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.versions import Release
from karpenter_gitops.judge import Judge
from karpenter_gitops.load.crds import load as load_crds
from karpenter_gitops.rules import crd
from karpenter_gitops.rules.crd import engine as crd_engine
from support.rule_helpers import findings, node_class, node_pool
from support.upstream import crds

# Our rules that are stricter than Karpenter on purpose; the rest mirror the CRD.
STRICTER = ("nodeclass/", "nodepool/", "userdata/", "kubelet/")  # kubelet/: Karpenter's checks from 1.15, not the CRD's


@cache
def release_crds(release: str) -> crd_engine.Crds:
    return load_crds([crds(release)])


def judged(outcome: crd_engine.Outcome) -> list[Finding]:
    """The findings the CRD's observations make, judged as the CLI judges them."""
    return Judge().findings(outcome.observations)


def our_findings(doc: Mapping[str, Any], release: Release) -> tuple[Finding, ...]:
    """Our findings on ``doc``; the other base object is present for cross-object rules."""
    other = node_pool() if doc["kind"] == "EC2NodeClass" else node_class()
    return tuple(f for f in findings(doc, other, release=release) if f.kind == doc["kind"])


def mirror_errors(doc: Mapping[str, Any], release: Release) -> tuple[Finding, ...]:
    """Our error findings from the rules that mirror the CRD (``schema/...``, ``cel/...``)."""
    return tuple(f for f in our_findings(doc, release) if f.severity is Severity.ERROR and not f.rule.startswith(STRICTER))


def crd_errors(doc: Mapping[str, Any], release: str) -> tuple[Finding, ...]:
    """The release CRD's error findings; a rule the engine could not run fails the test."""
    found = judged(release_crds(release).check(doc))
    engine = [f for f in found if f.rule == crd.ENGINE]
    assert not engine, f"the CEL engine could not judge {doc}: {engine}"
    return tuple(f for f in found if f.severity is Severity.ERROR)


def crd_document(spec: Mapping[str, Any], *, group: str = "karpenter.sh", kind: str = "NodePool", version: str = "v1") -> dict:
    """A CRD of ``kind`` whose objects' ``spec`` has the schema ``spec`` (for CEL rules, any field kept)."""
    properties = {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "spec": spec}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.lower()}s.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind},
            "versions": [
                {"name": version, "served": True, "schema": {"openAPIV3Schema": {"type": "object", "properties": properties}}}
            ],
        },
    }
