"""``--feature-gates``: Karpenter's flag syntax on the commands, over the stack's cluster.featureGates, so
manifests (which declare no cluster) can say which gates the cluster runs."""

from __future__ import annotations

import json

import pytest

from karpenter_gitops.app.sources import read_sources
from karpenter_gitops.cli import main

OVERLAY = """apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: cheap-spot}
spec:
  requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]
  priceAdjustment: "-10%"
"""


def rules(capsys, *argv: str) -> tuple[int, set[str]]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, {f["rule"] for f in json.loads(out)["findings"]}


def test_a_gate_turned_on_by_flag_silences_the_gate_note(tmp_path, capsys):
    path = tmp_path / "overlay.yaml"
    path.write_text(OVERLAY)
    assert rules(capsys, "validate", str(path), "--format", "json") == (0, {"gate/feature-off"})
    assert rules(capsys, "validate", str(path), "--format", "json", "--feature-gates", "NodeOverlay=true") == (0, set())


def test_the_flag_overrides_the_stack_gate_by_gate(project):
    stack = project / "stacks" / "Pulumi.dev.yaml"
    declared = read_sources([stack]).inputs.cluster.feature_gates
    assert "NodeOverlay" in declared
    overridden = read_sources([stack], feature_gates={"NodeOverlay": False, "StaticCapacity": True}).inputs.cluster
    assert overridden.feature_gates == (declared - {"NodeOverlay"}) | {"StaticCapacity"}


@pytest.mark.parametrize("value", ["NodeOverlay", "NodeOverlay=yes", "=true", "Node Overlay=true"])
def test_a_malformed_gate_is_a_usage_error(tmp_path, capsys, value):
    path = tmp_path / "overlay.yaml"
    path.write_text(OVERLAY)
    assert main(["validate", str(path), "--feature-gates", value]) == 2
    assert "is not NAME=true or NAME=false" in capsys.readouterr().err
