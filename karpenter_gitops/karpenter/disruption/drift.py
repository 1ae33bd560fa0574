"""Node-impact forecast: which existing nodes a change drifts, why, and how many waves that takes.

Pure: it compares the base and head objects (and their plans, when reconciled) per NodePool and
names each drift reason Karpenter would compute, in Karpenter's order (``isDrifted`` of
pkg/controllers/nodeclaim/disruption/drift.go in sigs.k8s.io/karpenter, then ``isNodeClassDrifted`` of
pkg/cloudprovider/drift.go in github.com/aws/karpenter-provider-aws), with the nodes it concerns:

* ``NodePoolDrifted``: the NodePool template's static hash moves (:mod:`.hashing`): every node;
* ``RequirementsDrifted``: the head no longer allows label values the base did
  (:mod:`.requirement_drift`): "nodes with karpenter.sh/capacity-type=on-demand";
* ``NodeClassDrift``: the EC2NodeClass's static hash of the release moves: every node;
* ``AMIDrift``: offline, the AMI selection changed and only AWS can tell which nodes are not on the
  image it gives their instance type; reconciled, the instance types whose image moves;
* ``SecurityGroupDrift`` / ``SubnetDrift``: offline, the selector changed (unknown offline);
  reconciled, the resolved sets differ: every node, or the nodes in the subnets dropped;
* ``CapacityReservationDrift`` (1.3 and later): the reservation selection changed; which nodes sit in
  a reservation it drops is unknown here. ``placementGroupSelector`` is hashed, so it drifts as
  ``NodeClassDrift`` first.

Given the cluster's NodeClaims, a node counts once, under the first reason in that order; nodes only
AWS can judge are counted apart. Disruption budgets (the most restrictive one that applies to
``Drifted``; percentages round up) turn counts into waves. Given the cluster's pods too, the pool
carries where its drifted nodes' pods go when they are replaced (:mod:`.replacement`, set by the
preview, which has the head's instance types).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.model import EC2NodeClass, NodePool
from karpenter_gitops.karpenter.disruption.budgets import DriftBudget, waves
from karpenter_gitops.karpenter.disruption.hashing import (
    EC2NODECLASS_HASH_VERSIONS,
    NODEPOOL_HASH_VERSIONS,
    hash_version,
    node_class_hash_changes,
    node_pool_template_changes,
)
from karpenter_gitops.karpenter.disruption.replacement import Replacement
from karpenter_gitops.karpenter.disruption.requirement_drift import label_drifts, requirements_drift
from karpenter_gitops.karpenter.status.prediction import Plan

NODEPOOL_DRIFT, REQUIREMENTS_DRIFT = "NodePoolDrifted", "RequirementsDrifted"
NODECLASS_DRIFT, AMI_DRIFT, SECURITY_GROUP_DRIFT = "NodeClassDrift", "AMIDrift", "SecurityGroupDrift"
SUBNET_DRIFT, CAPACITY_RESERVATION_DRIFT = "SubnetDrift", "CapacityReservationDrift"
CAPACITY_RESERVATION_DRIFT_SINCE = versions.Release((1, 3))
EVERY_NODE = "every node"
UNKNOWN_OFFLINE = "unknown offline"


@dataclass(frozen=True)
class Drift:
    """One reason Karpenter would give, the change behind it and the nodes it concerns."""

    reason: str  # Karpenter's DriftReason
    change: str  # what moved: "EC2NodeClass default spec.userData"
    nodes: str  # which nodes: "every node", "nodes with karpenter.sh/capacity-type=on-demand"
    every_node: bool = False
    unknown: bool = False  # which nodes only AWS (or a reconciled run) can tell

    def describe(self) -> str:
        return f"{self.reason}: {self.nodes} ({self.change})"

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "change": self.change,
            "nodes": self.nodes,
            "everyNode": self.every_node,
            "unknown": self.unknown,
        }


# --- what moves between base and head ----------------------------------------------------


@dataclass(frozen=True)
class AMIMove:
    """Instance types of one NodePool whose AMI changes (``None``: not launchable on that side)."""

    node_pool: str
    old: str | None
    new: str | None
    instance_types: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"nodePool": self.node_pool, "from": self.old, "to": self.new, "instanceTypes": list(self.instance_types)}


def ami_moves(base_plan: Plan, head_plan: Plan) -> tuple[AMIMove, ...]:
    """Per NodePool present in both plans, instance types grouped by (old AMI, new AMI)."""
    moves: list[AMIMove] = []
    for pool in sorted(base_plan.node_pools.keys() & head_plan.node_pools.keys()):
        old, new = _instance_type_amis(base_plan, pool), _instance_type_amis(head_plan, pool)
        if old is None or new is None:
            continue  # one side was not mapped (a dependency not ready): nothing to compare
        grouped: dict[tuple[str | None, str | None], list[str]] = defaultdict(list)
        for instance_type in sorted(old.keys() | new.keys()):
            if old.get(instance_type) != new.get(instance_type):
                grouped[(old.get(instance_type), new.get(instance_type))].append(instance_type)
        moves.extend(
            AMIMove(pool, before, after, tuple(types))
            for (before, after), types in sorted(grouped.items(), key=lambda item: (str(item[0][0]), str(item[0][1])))
        )
    return tuple(moves)


def _instance_type_amis(plan: Plan, pool: str) -> Mapping[str, str] | None:
    mapping = plan.node_pools[pool].mapping
    return mapping.instance_types if mapping else None


def summarise_types(instance_types: Sequence[str], limit: int | None = 8) -> str:
    """``m5.* (7), m6i.large``: whole families collapse to a wildcard; at most ``limit`` groups."""
    families: dict[str, list[str]] = defaultdict(list)
    for name in instance_types:
        families[name.partition(".")[0]].append(name)
    groups = [f"{family}.* ({len(names)})" if len(names) > 1 else names[0] for family, names in sorted(families.items())]
    if limit is not None and len(groups) > limit:
        rest = sum(len(families[name.partition(".")[0]]) for name in groups[limit:])
        groups = groups[:limit] + [f"… {rest} more types"]
    return ", ".join(groups)


# --- the forecast ------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolForecast:
    node_pool: str
    drifts: tuple[Drift, ...]  # Karpenter's reasons for this pool's nodes, in its order
    moves: tuple[AMIMove, ...]  # instance types changing AMI (when reconciled)
    budget: DriftBudget
    removed: bool = False
    nodes: int | None = None  # None without a cluster
    drifted: Mapping[str, int] = field(default_factory=dict)  # reason → nodes (cluster only)
    undecided: int = 0  # nodes (cluster only) that only AWS can judge: a reason fires whose nodes are unknown
    drifted_nodes: tuple[str, ...] = ()  # the drifted nodes' names (their Node's, else the NodeClaim's)
    replacement: Replacement | None = None  # where their pods go (cluster pods and the head's instance types only)

    @property
    def every_node(self) -> bool:
        return any(d.every_node for d in self.drifts)

    @property
    def drifted_total(self) -> int:
        return sum(self.drifted.values())

    @property
    def waves(self) -> int | None:
        """Waves with a cluster; without one, what a percentage budget implies when every node drifts."""
        if self.removed:
            return 0
        if self.nodes is not None:
            return waves(self.drifted_total, self.budget.allowed(self.nodes))
        if not self.every_node:
            return None  # only some nodes drift; how many is unknown
        return waves(100, self.budget.allowed(100))

    def to_json(self) -> dict[str, Any]:
        return {
            "nodePool": self.node_pool,
            "removed": self.removed,
            "drifts": [d.to_json() for d in self.drifts],
            "amiMoves": [m.to_json() for m in self.moves],
            "budget": self.budget.describe(),
            "pace": self.budget.pace(),
            "nodes": self.nodes,
            "drifted": dict(sorted(self.drifted.items())),
            "undecided": self.undecided,
            "waves": self.waves,
            **({"replacement": self.replacement.to_json()} if self.replacement else {}),
        }


@dataclass(frozen=True)
class Forecast:
    pools: tuple[PoolForecast, ...]
    with_cluster: bool
    reconciled: bool
    release: versions.Release = versions.DEFAULT

    def to_json(self) -> dict[str, Any]:
        """With the hash versions of the release: a NodeClaim stamped with another is not compared statically."""
        return {
            "withCluster": self.with_cluster,
            "reconciled": self.reconciled,
            "hashVersions": {
                "nodePool": hash_version(NODEPOOL_HASH_VERSIONS, self.release),
                "ec2NodeClass": hash_version(EC2NODECLASS_HASH_VERSIONS, self.release),
            },
            "nodePools": [p.to_json() for p in self.pools],
        }


def forecast(
    base: Inputs,
    head: Inputs,
    base_plan: Plan | None = None,
    head_plan: Plan | None = None,
    fleet: Sequence[FleetNode] | None = None,
    release: versions.Release = versions.DEFAULT,
) -> Forecast:
    """Per NodePool of the base, what the head change drifts under ``release``; with ``fleet``, how many nodes."""
    plans = (base_plan, head_plan) if base_plan is not None and head_plan is not None else None
    moves_by_pool: dict[str, list[AMIMove]] = defaultdict(list)
    for move in ami_moves(*plans) if plans else ():
        moves_by_pool[move.node_pool].append(move)
    by_pool: dict[str, list[FleetNode]] = defaultdict(list)
    for node in fleet or ():
        by_pool[node.node_pool].append(node)
    head_pools = {pool.name: pool for pool in head.node_pools}
    pools = []
    for old in sorted(base.node_pools, key=lambda p: p.name):
        new = head_pools.get(old.name)
        pool_moves = tuple(m for m in moves_by_pool[old.name] if m.old is not None)
        drifts = pool_drifts(old, new, base, head, release, plans) if new else ()
        nodes = by_pool.get(old.name, []) if fleet is not None else None
        drifted: dict[str, int] = {}
        undecided = 0
        names: tuple[str, ...] = ()
        if nodes is not None and new is not None:
            drifted, undecided, names = _count(nodes, drifts, new, head_plan)
        elif nodes:
            drifted = {"NodePool removed": len(nodes)}
        if not (drifts or pool_moves or drifted or new is None):
            continue
        pools.append(
            PoolForecast(
                node_pool=old.name,
                drifts=drifts,
                moves=pool_moves,
                budget=DriftBudget.of(new or old),
                removed=new is None,
                nodes=None if nodes is None else len(nodes),
                drifted=drifted,
                undecided=undecided,
                drifted_nodes=names,
            )
        )
    return Forecast(tuple(pools), fleet is not None, plans is not None, release)


def pool_drifts(
    old: NodePool, new: NodePool, base: Inputs, head: Inputs, release: versions.Release, plans: tuple[Plan, Plan] | None
) -> tuple[Drift, ...]:
    """Every reason Karpenter would give for the nodes of ``old`` once it is ``new``, in Karpenter's order."""
    drifts = []
    template = node_pool_template_changes(old, new)
    if template:
        drifts.append(Drift(NODEPOOL_DRIFT, f"NodePool {', '.join(template)}", EVERY_NODE, every_node=True))
    for label in label_drifts(old, new):
        drifts.append(Drift(REQUIREMENTS_DRIFT, f"requirement {label.key} now {label.head}", label.nodes(), label.every_node))
    old_class, new_class = base.node_class(_class_name(old)), head.node_class(_class_name(new))
    if old_class and new_class:
        drifts += _node_class_drifts(old_class, new_class, release, plans)
    return tuple(drifts)


