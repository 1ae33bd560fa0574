"""NodeOverlay as a kind of its own (Karpenter 1.7+): loaded, judged with its CRD's rules, rendered.

tests/real/test_api_server.py holds the same verdicts against the real API server; the release
walker (tests/support/crd_walk.py) compares the model with the CRD of every release that serves the kind.
"""

from __future__ import annotations

import pytest
from support.overlays import CASES, overlay
from support.rule_helpers import findings

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


def _priced(name: str, weight: int, *requirements: tuple[str, list[str]], operator: str = "In") -> dict:
    return {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": name},
        "spec": {
            "weight": weight,
            "priceAdjustment": "-10%",
            "requirements": [{"key": key, "operator": operator, "values": values} for key, values in requirements],
        },
    }


TYPE, FAMILY, ARCH = "node.kubernetes.io/instance-type", "karpenter.k8s.aws/instance-family", "kubernetes.io/arch"


def _conflicts(*docs: dict) -> list:
    """The rule's findings on manifests judged for 1.15 with the NodeOverlay gate on (--feature-gates)."""
    from karpenter_gitops.judge import validate
    from karpenter_gitops.load.into_inputs import load_documents

    inputs = load_documents([("x.yaml", list(docs))], (1, 15)).with_gates({"NodeOverlay": True})
    return [f for f in validate(inputs, (1, 15)).findings if f.rule == "nodeoverlay/same-weight-price"]


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        ([(FAMILY, ["m5", "c5"])], [(FAMILY, ["m5"])], "m5"),
        ([(TYPE, ["m5.large", "t3.micro"])], [(FAMILY, ["m5"])], "m5.large"),  # a type of the other's family
        ([(FAMILY, ["m5"])], [(TYPE, ["m5.xlarge"])], "m5.xlarge"),
        ([(TYPE, ["m5.large"])], [(TYPE, ["m5.xlarge"])], None),  # disjoint
        ([(FAMILY, ["m5"]), (ARCH, ["amd64"])], [(FAMILY, ["m5"])], None),  # another key: the overlap is not certain offline
    ],
)
def test_same_weight_overlays_pricing_the_same_types_are_found_offline(first, second, shared):
    """Karpenter rejects the overlay whose name sorts first (Conflict); validate says so where the requirements
    make the overlap certain, and leaves every other overlap to plan, which has the catalogue."""
    docs = (_priced("a", 10, *first), _priced("b", 10, *second))
    found = _conflicts(*docs)
    assert [f for f in findings(*docs, release=(1, 15)) if f.rule == "nodeoverlay/same-weight-price"] == []  # gate off: ignored
    if shared is None:
        assert found == []
        return
    assert [(f.name, f.path) for f in found] == [("a", "spec.priceAdjustment")]
    assert f"NodeOverlay b has the same weight (10) and also prices {shared}" in found[0].message
    assert _conflicts(docs[0], _priced("b", 20, *second)) == []  # the heavier one wins: no conflict
