"""The controller coherence rules on whole stacks: offline from a stack file, and in the policy pack's
``karpenter-iam-coherence`` stack policy on the resources a stack really creates."""

from __future__ import annotations

import json

import pytest
import yaml
from pulumi.runtime.rpc import UNKNOWN
from pulumi_policy import StackValidationPolicy
from support.plan_objects import node_class
from support.policy_calls import NC_URN, NP_URN, POLICIES, node_pool, resource, validate_stack

from karpenter_gitops.controller import iam
from karpenter_gitops.core.inputs import CONTROLLER_KIND
from karpenter_gitops.judge import validate
from karpenter_gitops.load import controller_settings as controller_block
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.rules import controller as controller_rules
from karpenter_gitops_policies import pack

ACCOUNT = iam.Account.from_cluster_arn("arn:aws:eks:us-west-2:123456789012:cluster/demo")
SPOT = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]


@pytest.fixture(autouse=True)
def no_waivers(tmp_path, monkeypatch):
    (tmp_path / "no-waivers.yaml").write_text("waivers: []\n")
    monkeypatch.setenv(pack.WAIVER_FILE_ENV, str(tmp_path / "no-waivers.yaml"))


# --- offline: a stack file ------------------------------------------------------------------


def stack(controller_block, node_classes=None, node_pools=None):
    """Findings of `validate` on a stack with this controller block."""
    config = {
        "karpenter-gitops:cluster": {"name": "demo", "karpenterVersion": "1.14"},
        "karpenter-gitops:controller": controller_block,
        "karpenter-gitops:nodeClasses": node_classes or {"default": node_class()["spec"]},
        "karpenter-gitops:nodePools": node_pools or {"general": node_pool()["spec"]},
    }
    report = validate(load_documents([("Pulumi.demo.yaml", [{"config": config}])], (1, 14)), (1, 14))
    return [(f.rule, f.kind, f.name, f.path) for f in report.findings if f.rule.startswith("controller/")]


OWN = {"nodeRoleName": "KarpenterNodeRole-demo"}


def test_a_coherent_stack_has_no_controller_findings():
    spot_pool = node_pool()["spec"] | {"template": {"spec": {**node_pool()["spec"]["template"]["spec"], "requirements": SPOT}}}
    classes = {
        "default": node_class()["spec"],
        "payments": {**{k: v for k, v in node_class()["spec"].items() if k != "role"}, "instanceProfile": "PayProfile"},
    }
    block = {**OWN, "nodeRoles": {"PaymentsRole": {"instanceProfiles": ["PayProfile"], "accessEntry": "existing"}}}
    assert stack(block, classes, {"general": spot_pool}) == []


def test_each_incoherence_is_a_finding_on_the_object_or_the_block():
    spot_pool = node_pool()["spec"] | {"template": {"spec": {**node_pool()["spec"]["template"]["spec"], "requirements": SPOT}}}
    classes = {
        "default": node_class()["spec"],
        "payments": {**{k: v for k, v in node_class()["spec"].items() if k != "role"}, "instanceProfile": "PayProfile"},
        "other": {**node_class()["spec"], "role": "OtherRole"},
    }
    block = {**OWN, "interruptionQueue": {"enabled": False}, "runsOnFargate": True, "namePrefix": "K" * 60}
    assert sorted(stack(block, classes, {"general": spot_pool})) == sorted(
        [
            (controller_rules.PASS_ROLE, "EC2NodeClass", "payments", "spec.instanceProfile"),
            (controller_rules.ACCESS_ENTRY, "EC2NodeClass", "other", "spec.role"),
            (controller_rules.SPOT_QUEUE, "NodePool", "general", "spec.template.spec.requirements"),
            (controller_rules.FARGATE_POD_IDENTITY, CONTROLLER_KIND, "controller", "karpenter-gitops:controller.identity"),
            (
                controller_rules.NAME_LENGTH,
                CONTROLLER_KIND,
                "controller",
                "karpenter-gitops:controller.namePrefix",
            ),  # the role; no queue
        ]
    )


def test_the_project_stacks_are_coherent(project):
    for name in ("demo", "dev"):
        inputs = load_documents([(name, [yaml.safe_load((project / "stacks" / f"Pulumi.{name}.yaml").read_text())])])
        assert inputs.controller is not None
        assert [f for f in validate(inputs).findings if f.rule.startswith("controller/")] == []


