"""Base against head: what a change does to what Karpenter would launch for the workloads, and to its cost.

The same workloads are forecast on both sides (same prices, same catalogue); per NodePool the
comparison says which NodeClaims it had and will have and the change in $/hour and $/month
("moves 14 pods from 4 × m6i.large ($0.384/h) to 3 × c7g.xlarge ($0.435/h): +$0.051/h, +$37/month").
Pods that the head cannot schedule but the base could are the blocking part. :func:`mermaid` draws
cost per NodePool before and after as a Mermaid bar chart, which GitHub renders in a comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from karpenter_gitops.core.simulation import PoolForecast
from karpenter_gitops.core.simulation.nodes import HOURS_PER_MONTH
from karpenter_gitops.output.workload_forecast import WorkloadForecast, limit_text, money, node_mix, price_range


def signed(value: float, per: str) -> str:
    sign = "+" if value >= 0 else "−"
    amount = abs(value)
    text = f"${amount:,.0f}" if per == "month" and amount >= 10 else money(amount)
    return f"{sign}{text}/{per}"


def change(low: float, high: float, per: str) -> str:
    return signed(low, per) if abs(high - low) < 1e-9 else f"{signed(low, per)} to {signed(high, per)}"


@dataclass(frozen=True)
class PoolCost:
    """One NodePool on both sides (``None``: the side has no such NodePool)."""

    node_pool: str
    base: PoolForecast | None
    head: PoolForecast | None

    @staticmethod
    def _hourly(pool: PoolForecast | None) -> tuple[float, float]:
        return pool.hourly if pool else (0.0, 0.0)

    @property
    def delta(self) -> tuple[float, float]:
        (base_low, base_high), (head_low, head_high) = self._hourly(self.base), self._hourly(self.head)
        return head_low - base_low, head_high - base_high

    @property
    def changed(self) -> bool:
        return _shape(self.base) != _shape(self.head)

    @staticmethod
    def describe(pool: PoolForecast | None) -> str:
        if pool is None:
            return "no such NodePool"
        if not pool.nodes:
            return "no NodeClaims"
        return f"{node_mix(pool)} ({price_range(*pool.hourly)})"

    def delta_text(self) -> str:
        """``+$0.051/h, +$37/month``."""
        low, high = self.delta
        return f"{change(low, high, 'h')}, {change(low * HOURS_PER_MONTH, high * HOURS_PER_MONTH, 'month')}"

    def sentence(self) -> str:
        """``14 pod(s): 4 × m6i.large ($0.384/h) → 3 × c7g.xlarge ($0.435/h): +$0.051/h, +$37/month``."""
        pods = max(self.base.pods if self.base else 0, self.head.pods if self.head else 0)
        return f"{pods} pod(s): {self.describe(self.base)} → {self.describe(self.head)}: {self.delta_text()}"

    def limit_row(self) -> tuple[str, str] | None:
        """(base, head) of what the pool costs at its limits; the base says ``unchanged`` when the change leaves it."""
        base, head = (pool.limit_cost if pool else None for pool in (self.base, self.head))
        if base is None and head is None:
            return None
        return ("unchanged" if base == head else limit_text(base, "") if self.base else "no such NodePool",
                limit_text(head, "") if self.head else "no such NodePool")

    def to_json(self) -> dict:
        low, high = self.delta
        return {"nodePool": self.node_pool, "base": self.describe(self.base), "head": self.describe(self.head),
                "deltaPerHour": {"low": round(low, 6), "high": round(high, 6)},
                "deltaPerMonth": {"low": round(low * HOURS_PER_MONTH, 6), "high": round(high * HOURS_PER_MONTH, 6)}}


def _shape(pool: PoolForecast | None) -> tuple:
    return () if pool is None else tuple(sorted((n.instance_type or "", n.launch.capacity_type or "", n.pods) for n in pool.nodes))


@dataclass(frozen=True)
class CostComparison:
    base: WorkloadForecast
    head: WorkloadForecast

    @property
    def pools(self) -> tuple[PoolCost, ...]:
        base = {p.node_pool: p for p in self.base.forecast.pools} if self.base.forecast else {}
        head = {p.node_pool: p for p in self.head.forecast.pools} if self.head.forecast else {}
        return tuple(PoolCost(name, base.get(name), head.get(name)) for name in sorted(base.keys() | head.keys()))

    @property
    def hourly(self) -> tuple[tuple[float, float], tuple[float, float]]:
        zero = (0.0, 0.0)
        return (self.base.forecast.hourly if self.base.forecast else zero, self.head.forecast.hourly if self.head.forecast else zero)

    @property
    def newly_unschedulable(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """(workload, Karpenter's message, pods) for pods the head cannot schedule and the base could."""
        if self.head.forecast is None:
            return ()
        before = {uid for u in self.base.forecast.unschedulable for uid in u.pods} if self.base.forecast else set()
        out = []
        for entry in self.head.forecast.unschedulable:
            pods = tuple(uid for uid in entry.pods if uid not in before)
            if pods:
                out.append((entry.workload, entry.message, pods))
        return tuple(out)

    def summary(self) -> str:
        (base_low, base_high), (head_low, head_high) = self.hourly
        low, high = head_low - base_low, head_high - base_high
        return (f"{price_range(base_low, base_high)} → {price_range(head_low, head_high)}: {change(low, high, 'h')}, "
                f"{change(low * HOURS_PER_MONTH, high * HOURS_PER_MONTH, 'month')}")

    def to_json(self) -> dict:
        (base_low, base_high), (head_low, head_high) = self.hourly
        return {
            "pricePerHour": {"base": {"low": round(base_low, 6), "high": round(base_high, 6)},
                             "head": {"low": round(head_low, 6), "high": round(head_high, 6)}},
            "nodePools": [p.to_json() for p in self.pools],
            "newlyUnschedulable": [{"workload": w, "message": m, "pods": list(p)} for w, m, p in self.newly_unschedulable],
            "base": self.base.to_json(), "head": self.head.to_json(),
        }  # fmt: skip


_LABEL = re.compile(r"[^A-Za-z0-9._/ -]")


def _label(text: str) -> str:
    """A Mermaid string: only characters that cannot end the string or the statement."""
    return _LABEL.sub("_", text)[:40]


def mermaid(comparison: CostComparison) -> str:
    """A bar chart of $/hour per NodePool, base and head side by side (spot: the low end of the range)."""
    labels, values = [], []
    for pool in comparison.pools:
        for side, forecast in (("base", pool.base), ("head", pool.head)):
            labels.append(f'"{_label(pool.node_pool)} {side}"')
            values.append(f"{forecast.hourly[0] if forecast else 0.0:.4f}")
    top = max((float(v) for v in values), default=0.0)
    return "\n".join([
        "```mermaid", "xychart-beta", '    title "$ per hour by NodePool, base and head"',
        f"    x-axis [{', '.join(labels)}]", f'    y-axis "$ per hour" 0 --> {max(top * 1.15, 0.01):.4f}',
        f"    bar [{', '.join(values)}]", "```",
    ])  # fmt: skip
