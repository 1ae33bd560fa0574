"""Why a pod found no place, in Karpenter's words: the scheduler's errors as Karpenter prints them.

Kept apart from the scheduler because the words are a contract of their own: ``plan`` shows them
where Karpenter's pod events would, and the differential tests compare them with Karpenter's own.
"""

from __future__ import annotations

from collections.abc import Mapping

from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import describe_all


class Failure:
    """Why a pod did not fit one place; ``kind`` groups the reasons, ``str()`` is Karpenter's message
    (built when read: a callable ``message`` is called then)."""

    kind = "requirements"

    def __init__(self, message: object, kind: str | None = None):
        self.message = message
        if kind:
            self.kind = kind

    def __str__(self) -> str:
        return str(self.message()) if callable(self.message) else str(self.message)


class FilterFailure(Failure):
    """Karpenter's ``InstanceTypeFilterError``: which of requirements, resources and offerings no type met."""

    def __init__(self, requirements: Requirements, requests: Mapping[str, int]):
        super().__init__("")
        self.requirements, self.requests = requirements, requests
        self.met = self.fits = self.offering = False
        self.met_and_offering = self.fits_and_offering = False  # Karpenter's third pair (met and fits, no offering) cannot
        # happen: a type "fits" only with a compatible offering
        self.min_values: str | None = None
        self.overheads: list[Mapping[str, int]] = []

    @property
    def kind(self) -> str:  # type: ignore[override]
        if self.min_values:
            return "minValues"
        if not self.met:
            return "requirements"
        if not self.fits:
            return "resources"
        return "offerings" if not self.offering else "instance-types"

    def _resources(self) -> str:
        if not self.overheads:
            return resources.show(self.requests)
        low = resources.show(resources.merge(resources.minimum(self.overheads), self.requests))
        high = resources.show(resources.merge(resources.maximum(self.overheads), self.requests))
        return low if low == high else f"min={low}, max={high}"

    def __str__(self) -> str:
        tail = f"requirements={describe_all(self.requirements)}, resources={self._resources()}"
        if self.min_values:
            return f"{self.min_values}, {tail}"
        met, fits, offering = self.met, self.fits, self.offering
        if not (met or fits or offering):
            lead = "no instance type met the scheduling requirements or had enough resources or had a required offering"
        elif not (met or fits):
            lead = "no instance type met the scheduling requirements or had enough resources"
        elif not (met or offering):
            lead = "no instance type met the scheduling requirements or had a required offering"
        elif not (fits or offering):
            lead = "no instance type had enough resources or had a required offering"
        elif not met:
            lead = "no instance type met all requirements"
        elif not fits:
            lead = "no instance type has enough resources"
            if self.requests.get(resources.CPU, 0) >= 10**9:
                return f"{lead}, {tail} (CPU request >= 1 Million, m vs M typo?)"
        elif not offering:
            lead = "no instance type has the required offering"
        elif self.fits_and_offering:
            lead = "no instance type which had enough resources and the required offering met the scheduling requirements"
        elif self.met_and_offering:
            lead = "no instance type which met the scheduling requirements and the required offering had the required resources"
        else:
            lead = "no instance type met the requirements/resources/offering tuple"
        return f"{lead}, {tail}"


Failures = tuple[tuple[str | None, Failure], ...]  # (NodePool or None, why), in template order


def message(failures: Failures) -> str:
    """The pod's error as Karpenter reports it: every template's, joined as ``multierr`` joins them."""
    return "; ".join(str(failure) for _, failure in failures)
