"""What only Karpenter's runtime validation refuses: the real API server admits these NodePools and NodeOverlays.

Each case is a finding of layer ``karpenter`` in ``validate``; here the served CRDs (schema and CEL) accept
the object, which is why the mistake surfaces only as ValidationSucceeded=False on the cluster.
"""

from __future__ import annotations

import pytest
from support.api_server import kube_client
from support.rule_helpers import findings, node_class

from karpenter_gitops.rules.examples import BASE_NODEOVERLAY, BASE_NODEPOOL, merge_patch

pytestmark = pytest.mark.real

LONG = "example.com/" + "a" * 64
_POOL_CASES = [
    ("label key with a space", {"spec": {"template": {"metadata": {"labels": {"team name": "ml"}}}}}, "nodepool/label-syntax"),
    ("label key name part over 63", {"spec": {"template": {"metadata": {"labels": {LONG: "x"}}}}}, "nodepool/label-syntax"),
    (
        "taint key name part over 63",
        {"spec": {"template": {"spec": {"taints": [{"key": LONG, "effect": "NoSchedule"}]}}}},
        "nodepool/label-syntax",
    ),
    (
        "wildcard requirement value",
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c5*"]}]}
                }
            }
        },
        "nodepool/label-syntax",
    ),
    (
        "taint repeated as a startup taint",
        {
            "spec": {
                "template": {
                    "spec": {
                        "taints": [{"key": "example.com/gpu", "effect": "NoSchedule"}],
                        "startupTaints": [{"key": "example.com/gpu", "effect": "NoSchedule"}],
                    }
                }
            }
        },
        "nodepool/duplicate-taint",
    ),
]


def test_the_api_server_admits_what_only_karpenter_refuses(api_server):
    from kubernetes import client

    objects = client.CustomObjectsApi(kube_client(api_server))
    for what, patch, rule in _POOL_CASES:
        pool = merge_patch(BASE_NODEPOOL, patch)
        objects.create_cluster_custom_object("karpenter.sh", "v1", "nodepools", pool, dry_run="All")
        found = [f for f in findings(pool, node_class()) if f.severity.value == "error"]
        assert [(f.rule, f.layer) for f in found] == [(rule, "karpenter")], what
    overlay = merge_patch(
        BASE_NODEOVERLAY,
        {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5*"]}]}},
    )
    objects.create_cluster_custom_object("karpenter.sh", "v1alpha1", "nodeoverlays", overlay, dry_run="All")
    found = [f for f in findings(overlay) if f.severity.value == "error"]
    assert [(f.rule, f.layer) for f in found] == [("nodeoverlay/label-syntax", "karpenter")]
