"""The KarpenterController component under mocks: resources, parents, documents as inputs, order, refusals."""

from __future__ import annotations

import json
import runpy

import pytest
import yaml
from support import fake_reconcile, pulumi_mocks
from support.pulumi_specs import SPEC, SPOT_POOL

from karpenter_gitops.app import stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops_pulumi.controller import KarpenterController, KarpenterControllerArgs
from karpenter_gitops_pulumi.fleet import Fleet, FleetArgs

OIDC = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABCDEF"
BLOCK = {"nodeRoleName": "KarpenterNodeRole-dev", "helm": {"enabled": True, "version": "1.14.1"}}
EC2NC = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


@pytest.fixture(autouse=True)
def fake_aws(monkeypatch):
    monkeypatch.setattr(stack, "reconcile", fake_reconcile.reconcile)
    monkeypatch.setattr(stack, "AwsSession", fake_reconcile.Session)
    monkeypatch.setattr(fake_reconcile, "WORLD", dict(fake_reconcile.WORLD))


def controller(block=None, node_classes=None, node_pools=None, ip_family="ipv4", preview=False):
    def program():
        KarpenterController(
            "karpenter",
            KarpenterControllerArgs(
                cluster_name="dev",
                settings=block if block is not None else BLOCK,
                node_classes=node_classes or {"default": SPEC},
                node_pools=node_pools or {},
            ),
        )

    return pulumi_mocks.run(
        program, preview=preview, recorder=pulumi_mocks.Recorder(preview=preview, cluster_ip_family=ip_family)
    )


def fleet(block=None, **args):
    def program():
        Fleet(
            "dev",
            FleetArgs(
                node_classes={"default": SPEC},
                node_pools={"general": SPOT_POOL},
                cluster={"name": "dev"},
                controller=block if block is not None else BLOCK,
                **args,
            ),
        )

    return pulumi_mocks.run(program)


def policy_of(registration) -> dict:
    return json.loads(registration.inputs["policy"])


def test_every_resource_is_a_child_of_the_component_with_the_expected_type():
    run = controller()
    parent = run.urn("karpenter")
    children = [r for r in run.resources.values() if r.name != "karpenter"]
    assert all(r.parent == parent for r in children)
    counts = {}
    for r in children:
        counts[r.type] = counts.get(r.type, 0) + 1
    assert counts == {
        "aws:iam/role:Role": 2,
        "aws:iam/policy:Policy": 2,  # the v1.14 reference policy passes 6,144 characters even for cluster "dev"
        "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 5,  # worker, ecr, cni + the two controller policies
        "aws:eks/accessEntry:AccessEntry": 1,
        "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
        "aws:sqs/queue:Queue": 1,
        "aws:sqs/queuePolicy:QueuePolicy": 1,
        "aws:cloudwatch/eventRule:EventRule": 5,
        "aws:cloudwatch/eventTarget:EventTarget": 5,
        "kubernetes:helm.sh/v3:Release": 2,
    }
    assert run.resources["karpenter"].type == "karpenter-gitops:index:KarpenterController"


def test_node_role_trusts_ec2_and_has_an_access_entry_of_the_chosen_type():
    run = controller({**BLOCK, "accessEntryType": "EC2_WINDOWS", "createInstanceProfile": True})
    role = run.resources["karpenter-node-role"]
    assert role.inputs["name"] == "KarpenterNodeRole-dev"
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "ec2.amazonaws.com"} and trust["Action"] == ["sts:AssumeRole"]
    entry = run.resources["karpenter-node-access-entry"]
    assert entry.inputs == {"clusterName": "dev", "principalArn": role.outputs["arn"], "type": "EC2_WINDOWS"}
    profile = run.resources["karpenter-instance-profile"]
    assert profile.inputs == {"name": "KarpenterNodeRole-dev", "role": "KarpenterNodeRole-dev"}


