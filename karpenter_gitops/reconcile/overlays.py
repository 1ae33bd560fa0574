"""The NodeOverlay step of a plan: the instance types each NodePool lists, with the overlays applied.

Karpenter runs its overlay controller only with the ``NodeOverlay`` feature gate (from 1.7); then,
per NodePool whose EC2NodeClass lists instance types, every instance type of the class with an
offering per zone of the region and capacity type. The plan evaluates the NodePools it mapped
(Karpenter also those whose class has subnets but no AMI yet, which launch nothing either). Offerings are priced from
Karpenter's static on-demand table; spot prices are not known offline. Overlays the API server
refuses never reach the controller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from karpenter_gitops.adapters.aws.pricing import OnDemandPrices
from karpenter_gitops.core import labels, overlays, versions
from karpenter_gitops.core.findings import Finding, Observation, Severity, Violation
from karpenter_gitops.core.inputs import Cluster, Inputs
from karpenter_gitops.core.mapping import LabelledCatalogue, NodeClassTarget
from karpenter_gitops.core.model import NODEOVERLAY, EC2NodeClass, NodeOverlay, NodePool
from karpenter_gitops.core.plan import NodePoolPlan, OverlayPlan, PoolOverlays
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.core.resolved import Condition, Subnet
from karpenter_gitops.rules import live
from karpenter_gitops.rules import nodeoverlay as nodeoverlay_rules
from karpenter_gitops.rules.gate import GATES


@dataclass(frozen=True)
class PoolSource:
    """What the step needs of one NodePool the plan mapped: its class's filters and subnets."""

    pool: NodePool
    plan: NodePoolPlan
    node_class: EC2NodeClass
    target: NodeClassTarget
    subnets: tuple[Subnet, ...]


@dataclass(frozen=True)
class OverlayStep:
    plan: OverlayPlan
    pools: Mapping[str, PoolOverlays]
    observed: tuple[Observation, ...]


def stalled_pools(
    inputs: Inputs, version: versions.Version, unlistable: Mapping[str, str]
) -> tuple[tuple[str, ...], list[Observation]]:
    """Before 1.13, with the gate on: the NodePools whose instance types Karpenter cannot list (``unlistable``:
    pool → why) stop its overlay controller, and with it every NodePool."""
    if not unlistable or version >= overlays.ISOLATED_POOLS_SINCE or not inputs.cluster.gate(GATES[NODEOVERLAY].name):
        return (), []
    observed = [
        Observation(
            live.OVERLAY_EVALUATION_STALLED, pool.kind, pool.name,
            Violation("spec.template.spec.nodeClassRef",
                      f"Karpenter {versions.show(version)} cannot list this NodePool's instance types ({unlistable[pool.name]}), "
                      "so with the NodeOverlay gate on it evaluates no NodePool's overlays and skips every NodePool "
                      "(\"awaiting nodeoverlay evaluation\"): nothing launches"),
            pool.source,
        )
        for pool in inputs.node_pools
        if pool.name in unlistable
    ]
    return tuple(sorted(unlistable)), observed


def runtime_failures(findings: Sequence[Finding]) -> dict[str, str]:
    """Overlays Karpenter's runtime validation refuses, with its error: each requirement's, joined with multierr's '; '."""
    found: dict[str, list[tuple[int, str]]] = {}
    for f in findings:
        if f.rule == nodeoverlay_rules.LABEL_SYNTAX and f.severity is Severity.ERROR:
            index = re.search(r"\[(\d+)\]", f.path)
            found.setdefault(f.name, []).append((int(index.group(1)) if index else 0, f.message))
    return {name: "; ".join(message for _, message in sorted(messages)) for name, messages in found.items()}


def refused_by_api_server(findings: Sequence[Finding]) -> frozenset[str]:
    """Overlays with an error the API server raises: not stored, so never seen by Karpenter."""
    return frozenset(
        f.name for f in findings if f.kind == NODEOVERLAY and f.severity is Severity.ERROR and f.layer == "api-server"
    )


