"""The NodeOverlay steps: the instance types each NodePool lists, with the overlays applied.

Karpenter runs its overlay controller only with the ``NodeOverlay`` feature gate (from 1.7); then,
per NodePool whose EC2NodeClass lists instance types, every instance type of the class with an
offering per zone of the region and capacity type. The plan evaluates the NodePools it mapped
(Karpenter also those whose class has subnets but no AMI yet, which launch nothing either). Offerings are priced from
Karpenter's static on-demand table; spot prices are not known offline. Overlays the API server
refuses never reach the controller. ``stalled_pools`` runs whether or not the input has overlays:
before 1.13 a NodePool whose instance types cannot be listed stops every NodePool.

Layer: a step of reconcile/; imports mapping, catalogue, images, network, context, graph, rules, adapters and core.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from karpenter_gitops.adapters.aws.pricing import OnDemandPrices, on_demand_prices
from karpenter_gitops.core import labels, versions
from karpenter_gitops.core.findings import Finding, Observation, Severity
from karpenter_gitops.core.inputs import Cluster, Inputs
from karpenter_gitops.core.model import NODEOVERLAY, EC2NodeClass, NodeOverlay, NodePool
from karpenter_gitops.core.requirements import Requirements, ValueSet
from karpenter_gitops.core.resolved import Condition, Subnet
from karpenter_gitops.karpenter.amifamily.resolver import LabelledCatalogue, NodeClassTarget
from karpenter_gitops.karpenter.nodeoverlay import applied as applied_overlays
from karpenter_gitops.karpenter.status.nodeclass_conditions import Resolution
from karpenter_gitops.karpenter.status.prediction import NodePoolPlan, OverlayPlan, PoolOverlays
from karpenter_gitops.reconcile.catalogue import LoadedCatalogue
from karpenter_gitops.reconcile.context import Run, observation
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.reconcile.images import Images
from karpenter_gitops.reconcile.mapping import PoolMapping, target_of
from karpenter_gitops.reconcile.network import Selected
from karpenter_gitops.rules import live
from karpenter_gitops.rules import nodeoverlay as nodeoverlay_rules
from karpenter_gitops.rules.gate import GATES


@dataclass(frozen=True)
class StalledPools(StepResult):
    names: tuple[str, ...] = ()  # the NodePools that keep Karpenter from evaluating any overlay


@dataclass(frozen=True)
class Overlays(StepResult):
    plan: OverlayPlan | None = None  # None when the input has no NodeOverlay
    pools: Mapping[str, PoolOverlays] = field(default_factory=dict)


@dataclass(frozen=True)
class PoolSource:
    """What the overlays need of one NodePool the plan mapped: its class's filters and subnets."""

    pool: NodePool
    plan: NodePoolPlan
    node_class: EC2NodeClass
    target: NodeClassTarget
    subnets: tuple[Subnet, ...]


def stalled_pools(run: Run, *, subnets: Mapping[str, Selected[Subnet]]) -> StalledPools:
    """Before 1.13, with the gate on: the NodePools whose instance types Karpenter cannot list (their class has no
    subnet) stop its overlay controller, and with it every NodePool."""
    unlistable = _unlistable(run.inputs, subnets)
    if (
        not unlistable
        or run.release >= applied_overlays.ISOLATED_POOLS_SINCE
        or not run.inputs.cluster.gate(GATES[NODEOVERLAY].name)
    ):
        return StalledPools()
    observed = tuple(
        observation(
            pool,
            live.OVERLAY_EVALUATION_STALLED,
            "spec.template.spec.nodeClassRef",
            f"Karpenter {versions.show(run.release)} cannot list this NodePool's instance types ({unlistable[pool.name]}), "
            "so with the NodeOverlay gate on it evaluates no NodePool's overlays and skips every NodePool "
            '("awaiting nodeoverlay evaluation"): nothing launches',
        )
        for pool in run.inputs.node_pools
        if pool.name in unlistable
    )
    return StalledPools(tuple(sorted(unlistable)), observed=observed)