def test_ipv6_cluster_gets_the_ipv6_cni_policy_inline():
    run = controller({**BLOCK, "ipFamily": "ipv6"}, ip_family="ipv6")
    attached = {r.inputs["policyArn"] for r in run.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")}
    assert "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy" not in attached
    (inline,) = run.by_type("aws:iam/rolePolicy:RolePolicy")
    assert "ec2:AssignIpv6Addresses" in policy_of(inline)["Statement"][0]["Action"]


def test_ipv6_cluster_with_the_ipv4_cni_policy_is_refused_before_anything_is_created():
    recorder = pulumi_mocks.Recorder(preview=True, cluster_ip_family="ipv6")
    with pytest.raises(InputError, match=r"cluster 'dev' is ipv6 but .*ipFamily is ipv4.*\[controller/cni-ip-family\]"):
        pulumi_mocks.run(
            lambda: KarpenterController("karpenter", KarpenterControllerArgs(cluster_name="dev", settings=BLOCK)),
            preview=True,
            recorder=recorder,
        )
    assert [r.type for r in recorder.resources.values()] == ["karpenter-gitops:index:KarpenterController"]


def test_pass_role_lists_exactly_the_node_roles_the_classes_use():
    classes = {"default": SPEC, "gpu": {**SPEC, "role": "GpuNodeRole"}}
    block = {
        **BLOCK,
        "nodeRoles": {"GpuNodeRole": {"accessEntry": "create"}, "teams/PaymentsRole": {"instanceProfiles": ["PaymentsProfile"]}},
    }
    run = controller(block, node_classes=classes)
    entries = {r.inputs["principalArn"] for r in run.by_type("aws:eks/accessEntry:AccessEntry")}
    assert entries == {run.resources["karpenter-node-role"].outputs["arn"], "arn:aws:iam::123456789012:role/GpuNodeRole"}
    statements = [s for policy in run.by_type("aws:iam/policy:Policy") for s in policy_of(policy)["Statement"]]
    (passing,) = [s for s in statements if s["Sid"] == "AllowPassingInstanceRole"]
    assert passing["Resource"] == [
        "arn:aws:iam::123456789012:role/GpuNodeRole",
        "arn:aws:iam::123456789012:role/KarpenterNodeRole-dev",
        "arn:aws:iam::123456789012:role/teams/PaymentsRole",
    ]


def test_controller_policy_is_split_into_managed_policies_when_too_large():
    classes = {f"c{i}": {**SPEC, "role": f"team-{i:03d}/NodeRole-{i:03d}"} for i in range(60)}
    run = controller(
        {**BLOCK, "nodeRoles": {f"team-{i:03d}/NodeRole-{i:03d}": {"accessEntry": "existing"} for i in range(60)}},
        node_classes=classes,
    )
    policies = sorted(run.by_type("aws:iam/policy:Policy"), key=lambda r: r.name)
    assert len(policies) >= 2
    assert [p.inputs["name"] for p in policies] == [f"Karpenter-dev-controller-{i + 1}" for i in range(len(policies))]
    assert all(len(json.dumps(policy_of(p), separators=(",", ":"))) <= 6144 for p in policies)
    sids = [s["Sid"] for p in policies for s in policy_of(p)["Statement"]]
    assert len(sids) == len(set(sids)) and "AllowPassingInstanceRole" in sids
    attached = {r.inputs["policyArn"] for r in run.by_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")}
    assert {p.outputs["arn"] for p in policies} <= attached


def test_the_controller_policies_carry_the_v1_14_reference_statements_once_each():
    policies = [policy_of(p) for p in run_policies(controller())]
    assert all(len(json.dumps(doc, separators=(",", ":"))) <= 6144 for doc in policies)
    statements = [s for doc in policies for s in doc["Statement"]]
    by_sid = {s["Sid"]: s for s in statements}
    assert len(by_sid) == len(statements)
    assert set(by_sid) == {
        "AllowScopedEC2InstanceAccessActions",
        "AllowScopedEC2LaunchTemplateAccessActions",
        "AllowScopedEC2InstanceActionsWithTags",
        "AllowScopedResourceCreationTagging",
        "AllowScopedResourceTagging",
        "AllowScopedDeletion",
        "AllowRegionalReadActions",
        "AllowSSMReadActions",
        "AllowPricingReadActions",
        "AllowInterruptionQueueActions",
        "AllowPassingInstanceRole",
        "AllowScopedInstanceProfileCreationActions",
        "AllowScopedInstanceProfileTagActions",
        "AllowScopedInstanceProfileActions",
        "AllowInstanceProfileReadActions",
        "AllowUnscopedInstanceProfileListAction",
        "AllowAPIServerEndpointDiscovery",
        "AllowZonalShiftStatusReadOnly",
    }
    listing = by_sid["AllowUnscopedInstanceProfileListAction"]
    assert (listing["Action"], listing["Resource"]) == (["iam:ListInstanceProfiles"], "*")
    assert "arn:aws:ec2:us-west-2:*:placement-group/*" in by_sid["AllowScopedEC2InstanceAccessActions"]["Resource"]
    assert by_sid["AllowScopedResourceCreationTagging"]["Condition"]["StringEquals"]["ec2:CreateAction"] == [
        "RunInstances",
        "CreateFleet",
        "CreateLaunchTemplate",
    ]
    assert by_sid["AllowZonalShiftStatusReadOnly"]["Condition"] == {
        "StringEquals": {"arc-zonal-shift:ResourceIdentifier": "arn:aws:eks:us-west-2:123456789012:cluster/dev"}
    }
    assert by_sid["AllowPassingInstanceRole"]["Resource"] == ["arn:aws:iam::123456789012:role/KarpenterNodeRole-dev"]


def run_policies(run):
    return sorted(run.by_type("aws:iam/policy:Policy"), key=lambda r: r.name)


def test_pod_identity_mode_trusts_the_agent_and_associates_the_service_account():
    run = controller({**BLOCK, "namespace": "karpenter", "serviceAccount": "controller"})
    trust = json.loads(run.resources["karpenter-controller-role"].inputs["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Statement"][0]["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    association = run.resources["karpenter-pod-identity"]
    assert association.inputs == {
        "clusterName": "dev",
        "namespace": "karpenter",
        "serviceAccount": "controller",
        "roleArn": run.resources["karpenter-controller-role"].outputs["arn"],
    }
    assert "annotations" not in run.resources["karpenter-helm"].inputs["values"]["serviceAccount"]


def test_irsa_mode_trusts_the_oidc_provider_and_annotates_the_service_account():
    run = controller({**BLOCK, "identity": "irsa", "oidcProviderArn": OIDC})
    (trust,) = json.loads(run.resources["karpenter-controller-role"].inputs["assumeRolePolicy"])["Statement"]
    issuer = "oidc.eks.us-west-2.amazonaws.com/id/ABCDEF"
    assert trust["Principal"] == {"Federated": OIDC} and trust["Action"] == ["sts:AssumeRoleWithWebIdentity"]
    assert trust["Condition"]["StringEquals"][f"{issuer}:sub"] == "system:serviceaccount:kube-system:karpenter"
    assert trust["Condition"]["StringEquals"][f"{issuer}:aud"] == "sts.amazonaws.com"
    assert not run.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    annotations = run.resources["karpenter-helm"].inputs["values"]["serviceAccount"]["annotations"]
    assert annotations == {"eks.amazonaws.com/role-arn": run.resources["karpenter-controller-role"].outputs["arn"]}


def test_interruption_queue_is_encrypted_tls_only_and_keeps_messages_300_seconds():
    run = controller()
    queue = run.resources["karpenter-interruption-queue"]
    assert queue.inputs["name"] == "Karpenter-dev"
    assert queue.inputs["messageRetentionSeconds"] == 300
    assert queue.inputs["sqsManagedSseEnabled"] is True and "kmsMasterKeyId" not in queue.inputs
    statements = {s["Sid"]: s for s in policy_of(run.resources["karpenter-interruption-queue-policy"])["Statement"]}
    arn = "arn:aws:sqs:us-west-2:123456789012:Karpenter-dev"
    deny = statements["DenyInsecureTransport"]
    assert (deny["Effect"], deny["Condition"], deny["Resource"]) == ("Deny", {"Bool": {"aws:SecureTransport": "false"}}, [arn])
    allow = statements["AllowEventBridgeDelivery"]
    assert allow["Principal"]["Service"] == ["events.amazonaws.com", "sqs.amazonaws.com"]
    assert allow["Action"] == ["sqs:SendMessage"] and allow["Resource"] == [arn]


def test_customer_managed_key_replaces_sqs_managed_encryption():
    key = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    queue = controller({**BLOCK, "interruptionQueue": {"enabled": True, "kmsKeyArn": key}}).resources[
        "karpenter-interruption-queue"
    ]
    assert queue.inputs["kmsMasterKeyId"] == key and "sqsManagedSseEnabled" not in queue.inputs


def test_five_eventbridge_rules_with_their_patterns_each_target_the_queue():
    run = controller()
    patterns = {r.inputs["name"]: json.loads(r.inputs["eventPattern"]) for r in run.by_type("aws:cloudwatch/eventRule:EventRule")}
    assert patterns == {
        "Karpenter-dev-spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
        "Karpenter-dev-rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
        "Karpenter-dev-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
        "Karpenter-dev-health": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
        "Karpenter-dev-capacity-reservation": {
            "source": ["aws.ec2"],
            "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
        },
    }
    queue = run.resources["karpenter-interruption-queue"]
    for target in run.by_type("aws:cloudwatch/eventTarget:EventTarget"):
        assert target.inputs["arn"] == queue.outputs["arn"]
        assert run.urn("karpenter-interruption-queue") in target.dependencies
        assert target.inputs["rule"] in patterns


def test_no_queue_no_rules_and_no_sqs_permission():
    run = controller({**BLOCK, "interruptionQueue": {"enabled": False}})
    assert not run.by_type("aws:sqs/queue:Queue") and not run.by_type("aws:cloudwatch/eventRule:EventRule")
    assert "sqs:ReceiveMessage" not in json.dumps(policy_of(run.by_type("aws:iam/policy:Policy")[0]))
    assert "interruptionQueue" not in run.resources["karpenter-helm"].inputs["values"]["settings"]


def test_helm_release_installs_the_oci_chart_after_the_queue_and_identity():
    run = controller()
    release = run.resources["karpenter-helm"]
    assert release.inputs["chart"] == "oci://public.ecr.aws/karpenter/karpenter"
    assert (release.inputs["version"], release.inputs["namespace"]) == ("1.14.1", "kube-system")
    assert release.inputs["values"]["settings"] == {
        "clusterName": "dev",
        "clusterEndpoint": "https://DEV.gr7.us-west-2.eks.amazonaws.com",
        "interruptionQueue": "Karpenter-dev",
    }
    assert {run.urn("karpenter-interruption-queue"), run.urn("karpenter-pod-identity")} <= set(release.dependencies)


def test_without_helm_no_release():
    assert not controller({"nodeRoleName": "KarpenterNodeRole-dev"}).by_type("kubernetes:helm.sh/v3:Release")


def test_fleet_applies_custom_resources_after_the_release_and_takes_the_role_by_object():
    run = fleet()
    assert run.resources["karpenter"].parent == run.urn("dev")
    (node_class,) = run.by_type(EC2NC)
    (pool,) = run.by_type(NODEPOOL)
    waits = {run.urn("karpenter-helm"), run.urn("karpenter-node-access-entry")}
    assert waits <= set(node_class.dependencies) and waits <= set(pool.dependencies)
    assert run.urn("karpenter-node-role") in node_class.dependencies  # the role came from the resource
    assert node_class.inputs["spec"]["role"] == "KarpenterNodeRole-dev"
    reconciliation_run = run.resources["default-reconciliation"]
    assert run.urn("karpenter-node-role") in reconciliation_run.dependencies
    assert run.urn("karpenter-helm") not in reconciliation_run.dependencies  # it only reads AWS


def test_fleet_wires_a_created_instance_profile_by_object():
    spec = {**SPEC, "role": None, "instanceProfile": "KarpenterNodeProfile"}
    spec.pop("role")

    def program():
        Fleet(
            "dev",
            FleetArgs(
                node_classes={"default": spec},
                cluster={"name": "dev"},
                controller={**BLOCK, "createInstanceProfile": True, "instanceProfileName": "KarpenterNodeProfile"},
            ),
        )

    run = pulumi_mocks.run(program)
    (node_class,) = run.by_type(EC2NC)
    assert node_class.inputs["spec"]["instanceProfile"] == "KarpenterNodeProfile"
    assert run.urn("karpenter-instance-profile") in node_class.dependencies
    assert run.urn("karpenter-instance-profile") in run.resources["default-reconciliation"].dependencies


def test_fleet_without_a_controller_block_builds_none():
    def program():
        Fleet("dev", FleetArgs(node_classes={"default": SPEC}, cluster={"name": "dev"}))

    run = pulumi_mocks.run(program)
    assert "karpenter" not in run.resources and not run.by_type("aws:iam/role:Role")


@pytest.mark.parametrize(
    ("block", "node_classes", "node_pools", "message"),
    [
        (
            {**BLOCK, "interruptionQueue": {"enabled": False}},
            None,
            {"general": SPOT_POOL},
            r"allows spot .*\[controller/spot-interruption-queue\]",
        ),
        (
            BLOCK,
            {"default": {**SPEC, "role": "SomeoneElsesRole"}},
            None,
            r"'SomeoneElsesRole' has no EKS access entry .*\[controller/access-entry\]",
        ),
        (
            BLOCK,
            {"default": {k: v for k, v in SPEC.items() if k != "role"} | {"instanceProfile": "HandMade"}},
            None,
            r"cannot pass the role inside instance profile 'HandMade'.*\[controller/pass-role\]",
        ),
        ({**BLOCK, "runsOnFargate": True}, None, None, r"runs on Fargate.*\[controller/fargate-pod-identity\]"),
        (
            {**BLOCK, "namePrefix": "Karpenter-" + "x" * 50},
            None,
            None,
            r"has \d+ characters; AWS allows 64 \[controller/name-length\]",
        ),
    ],
    ids=["spot-without-queue", "no-access-entry", "unpassable-profile", "pod-identity-on-fargate", "name-too-long"],
)
def test_incoherent_stacks_fail_in_preview_and_create_nothing(block, node_classes, node_pools, message):
    recorder = pulumi_mocks.Recorder(preview=True)
    with pytest.raises(InputError, match=message):
        pulumi_mocks.run(
            lambda: KarpenterController(
                "karpenter",
                KarpenterControllerArgs(
                    cluster_name="dev",
                    settings=block,
                    node_classes=node_classes or {"default": SPEC},
                    node_pools=node_pools or {},
                ),
            ),
            preview=True,
            recorder=recorder,
        )
    assert [r.type for r in recorder.resources.values()] == ["karpenter-gitops:index:KarpenterController"]


def test_the_dev_stack_program_builds_the_controller_with_the_fleet(project):
    settings = yaml.safe_load((project / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    config = {k: v if isinstance(v, str) else json.dumps(v) for k, v in settings.items()}
    run = pulumi_mocks.run(lambda: runpy.run_path(str(project / "__main__.py")), config=config)
    assert run.resources["karpenter"].parent == run.urn("dev")
    assert run.resources["karpenter-interruption-queue"].inputs["name"] == "Karpenter-dev"
    statements = [s for p in run.by_type("aws:iam/policy:Policy") for s in json.loads(p.inputs["policy"])["Statement"]]
    assert {s["Sid"]: s for s in statements}["AllowSSMReadActions"]["Resource"] == [
        "arn:aws:ssm:eu-west-1::parameter/aws/service/*"
    ]
    for cr in run.by_type(EC2NC) + run.by_type(NODEPOOL):
        assert run.urn("karpenter-helm") in cr.dependencies


def test_crds_come_from_their_own_chart_before_the_controller_so_upgrades_upgrade_them():
    run = fleet()
    crds, release = run.resources["karpenter-crds"], run.resources["karpenter-helm"]
    assert (crds.inputs["chart"], crds.inputs["name"]) == ("oci://public.ecr.aws/karpenter/karpenter-crd", "karpenter-crd")
    assert crds.inputs["version"] == release.inputs["version"] and crds.inputs["namespace"] == release.inputs["namespace"]
    assert release.inputs["skipCrds"] is True  # the controller chart's crds/ would be installed once, never upgraded
    assert run.urn("karpenter-crds") in release.dependencies
    for custom_resource in (*run.by_type(EC2NC), *run.by_type(NODEPOOL)):
        assert run.urn("karpenter-helm") in custom_resource.dependencies  # and so after the CRDs
