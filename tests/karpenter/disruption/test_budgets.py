"""Disruption budgets: how many nodes may drift at once, and the waves that makes."""

from __future__ import annotations

import pytest

from karpenter_gitops.karpenter.disruption import budgets
from karpenter_gitops.load import into_inputs
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


def pool_with(disruption: dict):
    node_pool = {**BASE_NODEPOOL, "spec": {**BASE_NODEPOOL["spec"], "disruption": disruption}}
    return into_inputs.load_documents([("test.yaml", [BASE_NODECLASS, node_pool])]).node_pools[0]


@pytest.mark.parametrize(
    ("written", "total", "allowed"),
    [
        (None, 42, 5),  # the default 10%, rounded up
        ([{"nodes": "20%"}, {"nodes": "3"}], 42, 3),  # the most restrictive wins
        ([{"nodes": "0", "reasons": ["Underutilized"]}], 42, None),  # does not apply to Drifted: no limit
        ([{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}, {"nodes": "50%"}], 10, 5),  # scheduled: noted only
    ],
)
def test_drift_budget(written, total, allowed):
    disruption = {"consolidateAfter": "1m"} | ({"budgets": written} if written is not None else {})
    pool = pool_with(disruption)
    assert budgets.DriftBudget.of(pool).allowed(total) == allowed


def test_waves():
    assert budgets.waves(42, 5) == 9
    assert budgets.waves(0, 5) == 0
    assert budgets.waves(7, None) == 1
    assert budgets.waves(7, 0) is None  # blocked


@pytest.mark.parametrize(
    ("written", "pace"),
    [
        (None, "~10 waves of 10%"),
        ([{"nodes": "20%"}, {"nodes": "3"}], "3 node(s) per wave or ~5 waves of 20%, whichever is slower"),
        ([{"nodes": "0"}], "blocked (budget 0)"),
        ([{"nodes": "0", "reasons": ["Underutilized"]}], "1 wave (no limit)"),
    ],
)
def test_pace_without_a_node_count(written, pace):
    disruption = {"consolidateAfter": "1m"} | ({"budgets": written} if written is not None else {})
    assert budgets.DriftBudget.of(pool_with(disruption)).pace() == pace
