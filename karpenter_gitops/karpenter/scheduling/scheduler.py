"""Karpenter's provisioning scheduler (``pkg/controllers/provisioning/scheduling``, v1.15.0).

One :meth:`Scheduler.solve` is one of Karpenter's Solves, over the nodes of cluster state
(:mod:`.existing`): the cluster's own, with their pods, and the in-flight nodes of earlier rounds:

* NodePools become NodeClaim templates, by weight (then name, both descending); a template keeps the
  instance types its requirements, an available offering and a non-negative allocatable allow
  (and ``minValues``, under the Strict policy). DaemonSets split each template's types into groups by
  the set of daemon pods that would land on them; a group's daemon requests are its overhead.
* Pods are queued by cpu, then memory, descending (then by UID), and retried until a full pass
  makes no progress. Each pod goes to the first NodeClaim of this Solve that can take it — in order
  of pod count, fewest first — else to a new NodeClaim from the first template that can take it
  (NodePool limits filter the types by capacity, and each new NodeClaim subtracts its largest
  option's capacity). Before either, the first existing node (initialized first, then by name)
  that takes it. Existing nodes count against their NodePool's limits at their real capacity (and
  one node each), and the pods on them count in the topology groups that select them. When
  nothing takes it, one preference is relaxed and it is tried again.
* A NodeClaim keeps every instance type that still fits all its pods (each type with its own
  daemon overhead) and has an offering within its narrowed requirements: it packs until *no* type
  fits, so packing follows the largest type left; price plays no part here.

Not modelled: capacity reservations, volumes, DRA; an existing node's volume limits.
NodeClaims of equal pod count are ordered as Go's unstable ``sort.Slice`` leaves them (:mod:`.gosort`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from karpenter_gitops.core import versions
from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.scheduling import gosort, resources
from karpenter_gitops.karpenter.scheduling.existing import NO_UNDEFINED, ExistingNode, StateNode
from karpenter_gitops.karpenter.scheduling.failures import Failure, Failures, FilterFailure
from karpenter_gitops.karpenter.scheduling.matching import (
    HOSTNAME,
    INITIALIZED,
    NODECLASS,
    NODEPOOL,
    PREFER_NO_SCHEDULE,
    REGISTERED,
    Taint,
    compatibility_error,
    compatible,
    untolerated,
)
from karpenter_gitops.karpenter.scheduling.node_claims import DaemonGroup, NodeClaim, Template, one_value
from karpenter_gitops.karpenter.scheduling.pods import DaemonSet, Pod, PodTemplate
from karpenter_gitops.karpenter.scheduling.preferences import RESPECT, PodData, PodState
from karpenter_gitops.karpenter.scheduling.topology import Topology, TopologyError, domain_values
from karpenter_gitops.karpenter.scheduling.type_index import Catalogue
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec, World

STRICT, BEST_EFFORT = "Strict", "BestEffort"  # --min-values-policy
NODES = "nodes"  # the NodePool limit on node count
DRA_ERROR = "pod has Dynamic Resource Allocation requirements that are not yet supported by Karpenter"
NO_TEMPLATES = "nodepool requirements filtered out all available instance types"


@dataclass(frozen=True)
class Options:
    """The Karpenter release and the controller flags that change scheduling."""

    release: versions.Release = versions.NEWEST
    min_values_policy: str = STRICT
    preference_policy: str = RESPECT
    max_instance_types: int = 600  # MaxInstanceTypes: what a NodeClaim carries to the launch


@dataclass(frozen=True)
class Solution:
    """What one Solve produced: NodeClaims (finalized), failures by pod UID, and NodePools it could not use."""

    node_claims: tuple[NodeClaim, ...]
    errors: Mapping[str, Failures]
    unusable_pools: Mapping[str, str]  # NodePool → why no NodeClaim can come from it
    existing: tuple[ExistingNode, ...] = ()  # the in-flight nodes, with the pods this Solve put on them


class Scheduler:
    """One Solve over a :class:`World`."""

    def __init__(self, world: World, options: Options = Options(), state_nodes: Sequence[StateNode] = ()):
        self.world, self.options = world, options
        self._data: dict[tuple[int, PodState], PodData] = {}
        self._counter = 0
        catalogues = {name: Catalogue(types) for name, types in world.instance_types.items()}
        pools = sorted((p for p in world.node_pools if not p.static), key=lambda p: (p.weight, p.name), reverse=True)
        self.unusable: dict[str, str] = {
            p.name: "static NodePool (spec.replicas): Karpenter does not schedule pending pods to it"
            for p in world.node_pools
            if p.static
        }
        self.templates: list[Template] = []
        for pool in pools:
            template = self._template(pool, catalogues.get(pool.node_class))
            if template is not None:
                self.templates.append(template)
        self.tolerate_prefer_no_schedule = any(t.effect == "PreferNoSchedule" for p in pools for t in p.taints)
        self.remaining: dict[str, resources.Vector] = {p.name: dict(p.limits) for p in pools if p.limits is not None}
        self.order: list[NodeClaim] = []  # Karpenter's newNodeClaims, in the order its sort.Slice by pod count leaves them
        self._sorted = True  # whether ``order`` is already by pod count (Go's sort then leaves it as it is)
        self.open: set[NodeClaim] = set()  # claims some pod may still fit (full ones leave it)
        self.claims: list[NodeClaim] = []  # every claim, in creation order
        self._lasting_failures: dict[tuple[int, int], Failure] = {}
        self._rejecting: dict[int, int] = {}  # pod state → how many open claims never take it
        self._smallest: resources.Vector = {resources.PODS: resources.ONE_POD}
        domain_pools = {
            p.name: (p.node_requirements, p.taints, [t.requirements for t in world.instance_types.get(p.node_class, ())])
            for p in pools
        }
        self.topology = Topology(lambda key: domain_values(key, domain_pools.values()))
        ordered = sorted(state_nodes, key=lambda n: (not n.initialized, n.name))  # sortExistingNodes
        self.existing = [ExistingNode(node, world.daemon_sets) for node in ordered]
        self.existing_open = list(self.existing)  # in-flight nodes some pod may still fit
        self._existing_rejecting: dict[int, int] = {}  # pod state → how many open in-flight nodes never take it
        for existing in self.existing:
            remaining = self.remaining.get(existing.node.node_pool)
            if remaining is not None:  # updateRemainingResources: the node's capacity, and one node
                used = {**existing.node.capacity, NODES: resources.MILLI}
                self.remaining[existing.node.node_pool] = {k: v - used.get(k, 0) for k, v in remaining.items()}

    # --- templates ------------------------------------------------------------------------------

    def _template(self, pool: NodePoolSpec, catalogue: Catalogue | None) -> Template | None:
        if catalogue is None or not len(catalogue):
            self.unusable[pool.name] = f"no instance types for EC2NodeClass {pool.node_class!r}"
            return None
        requirements = pool.node_requirements & Requirements(
            [
                (NODEPOOL, one_value(pool.name)),
                (NODECLASS, one_value(pool.node_class)),
                (REGISTERED, one_value("true")),
                (INITIALIZED, one_value("true")),
            ]
        )
        options = catalogue.matching(requirements) & catalogue.with_offering(requirements) & catalogue.non_negative
        short, _ = catalogue.min_values_shortfall(requirements, options)
        if short and self.options.min_values_policy == STRICT:
            options = 0
        if not options:
            self.unusable[pool.name] = "skipping, nodepool requirements filtered out all instance types" + (
                f" ({short})" if short else ""
            )
            return None
        template = Template(pool, catalogue, requirements, options)
        template.groups = self._daemon_groups(template, self.world.daemon_sets)
        return template

    def _daemon_groups(self, template: Template, daemon_sets: Sequence[DaemonSet]) -> list[DaemonGroup]:
        """``buildDaemonOverheadGroups``: the template's types split by which daemon pods they would run."""
        parts: list[tuple[int, tuple[DaemonSet, ...]]] = [(template.options, ())]
        for daemon_set in daemon_sets:
            mask = self._daemon_mask(template, daemon_set)
            split = []
            for part, members in parts:
                if part & mask:
                    split.append((part & mask, (*members, daemon_set)))
                if part & ~mask:
                    split.append((part & ~mask, members))
            parts = split
        groups = []
        for part, members in parts:
            overhead = resources.merge(*(m.template.requests for m in members)) if members else {}
            ports = tuple(port for m in members for port in m.template.host_ports)
            groups.append(DaemonGroup(part, overhead, ports))
        return groups

    def _daemon_mask(self, template: Template, daemon_set: DaemonSet) -> int:
        """The template's types a daemon pod would land on (``isDaemonPodCompatible``): it tolerates the
        taints (PreferNoSchedule always), and some required term — the first, else each later one as the
        earlier are dropped — fits the template and intersects the type."""
        pod = daemon_set.template
        if "resource-claims" in pod.approximations:
            return 0  # IgnoreDRARequests: such daemon pods are left out
        tolerations = pod.tolerations if PREFER_NO_SCHEDULE in pod.tolerations else (*pod.tolerations, PREFER_NO_SCHEDULE)
        if untolerated(template.taints, tolerations) is not None:
            return 0
        mask = 0
        for term in pod.required_terms or ((),):
            strict = pod.node_selector_requirements & Requirements.of(term)
            if compatible(template.requirements, strict):
                mask |= template.catalogue.matching(strict) & template.options
        return mask

    # --- pods -----------------------------------------------------------------------------------

    def pod_data(self, template: PodTemplate, state: PodState) -> PodData:
        key = (id(template), state)
        data = self._data.get(key)
        if data is None:
            data = self._data[key] = PodData.of(template, state)
        return data

    def solve(self, pods: Iterable[Pod]) -> Solution:
        """Karpenter's ``Solve`` followed by ``TruncateInstanceTypes``."""
        queued = [pod for pod in pods if not pod.template.ignored]
        for name in (resources.CPU, resources.MEMORY):
            self._smallest[name] = min((pod.template.requests.get(name, 0) for pod in queued), default=0)
        original = {
            pod.uid: self.pod_data(pod.template, PodState.initial(pod.template, self.options.preference_policy)) for pod in queued
        }
        for pod in queued:
            self.topology.update(pod, original[pod.uid])
        for existing in self.existing:  # NewExistingNode registers its hostname with the groups made so far
            self.topology.register(HOSTNAME, existing.node.name)
            if existing.node.registered:  # countDomains: a Node's domains (a zone no NodePool offers any more)
                self.topology.register_node(existing.node.labels, existing.node.taints)
        self._count_bound_pods()

        def order(pod: Pod) -> tuple[int, int, str]:
            requests = pod.template.requests
            return -requests.get(resources.CPU, 0), -requests.get(resources.MEMORY, 0), pod.uid

        queue = deque(sorted(queued, key=order))
        last_length: dict[str, int] = {}
        errors: dict[str, Failures] = {}
        while queue:
            pod = queue[0]
            if last_length.get(pod.uid) == len(queue):
                break  # a whole pass without progress
            queue.popleft()
            failure = self._try(pod, original[pod.uid])
            if failure is None:
                errors.pop(pod.uid, None)
                continue
            errors[pod.uid] = failure
            self.topology.update(pod, original[pod.uid])
            queue.append(pod)
            last_length[pod.uid] = len(queue)
        claims = []
        for claim in self.claims:
            self._finalize(claim)
            has_min_values = any(v.min_values is not None for v in claim.requirements.values())
            short, _ = (
                claim.template.catalogue.min_values_shortfall(claim.requirements, self._truncated(claim))
                if has_min_values
                else (None, {})
            )
            if short and self.options.min_values_policy == STRICT:
                message = (
                    f"pod didn’t schedule because NodePool couldn’t meet minValues requirements, validating minValues, {short} "
                    f"(NodePool={claim.template.pool.name})"
                )
                for pod in claim.pods:
                    errors[pod.uid] = ((claim.template.pool.name, Failure(message, "minValues")),)
                continue
            claims.append(claim)
        return Solution(tuple(claims), errors, dict(self.unusable), tuple(self.existing))

    def _count_bound_pods(self) -> None:
        """``countDomains``: the pods already on the nodes count in the groups that select them, where
        they run; their own required anti-affinity keeps pending pods away (``newForInverse``)."""
        for existing in self.existing:
            node = existing.node
            for pod in node.bound:
                data = self.pod_data(pod.template, PodState.initial(pod.template, self.options.preference_policy))
                if pod.template.anti_affinity:
                    self.topology.update(pod, data)
                self.topology.record(pod, data, node.taints, existing.requirements)

    def _try(self, pod: Pod, data: PodData) -> Failures | None:
        """``trySchedule``: place the pod, relaxing one preference after each failure; the last failure or None."""
        while True:
            failure = self._add(pod, data)
            if failure is None:
                return None
            if failure[0][1].kind == "dra":
                return failure
            state = data.state.relaxed(self.tolerate_prefer_no_schedule)
            if state is None:
                return failure
            data = self.pod_data(pod.template, state)
            self.topology.update(pod, data)

    def _add(self, pod: Pod, data: PodData) -> Failures | None:
        if "resource-claims" in pod.template.approximations:
            return ((None, Failure(DRA_ERROR, "dra")),)
        key = id(data)
        if self.existing_open and self._add_to_existing(pod, data):
            return None
        if not self._sorted:  # sort.Slice(newNodeClaims, by pod count) before every pod, unstable as Go's is
            gosort.sort_slice(self.order, [len(c.pods) for c in self.order])
            self._sorted = True
        open_ = self.open
        for index, claim in enumerate(self.order) if self._rejecting.get(key, 0) < len(open_) else ():
            if claim not in open_ or key in claim.rejected:
                continue
            outcome = self._can_add(claim, pod, data)
            if outcome is not None:
                self._commit(claim, pod, data, *outcome)
                if index + 1 < len(self.order) and len(self.order[index + 1].pods) < len(claim.pods):
                    self._sorted = False
                self._close_if_full(claim)
                return None
        if not self.templates:
            return ((None, Failure(NO_TEMPLATES, "nodepools")),)
        failures: list[tuple[str | None, Failure]] = []
        for template in self.templates:
            made = self._new_claim(template, pod, data)
            if isinstance(made, Failure):
                failures.append((template.pool.name, made))
                continue
            claim, requirements, mask = made
            self._commit(claim, pod, data, requirements, mask)
            remaining = self.remaining.get(template.pool.name)
            if remaining is not None:  # subtractMax: the largest option's capacity, for each limited resource
                largest = template.catalogue.max_capacity(claim.options, remaining)
                self.remaining[template.pool.name] = {k: v - largest.get(k, 0) for k, v in remaining.items()}
            self.claims.append(claim)
            if self.order and len(self.order[-1].pods) > 1:
                self._sorted = False
            self.order.append(claim)
            self.open.add(claim)
            self._close_if_full(claim)
            return None
        return tuple(failures)

    def _add_to_existing(self, pod: Pod, data: PodData) -> bool:
        """``addToExistingNode``: the first in-flight node, in name order, that takes the pod."""
        key = id(data)
        if self._existing_rejecting.get(key, 0) >= len(self.existing_open):
            return False
        for node in self.existing_open:
            if key in node.rejected:
                continue
            if node.never_takes(pod, data):
                node.rejected.add(key)
                self._existing_rejecting[key] = self._existing_rejecting.get(key, 0) + 1
                continue
            base = node.requirements & data.requirements
            narrowed = self.topology.add_requirements(pod, data, node.node.taints, base)
            if isinstance(narrowed, TopologyError) or (narrowed is not base and not compatible(base, narrowed, NO_UNDEFINED)):
                continue
            node.add(pod, data, narrowed)
            self.topology.record(pod, data, node.node.taints, node.requirements)
            if not resources.fits(self._smallest, node.remaining):
                self.existing_open.remove(node)
                for rejected in node.rejected:
                    self._existing_rejecting[rejected] -= 1
            return True
        return False

    def _new_claim(self, template: Template, pod: Pod, data: PodData) -> tuple[NodeClaim, Requirements, int] | Failure:
        """``addToNewNodeClaim`` for one template: limits, then ``CanAdd`` on a fresh NodeClaim."""
        name = template.pool.name
        options = template.options
        remaining = self.remaining.get(name)
        if remaining is not None:
            if NODES in remaining and remaining[NODES] == 0:
                return Failure(f"node limits have been exhausted for nodepool (NodePool={name})", "limits")
            options &= template.catalogue.within_limits(remaining)
            if not options:
                return Failure(f"all available instance types exceed limits for nodepool (NodePool={name})", "limits")
        memo = (id(template), id(data))
        known = self._lasting_failures.get(memo)
        if known is not None:
            return known
        failure = self._static_failure(template.taints, template.requirements, data)
        if failure is None:
            self._counter += 1
            claim = NodeClaim(template, f"hostname-placeholder-{self._counter:04d}", options)
            outcome = self._place(claim, pod, data, relax=self.options.min_values_policy == BEST_EFFORT)
            if not isinstance(outcome, Failure):
                return (claim, *outcome)
            failure = outcome
            if self.topology.governs(pod, data):
                return failure  # topology counts change: the same pod may fit a fresh NodeClaim later
        self._lasting_failures[memo] = failure  # fewer options (limits) never make it fit
        return failure

    @staticmethod
    def _static_failure(taints: tuple[Taint, ...], requirements: Requirements, data: PodData) -> Failure | None:
        """The taint and requirement checks of ``CanAdd``, which never change for a pod state and a template."""
        if untolerated(taints, data.tolerations) is not None:
            return Failure(lambda: untolerated(taints, data.tolerations), "taints")
        if not compatible(requirements, data.requirements):
            return Failure(
                lambda: f"incompatible requirements, {compatibility_error(requirements, data.requirements)}", "requirements"
            )
        return None

    def _can_add(self, claim: NodeClaim, pod: Pod, data: PodData) -> tuple[Requirements, int] | None:
        """``NodeClaim.CanAdd`` for an in-flight claim (Karpenter drops these errors, so the cheap checks go
        first); what can never change marks the claim as rejecting this pod state."""
        template, catalogue = claim.template, claim.template.catalogue
        total = resources.merge(claim.requests, data.requests)
        if (
            not any(catalogue.fitting(total, g.overhead) & g.mask & claim.options for g in template.groups)
            or self._static_failure(template.taints, claim.requirements, data) is not None
        ):
            self._reject(claim, data)
            return None
        outcome = self._place(claim, pod, data, relax=False, total=total)
        if isinstance(outcome, Failure):
            if isinstance(outcome.message, TopologyError) and outcome.message.permanent:
                self._reject(claim, data)
            return None
        return outcome

    def _reject(self, claim: NodeClaim, data: PodData) -> None:
        """Remember that ``claim`` never takes a pod in this state; when every open claim does, the scan is skipped."""
        claim.rejected.add(id(data))
        self._rejecting[id(data)] = self._rejecting.get(id(data), 0) + 1

    def _place(
        self, claim: NodeClaim, pod: Pod, data: PodData, relax: bool, total: resources.Vector | None = None
    ) -> tuple[Requirements, int] | Failure:
        """The rest of ``CanAdd`` once taints and requirements pass: topology, then the instance types."""
        base = claim.requirements & data.requirements
        narrowed = self.topology.add_requirements(pod, data, claim.template.taints, base)
        if isinstance(narrowed, TopologyError):
            return Failure(narrowed, "topology")
        if narrowed is not base and not compatible(base, narrowed):
            return Failure(lambda: compatibility_error(base, narrowed), "topology")
        return self._filter(claim, pod, data, narrowed, total or resources.merge(claim.requests, data.requests), relax)

    def _close_if_full(self, claim: NodeClaim) -> None:
        """Drop a claim no pod can fit any more from the in-flight scan (the smallest pod's requests do not fit)."""
        total = resources.merge(claim.requests, self._smallest)
        if not any(claim.template.catalogue.fitting(total, g.overhead) & g.mask & claim.options for g in claim.template.groups):
            self.open.discard(claim)
            for key in claim.rejected:
                self._rejecting[key] -= 1

    def _filter(
        self, claim: NodeClaim, pod: Pod, data: PodData, requirements: Requirements, total: resources.Vector, relax: bool
    ) -> tuple[Requirements, int] | Failure:
        """``filterInstanceTypesByRequirements``: the claim's types that meet the requirements, fit
        (with their group's daemon overhead) and have an offering; then minValues."""
        catalogue = claim.template.catalogue
        compatible = catalogue.matching(requirements)
        offered = catalogue.with_offering(requirements)
        failure = FilterFailure(requirements, data.requests)
        ports = pod.template.host_ports
        remaining = 0
        for group in claim.template.groups:
            if ports and any(p.conflicts(q) for p in ports for q in (*group.host_ports, *claim.ports)):
                continue
            if group.overhead:
                failure.overheads.append(group.overhead)
            types = group.mask & claim.options
            if not types:
                continue
            fitting = catalogue.fitting(total, group.overhead) & offered & types  # resources fit *and* an offering
            met = types & compatible
            failure.met |= bool(met)
            failure.fits |= bool(fitting)
            failure.offering |= bool(types & offered)
            failure.met_and_offering |= bool(met & offered & ~fitting)
            failure.fits_and_offering |= bool(fitting & ~compatible)
            remaining |= met & fitting
        short, counts = catalogue.min_values_shortfall(requirements, remaining)  # with no type left, minValues is the message
        if short:
            if not relax:
                failure.min_values = short
                remaining = 0
            else:  # BestEffort: lower each short minValues to what the types can give
                requirements = Requirements(
                    [(k, replace(v, min_values=counts[k]) if k in counts else v) for k, v in requirements.items()]
                )
        if not remaining:
            return failure
        return requirements, remaining

    def _commit(self, claim: NodeClaim, pod: Pod, data: PodData, requirements: Requirements, mask: int) -> None:
        """``NodeClaim.Add``."""
        claim.pods.append(pod)
        claim.data.append(data)
        claim.options = mask
        claim.requests = resources.merge(claim.requests, data.requests)
        claim.requirements = requirements
        self.topology.register(HOSTNAME, claim.hostname)
        self.topology.record(pod, data, claim.template.taints, requirements)
        claim.ports.extend(pod.template.host_ports)

    # --- after the Solve ------------------------------------------------------------------------

    def _finalize(self, claim: NodeClaim) -> None:
        """``FinalizeScheduling``: drop the placeholder hostname, add the smallest daemon overhead left."""
        claim.requirements = Requirements((k, v) for k, v in claim.requirements.items() if k != HOSTNAME)
        smallest: resources.Vector = {}
        for group in claim.template.groups:
            if group.mask & claim.options:
                smallest = dict(group.overhead) if not smallest else resources.minimum((smallest, group.overhead))
        claim.daemon_overhead = smallest
        claim.requests = resources.merge(claim.requests, smallest)

    def _truncated(self, claim: NodeClaim) -> int:
        """The claim's cheapest ``max_instance_types`` options (``Truncate``), as a mask."""
        ordered = claim.template.catalogue.by_price(claim.options, claim.requirements)
        return sum(1 << i for i in ordered[: self.options.max_instance_types])
