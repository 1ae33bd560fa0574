"""Hypothesis strategies for EC2NodeClass and NodePool specs near the boundary where rule sets differ.

Shared by the CRD parity tests and the front-end parity test: each spec is a patch setting up to
three fields of the base objects, so most examples carry at most one fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st


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
SUBNET_TERM = st.fixed_dictionaries({}, optional={"tags": SELECTOR_TAGS, "id": st.sampled_from(["subnet-0abc", "bogus"])})
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
        "amiFamily": st.sampled_from(["AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2025", "Ubuntu"]),
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
        "kubelet.evictionSoftGracePeriod": st.dictionaries(st.sampled_from(EVICTION_SIGNALS), st.just("1m"), max_size=2),
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
        "limits": st.dictionaries(st.sampled_from(["cpu", "nodes"]), st.sampled_from(["1000", 10, "1k", "abc"]), max_size=2),
    }
)
