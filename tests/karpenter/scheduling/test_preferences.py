"""Karpenter's relaxation order, one preference at a time."""

from __future__ import annotations

import itertools

from support.simulation import template

from karpenter_gitops.core import labels
from karpenter_gitops.core.requirements import Requirement
from karpenter_gitops.karpenter.scheduling.matching import PREFER_NO_SCHEDULE
from karpenter_gitops.karpenter.scheduling.pods import AffinityTerm, Spread
from karpenter_gitops.karpenter.scheduling.preferences import IGNORE, PodData, PodState

A, B = (Requirement(labels.ZONE, "In", ("a",)),), (Requirement(labels.ZONE, "In", ("b",)),)


def walk(state: PodState, tolerate: bool = True) -> list[PodState]:
    steps = [state]
    while (state := state.relaxed(tolerate)) is not None:
        steps.append(state)
    return steps


def test_the_order_of_relaxation():
    pod = template(
        required_terms=(A, B),
        preferred_terms=((1, A), (9, B)),
        preferred_affinity=((5, AffinityTerm("z")),),
        preferred_anti_affinity=((5, AffinityTerm("h")),),
        spreads=(Spread("z", 1, "ScheduleAnyway"), Spread("h", 1), Spread("k", 1, "ScheduleAnyway")),
    )
    steps = walk(PodState.initial(pod))
    removed = []
    for before, after in itertools.pairwise(steps):
        removed.append(
            next(
                name
                for name in (
                    "required_terms",
                    "preferred_affinity",
                    "preferred_anti_affinity",
                    "preferred_terms",
                    "spreads",
                    "tolerations",
                )
                if getattr(before, name) != getattr(after, name)
            )
        )
    assert removed == [
        "required_terms",
        "preferred_affinity",
        "preferred_anti_affinity",
        "preferred_terms",
        "preferred_terms",
        "spreads",
        "spreads",
        "tolerations",
    ]
    assert steps[-1].spreads == (Spread("h", 1),) and steps[-1].tolerations == (PREFER_NO_SCHEDULE,)
    assert steps[-1].required_terms == (B,)  # the last required term is never dropped
    assert len(walk(PodState.initial(pod), tolerate=False)) == len(steps) - 1


def test_the_heaviest_preference_is_required_first():
    pod = template(preferred_terms=((1, A), (9, B)))
    data = PodData.of(pod, PodState.initial(pod))
    assert data.requirements[labels.ZONE].values == {"b"} and labels.ZONE not in data.strict


def test_the_ignore_policy_drops_preferences():
    pod = template(preferred_terms=((1, A),), spreads=(Spread("z", 1, "ScheduleAnyway"),))
    state = PodState.initial(pod, IGNORE)
    assert (state.preferred_terms, state.spreads) == ((), ())
