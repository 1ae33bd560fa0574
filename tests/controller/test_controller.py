"""The engine-free controller core: the block parsed strictly, names within AWS limits, IAM documents as data."""

from __future__ import annotations

import json

import pytest

from karpenter_gitops.controller import coherence, iam
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import POD_IDENTITY, ControllerSettings
from karpenter_gitops.load import controller_settings as controller_block

OIDC = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABCDEF"
ACCOUNT = iam.Account.from_cluster_arn("arn:aws:eks:eu-west-1:123456789012:cluster/dev")


def settings(cluster: str = "dev", **block) -> ControllerSettings:
    return controller_block.parse(block, "Pulumi.dev.yaml", cluster)


# --- parsing --------------------------------------------------------------------------------


def test_defaults_derive_names_from_the_cluster():
    parsed = settings()
    assert parsed.identity == POD_IDENTITY
    assert (parsed.namespace, parsed.service_account) == ("kube-system", "karpenter")
    assert parsed.node_role_name == "Karpenter-dev-node"
    assert parsed.instance_profile_name is None and parsed.helm_version is None
    assert parsed.interruption_queue and parsed.kms_key_arn is None
    given = iam.names(parsed)
    assert given.queue == "Karpenter-dev" and given.controller_role == "Karpenter-dev-controller"
    assert set(given.rules.values()) == {f"Karpenter-dev-{e}" for e in iam.INTERRUPTION_EVENTS}


def test_created_instance_profile_is_named_after_the_node_role_unless_named():
    assert settings(createInstanceProfile=True).instance_profile_name == "Karpenter-dev-node"
    named = settings(createInstanceProfile=True, instanceProfileName="Nodes")
    assert named.instance_profile_name == "Nodes" and named.role_of_profile("Nodes") == "Karpenter-dev-node"


@pytest.mark.parametrize(
    ("block", "message", "hint"),
    [
        ({"identty": "irsa"}, "unknown field 'karpenter-gitops:controller.identty'", "did you mean 'identity'?"),
        ({"interruptionQueue": {"enabeld": True}}, "interruptionQueue.enabeld", "did you mean 'enabled'?"),
        ({"helm": {"enabled": True, "verison": "1.14.1"}}, "helm.verison", "did you mean 'version'?"),
        ({"nodeRoles": {"R": {"accesEntry": "create"}}}, "nodeRoles.R.accesEntry", "did you mean 'accessEntry'?"),
        ({"identity": "kiam"}, "expected podIdentity or irsa", None),
        ({"createInstanceProfile": "yes"}, "expected true or false", None),
        ({"ipFamily": "IPv6"}, "expected ipv4 or ipv6", None),
        ({"accessEntryType": "FARGATE_LINUX"}, "expected EC2_LINUX or EC2_WINDOWS", None),
        ({"namePrefix": "has space"}, "letters, digits", None),
        ({"identity": "irsa"}, "no oidcProviderArn", "podIdentity"),
        ({"oidcProviderArn": OIDC}, "only used with identity: irsa", None),
        ({"identity": "irsa", "oidcProviderArn": "oidc.eks.eu-west-1.amazonaws.com/id/X"}, "IAM OIDC provider ARN", None),
        ({"helm": {"enabled": True}}, "helm.version' is required", None),
        ({"instanceProfileName": "P"}, "is not created", "createInstanceProfile"),
        ({"interruptionQueue": {"kmsKeyArn": "alias/karpenter"}}, "a KMS key or alias ARN", None),
        ([], "must be a mapping", None),
    ],
)
def test_bad_blocks_are_input_errors_with_a_hint(block, message, hint):
    with pytest.raises(InputError) as raised:
        controller_block.parse(block, "Pulumi.dev.yaml", "dev")
    assert message in str(raised.value)
    if hint:
        assert hint in str(raised.value)


