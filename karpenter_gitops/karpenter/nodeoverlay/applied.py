"""NodeOverlays applied to the instance types each NodePool can launch, as Karpenter's overlay controller does.

Mirrors ``pkg/controllers/nodeoverlay`` of sigs.k8s.io/karpenter (the same in v1.14.1 and v1.15.0):

* overlays are taken by weight, highest first (no weight counts as 0); on equal weight the name that
  sorts *later* goes first (``OrderByWeight``);
* an overlay matches per NodePool × instance type × offering: the instance type's requirements, plus
  ``karpenter.sh/nodepool`` and the pool template's labels, must be strictly compatible with the
  overlay's requirements (a key they do not define passes only under NotIn/DoesNotExist), then each
  offering (capacity type, zone, zone id) must intersect them;
* the first overlay that prices an offering wins (later ones only lower the weight on record);
  capacity merges per resource key, the first overlay to set a key wins (before 1.9, the last);
* an overlay whose weight equals the weight on record for an offering it prices, or whose capacity
  shares a key with the last capacity overlay applied to that instance type at the same weight,
  conflicts: it is checked against every pool first and, on a conflict, rejected whole
  (``ValidationSucceeded=False``, reason ``Conflict``).

Pure: the caller lists each pool's instance types with their offerings and base prices (``None``
where the price is not known offline); the result says what changed and what Karpenter reports.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.model import NodeOverlay
from karpenter_gitops.core.requirements import Requirements, ValueSet, incompatibility
from karpenter_gitops.core.resolved import Condition
from karpenter_gitops.core.versions import Release

NODEPOOL_LABEL = "karpenter.sh/nodepool"
VALIDATION_SUCCEEDED = "ValidationSucceeded"
#: Karpenter's reason and message for an overlay rejected for a conflict (controller.go, updateOverlayStatuses).
CONFLICT_REASON, CONFLICT_MESSAGE = "Conflict", "conflict with another overlay"
#: ... and for one its runtime validation refuses (the message is the validation's error).
RUNTIME_REASON = "RuntimeValidation"
ON_DEMAND, SPOT = "on-demand", "spot"


@dataclass(frozen=True)
class Overlay:
    """What of a NodeOverlay the controller reads."""

    name: str
    requirements: Requirements
    weight: int = 0
    price: str | None = None
    price_adjustment: str | None = None
    capacity: Mapping[str, str] | None = None  # None and {} differ: an empty map still counts as a capacity overlay

    @classmethod
    def of(cls, overlay: NodeOverlay) -> Overlay:
        """ValueError when a requirement cannot be evaluated (the API server refuses those)."""
        spec = overlay.spec
        requirements = Requirements(
            (r.key or "", ValueSet.of(r.operator or "", r.values or ())) for r in spec.requirements or () if r is not None
        )
        capacity = None if spec.capacity is None else {str(k): str(v) for k, v in spec.capacity.items()}
        return cls(overlay.name, requirements, spec.weight or 0, spec.price, spec.price_adjustment, capacity)

    @property
    def price_change(self) -> str | None:
        """The price or the adjustment, as the store keeps it (the CRD allows only one of them)."""
        return self.price if self.price is not None else self.price_adjustment


@dataclass(frozen=True)
class Offering:
    """One (capacity type, zone) of an instance type; ``price`` None: not known offline."""

    capacity_type: str
    zone: str
    price: float | None
    available: bool = True
    zone_id: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.capacity_type, self.zone

    @property
    def requirements(self) -> Requirements:
        return _offering_requirements(self.capacity_type, self.zone, self.zone_id)


@lru_cache(maxsize=1024)
def _offering_requirements(capacity_type: str, zone: str, zone_id: str | None) -> Requirements:
    """As the AWS provider builds an offering's: capacity type, zone, no reservation, the zone id where a
    subnet of the class has it. Shared by every instance type's offering of the same place."""
    pairs = [
        (labels.CAPACITY_TYPE, ValueSet(False, frozenset({capacity_type}))),
        (labels.ZONE, ValueSet(False, frozenset({zone}))),
        (labels.CAPACITY_RESERVATION_ID, ValueSet(False)),
        (labels.CAPACITY_RESERVATION_TYPE, ValueSet(False)),
        (labels.CAPACITY_RESERVATION_INTERRUPTIBLE, ValueSet(False)),
    ]
    if zone_id:
        pairs.append((labels.ZONE_ID, ValueSet(False, frozenset({zone_id}))))
    return Requirements(pairs)


