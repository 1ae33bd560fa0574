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
from _crd_helpers import STRICTER, crd_errors, mirror_errors, our_findings
from _rule_helpers import node_class, node_pool
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

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
        "per-term selector mutual exclusion",
        "the CRD's !self.all(...) rejects 'id' with other fields only when every term does so",
        {"spec": {"subnetSelectorTerms": [{"id": "subnet-0abc", "tags": {"a": "b"}}, {"tags": {"a": "b"}}]}},
    ),
    Difference(
        "role given as an ARN",
        "the CRD takes any non-empty string; Karpenter needs the role name",
        {"spec": {"role": "arn:aws:iam::123456789012:role/KarpenterNodeRole-demo"}},
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
    ),
    Difference(
        "alias pinned to @latest",
        "the CRD accepts it; every new AMI release then drifts and replaces the nodes",
        {"spec": {"amiSelectorTerms": [{"alias": "al2023@latest"}]}},
        ours=Severity.WARNING,
    ),
    Difference(
        "requirement on an unknown key in a Kubernetes label domain",
        "the CRD accepts any valid label key; a likely typo of a well-known label narrows no instance types",
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "node.kubernetes.io/instance-family", "operator": "In", "values": ["m5"]}]
                    }
                }
            },
        },
        ours=Severity.WARNING,
    ),
    Difference(
        "nodeClassRef to an EC2NodeClass that is not defined",
        "the CRD cannot see other objects; Karpenter leaves the NodePool not ready",
        {"kind": "NodePool", "spec": {"template": {"spec": {"nodeClassRef": {"name": "missing"}}}}},
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


# --- generated manifests ------------------------------------------------------------------


def few_of(fields: Mapping[str, st.SearchStrategy]) -> st.SearchStrategy[dict[str, Any]]:
    """A spec patch setting up to three of ``fields`` (dotted paths), so most examples carry at
    most one fault and the verdicts stay near the boundary where rule sets can differ."""
    names = st.lists(st.sampled_from(sorted(fields)), max_size=3, unique=True)
    return names.flatmap(lambda chosen: st.fixed_dictionaries({name: fields[name] for name in chosen})).map(nest)


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``."""
    out: dict[str, Any] = {}
    for dotted, value in flat.items():
        *parents, leaf = dotted.split(".")
        node = out
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return out


SELECTOR_TAGS = st.sampled_from([{"karpenter.sh/discovery": "demo"}, {"team": "*"}, {"": "x"}, {"team": ""}])
FAMILIES = ["al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025", "AL2023", "ubuntu", ""]
ALIASES = st.one_of(
    st.builds("{}@{}".format, st.sampled_from(FAMILIES), st.sampled_from(["latest", "v20240807", "v1.32.0", "", "x@y"])),
    st.sampled_from(["al2023", "bottlerocket@v1.32.0-aaaaaaaaaaaaaaa", "al2023 @latest"]),
)
AMI_TERM = st.fixed_dictionaries(
    {},
    optional={
        "alias": ALIASES,
        "tags": SELECTOR_TAGS,
        "id": st.sampled_from(["ami-0123abcd", "bogus"]),
        "name": st.just("my-ami-*"),
        "owner": st.sampled_from(["amazon", "self"]),
        "ssmParameter": st.just("/aws/service/eks/optimized-ami/al2023/x86_64/standard/recommended/image_id"),
    },
)
SUBNET_TERM = st.fixed_dictionaries(
    {}, optional={"tags": SELECTOR_TAGS, "id": st.sampled_from(["subnet-0abc", "bogus"])}
)
SECURITY_GROUP_TERM = st.fixed_dictionaries(
    {}, optional={"tags": SELECTOR_TAGS, "id": st.sampled_from(["sg-0abc", "bogus"]), "name": st.just("web")}
)
TAG_KEYS = [
    "team",
    "",
    "eks:eks-cluster-name",
    "kubernetes.io/cluster/demo",
    "kubernetes.io/clusterwide",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.sh/managed-by",
    "karpenter.k8s.aws/ec2nodeclass",
]
EVICTION_SIGNALS = ["memory.available", "nodefs.available", "imagefs.inodesFree", "pid.available", "cpu.available"]
EBS = st.fixed_dictionaries(
    {},
    optional={
        "volumeSize": st.sampled_from(["20Gi", "100GiB", "64T", "65T", "59000Gi"]),
        "snapshotID": st.just("snap-0123abcd"),
        "volumeType": st.sampled_from(["gp3", "gp4"]),
        "encrypted": st.booleans(),
    },
)
BLOCK_DEVICE = st.fixed_dictionaries(
    {"deviceName": st.sampled_from(["/dev/xvda", "/dev/xvdb"])}, optional={"rootVolume": st.booleans(), "ebs": EBS}
)
SIGNALS = st.dictionaries(st.sampled_from(EVICTION_SIGNALS), st.sampled_from(["5%", "100Mi", "abc"]), max_size=2)
NODECLASS_SPEC = few_of(
    {
        "amiSelectorTerms": st.lists(AMI_TERM, max_size=3),
        "amiFamily": st.sampled_from(
            ["AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2025", "Ubuntu"]
        ),
        "role": st.sampled_from([None, "", "KarpenterNodeRole-demo"]),  # None deletes the base role
        "instanceProfile": st.sampled_from(["", "KarpenterNodeProfile"]),
        "subnetSelectorTerms": st.lists(SUBNET_TERM, max_size=2),
        "securityGroupSelectorTerms": st.lists(SECURITY_GROUP_TERM, max_size=2),
        "tags": st.dictionaries(st.sampled_from(TAG_KEYS), st.sampled_from(["x", ""]), max_size=2),
        "blockDeviceMappings": st.lists(BLOCK_DEVICE, max_size=2),
        "kubelet.imageGCHighThresholdPercent": st.integers(-1, 101),
        "kubelet.imageGCLowThresholdPercent": st.integers(-1, 101),
        "kubelet.evictionHard": SIGNALS,
        "kubelet.evictionSoft": SIGNALS,
        "kubelet.evictionSoftGracePeriod": st.dictionaries(
            st.sampled_from(EVICTION_SIGNALS), st.just("1m"), max_size=2
        ),
        "kubelet.kubeReserved": st.dictionaries(
            st.sampled_from(["cpu", "memory", "gpu"]), st.sampled_from(["100m", "-1", "1Gi"]), max_size=2
        ),
        "kubelet.maxPods": st.integers(-1, 300),
        "metadataOptions.httpPutResponseHopLimit": st.integers(0, 65),
        "metadataOptions.httpTokens": st.sampled_from(["required", "maybe"]),
    }
)

LABEL_KEYS = [
    "team",
    "karpenter.sh/capacity-type",
    "karpenter.sh/nodepool",
    "karpenter.sh/custom",
    "kubernetes.io/hostname",
    "kubernetes.io/arch",
    "node.kubernetes.io/instance-type",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/custom",
    "topology.kubernetes.io/zone",
    "Bad Key",
]
REQUIREMENT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(LABEL_KEYS),
        "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte", "Near"]),
    },
    optional={
        "values": st.lists(st.sampled_from(["1", "0", "-1", "1_0", "abc", "on-demand", "spot", ""]), max_size=3),
        "minValues": st.integers(0, 51),
    },
)
TAINT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["example.com/dedicated", "", "bad key"]),
        "effect": st.sampled_from(["NoSchedule", "Sometimes"]),
    },
    optional={"value": st.sampled_from(["gpu", "bad value"])},
)
BUDGET = st.fixed_dictionaries(
    {},
    optional={
        "nodes": st.sampled_from(["10%", "5", "101%", "abc"]),
        "schedule": st.sampled_from(["@daily", "0 9 * * mon-fri", "daily"]),
        "duration": st.sampled_from(["8h", "1h30m", "1d"]),
        "reasons": st.lists(st.sampled_from(["Underutilized", "Empty", "Drifted", "Expired"]), max_size=2),
    },
)
NODEPOOL_SPEC = few_of(
    {
        "template.metadata.labels": st.dictionaries(
            st.sampled_from(LABEL_KEYS), st.sampled_from(["a", "", "bad value"]), max_size=2
        ),
        "template.spec.requirements": st.lists(REQUIREMENT, max_size=3),
        "template.spec.taints": st.lists(TAINT, max_size=2),
        "template.spec.expireAfter": st.sampled_from(["720h", "Never", "30d"]),
        "disruption.consolidationPolicy": st.sampled_from(
            ["WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced", "WhenUnderutilized"]
        ),
        "disruption.consolidateAfter": st.sampled_from([None, "1m", "Never", "1d"]),  # None deletes it
        "disruption.budgets": st.lists(BUDGET, max_size=2),
        "weight": st.integers(-1, 101),
        "replicas": st.integers(-1, 3),
        "limits": st.dictionaries(
            st.sampled_from(["cpu", "nodes"]), st.sampled_from(["1000", 10, "1k", "abc"]), max_size=2
        ),
    }
)


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