def _node_class_drifts(
    old: EC2NodeClass, new: EC2NodeClass, release: versions.Release, plans: tuple[Plan, Plan] | None
) -> list[Drift]:
    name = f"EC2NodeClass {new.name}"
    drifts = []
    hashed = node_class_hash_changes(old, new, release)
    if hashed:
        drifts.append(Drift(NODECLASS_DRIFT, f"{name} {', '.join(hashed)}", EVERY_NODE, every_node=True))
    if plans is None and _terms(old, new, "amiSelectorTerms"):
        drifts.append(
            Drift(
                AMI_DRIFT,
                f"{name} spec.amiSelectorTerms",
                f"nodes not on the image the new selection gives their instance type: {UNKNOWN_OFFLINE}",
                unknown=True,
            )
        )  # reconciled, the AMI moves say which instance types move
    resolved = _resolved(old.name, new.name, plans)
    if resolved is not None:
        (old_groups, new_groups), (old_subnets, new_subnets) = resolved
        if old_groups and new_groups and old_groups != new_groups:
            drifts.append(
                Drift(
                    SECURITY_GROUP_DRIFT,
                    f"{name} security groups {_set_change(old_groups, new_groups)}",
                    EVERY_NODE,
                    every_node=True,
                )
            )
        dropped = sorted(old_subnets - new_subnets)
        if new_subnets and dropped:
            drifts.append(
                Drift(SUBNET_DRIFT, f"{name} subnets {_set_change(old_subnets, new_subnets)}", f"nodes in {', '.join(dropped)}")
            )
    else:
        for field_name, reason, nodes in (
            ("securityGroupSelectorTerms", SECURITY_GROUP_DRIFT, "every node if the selected groups differ"),
            ("subnetSelectorTerms", SUBNET_DRIFT, "nodes in subnets the new selection leaves out"),
        ):
            if _terms(old, new, field_name):
                drifts.append(Drift(reason, f"{name} spec.{field_name}", f"{nodes}: {UNKNOWN_OFFLINE}", unknown=True))
    if release >= CAPACITY_RESERVATION_DRIFT_SINCE and _terms(old, new, "capacityReservationSelectorTerms"):
        drifts.append(
            Drift(
                CAPACITY_RESERVATION_DRIFT,
                f"{name} spec.capacityReservationSelectorTerms",
                "nodes in capacity reservations the new selection leaves out: unknown (AWS resolves "
                "reservations; the plan does not)",
                unknown=True,
            )
        )
    return drifts


