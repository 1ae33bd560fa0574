"""What the reconciliation resolves from AWS, as plain immutable data shared by every layer.

The AWS adapters (``karpenter_gitops.adapters.aws``) produce these; the pure modules (mapping,
conditions, rendering) consume them; the CLI, the dynamic provider and the PR preview print
them. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core.requirements import Requirement


@dataclass(frozen=True)
class AMI:
    """One selected image for one requirement set (an alias image may appear once per set)."""

    id: str
    name: str
    architecture: str  # Kubernetes arch: "amd64" | "arm64"
    creation_date: str  # ISO 8601, as EC2 reports it
    deprecated: bool
    requirements: tuple[Requirement, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "requirements": [r.to_json() for r in self.requirements],
        }


@dataclass(frozen=True)
class SkippedAMI:
    """An image a selector matched that Karpenter must not use, and why (e.g. state pending)."""

    id: str
    name: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "reason": self.reason}


@dataclass(frozen=True)
class Subnet:
    id: str
    zone: str
    zone_id: str | None
    available_ips: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "zone": self.zone, "zoneID": self.zone_id, "availableIpAddressCount": self.available_ips}


@dataclass(frozen=True)
class SecurityGroup:
    id: str
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name}


@dataclass(frozen=True)
class InstanceProfile:
    """The instance profile a NodeClass launches with, as IAM knows it."""

    name: str
    exists: bool
    roles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Condition:
    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "status": self.status, "reason": self.reason, "message": self.message}
