"""The components and the program under ``set_mocks``: resources, inputs, parents, dependency order."""

from __future__ import annotations

import copy
import json
import runpy

import pulumi
import pytest
import yaml
from pulumi.output import Unknown
from support import fake_reconcile, pulumi_mocks
from support.pulumi_specs import SPEC, SPOT_POOL

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops_pulumi.errors import StackInputError
from karpenter_gitops_pulumi.fleet import Fleet, FleetArgs
from karpenter_gitops_pulumi.nodeclass import NodeClass, NodeClassArgs
from karpenter_gitops_pulumi.nodepool import NodePool, NodePoolArgs

EC2NC = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
POOL = SPOT_POOL


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)
    monkeypatch.setattr(fake_reconcile, "WORLD", dict(fake_reconcile.WORLD))


def _class_and_pool(**options):
    node_class = NodeClass("default", NodeClassArgs(spec=SPEC, node_pools={"general": POOL}, **options))
    NodePool("general", NodePoolArgs(spec=POOL, node_class=node_class))


def test_node_class_applies_defaults_ignores_controller_fields_and_waits_for_reconciliation():
    run = pulumi_mocks.run(_class_and_pool)
    (cr,) = run.by_type(EC2NC)
    assert cr.inputs["metadata"] == {"name": "default"}  # cluster-scoped: a name, no namespace
    assert cr.inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20240807"}]
    assert cr.inputs["spec"]["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpProtocolIPv6": "disabled",
        "httpPutResponseHopLimit": 1,
        "httpTokens": "required",
    }
    assert 'metadata.annotations["karpenter.k8s.aws/ec2nodeclass-hash"]' in cr.ignore_changes
    assert {"metadata.finalizers", "status"} <= set(cr.ignore_changes)
    assert cr.dependencies == [run.urn("default-reconciliation")]
    assert cr.parent == run.urn("default")
    (rec,) = run.by_type(pulumi_mocks.RECONCILIATION)
    assert rec.parent == run.urn("default")
    assert rec.inputs["spec"] == cr.inputs["spec"]  # the reconciliation judges what gets applied


def test_provider_is_pickled_by_reference_and_not_as_a_secret():
    run = pulumi_mocks.run(_class_and_pool)
    (rec,) = run.by_type(pulumi_mocks.RECONCILIATION)
    assert isinstance(rec.inputs["__provider"], str)  # a secret would arrive as a signature dict
    assert len(rec.inputs["__provider"]) < 200  # module path + class name, no bytecode


def test_node_pool_defaults_and_dependency_on_its_class():
    run = pulumi_mocks.run(_class_and_pool)
    (pool,) = run.by_type(NODEPOOL)
    spec = pool.inputs["spec"]
    assert spec["disruption"] == {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "consolidateAfter": "0s",
        "budgets": [{"nodes": "10%"}],
    }
    assert spec["template"]["spec"]["expireAfter"] == "720h"
    assert spec["template"]["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}
    assert set(pool.dependencies) == {run.urn("default-reconciliation"), run.urn("default-ec2nodeclass")}
    assert pool.parent == run.urn("general")


def test_pool_keeps_explicit_disruption_settings():
    spec = copy.deepcopy(POOL) | {"disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"}}

    def program():
        NodePool("batch", NodePoolArgs(spec=spec, node_class=NodeClass("default", NodeClassArgs(spec=SPEC))))

    (pool,) = pulumi_mocks.run(program).by_type(NODEPOOL)
    assert pool.inputs["spec"]["disruption"] == {
        "consolidationPolicy": "WhenEmpty",
        "consolidateAfter": "5m",
        "budgets": [{"nodes": "10%"}],
    }


def test_each_budget_gets_the_nodes_the_api_server_would_default():
    # The CRD defaults "nodes: 10%" per budget item too; left out, every refresh would show it as a diff.
    window = {"schedule": "0 9 * * 1-5", "duration": "8h", "reasons": ["Drifted"]}
    spec = copy.deepcopy(POOL) | {"disruption": {"consolidateAfter": "5m", "budgets": [window, {"nodes": "0"}]}}

    def program():
        NodePool("batch", NodePoolArgs(spec=spec, node_class=NodeClass("default", NodeClassArgs(spec=SPEC))))

    (pool,) = pulumi_mocks.run(program).by_type(NODEPOOL)
    assert pool.inputs["spec"]["disruption"]["budgets"] == [{"nodes": "10%", **window}, {"nodes": "0"}]
    assert spec["disruption"]["budgets"][0] == window  # the caller's spec is not modified


