"""Every rule in the registry carries good and bad examples, and each behaves as claimed.

Examples run with the hygiene policies enabled, so ``policy/`` rules are judged like the rest.
Object and load rules are judged on spec examples here; the other stages observe their
violations elsewhere, and :data:`ELSEWHERE` names the test that exercises them
(``tests/rules/test_rule_homes.py`` checks that each has a producer).
"""

from __future__ import annotations

import pytest

from karpenter_gitops.judge import validate
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import example_documents
from karpenter_gitops.rules.registry import Stage

ELSEWHERE = {
    Stage.TRANSITION: "compares a change with its base; (old, new) examples run in tests/rules/test_transitions.py",
    Stage.LIVE: "observed by the reconciliation against AWS; see tests/reconcile/test_reconcile.py and tests/policies/test_policy_pack.py",
    Stage.CRD: "observed by the user's CRDs; see tests/rules/test_crd.py",
    Stage.WAIVERS: "observed while applying waivers; see tests/judge/test_policy.py",
    Stage.PULUMI: "needs a fact only the Pulumi layer has; see tests/components/test_controller_component.py and "
    "tests/policies/test_controller_policy.py",
}
RULES = sorted((r for r in registry.RULES.values() if r.stage in (Stage.OBJECT, Stage.LOAD)), key=lambda r: r.id)


def _fired(rule, example) -> list:
    """The rule's findings on the example; where it restates a refusal of the CRD's, that refusal told with the
    rule's own hint (the judge reports the mistake once, as the refusal)."""
    files, version = example_documents(rule, example)
    inputs = load_documents(files, version)
    return [
        f
        for f in validate(inputs, version, policy=True).findings
        if f.rule == rule.id or f.rule in rule.restates and f.hint != registry.RULES[f.rule].fix
    ]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_examples_and_metadata(rule):
    assert rule.good, f"{rule.id} has no good example"
    assert rule.bad, f"{rule.id} has no bad example"
    assert rule.doc and rule.fix


@pytest.mark.parametrize("rule", sorted(registry.RULES.values(), key=lambda r: r.id), ids=lambda r: r.id)
def test_a_rule_has_a_check_exactly_when_its_stage_runs_one(rule):
    assert (rule.check is not None) == (rule.stage in registry.WITH_CHECK), rule.stage
    assert rule.doc and rule.fix
    assert rule.stage in (Stage.OBJECT, Stage.LOAD) or rule.stage in ELSEWHERE


@pytest.mark.parametrize(
    ("rule", "example"),
    [(r, e) for r in RULES for e in r.good],
    ids=lambda v: v.id if isinstance(v, registry.Rule) else "good",
)
def test_good_example_passes(rule, example):
    assert _fired(rule, example) == []


@pytest.mark.parametrize(
    ("rule", "example"),
    [(r, e) for r in RULES for e in r.bad],
    ids=lambda v: v.id if isinstance(v, registry.Rule) else "bad",
)
def test_bad_example_fails(rule, example):
    fired = _fired(rule, example)
    assert fired, f"{rule.id} did not fire on {example}"
    assert all(f.severity is rule.severity for f in fired)
