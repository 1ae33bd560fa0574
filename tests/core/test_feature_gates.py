"""Karpenter's feature gates per release, by their flag names and their Helm values keys."""

from __future__ import annotations

import pytest

from karpenter_gitops.core import feature_gates, versions
from karpenter_gitops.core.errors import InputError

V1_15, V1_14, V1_9 = versions.Release((1, 15)), versions.Release((1, 14)), versions.Release((1, 9))


def test_each_release_has_its_own_gates():
    names = {release: [gate.name for gate in feature_gates.of_release(release)] for release in (V1_9, V1_14, V1_15)}
    assert "CapacityBuffer" not in names[V1_9] and "CapacityBuffer" in names[V1_14]
    assert set(names[V1_15]) - set(names[V1_14]) == {
        "TerminateFirstDrift",
        "TerminateFirstRepair",
        "PodDeletionCostManagement",
        "NodeClassCEL",
        "DRANVIDIAGPU",
        "DRAEFA",
        "RebootForRepair",
    }


@pytest.mark.parametrize(
    "spelling", ["NodeOverlay", "nodeOverlay", "settings.featureGates.nodeOverlay", "featureGates.nodeOverlay"]
)
def test_flag_and_helm_spellings_name_the_same_gate(spelling):
    assert feature_gates.canonical({spelling: True}, V1_14, "--feature-gates") == {"NodeOverlay": True}


def test_an_aws_gate_by_its_helm_key():
    assert feature_gates.canonical({"settings.awsFeatureGates.nodeClassCEL": False}, V1_15, "x") == {"NodeClassCEL": False}


def test_an_unknown_gate_is_refused_with_the_releases_list():
    with pytest.raises(InputError) as raised:
        feature_gates.canonical({"Foo": True}, V1_14, "--feature-gates")
    assert str(raised.value) == (
        "--feature-gates: 'Foo' is not a feature gate of Karpenter 1.14 (hint: known gates: SpotToSpotConsolidation, "
        "NodeRepair, ReservedCapacity, NodeOverlay, StaticCapacity, CapacityBuffer)"
    )


def test_a_gate_of_a_later_release_says_when_it_arrived():
    with pytest.raises(
        InputError, match=r"'CapacityBuffer' is not a feature gate of Karpenter 1.9 \(it arrived in Karpenter 1.14\)"
    ):
        feature_gates.canonical({"CapacityBuffer": True}, V1_9, "--feature-gates")