@dataclass(frozen=True)
class InstanceType:
    name: str
    requirements: Requirements
    offerings: tuple[Offering, ...]
    capacity: Mapping[str, str] = field(default_factory=dict)  # extended resources, before and after overlays


@dataclass(frozen=True)
class PoolTypes:
    """The instance types Karpenter lists for one NodePool (all of its EC2NodeClass's, not only the ones its
    requirements allow), and the template labels the overlays may select on."""

    name: str
    instance_types: tuple[InstanceType, ...]
    labels: Mapping[str, str] = field(default_factory=dict)

    @cached_property
    def _own(self) -> Requirements:
        return Requirements(
            [(NODEPOOL_LABEL, ValueSet(False, frozenset({self.name})))]
            + [(key, ValueSet(False, frozenset({value}))) for key, value in self.labels.items()]
        )

    @cached_property
    def _merged(self) -> dict[str, Requirements]:
        return {}

    def requirements(self, instance_type: InstanceType) -> Requirements:
        """The instance type's requirements as the overlay controller matches them (pool name and labels added)."""
        if instance_type.name not in self._merged:
            self._merged[instance_type.name] = self._own & instance_type.requirements
        return self._merged[instance_type.name]


#: The extended resources the AWS provider puts in every instance type's capacity, from DescribeInstanceTypes
#: (``computeCapacity``); ``vpc.amazonaws.com/pod-eni`` needs its ENI table and is left out.
_GPU_RESOURCES = {"NVIDIA": "nvidia.com/gpu", "AMD": "amd.com/gpu", "Habana": "habana.ai/gaudi"}


def base_capacity(info: Mapping[str, Any], efa_only_interfaces: int | None = None) -> dict[str, str]:
    """What an overlay's capacity replaces: GPUs by maker, Neuron devices and cores, EFA interfaces (the class's
    efa-only interfaces when it lists network interfaces, else the type's maximum)."""
    gpus = dict.fromkeys(_GPU_RESOURCES.values(), 0)
    for gpu in info.get("GpuInfo", {}).get("Gpus", ()):
        if gpu.get("Manufacturer") in _GPU_RESOURCES:
            gpus[_GPU_RESOURCES[gpu["Manufacturer"]]] += gpu.get("Count", 0)
    devices = info.get("NeuronInfo", {}).get("NeuronDevices") or []
    cores = devices[0].get("Count", 0) * devices[0].get("CoreInfo", {}).get("Count", 0) if devices else 0
    efa = efa_only_interfaces
    if efa is None:
        efa = info.get("NetworkInfo", {}).get("EfaInfo", {}).get("MaximumEfaInterfaces", 0)
    counts = {
        **gpus,
        "aws.amazon.com/neuron": sum(d.get("Count", 0) for d in devices),
        "aws.amazon.com/neuroncore": cores,
        "vpc.amazonaws.com/efa": efa,
    }
    return {resource: str(count) for resource, count in counts.items()}


def adjusted_price(price: float | None, change: str) -> float | None:
    """Karpenter's ``AdjustedPrice``: an absolute price replaces; ``±N`` adds; ``±N%`` scales; never below 0.
    An adjustment of an unknown price stays unknown."""
    if not change:
        return price
    if not change.startswith(("+", "-")):
        return float(change)
    if price is None:
        return None
    if change.endswith("%"):
        adjusted = price * (1 + float(change[:-1]) / 100)
    else:
        adjusted = price + float(change)
    return adjusted if adjusted >= 0 else 0.0


