"""The result of one reconciliation: what Karpenter will resolve and report, per object.

A :class:`Plan` is plain immutable data with one JSON form (the ``plan`` CLI contract), shared
by the CLI, the Pulumi dynamic provider's outputs and the PR preview.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.resolved import (
    AMI,
    Condition,
    SecurityGroup,
    SkippedAMI,
    Subnet,
)
from karpenter_gitops.karpenter.amifamily.resolver import NodePoolMapping
from karpenter_gitops.karpenter.nodeoverlay.applied import CapacityChange, Conflict, FirstChoice, PriceChange
from karpenter_gitops.karpenter.status.nodeclass_conditions import roll_up


@dataclass(frozen=True)
class NodeClassPlan:
    conditions: tuple[Condition, ...]
    amis: tuple[AMI, ...] = ()
    skipped_amis: tuple[SkippedAMI, ...] = ()
    subnets: tuple[Subnet, ...] = ()
    security_groups: tuple[SecurityGroup, ...] = ()
    instance_profile: str | None = None

    def condition(self, type_: str) -> Condition | None:
        return next((c for c in self.conditions if c.type == type_), None)

    @property
    def no_status(self) -> str | None:
        """Why Karpenter writes no status for the class (its controller exits on it), or None when it does."""
        return None if self.conditions else "no status: Karpenter's controller exits before it writes one"

    @property
    def ready(self) -> bool:
        ready = self.condition("Ready")
        return ready is not None and ready.status == "True"

    def to_json(self) -> dict[str, Any]:
        return {
            "conditions": [c.to_json() for c in self.conditions],
            "amis": [a.to_json() for a in self.amis],
            "skippedAmis": [s.to_json() for s in self.skipped_amis],
            "subnets": [s.to_json() for s in self.subnets],
            "securityGroups": [g.to_json() for g in self.security_groups],
            "instanceProfile": self.instance_profile,
        }


@dataclass(frozen=True)
class PriceRow:
    """Offerings of one instance type and capacity type whose price one overlay changes the same way."""

    instance_type: str
    capacity_type: str
    zones: tuple[str, ...]
    before: float | None  # None: not known offline (spot)
    after: float | None
    overlay: str
    change: str  # the overlay's price or priceAdjustment

    def to_json(self) -> dict[str, Any]:
        return {
            "instanceType": self.instance_type,
            "capacityType": self.capacity_type,
            "zones": list(self.zones),
            "before": _price(self.before),
            "after": _price(self.after),
            "overlay": self.overlay,
            "change": self.change,
        }


def _price(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


@dataclass(frozen=True)
class PoolOverlays:
    """What the NodeOverlays change for one NodePool: prices and capacity of the instance types it can launch,
    and the instance type it would launch first (for a pod any type fits) without and with them."""

    price_changes: tuple[PriceChange, ...] = ()
    capacity_changes: tuple[CapacityChange, ...] = ()
    before: FirstChoice | None = None
    after: FirstChoice | None = None

    @property
    def price_rows(self) -> tuple[PriceRow, ...]:
        # (instance type, capacity type, price before, price after, overlay, its change) → the zones
        grouped: dict[tuple[str, str, float | None, float | None, str, str], list[str]] = {}
        for change in self.price_changes:
            offering = change.offering
            key = (change.instance_type, offering.capacity_type, change.before, offering.price, change.overlay, change.change)
            grouped.setdefault(key, []).append(offering.zone)
        return tuple(
            PriceRow(instance_type, capacity_type, tuple(sorted(zones)), before, after, overlay, price_change)
            for (instance_type, capacity_type, before, after, overlay, price_change), zones in sorted(
                grouped.items(), key=lambda item: (item[0][0], item[0][1], item[0][4])
            )
        )

    @property
    def moved(self) -> bool:
        """Whether the overlays change what the pool launches first."""
        return _types(self.before) != _types(self.after)

    def to_json(self) -> dict[str, Any]:
        return {
            "priceChanges": [row.to_json() for row in self.price_rows],
            "capacityChanges": [
                {
                    "instanceType": c.instance_type,
                    "resource": c.resource,
                    "before": c.before,
                    "after": c.quantity,
                    "overlay": c.overlay,
                }
                for c in self.capacity_changes
            ],
            "firstChoice": {
                "withoutOverlays": self.before.to_json() if self.before else None,
                "withOverlays": self.after.to_json() if self.after else None,
            },
        }


def _types(choice: FirstChoice | None) -> tuple[str, ...]:
    return choice.instance_types if choice else ()


@dataclass(frozen=True)
class OverlayPlan:
    """The NodeOverlays as Karpenter's overlay controller would take them."""

    conditions: Mapping[str, Condition] = field(default_factory=dict)  # the predicted ValidationSucceeded of each
    conflicts: Mapping[str, Conflict] = field(default_factory=dict)
    not_applied: str | None = None  # why no overlay is applied at all (the feature gate is off, an older release)
    refused: tuple[str, ...] = ()  # overlays the API server refuses: they never reach Karpenter
    prices: str = ""  # where the base prices come from
    base_prices: Mapping[str, float] = field(default_factory=dict)  # unpriced instance types an overlay prices (1.14+)

    def predicted(self, name: str) -> tuple[Condition, ...]:
        """The overlay's conditions as Karpenter writes them: ValidationSucceeded, and Ready rolled up from it."""
        condition = self.conditions[name]
        return tuple(sorted([condition, roll_up([condition])], key=lambda c: c.type))

    def to_json(self) -> dict[str, Any]:
        overlays = {}
        for name in sorted(self.conditions):
            conflict = self.conflicts.get(name)
            predicted = self.predicted(name)
            overlays[name] = {
                "conditions": [c.to_json() for c in predicted],
                **({"conflict": conflict.to_json()} if conflict else {}),
            }
        return {
            "notApplied": self.not_applied,
            "refused": list(self.refused),
            "prices": self.prices,
            "basePrices": dict(sorted(self.base_prices.items())),
            "overlays": overlays,
        }