def test_controller_rules_are_stack_policies_over_the_resources_the_stack_creates():
    coherence_policies = {name for name in POLICIES if name.startswith("controller-")}
    assert coherence_policies == {pack.policy_name(rule_id) for rule_id in pack.COHERENCE}
    assert all(isinstance(POLICIES[name], StackValidationPolicy) for name in coherence_policies)


# --- the policy pack on created resources ---------------------------------------------------

POLICY_URN = "urn:pulumi:dev::infra::aws:iam/policy:Policy::karpenter-controller-policy-1"
ROLE_URN = "urn:pulumi:dev::infra::aws:iam/role:Role::karpenter-node-role"
ENTRY_URN = "urn:pulumi:dev::infra::aws:eks/accessEntry:AccessEntry::karpenter-node-access-entry"
EC2_TRUST = json.dumps(iam.node_role_trust())


def controller_policy(roles=("KarpenterNodeRole-demo",), queue=True):
    settings = controller_block.parse({**OWN, "interruptionQueue": {"enabled": queue}}, "test", "demo")
    doc = iam.document(iam.controller_statements(settings, ACCOUNT, list(roles)))
    return resource("aws:iam/policy:Policy", POLICY_URN, {"name": "Karpenter-demo-controller-1", "policy": json.dumps(doc)})


def node_role(name="KarpenterNodeRole-demo"):
    return resource(
        pack.ROLE_TYPE, ROLE_URN, {"name": name, "assumeRolePolicy": EC2_TRUST, "arn": f"arn:aws:iam::123456789012:role/{name}"}
    )


def access_entry(role="KarpenterNodeRole-demo"):
    return resource(
        pack.ACCESS_ENTRY_TYPE,
        ENTRY_URN,
        {"clusterName": "demo", "type": "EC2_LINUX", "principalArn": f"arn:aws:iam::123456789012:role/{role}"},
    )


def coherence(*resources):
    """Violations of every coherence policy (and the live rule a profile without its role breaks)."""
    names = sorted({pack.policy_name(rule_id) for rule_id in pack.COHERENCE} | {"live-instance-profile-without-role"})
    return [violation for name in names for violation in validate_stack(name, list(resources))]


def test_pack_passes_a_stack_whose_controller_fits_its_classes():
    assert coherence(controller_policy(), node_role(), access_entry(), resource(pack.NODECLASS_TYPE, NC_URN, node_class())) == []


def test_pack_reports_a_node_class_role_the_controller_cannot_pass():
    other = resource(pack.NODECLASS_TYPE, NC_URN, node_class(role="AdminRole"))
    ((message, urn),) = coherence(controller_policy(), node_role(), access_entry(), other)
    assert urn == NC_URN and "iam:PassRole on 'AdminRole'" in message and "[controller/pass-role]" in message


def test_pack_follows_an_instance_profile_in_the_stack_to_its_role():
    profile = resource(
        pack.INSTANCE_PROFILE_TYPE,
        "urn:pulumi:dev::infra::aws:iam/instanceProfile:InstanceProfile::p",
        {"name": "GpuProfile", "role": "GpuRole"},
    )
    gpu = resource(pack.NODECLASS_TYPE, NC_URN, node_class(role=None, instanceProfile="GpuProfile"))
    ((message, _),) = coherence(controller_policy(), profile, gpu)
    assert "'GpuRole'" in message and "[controller/pass-role]" in message
    assert coherence(controller_policy(roles=("GpuRole",)), profile, gpu) == []


def test_pack_wants_an_access_entry_for_a_node_role_the_stack_creates():
    ((message, urn),) = coherence(controller_policy(), node_role(), resource(pack.NODECLASS_TYPE, NC_URN, node_class()))
    assert urn == ROLE_URN and "[controller/access-entry]" in message