def _terms(old: EC2NodeClass, new: EC2NodeClass, field_name: str) -> bool:
    """Whether a selector changed, its terms compared as a set (their order selects nothing)."""

    def terms(node_class: EC2NodeClass) -> frozenset[str]:
        spec = node_class.raw.get("spec")
        written = spec.get(field_name) if isinstance(spec, Mapping) else None
        return (
            frozenset(json.dumps(t, sort_keys=True, default=str) for t in written) if isinstance(written, list) else frozenset()
        )

    return terms(old) != terms(new)


def _resolved(
    old: str, new: str, plans: tuple[Plan, Plan] | None
) -> tuple[tuple[set[str], set[str]], tuple[set[str], set[str]]] | None:
    """(security groups, subnets) each as (base, head) ids, when both plans resolved the class."""
    if plans is None or old not in plans[0].node_classes or new not in plans[1].node_classes:
        return None
    before, after = plans[0].node_classes[old], plans[1].node_classes[new]
    return (
        ({g.id for g in before.security_groups}, {g.id for g in after.security_groups}),
        ({s.id for s in before.subnets}, {s.id for s in after.subnets}),
    )


def _class_name(pool: NodePool) -> str:
    ref = pool.spec.template.spec.node_class_ref if pool.spec.template and pool.spec.template.spec else None
    return (ref.name if ref else None) or ""


