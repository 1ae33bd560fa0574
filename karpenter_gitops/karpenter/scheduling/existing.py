"""Nodes a Solve finds already there: NodeClaims launched by an earlier round (``ExistingNode``, v1.15.0).

Karpenter's next Solve sees a launched NodeClaim through cluster state as an in-flight node: its
labels (the launched type's single-valued labels, zone, capacity type and the NodeClaim's own), its
NodePool's taints, and the capacity and allocatable the AWS provider reported at launch. A pod is
tried on these before any NodeClaim of the Solve (``addToExistingNode``, the first that takes it in
name order). It takes the pod when the pod tolerates the taints, fits what is left after the daemon
pods that would land there (``remainingResources``), is compatible with the labels (undefined keys
are not allowed, unlike on a new NodeClaim) and passes topology. Such a node never grows: what it
cannot take now it never takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, Taint, compatible, untolerated
from karpenter_gitops.karpenter.scheduling.node_claims import one_value
from karpenter_gitops.karpenter.scheduling.pods import DaemonSet, HostPort, Pod
from karpenter_gitops.karpenter.scheduling.preferences import PodData

NO_UNDEFINED: frozenset[str] = frozenset()  # an existing node's labels are all it has


@dataclass(frozen=True)
class InFlightNode:
    """A launched NodeClaim as cluster state holds it before it registers."""

    name: str  # the NodeClaim's name, which is also its hostname until the node registers
    node_pool: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    capacity: Mapping[str, int]
    allocatable: Mapping[str, int]


def daemon_requests(node: InFlightNode, daemon_sets: Sequence[DaemonSet]) -> resources.Vector:
    """The requests of the daemon pods that would land on ``node`` (``getCompatibleDaemonPods``): they
    tolerate its taints and their node selector and first required term fit its labels."""
    labels = Requirements.from_labels(node.labels)
    members = []
    for daemon_set in daemon_sets:
        pod = daemon_set.template
        if "resource-claims" in pod.approximations or untolerated(node.taints, pod.tolerations) is not None:
            continue
        strict = pod.node_selector_requirements
        if pod.required_terms:
            strict = strict & Requirements.of(pod.required_terms[0])
        if compatible(labels, strict, NO_UNDEFINED):
            members.append(pod.requests)
    return resources.merge(*members) if members else {}


class ExistingNode:
    """One in-flight node during a Solve: what is left of it, its narrowed requirements, its pods."""

    __slots__ = ("node", "requirements", "remaining", "requests", "pods", "ports", "rejected")

    def __init__(self, node: InFlightNode, daemon_sets: Sequence[DaemonSet]):
        self.node = node
        self.requirements = Requirements.from_labels(node.labels) & Requirements([(HOSTNAME, one_value(node.name))])
        self.remaining = resources.subtract(node.allocatable, daemon_requests(node, daemon_sets))
        self.requests: resources.Vector = {}  # of the pods this Solve put here
        self.pods: list[Pod] = []
        self.ports: list[HostPort] = []
        self.rejected: set[int] = set()  # pod data this node can never take (taints, requirements, resources)

    def never_takes(self, pod: Pod, data: PodData) -> bool:
        """The checks of ``CanAdd`` that no later placement can undo: taints, host ports, resources, labels."""
        ports = pod.template.host_ports
        return (
            untolerated(self.node.taints, data.tolerations) is not None
            or bool(ports and any(p.conflicts(q) for p in ports for q in self.ports))
            or not resources.fits(data.requests, self.remaining)
            or not compatible(self.requirements, data.requirements, NO_UNDEFINED)
        )

    def add(self, pod: Pod, data: PodData, requirements: Requirements) -> None:
        """``ExistingNode.Add``."""
        self.pods.append(pod)
        self.remaining = resources.subtract(self.remaining, data.requests)
        self.requests = resources.merge(self.requests, data.requests)
        self.requirements = requirements
        self.ports.extend(pod.template.host_ports)
