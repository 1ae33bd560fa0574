"""What a Solve builds: NodeClaim templates from NodePools, and the NodeClaims it fills with pods.

Karpenter's ``NodeClaimTemplate`` and in-flight ``NodeClaim`` as plain state the scheduler mutates
while it packs; the packing itself (which pod goes where) stays in ``scheduler``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, Taint
from karpenter_gitops.karpenter.scheduling.pods import HostPort, Pod
from karpenter_gitops.karpenter.scheduling.preferences import PodData
from karpenter_gitops.karpenter.scheduling.type_index import Catalogue
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec


@dataclass(frozen=True)
class DaemonGroup:
    """A template's instance types on which the same DaemonSet pods would run, and their requests."""

    mask: int
    overhead: Mapping[str, int]
    host_ports: tuple[HostPort, ...]


@dataclass
class Template:
    """A NodePool as NodeClaims are made from it (Karpenter's ``NodeClaimTemplate``)."""

    pool: NodePoolSpec
    catalogue: Catalogue
    requirements: Requirements
    options: int
    groups: list[DaemonGroup] = field(default_factory=list)

    @property
    def taints(self) -> tuple[Taint, ...]:
        return self.pool.taints


class NodeClaim:
    """A node this Solve will ask for: its pods, narrowed requirements and the instance types left."""

    __slots__ = (
        "template",
        "hostname",
        "requirements",
        "options",
        "requests",
        "pods",
        "data",
        "ports",
        "rejected",
        "daemon_overhead",
    )

    def __init__(self, template: Template, hostname: str, options: int):
        self.template, self.hostname, self.options = template, hostname, options
        self.requirements = template.requirements & Requirements([(HOSTNAME, one_value(hostname))])
        self.requests: resources.Vector = {}
        self.pods: list[Pod] = []
        self.data: list[PodData] = []
        self.ports: list[HostPort] = []
        self.rejected: set[int] = set()  # pod data that can never fit here (taints, requirements, resources)
        self.daemon_overhead: resources.Vector = {}


def one_value(value: str) -> ValueSet:
    """The requirement value set holding exactly ``value`` (a NodeClaim's own hostname, a pinned label)."""
    return ValueSet(False, frozenset((value,)))
