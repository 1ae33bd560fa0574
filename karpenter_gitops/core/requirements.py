"""Node requirements (label key, operator, values), as Karpenter's scheduling package has them.

``Requirement`` is the wire form (one entry of ``status.amis[].requirements`` or of a NodePool).
``ValueSet`` is what one key may take once operators are normalised, and ``Requirements`` is the
per-key collection the scheduler reasons with: entries on the same key are intersected, ``Gt``
becomes ``Gte`` value+1 and ``Lt`` becomes ``Lte`` value-1, and the beta label aliases are mapped to
their stable keys. Strict AMI matching (``compatible``) and NodePool ``minValues`` live here too.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from karpenter_gitops.core.model import NodePool

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT, GTE, LTE = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"

# Deprecated label keys Karpenter rewrites to their stable form before any comparison.
NORMALISED_KEYS = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
}


@dataclass(frozen=True, order=True)
class Requirement:
    """One requirement (key, operator, values), as Karpenter compares them."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "operator": self.operator, "values": list(self.values)}


def normalised_key(key: str) -> str:
    return NORMALISED_KEYS.get(key, key)


def _within(value: str, gte: int | None, lte: int | None) -> bool:
    if gte is None and lte is None:
        return True
    try:
        number = int(value)
    except ValueError:  # bounds only admit integers
        return False
    return (gte is None or number >= gte) and (lte is None or number <= lte)


@dataclass(frozen=True)
class ValueSet:
    """The values one label key may take.

    Either a finite set (``complement`` false: ``In``; empty means ``DoesNotExist``) or everything
    except a set (``complement`` true: ``NotIn``; empty means ``Exists``), optionally bounded by
    inclusive integer limits. ``min_values`` rides along from a NodePool requirement.
    """

    complement: bool
    values: frozenset[str] = frozenset()
    gte: int | None = None
    lte: int | None = None
    min_values: int | None = None

    @classmethod
    def of(cls, operator: str | None, values: Iterable[str] = (), min_values: int | None = None) -> ValueSet:
        """What ``operator`` over ``values`` allows; an unknown operator, or none, is refused with ValueError."""
        given, values = tuple(values), frozenset(values)
        if operator == IN:
            return cls(False, values, min_values=min_values)
        if operator == NOT_IN:
            return cls(True, values, min_values=min_values)
        if operator == EXISTS:
            return cls(True, min_values=min_values)
        if operator == DOES_NOT_EXIST:
            return cls(False, min_values=min_values)
        if len(given) != 1 or not given[0].isdigit():  # the CRD's CEL rule; say so rather than guess
            raise ValueError(f"operator {operator} needs a single non-negative integer value, got {list(given)}")
        bound = int(given[0])
        if operator in (GT, GTE):
            return cls(True, gte=bound + (operator == GT), min_values=min_values)
        if operator in (LT, LTE):
            return cls(True, lte=bound - (operator == LT), min_values=min_values)
        raise ValueError(f"unknown requirement operator {operator!r}")

    @property
    def is_empty(self) -> bool:
        """No value (and not even absence-tolerance) can satisfy both sides of an intersection."""
        return not self.complement and not self.values

    @property
    def tolerates_absence(self) -> bool:
        """``NotIn`` or ``DoesNotExist``: a node without the label satisfies it."""
        return self.complement == bool(self.values)

    @property
    def operator(self) -> str:
        if self.complement:
            return NOT_IN if self.values else EXISTS
        return IN if self.values else DOES_NOT_EXIST

    def has(self, value: str) -> bool:
        if self.complement:
            return value not in self.values and _within(value, self.gte, self.lte)
        return value in self.values

    def overlaps(self, other: ValueSet) -> bool:
        """``not (self & other).is_empty``, without building the intersection (the hot path)."""
        if self.complement and other.complement:
            gte, lte = self._tightest_bounds(other)
            return gte is None or lte is None or gte <= lte
        if self.complement:
            return any(self.has(value) for value in other.values)
        if other.complement:
            return any(other.has(value) for value in self.values)
        return not self.values.isdisjoint(other.values)

    def _tightest_bounds(self, other: ValueSet) -> tuple[int | None, int | None]:
        gte = max((b for b in (self.gte, other.gte) if b is not None), default=None)
        lte = min((b for b in (self.lte, other.lte) if b is not None), default=None)
        return gte, lte

    def __and__(self, other: ValueSet) -> ValueSet:
        gte, lte = self._tightest_bounds(other)
        min_values = max((m for m in (self.min_values, other.min_values) if m is not None), default=None)
        if gte is not None and lte is not None and gte > lte:
            return ValueSet(False, min_values=min_values)
        complement = self.complement and other.complement
        if complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        values = frozenset(v for v in values if _within(v, gte, lte))
        if not complement:  # a concrete set has already been filtered by the bounds
            gte = lte = None
        return ValueSet(complement, values, gte, lte, min_values)

    def __str__(self) -> str:
        text = self.operator
        if self.values:
            text += " [" + ", ".join(sorted(self.values)) + "]"
        if self.gte is not None:
            text += f" >={self.gte}"
        if self.lte is not None:
            text += f" <={self.lte}"
        return text