CUSTOM = copy.deepcopy(SPEC) | {"amiFamily": "AL2023", "amiSelectorTerms": [{"tags": {"team": "payments"}}]}


def _custom_class_and_pool(**options):
    node_class = NodeClass("default", NodeClassArgs(spec=CUSTOM, node_pools={"general": POOL}, **options))
    NodePool("general", NodePoolArgs(spec=POOL, node_class=node_class))


def test_pin_amis_writes_reconciled_ids_for_custom_selectors():
    fake_reconcile.WORLD["ami"] = "ami-0pinned"
    (cr,) = pulumi_mocks.run(lambda: _custom_class_and_pool(pin_amis=True)).by_type(EC2NC)
    assert cr.inputs["spec"]["amiSelectorTerms"] == [{"id": "ami-0pinned"}]
    assert cr.inputs["spec"]["amiFamily"] == "AL2023"


def test_pin_amis_keeps_a_versioned_alias_so_variants_stay_mapped():
    fake_reconcile.WORLD["ami"] = "ami-0pinned"
    (cr,) = pulumi_mocks.run(lambda: _class_and_pool(pin_amis=True)).by_type(EC2NC)
    assert cr.inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20240807"}]


def test_pin_amis_refuses_latest_aliases_in_one_line_before_anything_is_registered():
    latest = copy.deepcopy(SPEC) | {"amiSelectorTerms": [{"alias": "al2023@latest"}]}
    run = pulumi_mocks.Recorder()
    with pytest.raises(
        StackInputError, match=r"^NodeClass 'default': pin_amis cannot pin alias 'al2023@latest'.*bump --pin-latest"
    ):
        pulumi_mocks.run(lambda: NodeClass("default", NodeClassArgs(spec=latest, pin_amis=True)), recorder=run)
    assert run.resources == {}


def test_pinned_spec_is_unknown_in_preview_but_the_check_still_runs():
    run = pulumi_mocks.run(lambda: _custom_class_and_pool(pin_amis=True), preview=True)
    (cr,) = run.by_type(EC2NC)
    assert isinstance(cr.inputs["spec"], Unknown)  # unknown until the reconciliation ran
    (unpinned,) = pulumi_mocks.run(_custom_class_and_pool, preview=True).by_type(EC2NC)
    assert unpinned.inputs["spec"]["amiSelectorTerms"] == [{"tags": {"team": "payments"}}]


def test_created_node_role_reaches_the_spec_as_a_profile_name():
    run = pulumi_mocks.run(lambda: _class_and_pool(create_node_role=True))
    assert {r.type for r in run.resources.values()} >= {
        "aws:iam/role:Role",
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
        "aws:iam/instanceProfile:InstanceProfile",
    }
    profile = run.resources["default-instance-profile"]
    assert profile.parent == run.urn("default")
    assert profile.inputs["role"] == "default-node-role-1a2b3c"
    (cr,) = run.by_type(EC2NC)
    assert "role" not in cr.inputs["spec"]
    assert cr.inputs["spec"]["instanceProfile"] == "default-instance-profile-1a2b3c"  # the name, never the ARN


def test_invalid_spec_fails_the_check_and_applies_nothing():
    bad = copy.deepcopy(SPEC) | {"amiSelectorTerms": [{"alias": "al2023@" + "v" * 40}]}

    def program():
        NodeClass("default", NodeClassArgs(spec=bad))

    with pytest.raises(Exception, match=r"spec\.amiSelectorTerms\[0\]\.alias is \"al2023@v{40}\": .*\[schema/size\]"):
        pulumi_mocks.run(program)


def test_fleet_orders_classes_before_their_pools():
    def program():
        Fleet(
            "dev",
            FleetArgs(
                node_classes={"default": SPEC, "gpu": SPEC},
                node_pools={"general": POOL, "gpu": _pool_for("gpu")},
                pin_amis=True,
            ),
        )

    run = pulumi_mocks.run(program)
    assert {r.name for r in run.by_type(EC2NC)} == {"default-ec2nodeclass", "gpu-ec2nodeclass"}
    assert set(run.resources["gpu-nodepool"].dependencies) == {run.urn("gpu-reconciliation"), run.urn("gpu-ec2nodeclass")}
    assert run.resources["gpu-reconciliation"].inputs["nodePoolSpecs"].keys() == {"gpu"}
    assert run.resources["default"].parent == run.urn("dev")


