"""Topology spread, pod affinity and anti-affinity, counted per domain as Karpenter's scheduler counts them.

Follows ``topology.go``/``topologygroup.go`` of Karpenter v1.15.0. A :class:`TopologyGroup` counts the
pods its selector matches per domain (zone, hostname, ...); pods with the same constraint share one
group. Domains come from the NodePools' requirements and their instance types (per key, with the
NodePools' taints for ``nodeTaintsPolicy: Honor``), and every new NodeClaim registers its placeholder
hostname. Pods own the groups of their constraints; a pod's *required* anti-affinity also makes an
inverse group that keeps other pods away from it.

Where Go walks a map to choose among equally good domains, the smallest domain name wins here:
which zone a tie goes to is not predictable in Karpenter, only the per-zone counts are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from karpenter_gitops.core.requirements import IN, Requirements, ValueSet
from karpenter_gitops.karpenter.scheduling.matching import (
    HOSTNAME,
    LabelSelector,
    Taint,
    Toleration,
    compatibility_error,
    describe,
    untolerated,
)
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, Pod, PodTemplate
from karpenter_gitops.karpenter.scheduling.preferences import PodData

SPREAD, AFFINITY, ANTI_AFFINITY = "topology spread", "pod affinity", "pod anti-affinity"
MAX_INT32 = 2**31 - 1
HONOR, IGNORE = "Honor", "Ignore"
_EXISTS = ValueSet(True)
_NOTHING = ValueSet(False)

Domains = dict[str, list[tuple[Taint, ...]]]  # domain → the taint sets of NodePools offering it


@dataclass(frozen=True)
class NodeFilter:
    """Which nodes a spread counts (``TopologyNodeFilter``): by the pod's node selection and its tolerations."""

    requirements: tuple[Requirements, ...]
    taint_policy: str
    affinity_policy: str
    tolerations: tuple[Toleration, ...]

    def matches(self, taints: Iterable[Taint], requirements: Requirements) -> bool:
        if self.affinity_policy == HONOR and self.requirements:
            if not any(compatibility_error(requirements, wanted, frozenset()) is None for wanted in self.requirements):
                return False
        return not (self.taint_policy == HONOR and untolerated(taints, self.tolerations) is not None)


def _single(domain: str) -> ValueSet:
    return ValueSet(False, frozenset((domain,)))


