"""Our built-in rules and the real v1.14.1 CRDs accept and reject the same manifests.

Hypothesis varies the base objects of :mod:`karpenter_gitops.rules.examples` around the fields
the CRD constrains. Our side counts only error findings of the rules that mirror the CRD
(``schema/...`` and ``cel/...``), never warnings. Where our rules (``nodeclass/``, ``nodepool/``,
``userdata/``) are stricter on purpose, :data:`DELIBERATE` lists the difference with its reason and
a manifest the CRD accepts but they reject (or, for warnings, flag without rejecting).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from support.crd_helpers import STRICTER, crd_errors, mirror_errors, our_findings
from support.crd_strategies import NODECLASS_SPEC, NODEPOOL_SPEC
from support.rule_helpers import node_class, node_pool

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Finding, Severity

RELEASE = "v1.14.1"
VERSION = versions.parse(RELEASE)
PARITY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Verdicts:
    doc: Mapping[str, Any]
    ours: tuple[Finding, ...]  # error findings of the mirroring rules
    theirs: tuple[Finding, ...]  # the CRD's error findings

    def explain(self) -> str:
        return (
            f"built-in rules and the {RELEASE} CRD disagree on\n{yaml.safe_dump(dict(self.doc), sort_keys=False)}"
            f"ours:\n{_listed(self.ours)}\nCRD:\n{_listed(self.theirs)}"
        )


def _listed(findings: tuple[Finding, ...]) -> str:
    return "\n".join(f"  {f.rule} {f.path}: {f.message}" for f in findings) or "  (none)"


def judge(doc: Mapping[str, Any]) -> Verdicts:
    """Both judgements of one manifest, leaving out our deliberately stricter rules."""
    return Verdicts(doc, mirror_errors(doc, VERSION), crd_errors(doc, RELEASE))


def assert_same_verdict(doc: Mapping[str, Any]) -> None:
    verdicts = judge(doc)
    assert bool(verdicts.ours) == bool(verdicts.theirs), verdicts.explain()


# --- deliberate differences ---------------------------------------------------------------


@dataclass(frozen=True)
class Difference:
    what: str
    reason: str
    patch: Mapping[str, Any]  # onto the base EC2NodeClass, or the base NodePool with kind: NodePool
    ours: Severity = Severity.ERROR  # a warning flags the manifest but does not reject it


DELIBERATE = (
    Difference(
        "block device mapping without ebs",
        "the CRD accepts it; Karpenter's controller panics on it (seen on 1.14.1 by tests/real/test_karpenter_controller.py)",
        {"spec": {"blockDeviceMappings": [{"deviceName": "/dev/xvdb"}]}},
    ),
    Difference(
        "per-term selector mutual exclusion",
        "the CRD's !self.all(...) rejects 'id' with other fields only when every term does so",
        {"spec": {"subnetSelectorTerms": [{"id": "subnet-0abc", "tags": {"a": "b"}}, {"tags": {"a": "b"}}]}},
        ours=Severity.WARNING,
    ),
    Difference(
        "role given as an ARN",
        "the CRD takes any non-empty string; since 1.2 Karpenter uses the name, but keeps re-creating the profile",
        {"spec": {"role": "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"}},
        ours=Severity.WARNING,
    ),
    Difference(
        "instanceProfile given as an ARN",
        "the CRD takes any non-empty string; EC2 needs the instance profile name",
        {"spec": {"role": None, "instanceProfile": "arn:aws:iam::123456789012:instance-profile/KarpenterNodes"}},
    ),
    Difference(
        "ssmParameter mixed with other fields in a term",
        "the CRD has no rule for it; at run time only ssmParameter counts and the other fields are ignored",
        {"spec": {"amiFamily": "AL2023", "amiSelectorTerms": [{"ssmParameter": "/my/ami", "name": "my-ami"}]}},
        ours=Severity.WARNING,
    ),
    Difference(
        "requirement on an unknown key in a Kubernetes label domain",
        "the CRD accepts any valid label key; a likely typo of a well-known label narrows no instance types",
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "node.kubernetes.io/instance-family", "operator": "In", "values": ["m5"]}]}
                }
            },
        },
        ours=Severity.WARNING,
    ),
    Difference(
        "nodeClassRef to an EC2NodeClass that is not among the manifests",
        "the CRD cannot see other objects; without --context the class may be defined elsewhere, so it is noted",
        {"kind": "NodePool", "spec": {"template": {"spec": {"nodeClassRef": {"name": "missing"}}}}},
        ours=Severity.INFO,
    ),
    Difference(
        "taint reserved by Kubernetes or Karpenter",
        "the CRD accepts any taint key; reserved ones are managed by the node lifecycle and break it",
        {
            "kind": "NodePool",
            "spec": {"template": {"spec": {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]}}},
        },
    ),
    Difference(
        "userData the AMI family cannot use",
        "the CRD takes any string; Bottlerocket merges userData as TOML and fails on anything else",
        {"spec": {"amiSelectorTerms": [{"alias": "bottlerocket@v1.32.0"}], "userData": "#!/bin/bash\necho hi"}},
    ),
)


def manifest(patch: Mapping[str, Any]) -> dict[str, Any]:
    return node_pool(patch) if patch.get("kind") == "NodePool" else node_class(patch)


@pytest.mark.parametrize("difference", DELIBERATE, ids=lambda d: d.what)
def test_deliberate_difference_is_ours_alone(difference):
    doc = manifest(difference.patch)
    verdicts = judge(doc)
    assert not verdicts.ours and not verdicts.theirs, f"not ours alone: {verdicts.explain()}"
    stricter = {f.severity for f in our_findings(doc, VERSION) if f.rule.startswith(STRICTER)}
    assert difference.ours in stricter, f"no stricter rule reports {difference.what} as {difference.ours.value}"


# --- generated manifests (strategies in tests/support/crd_strategies.py) --------------------------------


@PARITY
@given(NODECLASS_SPEC)
@example({"amiSelectorTerms": [{"alias": "windows2019"}]})  # the CRD's split('@')[1] fails: rejected
@example({"kubelet": {"evictionSoftGracePeriod": {"memory.available": "1m"}}})  # self.evictionSoft fails
@example({"subnetSelectorTerms": [{"id": "subnet-0abc", "tags": {"a": "b"}}, {"tags": {"a": "b"}}]})  # !self.all
def test_ec2nodeclass_verdicts_match_the_crd(spec):
    assert_same_verdict(manifest({"spec": spec}))


@PARITY
@given(NODEPOOL_SPEC)
@example({"disruption": {"budgets": [{"schedule": "@daily", "duration": "8h"}]}})  # nodes defaults to 10%
@example({"disruption": {"budgets": [{"nodes": "10%", "reasons": ["Empty", "Empty"]}]}})  # reasons is a set
@example({"template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In"}]}}})  # no values
def test_nodepool_verdicts_match_the_crd(spec):
    assert_same_verdict(manifest({"kind": "NodePool", "spec": spec}))