def plan_overlays(
    inputs: Inputs,
    version: versions.Version,
    sources: Sequence[PoolSource],
    catalogue: LabelledCatalogue | None,
    prices: OnDemandPrices,
    refused: frozenset[str],
    *,
    failing: Mapping[str, str] | None = None,
    every_pool: bool = True,
    stalled: Sequence[str] = (),
) -> OverlayStep:
    """``every_pool``: every NodePool of the input is among ``sources`` (or not Karpenter's to map), so an
    overlay none of them launches matches nothing; otherwise that is not said. ``stalled``: the NodePools
    that keep Karpenter before 1.13 from evaluating any overlay (see :func:`stalled_pools`); ``failing``: the
    overlays its runtime validation refuses, with its error (see :func:`runtime_failures`)."""
    failing = failing or {}
    not_applied = _not_applied(inputs.cluster) or (
        f"Karpenter {versions.show(version)} evaluates no NodeOverlay while it cannot list the instance types of "
        f"NodePool(s) {', '.join(stalled)} (see findings)" if stalled else None
    )
    kept = [o for o in inputs.node_overlays if o.name not in refused and not o.blocked]
    refused_names = tuple(sorted({o.name for o in inputs.node_overlays} - {o.name for o in kept}))
    if not_applied or catalogue is None:
        why = not_applied or "the instance-type catalogue is not loaded"
        return OverlayStep(OverlayPlan(not_applied=why, refused=refused_names, prices=prices.note), {}, ())
    usable, unreadable = _readable([o for o in kept if o.name not in failing])
    refused_names = tuple(sorted(set(refused_names) | unreadable))
    heaviest = version >= overlays.HEAVIEST_CAPACITY_SINCE
    by_class: dict[str, tuple[overlays.InstanceType, ...]] = {}  # pools of one class list the same types
    evaluated = [(source, _pool_types(source, catalogue, prices, by_class, {})) for source in sources]
    outcome = overlays.apply(usable, [types for _, types in evaluated], heaviest_capacity=heaviest)
    # Conflicts do not depend on prices, so the first pass decides which overlays may price unpriced types.
    accepted = {name for name, condition in outcome.conditions.items() if condition.status == "True"}
    unpriced = {
        name: price
        for name, price in (overlays.base_prices(kept, accepted) if version >= overlays.BASE_PRICE_SINCE else {}).items()
        if name not in prices.prices and name in catalogue.infos
    }
    plain = {source.pool.name: types for source, types in evaluated}  # what each pool lists without any overlay
    if unpriced:
        by_class = {}
        evaluated = [(source, _pool_types(source, catalogue, prices, by_class, unpriced)) for source in sources]
        outcome = overlays.apply(usable, [types for _, types in evaluated], heaviest_capacity=heaviest)
    pools = {source.pool.name: _pool_overlays(source, plain[source.pool.name], outcome) for source, _ in evaluated}
    by_name = {o.name: o for o in kept}
    observed = [_conflict(by_name[name], conflict, usable) for name, conflict in sorted(outcome.conflicts.items())]
    if evaluated and every_pool:
        observed += _matching_nothing([source for source, _ in evaluated], outcome, by_name)
    failed = {
        name: Condition(overlays.VALIDATION_SUCCEEDED, "False", overlays.RUNTIME_REASON, message)
        for name, message in failing.items() if name in by_name
    }
    plan = OverlayPlan({**outcome.conditions, **failed}, outcome.conflicts, None, refused_names, prices.note, unpriced)
    return OverlayStep(plan, pools, tuple(observed))


def _matching_nothing(
    sources: Sequence[PoolSource], outcome: overlays.Outcome, by_name: Mapping[str, NodeOverlay]
) -> list[Observation]:
    """Accepted overlays that match no instance type any of the pools can launch."""
    launchable = {(source.pool.name, it) for source in sources for it in source.plan.mapping.instance_types}
    message = f"matches no offering of an instance type that the {len(sources)} NodePool(s) mapped can launch: it changes nothing"
    return [
        Observation(live.OVERLAY_MATCHES_NOTHING, NODEOVERLAY, name, Violation("spec.requirements", message), by_name[name].source)
        for name, pairs in sorted(outcome.matched.items())
        if name not in outcome.conflicts and not pairs & launchable
    ]


def _not_applied(cluster: Cluster) -> str | None:
    """Loading keeps no NodeOverlay for a release before 1.7, so the gate is what is left to ask."""
    if not cluster.gate(GATES[NODEOVERLAY].name):
        return (
            "the NodeOverlay feature gate is off (Karpenter's default), so Karpenter ignores every NodeOverlay; "
            "if the controller runs with --feature-gates NodeOverlay=true, say so in the stack: "
            "karpenter-gitops:cluster.featureGates: {NodeOverlay: true}"
        )
    return None


def _readable(kept: Sequence[NodeOverlay]) -> tuple[list[overlays.Overlay], frozenset[str]]:
    usable, unreadable = [], set()
    for overlay in kept:
        try:
            usable.append(overlays.Overlay.of(overlay))
        except ValueError:  # a requirement the CRD refuses (the schema rules report it)
            unreadable.add(overlay.name)
    return usable, frozenset(unreadable)