def test_a_block_needs_the_cluster_name():
    with pytest.raises(InputError, match=r"cluster\.name"):
        controller_block.parse({}, "Pulumi.dev.yaml", None)


# --- names ----------------------------------------------------------------------------------


def test_names_over_aws_limits_are_refused_not_truncated():
    cluster = "c" * 50  # rule names: "Karpenter-" + 50 + "-spot-interruption" = 78 > 64
    problems = iam.name_problems(settings(cluster))
    messages = " ".join(p.message for p in problems)
    assert "rule name 'Karpenter-" + cluster + "-spot-interruption' has 78 characters; AWS allows 64" in messages
    assert "role name" in messages  # Karpenter-<50>-controller is 71
    assert "queue name" not in messages  # 60 fits 80
    assert {p.path for p in problems} == {"karpenter-gitops:controller.namePrefix", "karpenter-gitops:controller.nodeRoleName"}
    assert iam.name_problems(settings(cluster, namePrefix="kp", nodeRoleName="KarpenterNode")) == []


def test_the_longest_name_fits_exactly_at_the_limit():
    prefix = "p" * (64 - len("-capacity-reservation"))  # the longest rule-name suffix
    assert iam.name_problems(settings(namePrefix=prefix, nodeRoleName="Nodes")) == []
    assert iam.name_problems(settings(namePrefix=prefix + "p", nodeRoleName="Nodes"))


# --- documents ------------------------------------------------------------------------------


def _statement(doc_or_statements, sid):
    statements = doc_or_statements["Statement"] if isinstance(doc_or_statements, dict) else doc_or_statements
    return next(s for s in statements if s["Sid"] == sid)


def test_pod_identity_trust_lets_the_agent_assume_and_tag():
    (trust,) = iam.controller_trust(settings())["Statement"]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert "Resource" not in trust


def test_irsa_trust_is_scoped_to_the_service_account_and_sts_audience():
    (trust,) = iam.controller_trust(settings(identity="irsa", oidcProviderArn=OIDC, namespace="karpenter"))["Statement"]
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/ABCDEF"
    assert trust["Principal"] == {"Federated": OIDC}
    assert trust["Action"] == ["sts:AssumeRoleWithWebIdentity"]
    assert trust["Condition"] == {
        "StringEquals": {
            f"{issuer}:sub": "system:serviceaccount:karpenter:karpenter",
            f"{issuer}:aud": "sts.amazonaws.com",
        }
    }


def test_node_policies_follow_ip_family_ecr_choice_and_ssm():
    ipv4 = iam.node_managed_policies(settings(), "aws")
    assert ipv4 == {
        "worker": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "ecr": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "cni": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    }
    ipv6 = iam.node_managed_policies(settings(ipFamily="ipv6", ecrPolicy="readOnly", ssmManagedInstanceCore=True), "aws-cn")
    assert "cni" not in ipv6
    assert ipv6["ecr"] == "arn:aws-cn:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
    assert ipv6["ssm"] == "arn:aws-cn:iam::aws:policy/AmazonSSMManagedInstanceCore"
    assign = _statement(iam.ipv6_cni_policy("aws"), "AssignIPv6")
    assert "ec2:AssignIpv6Addresses" in assign["Action"]


