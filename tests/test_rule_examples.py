"""Every rule in the registry carries good and bad examples, and each behaves as claimed."""

from __future__ import annotations

import pytest

from karpenter_gitops.rules import registry
from karpenter_gitops.rules.examples import example_inputs
from karpenter_gitops.validate import validate

RULES = sorted(registry.RULES.values(), key=lambda r: r.id)


def _fired(rule, example) -> list:
    inputs, version = example_inputs(rule, example)
    return [f for f in validate(inputs, version).findings if f.rule == rule.id]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_examples_and_metadata(rule):
    assert rule.good, f"{rule.id} has no good example"
    assert rule.bad, f"{rule.id} has no bad example"
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