def _set_change(before: set[str], after: set[str]) -> str:
    parts = [f"+{item}" for item in sorted(after - before)] + [f"-{item}" for item in sorted(before - after)]
    return " ".join(parts)


def _count(
    nodes: Sequence[FleetNode], drifts: tuple[Drift, ...], pool: NodePool, head_plan: Plan | None
) -> tuple[dict[str, int], int, tuple[str, ...]]:
    """Drifted nodes by the first reason that applies, in Karpenter's order, the nodes only AWS can judge,
    and the drifted nodes' names."""
    kinds = {d.reason for d in drifts if d.every_node}
    unknown = any(d.unknown or d.reason == SUBNET_DRIFT for d in drifts)
    mapping = head_plan.node_pools[pool.name].mapping if head_plan and pool.name in head_plan.node_pools else None
    counts: Counter[str] = Counter()
    undecided = 0
    names = []
    for node in nodes:
        if NODEPOOL_DRIFT in kinds:
            reason = NODEPOOL_DRIFT
        elif requirements_drift(pool, node.labels) is not None:
            reason = REQUIREMENTS_DRIFT
        elif NODECLASS_DRIFT in kinds:
            reason = NODECLASS_DRIFT
        elif mapping is not None and node.image_id and mapping.instance_types.get(node.instance_type or "") != node.image_id:
            reason = AMI_DRIFT
        elif SECURITY_GROUP_DRIFT in kinds:
            reason = SECURITY_GROUP_DRIFT
        else:
            undecided += unknown
            continue
        counts[reason] += 1
        names.append(node.node_name or node.name)
    return dict(counts), undecided, tuple(names)
