"""Nodes a Solve finds already there (``ExistingNode``, v1.15.0): the cluster's own, and NodeClaims
launched by an earlier round.

Karpenter's Solve sees every node of cluster state (``state.StateNode``): a registered Node with its
labels, taints, capacity and allocatable and the pods bound to it; a NodeClaim launched by an earlier
round as an in-flight node (the launched type's single-valued labels, zone, capacity type and the
NodeClaim's own labels, its NodePool's taints, the capacity the AWS provider reported, no pods yet).
A pod is tried on these before any NodeClaim of the Solve (``addToExistingNode``): initialized nodes
first, then in name order, the first that takes it. It takes the pod when the pod tolerates the
taints, fits what is left (``remainingResources``: allocatable less the requests of the pods already
there, less the requests of the daemon pods that would land there and have not yet), is compatible
with the labels (undefined keys are not allowed, unlike on a new NodeClaim) and passes topology.
Such a node never grows: what it cannot take now it never takes.
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
class StateNode:
    """A node as cluster state holds it: a registered Node with its pods, or a launched NodeClaim in flight."""

    name: str  # the Node's name; a NodeClaim's is its hostname until the node registers
    node_pool: str  # "" for a node no NodePool launched (a managed node group's)
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    capacity: Mapping[str, int]
    allocatable: Mapping[str, int]
    pods: tuple[Pod, ...] = ()  # bound to it and reschedulable: what moves when the node goes
    static_pods: tuple[Pod, ...] = ()  # bound to it and staying with it (mirror pods, pods a Node owns)
    daemon_pods: tuple[Pod, ...] = ()  # bound to it and owned by a DaemonSet
    initialized: bool = False  # registered and initialized (a node no NodePool launched always is)
    registered: bool = False  # a Node: its labels add topology domains (an in-flight NodeClaim's do not)

    @property
    def bound(self) -> tuple[Pod, ...]:
        return (*self.pods, *self.static_pods, *self.daemon_pods)


@dataclass(frozen=True)
class Cluster:
    """What the cluster runs before the forecast: its nodes with their pods, the pods still pending, and
    the DaemonSets its daemon pods come from (their pods land on every new node too)."""

    nodes: tuple[StateNode, ...] = ()
    pending: tuple[Pod, ...] = ()
    daemon_sets: tuple[DaemonSet, ...] = ()
    notes: tuple[str, ...] = ()  # what reading it left out

    def without(self, names: frozenset[str]) -> Cluster:
        """The cluster with the nodes ``names`` removed (their pods go with them)."""
        return Cluster(tuple(n for n in self.nodes if n.name not in names), self.pending, self.daemon_sets, self.notes)


def daemon_requests(node: StateNode, daemon_sets: Sequence[DaemonSet]) -> resources.Vector:
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

    def __init__(self, node: StateNode, daemon_sets: Sequence[DaemonSet]):
        self.node = node
        self.requirements = Requirements.from_labels(node.labels) & Requirements([(HOSTNAME, one_value(node.name))])
        # NewExistingNode: the daemon pods still to come are those expected less those already running
        running = resources.merge(*(p.template.requests for p in node.daemon_pods))
        to_come = {k: max(0, v - running.get(k, 0)) for k, v in daemon_requests(node, daemon_sets).items()}
        available = resources.subtract(node.allocatable, resources.merge(*(p.template.requests for p in node.bound)))
        self.remaining = resources.subtract(available, to_come)
        self.requests: resources.Vector = {}  # of the pods this Solve put here
        self.pods: list[Pod] = []  # the pods this Solve put here
        self.ports: list[HostPort] = [port for pod in node.bound for port in pod.template.host_ports]
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
