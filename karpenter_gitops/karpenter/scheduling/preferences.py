"""A pod's relaxable constraints, and Karpenter's order for relaxing them one at a time.

Karpenter first treats preferences as requirements: the heaviest preferred node-affinity term joins
the first required term, preferred pod (anti-)affinity terms act like required ones, and
``ScheduleAnyway`` spreads like ``DoNotSchedule`` ones. When a pod fits nowhere it drops **one**
item and tries again (``Preferences.Relax``, ``pkg/controllers/provisioning/scheduling/preferences.go``):
the first required node-affinity term (only when more than one is left), the heaviest preferred pod
affinity, the heaviest preferred pod anti-affinity, the heaviest preferred node affinity, one
``ScheduleAnyway`` spread, and at last a toleration of every PreferNoSchedule taint (only when some
NodePool has one). :class:`PodState` is one step of that walk, hashable so pods of one template in
the same step share their derived data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeVar

from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import PREFER_NO_SCHEDULE, Toleration
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, NodeTerm, PodTemplate, Spread

RESPECT, IGNORE = "Respect", "Ignore"  # --preference-policy
Term = TypeVar("Term")


def _by_weight(terms: tuple[tuple[int, Term], ...]) -> tuple[tuple[int, Term], ...]:
    """Heaviest first; equal weights keep their order (Go's stable sort of the pod's slice)."""
    return tuple(sorted(terms, key=lambda term: -term[0]))


@dataclass(frozen=True)
class PodState:
    """The constraints of a pod copy at one step of relaxation."""

    required_terms: tuple[NodeTerm, ...]
    preferred_terms: tuple[tuple[int, NodeTerm], ...]
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...]
    preferred_anti_affinity: tuple[tuple[int, AffinityTerm], ...]
    spreads: tuple[Spread, ...]
    tolerations: tuple[Toleration, ...]

    @classmethod
    def initial(cls, template: PodTemplate, policy: str = RESPECT) -> PodState:
        ignore = policy == IGNORE
        return cls(
            template.required_terms,
            () if ignore else _by_weight(template.preferred_terms),
            () if ignore else template.preferred_affinity,
            () if ignore else template.preferred_anti_affinity,
            tuple(s for s in template.spreads if s.required) if ignore else template.spreads,
            template.tolerations,
        )

    def relaxed(self, tolerate_prefer_no_schedule: bool) -> PodState | None:
        """The next step of ``Preferences.Relax``, or None when nothing is left to relax."""
        if len(self.required_terms) > 1:
            return replace(self, required_terms=self.required_terms[1:])
        if self.preferred_affinity:
            return replace(self, preferred_affinity=_by_weight(self.preferred_affinity)[1:])
        if self.preferred_anti_affinity:
            return replace(self, preferred_anti_affinity=_by_weight(self.preferred_anti_affinity)[1:])
        if self.preferred_terms:
            return replace(self, preferred_terms=_by_weight(self.preferred_terms)[1:])
        for index, spread in enumerate(self.spreads):
            if not spread.required:  # removed by swapping in the last one, as Karpenter does
                spreads = list(self.spreads)
                spreads[index] = spreads[-1]
                return replace(self, spreads=tuple(spreads[:-1]))
        if tolerate_prefer_no_schedule and PREFER_NO_SCHEDULE not in self.tolerations:
            return replace(self, tolerations=(*self.tolerations, PREFER_NO_SCHEDULE))
        return None


def _term(term: NodeTerm) -> Requirements:
    return Requirements.of(term)


@dataclass(frozen=True, eq=False)
class PodData:
    """What the scheduler derives from a pod in one state (Karpenter's ``PodData``)."""

    template: PodTemplate
    state: PodState
    requests: resources.Vector
    requirements: Requirements  # node selector, the heaviest preference and the first required term
    strict: Requirements  # node selector and the first required term only

    @classmethod
    def of(cls, template: PodTemplate, state: PodState) -> PodData:
        strict = template.node_selector_requirements
        if state.required_terms:
            strict = strict & _term(state.required_terms[0])
        requirements = strict
        if state.preferred_terms:
            requirements = template.node_selector_requirements & _term(state.preferred_terms[0][1])
            if state.required_terms:
                requirements = requirements & _term(state.required_terms[0])
        return cls(template, state, template.requests, requirements, strict)

    @property
    def tolerations(self) -> tuple[Toleration, ...]:
        return self.state.tolerations

    @property
    def anti_affinity(self) -> tuple[AffinityTerm, ...]:
        return (*self.template.anti_affinity, *(term for _, term in self.state.preferred_anti_affinity))

    @property
    def affinity(self) -> tuple[AffinityTerm, ...]:
        return (*self.template.affinity, *(term for _, term in self.state.preferred_affinity))
