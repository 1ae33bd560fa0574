"""What a NodePool costs when it reaches its ``spec.limits``, filled with its cheapest and its dearest type.

A limit caps what a pool may launch, so it also caps what the pool may cost — the figure a team
wants before it raises ``limits.cpu`` (Karpenter has no limit in dollars, kubernetes-sigs/karpenter
#1215). Karpenter admits a new NodeClaim while its instance type's *capacity* fits what is left of
every limited resource, so a pool filled with one type holds ``min(limit ÷ capacity)`` whole nodes
(and no more than ``limits.nodes``). The compatible types are those the pool's NodeClaim template
keeps (its requirements, an available offering, the EC2NodeClass's types as the plan mapped them).
Each is priced as it would launch alone: spot when the pool allows it and a spot offering is no
dearer than the type's cheapest on-demand one (the launch drops dearer spot offerings), else
on-demand; reserved capacity is not modelled.

The cheapest type is the one whose price per unit of the limit is lowest (its cheapest offering ×
the nodes, fractional, that reach the first limit), the dearest the one whose is highest (at its
dearest offering: a spot price varies by zone); each is then shown as the whole nodes the limit
admits. Ranking per unit keeps a big type that fits the limit once, leaving most of it unused, from
passing for cheap. Types whose capacity alone exceeds a limit never launch and are counted apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH, ON_DEMAND, SPOT, Offering
from karpenter_gitops.karpenter.scheduling.scheduler import NODES
from karpenter_gitops.karpenter.scheduling.type_index import Catalogue, bits

_PRICED = (resources.CPU, resources.MEMORY)  # a pool gets a limit cost when it limits one of these


@dataclass(frozen=True)
class Fill:
    """A pool at its limit with one instance type: how many nodes, bought how, at what price each."""

    instance_type: str
    capacity_type: str
    nodes: int
    price: float  # per node and hour

    @property
    def hourly(self) -> float:
        return self.nodes * self.price

    def to_json(self) -> dict[str, Any]:
        return {
            "instanceType": self.instance_type,
            "capacityType": self.capacity_type,
            "nodes": self.nodes,
            "pricePerNode": round(self.price, 6),
            "pricePerHour": round(self.hourly, 6),
            "pricePerMonth": round(self.hourly * HOURS_PER_MONTH, 6),
        }


@dataclass(frozen=True)
class LimitCost:
    """One limited NodePool's cost at its limit; no fills when no compatible type fits under it."""

    node_pool: str
    limits: Mapping[str, int]  # milli-units, as spec.limits parses
    cheapest: Fill | None
    dearest: Fill | None
    types: int  # compatible types that fit under the limit
    too_large: int  # compatible types whose capacity alone exceeds a limit

    def to_json(self) -> dict[str, Any]:
        return {
            "limits": resources.as_quantities(self.limits),
            "instanceTypes": self.types,
            "exceedingLimits": self.too_large,
            "cheapest": self.cheapest.to_json() if self.cheapest else None,
            "dearest": self.dearest.to_json() if self.dearest else None,
        }


def nodes_within(limits: Mapping[str, int], capacity: Mapping[str, int]) -> float:
    """How many nodes of ``capacity`` reach the first limit (fractional; whole nodes are its floor)."""
    counts = [limit / capacity[name] for name, limit in limits.items() if name != NODES and capacity.get(name, 0) > 0]
    if NODES in limits:
        counts.append(limits[NODES] // resources.milli(1))
    return max(min(counts, default=0.0), 0.0)


def priced(offerings: Iterable[Offering]) -> tuple[str, float, float] | None:
    """How one type launches alone among ``offerings`` (its available ones the pool allows): capacity type, lowest and highest price."""
    on_demand = [o.price for o in offerings if o.capacity_type == ON_DEMAND]
    ceiling = min(on_demand, default=float("inf"))
    spot = [o.price for o in offerings if o.capacity_type == SPOT and o.price <= ceiling]
    if spot:
        return SPOT, min(spot), max(spot)
    if on_demand:
        return ON_DEMAND, min(on_demand), max(on_demand)
    return None


def limit_cost(
    node_pool: str, limits: Mapping[str, int] | None, catalogue: Catalogue, requirements: Requirements, options: int
) -> LimitCost | None:
    """The cost at ``limits`` of a pool whose template keeps the types ``options`` of ``catalogue``;
    None when the pool limits neither cpu nor memory."""
    if limits is None or not any(name in limits for name in _PRICED):
        return None
    allowed = catalogue.allowed_offerings(requirements)
    low: list[tuple[float, Fill]] = []  # (price at the limit, fractional), the fill in whole nodes
    high: list[tuple[float, Fill]] = []
    too_large = 0
    for index in bits(options):
        instance_type = catalogue.types[index]
        launch = priced(catalogue.offerings_within(index, allowed))
        if launch is None:
            continue
        nodes = nodes_within(limits, instance_type.capacity)
        if nodes < 1:
            too_large += 1
            continue
        capacity_type, cheapest, dearest = launch
        low.append((nodes * cheapest, Fill(instance_type.name, capacity_type, int(nodes), cheapest)))
        high.append((nodes * dearest, Fill(instance_type.name, capacity_type, int(nodes), dearest)))
    return LimitCost(
        node_pool, dict(limits),
        min(low, key=lambda pair: (pair[0], pair[1].instance_type), default=(0.0, None))[1],
        max(high, key=lambda pair: (pair[0], pair[1].instance_type), default=(0.0, None))[1],
        len(low), too_large,
    )  # fmt: skip
