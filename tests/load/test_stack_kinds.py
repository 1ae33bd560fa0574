"""NodeOverlays and CapacityBuffers in a stack file (``karpenter-gitops:nodeOverlays`` / ``capacityBuffers``):
loaded as manifests of the same objects would be, judged by the same rules, located at their line; a key
or block of the wrong shape is one exit-2 line naming the file and the key."""

from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODEOVERLAY

OVERLAY = BASE_NODEOVERLAY["spec"]
BUFFER = BASE_CAPACITYBUFFER["spec"]


def stack(cluster: dict | None = None, **keys) -> dict:
    config = {"karpenter-gitops:cluster": {"name": "demo", "karpenterVersion": "1.14", **(cluster or {})}}
    return {"config": config | {f"karpenter-gitops:{key}": value for key, value in keys.items()}}


def validate(tmp_path, cli, doc: dict, *args: str) -> tuple[int, list[dict], str]:
    path = tmp_path / "Pulumi.kinds.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    code, out, err = cli("validate", path, "--format", "json", *args)
    return code, (json.loads(out)["findings"] if out else []), err


def test_overlays_and_buffers_load_as_their_manifests_do():
    loaded = load_documents(
        [
            (
                "Pulumi.s.yaml",
                [stack(nodeOverlays={"gpu-discount": OVERLAY}, capacityBuffers={"team-a/spare": BUFFER, "spare": BUFFER})],
            )
        ],
        (1, 14),
    )
    manifests = load_documents([("m.yaml", [BASE_NODEOVERLAY, BASE_CAPACITYBUFFER])], (1, 14))
    assert [o.spec for o in loaded.node_overlays] == [o.spec for o in manifests.node_overlays]
    assert {b.name: b.raw["metadata"] for b in loaded.capacity_buffers} == {
        "team-a/spare": {"name": "spare", "namespace": "team-a"},  # named as a manifest's namespaced object is
        "spare": {"name": "spare"},
    }
    assert loaded.node_overlays[0].source.stack_key == "karpenter-gitops:nodeOverlays.gpu-discount"
    assert loaded.node_overlays[0].raw == {**BASE_NODEOVERLAY, "metadata": {"name": "gpu-discount"}}


def test_their_findings_name_the_stack_key_and_line(tmp_path, cli):
    bad_overlay = {**OVERLAY, "price": "1.2", "priceAdjustment": "-10%"}
    bad_buffer = {"podTemplateRef": {"name": "spare"}}
    code, found, _ = validate(
        tmp_path,
        cli,
        stack(
            {"featureGates": {"NodeOverlay": True, "CapacityBuffer": True}},
            nodeOverlays={"gpu": bad_overlay},
            capacityBuffers={"team-a/spare": bad_buffer},
        ),
    )
    assert code == 1
    text = (tmp_path / "Pulumi.kinds.yaml").read_text().splitlines()
    located = {(f["rule"], f["kind"], f["name"]): text[f["line"] - 1].strip() for f in found}
    assert located == {
        ("cel/overlay-price-exclusive", "NodeOverlay", "gpu"): "gpu:",
        ("cel/buffer-template-size", "CapacityBuffer", "team-a/spare"): "team-a/spare:",
    }


@pytest.mark.parametrize(
    ("gates", "expected"),
    [
        (None, {("NodeOverlay", "spec"), ("CapacityBuffer", "spec"), ("NodePool", "spec.replicas")}),
        ({"NodeOverlay": True}, {("CapacityBuffer", "spec"), ("NodePool", "spec.replicas")}),
        ({"NodeOverlay": True, "CapacityBuffer": True, "StaticCapacity": False}, {("NodePool", "spec.replicas")}),
        ({"NodeOverlay": True, "CapacityBuffer": True, "StaticCapacity": True}, set()),
    ],
)
def test_a_gate_not_declared_on_is_one_note_per_object(tmp_path, cli, gates, expected):
    pool = {
        "template": {
            "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "x"}, "requirements": []}
        },
        "replicas": 2,
        "limits": {"nodes": "3"},
    }
    doc = stack(
        {"featureGates": gates} if gates else {},
        nodeOverlays={"gpu": OVERLAY},
        capacityBuffers={"spare": BUFFER},
        nodePools={"static": pool},
    )
    code, found, _ = validate(tmp_path, cli, doc)
    notes = [f for f in found if f["rule"] == "gate/feature-off"]
    assert {(f["kind"], f["path"]) for f in notes} == expected
    assert all(f["severity"] == "info" and "--feature-gates" in f["hint"] for f in notes)
    assert code == (1 if any(f["severity"] == "error" for f in found) else 0)


