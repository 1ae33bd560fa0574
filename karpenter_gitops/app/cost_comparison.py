"""Base against head: what a change does to what Karpenter would launch for the workloads, and to its cost.

The same workloads are forecast on both sides (same prices, same catalogue); per NodePool the
comparison holds the NodeClaims it had and will have and the change in $/hour. Pods that the head
cannot schedule but the base could are the blocking part of the preview's verdict. The words and the
chart are :mod:`karpenter_gitops.output.cost_text`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.karpenter.scheduling import PoolForecast
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH
from karpenter_gitops.output import cost_text


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

    def to_json(self) -> dict:
        low, high = self.delta
        return {
            "nodePool": self.node_pool,
            "base": cost_text.describe(self.base),
            "head": cost_text.describe(self.head),
            "deltaPerHour": {"low": round(low, 6), "high": round(high, 6)},
            "deltaPerMonth": {"low": round(low * HOURS_PER_MONTH, 6), "high": round(high * HOURS_PER_MONTH, 6)},
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
    def hourly(self) -> tuple[tuple[float, float], tuple[float, float]]:
        zero = (0.0, 0.0)
        return (
            self.base.forecast.hourly if self.base.forecast else zero,
            self.head.forecast.hourly if self.head.forecast else zero,
        )

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
        (base_low, base_high), (head_low, head_high) = self.hourly
        return {
            "pricePerHour": {"base": {"low": round(base_low, 6), "high": round(base_high, 6)},
                             "head": {"low": round(head_low, 6), "high": round(head_high, 6)}},
            "nodePools": [p.to_json() for p in self.pools],
            "newlyUnschedulable": [{"workload": w, "message": m, "pods": list(p)} for w, m, p in self.newly_unschedulable],
            "base": self.base.to_json(), "head": self.head.to_json(),
        }  # fmt: skip
