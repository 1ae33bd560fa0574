"""Disruption budgets: how many of a NodePool's nodes Karpenter lets drift at once, and so in how many waves
a drift replaces them. The most restrictive budget that applies to ``Drifted`` wins; percentages round up
(Karpenter's ``GetAllowedDisruptionsByReason``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from karpenter_gitops.core.model import Budget, NodePool
from karpenter_gitops.core.schema_fields import crd_regex, fields_of

DEFAULT_BUDGET = "10%"  # the budget a NodePool without budgets gets


@dataclass(frozen=True)
class DriftBudget:
    """The budgets of a NodePool that limit drift, as written."""

    always: tuple[str, ...]  # unscheduled budgets applying to Drifted ("10%", "5", …)
    scheduled: tuple[str, ...]  # budgets active only in a cron window

    @classmethod
    def of(cls, pool: NodePool) -> DriftBudget:
        disruption = pool.spec.disruption
        budgets = disruption.budgets if disruption and disruption.budgets is not None else None
        if budgets is None:
            return cls((DEFAULT_BUDGET,), ())
        applying = [b for b in budgets if not b.reasons or "Drifted" in b.reasons]
        return cls(
            tuple(b.nodes or DEFAULT_BUDGET for b in applying if not b.schedule),
            tuple(f"{b.nodes or DEFAULT_BUDGET} ({b.schedule} for {b.duration})" for b in applying if b.schedule),
        )

    def allowed(self, total: int) -> int | None:
        """Nodes that may drift at once out of ``total``: the most restrictive budget; None = no limit.

        A budget the CRD's pattern refuses (reported by loading) limits nothing here."""
        limits = [_scaled(nodes, total) for nodes in self.always if _BUDGET_NODES.search(nodes)]
        return min(limits) if limits else None

    def pace(self) -> str:
        """How the budget paces a drift of every node when the node count is unknown."""
        limits = [nodes for nodes in self.always if _BUDGET_NODES.search(nodes)]
        if not limits:
            return "1 wave (no limit)"
        counts = [int(nodes) for nodes in limits if not nodes.endswith("%")]
        percents = [int(nodes[:-1]) for nodes in limits if nodes.endswith("%")]
        if 0 in counts or 0 in percents:
            return "blocked (budget 0)"
        parts = [f"{min(counts)} node(s) per wave"] if counts else []
        if percents:
            parts.append(f"~{math.ceil(100 / min(percents))} waves of {min(percents)}%")
        return " or ".join(parts) + ", whichever is slower" if len(parts) > 1 else parts[0]

    def describe(self) -> str:
        shown = " and ".join(self.always) if self.always else "no limit"
        return shown + (f"; scheduled: {', '.join(self.scheduled)}" if self.scheduled else "")


_BUDGET_NODES = crd_regex(fields_of(Budget)["nodes"].prop.pattern)


def _scaled(nodes: str, total: int) -> int:
    if nodes.endswith("%"):
        return math.ceil(total * int(nodes[:-1]) / 100)
    return int(nodes)


def waves(drifted: int, allowed: int | None) -> int | None:
    """Rounds of replacement; None when the budget allows none (blocked)."""
    if drifted == 0:
        return 0
    if allowed is None:
        return 1
    return math.ceil(drifted / allowed) if allowed > 0 else None
