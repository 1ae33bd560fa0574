"""Generated Karpenter objects for the differential tests: the base objects with a few fields set
near the boundaries the CRDs and RuntimeValidate draw (tests/support/crd_strategies.py for EC2NodeClass and
NodePool, here for NodeOverlay and CapacityBuffer), then, for some, one value of the wrong type."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODECLASS, BASE_NODEOVERLAY, BASE_NODEPOOL, merge_patch
from support.crd_strategies import LABEL_KEYS, NODECLASS_SPEC, NODEPOOL_SPEC, few_of

OVERLAY_KEYS = [*LABEL_KEYS, "karpenter.k8s.aws/instance-memory", "example.com/team", "x" * 64, "a/" + "b" * 63]
OVERLAY_REQUIREMENT = st.fixed_dictionaries(
    {
        "key": st.sampled_from(OVERLAY_KEYS),
        "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte", "Near"]),
    },
    optional={"values": st.lists(st.sampled_from(["4", "0", "-1", "1.5", "g5", "", "x" * 64]), max_size=2)},
)
NODEOVERLAY_SPEC = few_of(
    {
        "requirements": st.lists(OVERLAY_REQUIREMENT, max_size=2),
        "priceAdjustment": st.sampled_from(["-10%", "+5%", "10%", "-100%", "-101%", "+0.1", "-.5", "-99.5%", "ten", ""]),
        "price": st.sampled_from(["1.2", "0", "-1", ".5", "abc"]),
        "capacity": st.dictionaries(
            st.sampled_from(
                ["smarter-devices/fuse", "cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi"]
            ),
            st.sampled_from([1, "8", "1Gi", "-1", "abc"]),
            max_size=2,
        ),
        "weight": st.integers(-1, 10001),
    }
)
SCALABLE = st.fixed_dictionaries(
    {},
    optional={
        "apiGroup": st.sampled_from(["apps", ""]),
        "kind": st.sampled_from(["Deployment", ""]),
        "name": st.sampled_from(["web", ""]),
    },
)
CAPACITYBUFFER_SPEC = few_of(
    {
        "podTemplateRef": st.one_of(st.none(), st.fixed_dictionaries({}, optional={"name": st.sampled_from(["spare", ""])})),
        "scalableRef": SCALABLE,
        "replicas": st.integers(-1, 3),
        "percentage": st.integers(-1, 101),
        "limits": st.dictionaries(
            st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), st.sampled_from(["4", "8Gi", "-1", "abc", 2]), max_size=2
        ),
        "provisioningStrategy": st.sampled_from(["buffer.x-k8s.io/active-capacity", "", "other"]),
    }
)
WRONG_TYPES = st.sampled_from([1, -1, 2**31, 1.5, "x", "", True, [], ["x"], {}, {"k": "v"}])


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path under ``spec`` to a value."""
    found = [path] if path else []
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found.extend(_paths(child, (*path, key)))
    return found


@st.composite
def one_wrong_type(draw, objects: st.SearchStrategy[dict]) -> dict:
    """Half the objects as generated; the other half with one value under ``spec`` of another type."""
    doc = copy.deepcopy(draw(objects))
    paths = _paths(doc["spec"])
    if paths and draw(st.booleans()):
        *parents, leaf = draw(st.sampled_from(paths))
        node = doc["spec"]
        for step in parents:
            node = node[step]
        node[leaf] = draw(WRONG_TYPES)
    return doc


OBJECTS = {
    kind: one_wrong_type(spec.map(lambda patch, base=base: merge_patch(base, {"spec": patch})))
    for kind, base, spec in (
        ("EC2NodeClass", BASE_NODECLASS, NODECLASS_SPEC),
        ("NodePool", BASE_NODEPOOL, NODEPOOL_SPEC),
        ("NodeOverlay", BASE_NODEOVERLAY, NODEOVERLAY_SPEC),
        ("CapacityBuffer", BASE_CAPACITYBUFFER, CAPACITYBUFFER_SPEC),
    )
}


# --- updates: (old, new) pairs around the rules that compare an object with its stored self ---------

IDENTITY = st.sampled_from(
    [
        {"role": "KarpenterNodeRole-a"},
        {"role": "KarpenterNodeRole-b"},
        {"role": None, "instanceProfile": "KarpenterProfile-a"},
        {"role": None, "instanceProfile": "KarpenterProfile-b"},
    ]
)
CLASS_EXTRA = st.sampled_from([{}, {"tags": {"team": "platform"}}, {"kubelet": {"maxPods": 110}}])
REFS = st.sampled_from(
    [
        {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
        {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "other"},
        {"group": "eks.amazonaws.com", "kind": "NodeClass", "name": "default"},
        {"group": "example.com", "kind": "EC2NodeClass", "name": "default"},
    ]
)
MODE = st.sampled_from([{}, {"replicas": 2, "limits": None}, {"replicas": 0, "limits": {"nodes": "5"}}, {"weight": 10}])


def _class_update(old_identity, new_identity, extra) -> tuple[dict, dict]:
    old = merge_patch(BASE_NODECLASS, {"metadata": {"name": "updated"}, "spec": old_identity})
    return old, merge_patch(
        old,
        {
            "spec": {
                **new_identity,
                **extra,
                **({"role": None} if "instanceProfile" in new_identity else {"instanceProfile": None}),
            }
        },
    )


def _pool_update(old_ref, old_mode, new_ref, new_mode) -> tuple[dict, dict]:
    old = merge_patch(
        BASE_NODEPOOL, {"metadata": {"name": "updated"}, "spec": {**old_mode, "template": {"spec": {"nodeClassRef": old_ref}}}}
    )
    undo = {key: None for key in ("replicas", "weight") if key in old_mode and key not in new_mode}
    return old, merge_patch(old, {"spec": {**undo, **new_mode, "template": {"spec": {"nodeClassRef": new_ref}}}})


UPDATES = {
    "EC2NodeClass": st.builds(_class_update, IDENTITY, IDENTITY, CLASS_EXTRA),
    "NodePool": st.builds(_pool_update, REFS, MODE, REFS, MODE),
}