def test_fleet_refuses_a_pool_naming_no_class_before_registering_anything():
    def program():
        Fleet("dev", FleetArgs(node_classes={"default": SPEC}, node_pools={"general": _pool_for("missing")}))

    with pytest.raises(InputError, match="'missing' names no EC2NodeClass") as refused:
        pulumi_mocks.run(program)
    assert isinstance(refused.value, pulumi.RunError)  # the language host prints it as one line, no traceback


USER_DATA = "#!/bin/bash\necho hunter2-secret"


def _class_with(spec) -> None:
    node_class = NodeClass("default", NodeClassArgs(spec=spec, node_pools={"general": POOL}))
    NodePool("general", NodePoolArgs(spec=POOL, node_class=node_class))


SECRET_FORMS = {
    "a secret Output inside the spec": lambda: _class_with(SPEC | {"userData": pulumi.Output.secret(USER_DATA)}),
    "a spec that is one secret Output (require_secret_object)": lambda: _class_with(
        pulumi.Output.secret(SPEC | {"userData": USER_DATA})
    ),
    "a secret Output inside a Fleet's spec": lambda: Fleet(
        "dev",
        FleetArgs(node_classes={"default": SPEC | {"userData": pulumi.Output.secret(USER_DATA)}}, node_pools={"general": POOL}),
    ),
}


@pytest.mark.parametrize("program", SECRET_FORMS.values(), ids=SECRET_FORMS.keys())
def test_every_registration_holding_a_secret_keeps_it_secret_without_the_flag(program):
    run = pulumi_mocks.run(program)
    holding = [r for r in run.resources.values() if "hunter2-secret" in json.dumps(pulumi_mocks.revealed(r.inputs))]
    assert {r.type for r in holding} == {pulumi_mocks.RECONCILIATION, EC2NC}
    assert all(pulumi_mocks.holds_secret(r.inputs) for r in holding)
    (class_,) = run.by_type(EC2NC)
    assert pulumi_mocks.revealed(class_.inputs["spec"])["userData"] == USER_DATA  # applied as given


def test_secret_stack_config_read_with_require_object_keeps_every_spec_secret():
    secret_key = "karpenter-gitops:nodeClasses"
    config = pulumi_mocks.STACK_CONFIG | {secret_key: json.dumps({"default": SPEC | {"userData": USER_DATA}})}

    def program():
        classes = pulumi.Config("karpenter-gitops").require_object("nodeClasses")  # plain data, secret or not
        Fleet("dev", FleetArgs(node_classes=classes, node_pools={"general": POOL}))

    run = pulumi_mocks.run(program, config=config, secret_keys=[secret_key])
    specs = [r for r in run.resources.values() if "spec" in r.inputs]
    assert {r.type for r in specs} == {pulumi_mocks.RECONCILIATION, EC2NC, NODEPOOL}
    assert all(pulumi_mocks.holds_secret(r.inputs["spec"]) for r in specs)
    plain = pulumi_mocks.run(program, config=config)  # the same key, not secret: nothing is encrypted
    assert not any(pulumi_mocks.holds_secret(r.inputs) for r in plain.resources.values())


def test_an_output_of_another_resource_in_a_spec_is_judged_once_known_and_applied_in_the_clear():
    alias = pulumi.Output.from_input("al2023@v20240807")
    run = pulumi_mocks.run(lambda: _class_with(SPEC | {"amiSelectorTerms": [{"alias": alias}]}))
    (class_,) = run.by_type(EC2NC)
    assert class_.inputs["spec"]["amiSelectorTerms"] == [{"alias": "al2023@v20240807"}]  # not secret: it is not one
    bad_alias = pulumi.Output.from_input("al2023@" + "v" * 40)
    with pytest.raises(Exception, match=r"spec\.amiSelectorTerms\[0\]\.alias: .*\[schema/size\]"):
        pulumi_mocks.run(lambda: _class_with(SPEC | {"amiSelectorTerms": [{"alias": bad_alias}]}))


