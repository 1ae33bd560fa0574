"""Karpenter's provisioning loop, round after round until nothing changes.

One Solve is not what ends up running. Each new NodeClaim reserves its *largest* option against its
NodePool's limits (``subtractMax``), so a limited pool can turn pods away in one Solve that fit once
its NodeClaims have launched as one type each ("this could cause a batch of pods to take multiple
rounds", Karpenter's scheduler says). So the forecast runs the loop the controller runs:

1. Solve the pending pods (:class:`.scheduler.Scheduler`).
2. Launch each new NodeClaim as the AWS provider would (:func:`.launch.launch`): on-demand takes
   the cheapest offering; spot takes one of its candidates, and the cheapest stands for it.
3. The launched NodeClaims become in-flight nodes of cluster state (:mod:`.existing`): the chosen
   type's labels, zone and capacity type, its real capacity charged against the limits.
4. Solve again, every pod that has not landed on a node yet included (a pod stays pending until its
   node registers, which takes longer than a batch), the in-flight nodes tried first.

The first Solve starts from the cluster's own nodes, when it is given them (their pods already
bound): the pods fill their room first, and their capacity counts against their NodePool's limits.

The loop stops at the first Solve that makes no NodeClaim (the fixpoint), or when no NodeClaim of a
round launches (a retry would only repeat it), or after :data:`MAX_ROUNDS` (said in the forecast).
The last Solve says where each pod runs and which pods never fit, with Karpenter's reason.

A launched NodeClaim is named ``r<round>-<pool>-<n>``, n by its first pod: in-flight nodes are tried
in name order, and Karpenter's own names are random, so any order is one Karpenter may take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import ValueSet
from karpenter_gitops.karpenter.scheduling.existing import StateNode
from karpenter_gitops.karpenter.scheduling.launch import Launch, launch
from karpenter_gitops.karpenter.scheduling.matching import (
    HOSTNAME,
    INITIALIZED,
    NODECLASS,
    NODEPOOL,
    REGISTERED,
    WELL_KNOWN,
)
from karpenter_gitops.karpenter.scheduling.node_claims import NodeClaim
from karpenter_gitops.karpenter.scheduling.scheduler import STRICT, Options, Scheduler, Solution
from karpenter_gitops.karpenter.scheduling.world import World

MAX_ROUNDS = 20
#: Labels the AWS provider leaves off a launched NodeClaim even when its type has one value for them.
_RESERVATION_KEYS = frozenset(
    {labels.CAPACITY_RESERVATION_ID, labels.CAPACITY_RESERVATION_TYPE, labels.CAPACITY_RESERVATION_INTERRUPTIBLE}
)
#: Requirement keys whose value the NodeClaim does not resolve into a label (``resolveCustomLabelsFromRequirements``).
_NOT_RESOLVED = WELL_KNOWN | {HOSTNAME, REGISTERED, INITIALIZED}
DEFAULT_TENANCY = "default"


@dataclass(frozen=True)
class Launched:
    """One NodeClaim of one round: as its Solve made it, how it launched, and the node it became (None: no launch)."""

    round: int
    name: str
    claim: NodeClaim
    options: tuple[int, ...]  # the catalogue positions it carries, cheapest first (at most MaxInstanceTypes)
    launch: Launch
    node: StateNode | None


@dataclass(frozen=True)
class Provisioning:
    """Every round's NodeClaims and the last Solve, which places the pods on them."""

    launched: tuple[Launched, ...]  # in round order
    pending: tuple[int, ...]  # per round: the pods its Solve placed nowhere
    nominated: Mapping[str, str]  # pod UID → the NodeClaim of its first nomination (see :func:`provision`)
    settled: bool  # False: stopped at MAX_ROUNDS with NodeClaims still being made
    first: Scheduler  # the first round's (its templates say what each pool keeps)
    last: Solution

    @property
    def rounds(self) -> int:
        return len(self.pending)


def _one_value(allowed: ValueSet) -> str | None:
    if allowed.complement or len(allowed.values) != 1 or allowed.gte is not None or allowed.lte is not None:
        return None
    return next(iter(allowed.values))


def _resolved(allowed: ValueSet) -> str | None:
    """``Requirement.Any()`` for a custom key: one allowed value of ``In`` (Karpenter takes any; the least
    here); for ``NotIn``/``Exists`` Karpenter draws a random integer, the least allowed one stands for it."""
    if not allowed.complement:
        return min(allowed.values) if allowed.values else None
    low = allowed.gte or 0
    return next(str(n) for n in range(low, low + len(allowed.values) + 1) if str(n) not in allowed.values)


