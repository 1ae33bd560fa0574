"""Node-impact forecast: which existing nodes a change drifts, and how many waves that takes.

Pure: it compares the base and head objects (and their plans, when reconciled) and, given the
cluster's NodeClaims, counts per NodePool the nodes Karpenter would mark drifted. The rules
follow Karpenter v1: ``pkg/controllers/nodeclaim/disruption/drift.go`` of sigs.k8s.io/karpenter, and
for the EC2NodeClass ``pkg/cloudprovider/drift.go`` of github.com/aws/karpenter-provider-aws:

* ``NodePoolDrifted``: the NodePool template changed outside ``requirements`` (the core hash
  ignores requirements and resources);
* ``RequirementsDrifted``: a node's labels no longer satisfy the NodePool requirements;
* ``NodeClassDrift``: a hashed EC2NodeClass field changed (every spec field except the selector
  terms, the literal ``amiFamily`` and ``ipPrefixCount``; the *resolved* family counts), compared
  like the hash does: lists as sets, zero values ignored;
* ``AMIDrift``: a node's image is not what the head mapping gives its instance type;
* ``SecurityGroupDrift``: the resolved security-group set changed.

A node counts once, under the first reason in Karpenter's order. Disruption budgets (the most
restrictive one that applies to ``Drifted``; percentages round up) turn counts into waves.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core.cluster import FleetNode
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.model import EC2NodeClass, NodePool
from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.amifamily import family_of
from karpenter_gitops.karpenter.disruption.budgets import DriftBudget, waves
from karpenter_gitops.karpenter.status.prediction import Plan

NODEPOOL_DRIFT, REQUIREMENTS_DRIFT = "NodePoolDrifted", "RequirementsDrifted"
NODECLASS_DRIFT, AMI_DRIFT, SECURITY_GROUP_DRIFT = "NodeClassDrift", "AMIDrift", "SecurityGroupDrift"
UNHASHED_NODECLASS_FIELDS = frozenset(
    {
        "subnetSelectorTerms",
        "securityGroupSelectorTerms",
        "capacityReservationSelectorTerms",
        "amiSelectorTerms",
        "amiFamily",
        "ipPrefixCount",
    }
)


# --- the cluster's side ------------------------------------------------------------------


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


def _canonical(value: Any) -> Any:
    """A value as Karpenter's hash sees it: zero values dropped, lists compared as sets."""
    if isinstance(value, Mapping):
        kept = {str(k): _canonical(v) for k, v in value.items()}
        return {k: v for k, v in sorted(kept.items()) if v not in (None, "", 0, False, {}, [])}
    if isinstance(value, (list, tuple)):
        return sorted((_canonical(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True, default=str))
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping; loading reported it otherwise, and the hash sees nothing there."""
    return value if isinstance(value, Mapping) else {}


def _spec(obj: EC2NodeClass | NodePool) -> Mapping[str, Any]:
    return _mapping(obj.raw.get("spec"))


def node_class_hash_changes(base: EC2NodeClass, head: EC2NodeClass) -> tuple[str, ...]:
    """The hashed EC2NodeClass fields that differ (``spec.<field>``), plus the resolved family."""
    old, new = _canonical(_spec(base)), _canonical(_spec(head))
    changed = [
        f"spec.{key}" for key in sorted((old.keys() | new.keys()) - UNHASHED_NODECLASS_FIELDS) if old.get(key) != new.get(key)
    ]
    if family_of(base) != family_of(head):
        changed.append(f"AMI family {family_of(base).name} → {family_of(head).name}")
    return tuple(changed)


def node_pool_template_changes(base: NodePool, head: NodePool) -> tuple[str, ...]:
    """Template fields in the NodePool hash that differ (``requirements`` and ``resources`` are not hashed)."""

    def hashed(pool: NodePool) -> dict[str, Any]:
        template = dict(_mapping(_spec(pool).get("template")))
        template["spec"] = {k: v for k, v in _mapping(template.get("spec")).items() if k not in ("requirements", "resources")}
        return template

    old, new = hashed(base), hashed(head)
    paths: list[str] = []
    for part in ("metadata", "spec"):
        before, after = _canonical(_mapping(old.get(part))), _canonical(_mapping(new.get(part)))
        paths.extend(
            f"spec.template.{part}.{key}" for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)
        )
    return tuple(paths)


# --- the forecast ------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolForecast:
    node_pool: str
    whole_pool: tuple[str, ...]  # reasons that drift every node of the pool, e.g. "NodeClassDrift: spec.userData"
    moves: tuple[AMIMove, ...]  # instance types changing AMI (when reconciled)
    budget: DriftBudget
    removed: bool = False
    nodes: int | None = None  # None without a cluster
    drifted: Mapping[str, int] = field(default_factory=dict)  # reason → nodes (cluster only)

    @property
    def drifted_total(self) -> int:
        return sum(self.drifted.values())

    @property
    def waves(self) -> int | None:
        """Waves with a cluster; without one, what the budget implies when every node drifts."""
        if self.removed:
            return 0
        if self.nodes is not None:
            return waves(self.drifted_total, self.budget.allowed(self.nodes))
        if not self.whole_pool:
            return None  # only some instance types move; how many nodes is unknown
        return waves(100, self.budget.allowed(100))

    def to_json(self) -> dict[str, Any]:
        return {
            "nodePool": self.node_pool,
            "removed": self.removed,
            "wholePool": list(self.whole_pool),
            "amiMoves": [m.to_json() for m in self.moves],
            "budget": self.budget.describe(),
            "nodes": self.nodes,
            "drifted": dict(sorted(self.drifted.items())),
            "waves": self.waves,
        }


@dataclass(frozen=True)
class Forecast:
    pools: tuple[PoolForecast, ...]
    with_cluster: bool
    reconciled: bool

    def to_json(self) -> dict[str, Any]:
        return {"withCluster": self.with_cluster, "reconciled": self.reconciled, "nodePools": [p.to_json() for p in self.pools]}


def forecast(
    base: Inputs,
    head: Inputs,
    base_plan: Plan | None = None,
    head_plan: Plan | None = None,
    fleet: Sequence[FleetNode] | None = None,
) -> Forecast:
    """Per NodePool of the base, what the head change drifts; with ``fleet``, how many nodes."""
    moves = ami_moves(base_plan, head_plan) if base_plan and head_plan else ()
    moves_by_pool: dict[str, list[AMIMove]] = defaultdict(list)
    for move in moves:
        moves_by_pool[move.node_pool].append(move)
    by_pool: dict[str, list[FleetNode]] = defaultdict(list)
    for node in fleet or ():
        by_pool[node.node_pool].append(node)
    head_pools = {pool.name: pool for pool in head.node_pools}
    pools = []
    for old in sorted(base.node_pools, key=lambda p: p.name):
        new = head_pools.get(old.name)
        reasons = _whole_pool_reasons(old, new, base, head, base_plan, head_plan) if new else ()
        pool_moves = tuple(m for m in moves_by_pool[old.name] if m.old is not None)
        nodes = by_pool.get(old.name, []) if fleet is not None else None
        drifted = _count(nodes, reasons, new, head_plan) if nodes is not None and new else {}
        if nodes is not None and new is None:
            drifted = {"NodePool removed": len(nodes)} if nodes else {}
        if not (reasons or pool_moves or drifted or new is None):
            continue
        pools.append(
            PoolForecast(
                node_pool=old.name,
                whole_pool=reasons,
                moves=pool_moves,
                budget=DriftBudget.of(new or old),
                removed=new is None,
                nodes=None if nodes is None else len(nodes),
                drifted=drifted,
            )
        )
    return Forecast(tuple(pools), fleet is not None, head_plan is not None)


def _whole_pool_reasons(
    old: NodePool, new: NodePool, base: Inputs, head: Inputs, base_plan: Plan | None, head_plan: Plan | None
) -> tuple[str, ...]:
    reasons = []
    template = node_pool_template_changes(old, new)
    if template:
        reasons.append(f"{NODEPOOL_DRIFT}: {', '.join(template)}")
    class_name = _class_name(new)
    old_class, new_class = base.node_class(_class_name(old)), head.node_class(class_name)
    if old_class and new_class:
        hashed = node_class_hash_changes(old_class, new_class)
        if hashed:
            reasons.append(f"{NODECLASS_DRIFT}: EC2NodeClass {class_name} {', '.join(hashed)}")
    if base_plan and head_plan and class_name in base_plan.node_classes and class_name in head_plan.node_classes:
        before = {g.id for g in base_plan.node_classes[class_name].security_groups}
        after = {g.id for g in head_plan.node_classes[class_name].security_groups}
        if before and after and before != after:
            reasons.append(f"{SECURITY_GROUP_DRIFT}: EC2NodeClass {class_name} security groups {_set_change(before, after)}")
    return tuple(reasons)


def _class_name(pool: NodePool) -> str:
    ref = pool.spec.template.spec.node_class_ref if pool.spec.template and pool.spec.template.spec else None
    return (ref.name if ref else None) or ""


def _set_change(before: set[str], after: set[str]) -> str:
    parts = [f"+{item}" for item in sorted(after - before)] + [f"-{item}" for item in sorted(before - after)]
    return " ".join(parts)


def _count(nodes: Sequence[FleetNode], reasons: tuple[str, ...], pool: NodePool, head_plan: Plan | None) -> dict[str, int]:
    """Drifted nodes by the first reason that applies, in Karpenter's order."""
    kinds = {reason.partition(":")[0] for reason in reasons}
    required = Requirements.from_node_pool(pool)
    mapping = head_plan.node_pools[pool.name].mapping if head_plan and pool.name in head_plan.node_pools else None
    counts: Counter[str] = Counter()
    for node in nodes:
        if NODEPOOL_DRIFT in kinds:
            counts[NODEPOOL_DRIFT] += 1
        elif required.conflict(Requirements.from_labels(node.labels)) is not None:
            counts[REQUIREMENTS_DRIFT] += 1
        elif NODECLASS_DRIFT in kinds:
            counts[NODECLASS_DRIFT] += 1
        elif mapping is not None and node.image_id and mapping.instance_types.get(node.instance_type or "") != node.image_id:
            counts[AMI_DRIFT] += 1
        elif SECURITY_GROUP_DRIFT in kinds:
            counts[SECURITY_GROUP_DRIFT] += 1
    return dict(counts)
