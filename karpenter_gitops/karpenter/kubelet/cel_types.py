"""CEL's types as cel-go's checker models them, Karpenter 1.15's kubelet environment, the standard overloads the
checker knows, and the type algebra it resolves calls with (type parameters, dyn, most-general unification).

Pure data and functions over it; the checker (:mod:`.checker`) walks expressions with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class T:
    """A CEL type as cel-go prints it: ``int``, ``list(int)``, ``map(string, int)``, ``type(int)``."""

    name: str
    params: tuple[T, ...] = ()

    def __str__(self) -> str:
        if self.name == "map":
            return f"map({self.params[0]}, {self.params[1]})"
        return f"{self.name}({self.params[0]})" if self.params else ("dyn" if self.name == "*free*" else self.name)


INT, UINT, DOUBLE, BOOL, STRING, BYTES = T("int"), T("uint"), T("double"), T("bool"), T("string"), T("bytes")
NULL, DYN, ERROR = T("null_type"), T("dyn"), T("*error*")
FREE = T("*free*")  # an unbound type parameter (an empty list's element): binds to anything, printed as dyn
# Only reachable through null, which cel-go lets stand for these message types.
TIMESTAMP, DURATION = T("google.protobuf.Timestamp"), T("google.protobuf.Duration")
NUMBERS = (INT, UINT, DOUBLE)


def list_of(element: T) -> T:
    return T("list", (element,))


def map_of(key: T, value: T) -> T:
    return T("map", (key, value))


VARIABLES: Mapping[str, T] = {
    "vcpus": INT,
    "memory_mib": INT,
    "default_enis": INT,
    "ips_per_eni": INT,
    "max_pods": INT,
    "instance_type": STRING,
}
# Names cel-go resolves to type values (``int`` alone is ``type(int)``): not modelled, no verdict.
TYPE_NAMES = frozenset({"int", "uint", "double", "bool", "string", "bytes", "null_type", "dyn", "list", "map", "type"})

# Overloads: parameter patterns → result; "A"/"B" are type parameters, list/map patterns nest them.
PARAM_A, PARAM_B = T("A"), T("B")
Sig = tuple[tuple[T, ...], T]
COMPARABLE = (BOOL, INT, UINT, DOUBLE, STRING, BYTES, TIMESTAMP, DURATION)
# Karpenter's own: max/min of two ints is an int, any double makes a double.
MAX_MIN = (((INT, INT), INT), ((DOUBLE, DOUBLE), DOUBLE), ((INT, DOUBLE), DOUBLE), ((DOUBLE, INT), DOUBLE))
OVERLOADS: Mapping[str, tuple[Sig, ...]] = {
    "_+_": (
        *(((t, t), t) for t in (INT, UINT, DOUBLE, STRING, BYTES)),
        ((list_of(PARAM_A), list_of(PARAM_A)), list_of(PARAM_A)),
        ((TIMESTAMP, DURATION), TIMESTAMP),
        ((DURATION, TIMESTAMP), TIMESTAMP),
        ((DURATION, DURATION), DURATION),
    ),
    "_-_": (
        *(((t, t), t) for t in NUMBERS),
        ((TIMESTAMP, TIMESTAMP), DURATION),
        ((TIMESTAMP, DURATION), TIMESTAMP),
        ((DURATION, DURATION), DURATION),
    ),
    "_*_": tuple(((t, t), t) for t in NUMBERS),
    "_/_": tuple(((t, t), t) for t in NUMBERS),
    "_%_": tuple(((t, t), t) for t in (INT, UINT)),
    "-_": (((INT,), INT), ((DOUBLE,), DOUBLE)),
    "!_": (((BOOL,), BOOL),),
    "_&&_": (((BOOL, BOOL), BOOL),),
    "_||_": (((BOOL, BOOL), BOOL),),
    "_?_:_": (((BOOL, PARAM_A, PARAM_A), PARAM_A),),
    "_==_": (((PARAM_A, PARAM_A), BOOL),),
    "_!=_": (((PARAM_A, PARAM_A), BOOL),),
    **{op: tuple(((t, t), BOOL) for t in COMPARABLE) for op in ("_<_", "_<=_", "_>_", "_>=_")},
    "@in": (((PARAM_A, list_of(PARAM_A)), BOOL), ((PARAM_A, map_of(PARAM_A, PARAM_B)), BOOL)),
    "_[_]": (((list_of(PARAM_A), INT), PARAM_A), ((map_of(PARAM_A, PARAM_B), PARAM_A), PARAM_B)),
    "max": MAX_MIN,
    "min": MAX_MIN,
    "size": (((STRING,), INT), ((BYTES,), INT), ((list_of(PARAM_A),), INT), ((map_of(PARAM_A, PARAM_B),), INT)),
    "int": (((INT,), INT), ((UINT,), INT), ((DOUBLE,), INT), ((STRING,), INT), ((TIMESTAMP,), INT)),
    "uint": (((UINT,), UINT), ((INT,), UINT), ((DOUBLE,), UINT), ((STRING,), UINT)),
    "double": (((DOUBLE,), DOUBLE), ((INT,), DOUBLE), ((UINT,), DOUBLE), ((STRING,), DOUBLE)),
    "string": tuple(((t,), STRING) for t in (STRING, INT, UINT, DOUBLE, BOOL, BYTES, TIMESTAMP, DURATION)),
    "bool": (((BOOL,), BOOL), ((STRING,), BOOL)),
    "bytes": (((BYTES,), BYTES), ((STRING,), BYTES)),
    "dyn": (((PARAM_A,), DYN),),
    "matches": (((STRING, STRING), BOOL),),
}
# Receiver-style overloads (``x.size()``): the receiver is the first parameter.
MEMBER_OVERLOADS: Mapping[str, tuple[Sig, ...]] = {
    "size": OVERLOADS["size"],
    **{name: (((STRING, STRING), BOOL),) for name in ("contains", "startsWith", "endsWith", "matches")},
}
# Declared by cel-go's standard library or its macros but not modelled here: no verdict on them.
UNMODELLED = frozenset(
    {
        "has",
        "all",
        "exists",
        "exists_one",
        "map",
        "filter",
        "timestamp",
        "duration",
        "type",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getFullYear",
        "getHours",
        "getMilliseconds",
        "getMinutes",
        "getMonth",
        "getSeconds",
    }
)


def match_overload(sig: Sig, args: list[T]) -> T | None:
    params, result = sig
    if len(params) != len(args):
        return None
    bound: dict[str, T] = {}
    for param, arg in zip(params, args, strict=True):
        if not unify(param, arg, bound):
            return None
    return substitute(result, bound)


def unify(param: T, arg: T, bound: dict[str, T]) -> bool:
    if param.name in ("A", "B"):
        seen = bound.get(param.name)
        if seen is None:
            bound[param.name] = arg
            return True
        if not assignable(arg, seen):
            return False
        if seen == FREE or (arg != FREE and less_specific(arg, seen)):  # cel-go's mostGeneral(arg, seen)
            bound[param.name] = arg
        return True
    if arg in (DYN, ERROR, FREE):
        return True
    if arg == NULL and param in (TIMESTAMP, DURATION):
        return True
    if param.name != arg.name or len(param.params) != len(arg.params):
        return False
    return all(unify(p, a, bound) for p, a in zip(param.params, arg.params, strict=True))


def assignable(a: T, b: T) -> bool:
    """cel-go's assignability: dyn, error and free parameters fit anything."""
    if a in (DYN, ERROR, FREE) or b in (DYN, ERROR, FREE):
        return True
    return (
        a.name == b.name
        and len(a.params) == len(b.params)
        and all(assignable(x, y) for x, y in zip(a.params, b.params, strict=True))
    )


def less_specific(a: T, b: T) -> bool:
    """cel-go's isEqualOrLessSpecific, which decides a literal's element type."""
    if a in (DYN, FREE):
        return True
    if b in (DYN, FREE) or a.name != b.name or len(a.params) != len(b.params):
        return False
    return all(less_specific(x, y) for x, y in zip(a.params, b.params, strict=True))


def joined(types: list[T]) -> T:
    """A literal's element type as cel-go's joinTypes folds it: the more general of two assignable types, else dyn."""
    joined: T | None = None
    for t in types:
        if joined is None:
            joined = t
        elif assignable(joined, t):
            joined = joined if less_specific(joined, t) else t
        else:
            joined = DYN
    return FREE if joined is None else joined


def substitute(t: T, bound: dict[str, T]) -> T:
    if t.name in ("A", "B"):
        return bound.get(t.name, FREE)
    return T(t.name, tuple(substitute(p, bound) for p in t.params)) if t.params else t