@pytest.mark.parametrize("field", ["node_classes", "node_pools"])
def test_a_fleet_given_one_output_for_its_names_refuses_in_one_line(field):
    given = {"node_classes": {"default": SPEC}, "node_pools": {"general": POOL}}
    given[field] = pulumi.Output.secret(given[field])
    with pytest.raises(InputError, match=f"FleetArgs.{field} is an Output: the Fleet needs the names") as refused:
        pulumi_mocks.run(lambda: Fleet("dev", FleetArgs(**given)))
    assert "require_object" in refused.value.hint and "\n" not in str(refused.value)


def _pool_for(class_name: str) -> dict:
    pool = copy.deepcopy(POOL)
    pool["template"]["spec"]["nodeClassRef"]["name"] = class_name
    return pool


def _stack_config(project, **overrides) -> dict[str, str]:
    """The dev stack file as the engine hands it to a program, with some keys replaced."""
    config = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())["config"] | overrides
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}


def test_program_builds_the_dev_stack(project):
    run = pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=_stack_config(project))
    assert run.resources["dev"].type == "karpenter-gitops:index:Fleet"
    assert {r.name for r in run.by_type(NODEPOOL)} == {"general-nodepool", "batch-nodepool"}
    rec = run.resources["default-reconciliation"]
    assert rec.inputs["cluster"] == {
        "name": "dev",
        "kubernetesVersion": "1.32",
        "karpenterVersion": "1.15",
        "featureGates": {"NodeOverlay": True},
    }
    (overlay,) = run.by_type("kubernetes:karpenter.sh/v1alpha1:NodeOverlay")
    assert overlay.inputs["metadata"] == {"name": "prefer-graviton"}
    # every class's reconciliation applies the stack's overlays to its pools, as plan does
    assert set(rec.inputs["nodeOverlaySpecs"]) == {"prefer-graviton"}
    assert not run.by_type("pulumi:providers:kubernetes")


def _without_helm(project) -> dict:
    controller = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["karpenter-gitops:controller"]
    return controller | {"helm": {"enabled": False}}


def test_program_renders_to_a_directory_when_the_stack_says_so(project):
    config = _stack_config(
        project,
        **{"karpenter-gitops:renderYamlToDirectory": "rendered", "karpenter-gitops:controller": _without_helm(project)},
    )
    run = pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=config)
    (provider,) = run.by_type("pulumi:providers:kubernetes")
    assert provider.inputs["renderYamlToDirectory"] == "rendered"
    for cr in run.by_type(EC2NC) + run.by_type(NODEPOOL):
        assert cr.provider.startswith(run.urn("render"))


def test_program_refuses_to_render_a_helm_release(project):
    config = _stack_config(project, **{"karpenter-gitops:renderYamlToDirectory": "rendered"})
    with pytest.raises(ValueError, match="cannot render the Karpenter Helm release"):
        pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=config)


def test_a_disruption_block_without_consolidate_after_is_not_silently_completed():
    from karpenter_gitops_pulumi.manifests import node_pool_spec

    spec = copy.deepcopy(POOL) | {"disruption": {"consolidationPolicy": "WhenEmpty"}}
    applied = node_pool_spec(spec, "default")
    assert "consolidateAfter" not in applied["disruption"]  # required once the block is given; check() reports it
    assert applied["disruption"]["budgets"] == [{"nodes": "10%"}]
    assert node_pool_spec(copy.deepcopy(POOL), "default")["disruption"]["consolidateAfter"] == "0s"


@pytest.fixture
def default_sigint():
    """Python's own SIGINT handler before the test, and again after it."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield signal
    signal.signal(signal.SIGINT, signal.default_int_handler)


def test_under_the_engine_a_component_makes_the_engines_interrupt_end_the_program_quietly(default_sigint, monkeypatch):
    from karpenter_gitops_pulumi import errors

    pulumi_mocks.run(_class_and_pool)  # under mocks: a test runner, whose Ctrl-C must still raise
    assert default_sigint.getsignal(default_sigint.SIGINT) is default_sigint.default_int_handler

    monkeypatch.setattr(pulumi.runtime.settings, "get_monitor", lambda: object())  # the engine's monitor
    errors.end_quietly_when_interrupted()
    assert default_sigint.getsignal(default_sigint.SIGINT) is default_sigint.SIG_DFL

    def own(*_):
        """A program's own handler."""

    default_sigint.signal(default_sigint.SIGINT, own)
    errors.end_quietly_when_interrupted()
    assert default_sigint.getsignal(default_sigint.SIGINT) is own


