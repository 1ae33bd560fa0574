"""Every rule in the registry carries good and bad examples, and each behaves as claimed.

Examples run with the hygiene policies enabled, so ``policy/`` rules are judged like the rest.
Rules that no spec example can trigger are listed in :data:`NOT_SPEC_JUDGED` with the test that
exercises them instead; the list is checked, so it cannot hide a rule that has a check.
"""

from __future__ import annotations

import pytest

from karpenter_gitops import controller
from karpenter_gitops.judge.validate import validate
from karpenter_gitops.rules import hygiene, live, registry, transitions
from karpenter_gitops.rules.examples import example_inputs

_LIVE = "found by the reconciliation against AWS; see tests/test_policy_pack.py (pack) and the reconcile tests"
NOT_SPEC_JUDGED = {
    live.SELECTOR_MATCHES_NOTHING: _LIVE,
    live.AMI_NOT_AVAILABLE: _LIVE,
    live.UNSERVED_INSTANCE_TYPES: _LIVE,
    live.INSTANCE_PROFILE_WITHOUT_ROLE: _LIVE,
    live.CATALOGUE_REFUSED: "found when AWS refuses the catalogue; see tests/test_reconcile.py",
    hygiene.WAIVER_EXPIRED: "reported while applying waivers; see tests/test_policy.py",
    controller.CNI_IP_FAMILY: "needs the cluster's IP family, looked up in preview; see tests/test_controller_component.py",
    controller.QUEUE_KMS: "needs the KMS key policy, seen by the policy pack; see tests/test_controller_policy.py",
    **{
        rule_id: "compares a change with its base, in preview; (old, new) examples run in tests/test_transitions.py"
        for rule_id in transitions.TRANSITIONS
    },
}
RULES = sorted((r for r in registry.RULES.values() if r.id not in NOT_SPEC_JUDGED), key=lambda r: r.id)


def _fired(rule, example) -> list:
    inputs, version = example_inputs(rule, example)
    return [f for f in validate(inputs, version, policy=True).findings if f.rule == rule.id]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_examples_and_metadata(rule):
    assert rule.good, f"{rule.id} has no good example"
    assert rule.bad, f"{rule.id} has no bad example"
    assert rule.doc and rule.fix


@pytest.mark.parametrize("rule_id", sorted(NOT_SPEC_JUDGED))
def test_rules_without_spec_examples_are_registered_check_less_and_documented(rule_id):
    rule = registry.RULES[rule_id]
    assert rule.check is None and not rule.good and not rule.bad
    assert rule.doc and rule.fix


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
