"""The result of one reconciliation: what Karpenter will resolve and report, per object.

A :class:`Plan` is plain immutable data with one JSON form (the ``plan`` CLI contract), shared
by the CLI, the Pulumi dynamic provider's outputs and the PR preview.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.mapping import NodePoolMapping
from karpenter_gitops.core.resolved import (
    AMI,
    Condition,
    SecurityGroup,
    SkippedAMI,
    Subnet,
)

READY, PERSISTENT, TRANSIENT = 0, 1, 3  # exit codes of a plan (2 is usage, decided before)


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
    def ready(self) -> bool:
        ready = self.condition("Ready")
        return ready is not None and ready.status == "True"

    def to_json(self) -> dict:
        return {
            "conditions": [c.to_json() for c in self.conditions],
            "amis": [a.to_json() for a in self.amis],
            "skippedAmis": [s.to_json() for s in self.skipped_amis],
            "subnets": [s.to_json() for s in self.subnets],
            "securityGroups": [g.to_json() for g in self.security_groups],
            "instanceProfile": self.instance_profile,
        }


@dataclass(frozen=True)
class NodePoolPlan:
    """A NodePool's mapping through its NodeClass, or why it could not be computed yet."""

    node_class: str
    mapping: NodePoolMapping | None = None
    awaiting: str | None = None  # the dependency that was not ready (never a false "no instance types")
    not_mapped: str | None = None  # why the pool is not ours to map (e.g. an EKS Auto Mode NodeClass)

    def to_json(self) -> dict:
        mapping = self.mapping.to_json() if self.mapping else {}
        return {
            "nodeClass": self.node_class,
            "instanceTypes": mapping.get("instanceTypes", {}),
            "unservedInstanceTypes": mapping.get("unservedInstanceTypes", []),
            "minValuesShortfalls": mapping.get("minValuesShortfalls", []),
            "noInstanceTypes": mapping.get("noInstanceTypes"),
            "awaiting": self.awaiting,
            **({"notMapped": self.not_mapped} if self.not_mapped else {}),
        }


@dataclass(frozen=True)
class Plan:
    node_classes: Mapping[str, NodeClassPlan]
    node_pools: Mapping[str, NodePoolPlan]
    findings: tuple[Finding, ...] = ()
    aws_calls: Mapping[str, int] = field(default_factory=dict)
    transient: tuple[str, ...] = ()  # why nothing could be decided, when AWS misbehaved

    @property
    def exit_code(self) -> int:
        if self.transient:
            return TRANSIENT
        errors = any(f.severity is Severity.ERROR for f in self.findings)
        if errors or not all(nc.ready for nc in self.node_classes.values()):
            return PERSISTENT
        return READY

    def to_json(self) -> dict:
        return {
            "nodeClasses": {name: p.to_json() for name, p in sorted(self.node_classes.items())},
            "nodePools": {name: p.to_json() for name, p in sorted(self.node_pools.items())},
            "findings": [f.to_json() for f in self.findings],
            "awsCalls": dict(sorted(self.aws_calls.items())),
            "transient": list(self.transient),
        }
