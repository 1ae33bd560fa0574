"""The comment's drift section: per NodePool each reason, its nodes, the budget and the waves, and whatever
the manifests hold (a pool's name, a label value it requires) shown as data, never markup."""

from __future__ import annotations

from hypothesis import given, settings
from support.markdown_oracle import HOSTILE_VALUE, check

from karpenter_gitops.app import preview_result
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.disruption.drift import forecast
from karpenter_gitops.load import into_inputs
from karpenter_gitops.output import pr_comment
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL, merge_patch


def comment(base_docs: list[dict], head_docs: list[dict]) -> str:
    base = into_inputs.load_documents([("b.yaml", base_docs)])
    head = into_inputs.load_documents([("h.yaml", head_docs)])
    report = preview_result.Preview.build("main", base, head, validate(head, policy=True, base=base), forecast(base, head))
    return pr_comment.markdown(report, budget=None)[0]


def team(pool_name: str, *values: str) -> dict:
    requirement = {"key": "example.com/team", "operator": "In", "values": list(values)}
    return merge_patch(
        BASE_NODEPOOL,
        {"metadata": {"name": pool_name}, "spec": {"template": {"spec": {"requirements": [requirement]}}}},
    )


def test_a_narrowed_custom_label_names_the_values_whose_nodes_drift():
    text = comment([BASE_NODECLASS, team("general", "a", "b")], [BASE_NODECLASS, team("general", "b")])
    assert "| `general` | RequirementsDrifted | nodes with example.com/team=a | 10% | up to ~10 waves of 10% |" in text
    assert "- `general`: RequirementsDrifted (requirement example.com/team now In [b])" in text


def test_a_removed_pool_is_a_row_of_its_own():
    text = comment([BASE_NODECLASS, dict(BASE_NODEPOOL)], [BASE_NODECLASS])
    assert "| `general` | removed | its nodes are deleted | 10% | — |" in text


@settings(max_examples=60, deadline=None)
@given(name=HOSTILE_VALUE, value=HOSTILE_VALUE)
def test_nothing_a_manifest_holds_becomes_markup_in_the_drift_section(name, value):
    text = comment([BASE_NODECLASS, team(name, value, "b")], [BASE_NODECLASS, team(name, "b")])
    assert value == "b" or "| RequirementsDrifted | nodes with " in text
    check(text)
