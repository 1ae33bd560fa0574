"""``--feature-gates``: Karpenter's flag syntax on the commands, over the stack's cluster.featureGates, so
manifests (which declare no cluster) can say which gates the cluster runs; Helm's spelling of a gate, and
the gates a release knows."""

from __future__ import annotations

import json

import pytest
import yaml

from karpenter_gitops.app.sources import read_sources
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

OVERLAY = """apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: cheap-spot}
spec:
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  priceAdjustment: "-10%"
"""


def _rules(out: str) -> set[str]:
    return {f["rule"] for f in json.loads(out)["findings"]}


def test_a_gate_turned_on_by_flag_silences_the_gate_note(tmp_path, cli):
    path = tmp_path / "overlay.yaml"
    path.write_text(OVERLAY)
    code, out, _ = cli("validate", path, "--format", "json")
    assert code == 0 and _rules(out) == {"gate/feature-off"}
    code, out, _ = cli("validate", path, "--format", "json", "--feature-gates", "NodeOverlay=true")
    assert code == 0 and _rules(out) == set()


def test_the_flag_overrides_the_stack_gate_by_gate(project):
    stack = project / "stacks" / "Pulumi.dev.yaml"
    declared = read_sources([stack]).inputs.cluster.feature_gates
    assert "NodeOverlay" in declared
    overridden = read_sources([stack], feature_gates={"NodeOverlay": False, "StaticCapacity": True}).inputs.cluster
    assert overridden.feature_gates == (declared - {"NodeOverlay"}) | {"StaticCapacity"}


@pytest.mark.parametrize("value", ["NodeOverlay", "NodeOverlay=yes", "=true", "Node Overlay=true"])
def test_a_malformed_gate_is_a_usage_error(tmp_path, cli, value):
    path = tmp_path / "overlay.yaml"
    path.write_text(OVERLAY)
    code, _, err = cli("validate", path, "--feature-gates", value)
    assert code == 2 and "is not NAME=true or NAME=false" in err


def test_an_unknown_feature_gate_is_refused_with_the_known_ones(tmp_path, cli):
    path = tmp_path / "pool.yaml"
    path.write_text(yaml.safe_dump_all([dict(BASE_NODECLASS), dict(BASE_NODEPOOL)]))
    code, out, err = cli("validate", path, "--feature-gates", "Foo=true")
    assert code == 2 and out == ""
    assert err.startswith("karpenter-gitops: error: --feature-gates: 'Foo' is not a feature gate of Karpenter 1.15")
    assert "known gates: SpotToSpotConsolidation, NodeRepair" in err


def test_the_helm_spelling_of_a_gate_turns_it_on(tmp_path, cli):
    path = tmp_path / "overlay.yaml"
    path.write_text(OVERLAY)
    code, out, _ = cli("validate", path, "--format", "json", "--feature-gates", "nodeOverlay=true")
    assert code == 0 and json.loads(out)["findings"] == []