#: From 1.14 an instance type without a known price (a preview type) takes the price of an overlay that
#: selects it by name alone (``GetOverlayPrice`` in the AWS provider's offering resolver).
BASE_PRICE_SINCE = Release((1, 14))
#: Before 1.13 the overlay controller gave up at the first NodePool whose instance types it could not list, and
#: the provisioner then skipped every NodePool as "awaiting nodeoverlay evaluation".
ISOLATED_POOLS_SINCE = Release((1, 13))
#: Before 1.9 a capacity key took the value of the last overlay applied to it, the lightest (kubernetes-sigs/karpenter#2764).
HEAVIEST_CAPACITY_SINCE = Release((1, 9))


def base_prices(overlays: Iterable[NodeOverlay], accepted: Collection[str]) -> dict[str, float]:
    """Instance type → price, from the accepted overlays (``ValidationSucceeded=True``) with an absolute price
    and exactly one requirement, ``node.kubernetes.io/instance-type In [...]``. Karpenter lists them by
    name, so on a type named twice the name that sorts later wins."""
    found: dict[str, float] = {}
    for overlay in sorted(overlays, key=lambda o: o.name):
        spec = overlay.spec
        requirements = spec.requirements or ()
        if overlay.name not in accepted or spec.price is None or len(requirements) != 1:
            continue
        only = requirements[0]
        if only is None or only.key != labels.INSTANCE_TYPE or only.operator != "In":
            continue
        try:
            price = float(spec.price)
        except ValueError:
            continue
        found.update((name, price) for name in only.values or ())
    return found


def ordered(overlays: Iterable[Overlay]) -> list[Overlay]:
    """Highest weight first; on equal weight the name that sorts later first."""
    return sorted(sorted(overlays, key=lambda o: o.name, reverse=True), key=lambda o: -o.weight)


# --- the controller's store ----------------------------------------------------------------


@dataclass
class _PriceRecord:
    change: str
    overlay: str  # who set the price
    weight: int  # the lowest weight that touched the offering so far
    last: str  # the overlay of that weight


@dataclass
class _CapacityRecord:
    values: dict[str, tuple[str, str]] = field(default_factory=dict)  # resource → (quantity, overlay)
    last_resources: frozenset[str] = frozenset()  # the resources of the last capacity overlay applied
    last_weight: int = 0
    last: str = ""


@dataclass
class _TypeRecord:
    prices: dict[tuple[str, str], _PriceRecord] = field(default_factory=dict)
    capacity: _CapacityRecord = field(default_factory=_CapacityRecord)


@dataclass(frozen=True)
class Conflict:
    """Why an overlay was rejected: the first clash found, with the overlay it clashed with."""

    overlay: str
    other: str
    node_pool: str
    instance_type: str
    what: str  # e.g. "the price of spot in us-west-2a" or "capacity smarter-devices/fuse"
    field: str  # spec.price, spec.priceAdjustment or spec.capacity

    def to_json(self) -> dict[str, Any]:
        return {"with": self.other, "nodePool": self.node_pool, "instanceType": self.instance_type, "what": self.what}


@dataclass(frozen=True)
class PriceChange:
    instance_type: str
    offering: Offering  # after the change
    before: float | None
    overlay: str
    change: str  # the overlay's price or priceAdjustment


@dataclass(frozen=True)
class CapacityChange:
    instance_type: str
    resource: str
    quantity: str
    overlay: str
    before: str | None = None  # the instance type's own value, when it has one


@dataclass(frozen=True)
class Outcome:
    """What the controller stores and reports."""

    conditions: Mapping[str, Condition]  # per overlay evaluated: ValidationSucceeded
    conflicts: Mapping[str, Conflict]
    matched: Mapping[str, frozenset[tuple[str, str]]]  # overlay → (pool, instance type) it matched, conflicts included
    pools: Mapping[str, Mapping[str, InstanceType]]  # per pool, its instance types with the overlays applied
    price_changes: Mapping[str, tuple[PriceChange, ...]]
    capacity_changes: Mapping[str, tuple[CapacityChange, ...]]