class Requirements(Mapping[str, ValueSet]):
    """Immutable, hashable key → ``ValueSet`` map; repeated keys are intersected."""

    __slots__ = ("_by_key", "_hash")

    def __init__(self, pairs: Iterable[tuple[str, ValueSet]] = ()):
        by_key: dict[str, ValueSet] = {}
        for key, allowed in pairs:
            key = normalised_key(key)
            by_key[key] = by_key[key] & allowed if key in by_key else allowed
        self._by_key = by_key
        self._hash: int | None = None

    @classmethod
    def of(cls, requirements: Iterable[Requirement]) -> Requirements:
        return cls((r.key, ValueSet.of(r.operator, r.values)) for r in requirements)

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> Requirements:
        """A node's labels as requirements (what Karpenter matches AMIs against for real nodes)."""
        return cls((key, ValueSet(False, frozenset((value,)))) for key, value in labels.items())

    @classmethod
    def from_node_pool(cls, node_pool: NodePool) -> Requirements:
        """A NodePool's requirements (with ``minValues``) plus its template labels as ``In``."""
        template = node_pool.spec.template
        spec_requirements = (template and template.spec and template.spec.requirements) or ()
        labels = (template and template.metadata and template.metadata.labels) or {}
        return cls(
            # A requirement without a key (the API server refuses it) constrains no label.
            [(r.key, ValueSet.of(r.operator, r.values or (), r.min_values)) for r in spec_requirements if r.key is not None]
            + [(key, ValueSet(False, frozenset((value,)))) for key, value in labels.items()]
        )

    def __getitem__(self, key: str) -> ValueSet:
        return self._by_key[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._by_key.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirements) and self._by_key == other._by_key

    def __and__(self, other: Requirements) -> Requirements:
        return Requirements([*self._by_key.items(), *other._by_key.items()])

    def __repr__(self) -> str:
        return "Requirements(" + ", ".join(f"{k} {v}" for k, v in sorted(self._by_key.items())) + ")"

    def conflict(self, other: Requirements) -> str | None:
        """Why the two sets share no node (Karpenter ``Intersects``); keys only one side defines pass."""
        for key in self._by_key.keys() & other._by_key.keys():
            mine, theirs = self._by_key[key], other._by_key[key]
            if not mine.overlaps(theirs) and not (mine.tolerates_absence and theirs.tolerates_absence):
                return f"{key} {theirs} not in {key} {mine}"
        return None

    def intersects(self, other: Requirements) -> bool:
        return self.conflict(other) is None

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether a node carrying exactly ``labels`` satisfies every requirement."""
        for key, allowed in self._by_key.items():
            value = labels.get(key)
            if not (allowed.tolerates_absence if value is None else allowed.has(value)):
                return False
        return True


def incompatibility(instance_type: Requirements, ami: Requirements) -> str | None:
    """Why an instance type cannot use an AMI under strict ``Compatible`` (no undefined keys allowed).

    Every AMI key must be defined by the instance type unless the AMI only excludes values
    (``NotIn``/``DoesNotExist``); shared keys must then intersect.
    """
    for key, wanted in ami.items():
        if key not in instance_type and not wanted.tolerates_absence:
            return f'label "{key}" does not have known values'
    return instance_type.conflict(ami)


def compatible(instance_type: Requirements, ami: Requirements) -> bool:
    return incompatibility(instance_type, ami) is None


@dataclass(frozen=True)
class MinValuesShortfall:
    """A NodePool ``minValues`` the candidate instance types cannot cover."""

    key: str
    required: int
    available: int

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "minValues": self.required, "available": self.available}


def min_values_shortfalls(required: Requirements, candidates: Iterable[Requirements]) -> tuple[MinValuesShortfall, ...]:
    """Keys whose distinct values across ``candidates`` fall short of ``minValues`` (Strict policy)."""
    minimums = {key: allowed.min_values for key, allowed in required.items() if allowed.min_values}
    if not minimums:
        return ()
    seen: dict[str, set[str]] = {key: set() for key in minimums}
    for candidate in candidates:
        for key, values in seen.items():
            offered = candidate.get(key)
            if offered is not None and not offered.complement:
                values.update(offered.values)
    return tuple(
        MinValuesShortfall(key, minimum, len(seen[key])) for key, minimum in sorted(minimums.items()) if len(seen[key]) < minimum
    )