class TopologyGroup:
    """Pods matching one selector, counted per domain of one key."""

    def __init__(
        self,
        kind: str,
        key: str,
        namespaces: frozenset[str],
        selector: LabelSelector | None,
        max_skew: int,
        min_domains: int | None,
        node_filter: NodeFilter | None,
        domains: Iterable[str],
    ):
        self.kind, self.key, self.namespaces, self.selector = kind, key, namespaces, selector
        self.max_skew, self.min_domains, self.node_filter = max_skew, min_domains, node_filter
        self.domains: dict[str, int] = dict.fromkeys(domains, 0)
        self.empty: set[str] = set(self.domains)
        self.owners: set[str] = set()
        self._selects: dict[int, bool] = {}

    def selects(self, template: PodTemplate) -> bool:
        known = self._selects.get(id(template))
        if known is None:
            known = self._selects[id(template)] = (
                template.namespace in self.namespaces and self.selector is not None and self.selector.matches(template.labels)
            )
        return known

    def counts(self, template: PodTemplate, taints: Iterable[Taint], requirements: Requirements) -> bool:
        return self.selects(template) and (self.node_filter is None or self.node_filter.matches(taints, requirements))

    def record(self, domains: Iterable[str]) -> None:
        for domain in domains:
            self.domains[domain] = self.domains.get(domain, 0) + 1
            self.empty.discard(domain)

    def register(self, domain: str) -> None:
        if domain not in self.domains:
            self.domains[domain] = 0
            self.empty.add(domain)

    def next_domains(self, template: PodTemplate, pod_domains: ValueSet, node_domains: ValueSet) -> ValueSet:
        """The domains the pod may take (``TopologyGroup.Get``); an empty set means it may take none."""
        if self.kind == SPREAD:
            return self._spread(template, pod_domains, node_domains)
        if self.kind == AFFINITY:
            return self._affinity(template, pod_domains, node_domains)
        return self._anti_affinity(pod_domains, node_domains)

    def _min_count(self, pod_domains: ValueSet) -> int:
        if self.key == HOSTNAME:
            return 0  # a new hostname can always be made
        supported = [count for domain, count in self.domains.items() if pod_domains.has(domain)]
        if self.min_domains is not None and len(supported) < self.min_domains:
            return 0
        return min(supported, default=MAX_INT32)

    def _spread(self, template: PodTemplate, pod_domains: ValueSet, node_domains: ValueSet) -> ValueSet:
        selecting = 1 if self.selects(template) else 0
        if self.key == HOSTNAME and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            return _single(host) if self.domains.get(host, 0) + selecting <= self.max_skew else _NOTHING
        least = self._min_count(pod_domains)
        best, best_count = None, MAX_INT32
        if node_domains.operator == IN:
            candidates = (d for d in sorted(node_domains.values) if d in self.domains)
        else:
            candidates = (d for d in sorted(self.domains) if node_domains.has(d))
        for domain in candidates:
            count = self.domains[domain] + selecting
            if count - least <= self.max_skew and count < best_count:
                best, best_count = domain, count
        return _NOTHING if best is None else _single(best)

    def _affinity(self, template: PodTemplate, pod_domains: ValueSet, node_domains: ValueSet) -> ValueSet:
        if self.key == HOSTNAME and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            if not pod_domains.has(host):
                return _NOTHING
            if self.domains.get(host, 0) > 0 or (self.selects(template) and self._bootstrap(pod_domains)):
                return _single(host)
            return _NOTHING
        if node_domains.operator == IN:
            options = {d for d in node_domains.values if pod_domains.has(d) and self.domains.get(d, 0) > 0}
        else:
            options = {d for d, count in self.domains.items() if count > 0 and pod_domains.has(d) and node_domains.has(d)}
        if not options and self.selects(template) and self._bootstrap(pod_domains):
            ordered = sorted(self.domains)
            both = pod_domains & node_domains
            firsts = (next((d for d in ordered if both.has(d)), None), next((d for d in ordered if pod_domains.has(d)), None))
            options = {d for d in firsts if d is not None}
        return ValueSet(False, frozenset(options))

    def _bootstrap(self, pod_domains: ValueSet) -> bool:
        """No pod yet, or none in a domain the pod may take: a self-selecting pod starts the group."""
        return len(self.domains) == len(self.empty) or not any(
            count > 0 and pod_domains.has(d) for d, count in self.domains.items()
        )

    def _anti_affinity(self, pod_domains: ValueSet, node_domains: ValueSet) -> ValueSet:
        if self.key == HOSTNAME and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            return _single(host) if self.domains.get(host, 0) == 0 else _NOTHING
        return ValueSet(False, frozenset(d for d in self.empty if node_domains.has(d) and pod_domains.has(d)))

    def counts_text(self) -> str:
        """Karpenter's ``pretty.Map(domains, 25)``."""
        keys = sorted(self.domains)
        text = ", ".join(f"{k}: {self.domains[k]}" for k in keys[:25])
        return text + (f" and {len(keys) - 25} other(s)" if len(keys) > 25 else "")


class TopologyError:
    """``unsatisfiable topology constraint ...``, rendered when read (with the counts at that time, as Karpenter's)."""

    def __init__(self, group: TopologyGroup, pod_domains: ValueSet, node_domains: ValueSet):
        self.group, self.pod_domains, self.node_domains = group, pod_domains, node_domains

    @property
    def permanent(self) -> bool:
        """A hostname spread or anti-affinity only ever fills up: the same pod will not fit this node later either."""
        return self.group.key == HOSTNAME and self.group.kind in (SPREAD, ANTI_AFFINITY)

    def __str__(self) -> str:
        g = self.group
        return (
            f"unsatisfiable topology constraint for {g.kind}, key={g.key} (counts = {g.counts_text()}, "
            f"podDomains = {describe(g.key, self.pod_domains)}, nodeDomains = {describe(g.key, self.node_domains)}"
        )


# What makes a topology group one group, as Karpenter hashes it: kind, key, namespaces, max skew, node filter, selector.
GroupIdentity = tuple[str, str, frozenset[str], int, NodeFilter | None, LabelSelector | None]