def _unlistable(inputs: Inputs, subnets: Mapping[str, Selected[Subnet]]) -> dict[str, str]:
    """NodePools whose instance types Karpenter cannot list, and why: their EC2NodeClass resolves no subnet."""
    found = {}
    for pool in inputs.node_pools:
        ref = pool.spec.template.spec.node_class_ref if pool.spec.template and pool.spec.template.spec else None
        dependency = subnets.get(ref.name) if ref is not None and ref.is_ec2_node_class and ref.name else None
        if dependency is not None and dependency.outcome.resolution is Resolution.NOT_FOUND:
            found[pool.name] = f"EC2NodeClass {ref.name} has no subnets"
    return found


def in_input(run: Run) -> bool:
    return bool(run.inputs.node_overlays)


def apply(
    run: Run,
    *,
    catalogue: LoadedCatalogue,
    images: Mapping[str, Images],
    subnets: Mapping[str, Selected[Subnet]],
    mapping: Mapping[str, PoolMapping],
    stalled_pools: StalledPools,
) -> Overlays:
    """The NodeOverlays as Karpenter's overlay controller takes them, over the NodePools the plan mapped. An overlay
    none of them launches matches nothing only when every NodePool of the input was mapped (or is not Karpenter's)."""
    given = run.inputs.node_overlays
    refused = _refused_by_api_server(run.findings)
    kept = [o for o in given if o.name not in refused and not o.blocked]
    refused_names = tuple(sorted({o.name for o in given} - {o.name for o in kept}))
    prices = on_demand_prices(run.aws.region)
    not_applied = _not_applied(run.inputs.cluster) or _stalled(run.release, stalled_pools.names)
    if not_applied or catalogue.labelled is None:
        why = not_applied or "the instance-type catalogue is not loaded"
        return Overlays(OverlayPlan(not_applied=why, refused=refused_names, prices=prices.note))
    failing = _runtime_failures(run.findings)
    usable, unreadable = _readable([o for o in kept if o.name not in failing])
    sources = _sources(run.inputs, images, subnets, mapping)
    outcome, plain, unpriced = _applied(run.release, usable, kept, sources, _Listing(catalogue.labelled, prices))
    by_name = {o.name: o for o in kept}
    told = _told_offline(run.findings)
    observed = [
        _conflict(by_name[name], conflict, usable) for name, conflict in sorted(outcome.conflicts.items()) if name not in told
    ]
    if sources and all(m.plan.mapping is not None or m.plan.not_mapped for m in mapping.values()):
        observed += _matching_nothing(sources, outcome, by_name)
    failed = {
        name: Condition(applied_overlays.VALIDATION_SUCCEEDED, "False", applied_overlays.RUNTIME_REASON, message)
        for name, message in failing.items()
        if name in by_name
    }
    plan = OverlayPlan(
        conditions={**outcome.conditions, **failed},
        conflicts=outcome.conflicts,
        refused=tuple(sorted({*refused_names, *unreadable})),
        prices=prices.note,
        base_prices=unpriced,
    )
    pools = {source.pool.name: _pool_overlays(source, plain[source.pool.name], outcome) for source in sources}
    return Overlays(plan, pools, observed=tuple(observed))


def _stalled(release: versions.Release, stalled: Sequence[str]) -> str | None:
    if not stalled:
        return None
    return (
        f"Karpenter {versions.show(release)} evaluates no NodeOverlay while it cannot list the instance types of "
        f"NodePool(s) {', '.join(stalled)} (see findings)"
    )


def _runtime_failures(findings: Sequence[Finding]) -> dict[str, str]:
    """Overlays Karpenter's runtime validation refuses, with its error: each requirement's, joined with multierr's '; '."""
    found: dict[str, list[tuple[int, str]]] = {}
    for f in findings:
        if f.rule == nodeoverlay_rules.LABEL_SYNTAX and f.severity is Severity.ERROR:
            index = re.search(r"\[(\d+)\]", f.path)
            found.setdefault(f.name, []).append((int(index.group(1)) if index else 0, f.message))
    return {name: "; ".join(message for _, message in sorted(messages)) for name, messages in found.items()}


