"""NodeOverlay and CapacityBuffer cases judged both offline (tests/rules/) and by the real API server
(tests/real/test_api_server.py): each with the rules of ours it breaks; none means the CRD accepts it."""

from __future__ import annotations

from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODEOVERLAY, merge_patch

# (what, spec patch, the rules it breaks): the cases tests/real checks on the API server too.
CASES = [
    ("a price adjustment", {"priceAdjustment": "-10%"}, set()),
    ("an extended resource", {"capacity": {"smarter-devices/fuse": 1}, "weight": 10}, set()),
    ("price and adjustment", {"price": "1.2", "priceAdjustment": "-10%"}, {"cel/overlay-price-exclusive"}),
    ("cpu capacity", {"capacity": {"cpu": "8"}}, {"cel/overlay-capacity-restricted"}),
    ("a weight too high", {"weight": 20000}, {"schema/range"}),
    ("an adjustment in words", {"priceAdjustment": "ten percent off"}, {"schema/pattern"}),
    (
        "NotIn without values",
        {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "NotIn", "values": []}]},
        {"cel/overlay-requirement-values"},
    ),
    (
        "the hostname",
        {"requirements": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]},
        {"cel/overlay-hostname-restricted"},
    ),
    ("no requirements", {"requirements": None}, {"schema/required"}),
]


def overlay(patch: dict) -> dict:
    return merge_patch(BASE_NODEOVERLAY, {"spec": patch})


# CapacityBuffer cases, judged the same two ways (the API server's in the "default" namespace).
BUFFER_CASES = [
    ("a template with replicas", {}, set()),
    (
        "a workload share",
        {
            "podTemplateRef": None,
            "replicas": None,
            "scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"},
            "percentage": 20,
        },
        set(),
    ),
    ("a template without a size", {"replicas": None}, {"cel/buffer-template-size"}),
    (
        "both refs",
        {"scalableRef": {"apiGroup": "apps", "kind": "Deployment", "name": "web"}},
        {"cel/buffer-template-xor-scalable"},
    ),
    ("negative replicas", {"replicas": -1}, {"schema/range"}),
    ("a template without a name", {"podTemplateRef": {"name": ""}}, {"schema/size"}),
]


def buffer(patch: dict) -> dict:
    return merge_patch(BASE_CAPACITYBUFFER, {"spec": patch})
