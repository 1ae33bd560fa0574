"""The forecast: per NodePool, the NodeClaims Karpenter would create, their pods, utilisation and price.

:func:`simulate` runs Karpenter's provisioning rounds to the fixpoint (:mod:`.rounds`: Solve, the
launch of each NodeClaim (:mod:`.launch`), Solve again with the launched ones in flight) and sums
the prices of every NodeClaim launched, each with the pods the last Solve put on it. An on-demand
NodeClaim costs its cheapest override; a spot NodeClaim costs somewhere in its candidates' range (EC2's allocation strategy picks), so every total is a
(low, high) pair, equal for on-demand. A month is 730 hours. Pods that cannot be scheduled carry
Karpenter's message and, per NodePool, the reason in a word (taints, requirements, topology,
resources, limits, minValues, ...); pods of workloads using what the simulation does not model
are listed with the reasons (:data:`.pods.UNMODELLED`). A NodePool with a cpu or memory limit also
carries what it would cost at that limit (:mod:`.limits`).

Given the cluster's own nodes (:class:`.existing.Cluster`), the rounds start from them: the pods
that fit their room land there (:class:`OnExistingNode`, at no new cost) and their capacity counts
against their NodePool's limits; only the rest make NodeClaims.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core import labels, versions
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.existing import StateNode
from karpenter_gitops.karpenter.scheduling.failures import message
from karpenter_gitops.karpenter.scheduling.launch import Launch, utilisation
from karpenter_gitops.karpenter.scheduling.limits import LimitCost, limit_cost
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH
from karpenter_gitops.karpenter.scheduling.pods import UNMODELLED, Pod
from karpenter_gitops.karpenter.scheduling.rounds import MAX_ROUNDS, Launched, Provisioning, provision
from karpenter_gitops.karpenter.scheduling.scheduler import Options
from karpenter_gitops.karpenter.scheduling.world import World


def _money(value: float) -> float:
    return round(value, 6)


@dataclass(frozen=True)
class PlannedNode:
    """One NodeClaim: its pods, what it asks for and what the launch would pick."""

    node_pool: str
    pods: tuple[str, ...]  # namespace/name
    requests: Mapping[str, int]  # the pods' requests
    daemon_overhead: Mapping[str, int]  # the smallest daemon overhead among its instance types
    zones: tuple[str, ...]
    launch: Launch
    allocatable: Mapping[str, int]  # of the cheapest candidate type
    options: tuple[str, ...] = ()  # the instance types the NodeClaim carries (at most 600), cheapest first
    round: int = 1  # the provisioning round whose Solve made it
    name: str = ""  # r<round>-<pool>-<n>, as the later rounds know it in flight
    nominated: tuple[str, ...] = ()  # the pods whose Nominated event names it: their first nomination, in any round

    @property
    def instance_type(self) -> str | None:
        """The cheapest candidate: what on-demand launches; the low end of a spot range."""
        cheapest = self.launch.cheapest
        return cheapest.instance_type if cheapest else None

    @property
    def hourly(self) -> tuple[float, float]:
        return self.launch.price_range

    @property
    def utilisation(self) -> dict[str, float]:
        return utilisation(resources.merge(self.requests, self.daemon_overhead), self.allocatable) if self.allocatable else {}

    def to_json(self) -> dict[str, Any]:
        low, high = self.hourly
        return {
            "name": self.name, "round": self.round, "nodePool": self.node_pool, "instanceType": self.instance_type, "capacityType": self.launch.capacity_type,
            "zones": list(self.zones), "pods": list(self.pods), "nominated": list(self.nominated),
            "requests": resources.as_quantities(self.requests), "daemonOverhead": resources.as_quantities(self.daemon_overhead),
            "utilisation": {k: round(v, 4) for k, v in self.utilisation.items()},
            "pricePerHour": {"low": _money(low), "high": _money(high)},
            "alternatives": [name for name in self.launch.instance_types if name != self.instance_type],
            "candidates": [c.to_json() for c in self.launch.candidates], "launchError": self.launch.error,
        }  # fmt: skip


@dataclass(frozen=True)
class OnExistingNode:
    """Pods the forecast puts on a node the cluster already runs."""

    name: str
    node_pool: str  # "" for a node no NodePool launched
    instance_type: str | None
    pods: tuple[str, ...]  # namespace/name

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.name,
            "nodePool": self.node_pool or None,
            "instanceType": self.instance_type,
            "pods": list(self.pods),
        }


@dataclass(frozen=True)
class Reason:
    """Why a pod fits no NodeClaim of one NodePool (``node_pool`` None: of any)."""

    node_pool: str | None
    kind: str  # taints, requirements, topology, resources, offerings, instance-types, limits, minValues, ...
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"nodePool": self.node_pool, "kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class Unschedulable:
    """Pods of one workload that cannot be scheduled, for the same reasons."""

    workload: str  # namespace/Kind/name
    pods: tuple[str, ...]
    message: str  # Karpenter's, as its FailedScheduling event says it
    reasons: tuple[Reason, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "pods": list(self.pods),
            "message": self.message,
            "reasons": [r.to_json() for r in self.reasons],
        }


@dataclass(frozen=True)
class Approximated:
    """A workload using what the simulation does not model."""

    workload: str
    pods: int
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "pods": self.pods, "reasons": list(self.reasons)}


@dataclass(frozen=True)
class PoolForecast:
    node_pool: str
    nodes: tuple[PlannedNode, ...]
    unusable: str | None = None  # why no NodeClaim can come from this NodePool
    limit_cost: LimitCost | None = None  # what it costs at its cpu/memory limit (limited pools only)

    @property
    def hourly(self) -> tuple[float, float]:
        return sum(n.hourly[0] for n in self.nodes), sum(n.hourly[1] for n in self.nodes)

    @property
    def pods(self) -> int:
        return sum(len(n.pods) for n in self.nodes)

    def to_json(self) -> dict[str, Any]:
        low, high = self.hourly
        return {
            "nodePool": self.node_pool,
            "nodeClaims": [n.to_json() for n in self.nodes],
            "pods": self.pods,
            "pricePerHour": {"low": _money(low), "high": _money(high)},
            "pricePerMonth": {"low": _money(low * HOURS_PER_MONTH), "high": _money(high * HOURS_PER_MONTH)},
            "unusable": self.unusable,
            "limitCost": self.limit_cost.to_json() if self.limit_cost else None,
        }


@dataclass(frozen=True)
class Round:
    """One provisioning round: the NodeClaims its Solve made, per NodePool, and the pods it left pending."""

    number: int
    node_claims: Mapping[str, int]  # NodePool → NodeClaims made (launched or not)
    pending: int  # pods its Solve could place nowhere

    def to_json(self) -> dict[str, Any]:
        return {"round": self.number, "nodeClaims": dict(self.node_claims), "podsPending": self.pending}


@dataclass(frozen=True)
class Forecast:
    """What Karpenter would launch for a world, and what it would cost."""

    release: versions.Release
    price_source: str
    pools: tuple[PoolForecast, ...]
    unschedulable: tuple[Unschedulable, ...]
    ignored: tuple[Unschedulable, ...]  # pods Karpenter would not provision for (their own choice or invalid)
    approximated: tuple[Approximated, ...]
    notes: tuple[str, ...]
    rounds: tuple[Round, ...] = ()
    settled: bool = True  # False: the loop stopped at its bound with NodeClaims still being made
    existing: tuple[OnExistingNode, ...] | None = None  # None: started from an empty cluster

    @property
    def hourly(self) -> tuple[float, float]:
        return sum(p.hourly[0] for p in self.pools), sum(p.hourly[1] for p in self.pools)

    @property
    def monthly(self) -> tuple[float, float]:
        low, high = self.hourly
        return low * HOURS_PER_MONTH, high * HOURS_PER_MONTH

    def to_json(self) -> dict[str, Any]:
        low, high = self.hourly
        return {
            "karpenter": versions.show(self.release), "prices": self.price_source,
            "pricePerHour": {"low": _money(low), "high": _money(high)},
            "pricePerMonth": {"low": _money(low * HOURS_PER_MONTH), "high": _money(high * HOURS_PER_MONTH)},
            "nodePools": [p.to_json() for p in self.pools],
            "unschedulable": [u.to_json() for u in self.unschedulable],
            "ignored": [u.to_json() for u in self.ignored],
            "approximated": [a.to_json() for a in self.approximated],
            "notes": list(self.notes),
            "rounds": [r.to_json() for r in self.rounds], "settled": self.settled,
            **({} if self.existing is None else {"existingNodes": [e.to_json() for e in self.existing]}),
        }  # fmt: skip


def _workload(pod: Pod) -> str:
    return f"{pod.namespace}/{pod.template.workload}"


def _grouped(pods: Iterable[Pod], describe: Mapping[str, tuple[str, tuple[Reason, ...]]]) -> tuple[Unschedulable, ...]:
    groups: dict[tuple[str, str], tuple[list[str], tuple[Reason, ...]]] = {}
    for pod in pods:
        message, reasons = describe[pod.uid]
        entry = groups.setdefault((_workload(pod), message), ([], reasons))
        entry[0].append(pod.uid)
    return tuple(
        Unschedulable(workload, tuple(names), message, reasons)
        for (workload, message), (names, reasons) in sorted(groups.items())
    )


def _planned(item: Launched, pods: Sequence[Pod], requests: Mapping[str, int], nominated: Mapping[str, str]) -> PlannedNode:
    """A launched NodeClaim with the pods the last Solve put on it and those first nominated to it."""
    claim, outcome = item.claim, item.launch
    catalogue = claim.template.catalogue
    cheapest = outcome.cheapest
    allocatable = catalogue.types[catalogue.position[cheapest.instance_type]].allocatable if cheapest else {}
    zone = claim.requirements.get(labels.ZONE)
    zones = sorted({c.zone for c in outcome.candidates if zone is None or zone.has(c.zone)})
    return PlannedNode(
        claim.template.pool.name,
        tuple(p.uid for p in pods),
        dict(requests),
        claim.daemon_overhead,
        tuple(zones),
        outcome,
        allocatable,
        tuple(catalogue.types[i].name for i in item.options),
        item.round,
        item.name,
        tuple(sorted(uid for uid, name in nominated.items() if name == item.name)),
    )


def simulate(
    world: World, options: Options = Options(), max_rounds: int = MAX_ROUNDS, cluster_nodes: Sequence[StateNode] | None = None
) -> Forecast:
    """Karpenter's provisioning rounds over ``world`` (``max_rounds=1``: one Solve and its launches), from
    ``cluster_nodes`` (None: an empty cluster)."""
    run = provision(world, options, max_rounds, cluster_nodes or ())
    solution, scheduler = run.last, run.first
    on_nodes = {existing.node.name: existing for existing in solution.existing}
    planned = []
    for item in run.launched:  # one made earlier that never launched is left out: later rounds placed its pods again
        existing = on_nodes.get(item.name)
        if existing is not None:
            planned.append(_planned(item, existing.pods, existing.requests, run.nominated))
        elif item.round == run.rounds:  # made by the last Solve (a failed launch, or the bound): its pods are its own
            planned.append(
                _planned(item, item.claim.pods, resources.merge(*(d.requests for d in item.claim.data)), run.nominated)
            )
    at_limits = {
        t.pool.name: cost
        for t in scheduler.templates
        if (cost := limit_cost(t.pool.name, t.pool.limits, t.catalogue, t.requirements, t.options))
    }
    pools = []
    for pool in sorted(world.node_pools, key=lambda p: p.name):
        nodes = tuple(n for n in planned if n.node_pool == pool.name)
        pools.append(PoolForecast(pool.name, nodes, solution.unusable_pools.get(pool.name), at_limits.get(pool.name)))
    failed = {
        uid: (message(failures), tuple(Reason(pool, f.kind, str(f)) for pool, f in failures))
        for uid, failures in solution.errors.items()
    }
    by_uid = {pod.uid: pod for pod in world.pods}
    ignored = {
        pod.uid: (pod.template.ignored, (Reason(None, "ignored", pod.template.ignored),))
        for pod in world.pods
        if pod.template.ignored
    }
    approximated: dict[str, tuple[int, tuple[str, ...]]] = {}
    for pod in world.pods:
        if pod.template.approximations:
            count, _ = approximated.get(_workload(pod), (0, ()))
            approximated[_workload(pod)] = (count + 1, tuple(UNMODELLED[a] for a in pod.template.approximations))
    return Forecast(
        options.release,
        world.price_source,
        tuple(pools),
        _grouped((by_uid[uid] for uid in sorted(failed)), failed),
        _grouped((by_uid[uid] for uid in sorted(ignored)), ignored),
        tuple(Approximated(w, n, r) for w, (n, r) in sorted(approximated.items())),
        world.notes,
        _rounds(run),
        run.settled,
        None if cluster_nodes is None else _on_existing(cluster_nodes, on_nodes),
    )


def _on_existing(cluster_nodes: Sequence[StateNode], on_nodes: Mapping[str, Any]) -> tuple[OnExistingNode, ...]:
    """The cluster's nodes the last Solve put pods on, by name."""
    out = []
    for node in sorted(cluster_nodes, key=lambda n: n.name):
        placed = on_nodes.get(node.name)
        if placed is not None and placed.pods:
            kind = node.labels.get(labels.INSTANCE_TYPE)
            out.append(OnExistingNode(node.name, node.node_pool, kind, tuple(p.uid for p in placed.pods)))
    return tuple(out)


def _rounds(run: Provisioning) -> tuple[Round, ...]:
    out = []
    for number, pending in enumerate(run.pending, start=1):
        made: dict[str, int] = {}
        for item in run.launched:
            if item.round == number:
                made[item.claim.template.pool.name] = made.get(item.claim.template.pool.name, 0) + 1
        out.append(Round(number, dict(sorted(made.items())), pending))
    return tuple(out)
