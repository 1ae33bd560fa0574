"""Base against head: what a change does to what Karpenter would launch for the workloads, and to its cost.

The same workloads are forecast on both sides (same prices, same catalogue); per NodePool the
comparison holds the NodeClaims it had and will have, and what they cost per month. A figure is a
range when spot NodeClaims are in it (CreateFleet picks among several offerings). A side without a
forecast, or a NodeClaim that cannot launch (so has no offering to price), makes the figures it is in
unknown, never $0. Pods that the head cannot schedule but the base could are the blocking part of the
preview's verdict. The words and the chart are :mod:`karpenter_gitops.output.cost_text`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.karpenter.scheduling import PoolForecast
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH
from karpenter_gitops.output import cost_text

Range = tuple[float, float]  # (low, high) in $; equal unless spot NodeClaims are in it


def _monthly(hourly: Range) -> Range:
    return hourly[0] * HOURS_PER_MONTH, hourly[1] * HOURS_PER_MONTH


def _unpriced(pool: PoolForecast | None) -> int:
    """NodeClaims with no offering to price: their launch fails (Karpenter's error says why)."""
    return sum(1 for node in pool.nodes if not node.launch.candidates) if pool else 0


def _change_json(base: Range, head: Range) -> dict:
    low, high = (cost_text.percent(b, h) for b, h in zip(base, head, strict=True))
    return {
        "low": round(head[0] - base[0], 6), "high": round(head[1] - base[1], 6),
        "percentLow": None if low is None else round(low, 2), "percentHigh": None if high is None else round(high, 2),
    }  # fmt: skip


def _range_json(value: Range | None) -> dict | None:
    return None if value is None else {"low": round(value[0], 6), "high": round(value[1], 6)}


@dataclass(frozen=True)
class PoolCost:
    """One NodePool on both sides (``None``: the side has no such NodePool)."""

    node_pool: str
    base: PoolForecast | None
    head: PoolForecast | None

    @staticmethod
    def _hourly(pool: PoolForecast | None) -> Range:
        return pool.hourly if pool else (0.0, 0.0)

    @property
    def delta(self) -> Range:
        (base_low, base_high), (head_low, head_high) = self._hourly(self.base), self._hourly(self.head)
        return head_low - base_low, head_high - base_high

    @property
    def changed(self) -> bool:
        return _shape(self.base) != _shape(self.head)

    @property
    def unpriced(self) -> tuple[int, int]:
        """NodeClaims without a price on the base and on the head."""
        return _unpriced(self.base), _unpriced(self.head)

    def monthly(self, pool: PoolForecast | None) -> Range | None:
        """One side's $/month; None when the side has no such NodePool or a NodeClaim in it has no price."""
        return None if pool is None or _unpriced(pool) else _monthly(pool.hourly)

    def to_json(self) -> dict:
        low, high = self.delta
        priced = not any(self.unpriced)
        return {
            "nodePool": self.node_pool,
            "changed": self.changed,
            "base": cost_text.describe(self.base),
            "head": cost_text.describe(self.head),
            "basePerMonth": _range_json(self.monthly(self.base)),
            "headPerMonth": _range_json(self.monthly(self.head)),
            "unpricedNodeClaims": dict(zip(("base", "head"), self.unpriced, strict=True)),
            "deltaPerHour": {"low": round(low, 6), "high": round(high, 6)} if priced else None,
            "deltaPerMonth": _range_json(_monthly(self.delta)) if priced else None,
        }


def _shape(pool: PoolForecast | None) -> tuple:
    return (
        () if pool is None else tuple(sorted((n.instance_type or "", n.launch.capacity_type or "", n.pods) for n in pool.nodes))
    )


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
    def changed(self) -> tuple[PoolCost, ...]:
        """The NodePools whose NodeClaims change: the only ones a reviewer needs to see."""
        return tuple(pool for pool in self.pools if pool.changed)

    @property
    def hourly(self) -> tuple[Range, Range]:
        zero = (0.0, 0.0)
        return (
            self.base.forecast.hourly if self.base.forecast else zero,
            self.head.forecast.hourly if self.head.forecast else zero,
        )

    @property
    def unknown(self) -> str | None:
        """Why the monthly totals are not known: a side has no forecast, or NodeClaims have no price."""
        if self.base.forecast is None or self.head.forecast is None:
            return self.head.unavailable or self.base.unavailable or "nothing to simulate"
        base, head = (sum(pool.unpriced[side] for pool in self.pools) for side in (0, 1))
        if base or head:
            sides = " and ".join(f"{n} on the {side}" for side, n in (("base", base), ("head", head)) if n)
            return f"NodeClaims that cannot launch have no price ({sides})"
        return None

    @property
    def monthly(self) -> tuple[Range, Range] | None:
        """Both sides' $/month, when known."""
        if self.unknown:
            return None
        base, head = self.hourly
        return _monthly(base), _monthly(head)

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

    def to_json(self) -> dict:
        monthly = self.monthly
        (base_low, base_high), (head_low, head_high) = self.hourly
        hourly = {
            "base": {"low": round(base_low, 6), "high": round(base_high, 6)},
            "head": {"low": round(head_low, 6), "high": round(head_high, 6)},
        }
        return {
            "unknown": self.unknown,
            "pricePerHour": None if monthly is None else hourly,
            "pricePerMonth": None if monthly is None else {"base": _range_json(monthly[0]), "head": _range_json(monthly[1])},
            "monthlyChange": None if monthly is None else _change_json(*monthly),
            "nodePools": [p.to_json() for p in self.pools],
            "newlyUnschedulable": [{"workload": w, "message": m, "pods": list(p)} for w, m, p in self.newly_unschedulable],
            "base": self.base.to_json(), "head": self.head.to_json(),
        }  # fmt: skip
