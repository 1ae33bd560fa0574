"""CapacityBuffer as a kind of its own (Karpenter 1.14+): loaded, judged with its CRD's rules, rendered
in its namespace. tests/real/test_api_server.py holds the same verdicts against the real API server."""

from __future__ import annotations

import pytest
import yaml
from support.overlays import BUFFER_CASES, buffer
from support.rule_helpers import findings

from karpenter_gitops.cli import main
from karpenter_gitops.rules.examples import merge_patch


@pytest.mark.parametrize(("what", "patch", "broken"), BUFFER_CASES, ids=[c[0] for c in BUFFER_CASES])
def test_a_buffer_is_judged_with_its_crds_rules(what, patch, broken):
    assert {f.rule for f in findings(buffer(patch)) if f.severity.value == "error"} == broken


def test_the_documentations_v1alpha1_example_is_refused_by_its_api_version():
    alpha = merge_patch(buffer({}), {"apiVersion": "autoscaling.x-k8s.io/v1alpha1"})
    (found,) = findings(alpha)
    assert (found.rule, found.path) == ("schema/api-version", "apiVersion")
    assert "not served for CapacityBuffer; Karpenter serves 'autoscaling.x-k8s.io/v1beta1'" in found.message


def test_before_114_the_kind_is_not_served():
    (found,) = findings(buffer({}), release=(1, 13))
    assert found.message.startswith("Karpenter 1.13 serves no CapacityBuffer: the kind arrived in 1.14")


def test_buffers_of_one_name_in_two_namespaces_are_two_objects_and_render_into_their_namespaces(tmp_path):
    other = merge_patch(buffer({}), {"metadata": {"namespace": "team-a"}})
    source = tmp_path / "buffers.yaml"
    source.write_text(yaml.safe_dump_all([buffer({}), other]))
    assert main(["render", "--manifests", str(source), "--out", str(tmp_path / "out")]) == 0
    rendered = {path.name: yaml.safe_load(path.read_text()) for path in (tmp_path / "out").glob("*.yaml")}
    assert set(rendered) == {"capacitybuffer-default.spare.yaml", "capacitybuffer-team-a.spare.yaml"}
    assert rendered["capacitybuffer-team-a.spare.yaml"]["metadata"] == {"name": "spare", "namespace": "team-a"}


def test_a_namespace_that_is_not_a_string_is_a_type_finding():
    (found,) = findings(merge_patch(buffer({}), {"metadata": {"namespace": ["team-a"]}}))
    assert (found.rule, found.path) == ("schema/type", "metadata.namespace")


@pytest.mark.parametrize(("namespace", "problems"), [("Team_A", 1), ("t" * 64, 1), ("-" + "t" * 63, 2), ("team-a", 0)])
def test_a_namespace_must_be_an_rfc1123_label(namespace, problems):
    found = [
        f for f in findings(merge_patch(buffer({}), {"metadata": {"namespace": namespace}})) if f.path == "metadata.namespace"
    ]
    assert len(found) == problems and all(f.rule == "schema/pattern" for f in found)
    assert all(f.message.startswith(f'Invalid value: "{namespace}": ') for f in found)
