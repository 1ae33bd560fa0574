"""Resource quantities as the scheduler adds and compares them: exact integers, never floats.

A quantity (``"250m"``, ``"1.5Gi"``, ``"2"``) becomes an integer number of *milli-units* (rounded up,
as Kubernetes' ``MilliValue``), so cpu, memory, pods and extended resources share one arithmetic and
every comparison is exact. A resource vector is a plain ``dict`` name → milli-units; Karpenter's
``ResourceList`` semantics hold: a missing key counts as zero, and a merge keeps the union of keys.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from fractions import Fraction

Vector = dict[str, int]

CPU, MEMORY, PODS, STORAGE = "cpu", "memory", "pods", "ephemeral-storage"
#: One pod slot (Karpenter adds ``pods: 1`` to every pod's requests).
ONE_POD = 1000
MILLI = 1000

_QUANTITY = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_RESOURCES = frozenset({MEMORY, STORAGE})


class QuantityError(ValueError):
    """Text that is not a Kubernetes resource quantity."""


def parse(text: object) -> Fraction:
    """A quantity (string or number, as YAML gives it) as an exact fraction of the unit."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise QuantityError(f"{text!r} is not a quantity")
    if isinstance(text, (int, float)):
        if isinstance(text, float) and not math.isfinite(text):
            raise QuantityError(f"{text!r} is not a quantity")
        return Fraction(text)
    match = _QUANTITY.match(text.strip())
    if not match:
        raise QuantityError(f"{text!r} is not a quantity")
    sign, number, suffix = match.group(1), match.group(2), match.group(3) or ""
    value = Fraction(number)
    if suffix in _BINARY:
        value *= 1024 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
    else:  # an exponent, e.g. 1e3
        value *= Fraction(10) ** int(suffix[1:])
    return -value if sign == "-" else value


def milli(text: object) -> int:
    """A quantity in milli-units, rounded up (Kubernetes' ``MilliValue``)."""
    return math.ceil(parse(text) * MILLI)


def vector(quantities: Mapping[str, object]) -> Vector:
    """``{name: quantity}`` as milli-units; a malformed value raises :class:`QuantityError` naming its key."""
    out: Vector = {}
    for name, quantity in quantities.items():
        try:
            out[str(name)] = milli(quantity)
        except QuantityError as error:
            raise QuantityError(f"{name}: {error}") from None
    return out


def merge(*vectors: Mapping[str, int]) -> Vector:
    """The sum, over the union of keys (Karpenter's ``resources.Merge``)."""
    out: Vector = {}
    for each in vectors:
        for name, value in each.items():
            out[name] = out.get(name, 0) + value
    return out


def subtract(lhs: Mapping[str, int], rhs: Mapping[str, int]) -> Vector:
    """``lhs - rhs`` over the keys of ``lhs`` only (Karpenter's ``resources.Subtract``)."""
    return {name: value - rhs.get(name, 0) for name, value in lhs.items()}


def fits(requests: Mapping[str, int], allocatable: Mapping[str, int]) -> bool:
    """Karpenter's ``resources.Fits``: nothing negative in ``allocatable``, every request within it."""
    if any(value < 0 for value in allocatable.values()):
        return False
    return all(value <= allocatable.get(name, 0) for name, value in requests.items())


def maximum(vectors: Iterable[Mapping[str, int]]) -> Vector:
    """Per key, the largest value any vector has (Karpenter's ``resources.MaxResources``)."""
    out: Vector = {}
    for each in vectors:
        for name, value in each.items():
            if name not in out or value > out[name]:
                out[name] = value
    return out


def minimum(vectors: Iterable[Mapping[str, int]]) -> Vector:
    """Per key present in *every* vector, the smallest value (Karpenter's ``resources.MinResources``)."""
    out: Vector | None = None
    for each in vectors:
        if out is None:
            out = dict(each)
            continue
        out = {name: min(value, each[name]) for name, value in out.items() if name in each}
    return out or {}


def quantity(name: str, value: int) -> str:
    """A milli-unit value as Kubernetes prints it canonically: ``1500m``, ``2``, ``1536Mi``.

    Memory and storage print with a binary suffix when they are whole multiples of 1Ki, as
    requests written in Mi/Gi come back; everything else prints with a decimal suffix.
    """
    if name in _BINARY_RESOURCES and value % MILLI == 0 and value and (value // MILLI) % 1024 == 0:
        number, power = value // MILLI, 0
        while number % 1024 == 0 and power < 6:
            number, power = number // 1024, power + 1
        return f"{number}{next(s for s, p in _BINARY.items() if p == power)}"
    if value == 0:
        return "0"
    number, exponent = value, -3
    while number % 1000 == 0 and exponent < 18:
        number, exponent = number // 1000, exponent + 3
    return f"{number}{next(s for s, e in _DECIMAL.items() if e == exponent)}"


def show(values: Mapping[str, int]) -> str:
    """A vector as Karpenter logs one (``pretty.Concise``: JSON with sorted keys)."""
    return json.dumps({name: quantity(name, values[name]) for name in sorted(values)}, separators=(",", ":"))


def as_quantities(values: Mapping[str, int]) -> dict[str, str]:
    """A vector as Kubernetes JSON (``{"cpu": "1500m", ...}``), keys sorted."""
    return {name: quantity(name, values[name]) for name in sorted(values)}