@dataclass(frozen=True)
class NodePoolPlan:
    """A NodePool's mapping through its NodeClass, or why it could not be computed yet."""

    node_class: str
    mapping: NodePoolMapping | None = None
    awaiting: str | None = None  # the dependency that was not ready (never a false "no instance types")
    not_mapped: str | None = None  # why the pool is not ours to map (e.g. an EKS Auto Mode NodeClass)
    overlays: PoolOverlays | None = None  # set when the input has NodeOverlays Karpenter applies

    def to_json(self) -> dict[str, Any]:
        mapping = self.mapping.to_json() if self.mapping else {}
        return {
            "nodeClass": self.node_class,
            "instanceTypes": mapping.get("instanceTypes", {}),
            "unservedInstanceTypes": mapping.get("unservedInstanceTypes", []),
            "minValuesShortfalls": mapping.get("minValuesShortfalls", []),
            "noInstanceTypes": mapping.get("noInstanceTypes"),
            "awaiting": self.awaiting,
            **({"notMapped": self.not_mapped} if self.not_mapped else {}),
            **({"overlays": self.overlays.to_json()} if self.overlays else {}),
        }


@dataclass(frozen=True)
class Plan:
    node_classes: Mapping[str, NodeClassPlan]
    node_pools: Mapping[str, NodePoolPlan]
    findings: tuple[Finding, ...] = ()
    aws_calls: Mapping[str, int] = field(default_factory=dict)
    transient: tuple[str, ...] = ()  # why nothing could be decided, when AWS misbehaved
    node_overlays: OverlayPlan | None = None  # set when the input has NodeOverlays

    @property
    def exit_code(self) -> Outcome:
        """TRANSIENT when AWS left something undecided; FINDINGS for an error finding or a class predicted not Ready."""
        if self.transient:
            return Outcome.TRANSIENT
        errors = any(f.severity is Severity.ERROR for f in self.findings)
        if errors or not all(nc.ready for nc in self.node_classes.values()):
            return Outcome.FINDINGS
        return Outcome.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "nodeClasses": {name: p.to_json() for name, p in sorted(self.node_classes.items())},
            "nodePools": {name: p.to_json() for name, p in sorted(self.node_pools.items())},
            "findings": [f.to_json() for f in self.findings],
            "awsCalls": dict(sorted(self.aws_calls.items())),
            "transient": list(self.transient),
            **({"nodeOverlays": self.node_overlays.to_json()} if self.node_overlays else {}),
        }
