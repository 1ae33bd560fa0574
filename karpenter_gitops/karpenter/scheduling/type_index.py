"""One EC2NodeClass's instance types, indexed so the scheduler never scans them one by one per pod.

A set of instance types is an ``int`` bit mask (bit *i* is ``types[i]``). Each question the
scheduler asks of a type has an index answering it for all types at once:

* requirements: per label key, the types grouped by their value set; ``matching(requirements)``
  ANDs one cached mask per (key, allowed values) — Karpenter's ``Intersects`` for every type;
* offerings: ``with_offering(requirements)`` ORs the types having an available offering in each
  compatible (zone, capacity type);
* resources: per resource, the types sorted by allocatable with suffix masks, so "allocatable ≥ x"
  is one bisection; ``fitting(total, overhead)`` is Karpenter's ``resources.Fits`` for every type;
  capacity is indexed the same way for NodePool limits.

Masks are cheap to AND (a 1,000-type catalogue is a 1,000-bit integer), so narrowing a NodeClaim
as pods are added costs a handful of integer operations, not a pass over the catalogue.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling.nodes import InstanceType, Offering

#: The keys an offering's requirements carry (Karpenter's base offerings: zone, capacity type, zone id,
#: and DoesNotExist for the reservation labels).
OFFERING_KEYS = (
    labels.ZONE,
    labels.CAPACITY_TYPE,
    labels.ZONE_ID,
    labels.CAPACITY_RESERVATION_ID,
    labels.CAPACITY_RESERVATION_TYPE,
    labels.CAPACITY_RESERVATION_INTERRUPTIBLE,
)
_ABSENT = ValueSet(False)


def bits(mask: int) -> Iterator[int]:
    """The positions set in ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def offering_requirements(offering: Offering) -> Requirements:
    pairs = [
        (labels.ZONE, ValueSet(False, frozenset((offering.zone,)))),
        (labels.CAPACITY_TYPE, ValueSet(False, frozenset((offering.capacity_type,)))),
        (labels.CAPACITY_RESERVATION_ID, _ABSENT),
        (labels.CAPACITY_RESERVATION_TYPE, _ABSENT),
        (labels.CAPACITY_RESERVATION_INTERRUPTIBLE, _ABSENT),
    ]
    if offering.zone_id:
        pairs.append((labels.ZONE_ID, ValueSet(False, frozenset((offering.zone_id,)))))
    return Requirements(pairs)


def offering_compatible(requirements: Requirements, offering: Requirements) -> bool:
    """``requirements.IsCompatible(offering, AllowUndefinedWellKnownLabels)``: every offering key is well known."""
    for key, theirs in offering.items():
        mine = requirements.get(key)
        if mine is not None and not mine.overlaps(theirs) and not (mine.tolerates_absence and theirs.tolerates_absence):
            return False
    return True


class _Sorted:
    """Types sorted by one resource, with suffix masks: the types holding at least a given amount."""

    __slots__ = ("values", "suffix", "prefix")

    def __init__(self, amounts: Sequence[int]):
        order = sorted(range(len(amounts)), key=amounts.__getitem__)
        self.values = [amounts[i] for i in order]
        self.suffix = [0] * (len(order) + 1)
        for rank in range(len(order) - 1, -1, -1):
            self.suffix[rank] = self.suffix[rank + 1] | (1 << order[rank])
        self.prefix = [0] * (len(order) + 1)
        for rank, index in enumerate(order):
            self.prefix[rank + 1] = self.prefix[rank] | (1 << index)

    def at_least(self, amount: int) -> int:
        return self.suffix[bisect.bisect_left(self.values, amount)]

    def at_most(self, amount: int) -> int:
        return self.prefix[bisect.bisect_right(self.values, amount)]


