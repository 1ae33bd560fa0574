"""What Karpenter launched beside what the forecast said, per NodePool (``verify --workloads``).

After the merge the cluster's NodeClaims (their NodePool label, instance type, capacity type and
zone) are counted per NodePool beside the forecast for the same workloads. A difference is
information, never a finding: the cluster also runs pods the workloads do not name, NodeClaims
launched before the change, consolidation, and spot capacity that EC2 chose among the candidates
(a launched type among the forecast NodeClaims' candidates is said to be so). One line per pool
says what differs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.karpenter.scheduling.forecast import Forecast, PoolForecast


def counted(values: Iterable[str | None]) -> dict[str, int]:
    """``{value: count}``, most first then by name; an unknown value counts as ``unknown``."""
    counts = Counter(value or "unknown" for value in values)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def mix(counts: Mapping[str, int]) -> str:
    """``2 × m6i.large, 1 × c7g.xlarge`` (``none`` when empty)."""
    return ", ".join(f"{n} × {name}" for name, n in counts.items()) or "none"


@dataclass(frozen=True)
class PoolLaunch:
    """One NodePool: the NodeClaims forecast and those in the cluster, by instance type."""

    node_pool: str
    forecast: Mapping[str, int]  # instance type (the cheapest candidate) → NodeClaims
    launched: Mapping[str, int]  # instance type → NodeClaims Karpenter launched
    capacity_types: Mapping[str, int]  # of the launched NodeClaims
    zones: Mapping[str, int]  # of the launched NodeClaims
    forecast_capacity_types: Mapping[str, int]
    candidates: frozenset[str] = frozenset()  # every type the forecast NodeClaims may launch

    @property
    def as_forecast(self) -> bool:
        return dict(self.forecast) == dict(self.launched)

    def sentence(self) -> str:
        """``general: forecast 3 NodeClaim(s) (…), launched 2 (…): 1 fewer; …`` in one line."""
        planned, running = sum(self.forecast.values()), sum(self.launched.values())
        if self.as_forecast:
            return f"{self.node_pool}: as forecast, {planned} NodeClaim(s) ({mix(self.forecast)})"
        parts = [
            f"{self.node_pool}: forecast {planned} NodeClaim(s) ({mix(self.forecast)}), launched {running} ({mix(self.launched)})"
        ]
        if running != planned:
            parts.append(f"{abs(running - planned)} {'more' if running > planned else 'fewer'}")
        others = sorted(set(self.launched) - set(self.forecast))
        if others:
            within = [t for t in others if t in self.candidates]
            parts.append("other types" + (f", {', '.join(within)} among the forecast's candidates" if within else ""))
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"nodePool": self.node_pool, "asForecast": self.as_forecast,
                "forecast": {"nodeClaims": sum(self.forecast.values()), "instanceTypes": dict(self.forecast),
                             "capacityTypes": dict(self.forecast_capacity_types)},
                "launched": {"nodeClaims": sum(self.launched.values()), "instanceTypes": dict(self.launched),
                             "capacityTypes": dict(self.capacity_types), "zones": dict(self.zones)},
                "summary": self.sentence()}  # fmt: skip


def _pool(pool: PoolForecast, nodes: list[FleetNode]) -> PoolLaunch:
    return PoolLaunch(
        pool.node_pool,
        counted(n.instance_type for n in pool.nodes),
        counted(n.instance_type for n in nodes),
        counted(n.labels.get(labels.CAPACITY_TYPE) for n in nodes),
        counted(n.labels.get(labels.ZONE) for n in nodes),
        counted(n.launch.capacity_type for n in pool.nodes),
        frozenset(t for n in pool.nodes for t in n.launch.instance_types),
    )  # fmt: skip


def launched(forecast: Forecast, fleet: Iterable[FleetNode]) -> tuple[PoolLaunch, ...]:
    """Per NodePool of the forecast, its NodeClaims beside the cluster's (other pools are not Git's to compare)."""
    by_pool: dict[str, list[FleetNode]] = {}
    for node in fleet:
        by_pool.setdefault(node.node_pool, []).append(node)
    return tuple(_pool(pool, by_pool.get(pool.node_pool, [])) for pool in forecast.pools)