class _Store:
    def __init__(self, heaviest_capacity: bool = True) -> None:
        self.types: dict[tuple[str, str], _TypeRecord] = {}
        self.heaviest_capacity = heaviest_capacity

    def record(self, pool: str, instance_type: str) -> _TypeRecord | None:
        return self.types.get((pool, instance_type))

    def price_conflict(self, pool: str, instance_type: str, offerings: Sequence[Offering], overlay: Overlay) -> Conflict | None:
        record = self.record(pool, instance_type)
        if overlay.price_change is None or record is None:
            return None
        for offering in offerings:
            held = record.prices.get(offering.key)
            if held is not None and held.weight == overlay.weight:
                what = f"the price of {offering.capacity_type} in {offering.zone}"
                return Conflict(
                    overlay.name,
                    held.last,
                    pool,
                    instance_type,
                    what,
                    "spec.price" if overlay.price is not None else "spec.priceAdjustment",
                )
        return None

    def capacity_conflict(self, pool: str, instance_type: str, overlay: Overlay) -> Conflict | None:
        record = self.record(pool, instance_type)
        if overlay.capacity is None or record is None or record.capacity.last_weight != overlay.weight:
            return None
        shared = sorted(set(overlay.capacity) & record.capacity.last_resources)
        if not shared:
            return None
        return Conflict(overlay.name, record.capacity.last, pool, instance_type, f"capacity {shared[0]}", "spec.capacity")

    def store(self, pool: str, instance_type: str, offerings: Sequence[Offering], overlay: Overlay) -> None:
        change = overlay.price_change
        if change is None and overlay.capacity is None:
            return
        record = self.types.setdefault((pool, instance_type), _TypeRecord())
        if change is not None:
            for offering in offerings:
                held = record.prices.get(offering.key)
                if held is None:
                    record.prices[offering.key] = _PriceRecord(change, overlay.name, overlay.weight, overlay.name)
                else:
                    held.weight, held.last = overlay.weight, overlay.name
        if overlay.capacity is not None:
            capacity = record.capacity
            for resource, quantity in overlay.capacity.items():
                if self.heaviest_capacity:
                    capacity.values.setdefault(resource, (quantity, overlay.name))
                else:
                    capacity.values[resource] = (quantity, overlay.name)
            capacity.last_resources, capacity.last_weight, capacity.last = (
                frozenset(overlay.capacity),
                overlay.weight,
                overlay.name,
            )


def _matching_offerings(pool: PoolTypes, instance_type: InstanceType, overlay: Overlay) -> tuple[Offering, ...]:
    """``getOverlaidOfferings``: none when the instance type does not match, else the offerings that do."""
    if incompatibility(pool.requirements(instance_type), overlay.requirements) is not None:
        return ()
    return tuple(o for o in instance_type.offerings if overlay.requirements.conflict(o.requirements) is None)


def apply(overlays: Iterable[Overlay], pools: Sequence[PoolTypes], *, heaviest_capacity: bool = True) -> Outcome:
    """Every overlay, in the controller's order, checked against every pool and stored when it does not conflict.
    ``heaviest_capacity`` False: a capacity key keeps the value of the last overlay applied (Karpenter before 1.9)."""
    store = _Store(heaviest_capacity)
    conditions: dict[str, Condition] = {}
    conflicts: dict[str, Conflict] = {}
    matched: dict[str, frozenset[tuple[str, str]]] = {}
    for overlay in ordered(overlays):
        matches = [
            (pool, it, offerings)
            for pool in pools
            for it in pool.instance_types
            if (offerings := _matching_offerings(pool, it, overlay))
        ]
        matched[overlay.name] = frozenset((pool.name, it.name) for pool, it, _ in matches)
        conflict = next(
            (
                found
                for pool, it, offerings in matches
                if (
                    found := store.price_conflict(pool.name, it.name, offerings, overlay)
                    or store.capacity_conflict(pool.name, it.name, overlay)
                )
            ),
            None,
        )
        if conflict is not None:
            conflicts[overlay.name] = conflict
            conditions[overlay.name] = Condition(VALIDATION_SUCCEEDED, "False", CONFLICT_REASON, CONFLICT_MESSAGE)
            continue
        for pool, it, offerings in matches:
            store.store(pool.name, it.name, offerings, overlay)
        conditions[overlay.name] = Condition(VALIDATION_SUCCEEDED, "True", VALIDATION_SUCCEEDED)
    return _outcome(store, pools, conditions, conflicts, matched)