def _pool_types(
    source: PoolSource,
    catalogue: LabelledCatalogue,
    prices: OnDemandPrices,
    by_class: dict[str, tuple[overlays.InstanceType, ...]],
    unpriced: Mapping[str, float],
) -> overlays.PoolTypes:
    """Every instance type of the pool's class, as the AWS provider lists it, with its offerings."""
    template = source.pool.spec.template
    pool_labels = dict((template.metadata and template.metadata.labels) or {}) if template else {}
    if source.target.name not in by_class:
        by_class[source.target.name] = _class_types(source, catalogue, prices.prices, unpriced)
    return overlays.PoolTypes(source.pool.name, by_class[source.target.name], pool_labels)


def _class_types(
    source: PoolSource, catalogue: LabelledCatalogue, table: Mapping[str, float], unpriced: Mapping[str, float]
) -> tuple[overlays.InstanceType, ...]:
    """Offerings priced as Karpenter starts: on-demand from its table, spot unknown here; a type the table lacks
    has no price for either, so Karpenter never launches it, unless an overlay prices it (``unpriced``)."""
    target = source.target
    zone_ids = {s.zone: s.zone_id for s in source.subnets}
    interfaces = source.node_class.spec.network_interfaces
    efa_only = None if interfaces is None else sum(1 for i in interfaces if i is not None and i.interface_type == "efa-only")
    region_zones = sorted({zone for zones in catalogue.zones.values() for zone in zones})
    found = []
    for name, requirements in catalogue.requirements(target.windows_build).items():
        available_zones = catalogue.zones[name] & zone_ids.keys()
        ids = frozenset(zone_ids[z] for z in available_zones if zone_ids[z])
        narrowed = [(labels.ZONE, ValueSet(False, frozenset(available_zones)))] + ([(labels.ZONE_ID, ValueSet(False, ids))] if ids else [])
        launchable = target.launchable(catalogue.infos[name])
        capacity_types = sorted(requirements[labels.CAPACITY_TYPE].values) if labels.CAPACITY_TYPE in requirements else []
        listed = name in table
        price = {overlays.ON_DEMAND: table.get(name), overlays.SPOT: None} if listed else dict.fromkeys(capacity_types, unpriced.get(name))
        offerings = tuple(
            overlays.Offering(
                capacity_type,
                zone,
                price.get(capacity_type),
                available=launchable and zone in available_zones and (listed or name in unpriced),
                zone_id=zone_ids.get(zone),
            )
            for zone in region_zones
            for capacity_type in capacity_types
        )
        capacity = overlays.base_capacity(catalogue.infos[name], efa_only)
        found.append(overlays.InstanceType(name, requirements & Requirements(narrowed), offerings, capacity))
    return tuple(found)


def _pool_overlays(source: PoolSource, types: overlays.PoolTypes, outcome: overlays.Outcome) -> PoolOverlays:
    launchable = source.plan.mapping.instance_types
    required = Requirements.from_node_pool(source.pool)
    admitted = [
        change for change in outcome.price_changes.get(source.pool.name, ())
        if change.instance_type in launchable and change.offering.available
        and required.conflict(change.offering.requirements) is None
    ]
    capacity = [c for c in outcome.capacity_changes.get(source.pool.name, ()) if c.instance_type in launchable]
    overlaid = outcome.pools[source.pool.name]
    return PoolOverlays(
        tuple(admitted),
        tuple(capacity),
        overlays.first_choice((it for it in types.instance_types if it.name in launchable), required),
        overlays.first_choice((it for name, it in overlaid.items() if name in launchable), required),
    )


def _conflict(overlay: NodeOverlay, conflict: overlays.Conflict, usable: Sequence[overlays.Overlay]) -> Observation:
    weight = next(o.weight for o in usable if o.name == conflict.other)
    message = f"ValidationSucceeded=False, reason {overlays.CONFLICT_REASON}: {overlays.CONFLICT_MESSAGE}"
    hint = (
        f"NodeOverlay {conflict.other} has the same weight ({weight}) and also sets {conflict.what} of "
        f"{conflict.instance_type} for NodePool {conflict.node_pool}; Karpenter keeps {conflict.other} (its name "
        "sorts later) and ignores this overlay everywhere: give one a higher weight or make their requirements disjoint"
    )
    return Observation(live.OVERLAY_CONFLICT, NODEOVERLAY, overlay.name, Violation(conflict.field, message, hint), overlay.source)
