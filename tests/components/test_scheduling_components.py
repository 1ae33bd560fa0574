"""The NodeOverlay and CapacityBuffer components under ``set_mocks``: what they register, what stops them
before anything is registered, and the Fleet and program building them from stack config."""

from __future__ import annotations

import copy
import json
import logging
import runpy

import pulumi
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import fake_reconcile, pulumi_mocks
from support.pulumi_specs import SPEC

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Severity
from karpenter_gitops.rules.examples import BASE_CAPACITYBUFFER, BASE_NODEOVERLAY
from karpenter_gitops_pulumi.fleet import Fleet, FleetArgs
from karpenter_gitops_pulumi.scheduling import CapacityBuffer, CapacityBufferArgs, NodeOverlay, NodeOverlayArgs

OVERLAY_TYPE = "kubernetes:karpenter.sh/v1alpha1:NodeOverlay"
BUFFER_TYPE = "kubernetes:autoscaling.x-k8s.io/v1beta1:CapacityBuffer"
OVERLAY = BASE_NODEOVERLAY["spec"] | {"priceAdjustment": "-10%"}
BUFFER = BASE_CAPACITYBUFFER["spec"]
GATES_ON = {"karpenter_version": "1.14", "feature_gates": {"NodeOverlay": True, "CapacityBuffer": True}}


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    """The Fleet's classes reconcile against a fake AWS (their overlays and buffers need none)."""
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)


def test_an_overlay_is_its_custom_resource_with_karpenters_status_left_alone():
    run = pulumi_mocks.run(lambda: NodeOverlay("gpu-discount", NodeOverlayArgs(spec=OVERLAY, cluster=GATES_ON)))
    (resource,) = run.by_type(OVERLAY_TYPE)
    assert resource.inputs == {
        "apiVersion": "karpenter.sh/v1alpha1",
        "kind": "NodeOverlay",
        "metadata": {"name": "gpu-discount"},
        "spec": OVERLAY,
    }
    assert resource.parent == run.urn("gpu-discount") and resource.ignore_changes == ["status"]
    assert run.resources["gpu-discount"].type == "karpenter-gitops:index:NodeOverlay"


@pytest.mark.parametrize(
    ("name", "metadata"), [("team-a/spare", {"name": "spare", "namespace": "team-a"}), ("spare", {"name": "spare"})]
)
def test_a_buffer_lands_in_the_namespace_its_name_gives(name, metadata):
    run = pulumi_mocks.run(lambda: CapacityBuffer(name, CapacityBufferArgs(spec=BUFFER, cluster=GATES_ON)))
    (resource,) = run.by_type(BUFFER_TYPE)
    assert resource.inputs["metadata"] == metadata and resource.inputs["spec"] == BUFFER
    assert resource.inputs["apiVersion"] == "autoscaling.x-k8s.io/v1beta1"


@pytest.mark.parametrize(
    ("build", "said"),
    [
        (
            lambda: NodeOverlay("gpu", NodeOverlayArgs(spec=OVERLAY | {"price": "1.2"}, cluster=GATES_ON)),
            r"NodeOverlay gpu: spec: cannot set both 'price' and 'priceAdjustment' \[cel/overlay-price-exclusive\]",
        ),
        (
            lambda: NodeOverlay("gpu", NodeOverlayArgs(spec=OVERLAY, cluster={"karpenter_version": "1.6"})),
            r"NodeOverlay gpu: kind: Karpenter 1.6 serves no NodeOverlay",
        ),
        (
            lambda: CapacityBuffer("team-a/spare", CapacityBufferArgs(spec={"podTemplateRef": {"name": "spare"}})),
            r"CapacityBuffer team-a/spare: spec: If podTemplateRef is set, replicas or limits must also be set",
        ),
        (lambda: CapacityBuffer("a/b/c", CapacityBufferArgs(spec=BUFFER)), r"a CapacityBuffer key is a name or namespace/name"),
    ],
)
def test_an_error_stops_the_program_in_one_line_before_anything_is_registered(build, said):
    recorder = pulumi_mocks.Recorder()
    with pytest.raises(InputError, match=said) as refused:
        pulumi_mocks.run(build, recorder=recorder)
    assert isinstance(refused.value, pulumi.RunError)  # the language host prints it alone, without a traceback
    where = f"{refused.value.file}: {refused.value.message}"
    assert "karpenter-gitops:" in where and "\n" not in where  # the stack key, in one line
    assert not recorder.by_type(OVERLAY_TYPE) and not recorder.by_type(BUFFER_TYPE)


def test_a_spec_holding_outputs_is_judged_once_they_are_known():
    def overlay(adjustment: str):
        return lambda: NodeOverlay(
            "gpu", NodeOverlayArgs(spec=OVERLAY | {"priceAdjustment": pulumi.Output.from_input(adjustment)}, cluster=GATES_ON)
        )

    (resource,) = pulumi_mocks.run(overlay("-20%")).by_type(OVERLAY_TYPE)
    assert resource.inputs["spec"]["priceAdjustment"] == "-20%" and resource.inputs["metadata"] == {"name": "gpu"}
    with pytest.raises(InputError, match=r"spec.priceAdjustment: Invalid value: \"cheap\".*\[schema/pattern\]") as refused:
        pulumi_mocks.run(overlay("cheap"))
    assert isinstance(refused.value, pulumi.RunError) and refused.value.file == "karpenter-gitops:nodeOverlays.gpu"