def in_flight(name: str, claim: NodeClaim, outcome: Launch) -> StateNode | None:
    """The node a launched NodeClaim becomes (``instanceToNodeClaim`` and ``PopulateNodeClaimDetails``):
    its type's single-valued labels, the offering's zone and capacity type, then the NodeClaim's own
    labels (its pool's template labels, pool and class names, custom keys its requirements resolve)."""
    chosen_offer = outcome.cheapest
    if chosen_offer is None or outcome.capacity_type is None:
        return None
    catalogue = claim.template.catalogue
    chosen = catalogue.types[catalogue.position[chosen_offer.instance_type]]
    node_labels = {
        key: value
        for key, allowed in chosen.requirements.items()
        if key not in _RESERVATION_KEYS and (value := _one_value(allowed)) is not None
    }
    node_labels[labels.ZONE] = chosen_offer.zone
    zone_id = next((o.zone_id for o in chosen.offerings if o.zone == chosen_offer.zone and o.zone_id), None)
    if zone_id:
        node_labels[labels.ZONE_ID] = zone_id
    node_labels[labels.CAPACITY_TYPE] = outcome.capacity_type
    node_labels[labels.TENANCY] = DEFAULT_TENANCY
    pool = claim.template.pool
    node_labels.update(pool.labels)
    node_labels[NODEPOOL] = pool.name
    node_labels[NODECLASS] = pool.node_class
    for key, allowed in claim.requirements.items():
        if key not in _NOT_RESOLVED and (value := _resolved(allowed)) is not None:
            node_labels[key] = value
    nonzero = {k: v for k, v in chosen.capacity.items() if v}
    return StateNode(
        name, pool.name, node_labels, pool.taints, nonzero, {k: v for k, v in chosen.allocatable.items() if k in nonzero}
    )


def launched(claim: NodeClaim, options: Options, round_number: int, name: str) -> Launched:
    """The launch of one NodeClaim of a Solve: its options cut to MaxInstanceTypes, cheapest first."""
    catalogue = claim.template.catalogue
    ordered = tuple(catalogue.by_price(claim.options, claim.requirements)[: options.max_instance_types])
    outcome = launch(catalogue, ordered, claim.requirements, claim.requests, options.min_values_policy == STRICT)
    return Launched(round_number, name, claim, ordered, outcome, in_flight(name, claim, outcome))


def _named(claims: Sequence[NodeClaim], round_number: int) -> list[tuple[str, NodeClaim]]:
    ordered = sorted(claims, key=lambda c: (c.template.pool.name, c.pods[0].uid))
    counts: dict[str, int] = {}
    out = []
    for claim in ordered:
        pool = claim.template.pool.name
        counts[pool] = counts.get(pool, 0) + 1
        out.append((f"r{round_number:02d}-{pool}-{counts[pool]:04d}", claim))
    return out


def provision(
    world: World, options: Options = Options(), max_rounds: int = MAX_ROUNDS, cluster_nodes: Sequence[StateNode] = ()
) -> Provisioning:
    """Solve, launch, and Solve again with the launched NodeClaims in flight, until nothing changes; from
    ``cluster_nodes``, the nodes the cluster already runs.

    Each Solve nominates its pods to the NodeClaims it makes and the nodes it packs them onto; Karpenter's
    Nominated event is deduplicated per pod for two minutes, longer than the rounds take, so the event a
    pod shows names its first nomination, which is what ``nominated`` keeps."""
    nodes: list[StateNode] = list(cluster_nodes)
    every: list[Launched] = []
    pending: list[int] = []
    nominated: dict[str, str] = {}
    first: Scheduler | None = None
    for number in range(1, max_rounds + 1):
        scheduler = Scheduler(world, options, nodes)
        first = first or scheduler
        solution = scheduler.solve(world.pods)
        named = _named(solution.node_claims, number)
        for name, pods in [*((name, claim.pods) for name, claim in named), *((e.node.name, e.pods) for e in solution.existing)]:
            for pod in pods:
                nominated.setdefault(pod.uid, name)
        fresh = [launched(claim, options, number, name) for name, claim in named]
        every.extend(fresh)
        pending.append(len(solution.errors))
        made = [item.node for item in fresh if item.node is not None]
        if not made or number == max_rounds:
            return Provisioning(tuple(every), tuple(pending), nominated, not fresh or not made, first, solution)
        nodes.extend(made)
    raise ValueError(f"max_rounds must be at least 1, got {max_rounds}")
