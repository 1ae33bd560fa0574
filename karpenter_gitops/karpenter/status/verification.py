"""Did the cluster do what the pull request said? The comparisons behind ``verify``, as pure data.

Three questions, each a category of :class:`Difference`:

* ``drift``: a live spec that is not what Git renders. Both sides are compared as the API server
  stores them (the caller fills the CRD's defaults into the rendered side), so a field the server
  defaulted is not drift, and one set out of band (``kubectl edit``) is.
* ``prediction``: a status condition of an EC2NodeClass or a NodeOverlay whose status or reason is
  not the one ``plan`` predicted (messages are shown, not compared: Karpenter's carry ids and timings).
* ``node``: a NodeClaim whose instance type its NodePool cannot launch as predicted, or whose image
  is not the one the prediction maps that instance type to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.resolved import Condition
from karpenter_gitops.karpenter.scheduling.launched import PoolLaunch
from karpenter_gitops.karpenter.status.prediction import NodePoolPlan

DRIFT, PREDICTION, NODE = "drift", "prediction", "node"
CATEGORIES = (DRIFT, PREDICTION, NODE)
_ABSENT = object()
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Difference:
    """One way the cluster is not what Git and the prediction say; None stands for absent."""

    category: str
    object: str  # Kind/name
    path: str
    expected: Any
    actual: Any
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "object": self.object,
            "path": self.path,
            "expected": self.expected,
            "actual": self.actual,
            "note": self.note,
        }


@dataclass(frozen=True)
class Verification:
    """Everything verify found, and what it could not decide."""

    cluster: str
    differences: tuple[Difference, ...] = ()
    unreconciled: tuple[str, ...] = ()  # objects Karpenter had not reconciled by the deadline
    unmanaged: tuple[str, ...] = ()  # Karpenter objects in the cluster that Git does not render
    checked: Mapping[str, int] = field(default_factory=dict)  # what was compared, by kind
    notes: tuple[str, ...] = ()  # what could not be compared, and why
    launched: tuple[PoolLaunch, ...] | None = None  # with workloads: the NodeClaims launched beside the forecast (information)

    @property
    def exit_code(self) -> Outcome:
        """FINDINGS: the cluster differs; TRANSIENT: nothing differs yet, but something was not reconciled
        (retry); OK: as said."""
        if self.differences:
            return Outcome.FINDINGS
        return Outcome.TRANSIENT if self.unreconciled else Outcome.OK

    def of(self, category: str) -> tuple[Difference, ...]:
        return tuple(d for d in self.differences if d.category == category)

    def to_json(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "differences": [d.to_json() for d in self.differences],
            "counts": {category: len(self.of(category)) for category in CATEGORIES},
            "unreconciled": list(self.unreconciled),
            "unmanaged": list(self.unmanaged),
            "checked": dict(sorted(self.checked.items())),
            "notes": list(self.notes),
            **({"launched": [p.to_json() for p in self.launched]} if self.launched is not None else {}),
        }


def _mapping(value: Any) -> Mapping[str, Any]:
    """A field of a stored object as a mapping; anything else as empty (the cluster's answer is not trusted)."""
    return value if isinstance(value, Mapping) else {}


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if _FIELD.match(str(key)) else f"{path}[{key}]"


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: 2 and 2.0 are one number, True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def value_differences(expected: Any, actual: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """Paths where ``actual`` is not ``expected``, deepest first found; lists of another length differ whole."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in [*expected, *(k for k in actual if k not in expected)]:
            yield from value_differences(expected.get(key, _ABSENT), actual.get(key, _ABSENT), _child(path, key))
    elif isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        for index, (want, have) in enumerate(zip(expected, actual, strict=True)):
            yield from value_differences(want, have, _child(path, index))
    elif expected is _ABSENT or actual is _ABSENT or not _same(expected, actual):
        yield path, None if expected is _ABSENT else expected, None if actual is _ABSENT else actual


def drift(kind: str, name: str, rendered: Mapping[str, Any], stored: Mapping[str, Any] | None) -> list[Difference]:
    """How the stored object differs from the rendered one (both as the API server stores them)."""
    obj = f"{kind}/{name}"
    if stored is None:
        return [Difference(DRIFT, obj, "", "present", None, "not in the cluster: not applied yet, or deleted out of band")]
    found = []
    for part in ("spec",):
        for path, want, have in value_differences(rendered.get(part, {}), stored.get(part, {}), part):
            note = (
                "set in the cluster, not in Git"
                if want is None
                else "in Git, not in the cluster"
                if have is None
                else "changed in the cluster"
            )
            found.append(Difference(DRIFT, obj, path, want, have, note))
    metadata, live_metadata = _mapping(rendered.get("metadata")), _mapping(stored.get("metadata"))
    for part in ("labels", "annotations"):  # only the keys Git sets: controllers add their own
        for key, want in _mapping(metadata.get(part)).items():
            have = _mapping(live_metadata.get(part)).get(key)
            if have != want:
                found.append(
                    Difference(
                        DRIFT,
                        obj,
                        _child(f"metadata.{part}", key),
                        want,
                        have,
                        "in Git, not in the cluster" if have is None else "changed in the cluster",
                    )
                )
    return found


def conditions(obj: str, predicted: Iterable[Condition], stored: Mapping[str, Any]) -> list[Difference]:
    """Predicted conditions (of ``obj``, Kind/name) whose status or reason the stored object does not report."""
    listed = _mapping(stored.get("status")).get("conditions")
    live = {c.get("type"): c for c in listed if isinstance(c, Mapping)} if isinstance(listed, list) else {}
    found = []
    for condition in predicted:
        have = live.get(condition.type)
        want = f"{condition.status} ({condition.reason})" if condition.reason else condition.status
        if have is None:
            found.append(
                Difference(
                    PREDICTION, obj, f"status.conditions[{condition.type}]", want, None, "Karpenter reports no such condition"
                )
            )
            continue
        reason = have.get("reason") or ""
        same_reason = not condition.reason or reason == condition.reason
        if have.get("status") != condition.status or not same_reason:
            got = f"{have.get('status')} ({reason})" if reason else str(have.get("status"))
            message = str(have.get("message") or "")
            note = f"Karpenter says: {message}" if message else f"predicted: {condition.message}"
            found.append(Difference(PREDICTION, obj, f"status.conditions[{condition.type}]", want, got, note))
    return found


def has_conditions(stored: Mapping[str, Any]) -> bool:
    listed = _mapping(stored.get("status")).get("conditions")
    return isinstance(listed, list) and bool(listed)


def unreconciled(stored: Mapping[str, Any]) -> bool:
    """Karpenter has not reported on this generation of the EC2NodeClass yet."""
    metadata, listed = _mapping(stored.get("metadata")), _mapping(stored.get("status")).get("conditions")
    ready = (
        next((c for c in listed if isinstance(c, Mapping) and c.get("type") == "Ready"), None)
        if isinstance(listed, list)
        else None
    )
    if ready is None:
        return True
    observed, generation = ready.get("observedGeneration"), metadata.get("generation")
    return isinstance(observed, int) and isinstance(generation, int) and observed < generation


def nodes(pools: Mapping[str, NodePoolPlan], fleet: Iterable[FleetNode]) -> list[Difference]:
    """NodeClaims of the verified pools whose instance type or image the prediction does not map."""
    found = []
    for node in fleet:
        plan = pools.get(node.node_pool)
        if plan is None or plan.mapping is None:
            continue  # a pool Git does not render, or one whose mapping could not be predicted
        obj, mapped = f"NodeClaim/{node.name}", plan.mapping.instance_types
        if node.instance_type is None:
            continue  # not launched yet: nothing to compare
        if node.instance_type not in mapped:
            found.append(
                Difference(
                    NODE,
                    obj,
                    "instance type",
                    f"one of NodePool {node.node_pool}'s {len(mapped)} mapped types",
                    node.instance_type,
                    "the pool's requirements or its class's images no longer admit it",
                )
            )
        elif node.image_id and node.image_id != mapped[node.instance_type]:
            found.append(
                Difference(
                    NODE,
                    obj,
                    "image",
                    mapped[node.instance_type],
                    node.image_id,
                    f"{node.instance_type} now maps to another image: Karpenter marks the node Drifted and replaces it",
                )
            )
    return found
