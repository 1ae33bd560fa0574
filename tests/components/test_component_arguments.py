"""The components' arguments as users type them: camelCase aliases, misspelt and missing keys, the stack's
cluster block as defaults, and a standalone NodePool judged with its class, each mistake one line."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import fake_reconcile, pulumi_mocks
from support.hostile import HOSTILE, PROFILE, mutated
from support.pulumi_specs import SPEC, SPOT_POOL

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops_pulumi import arguments
from karpenter_gitops_pulumi.errors import StackInputError
from karpenter_gitops_pulumi.fleet import Fleet, FleetArgs
from karpenter_gitops_pulumi.nodeclass import ClusterArgs, NodeClass, NodeClassArgs
from karpenter_gitops_pulumi.nodepool import NodePool, NodePoolArgs
from karpenter_gitops_pulumi.scheduling import CapacityBuffer, NodeOverlay

EC2NC = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
MISTYPED_TAINT = copy.deepcopy(SPOT_POOL)
MISTYPED_TAINT["template"]["spec"]["taints"] = [{"key": "gpu", "effect": "NoSchedul"}]


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)
    monkeypatch.setattr(fake_reconcile, "WORLD", dict(fake_reconcile.WORLD))


def refused(program, **options) -> tuple[str, pulumi_mocks.Recorder]:
    """The one line a program stops with, and what it registered before."""
    recorder = pulumi_mocks.Recorder()
    with pytest.raises(StackInputError) as raised:
        pulumi_mocks.run(program, recorder=recorder, **options)
    return str(raised.value), recorder


def test_camel_case_spellings_are_the_snake_case_fields_the_pool_is_then_judged_with():
    def program():
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC, nodePools={"general": MISTYPED_TAINT}))  # type: ignore[typeddict-unknown-key]
        NodePool("general", {"spec": MISTYPED_TAINT, "nodeClass": node_class})

    with pytest.raises(RuntimeError, match=r'nodePoolSpecs\["general"\]\.template\.spec\.taints\[0\]\.effect is "NoSchedul"'):
        pulumi_mocks.run(program)


def test_the_spellings_come_from_the_declared_fields():
    assert arguments.spellings(NodeClassArgs)["pinAmis"] == "pin_amis"
    assert arguments.spellings(NodeClassArgs)["createNodeRole"] == "create_node_role"
    assert set(arguments.spellings(FleetArgs).values()) == set(FleetArgs.__annotations__)


@pytest.mark.parametrize(
    ("program", "line"),
    [
        (
            lambda: NodeClass("default", {"spec": SPEC, "nodePool": {}}),
            "NodeClass 'default': NodeClassArgs has no argument 'nodePool' (hint: did you mean 'nodePools'?)",
        ),
        (
            lambda: NodeClass("default", {"spec": SPEC, "pin_ami": True}),
            "NodeClass 'default': NodeClassArgs has no argument 'pin_ami' (hint: did you mean 'pin_amis'?)",
        ),
        (
            lambda: NodeClass("default", {"spec": SPEC, "cluster": {"kubernetesVerison": "1.32"}}),
            "NodeClass 'default', cluster: ClusterArgs has no argument 'kubernetesVerison' (hint: did you mean 'kubernetesVersion'?)",
        ),
        (
            lambda: NodeClass("default", {"spec": SPEC, "pinAmis": True, "pin_amis": False}),
            "NodeClass 'default': NodeClassArgs got 'pin_amis' twice, as 'pinAmis' and 'pin_amis' (hint: keep one)",
        ),
        (lambda: NodeClass("default", {"nodePools": {}}), "NodeClass 'default': NodeClassArgs needs 'spec'"),
        (lambda: NodeClass("default", "spec"), "NodeClass 'default': NodeClassArgs must be a mapping, not str"),
        (
            lambda: NodePool("general", {"spec": SPOT_POOL, "nodeClass": "default"}),
            "NodePool 'general': NodePoolArgs.node_class is str, not the NodeClass component",
        ),
        (lambda: NodePool("general", {"spec": SPOT_POOL}), "NodePool 'general': NodePoolArgs needs 'node_class'"),
        (
            lambda: NodePool("general", {"spec": None, "nodeClass": None}),
            "NodePool 'general': NodePoolArgs.spec must be a mapping, not NoneType",
        ),
        (
            lambda: NodeClass("default", {"spec": SPEC, "nodePools": {"gpu": "spot"}}),
            "NodeClass 'default': NodeClassArgs.node_pools['gpu'] must be a mapping, not str",
        ),
        (
            lambda: NodeClass("default", {"spec": SPEC, "pinAmis": "yes"}),
            "NodeClass 'default': NodeClassArgs.pin_amis must be true or false, not str",
        ),
        (
            lambda: NodeClass("default", {"spec": SPEC, "cluster": {"featureGates": {"NodeOverlay": "on"}}}),
            "NodeClass 'default', cluster: ClusterArgs.feature_gates['NodeOverlay'] must be true or false, not str",
        ),
        (
            lambda: Fleet("dev", {"nodeClasses": {}, "pinAmi": True}),
            "Fleet 'dev': FleetArgs has no argument 'pinAmi' (hint: did you mean 'pinAmis'?)",
        ),
        (
            lambda: NodeOverlay("cheap", {"spec": {}, "clutser": {}}),
            "NodeOverlay 'cheap': NodeOverlayArgs has no argument 'clutser' (hint: did you mean 'cluster'?)",
        ),
        (
            lambda: CapacityBuffer("default/spare", {"specs": {}}),
            "CapacityBuffer 'default/spare': CapacityBufferArgs has no argument 'specs' (hint: did you mean 'spec'?)",
        ),
    ],
)
def test_a_mistyped_argument_is_one_line_naming_the_component_and_nothing_is_registered(program, line):
    message, recorder = refused(program)
    assert message.startswith(line), message
    assert recorder.resources == {}


def test_a_standalone_pool_is_judged_with_its_class_and_its_mistake_stops_the_program():
    def program():
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC))
        NodePool("gpu", NodePoolArgs(spec=MISTYPED_TAINT, node_class=node_class))

    message, recorder = refused(program, preview=True)
    assert message.startswith('NodePool gpu: spec.template.spec.taints[0].effect: Unsupported value: "NoSchedul"')
    assert "[schema/enum]" in message and "did you mean 'NoSchedule'?" in message
    assert recorder.by_type(NODEPOOL) == []


def test_a_standalone_pool_is_judged_against_its_class_and_a_clean_one_is_applied():
    def program():
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC))
        NodePool("general", NodePoolArgs(spec=SPOT_POOL, node_class=node_class))

    (pool,) = pulumi_mocks.run(program).by_type(NODEPOOL)
    assert pool.inputs["spec"]["template"]["spec"]["nodeClassRef"]["name"] == "default"


def test_a_standalone_pool_whose_class_spec_waits_for_a_profile_is_judged_once_it_is_known():
    def program():
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC, create_node_role=True))
        NodePool("gpu", NodePoolArgs(spec=MISTYPED_TAINT, node_class=node_class))

    with pytest.raises(StackInputError, match=r"^NodePool gpu: spec\.template\.spec\.taints\[0\]\.effect"):
        pulumi_mocks.run(program)


def test_the_stacks_cluster_block_is_the_default_and_args_win_field_by_field():
    config = {"karpenter-gitops:cluster": json.dumps({"name": "prod", "kubernetesVersion": "1.31", "karpenterVersion": "1.6"})}
    run = pulumi_mocks.run(
        lambda: NodeClass("default", NodeClassArgs(spec=SPEC, cluster=ClusterArgs(karpenter_version="1.14"))), config=config
    )
    (reconciliation,) = run.by_type(pulumi_mocks.RECONCILIATION)
    assert reconciliation.inputs["cluster"] == {"name": "prod", "kubernetesVersion": "1.31", "karpenterVersion": "1.14"}


def test_a_misspelt_key_of_the_stacks_cluster_block_names_the_stack_key():
    config = {"karpenter-gitops:cluster": json.dumps({"kubernetesVerison": "1.31"})}
    message, _ = refused(lambda: NodeClass("default", NodeClassArgs(spec=SPEC)), config=config)
    assert message == (
        "stack config: unknown field 'karpenter-gitops:cluster.kubernetesVerison' (hint: did you mean 'kubernetesVersion'?)"
    )


def test_an_alias_class_without_a_kubernetes_version_fails_the_preview_naming_the_stack_key_and_the_field():
    message, recorder = refused(lambda: NodeClass("default", NodeClassArgs(spec=SPEC)), config={}, preview=True)
    assert message == (
        "NodeClass 'default': alias 'al2023@v20240807' needs the cluster's Kubernetes version to find its AMIs "
        "(hint: pulumi config set --path karpenter-gitops:cluster.kubernetesVersion 1.32, or pass "
        'NodeClassArgs(cluster=ClusterArgs(kubernetes_version="1.32")))'
    )
    assert recorder.resources == {}


def test_a_class_selecting_by_id_needs_no_kubernetes_version():
    by_id = SPEC | {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-0123456789abcdef0"}]}
    assert pulumi_mocks.run(lambda: NodeClass("default", NodeClassArgs(spec=by_id)), config={}, preview=True).by_type(EC2NC)


SPELLINGS = (
    st.sampled_from(sorted(arguments.spellings(NodeClassArgs))) | st.text(max_size=12) | st.sampled_from(["nodePool", "cluster"])
)


@PROFILE
@given(args=st.dictionaries(SPELLINGS, HOSTILE, max_size=5) | HOSTILE)
def test_whatever_a_program_passes_the_arguments_are_read_or_refused_in_one_line(args):
    """The front door of every component: hostile keys and values are fields or one InputError, never a traceback."""
    try:
        fields = arguments.read(args, NodeClassArgs, "NodeClass 'fuzz'")
    except InputError as err:
        assert "\n" not in str(err)  # one line: a key is quoted with its newlines escaped
        return
    assert set(fields) <= set(NodeClassArgs.__annotations__) and isinstance(fields["spec"], dict)


def test_a_pool_the_class_judged_under_another_spec_is_judged_again_as_it_is_applied():
    def program():
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC, node_pools={"gpu": SPOT_POOL}))
        NodePool("gpu", NodePoolArgs(spec=MISTYPED_TAINT, node_class=node_class))

    message, _ = refused(program, preview=True)
    assert message.startswith("NodePool gpu: spec.template.spec.taints[0].effect: Unsupported value")


def test_a_pool_the_class_judged_as_it_is_is_not_judged_twice(monkeypatch):
    judged = []
    monkeypatch.setattr(stack, "check", lambda *args, **kwargs: judged.append(args) or [])

    def program():
        node_class = NodeClass("default", NodeClassArgs(spec=SPEC, node_pools={"general": SPOT_POOL}))
        NodePool("general", NodePoolArgs(spec=copy.deepcopy(SPOT_POOL), node_class=node_class))

    pulumi_mocks.run(program, preview=True)
    assert len(judged) == 1  # the reconciliation's check alone


@PROFILE
@given(class_spec=mutated(st.just(SPEC)), pool_spec=mutated(st.just(SPOT_POOL)), preview=st.booleans())
def test_whatever_specs_a_program_passes_a_class_and_its_standalone_pool_are_applied_or_refused_in_one_line(
    class_spec, pool_spec, preview
):
    """A refusal is the components' one line (StackInputError) or the check's failure (the mocks raise it as a
    RuntimeError naming the property); anything else would reach the user as a traceback."""

    def program():
        node_class = NodeClass("default", {"spec": class_spec})
        NodePool("gpu", {"spec": pool_spec, "nodeClass": node_class})

    try:
        pulumi_mocks.run(program, preview=preview)
    except StackInputError as err:
        assert "\n" not in str(err)
    except RuntimeError as err:
        assert " [" in str(err)  # a check failure: where, and the rule in brackets


def test_a_waiver_file_the_stack_names_but_lacks_stops_the_preview_in_one_line(tmp_path, monkeypatch):
    """The pack alone could only warn that nothing is waived; the program says it as validate --stack does."""
    monkeypatch.chdir(tmp_path)  # the project's directory: Pulumi runs the program there
    config = {**pulumi_mocks.STACK_CONFIG, "karpenter-gitops:waivers": "policies/waivers.yaml"}
    message, recorder = refused(lambda: NodeClass("default", NodeClassArgs(spec=SPEC)), config=config, preview=True)
    assert "policies/waivers.yaml" in message and "\n" not in message
    assert recorder.resources == {}

    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "waivers.yaml").write_text("waivers: []\n")
    assert pulumi_mocks.run(lambda: NodeClass("default", NodeClassArgs(spec=SPEC)), config=config, preview=True).by_type(EC2NC)