def test_controller_policy_is_scoped_to_the_cluster_region_and_node_roles():
    statements = iam.controller_statements(settings(), ACCOUNT, ["Karpenter-dev-node", "teams/Payments"])
    passing = _statement(statements, "AllowPassingInstanceRole")
    assert passing["Resource"] == [
        "arn:aws:iam::123456789012:role/Karpenter-dev-node",
        "arn:aws:iam::123456789012:role/teams/Payments",
    ]
    # upstream (v1.14) lets the role go to EC2 in the commercial and the China partitions
    assert passing["Condition"] == {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}}
    launch = _statement(statements, "AllowScopedEC2InstanceActionsWithTags")
    assert launch["Condition"]["StringEquals"]["aws:RequestTag/kubernetes.io/cluster/dev"] == "owned"
    assert all(r.startswith("arn:aws:ec2:eu-west-1:*:") for r in launch["Resource"])
    access = _statement(statements, "AllowScopedEC2InstanceAccessActions")
    assert "arn:aws:ec2:eu-west-1::image/*" in access["Resource"]
    deletion = _statement(statements, "AllowScopedDeletion")
    assert deletion["Condition"]["StringEquals"] == {"aws:ResourceTag/kubernetes.io/cluster/dev": "owned"}
    ssm = _statement(statements, "AllowSSMReadActions")
    assert ssm["Action"] == ["ssm:GetParameter"] and ssm["Resource"] == ["arn:aws:ssm:eu-west-1::parameter/aws/service/*"]
    assert _statement(statements, "AllowRegionalReadActions")["Condition"] == {
        "StringEquals": {"aws:RequestedRegion": "eu-west-1"}
    }
    profiles = _statement(statements, "AllowScopedInstanceProfileActions")["Resource"]
    assert profiles == [
        "arn:aws:iam::123456789012:instance-profile/dev_*",
        "arn:aws:iam::123456789012:instance-profile/karpenter/eu-west-1/dev/*",
    ]
    assert _statement(statements, "AllowAPIServerEndpointDiscovery")["Resource"] == [
        "arn:aws:eks:eu-west-1:123456789012:cluster/dev"
    ]
    queue = _statement(statements, "AllowInterruptionQueueActions")
    assert queue["Resource"] == ["arn:aws:sqs:eu-west-1:123456789012:Karpenter-dev"]
    assert "pricing:GetProducts" in _statement(statements, "AllowPricingReadActions")["Action"]


