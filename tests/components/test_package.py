"""The package provider (``pulumi-resource-karpenter-gitops``) under ``set_mocks``: ``Construct`` calls as the
engine makes them for a YAML or TypeScript program, a NodePool's class resolved from a resource reference,
and a refusal handed back as the one line the Python program shows, without the provider's stack trace."""

from __future__ import annotations

import tomllib

import pytest
from conftest import PROJECT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi.errors import InputPropertyError
from support import fake_reconcile, pulumi_mocks
from support.hostile import mutated
from support.pulumi_specs import SPEC

from karpenter_gitops.app import stack
from karpenter_gitops_pulumi.package import NODE_CLASS_TYPE, PACKAGE, BuiltNodeClasses, Provider

POOL = {"template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}}}
NODEPOOL_TYPE = "kubernetes:karpenter.sh/v1:NodePool"


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)


def construct(provider: Provider, kind: str, name: str, inputs: dict):
    return provider.construct(name, f"karpenter-gitops:index:{kind}", inputs)


def test_a_pool_gets_the_class_its_reference_names_and_launches_with_it():
    built = BuiltNodeClasses()
    provider = Provider("0.1.0", built)

    def program():
        construct(provider, "NodeClass", "default", {"spec": SPEC, "nodePools": {"web": POOL}})
        # the SDK resolves the engine's reference through the package's resource module
        node_class = built.construct("default", NODE_CLASS_TYPE, "urn:pulumi:dev::p::karpenter-gitops:index:NodeClass::default")
        construct(provider, "NodePool", "web", {"spec": POOL, "nodeClass": node_class})

    run = pulumi_mocks.run(program)
    (pool,) = run.by_type(NODEPOOL_TYPE)
    assert pool.inputs["spec"]["template"]["spec"]["nodeClassRef"] == {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "default",
    }
    assert run.resources["web"].type == "karpenter-gitops:index:NodePool"


def test_a_reference_to_no_class_of_this_program_is_an_input_error_of_node_class():
    built = BuiltNodeClasses()
    with pytest.raises(InputPropertyError, match="not a NodeClass of this program") as refused:
        built.construct("elsewhere", NODE_CLASS_TYPE, "urn:pulumi:dev::p::karpenter-gitops:index:NodeClass::elsewhere")
    assert refused.value.property_path == "nodeClass"
    provider = Provider("0.1.0", built)
    with pytest.raises(InputPropertyError, match="must be a NodeClass") as named:
        pulumi_mocks.run(lambda: construct(provider, "NodePool", "web", {"spec": POOL, "nodeClass": "default"}))
    assert named.value.property_path == "nodeClass"


def test_a_refusal_is_the_python_programs_one_line_on_the_field_it_names():
    provider = Provider("0.1.0", BuiltNodeClasses())
    overlay = {"requirements": [], "price": "1.2", "priceAdjustment": "-10%"}
    with pytest.raises(InputPropertyError) as refused:
        pulumi_mocks.run(
            lambda: construct(provider, "NodeOverlay", "gpu", {"spec": overlay, "cluster": {"karpenterVersion": "1.14"}})
        )
    assert refused.value.property_path == "spec"
    assert refused.value.reason.startswith("karpenter-gitops:nodeOverlays.gpu: NodeOverlay gpu: spec: cannot set both")
    assert "[cel/overlay-price-exclusive]" in refused.value.reason and "\n" not in refused.value.reason


def test_the_wheel_installs_the_plugin_under_the_name_the_engine_looks_for():
    """The engine starts a package's provider as ``pulumi-resource-<package>``, from PATH or a named folder."""
    scripts = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts[f"pulumi-resource-{PACKAGE}"] == "karpenter_gitops_pulumi.package:main"


OVERLAY_INPUTS = {"spec": {"requirements": [], "priceAdjustment": "-10%"}, "cluster": {"karpenterVersion": "1.14"}}
BUFFER_INPUTS = {"spec": {"podTemplateRef": {"name": "spare"}, "replicas": 2}, "cluster": {"karpenterVersion": "1.14"}}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    kind_and_inputs=st.one_of(
        mutated(st.just(OVERLAY_INPUTS)).map(lambda inputs: ("NodeOverlay", inputs)),
        mutated(st.just(BUFFER_INPUTS)).map(lambda inputs: ("CapacityBuffer", inputs)),
    )
)
def test_any_inputs_a_program_sends_are_built_or_refused_as_an_input_error_in_one_line(kind_and_inputs):
    """What a YAML or TypeScript program sends is data: the provider builds the component or answers with an
    input error (one line, no trace), never with another exception the SDK would print a stack trace for."""
    kind, inputs = kind_and_inputs
    provider = Provider("0.1.0", BuiltNodeClasses())
    try:
        pulumi_mocks.run(lambda: construct(provider, kind, "team-a/spare" if kind == "CapacityBuffer" else "gpu", inputs))
    except InputPropertyError as refused:
        assert refused.reason and "\n" not in refused.reason and "Traceback" not in refused.reason