def test_program_passes_the_stacks_workloads_to_every_class_and_exports_their_forecast(project, tmp_path, monkeypatch):
    monkeypatch.setattr(stack, "forecaster", fake_reconcile.forecaster)
    manifests = tmp_path / "apps.yaml"
    manifests.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n"
        "    spec:\n      containers: [{name: main, resources: {requests: {cpu: '1'}}}]\n"
        "---\napiVersion: v1\nkind: Secret\nmetadata: {name: token}\nstringData: {token: hunter2}\n"
    )
    config = _stack_config(project, **{"karpenter-gitops:workloads": [str(manifests)]})
    run = pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=config)
    rec = run.resources["default-reconciliation"]
    assert [w["kind"] for w in rec.inputs["workloads"]] == ["Deployment"]  # the Secret stays out of inputs and state
    forecast = rec.outputs["forecast"]
    assert forecast["pods"] == 2 and sum(p["pods"] for p in forecast["nodePools"].values()) == 2


def test_program_refuses_workloads_that_are_not_paths(project):
    config = _stack_config(project, **{"karpenter-gitops:workloads": {"path": "k8s"}})
    with pytest.raises(InputError, match="karpenter-gitops:workloads must be a list"):
        pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=config)


def test_without_workloads_the_reconciliation_has_no_forecast(project):
    run = pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=_stack_config(project))
    rec = run.resources["default-reconciliation"]
    assert "workloads" not in rec.inputs and "forecast" not in rec.outputs


@pytest.mark.parametrize("full", [False, True], ids=["summary", "fullOutputs"])
def test_the_fleets_node_pools_output_is_a_summary_unless_the_full_map_is_asked_for(full, monkeypatch):
    mapping = {f"m5.{size}": "ami-0aaa" for size in ("large", "xlarge", "2xlarge")} | {"m6g.large": "ami-0bbb"}
    made = fake_reconcile.NodePoolMapping
    monkeypatch.setattr(fake_reconcile, "NodePoolMapping", lambda pool, node_class, _types: made(pool, node_class, mapping))

    def program():
        fleet = Fleet("dev", FleetArgs(node_classes={"default": SPEC}, node_pools={"general": POOL}, fullOutputs=full))
        pulumi.CustomResource("test:index:Probe", "probe", {"seen": fleet.node_pools})  # the mocks record it resolved

    output = pulumi_mocks.run(program).resources["probe"].inputs["seen"]
    if full:
        assert output == {"general": {"instanceTypes": mapping, "unservedInstanceTypes": []}}
    else:
        assert output == {"general": {"instanceTypes": 4, "amis": {"ami-0aaa": 3, "ami-0bbb": 1}, "unservedInstanceTypes": 0}}


def test_import_adopts_the_live_objects_through_the_custom_resources_not_the_components():
    def program():
        adopt = pulumi.ResourceOptions(import_="default")
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC, node_pools={"general": POOL}), opts=adopt)
        NodePool("general", NodePoolArgs(spec=POOL, node_class=node_class), opts=pulumi.ResourceOptions(import_="general"))

    run = pulumi_mocks.run(program)
    imports = {name: request.importId for (_type, name), (request, _urn) in run.requests.items()}
    assert imports["default-ec2nodeclass"] == "default" and imports["general-nodepool"] == "general"
    assert imports["default"] == imports["general"] == imports["default-reconciliation"] == ""


def test_import_of_an_object_of_another_name_is_refused_in_one_line():
    def program():
        NodeClass("default", NodeClassArgs(spec=SPEC), opts=pulumi.ResourceOptions(import_="hand-made"))

    with pytest.raises(InputError, match="import_ 'hand-made' is not this EC2NodeClass's name") as refused:
        pulumi_mocks.run(program)
    assert "import_='default' adopts the live EC2NodeClass 'default'" in refused.value.hint


def test_pin_amis_on_a_spec_that_is_one_output_keeps_an_alias_class_pinned_by_its_version():
    run = pulumi_mocks.run(lambda: NodeClass("default", NodeClassArgs(spec=pulumi.Output.secret(SPEC), pin_amis=True)))
    (class_,) = run.by_type(EC2NC)
    assert pulumi_mocks.revealed(class_.inputs["spec"])["amiSelectorTerms"] == [{"alias": "al2023@v20240807"}]