def test_a_gate_the_cluster_does_not_declare_on_is_a_note_in_the_preview(caplog):
    with caplog.at_level(logging.INFO, logger="support.pulumi_mocks"):
        run = pulumi_mocks.run(lambda: NodeOverlay("gpu", NodeOverlayArgs(spec=OVERLAY, cluster={"karpenter_version": "1.14"})))
    assert run.by_type(OVERLAY_TYPE)  # a note stops nothing
    (note,) = [r for r in caplog.records if "[gate/feature-off]" in r.getMessage()]
    assert note.levelno == logging.INFO and "NodeOverlay feature gate is off" in note.getMessage()
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="support.pulumi_mocks"):
        pulumi_mocks.run(lambda: NodeOverlay("gpu", NodeOverlayArgs(spec=OVERLAY, cluster=GATES_ON)))
    assert not [r for r in caplog.records if "[gate/feature-off]" in r.getMessage()]


def test_a_secret_spec_stays_secret():
    run = pulumi_mocks.run(lambda: CapacityBuffer("spare", CapacityBufferArgs(spec=BUFFER, cluster=GATES_ON, secret=True)))
    (resource,) = run.by_type(BUFFER_TYPE)
    assert resource.inputs["spec"] == {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": BUFFER}


def test_the_fleet_builds_them_from_its_args_with_its_cluster_and_policy():
    def program():
        Fleet(
            "dev",
            FleetArgs(
                node_classes={"default": SPEC},
                node_overlays={"gpu": OVERLAY},
                capacity_buffers={"team-a/spare": BUFFER, "spare": BUFFER},
                cluster={"name": "dev", **GATES_ON},
            ),
        )

    run = pulumi_mocks.run(program)
    assert {r.inputs["metadata"].get("namespace") for r in run.by_type(BUFFER_TYPE)} == {"team-a", None}
    assert [r.inputs["metadata"] for r in run.by_type(OVERLAY_TYPE)] == [{"name": "gpu"}]
    for component in ("gpu", "team-a/spare", "spare"):
        assert run.resources[component].parent == run.urn("dev")


def test_the_fleet_refuses_a_bad_overlay_naming_its_stack_key():
    def program():
        Fleet(
            "dev",
            FleetArgs(node_classes={"default": SPEC}, node_overlays={"gpu": {"requirements": [], "capacity": {"cpu": "8"}}}),
        )

    with pytest.raises(InputError, match=r"invalid resource restricted \[cel/overlay-capacity-restricted\]") as refused:
        pulumi_mocks.run(program)
    assert refused.value.file == "karpenter-gitops:nodeOverlays.gpu"


def _dev_config(project, **overrides) -> dict[str, str]:
    config = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())["config"] | overrides
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}


def test_the_program_applies_the_stacks_overlays_and_buffers_after_karpenter(project):
    cluster = {
        "name": "dev",
        "kubernetesVersion": "1.32",
        "karpenterVersion": "1.14",
        "featureGates": {"NodeOverlay": True, "CapacityBuffer": True},
    }
    config = _dev_config(
        project,
        **{
            "karpenter-gitops:cluster": cluster,
            "karpenter-gitops:nodeOverlays": {"gpu": OVERLAY},
            "karpenter-gitops:capacityBuffers": {"default/spare": BUFFER},
        },
    )
    run = pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=config)
    (overlay,), (buffer,) = run.by_type(OVERLAY_TYPE), run.by_type(BUFFER_TYPE)
    assert buffer.inputs["metadata"] == {"name": "spare", "namespace": "default"}
    release = run.urn("karpenter-helm")  # the dev stack installs Karpenter (after its CRDs): the objects wait for it
    assert release in overlay.dependencies and release in buffer.dependencies
    gates = run.resources["karpenter-helm"].inputs["values"]["settings"]["featureGates"]
    assert gates == {"nodeOverlay": True, "capacityBuffer": True}  # the release runs with the gates the stack declares


SPECS = st.dictionaries(
    st.sampled_from(["requirements", "price", "priceAdjustment", "capacity", "weight", "extra"]),
    st.one_of(
        st.none(),
        st.integers(-3, 20000),
        st.text(max_size=4),
        st.just([]),
        st.just({"cpu": "1"}),
        st.just([{"key": "k", "operator": "In", "values": ["v"]}]),
    ),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spec=SPECS)
def test_any_overlay_spec_is_registered_as_validate_judges_it_or_refused_in_one_line(spec):
    _, findings = stack.standalone("NodeOverlay", "gpu", copy.deepcopy(spec), {"karpenterVersion": "1.14"})
    recorder = pulumi_mocks.Recorder()
    try:
        pulumi_mocks.run(
            lambda: NodeOverlay("gpu", NodeOverlayArgs(spec=spec, cluster={"karpenter_version": "1.14"})), recorder=recorder
        )
    except InputError as refused:
        assert any(f.severity is Severity.ERROR for f in findings) and "\n" not in refused.message
        assert not recorder.by_type(OVERLAY_TYPE)
        return
    assert not any(f.severity is Severity.ERROR for f in findings)
    (resource,) = recorder.by_type(OVERLAY_TYPE)
    assert resource.inputs["spec"] == {k: v for k, v in spec.items() if v is not None}