class Catalogue:
    """The instance types of one EC2NodeClass, with the indexes above."""

    def __init__(self, types: Sequence[InstanceType]):
        self.types = tuple(types)
        self.all = (1 << len(self.types)) - 1
        self.position = {t.name: i for i, t in enumerate(self.types)}
        self._by_key: dict[str, tuple[dict[ValueSet, int], int]] = {}
        self._matching: dict[tuple[str, ValueSet], int] = {}
        self._allocatable: dict[str, _Sorted] = {}
        self._capacity: dict[str, _Sorted] = {}
        self._offerings: dict[Requirements, int] = {}  # offering requirements → the types with it available
        for i, instance_type in enumerate(self.types):
            for offering in instance_type.offerings:
                key = offering_requirements(offering)
                self._offerings[key] = self._offerings.get(key, 0) | ((1 << i) if offering.available else 0)
        self._offering_cache: dict[tuple[ValueSet | None, ...], int] = {}  # by the requirements on OFFERING_KEYS
        self._requirements_cache: dict[Requirements, int] = {}
        self._allowed: dict[Requirements, frozenset[tuple[str, str, str | None]]] = {}
        self._places = {offering_requirements(o): (o.zone, o.capacity_type, o.zone_id) for t in self.types for o in t.offerings}
        self.non_negative = sum(1 << i for i, t in enumerate(self.types) if all(v >= 0 for v in t.allocatable.values()))

    def __len__(self) -> int:
        return len(self.types)

    # --- requirements ---------------------------------------------------------------------------

    def _groups(self, key: str) -> tuple[dict[ValueSet, int], int]:
        """The types by their value set for ``key``, and the mask of types not defining it."""
        if key not in self._by_key:
            groups: dict[ValueSet, int] = {}
            undefined = 0
            for i, instance_type in enumerate(self.types):
                allowed = instance_type.requirements.get(key)
                if allowed is None:
                    undefined |= 1 << i
                else:
                    groups[allowed] = groups.get(allowed, 0) | (1 << i)
            self._by_key[key] = (groups, undefined)
        return self._by_key[key]

    def matching_key(self, key: str, wanted: ValueSet) -> int:
        """Types whose requirement on ``key`` intersects ``wanted`` (or that do not define ``key``)."""
        cache_key = (key, wanted)
        mask = self._matching.get(cache_key)
        if mask is None:
            groups, mask = self._groups(key)
            for offered, members in groups.items():
                if offered.overlaps(wanted) or (offered.tolerates_absence and wanted.tolerates_absence):
                    mask |= members
            self._matching[cache_key] = mask
        return mask

    def matching(self, requirements: Requirements) -> int:
        """Karpenter's ``instanceType.Requirements.Intersects(requirements) == nil``, for every type at once."""
        mask = self._requirements_cache.get(requirements)
        if mask is None:
            mask = self.all
            for key, wanted in requirements.items():
                mask &= self.matching_key(key, wanted)
                if not mask:
                    break
            self._requirements_cache[requirements] = mask
        return mask

    def values(self, key: str) -> dict[str, int]:
        """Each value ``key`` takes across the types, with the types taking it (for minValues)."""
        groups, _ = self._groups(key)
        out: dict[str, int] = {}
        for offered, members in groups.items():
            if not offered.complement:
                for value in offered.values:
                    out[value] = out.get(value, 0) | members
        return out

    def distinct_values(self, key: str, allowed: ValueSet, mask: int) -> int:
        """How many values of ``key`` allowed by ``allowed`` the types in ``mask`` offer (``SatisfiesMinValues``)."""
        return sum(1 for value, members in self.values(key).items() if members & mask and allowed.has(value))

    def min_values_shortfall(self, requirements: Requirements, mask: int) -> tuple[str | None, dict[str, int]]:
        """``SatisfiesMinValues`` over ``mask``: Karpenter's error, and what each short key can reach."""
        short = {}
        for key, allowed in requirements.items():
            if allowed.min_values is not None:
                found = self.distinct_values(key, allowed, mask)
                if found < allowed.min_values:
                    short[key] = found
        if not short:
            return None, {}
        return f"minValues requirement is not met for label(s) (label(s)=[{' '.join(sorted(short))}])", short

    # --- offerings ------------------------------------------------------------------------------

    def with_offering(self, requirements: Requirements) -> int:
        """Types with an available offering compatible with ``requirements``."""
        key = tuple(requirements.get(k) for k in OFFERING_KEYS)
        mask = self._offering_cache.get(key)
        if mask is None:
            mask = 0
            for offering, available in self._offerings.items():
                if offering_compatible(requirements, offering):
                    mask |= available
            self._offering_cache[key] = mask
        return mask

    def allowed_offerings(self, requirements: Requirements) -> frozenset[tuple[str, str, str | None]]:
        """The (zone, capacity type, zone id) of every offering compatible with ``requirements``."""
        allowed = self._allowed.get(requirements)
        if allowed is None:
            allowed = self._allowed[requirements] = frozenset(
                place for offering, place in self._places.items() if offering_compatible(requirements, offering)
            )
        return allowed

    def offerings_within(self, index: int, allowed: frozenset[tuple[str, str, str | None]]) -> list[Offering]:
        """The available offerings of ``types[index]`` among ``allowed`` places."""
        return [o for o in self.types[index].offerings if o.available and (o.zone, o.capacity_type, o.zone_id) in allowed]

    def by_price(self, mask: int, requirements: Requirements) -> list[int]:
        """The types of ``mask`` by their cheapest offering within ``requirements`` (``OrderByPrice``; ties by name)."""
        allowed = self.allowed_offerings(requirements)

        def cheapest(index: int) -> float:
            return min((o.price for o in self.offerings_within(index, allowed)), default=float("inf"))

        return sorted(bits(mask), key=lambda i: (cheapest(i), self.types[i].name))

    # --- resources ------------------------------------------------------------------------------

    def _index(self, cache: dict[str, _Sorted], name: str, attribute: str) -> _Sorted:
        index = cache.get(name)
        if index is None:
            index = cache[name] = _Sorted([getattr(t, attribute).get(name, 0) for t in self.types])
        return index

    def allocatable_at_least(self, name: str, amount: int) -> int:
        return self._index(self._allocatable, name, "allocatable").at_least(amount)

    def capacity_at_most(self, name: str, amount: int) -> int:
        return self._index(self._capacity, name, "capacity").at_most(amount)

    def fitting(self, total: Mapping[str, int], overhead: Mapping[str, int] | None = None) -> int:
        """Types where ``total + overhead`` fits the allocatable (``resources.Fits``), nothing negative in it."""
        mask = self.non_negative
        keys = total.keys() | overhead.keys() if overhead else total.keys()
        for name in keys:
            amount = total.get(name, 0) + (overhead.get(name, 0) if overhead else 0)
            if amount > 0:
                mask &= self.allocatable_at_least(name, amount)
                if not mask:
                    break
        return mask

    def within_limits(self, remaining: Mapping[str, int]) -> int:
        """Types whose *capacity* exceeds no remaining NodePool limit (``filterByRemainingResources``)."""
        mask = self.all
        for name, amount in remaining.items():
            mask &= self.capacity_at_most(name, amount)
        return mask

    def max_capacity(self, mask: int, names: Iterable[str]) -> dict[str, int]:
        """The largest capacity per resource among the types in ``mask`` (``subtractMax``)."""
        out: dict[str, int] = {}
        for name in names:
            out[name] = max((self.types[i].capacity.get(name, 0) for i in bits(mask)), default=0)
        return out