# Karpenter v1.14's reference controller policy (aws/karpenter-provider-aws,
# website/content/en/v1.14/getting-started/getting-started-with-karpenter/cloudformation.yaml), statement by
# statement: actions, and condition keys by operator, for cluster "dev" in eu-west-1.
OWNED = {"aws:ResourceTag/kubernetes.io/cluster/dev": "owned"}
REQUESTED = {"aws:RequestTag/kubernetes.io/cluster/dev": "owned", "aws:RequestTag/eks:eks-cluster-name": "dev"}
IN_REGION = "eu-west-1"
UPSTREAM_V1_14 = {
    "AllowScopedEC2InstanceAccessActions": (["ec2:RunInstances", "ec2:CreateFleet"], None),
    "AllowScopedEC2LaunchTemplateAccessActions": (
        ["ec2:RunInstances", "ec2:CreateFleet"],
        {"StringEquals": OWNED, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
    ),
    "AllowScopedEC2InstanceActionsWithTags": (
        ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
        {"StringEquals": REQUESTED, "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"}},
    ),
    "AllowScopedResourceCreationTagging": (
        ["ec2:CreateTags"],
        {
            "StringEquals": {**REQUESTED, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
            "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
        },
    ),
    "AllowScopedResourceTagging": (
        ["ec2:CreateTags"],
        {
            "StringEquals": OWNED,
            "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"},
            "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": "dev"},
            "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]},
        },
    ),
    "AllowScopedDeletion": (
        ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
        {"StringEquals": OWNED, "StringLike": {"aws:ResourceTag/karpenter.sh/nodepool": "*"}},
    ),
    "AllowPassingInstanceRole": (
        ["iam:PassRole"],
        {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}},
    ),
    "AllowScopedInstanceProfileCreationActions": (
        ["iam:CreateInstanceProfile"],
        {
            "StringEquals": {**REQUESTED, "aws:RequestTag/topology.kubernetes.io/region": IN_REGION},
            "StringLike": {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"},
        },
    ),
    "AllowScopedInstanceProfileTagActions": (
        ["iam:TagInstanceProfile"],
        {
            "StringEquals": {
                **OWNED,
                "aws:ResourceTag/topology.kubernetes.io/region": IN_REGION,
                **REQUESTED,
                "aws:RequestTag/topology.kubernetes.io/region": IN_REGION,
            },
            "StringLike": {
                "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*",
                "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*",
            },
        },
    ),
    "AllowScopedInstanceProfileActions": (
        ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
        {
            "StringEquals": {**OWNED, "aws:ResourceTag/topology.kubernetes.io/region": IN_REGION},
            "StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"},
        },
    ),
    "AllowAPIServerEndpointDiscovery": (["eks:DescribeCluster"], None),
    "AllowInterruptionQueueActions": (["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], None),
    "AllowZonalShiftStatusReadOnly": (
        ["arc-zonal-shift:GetManagedResource"],
        {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": "arn:aws:eks:eu-west-1:123456789012:cluster/dev"}},
    ),
    "AllowRegionalReadActions": (
        [
            "ec2:DescribeCapacityReservations",
            "ec2:DescribeImages",
            "ec2:DescribeInstances",
            "ec2:DescribeInstanceStatus",
            "ec2:DescribeInstanceTypeOfferings",
            "ec2:DescribeInstanceTypes",
            "ec2:DescribeLaunchTemplates",
            "ec2:DescribePlacementGroups",
            "ec2:DescribeSecurityGroups",
            "ec2:DescribeSpotPriceHistory",
            "ec2:DescribeSubnets",
        ],
        {"StringEquals": {"aws:RequestedRegion": IN_REGION}},
    ),
    "AllowSSMReadActions": (["ssm:GetParameter"], None),
    "AllowPricingReadActions": (["pricing:GetProducts"], None),
    "AllowUnscopedInstanceProfileListAction": (["iam:ListInstanceProfiles"], None),
    "AllowInstanceProfileReadActions": (["iam:GetInstanceProfile"], None),
}


def test_controller_policy_has_upstreams_statements_actions_and_conditions():
    doc = iam.document(iam.controller_statements(settings(), ACCOUNT, ["Karpenter-dev-node"]))
    statements = {s["Sid"]: s for s in doc["Statement"]}
    assert set(statements) == set(UPSTREAM_V1_14)
    for sid, (actions, condition) in UPSTREAM_V1_14.items():
        assert statements[sid]["Effect"] == "Allow", sid
        assert sorted(statements[sid]["Action"]) == sorted(actions), sid
        assert statements[sid].get("Condition") == condition, sid


def test_controller_policy_resources_are_upstreams_or_narrower():
    statements = {s["Sid"]: s for s in iam.controller_statements(settings(), ACCOUNT, ["Karpenter-dev-node"])}
    ec2 = "arn:aws:ec2:eu-west-1:*:"
    assert statements["AllowScopedEC2InstanceAccessActions"]["Resource"] == [
        "arn:aws:ec2:eu-west-1::image/*",
        "arn:aws:ec2:eu-west-1::snapshot/*",
        f"{ec2}security-group/*",
        f"{ec2}subnet/*",
        f"{ec2}capacity-reservation/*",
        f"{ec2}placement-group/*",
    ]
    assert statements["AllowScopedEC2LaunchTemplateAccessActions"]["Resource"] == [f"{ec2}launch-template/*"]
    created = [
        f"{ec2}{r}/*" for r in ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")
    ]
    assert statements["AllowScopedEC2InstanceActionsWithTags"]["Resource"] == created
    assert statements["AllowScopedResourceCreationTagging"]["Resource"] == created
    assert statements["AllowScopedResourceTagging"]["Resource"] == [f"{ec2}instance/*"]
    assert statements["AllowScopedDeletion"]["Resource"] == [f"{ec2}instance/*", f"{ec2}launch-template/*"]
    # unscoped where upstream is, and only there
    unscoped = {sid for sid, s in statements.items() if s["Resource"] == "*"}
    assert unscoped == {
        "AllowRegionalReadActions",
        "AllowPricingReadActions",
        "AllowUnscopedInstanceProfileListAction",
        "AllowZonalShiftStatusReadOnly",
    }
    # instance profiles: narrower than upstream's instance-profile/*, to the names (v1.0+) and paths (v1.7+) Karpenter uses
    for sid in (
        "AllowScopedInstanceProfileCreationActions",
        "AllowScopedInstanceProfileTagActions",
        "AllowScopedInstanceProfileActions",
    ):
        assert statements[sid]["Resource"] == [
            "arn:aws:iam::123456789012:instance-profile/dev_*",
            "arn:aws:iam::123456789012:instance-profile/karpenter/eu-west-1/dev/*",
        ], sid
    assert statements["AllowInstanceProfileReadActions"]["Resource"] == ["arn:aws:iam::123456789012:instance-profile/*"]


def test_instance_profile_listing_is_granted_on_star_by_itself():
    doc = iam.document(iam.controller_statements(settings(), ACCOUNT, ["Karpenter-dev-node"]))
    # IAM authorizes ListInstanceProfiles outside the instance-profile ARNs the other statements name
    assert iam.allowed_resources(doc, "iam:ListInstanceProfiles") == ["*"]
    assert iam.allowed_resources(doc, "iam:GetInstanceProfile") == ["arn:aws:iam::123456789012:instance-profile/*"]
    assert (
        "ec2:DescribeAvailabilityZones" not in _statement(doc, "AllowRegionalReadActions")["Action"]
    )  # dropped upstream in v1.1


def test_partition_and_region_come_from_the_cluster():
    china = iam.Account.from_cluster_arn("arn:aws-cn:eks:cn-north-1:123456789012:cluster/dev")
    statements = {s["Sid"]: s for s in iam.controller_statements(settings(), china, ["Karpenter-dev-node"])}
    assert statements["AllowSSMReadActions"]["Resource"] == ["arn:aws-cn:ssm:cn-north-1::parameter/aws/service/*"]
    assert statements["AllowPassingInstanceRole"]["Resource"] == ["arn:aws-cn:iam::123456789012:role/Karpenter-dev-node"]
    assert statements["AllowZonalShiftStatusReadOnly"]["Condition"]["StringEquals"] == {
        "arc-zonal-shift:ResourceIdentifier": "arn:aws-cn:eks:cn-north-1:123456789012:cluster/dev"
    }
    assert statements["AllowRegionalReadActions"]["Condition"] == {"StringEquals": {"aws:RequestedRegion": "cn-north-1"}}


def test_without_the_queue_the_controller_gets_no_sqs_access():
    statements = iam.controller_statements(settings(interruptionQueue={"enabled": False}), ACCOUNT, ["R"])
    assert not any(s["Sid"] == "AllowInterruptionQueueActions" for s in statements)


def test_pass_roles_are_the_node_role_the_class_roles_and_the_declared_ones():
    parsed = settings(nodeRoles={"Payments": {"instanceProfiles": ["PayProfile"]}})
    assert iam.pass_roles(parsed, ["Gpu", "Gpu"]) == ("Gpu", "Karpenter-dev-node", "Payments")


def test_one_document_when_it_fits():
    statements = iam.controller_statements(settings(interruptionQueue={"enabled": False}), ACCOUNT, ["Karpenter-dev-node"])
    (doc,) = iam.split_documents(statements)
    assert iam.policy_size(doc) <= iam.MANAGED_POLICY_LIMIT
    assert doc["Statement"] == statements
    (exact,) = iam.split_documents(statements, limit=iam.policy_size(doc))  # the limit itself still fits
    assert exact == doc


def test_the_full_reference_policy_takes_two_managed_policies_even_for_a_short_cluster_name():
    # v1.14's statements (placement groups, zonal shift, the unscoped list) pass 6,144 characters with one node role
    statements = iam.controller_statements(settings(), ACCOUNT, ["Karpenter-dev-node"])
    assert iam.policy_size(iam.document(statements)) > iam.MANAGED_POLICY_LIMIT
    docs = iam.split_documents(statements)
    assert len(docs) == 2 and all(iam.policy_size(d) <= iam.MANAGED_POLICY_LIMIT for d in docs)
    assert [s for d in docs for s in d["Statement"]] == statements


def test_documents_split_at_the_managed_policy_limit_without_losing_a_statement():
    roles = [f"team-{i:03d}/NodeRole-{i:03d}" for i in range(60)]
    statements = iam.controller_statements(settings(), ACCOUNT, roles)
    assert iam.policy_size(iam.document(statements)) > iam.MANAGED_POLICY_LIMIT
    docs = iam.split_documents(statements)
    assert len(docs) >= 2
    assert all(iam.policy_size(d) <= iam.MANAGED_POLICY_LIMIT for d in docs)
    assert [s for d in docs for s in d["Statement"]] == statements  # same statements, same order


def test_size_is_counted_without_whitespace():
    doc = iam.document([iam.statement("A", ["s3:GetObject"], "*")])
    assert iam.policy_size(doc) == len(
        '{"Version":"2012-10-17","Statement":[{"Sid":"A","Effect":"Allow","Action":["s3:GetObject"],"Resource":"*"}]}'
    )


def test_a_statement_too_big_for_any_document_is_an_error():
    huge = iam.statement("Huge", ["iam:PassRole"], [f"arn:aws:iam::123456789012:role/r{i:04d}" for i in range(300)])
    with pytest.raises(ValueError, match="'Huge' alone exceeds 6144"):
        iam.split_documents([huge])


def test_queue_policy_denies_plain_http_and_lets_eventbridge_send():
    arn = "arn:aws:sqs:eu-west-1:123456789012:Karpenter-dev"
    policy = iam.queue_policy(arn)
    allow = _statement(policy, "AllowEventBridgeDelivery")
    assert allow["Effect"] == "Allow" and allow["Action"] == ["sqs:SendMessage"] and allow["Resource"] == [arn]
    assert allow["Principal"] == {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}
    deny = _statement(policy, "DenyInsecureTransport")
    assert deny["Effect"] == "Deny" and deny["Principal"] == "*" and deny["Action"] == ["sqs:*"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_helm_values_name_the_cluster_queue_and_irsa_role():
    values = iam.helm_values(settings(identity="irsa", oidcProviderArn=OIDC), "https://api", "arn:role")
    assert values["settings"] == {"clusterName": "dev", "clusterEndpoint": "https://api", "interruptionQueue": "Karpenter-dev"}
    assert values["serviceAccount"] == {"name": "karpenter", "annotations": {"eks.amazonaws.com/role-arn": "arn:role"}}
    plain = iam.helm_values(settings(interruptionQueue={"enabled": False}), "https://api", "arn:role")
    assert "interruptionQueue" not in plain["settings"] and "annotations" not in plain["serviceAccount"]


def test_helm_values_run_the_release_with_the_gates_the_stack_declares():
    gates = {"NodeOverlay": True, "ReservedCapacity": False, "NodeClassCEL": True, "NotAGate": True}
    values = iam.helm_values(settings(), "https://api", "arn:role", gates)["settings"]
    assert values["featureGates"] == {"nodeOverlay": True, "reservedCapacity": False}  # a declared off stays off
    assert values["awsFeatureGates"] == {"nodeClassCEL": True}  # the AWS provider's gates have their own block
    assert "featureGates" not in iam.helm_values(settings(), "https://api", "arn:role")["settings"]


# --- coherence checks -----------------------------------------------------------------------


def test_pass_role_matching_understands_wildcards_and_paths():
    resources = ["arn:aws:iam::123456789012:role/Karpenter-*", "arn:aws:iam::123456789012:role/teams/Payments"]
    assert iam.may_pass(resources, "Karpenter-dev-node")
    assert iam.may_pass(resources, "teams/Payments")
    assert not iam.may_pass(resources, "Payments")
    assert not iam.may_pass(resources, "AdminRole")
    assert iam.may_pass(["*"], "anything")


def test_allowed_resources_reads_allow_statements_only():
    doc = iam.document(
        [
            iam.statement("P", ["iam:PassRole"], ["arn:aws:iam::1:role/A"]),
            iam.statement("D", ["iam:PassRole"], ["arn:aws:iam::1:role/B"], effect="Deny"),
            iam.statement("W", ["iam:*"], "arn:aws:iam::1:role/C"),
        ]
    )
    assert iam.allowed_resources(doc, "iam:PassRole") == ["arn:aws:iam::1:role/A", "arn:aws:iam::1:role/C"]


@pytest.mark.parametrize(
    ("services", "trusted"),
    [
        ("ec2.amazonaws.com", True),
        (["lambda.amazonaws.com", "ec2.amazonaws.com.cn"], True),  # the China partition's principal
        ("ec2.amazonaws.com.example", False),
        ("lambda.amazonaws.com", False),
    ],
)
def test_a_node_role_trusts_the_principals_the_controller_passes_roles_to(services, trusted):
    statement = {"Effect": "Allow", "Principal": {"Service": services}, "Action": "sts:AssumeRole"}
    assert iam.trusts_ec2(iam.document([statement])) is trusted
    assert iam.trusts_ec2({"Statement": statement}) is trusted  # IAM also takes one statement without a list
    assert iam.trusts_ec2(iam.document([{**statement, "Effect": "Deny"}])) is False
    passed_to = iam.controller_statements(settings(), ACCOUNT, ["R"])
    [pass_role] = [s for s in passed_to if s["Action"] == ["iam:PassRole"]]
    assert pass_role["Condition"]["StringEquals"]["iam:PassedToService"] == list(iam.EC2_SERVICES)
    assert iam.trusts_ec2(iam.node_role_trust())


def test_a_policy_document_is_read_from_json_text_or_taken_as_it_is():
    doc = iam.node_role_trust()
    assert iam.policy_document(json.dumps(doc)) == doc and iam.policy_document(doc) is doc
    assert iam.policy_document(None) == {}


def test_cni_must_match_the_cluster_ip_family():
    assert coherence.cni_problem(settings(), "ipv4") is None
    assert coherence.cni_problem(settings(), None) is None  # EKS omits it on IPv4 clusters
    problem = coherence.cni_problem(settings(), "ipv6")
    assert "is ipv6 but karpenter-gitops:controller.ipFamily is ipv4" in problem.message
    assert "AmazonEKS_CNI_Policy" in problem.message and problem.path == "karpenter-gitops:controller.ipFamily"
    assert coherence.cni_problem(settings(ipFamily="ipv6"), "ipv4")


@pytest.mark.parametrize(
    ("statement", "ok"),
    [
        (
            {
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": ["kms:GenerateDataKey", "kms:Decrypt"],
            },
            True,
        ),
        ({"Effect": "Allow", "Principal": {"Service": ["events.amazonaws.com"]}, "Action": "kms:*"}, True),
        ({"Effect": "Allow", "Principal": {"Service": "events.amazonaws.com"}, "Action": "kms:GenerateDataKey*"}, False),
        ({"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::1:root"}, "Action": "kms:*"}, False),
    ],
)
def test_key_policy_must_let_eventbridge_encrypt(statement, ok):
    problem = coherence.kms_policy_problem(iam.document([statement]))
    assert (problem is None) is ok
    if not ok:
        assert "events.amazonaws.com" in problem and "EventBridge cannot deliver" in problem


def test_fargate_selectors_match_namespaces_with_wildcards():
    assert coherence.fargate_selects([{"namespace": "kube-*"}], "kube-system")
    assert not coherence.fargate_selects([{"namespace": "apps"}], "kube-system")