class Topology:
    """Every topology group of one Solve, and which pods own or are counted by which."""

    def __init__(self, domain_values: Callable[[str], Domains]):
        self._domain_values = domain_values
        self._domains: dict[str, Domains] = {}
        self.groups: dict[GroupIdentity, TopologyGroup] = {}
        self.inverse: dict[GroupIdentity, TopologyGroup] = {}
        self._owned: dict[str, list[TopologyGroup]] = {}
        self._inverse_owned: dict[str, list[TopologyGroup]] = {}
        self._selecting: dict[int, list[TopologyGroup]] = {}  # template → regular groups selecting its pods
        self._inverse_selecting: dict[int, list[TopologyGroup]] = {}
        self._by_key: dict[str, list[TopologyGroup]] | None = None

    # --- domains --------------------------------------------------------------------------------

    def _domain_group(self, key: str) -> Domains:
        if key not in self._domains:
            self._domains[key] = self._domain_values(key)
        return self._domains[key]

    def _initial_domains(self, key: str, tolerations: tuple[Toleration, ...], honor_taints: bool) -> list[str]:
        domains = self._domain_group(key)
        if not honor_taints:
            return list(domains)
        return [d for d, taint_sets in domains.items() if any(untolerated(ts, tolerations) is None for ts in taint_sets)]

    # --- groups ---------------------------------------------------------------------------------

    def _group(
        self,
        table: dict[GroupIdentity, TopologyGroup],
        identity: GroupIdentity,
        min_domains: int | None = None,
        tolerations: tuple[Toleration, ...] = (),
        honor_taints: bool = False,
    ) -> TopologyGroup:
        """The group of ``identity``, made on first use with its domains (only the tolerated ones when
        ``honor_taints``)."""
        group = table.get(identity)
        if group is None:
            kind, key, namespaces, max_skew, node_filter, selector = identity
            domains = self._initial_domains(key, tolerations, honor_taints)
            group = table[identity] = TopologyGroup(kind, key, namespaces, selector, max_skew, min_domains, node_filter, domains)
            self._selecting.clear()  # a new group: the indexes are rebuilt on demand
            self._inverse_selecting.clear()
            self._by_key = None
        return group

    def update(self, pod: Pod, data: PodData) -> None:
        """Karpenter's ``Topology.Update``: the pod owns exactly the groups of its current constraints."""
        uid, template, state = pod.uid, data.template, data.state
        for group in self._owned.pop(uid, ()):
            group.owners.discard(uid)
        if template.anti_affinity:  # only required terms make inverse groups, under either policy
            for term in template.anti_affinity:
                namespaces = frozenset(term.namespaces or (template.namespace,))
                group = self._group(self.inverse, (ANTI_AFFINITY, term.topology_key, namespaces, MAX_INT32, None, term.selector))
                if uid not in group.owners:
                    group.owners.add(uid)
                    self._inverse_owned.setdefault(uid, []).append(group)
        owned = []
        for spread in state.spreads:
            selector = spread.selector
            for key in spread.match_label_keys:
                if key in template.labels and selector is not None:
                    selector = selector.with_expression(key, (template.labels[key],))
            node_filter = NodeFilter(
                tuple(template.node_selector_requirements & Requirements.of(term) for term in state.required_terms)
                or (template.node_selector_requirements,),
                spread.node_taints_policy,
                spread.node_affinity_policy,
                state.tolerations,
            )
            identity = (SPREAD, spread.topology_key, frozenset((template.namespace,)), spread.max_skew, node_filter, selector)
            owned.append(
                self._group(self.groups, identity, spread.min_domains, state.tolerations, spread.node_taints_policy == HONOR)
            )
        for kind, terms in ((AFFINITY, data.affinity), (ANTI_AFFINITY, data.anti_affinity)):
            for term in terms:
                owned.append(self._term_group(kind, term, template))
        for group in owned:
            group.owners.add(uid)
        self._owned[uid] = owned

    def _term_group(self, kind: str, term: AffinityTerm, template: PodTemplate) -> TopologyGroup:
        namespaces = frozenset(term.namespaces or (template.namespace,))
        return self._group(self.groups, (kind, term.topology_key, namespaces, MAX_INT32, None, term.selector))

    def _selecting_groups(
        self, template: PodTemplate, table: dict[GroupIdentity, TopologyGroup], index: dict[int, list[TopologyGroup]]
    ) -> list[TopologyGroup]:
        found = index.get(id(template))
        if found is None:
            found = index[id(template)] = [g for g in table.values() if g.selects(template)]
        return found

    # --- scheduling -----------------------------------------------------------------------------

    def governs(self, pod: Pod, data: PodData) -> bool:
        """Whether any topology group applies to the pod (one it owns, or an anti-affinity it is kept from)."""
        return bool(self._owned.get(pod.uid)) or bool(
            self._selecting_groups(data.template, self.inverse, self._inverse_selecting)
        )

    def add_requirements(
        self, pod: Pod, data: PodData, taints: tuple[Taint, ...], node: Requirements
    ) -> Requirements | TopologyError:
        """Karpenter's ``AddRequirements``: the node's requirements narrowed by every topology that governs the pod."""
        matching = list(self._owned.get(pod.uid, ()))
        matching += [
            g
            for g in self._selecting_groups(data.template, self.inverse, self._inverse_selecting)
            if g.counts(data.template, taints, node)
        ]
        if not matching:
            return node
        narrowed = []
        for group in matching:
            pod_domains = data.strict.get(group.key, _EXISTS)
            node_domains = node.get(group.key, _EXISTS)
            domains = group.next_domains(data.template, pod_domains, node_domains)
            if domains.is_empty:
                return TopologyError(group, pod_domains, node_domains)
            narrowed.append((group.key, domains))
        return node & Requirements(narrowed)

    def record(self, pod: Pod, data: PodData, taints: tuple[Taint, ...], requirements: Requirements) -> None:
        """Karpenter's ``Record``: count the pod where it landed, in every group that counts it."""
        for group in self._selecting_groups(data.template, self.groups, self._selecting):
            if not group.counts(data.template, taints, requirements):
                continue
            domains = requirements.get(group.key)
            if domains is None:
                continue
            if group.kind == ANTI_AFFINITY:
                group.record(domains.values)  # every domain the pod could still be in
            elif not domains.complement and len(domains.values) == 1:
                group.record(domains.values)
        for group in self._inverse_owned.get(pod.uid, ()):
            domains = requirements.get(group.key)
            if domains is not None:
                group.record(domains.values)

    def register_node(self, labels: Mapping[str, str], taints: tuple[Taint, ...]) -> None:
        """``countDomains``: a registered node's label is a domain of every group of its key whose node filter it passes."""
        requirements = Requirements.from_labels(labels)
        for group in (*self.groups.values(), *self.inverse.values()):
            if group.key in labels and (group.node_filter is None or group.node_filter.matches(taints, requirements)):
                group.register(labels[group.key])

    def register(self, key: str, domain: str) -> None:
        if self._by_key is None:
            self._by_key = {}
            for group in (*self.groups.values(), *self.inverse.values()):
                self._by_key.setdefault(group.key, []).append(group)
        for group in self._by_key.get(key, ()):
            group.register(domain)


def domain_values(key: str, pools: Iterable[tuple[Requirements, tuple[Taint, ...], Iterable[Requirements]]]) -> Domains:
    """Karpenter's ``buildDomainGroups`` for one key: per NodePool, its requirements with each instance
    type's, then its own ``In`` values; each domain keeps the taint sets of the pools offering it."""
    domains: Domains = {}

    def insert(domain: str, taints: tuple[Taint, ...]) -> None:
        if domain not in domains or not taints:
            domains[domain] = [taints]
        elif domains[domain][0]:
            domains[domain].append(taints)

    for requirements, taints, type_requirements in pools:
        own = requirements.get(key)
        for offered in type_requirements:
            theirs = offered.get(key)
            allowed = own & theirs if own is not None and theirs is not None else own if theirs is None else theirs
            for domain in sorted(allowed.values) if allowed is not None else ():
                insert(domain, taints)
        if own is not None and own.operator == IN:
            for domain in sorted(own.values):
                insert(domain, taints)
    return domains
