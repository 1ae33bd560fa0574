"""The cost forecast of ``plan --workloads``: the simulation's :class:`~karpenter_gitops.karpenter.scheduling.Forecast`
with what the run around it knows: where each price came from (:class:`Prices`), the AMI the plan mapped
each chosen instance type to, and what reading the workload manifests left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpenter_gitops.adapters.aws.pricing import Prices
from karpenter_gitops.karpenter.scheduling import Forecast, PlannedNode
from karpenter_gitops.load.workloads import Workloads


@dataclass(frozen=True)
class WorkloadForecast:
    """A forecast and its provenance; ``unavailable`` says why there is none (the catalogue did not load, ...)."""

    workloads: Workloads
    forecast: Forecast | None = None
    prices: Prices | None = None
    amis: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # NodePool → instance type → AMI id
    sources: tuple[str, ...] = ()  # the workload paths read
    unavailable: str | None = None

    def ami(self, node: PlannedNode) -> str | None:
        return self.amis.get(node.node_pool, {}).get(node.instance_type or "")

    def price_source(self, node: PlannedNode) -> str | None:
        if self.prices is None or node.instance_type is None or node.launch.capacity_type is None:
            return None
        return self.prices.source_of(node.instance_type, node.launch.capacity_type)

    @property
    def pods(self) -> int:
        return len(self.workloads.pods)

    def to_json(self) -> dict:
        forecast = None
        if self.forecast is not None:
            forecast = self.forecast.to_json()
            nodes = [n for p in self.forecast.pools for n in p.nodes]
            claims = [c for p in forecast["nodePools"] for c in p["nodeClaims"]]
            for node, claim in zip(nodes, claims, strict=True):
                claim["ami"] = self.ami(node)
                claim["priceSource"] = self.price_source(node)
        return {
            "workloads": {
                "paths": list(self.sources), "pods": self.pods, "daemonSets": [d.name for d in self.workloads.daemon_sets],
                "problems": [str(p) for p in self.workloads.problems], "notes": list(self.workloads.notes),
            },
            "prices": self.prices.to_json() if self.prices else None,
            "unavailable": self.unavailable,
            "forecast": forecast,
        }  # fmt: skip
