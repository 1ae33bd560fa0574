"""Karpenter's feature gates, per release: the names its flags take and the Helm values that set them.

Karpenter itself takes any name in ``--feature-gates`` and ignores the ones it does not know, so a
misspelt gate (or the Helm spelling, ``nodeOverlay``, on the flag) silently leaves the feature off.
Here a gate is one of the release's own, named as the flag names it (``NodeOverlay``) or as the
chart's values do (``nodeOverlay``, ``settings.featureGates.nodeOverlay``); anything else is refused
with the list of the release's gates. The names and releases are Karpenter's: core gates from
``sigs.k8s.io/karpenter`` ``pkg/operator/options`` (``--feature-gates``), AWS gates from the provider's
(``--aws-feature-gates``, 1.15), Helm keys from the chart's ``values.yaml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.versions import Release, show


@dataclass(frozen=True)
class FeatureGate:
    """One gate: its flag name, the first release that has it, its Helm values key and which flag takes it."""

    name: str
    since: Release
    helm: str  # the key under the chart's settings.featureGates (settings.awsFeatureGates for an AWS gate)
    aws: bool = False  # the AWS provider's gate, set with --aws-feature-gates

    @property
    def helm_block(self) -> str:
        return "awsFeatureGates" if self.aws else "featureGates"

    @property
    def helm_value(self) -> str:
        return f"settings.{self.helm_block}.{self.helm}"


def _core(name: str, since: tuple[int, int]) -> FeatureGate:
    return FeatureGate(name, Release(since), name[0].lower() + name[1:])


_V1_15 = (1, 15)
GATES: tuple[FeatureGate, ...] = (
    _core("SpotToSpotConsolidation", (1, 0)),
    _core("NodeRepair", (1, 1)),
    _core("ReservedCapacity", (1, 3)),
    _core("NodeOverlay", (1, 7)),
    _core("StaticCapacity", (1, 8)),
    _core("CapacityBuffer", (1, 14)),
    _core("TerminateFirstDrift", _V1_15),
    _core("TerminateFirstRepair", _V1_15),
    _core("PodDeletionCostManagement", _V1_15),
    FeatureGate("NodeClassCEL", Release(_V1_15), "nodeClassCEL", aws=True),
    FeatureGate("DRANVIDIAGPU", Release(_V1_15), "draNVIDIAGPU", aws=True),
    FeatureGate("DRAEFA", Release(_V1_15), "draEFA", aws=True),
    FeatureGate("RebootForRepair", Release(_V1_15), "rebootForRepair", aws=True),
)
_BY_SPELLING = {
    spelling: gate for gate in GATES for spelling in (gate.name, gate.helm, gate.helm_value, f"{gate.helm_block}.{gate.helm}")
}


def of_release(release: Release) -> tuple[FeatureGate, ...]:
    """The gates ``release`` has, in the order its flags list them."""
    return tuple(gate for gate in GATES if release >= gate.since)


def canonical(gates: Mapping[str, bool], release: Release, where: str) -> dict[str, bool]:
    """``gates`` by Karpenter's own names; a name ``release`` has no gate for is an InputError (naming
    ``where`` the gates were given) listing the release's gates."""
    known = of_release(release)
    named = {}
    for spelling, on in gates.items():
        gate = _BY_SPELLING.get(spelling)
        if gate is None or gate not in known:
            later = f" (it arrived in Karpenter {show(gate.since)})" if gate is not None else ""
            raise InputError(
                f"{spelling!r} is not a feature gate of Karpenter {show(release)}{later}",
                where,
                hint="known gates: " + ", ".join(gate.name for gate in known),
            )
        named[gate.name] = on
    return named
