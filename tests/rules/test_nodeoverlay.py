"""NodeOverlay as a kind of its own (Karpenter 1.7+): loaded, judged with its CRD's rules, rendered.

tests/real/test_api_server.py holds the same verdicts against the real API server; the release
walker (tests/_crd_walk.py) compares the model with the CRD of every release that serves the kind.
"""

from __future__ import annotations

import pytest
from _overlays import CASES, overlay
from _rule_helpers import findings

from karpenter_gitops.cli import main

@pytest.mark.parametrize(("what", "patch", "broken"), CASES, ids=[c[0] for c in CASES])
def test_an_overlay_is_judged_with_its_crds_rules(what, patch, broken):
    errors = {f.rule for f in findings(overlay(patch)) if f.severity.value == "error"}
    assert errors == broken


def test_before_17_the_kind_is_not_served():
    found = findings(overlay({}), release=(1, 6))
    assert [(f.rule, f.path) for f in found] == [("schema/api-version", "kind")]
    assert "Karpenter 1.6 serves no NodeOverlay: the kind arrived in 1.7" in found[0].message


def test_gte_arrives_in_19_for_overlays_as_for_pools():
    gte = overlay({"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["4"]}]})
    assert {f.rule for f in findings(gte, release=(1, 8))} == {"schema/enum"}
    assert [f.rule for f in findings(gte, release=(1, 9))] == ["gate/feature-off"]  # served, but ignored without the gate


def test_render_writes_overlays_beside_classes_and_pools(tmp_path, capsys):
    import yaml

    source = tmp_path / "overlay.yaml"
    source.write_text(yaml.safe_dump(overlay({"priceAdjustment": "-10%"})))
    assert main(["render", "--manifests", str(source), "--out", str(tmp_path / "out")]) == 0
    assert yaml.safe_load((tmp_path / "out" / "nodeoverlay-gpu-discount.yaml").read_text())["spec"]["priceAdjustment"] == "-10%"