def _told_offline(findings: Sequence[Finding]) -> frozenset[str]:
    """Overlays whose same-weight conflict validate already reported (nodeoverlay/same-weight-price): the plan shows
    their Conflict condition but does not say the same mistake a second time as a live finding."""
    return frozenset(f.name for f in findings if f.rule == nodeoverlay_rules.SAME_WEIGHT_PRICE)


def _refused_by_api_server(findings: Sequence[Finding]) -> frozenset[str]:
    """Overlays with an error the API server raises: not stored, so never seen by Karpenter."""
    return frozenset(
        f.name for f in findings if f.kind == NODEOVERLAY and f.severity is Severity.ERROR and f.layer == "api-server"
    )


def _sources(
    inputs: Inputs, images: Mapping[str, Images], subnets: Mapping[str, Selected[Subnet]], mapping: Mapping[str, PoolMapping]
) -> list[PoolSource]:
    """The pools the plan mapped, with what the overlays need of their class."""
    sources = []
    for pool in inputs.node_pools:
        plan = mapping[pool.name].plan
        if plan.mapping is None:
            continue
        node_class, found = inputs.node_class(plan.node_class, pool.source.scope), subnets[plan.node_class].found
        target = target_of(node_class, images[plan.node_class].resolution.amis, found)
        sources.append(PoolSource(pool, plan, node_class, target, found))
    return sources


def _applied(
    release: versions.Release,
    usable: Sequence[applied_overlays.Overlay],
    kept: Sequence[NodeOverlay],
    sources: Sequence[PoolSource],
    listing: _Listing,
) -> tuple[applied_overlays.Outcome, dict[str, applied_overlays.PoolTypes], dict[str, float]]:
    """The overlays applied to the pools' instance types; what each pool lists without any overlay; and the
    instance types Karpenter's table does not price that an accepted overlay prices (1.14+)."""
    heaviest = release >= applied_overlays.HEAVIEST_CAPACITY_SINCE
    listed = [listing.pool_types(source) for source in sources]
    outcome = applied_overlays.apply(usable, listed, heaviest_capacity=heaviest)
    # Conflicts do not depend on prices, so the first pass decides which overlays may price unpriced types.
    accepted = {name for name, condition in outcome.conditions.items() if condition.status == "True"}
    unpriced = {
        name: price
        for name, price in (
            applied_overlays.base_prices(kept, accepted) if release >= applied_overlays.BASE_PRICE_SINCE else {}
        ).items()
        if name not in listing.prices.prices and name in listing.catalogue.infos
    }
    plain = {source.pool.name: types for source, types in zip(sources, listed, strict=True)}
    if unpriced:
        priced = _Listing(listing.catalogue, listing.prices, unpriced)
        outcome = applied_overlays.apply(usable, [priced.pool_types(source) for source in sources], heaviest_capacity=heaviest)
    return outcome, plain, unpriced