def test_a_value_pending_in_a_preview_silences_only_the_check_that_needs_it():
    """In a preview of a new stack the entry's principal (a role ARN) is unknown: no access-entry verdict
    either way, while the pass-role check, whose grants are known, still runs."""
    pending_entry = resource(
        pack.ACCESS_ENTRY_TYPE, ENTRY_URN, {"clusterName": "demo", "type": "EC2_LINUX", "principalArn": UNKNOWN}
    )
    assert coherence(controller_policy(), node_role(), pending_entry, resource(pack.NODECLASS_TYPE, NC_URN, node_class())) == []
    other = resource(pack.NODECLASS_TYPE, NC_URN, node_class(role="AdminRole"))
    ((message, urn),) = coherence(controller_policy(), node_role(), pending_entry, other)
    assert urn == NC_URN and "[controller/pass-role]" in message
    pending_grants = resource("aws:iam/policy:Policy", POLICY_URN, {"name": "Karpenter-demo-controller-1", "policy": UNKNOWN})
    assert coherence(pending_grants, controller_policy(), node_role(), access_entry(), other) == []
    pending_role = resource(
        pack.INSTANCE_PROFILE_TYPE,
        "urn:pulumi:dev::infra::aws:iam/instanceProfile:InstanceProfile::p",
        {"name": "GpuProfile", "role": UNKNOWN},
    )
    gpu = resource(pack.NODECLASS_TYPE, NC_URN, node_class(role=None, instanceProfile="GpuProfile"))
    assert coherence(controller_policy(), pending_role, gpu) == []  # not "holds no role"


def test_pack_leaves_stacks_without_the_controller_iam_alone():
    assert coherence(node_role(), resource(pack.NODECLASS_TYPE, NC_URN, node_class(role="AdminRole"))) == []


def test_pack_wants_the_queue_for_spot_pools():
    pool = node_pool()
    pool["spec"]["template"]["spec"]["requirements"] = SPOT
    classes = [node_role(), access_entry(), resource(pack.NODECLASS_TYPE, NC_URN, node_class())]
    ((message, urn),) = coherence(controller_policy(queue=False), *classes, resource(pack.NODEPOOL_TYPE, NP_URN, pool))
    assert urn == NP_URN and "[controller/spot-interruption-queue]" in message
    assert coherence(controller_policy(queue=True), *classes, resource(pack.NODEPOOL_TYPE, NP_URN, pool)) == []


QUEUE_URN = "urn:pulumi:dev::infra::aws:sqs/queue:Queue::karpenter-interruption-queue"
KEY_ARN = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"


@pytest.mark.parametrize("lets_eventbridge_in", [True, False])
def test_pack_checks_the_queue_key_policy_when_the_key_is_in_the_stack(lets_eventbridge_in):
    root = {
        "Sid": "Root",
        "Effect": "Allow",
        "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
        "Action": "kms:*",
        "Resource": "*",
    }
    events = {
        "Sid": "EventBridge",
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
        "Resource": "*",
    }
    key_policy = iam.document([root, events] if lets_eventbridge_in else [root])
    key = resource(
        "aws:kms/key:Key", "urn:pulumi:dev::infra::aws:kms/key:Key::queue", {"arn": KEY_ARN, "policy": json.dumps(key_policy)}
    )
    queue = resource(pack.QUEUE_TYPE, QUEUE_URN, {"name": "Karpenter-demo", "kmsMasterKeyId": KEY_ARN})
    violations = coherence(key, queue)
    if lets_eventbridge_in:
        assert violations == []
    else:
        ((message, urn),) = violations
        assert urn == QUEUE_URN and "[controller/queue-kms-eventbridge]" in message and "kms:Decrypt" in message


def test_pack_cannot_judge_a_key_outside_the_stack():
    assert coherence(resource(pack.QUEUE_TYPE, QUEUE_URN, {"name": "q", "kmsMasterKeyId": KEY_ARN})) == []


ASSOCIATION_URN = "urn:pulumi:dev::infra::aws:eks/podIdentityAssociation:PodIdentityAssociation::karpenter-pod-identity"


@pytest.mark.parametrize(("selected", "violations"), [("kube-system", 1), ("apps", 0)])
def test_pack_reports_pod_identity_for_pods_a_fargate_profile_takes(selected, violations):
    association = resource(
        pack.POD_IDENTITY_TYPE,
        ASSOCIATION_URN,
        {"clusterName": "demo", "namespace": "kube-system", "serviceAccount": "karpenter"},
    )
    fargate = resource(
        pack.FARGATE_PROFILE_TYPE,
        "urn:pulumi:dev::infra::aws:eks/fargateProfile:FargateProfile::system",
        {"clusterName": "demo", "fargateProfileName": "system", "selectors": [{"namespace": selected}]},
    )
    found = coherence(association, fargate)
    assert len(found) == violations
    if found:
        assert found[0][1] == ASSOCIATION_URN and "[controller/fargate-pod-identity]" in found[0][0]
