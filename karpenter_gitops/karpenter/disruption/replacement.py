"""Which pods move when a NodePool's drifted nodes are replaced, and onto what (``SimulateScheduling``,
pkg/controllers/disruption/helpers.go, v1.15.0).

Before Karpenter disrupts a drifted node it simulates the move: the candidate is taken out of the
cluster, its reschedulable pods (not DaemonSet-owned, not mirror pods, not terminal) join the pending
pods, and one Solve places them on the remaining nodes and on new NodeClaims of the NodePools as they
now are (the head's configuration). A replacement NodeClaim is launched first; the node is drained
once it is ready. Pods that fit nowhere keep the node from being disrupted (the Solve's error says why),
and so do pods the Solve puts on a node that has not initialized yet (Karpenter will not count on it).

Karpenter takes the candidates one at a time, within the disruption budget; this forecast takes all of a
pool's drifted nodes out together, so it shows where the pods are once every one has been replaced (a
pod never lands on a node that is itself about to go). The NodeClaims Karpenter makes on the way may
be packed differently; PodDisruptionBudgets and ``do-not-disrupt`` pods are not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from karpenter_gitops.karpenter.scheduling.existing import Cluster
from karpenter_gitops.karpenter.scheduling.failures import message
from karpenter_gitops.karpenter.scheduling.rounds import launched
from karpenter_gitops.karpenter.scheduling.scheduler import Options, Scheduler
from karpenter_gitops.karpenter.scheduling.world import World


@dataclass(frozen=True)
class NewNodeClaim:
    """A replacement NodeClaim: its pool, the instance types it may launch as (cheapest first) and how."""

    name: str  # replacement-<pool>-<n>, by its first pod
    node_pool: str
    instance_types: tuple[str, ...]
    capacity_type: str | None
    launch_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "nodePool": self.node_pool,
            "instanceTypes": list(self.instance_types),
            "capacityType": self.capacity_type,
            "launchError": self.launch_error,
        }


@dataclass(frozen=True)
class Move:
    """One pod of a replaced node: where it lands (an existing node's or a new NodeClaim's name), or why it fits nowhere."""

    pod: str  # namespace/name
    node: str  # the drifted node it runs on
    to: str | None  # the existing node or the new NodeClaim; None: it fits nowhere
    new: bool = False  # ``to`` is a new NodeClaim
    reason: str | None = None  # Karpenter's, when it fits nowhere

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "from": self.node, "to": self.to, "newNodeClaim": self.new, "reason": self.reason}


@dataclass(frozen=True)
class Replacement:
    """The move of one NodePool's drifted nodes' pods."""

    nodes: tuple[str, ...]  # the drifted nodes taken out
    moves: tuple[Move, ...]
    node_claims: tuple[NewNodeClaim, ...]

    @property
    def stuck(self) -> tuple[Move, ...]:
        return tuple(m for m in self.moves if m.to is None)

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes),
            "moves": [m.to_json() for m in self.moves],
            "nodeClaims": [c.to_json() for c in self.node_claims],
        }


def replacement(world: World, cluster: Cluster, drifted: frozenset[str], options: Options = Options()) -> Replacement:
    """One Solve over ``world`` (the head's NodePools and instance types; its pods are ignored) with the
    ``drifted`` nodes taken out of ``cluster``: their reschedulable pods and the cluster's pending pods."""
    leaving = [node for node in cluster.nodes if node.name in drifted]
    moving = [(pod, node.name) for node in leaving for pod in node.pods]
    remaining = cluster.without(drifted)
    simulated = replace(world, pods=(*cluster.pending, *(pod for pod, _ in moving)), daemon_sets=cluster.daemon_sets)
    solution = Scheduler(simulated, options, remaining.nodes).solve(simulated.pods)
    where: dict[str, tuple[str, bool]] = {}
    uninitialized: dict[str, str] = {}
    for existing in solution.existing:
        for pod in existing.pods:
            where[pod.uid] = (existing.node.name, False)
            if not existing.node.initialized:  # UninitializedNodeError
                uninitialized[pod.uid] = f"would schedule against uninitialized node/{existing.node.name}"
    claims = []
    counts: dict[str, int] = {}
    for claim in sorted(solution.node_claims, key=lambda c: (c.template.pool.name, c.pods[0].uid)):
        pool = claim.template.pool.name
        counts[pool] = counts.get(pool, 0) + 1
        name = f"replacement-{pool}-{counts[pool]}"
        outcome = launched(claim, options, 1, name).launch
        claims.append(NewNodeClaim(name, pool, outcome.instance_types, outcome.capacity_type, outcome.error))
        for pod in claim.pods:
            where[pod.uid] = (name, True)
    moves = []
    for pod, node in moving:
        to, new = where.get(pod.uid, (None, False))
        reason = uninitialized.get(pod.uid)
        if reason is not None:
            to = None
        elif to is None:
            reason = message(solution.errors[pod.uid]) if pod.uid in solution.errors else pod.template.ignored
        moves.append(Move(pod.uid, node, to, new, reason))
    return Replacement(tuple(sorted(n.name for n in leaving)), tuple(moves), tuple(claims))
