"""Generated changes for the drift conformance (tests/real/test_drift_conformance.py): a base NodePool and
EC2NodeClass, a head that patches a few fields of each, and NodeClaim label sets.

The values sit where Karpenter's static hashes and its requirement check are easy to get wrong: an
absent field against its zero (``false``, ``0``, ``{}``, ``[]``), lists reordered or doubled, the same
duration or volume size written two ways, defaults the API server fills in, the kubelet map (a struct
before 1.15, JSON text since), and requirements on well-known and custom keys with every operator.
Label sets carry a value for every well-known key (real nodes do) and some custom keys.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch
from support.crd_strategies import few_of

# label key → the values nodes and requirements draw from
VALUES = {
    "karpenter.sh/capacity-type": ["on-demand", "spot", "reserved"],
    "kubernetes.io/arch": ["amd64", "arm64"],
    "karpenter.k8s.aws/instance-category": ["c", "m", "r"],
    "karpenter.k8s.aws/instance-cpu": ["2", "4", "16"],
    "topology.kubernetes.io/zone": ["us-east-1a", "us-east-1b"],
    "example.com/team": ["a", "b"],
    "tier": ["web", "batch"],
}
CUSTOM = ["example.com/team", "tier"]
WELL_KNOWN = [key for key in VALUES if key not in CUSTOM]
NUMERIC = "karpenter.k8s.aws/instance-cpu"


@st.composite
def requirement(draw) -> dict[str, Any]:
    key = draw(st.sampled_from(sorted(VALUES)))
    operators = ["In", "NotIn", "Exists", "DoesNotExist"] + (["Gt", "Lt"] if key == NUMERIC else [])
    operator = draw(st.sampled_from(operators))
    if operator in ("Gt", "Lt"):
        return {"key": key, "operator": operator, "values": [draw(st.sampled_from(["1", "3", "8"]))]}
    if operator in ("Exists", "DoesNotExist"):
        return {"key": key, "operator": operator}
    values = draw(st.lists(st.sampled_from(VALUES[key]), min_size=1, max_size=3, unique=True))
    return {"key": key, "operator": operator, "values": values}


TAINT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["example.com/dedicated", "example.com/gpu"]),
        "effect": st.sampled_from(["NoSchedule", "NoExecute"]),
    },
    optional={"value": st.sampled_from(["", "gpu", "web"])},
)
DURATION = st.sampled_from(["720h", "30h", "1h", "60m", "3600s", "1h0m0s", "Never"])
GRACE = st.sampled_from([None, "0s", "1h", "60m", "24h"])
POOL_FIELDS = {
    "template.metadata.labels": st.dictionaries(
        st.sampled_from(["tier", "example.com/team"]), st.sampled_from(["web", "a", ""]), max_size=2
    ),
    "template.metadata.annotations": st.dictionaries(
        st.sampled_from(["example.com/owner"]), st.sampled_from(["x", ""]), max_size=1
    ),
    "template.spec.requirements": st.lists(requirement(), min_size=1, max_size=4),
    "template.spec.taints": st.one_of(st.none(), st.lists(TAINT, max_size=3)),
    "template.spec.startupTaints": st.one_of(st.none(), st.lists(TAINT, max_size=2)),
    "template.spec.expireAfter": st.one_of(st.none(), DURATION),
    "template.spec.terminationGracePeriod": GRACE,
    "template.spec.nodeClassRef.name": st.sampled_from(["default", "other"]),
    "disruption.budgets": st.lists(st.fixed_dictionaries({"nodes": st.sampled_from(["10%", "0", "3"])}), max_size=1),
}
EBS = st.fixed_dictionaries(
    {},
    optional={
        "volumeSize": st.sampled_from(["20Gi", "20480Mi", "100G", "100000M", "1e11", "21474836480"]),
        "volumeType": st.sampled_from(["gp3", "io2"]),
        "encrypted": st.booleans(),
        "iops": st.sampled_from([0, 3000]),
    },
)
BLOCK_DEVICE = st.fixed_dictionaries(
    {"deviceName": st.sampled_from(["/dev/xvda", "/dev/xvdb"]), "ebs": EBS}, optional={"rootVolume": st.booleans()}
)
CLASS_FIELDS = {
    "amiSelectorTerms": st.sampled_from(
        [
            [{"alias": "al2023@latest"}],
            [{"alias": "al2023@v20240807"}],
            [{"alias": "bottlerocket@latest"}],
            [{"id": "ami-0123456789abcdef0"}],
            [{"tags": {"team": "a"}}],
        ]
    ),
    "amiFamily": st.sampled_from([None, "AL2023", "Bottlerocket"]),
    "role": st.sampled_from(["KarpenterNodeRole-demo", "KarpenterNodeRole-other"]),
    "userData": st.sampled_from([None, "", "echo hi"]),
    "detailedMonitoring": st.sampled_from([None, False, True]),
    "associatePublicIPAddress": st.sampled_from([None, False]),
    "tags": st.one_of(st.none(), st.dictionaries(st.sampled_from(["team", "env"]), st.sampled_from(["", "a"]), max_size=2)),
    "subnetSelectorTerms": st.sampled_from([[{"tags": {"karpenter.sh/discovery": "demo"}}], [{"id": "subnet-0abc"}]]),
    "securityGroupSelectorTerms": st.sampled_from([[{"tags": {"karpenter.sh/discovery": "demo"}}], [{"id": "sg-0abc"}]]),
    "blockDeviceMappings": st.one_of(st.none(), st.lists(BLOCK_DEVICE, max_size=2, unique_by=lambda d: d["deviceName"])),
    "metadataOptions": st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {},
            optional={
                "httpTokens": st.sampled_from(["required", "optional"]),
                "httpPutResponseHopLimit": st.sampled_from([1, 2]),
            },
        ),
    ),
    "kubelet": st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {},
            optional={
                "maxPods": st.sampled_from([0, 110]),
                "clusterDNS": st.sampled_from([[], ["10.0.0.10"], ["10.0.0.10", "10.0.0.11"], ["10.0.0.11", "10.0.0.10"]]),
                "systemReserved": st.dictionaries(
                    st.sampled_from(["cpu", "memory"]), st.sampled_from(["100m", "1Gi"]), max_size=2
                ),
                "evictionSoftGracePeriod": st.dictionaries(
                    st.just("memory.available"), st.sampled_from(["1m", "60s"]), max_size=1
                ),
                "evictionSoft": st.dictionaries(st.just("memory.available"), st.just("5%"), max_size=1),
            },
        ),
    ),
    "ipPrefixCount": st.sampled_from([None, 1]),
}
POOL_PATCH = few_of(POOL_FIELDS)
CLASS_PATCH = few_of(CLASS_FIELDS)


def _pair(base: Any, first: dict, second: dict) -> tuple[dict, dict]:
    old = merge_patch(base, {"spec": first})
    return old, merge_patch(old, {"spec": second})


NODEPOOL_PAIRS = st.builds(_pair, st.just(BASE_NODEPOOL), POOL_PATCH, POOL_PATCH)
NODECLASS_PAIRS = st.builds(_pair, st.just(BASE_NODECLASS), CLASS_PATCH, CLASS_PATCH)


@st.composite
def label_set(draw) -> dict[str, str]:
    """A NodeClaim's labels: every well-known key of :data:`VALUES` with a value, some custom keys."""
    labels = {key: draw(st.sampled_from(VALUES[key])) for key in WELL_KNOWN}
    for key in CUSTOM:
        if draw(st.booleans()):
            labels[key] = draw(st.sampled_from(VALUES[key]))
    return labels


LABEL_SETS = st.lists(label_set(), min_size=4, max_size=12)