@pytest.mark.parametrize(("version", "kind"), [("1.6", "NodeOverlay"), ("1.13", "CapacityBuffer")])
def test_a_release_before_the_kind_refuses_it_by_its_key(tmp_path, cli, version, kind):
    code, found, _ = validate(
        tmp_path, cli, stack({"karpenterVersion": version}, nodeOverlays={"gpu": OVERLAY}, capacityBuffers={"spare": BUFFER})
    )
    assert code == 1
    refused = [f for f in found if f["kind"] == kind]
    assert [(f["rule"], f["path"]) for f in refused] == [("schema/api-version", "kind")]
    assert f"serves no {kind}" in refused[0]["message"]


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        ({"nodeOverlays": ["gpu"]}, "'karpenter-gitops:nodeOverlays' must map names to specs"),
        ({"capacityBuffers": "spare"}, "'karpenter-gitops:capacityBuffers' must map namespace/name to specs"),
        (
            {"capacityBuffers": {"a/b/c": BUFFER}},
            "'karpenter-gitops:capacityBuffers.a/b/c': a CapacityBuffer key is a name or namespace/name",
        ),
        ({"capacityBuffers": {"/spare": BUFFER}}, "'karpenter-gitops:capacityBuffers./spare'"),
        ({"capacityBuffers": {"team-a/": BUFFER}}, "'karpenter-gitops:capacityBuffers.team-a/'"),
        ({"nodeOverlay": {"gpu": OVERLAY}}, "unknown stack setting 'karpenter-gitops:nodeOverlay'"),
    ],
)
def test_a_block_or_key_of_the_wrong_shape_is_one_line(tmp_path, cli, keys, said):
    code, found, err = validate(tmp_path, cli, stack(**keys))
    assert code == 2 and found == []
    assert err.count("\n") == 1 and said in err and "Pulumi.kinds.yaml" in err and "hint:" in err


KEY = st.text(st.sampled_from("ab/-."), min_size=1, max_size=6)


@given(key=KEY)
def test_any_buffer_key_loads_as_its_namespace_and_name_or_is_refused_naming_it(key):
    try:
        loaded = load_documents([("Pulumi.s.yaml", [stack(capacityBuffers={key: BUFFER})])], (1, 14))
    except InputError as err:
        assert key.count("/") and f"capacityBuffers.{key}'" in err.message
        return
    (buffer,) = loaded.capacity_buffers
    metadata = buffer.raw["metadata"]
    assert buffer.name == key == "/".join(filter(None, (metadata.get("namespace"), metadata["name"])))
    assert all(metadata.values()) and "/" not in metadata["name"]


def test_the_note_is_ours_so_a_stack_may_raise_it_switch_it_off_or_waive_it_by_kind(tmp_path, cli):
    objects = {"nodeOverlays": {"gpu": OVERLAY}, "capacityBuffers": {"spare": BUFFER}}
    raised = stack(policy={"rules": {"gate/feature-off": {"severity": "warning"}}}, **objects)
    _, found, _ = validate(tmp_path, cli, raised)
    assert {(f["kind"], f["severity"]) for f in found} == {("NodeOverlay", "warning"), ("CapacityBuffer", "warning")}
    _, found, _ = validate(tmp_path, cli, stack(policy={"rules": {"gate/feature-off": {"enabled": False}}}, **objects))
    assert found == []
    waiver = {
        "rule": "gate/feature-off",
        "object": "*",
        "kind": "CapacityBuffer",
        "reason": "gate on via GitOps",
        "expires": "2999-01-01",
    }
    code, found, _ = validate(tmp_path, cli, stack(waivers=[waiver], **objects), "--policy")
    assert code == 0 and {(f["kind"], f["waived"]) for f in found} == {("NodeOverlay", False), ("CapacityBuffer", True)}
    code, _, err = validate(tmp_path, cli, stack(waivers=[{**waiver, "kind": "CapacityBufer"}], **objects), "--policy")
    assert code == 2 and "kind 'CapacityBufer' is not one of" in err and "did you mean 'CapacityBuffer'" in err
