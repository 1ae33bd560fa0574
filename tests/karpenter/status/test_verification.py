"""The comparisons behind verify, and their forms: pure, so hostile cluster answers are fuzzed here."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.core.resolved import Condition
from karpenter_gitops.karpenter.amifamily.resolver import NodePoolMapping
from karpenter_gitops.karpenter.status import verification
from karpenter_gitops.karpenter.status.prediction import NodeClassPlan, NodePoolPlan
from karpenter_gitops.output import verification_text as shown

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@given(json_values)
def test_a_value_never_differs_from_itself(value):
    assert list(verification.value_differences(value, value, "spec")) == []


@given(json_values, json_values)
def test_values_differ_exactly_when_they_are_not_equal_as_json(a, b):
    found = list(verification.value_differences(a, b, "spec"))
    assert bool(found) == (not _json_equal(a, b))


def _json_equal(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def test_paths_name_the_field_map_key_and_list_item():
    rendered = {
        "spec": {"tags": {"karpenter.sh/discovery": "demo"}, "amiSelectorTerms": [{"alias": "al2023@latest"}], "role": "R"}
    }
    stored = {
        "spec": {
            "tags": {"karpenter.sh/discovery": "prod"},
            "amiSelectorTerms": [{"alias": "al2023@v1"}],
            "role": "R",
            "userData": "x",
        }
    }
    found = verification.drift("EC2NodeClass", "default", rendered, stored)
    assert [(d.path, d.expected, d.actual, d.note) for d in found] == [
        ("spec.tags[karpenter.sh/discovery]", "demo", "prod", "changed in the cluster"),
        ("spec.amiSelectorTerms[0].alias", "al2023@latest", "al2023@v1", "changed in the cluster"),
        ("spec.userData", None, "x", "set in the cluster, not in Git"),
    ]


def test_labels_and_annotations_compare_only_the_keys_git_sets():
    rendered = {"metadata": {"labels": {"team": "a"}}, "spec": {}}
    stored = {"metadata": {"labels": {"team": "a", "argocd.argoproj.io/instance": "x"}, "annotations": {"k": "v"}}, "spec": {}}
    assert verification.drift("NodePool", "p", rendered, stored) == []
    stored["metadata"]["labels"]["team"] = "b"
    assert [d.path for d in verification.drift("NodePool", "p", rendered, stored)] == ["metadata.labels.team"]


PLAN = NodeClassPlan(conditions=(Condition("AMIsReady", "True", "AMIsReady"), Condition("Ready", "True", "Ready")))


def test_conditions_compare_status_and_reason_not_message():
    stored = {
        "status": {
            "conditions": [
                {"type": "AMIsReady", "status": "True", "reason": "AMIsReady", "message": "other words"},
                {"type": "Ready", "status": "False", "reason": "UnhealthyDependents", "message": "AMIsReady=False"},
            ]
        }
    }
    (found,) = verification.conditions("EC2NodeClass/c", PLAN.conditions, stored)
    assert (found.path, found.expected, found.actual) == (
        "status.conditions[Ready]",
        "True (Ready)",
        "False (UnhealthyDependents)",
    )


def test_an_ec2nodeclass_is_unreconciled_until_ready_reports_on_its_generation():
    ready = {"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": 1}
    assert verification.unreconciled({"metadata": {"generation": 1}})
    assert not verification.unreconciled({"metadata": {"generation": 1}, "status": {"conditions": [ready]}})
    assert verification.unreconciled({"metadata": {"generation": 2}, "status": {"conditions": [ready]}})


POOLS = {"general": NodePoolPlan("c", mapping=NodePoolMapping("general", "c", {"m5.large": "ami-new"}))}


def test_nodes_on_an_unmapped_type_or_another_image_differ_and_unlaunched_ones_do_not():
    fleet = [
        FleetNode("a", "general", "m5.large", "ami-new"),
        FleetNode("b", "general", "m5.large", "ami-old"),
        FleetNode("c", "general", "m7g.large", "ami-new"),
        FleetNode("d", "general", None, None),
        FleetNode("e", "elsewhere", "x1.large", "ami-x"),
    ]
    assert [(d.object, d.path) for d in verification.nodes(POOLS, fleet)] == [
        ("NodeClaim/b", "image"),
        ("NodeClaim/c", "instance type"),
    ]


@given(st.dictionaries(st.text(max_size=8), json_values, max_size=4), st.lists(json_values, max_size=3))
def test_hostile_stored_objects_never_raise(stored, conditions):
    rendered = {"spec": {"role": "R"}, "metadata": {"labels": {"a": "b"}}}
    for hostile in (stored, {"spec": stored, "metadata": conditions, "status": conditions}, {"metadata": {"labels": conditions}}):
        verification.drift("EC2NodeClass", "x", rendered, hostile)
        verification.conditions("EC2NodeClass/x", PLAN.conditions, hostile)
        verification.unreconciled(hostile)
    verification.conditions("EC2NodeClass/x", PLAN.conditions, {"status": {"conditions": conditions}})
    verification.unreconciled({"metadata": stored, "status": {"conditions": conditions}})


def test_the_exit_code_says_differs_then_retry_then_ok():
    difference = verification.Difference(verification.DRIFT, "NodePool/p", "spec.weight", 1, 2)
    assert verification.Verification("c", (difference,), unreconciled=("EC2NodeClass/x",)).exit_code == 1
    assert verification.Verification("c", unreconciled=("EC2NodeClass/x",)).exit_code == 3
    assert verification.Verification("c").exit_code == 0


def test_the_comment_escapes_table_cells():
    difference = verification.Difference(
        verification.DRIFT, "EC2NodeClass/x", "spec.userData", "a|b", None, "in Git, not in the cluster"
    )
    comment = shown.comment(verification.Verification("https://k", (difference,), checked={"EC2NodeClass": 1}))
    assert "| `EC2NodeClass/x` | `spec.userData` | `a\\|b` | `(absent)` | in Git, not in the cluster |" in comment
