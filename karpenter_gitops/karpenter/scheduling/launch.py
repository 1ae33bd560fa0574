"""What the AWS provider launches for a NodeClaim, and at what price (``providers/instance``, v1.15.0).

The NodeClaim carries its cheapest 600 instance types (``ToNodeClaim``) and the capacity types their
offerings allow. The launch then keeps the types that fit the NodeClaim's requests and have an
offering; drops metal and accelerator types while others remain; drops spot offerings dearer than
the cheapest on-demand one (when both are allowed and no ``minValues`` is set); keeps the 60
cheapest; and picks the capacity type: spot whenever any spot offering is left, else on-demand.
CreateFleet then chooses: on-demand ``lowest-price`` takes the cheapest (type, zone); spot
``price-capacity-optimized`` takes one of the candidates, so a spot NodeClaim is a price range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.nodes import ON_DEMAND, SPOT
from karpenter_gitops.karpenter.scheduling.type_index import Catalogue

LAUNCH_MAX_INSTANCE_TYPES = 60  # the AWS provider's maxInstanceTypes
ICE = "all requested instance types were unavailable during launch"


@dataclass(frozen=True, order=True)
class Candidate:
    """One (instance type, zone) override of the CreateFleet request, at its price."""

    price: float
    instance_type: str
    zone: str

    def to_json(self) -> dict[str, Any]:
        return {"instanceType": self.instance_type, "zone": self.zone, "price": self.price}


@dataclass(frozen=True)
class Launch:
    """The launch of one NodeClaim: capacity type, the types asked for, and the overrides EC2 chooses among."""

    capacity_type: str | None
    instance_types: tuple[str, ...] = ()  # cheapest first (at most 60)
    candidates: tuple[Candidate, ...] = ()  # of the chosen capacity type, cheapest first
    error: str | None = None  # why the launch would fail (Karpenter's words)

    @property
    def cheapest(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def price_range(self) -> tuple[float, float]:
        """The hourly price: exact for on-demand (the cheapest override), a range for spot."""
        if not self.candidates:
            return 0.0, 0.0
        low = self.candidates[0].price
        return (low, low) if self.capacity_type == ON_DEMAND else (low, max(c.price for c in self.candidates))


def _pinned(requirements: Requirements, key: str, values: Sequence[str], min_values: int | None = None) -> Requirements:
    return requirements & Requirements([(key, ValueSet(False, frozenset(values), min_values=min_values))])


def launch(
    catalogue: Catalogue,
    ordered: Sequence[int],
    requirements: Requirements,
    requests: Mapping[str, int],
    min_values_strict: bool = True,
) -> Launch:
    """The launch of a NodeClaim whose options are ``ordered`` (cheapest first, already cut to 600)."""
    names = [catalogue.types[i].name for i in ordered]
    current = requirements.get(labels.INSTANCE_TYPE)
    node = _pinned(requirements, labels.INSTANCE_TYPE, names, current.min_values if current is not None else None)
    capacity_types = sorted(
        {o.capacity_type for i in ordered for o in catalogue.offerings_within(i, catalogue.allowed_offerings(node))}
    )
    if capacity_types:
        node = _pinned(node, labels.CAPACITY_TYPE, capacity_types)
    has_min_values = any(v.min_values is not None for v in node.values())

    mask = sum(1 << i for i in ordered)
    mask &= catalogue.matching(node) & catalogue.fitting(requests) & catalogue.with_offering(node)
    if not mask:
        return Launch(None, error=ICE)
    kept = [i for i in ordered if mask >> i & 1]
    allowed = catalogue.allowed_offerings(node)
    offerings = {i: catalogue.offerings_within(i, allowed) for i in kept}
    if not has_min_values:
        generic = [i for i in kept if not catalogue.types[i].exotic]
        kept = generic or kept
        allowed_types = node.get(labels.CAPACITY_TYPE)
        if allowed_types is not None and allowed_types.has(ON_DEMAND) and allowed_types.has(SPOT):
            on_demand = [o.price for i in kept for o in offerings[i] if o.capacity_type == ON_DEMAND]
            if on_demand and any(o.capacity_type == SPOT for i in kept for o in offerings[i]):
                ceiling = min(on_demand)
                offerings = {i: [o for o in offerings[i] if o.capacity_type != SPOT or o.price <= ceiling] for i in kept}
                kept = [
                    i for i in kept if any(o.capacity_type != SPOT or o.price <= ceiling for o in catalogue.types[i].offerings)
                ]
    kept = sorted(kept, key=lambda i: (min((o.price for o in offerings[i]), default=float("inf")), catalogue.types[i].name))
    kept = kept[:LAUNCH_MAX_INSTANCE_TYPES]
    if has_min_values and min_values_strict:
        short, _ = catalogue.min_values_shortfall(node, sum(1 << i for i in kept))
        if short:
            return Launch(
                None, error=f"truncating instance types based on the passed-in requirements, validating minValues, {short}"
            )
    allowed_types = node.get(labels.CAPACITY_TYPE)
    capacity_type = ON_DEMAND
    if (allowed_types is None or allowed_types.has(SPOT)) and any(o.capacity_type == SPOT for i in kept for o in offerings[i]):
        capacity_type = SPOT
    candidates = sorted(
        Candidate(o.price, catalogue.types[i].name, o.zone)
        for i in kept
        for o in offerings[i]
        if o.capacity_type == capacity_type
    )
    return Launch(capacity_type, tuple(catalogue.types[i].name for i in kept), tuple(candidates))


def utilisation(requests: Mapping[str, int], allocatable: Mapping[str, int]) -> dict[str, float]:
    """Requested share of the allocatable cpu and memory (daemons included when ``requests`` has them)."""
    return {
        name: requests.get(name, 0) / allocatable[name]
        for name in (resources.CPU, resources.MEMORY)
        if allocatable.get(name, 0) > 0
    }