def _matching_nothing(
    sources: Sequence[PoolSource], outcome: applied_overlays.Outcome, by_name: Mapping[str, NodeOverlay]
) -> list[Observation]:
    """Accepted overlays that match no instance type any of the pools can launch."""
    launchable = {(source.pool.name, it) for source in sources for it in source.plan.mapping.instance_types}
    message = f"matches no offering of an instance type that the {len(sources)} NodePool(s) mapped can launch: it changes nothing"
    return [
        observation(by_name[name], live.OVERLAY_MATCHES_NOTHING, "spec.requirements", message)
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


def _readable(kept: Sequence[NodeOverlay]) -> tuple[list[applied_overlays.Overlay], frozenset[str]]:
    usable, unreadable = [], set()
    for overlay in kept:
        try:
            usable.append(applied_overlays.Overlay.of(overlay))
        except ValueError:  # a requirement the CRD refuses (the schema rules report it)
            unreadable.add(overlay.name)
    return usable, frozenset(unreadable)


@dataclass
class _Listing:
    """Each class's instance types as the AWS provider lists them, with their offerings, worked out once per class
    (pools of one class list the same types), priced as Karpenter starts: on-demand from its table, spot unknown
    here; a type the table lacks has no price for either, so Karpenter never launches it, unless an overlay prices
    it (``unpriced``)."""

    catalogue: LabelledCatalogue
    prices: OnDemandPrices
    unpriced: Mapping[str, float] = field(default_factory=dict)
    _by_class: dict[str, tuple[applied_overlays.InstanceType, ...]] = field(default_factory=dict)

    def pool_types(self, source: PoolSource) -> applied_overlays.PoolTypes:
        template = source.pool.spec.template
        pool_labels = dict((template.metadata and template.metadata.labels) or {}) if template else {}
        if source.target.name not in self._by_class:
            self._by_class[source.target.name] = self._class_types(source)
        return applied_overlays.PoolTypes(source.pool.name, self._by_class[source.target.name], pool_labels)

    def _class_types(self, source: PoolSource) -> tuple[applied_overlays.InstanceType, ...]:
        catalogue, table, target = self.catalogue, self.prices.prices, source.target
        zone_ids = {s.zone: s.zone_id for s in source.subnets}
        interfaces = source.node_class.spec.network_interfaces
        efa_only = None if interfaces is None else sum(1 for i in interfaces if i is not None and i.interface_type == "efa-only")
        region_zones = sorted({zone for zones in catalogue.zones.values() for zone in zones})
        found = []
        for name, requirements in catalogue.requirements(target.windows_build).items():
            available_zones = catalogue.zones[name] & zone_ids.keys()
            ids = frozenset(zone_ids[z] for z in available_zones if zone_ids[z])
            narrowed = [(labels.ZONE, ValueSet(False, frozenset(available_zones)))] + (
                [(labels.ZONE_ID, ValueSet(False, ids))] if ids else []
            )
            launchable = target.launchable(catalogue.infos[name])
            capacity_types = sorted(requirements[labels.CAPACITY_TYPE].values) if labels.CAPACITY_TYPE in requirements else []
            listed = name in table
            price = (
                {applied_overlays.ON_DEMAND: table.get(name), applied_overlays.SPOT: None}
                if listed
                else dict.fromkeys(capacity_types, self.unpriced.get(name))
            )
            offerings = tuple(
                applied_overlays.Offering(
                    capacity_type,
                    zone,
                    price.get(capacity_type),
                    available=launchable and zone in available_zones and (listed or name in self.unpriced),
                    zone_id=zone_ids.get(zone),
                )
                for zone in region_zones
                for capacity_type in capacity_types
            )
            capacity = applied_overlays.base_capacity(catalogue.infos[name], efa_only)
            found.append(applied_overlays.InstanceType(name, requirements & Requirements(narrowed), offerings, capacity))
        return tuple(found)


def _pool_overlays(source: PoolSource, types: applied_overlays.PoolTypes, outcome: applied_overlays.Outcome) -> PoolOverlays:
    launchable = source.plan.mapping.instance_types
    required = Requirements.from_node_pool(source.pool)
    admitted = [
        change
        for change in outcome.price_changes.get(source.pool.name, ())
        if change.instance_type in launchable
        and change.offering.available
        and required.conflict(change.offering.requirements) is None
    ]
    capacity = [c for c in outcome.capacity_changes.get(source.pool.name, ()) if c.instance_type in launchable]
    overlaid = outcome.pools[source.pool.name]
    return PoolOverlays(
        tuple(admitted),
        tuple(capacity),
        applied_overlays.first_choice((it for it in types.instance_types if it.name in launchable), required),
        applied_overlays.first_choice((it for name, it in overlaid.items() if name in launchable), required),
    )


def _conflict(
    overlay: NodeOverlay, conflict: applied_overlays.Conflict, usable: Sequence[applied_overlays.Overlay]
) -> Observation:
    weight = next(o.weight for o in usable if o.name == conflict.other)
    message = f"ValidationSucceeded=False, reason {applied_overlays.CONFLICT_REASON}: {applied_overlays.CONFLICT_MESSAGE}"
    hint = (
        f"NodeOverlay {conflict.other} has the same weight ({weight}) and also sets {conflict.what} of "
        f"{conflict.instance_type} for NodePool {conflict.node_pool}; Karpenter keeps {conflict.other} (its name "
        "sorts later) and ignores this overlay everywhere: give one a higher weight or make their requirements disjoint"
    )
    return observation(overlay, live.OVERLAY_CONFLICT, conflict.field, message, hint)