def _outcome(
    store: _Store,
    pools: Sequence[PoolTypes],
    conditions: Mapping[str, Condition],
    conflicts: Mapping[str, Conflict],
    matched: Mapping[str, frozenset[tuple[str, str]]],
) -> Outcome:
    applied: dict[str, dict[str, InstanceType]] = {}
    prices: dict[str, list[PriceChange]] = {}
    capacities: dict[str, list[CapacityChange]] = {}
    for pool in pools:
        types = applied.setdefault(pool.name, {})
        for it in pool.instance_types:
            record = store.record(pool.name, it.name)
            if record is None:
                types[it.name] = it
                continue
            offerings = []
            for offering in it.offerings:
                held = record.prices.get(offering.key)
                if held is None:
                    offerings.append(offering)
                    continue
                changed = replace(offering, price=adjusted_price(offering.price, held.change))
                offerings.append(changed)
                prices.setdefault(pool.name, []).append(PriceChange(it.name, changed, offering.price, held.overlay, held.change))
            capacity = {resource: quantity for resource, (quantity, _) in record.capacity.values.items()}
            capacities.setdefault(pool.name, []).extend(
                CapacityChange(it.name, resource, quantity, overlay, it.capacity.get(resource))
                for resource, (quantity, overlay) in sorted(record.capacity.values.items())
            )
            types[it.name] = replace(it, offerings=tuple(offerings), capacity={**it.capacity, **capacity})
    return Outcome(
        conditions=conditions,
        conflicts=conflicts,
        matched=matched,
        pools=applied,
        price_changes={name: tuple(found) for name, found in prices.items()},
        capacity_changes={name: tuple(found) for name, found in capacities.items()},
    )


# --- what a pool launches first -------------------------------------------------------------


@dataclass(frozen=True)
class FirstChoice:
    """The cheapest launchable offering of a pool, as ``OrderByPrice`` ranks instance types: by the lowest price
    of an available offering the pool's requirements admit. Ties keep every tied type (Karpenter's sort is
    not stable, so any of them may come first)."""

    price: float
    instance_types: tuple[str, ...]
    capacity_type: str
    unknown_spot: bool = False  # the pool allows spot, whose prices are not known offline

    def describe(self) -> str:
        """``m5.large at $0.096/h on-demand``; a long tie is shortened."""
        shown = ", ".join(self.instance_types[:3])
        if len(self.instance_types) > 3:
            shown += f" (+{len(self.instance_types) - 3} tied)"
        return f"{shown} at ${self.price:.6g}/h {self.capacity_type}"

    def to_json(self) -> dict[str, Any]:
        return {
            "instanceTypes": list(self.instance_types),
            "price": round(self.price, 6),
            "capacityType": self.capacity_type,
            **({"spotPricesUnknown": True} if self.unknown_spot else {}),
        }


def first_choice(instance_types: Iterable[InstanceType], required: Requirements) -> FirstChoice | None:
    """The cheapest known price among the available offerings ``required`` admits; None when no price is known."""
    best: dict[str, tuple[float, str]] = {}
    unknown_spot = False
    for it in instance_types:
        for offering in it.offerings:
            if not offering.available or required.conflict(offering.requirements) is not None:
                continue
            if offering.price is None:
                unknown_spot |= offering.capacity_type == SPOT
                continue
            if it.name not in best or offering.price < best[it.name][0]:
                best[it.name] = (offering.price, offering.capacity_type)
    if not best:
        return None
    cheapest = min(price for price, _ in best.values())
    tied = sorted(name for name, (price, _) in best.items() if math.isclose(price, cheapest, rel_tol=0, abs_tol=1e-9))
    return FirstChoice(cheapest, tuple(tied), best[tied[0]][1], unknown_spot)
