"""Karpenter's AWS side without an engine: the controller block, names, IAM documents, coherence checks.

The ``karpenter-gitops:controller`` stack key describes what the ``KarpenterController`` component
creates for an existing EKS cluster: the node role (with its instance profile and EKS access entry),
the controller role trusted through EKS Pod Identity or IRSA, the interruption queue with its five
EventBridge rules, and optionally the Helm release. Everything here is plain data in, plain data
out, so the CLI, the component, the policy pack and the tests judge the same documents.

.. code-block:: yaml

    karpenter-gitops:controller:
      identity: podIdentity            # or irsa (then oidcProviderArn)
      nodeRoleName: KarpenterNodeRole-dev
      createInstanceProfile: false     # Karpenter makes profiles from spec.role itself
      interruptionQueue: {enabled: true}
      helm: {enabled: true, version: "1.14.1"}
      nodeRoles:                       # node roles made elsewhere that NodeClasses use
        PaymentsNodeRole: {instanceProfiles: [PaymentsNodeProfile-v2], accessEntry: existing}
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core import labels
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.findings import Violation
from karpenter_gitops.core.requirements import Requirements

KEY = "karpenter-gitops:controller"
KIND = "KarpenterController"  # the kind of findings about the controller block itself
POD_IDENTITY, IRSA = "podIdentity", "irsa"
IPV4, IPV6 = "ipv4", "ipv6"
ACCESS_ENTRY_TYPES = ("EC2_LINUX", "EC2_WINDOWS")
ACCESS_CREATE, ACCESS_EXISTING = "create", "existing"
ECR_READ_ONLY, ECR_PULL_ONLY = "readOnly", "pullOnly"
CHART = "oci://public.ecr.aws/karpenter/karpenter"
QUEUE_RETENTION_SECONDS = 300
# IAM counts a managed policy's size without whitespace (IAM and STS quotas).
MANAGED_POLICY_LIMIT = 6144
# AWS name limits: SQS queue names, EventBridge rule names, IAM role / instance-profile / policy names.
NAME_LIMITS = {"queue": 80, "rule": 64, "role": 64, "instanceProfile": 128, "policy": 128}
_NAME_CHARS = re.compile(r"^[A-Za-z0-9_-]+$")  # what the queue and rule names derived from the prefix allow
_IAM_NAME = re.compile(r"^[\w+=,.@-]+$")
_OIDC_PROVIDER_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/(.+)$")
_KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)/.+$")

# EventBridge detail types Karpenter's interruption controller acts on, by the suffix of the rule name.
INTERRUPTION_EVENTS = {
    "spot-interruption": ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    "rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    "state-change": ("aws.ec2", "EC2 Instance State-change Notification"),
    "health": ("aws.health", "AWS Health Event"),
    "capacity-reservation": ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
}

# Rule ids of the coherence checks (registered in karpenter_gitops.rules.controller).
PASS_ROLE = "controller/pass-role"
ACCESS_ENTRY = "controller/access-entry"
SPOT_QUEUE = "controller/spot-interruption-queue"
QUEUE_KMS = "controller/queue-kms-eventbridge"
FARGATE_POD_IDENTITY = "controller/fargate-pod-identity"
NAME_LENGTH = "controller/name-length"
CNI_IP_FAMILY = "controller/cni-ip-family"


# --- settings -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeRole:
    """A node role made outside this stack that NodeClasses use, directly or through its profiles."""

    name: str
    instance_profiles: tuple[str, ...] = ()
    access_entry: str = ACCESS_EXISTING  # "create": this stack creates the role's EKS access entry


@dataclass(frozen=True)
class ControllerSettings:
    """The parsed controller block; names are resolved (defaults derived from the cluster name)."""

    cluster_name: str
    name_prefix: str
    node_role_name: str
    identity: str = POD_IDENTITY
    oidc_provider_arn: str | None = None
    namespace: str = "kube-system"
    service_account: str = "karpenter"
    create_instance_profile: bool = False
    instance_profile_name: str | None = None  # set only when the profile is created
    access_entry_type: str = "EC2_LINUX"
    ip_family: str = IPV4
    ecr_policy: str = ECR_PULL_ONLY
    ssm_managed_instance_core: bool = False
    interruption_queue: bool = True
    kms_key_arn: str | None = None
    helm_version: str | None = None  # set only when the Helm release is created
    runs_on_fargate: bool = False
    node_roles: tuple[NodeRole, ...] = ()

    @property
    def oidc_issuer(self) -> str | None:
        """The issuer host and path IRSA conditions are keyed by (``oidc.eks.<region>.amazonaws.com/id/<id>``)."""
        match = _OIDC_PROVIDER_ARN.match(self.oidc_provider_arn or "")
        return match.group(1) if match else None

    def role_of_profile(self, profile: str) -> str | None:
        """The role inside an instance profile this block knows about."""
        if self.instance_profile_name == profile:
            return self.node_role_name
        return next((r.name for r in self.node_roles if profile in r.instance_profiles), None)

    def has_access_entry(self, role: str) -> bool:
        """Whether the stack creates, or says it already has, an EKS access entry for ``role`` (path ignored)."""
        known = {self.node_role_name, *(r.name for r in self.node_roles)}
        return _bare(role) in {_bare(name) for name in known}


def _bare(role: str) -> str:
    """A role name without its IAM path, as access entries and instance profiles see it."""
    return role.rsplit("/", 1)[-1]


def _enum(*allowed: str) -> Callable[[Any], bool]:
    return lambda v: v in allowed


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and bool(v)


def _is_bool(v: Any) -> bool:
    return type(v) is bool


# stack key -> (settings attribute, validity check, what a valid value looks like)
_FIELDS: dict[str, tuple[str, Callable[[Any], bool], str]] = {
    "identity": ("identity", _enum(POD_IDENTITY, IRSA), f"{POD_IDENTITY} or {IRSA}"),
    "oidcProviderArn": (
        "oidc_provider_arn",
        lambda v: isinstance(v, str) and bool(_OIDC_PROVIDER_ARN.match(v)),
        "an IAM OIDC provider ARN (arn:aws:iam::<account>:oidc-provider/oidc.eks.<region>.amazonaws.com/id/<id>)",
    ),
    "namespace": ("namespace", _is_str, "a Kubernetes namespace"),
    "serviceAccount": ("service_account", _is_str, "a service account name"),
    "namePrefix": ("name_prefix", lambda v: isinstance(v, str) and bool(_NAME_CHARS.match(v)), "letters, digits, - and _"),
    "nodeRoleName": ("node_role_name", lambda v: isinstance(v, str) and bool(_IAM_NAME.match(v)), "an IAM role name"),
    "createInstanceProfile": ("create_instance_profile", _is_bool, "true or false"),
    "instanceProfileName": ("instance_profile_name", lambda v: isinstance(v, str) and bool(_IAM_NAME.match(v)), "an IAM name"),
    "accessEntryType": ("access_entry_type", _enum(*ACCESS_ENTRY_TYPES), " or ".join(ACCESS_ENTRY_TYPES)),
    "ipFamily": ("ip_family", _enum(IPV4, IPV6), f"{IPV4} or {IPV6} (the cluster's IP family)"),
    "ecrPolicy": ("ecr_policy", _enum(ECR_READ_ONLY, ECR_PULL_ONLY), f"{ECR_READ_ONLY} or {ECR_PULL_ONLY}"),
    "ssmManagedInstanceCore": ("ssm_managed_instance_core", _is_bool, "true or false"),
    "runsOnFargate": ("runs_on_fargate", _is_bool, "true or false"),
}
_QUEUE_FIELDS = {
    "enabled": ("interruption_queue", _is_bool, "true or false"),
    "kmsKeyArn": ("kms_key_arn", lambda v: isinstance(v, str) and bool(_KMS_KEY_ARN.match(v)), "a KMS key or alias ARN"),
}
_HELM_FIELDS = {"enabled": ("enabled", _is_bool, "true or false"), "version": ("version", _is_str, 'a chart version, e.g. "1.14.1"')}
_NODE_ROLE_FIELDS = {
    "instanceProfiles": ("instance_profiles", lambda v: isinstance(v, list) and all(map(_is_str, v)), "a list of names"),
    "accessEntry": ("access_entry", _enum(ACCESS_CREATE, ACCESS_EXISTING), f"{ACCESS_CREATE} or {ACCESS_EXISTING}"),
}
_BLOCKS = ("interruptionQueue", "helm", "nodeRoles")


def _read(value: Any, where: str, file: str, fields: Mapping[str, tuple], extra: Iterable[str] = ()) -> dict[str, Any]:
    """Known keys of a mapping as settings attributes; an unknown key or a bad value is an InputError."""
    known = [*fields, *extra]
    if not isinstance(value, Mapping):
        raise InputError(f"'{where}' must be a mapping", file, hint=f"keys: {', '.join(known)}")
    read = {}
    for key, item in value.items():
        if key in extra:
            continue
        if key not in fields:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
            raise InputError(f"unknown field '{where}.{key}'", file, hint=hint)
        attr, valid, expected = fields[key]
        if not valid(item):
            raise InputError(f"'{where}.{key}' is {item!r}; expected {expected}", file)
        read[attr] = item
    return read


def parse(value: Any, file: str, cluster_name: str | None) -> ControllerSettings:
    """The controller block of a stack, strictly: unknown keys, bad values and missing pairs are InputErrors."""
    if not cluster_name:
        raise InputError(f"'{KEY}' needs the cluster's name", file, hint="set karpenter-gitops:cluster.name")
    options = _read(value, KEY, file, _FIELDS, _BLOCKS)
    options.update(_read(value.get("interruptionQueue", {}), f"{KEY}.interruptionQueue", file, _QUEUE_FIELDS))
    helm = _read(value.get("helm", {}), f"{KEY}.helm", file, _HELM_FIELDS)
    if helm.get("enabled"):
        if "version" not in helm:
            raise InputError(f"'{KEY}.helm.version' is required when the release is enabled", file, hint='e.g. "1.14.1"')
        options["helm_version"] = helm["version"]
    options["node_roles"] = _node_roles(value.get("nodeRoles", {}), file)
    identity = options.get("identity", POD_IDENTITY)
    if identity == IRSA and "oidc_provider_arn" not in options:
        raise InputError(f"'{KEY}.identity' is irsa but no oidcProviderArn is given", file,
                         hint="add the cluster's IAM OIDC provider ARN, or use podIdentity")
    if identity == POD_IDENTITY and "oidc_provider_arn" in options:
        raise InputError(f"'{KEY}.oidcProviderArn' is only used with identity: irsa", file, hint="remove it or set identity: irsa")
    if "instance_profile_name" in options and not options.get("create_instance_profile"):
        raise InputError(f"'{KEY}.instanceProfileName' names a profile that is not created", file,
                         hint="set createInstanceProfile: true, or drop the name")
    prefix = options.setdefault("name_prefix", f"Karpenter-{cluster_name}")
    options.setdefault("node_role_name", f"{prefix}-node")
    if options.get("create_instance_profile"):
        options.setdefault("instance_profile_name", options["node_role_name"])
    return ControllerSettings(cluster_name=cluster_name, **options)


def _node_roles(value: Any, file: str) -> tuple[NodeRole, ...]:
    where = f"{KEY}.nodeRoles"
    if not isinstance(value, Mapping):
        raise InputError(f"'{where}' must map role names to {{instanceProfiles, accessEntry}}", file)
    roles = []
    for name, entry in value.items():
        if not isinstance(name, str) or not _IAM_NAME.match(name.rsplit("/", 1)[-1]):
            raise InputError(f"'{where}': {name!r} is not an IAM role name", file)
        options = _read(entry or {}, f"{where}.{name}", file, _NODE_ROLE_FIELDS)
        roles.append(NodeRole(name, tuple(options.get("instance_profiles", ())), options.get("access_entry", ACCESS_EXISTING)))
    return tuple(roles)


# --- names --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """The AWS names the component gives its resources."""

    controller_role: str
    node_role: str
    instance_profile: str | None
    queue: str | None
    rules: Mapping[str, str]  # INTERRUPTION_EVENTS key -> EventBridge rule name
    policy_prefix: str

    def policy(self, index: int) -> str:
        return f"{self.policy_prefix}-{index + 1}"


def names(settings: ControllerSettings) -> Names:
    prefix = settings.name_prefix
    queue = settings.interruption_queue
    return Names(
        controller_role=f"{prefix}-controller",
        node_role=settings.node_role_name,
        instance_profile=settings.instance_profile_name,
        queue=prefix if queue else None,
        rules={event: f"{prefix}-{event}" for event in INTERRUPTION_EVENTS} if queue else {},
        policy_prefix=f"{prefix}-controller",
    )


def name_problems(settings: ControllerSettings) -> list[Violation]:
    """Names over AWS's limits. They are refused, never truncated: a cut name could collide with another cluster's."""
    given = names(settings)
    candidates = [
        ("role", "namePrefix", given.controller_role),
        ("role", "nodeRoleName", given.node_role),
        ("instanceProfile", "instanceProfileName", given.instance_profile),
        ("queue", "namePrefix", given.queue),
        *(("rule", "namePrefix", rule) for rule in given.rules.values()),
        ("policy", "namePrefix", given.policy(0)),
    ]
    problems = []
    for kind, key, name in candidates:
        if name is not None and len(name) > NAME_LIMITS[kind]:
            problems.append(Violation(
                f"{KEY}.{key}",
                f"{kind} name {name!r} has {len(name)} characters; AWS allows {NAME_LIMITS[kind]}",
                f"set a shorter {KEY}.{key} (the default prefix is Karpenter-<cluster name>)",
            ))
    return problems


# --- IAM documents ------------------------------------------------------------------------


@dataclass(frozen=True)
class Account:
    """Partition, region and account of the cluster: every ARN the documents name is built from them."""

    partition: str
    region: str
    account_id: str

    @classmethod
    def from_cluster_arn(cls, arn: str) -> Account:
        parts = arn.split(":")
        if len(parts) < 6 or parts[2] != "eks":
            raise ValueError(f"not an EKS cluster ARN: {arn!r}")
        return cls(parts[1], parts[3], parts[4])

    def arn(self, service: str, resource: str, *, region: str | None = None, account: str | None = None) -> str:
        """An ARN in this partition; region and account default to the cluster's ("" for global or shared resources)."""
        region = self.region if region is None else region
        account = self.account_id if account is None else account
        return f"arn:{self.partition}:{service}:{region}:{account}:{resource}"

    def role_arn(self, role: str) -> str:
        return self.arn("iam", f"role/{role}", region="")


def document(statements: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def statement(sid: str, actions: Sequence[str], resources: Sequence[str] | str, condition: Mapping | None = None,
              *, effect: str = "Allow", principal: Any = None) -> dict[str, Any]:
    made: dict[str, Any] = {"Sid": sid, "Effect": effect}
    if principal is not None:
        made["Principal"] = principal
    made["Action"] = list(actions)
    made["Resource"] = resources if isinstance(resources, str) else list(resources)
    if condition:
        made["Condition"] = dict(condition)
    return made


def _trust(sid: str, principal: Mapping, actions: Sequence[str], condition: Mapping | None = None) -> dict[str, Any]:
    """A trust-policy statement (trust policies name no Resource)."""
    made = {"Sid": sid, "Effect": "Allow", "Principal": dict(principal), "Action": list(actions)}
    if condition:
        made["Condition"] = dict(condition)
    return made


def node_role_trust() -> dict[str, Any]:
    """Nodes (EC2 instances) assume the node role."""
    return document([_trust("EC2AssumeRole", {"Service": "ec2.amazonaws.com"}, ["sts:AssumeRole"])])


def controller_trust(settings: ControllerSettings) -> dict[str, Any]:
    """Who may assume the controller role: the EKS Pod Identity agent, or the service account's web identity."""
    if settings.identity == POD_IDENTITY:
        return document([_trust("EKSPodIdentity", {"Service": "pods.eks.amazonaws.com"}, ["sts:AssumeRole", "sts:TagSession"])])
    issuer = settings.oidc_issuer
    subject = f"system:serviceaccount:{settings.namespace}:{settings.service_account}"
    condition = {"StringEquals": {f"{issuer}:sub": subject, f"{issuer}:aud": "sts.amazonaws.com"}}
    return document([_trust("IRSA", {"Federated": settings.oidc_provider_arn}, ["sts:AssumeRoleWithWebIdentity"], condition)])


def node_managed_policies(settings: ControllerSettings, partition: str) -> dict[str, str]:
    """AWS managed policies of the node role, by a short name; IPv6 clusters get :func:`ipv6_cni_policy` instead."""
    ecr = "AmazonEC2ContainerRegistryPullOnly" if settings.ecr_policy == ECR_PULL_ONLY else "AmazonEC2ContainerRegistryReadOnly"
    wanted = {"worker": "AmazonEKSWorkerNodePolicy", "ecr": ecr}
    if settings.ip_family == IPV4:
        wanted["cni"] = "AmazonEKS_CNI_Policy"
    if settings.ssm_managed_instance_core:
        wanted["ssm"] = "AmazonSSMManagedInstanceCore"
    return {short: f"arn:{partition}:iam::aws:policy/{policy}" for short, policy in wanted.items()}


def ipv6_cni_policy(partition: str) -> dict[str, Any]:
    """The VPC CNI's permissions on an IPv6 cluster (AWS publishes no managed policy for it)."""
    return document([
        statement("AssignIPv6", ["ec2:AssignIpv6Addresses", "ec2:DescribeInstances", "ec2:DescribeTags",
                                 "ec2:DescribeNetworkInterfaces", "ec2:DescribeInstanceTypes"], "*"),
        statement("TagNetworkInterfaces", ["ec2:CreateTags"], [f"arn:{partition}:ec2:*:*:network-interface/*"]),
    ])


_LAUNCH = ("ec2:RunInstances", "ec2:CreateFleet")
_TAGGED_ON_LAUNCH = ("fleet/*", "instance/*", "volume/*", "network-interface/*", "launch-template/*", "spot-instances-request/*")
# Reads Karpenter makes in its own region (the v1.14 reference; DescribeAvailabilityZones has not been needed
# since v1.1, DescribeInstanceStatus is new).
_REGIONAL_READS = (
    "ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus",
    "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates",
    "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets",
)
# EC2's service principal as iam:PassedToService sees it, in the commercial and the China partitions.
_EC2_SERVICES = ("ec2.amazonaws.com", "ec2.amazonaws.com.cn")


def queue_arn(settings: ControllerSettings, account: Account) -> str | None:
    queue = names(settings).queue
    return account.arn("sqs", queue) if queue else None


def pass_roles(settings: ControllerSettings, class_roles: Iterable[str]) -> tuple[str, ...]:
    """Roles the controller may pass to EC2: its node role, the NodeClasses' roles and the declared node roles."""
    return tuple(sorted({settings.node_role_name, *class_roles, *(r.name for r in settings.node_roles)}))


def controller_statements(settings: ControllerSettings, account: Account, roles: Sequence[str]) -> list[dict[str, Any]]:
    """The controller's permissions, scoped as Karpenter's v1.14 reference policy (the getting-started
    CloudFormation template) scopes them: EC2 writes by the cluster's ownership and NodePool tags, reads by
    region, PassRole to ``roles`` only (upstream: its one node role), instance profiles by tags and, narrower
    than upstream's ``instance-profile/*``, by the names and paths Karpenter gives them."""
    cluster, region = settings.cluster_name, account.region
    ec2 = lambda resource: account.arn("ec2", resource, account="*")  # noqa: E731
    cluster_arn = account.arn("eks", f"cluster/{cluster}")
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    requested = {f"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned", "aws:RequestTag/eks:eks-cluster-name": cluster}
    of_a_pool = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
    for_a_pool = {"aws:RequestTag/karpenter.sh/nodepool": "*"}
    profile_region = {"aws:ResourceTag/topology.kubernetes.io/region": region}
    profiles = [  # v1.0-1.6 names profiles <cluster>_<hash> at /, v1.7+ puts them under /karpenter/<region>/<cluster>/
        account.arn("iam", f"instance-profile/{cluster}_*", region=""),
        account.arn("iam", f"instance-profile/karpenter/{region}/{cluster}/*", region=""),
    ]
    of_a_class = {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    for_a_class = {"aws:RequestTag/karpenter.k8s.aws/ec2nodeclass": "*"}
    made = [
        statement("AllowScopedEC2InstanceAccessActions", _LAUNCH, [
            account.arn("ec2", "image/*", account=""), account.arn("ec2", "snapshot/*", account=""),
            ec2("security-group/*"), ec2("subnet/*"), ec2("capacity-reservation/*"), ec2("placement-group/*"),
        ]),
        statement("AllowScopedEC2LaunchTemplateAccessActions", _LAUNCH, [ec2("launch-template/*")],
                  {"StringEquals": owned, "StringLike": of_a_pool}),
        statement("AllowScopedEC2InstanceActionsWithTags", [*_LAUNCH, "ec2:CreateLaunchTemplate"],
                  [ec2(r) for r in _TAGGED_ON_LAUNCH], {"StringEquals": requested, "StringLike": for_a_pool}),
        statement("AllowScopedResourceCreationTagging", ["ec2:CreateTags"], [ec2(r) for r in _TAGGED_ON_LAUNCH], {
            "StringEquals": {**requested, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"]},
            "StringLike": for_a_pool,
        }),
        statement("AllowScopedResourceTagging", ["ec2:CreateTags"], [ec2("instance/*")], {
            "StringEquals": owned, "StringLike": of_a_pool,
            "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster},
            "ForAllValues:StringEquals": {"aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]},
        }),
        statement("AllowScopedDeletion", ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
                  [ec2("instance/*"), ec2("launch-template/*")], {"StringEquals": owned, "StringLike": of_a_pool}),
        statement("AllowRegionalReadActions", _REGIONAL_READS, "*", {"StringEquals": {"aws:RequestedRegion": region}}),
        statement("AllowSSMReadActions", ["ssm:GetParameter"], [account.arn("ssm", "parameter/aws/service/*", account="")]),
        statement("AllowPricingReadActions", ["pricing:GetProducts"], "*"),
        statement("AllowPassingInstanceRole", ["iam:PassRole"], [account.role_arn(role) for role in roles],
                  {"StringEquals": {"iam:PassedToService": list(_EC2_SERVICES)}}),
        statement("AllowScopedInstanceProfileCreationActions", ["iam:CreateInstanceProfile"], profiles,
                  {"StringEquals": {**requested, "aws:RequestTag/topology.kubernetes.io/region": region}, "StringLike": for_a_class}),
        statement("AllowScopedInstanceProfileTagActions", ["iam:TagInstanceProfile"], profiles, {
            "StringEquals": {**owned, **profile_region, **requested, "aws:RequestTag/topology.kubernetes.io/region": region},
            "StringLike": {**of_a_class, **for_a_class},
        }),
        statement("AllowScopedInstanceProfileActions",
                  ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
                  profiles, {"StringEquals": {**owned, **profile_region}, "StringLike": of_a_class}),
        statement("AllowInstanceProfileReadActions", ["iam:GetInstanceProfile"],
                  [account.arn("iam", "instance-profile/*", region="")]),
        # v1.7+ garbage-collects profiles by listing its path prefix; upstream grants the list on "*" by itself.
        statement("AllowUnscopedInstanceProfileListAction", ["iam:ListInstanceProfiles"], "*"),
        statement("AllowAPIServerEndpointDiscovery", ["eks:DescribeCluster"], [cluster_arn]),
        statement("AllowZonalShiftStatusReadOnly", ["arc-zonal-shift:GetManagedResource"], "*",
                  {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}}),
    ]
    queue = queue_arn(settings, account)
    if queue:
        made.append(statement("AllowInterruptionQueueActions",
                              ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], [queue]))
    return made


def policy_size(doc: Mapping[str, Any]) -> int:
    """Characters IAM counts against the managed-policy limit (JSON without whitespace)."""
    return len(json.dumps(doc, separators=(",", ":")))


def split_documents(statements: Sequence[Mapping[str, Any]], limit: int = MANAGED_POLICY_LIMIT) -> list[dict[str, Any]]:
    """Statements packed, in order, into as few documents as fit ``limit`` each."""
    documents: list[dict[str, Any]] = []
    for item in statements:
        if policy_size(document([item])) > limit:
            raise ValueError(f"statement {item.get('Sid')!r} alone exceeds {limit} characters; pass fewer roles")
        if documents and policy_size(document([*documents[-1]["Statement"], item])) <= limit:
            documents[-1]["Statement"].append(item)
        else:
            documents.append(document([item]))
    return documents


def queue_policy(arn: str) -> dict[str, Any]:
    """EventBridge (and SQS itself) may send to the queue; nobody may use it without TLS."""
    return document([
        statement("AllowEventBridgeDelivery", ["sqs:SendMessage"], [arn],
                  principal={"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}),
        statement("DenyInsecureTransport", ["sqs:*"], [arn], {"Bool": {"aws:SecureTransport": "false"}},
                  effect="Deny", principal="*"),
    ])


def event_pattern(event: str) -> dict[str, list[str]]:
    source, detail_type = INTERRUPTION_EVENTS[event]
    return {"source": [source], "detail-type": [detail_type]}


def helm_values(settings: ControllerSettings, cluster_endpoint: Any, controller_role_arn: Any) -> dict[str, Any]:
    """Chart values: the cluster, the queue, and for IRSA the service account's role annotation."""
    values: dict[str, Any] = {
        "settings": {"clusterName": settings.cluster_name, "clusterEndpoint": cluster_endpoint},
        "serviceAccount": {"name": settings.service_account},
    }
    queue = names(settings).queue
    if queue:
        values["settings"]["interruptionQueue"] = queue
    if settings.identity == IRSA:
        values["serviceAccount"]["annotations"] = {"eks.amazonaws.com/role-arn": controller_role_arn}
    return values


# --- coherence checks ---------------------------------------------------------------------


def _actions(item: Mapping[str, Any]) -> list[str]:
    actions = item.get("Action") or []
    return [actions] if isinstance(actions, str) else list(actions)


def _resources(item: Mapping[str, Any]) -> list[str]:
    resources = item.get("Resource") or []
    return [resources] if isinstance(resources, str) else list(resources)


def allowed_resources(doc: Mapping[str, Any], action: str) -> list[str]:
    """Resources an identity policy's Allow statements grant ``action`` on (``iam:*`` and ``*`` count)."""
    statements = doc.get("Statement") or []
    statements = [statements] if isinstance(statements, Mapping) else statements
    service = action.split(":")[0]
    return [
        resource
        for item in statements
        if item.get("Effect") == "Allow"
        and any(fnmatch.fnmatchcase(action.lower(), granted.lower()) or granted in ("*", f"{service}:*") for granted in _actions(item))
        for resource in _resources(item)
    ]


def may_pass(resources: Iterable[str], role: str) -> bool:
    """Whether PassRole ``resources`` cover ``role`` (a name, or ``path/name`` as a NodeClass may write it)."""
    for resource in resources:
        pattern = "*" if resource == "*" else resource.split(":role/", 1)[1] if ":role/" in resource else None
        if pattern is not None and fnmatch.fnmatchcase(role, pattern):
            return True
    return False


def pass_role_gap(settings: ControllerSettings, role: str | None, profile: str | None) -> Violation | None:
    """A NodeClass instance profile whose role the controller does not know, so it cannot pass it."""
    if profile is None or settings.role_of_profile(profile) is not None:
        return None
    return Violation(
        "spec.instanceProfile",
        f"the controller cannot pass the role inside instance profile {profile!r}: this stack does not say which role it holds",
        f"name the profile's role under {KEY}.nodeRoles.<role>.instanceProfiles",
    )


def access_entry_gap(settings: ControllerSettings, role: str | None, profile: str | None) -> Violation | None:
    """A NodeClass node role with no EKS access entry this stack creates or knows of: its nodes never join."""
    node_role = role or (settings.role_of_profile(profile) if profile else None)
    if node_role is None or settings.has_access_entry(node_role):
        return None
    path = "spec.role" if role else "spec.instanceProfile"
    return Violation(
        path,
        f"node role {node_role!r} has no EKS access entry in this stack, so its nodes cannot join the cluster",
        f"add {node_role} under {KEY}.nodeRoles with accessEntry: create (or existing, if it has one)",
    )


def allows_spot(pool) -> bool:
    """Whether a NodePool may launch spot capacity (Karpenter defaults capacity-type to on-demand)."""
    template = pool.spec.template
    if template is None or template.spec is None:
        return False
    capacity = Requirements.from_node_pool(pool).get(labels.CAPACITY_TYPE)
    return capacity is not None and capacity.has("spot")


def spot_queue_gap(settings: ControllerSettings, pool) -> Violation | None:
    if settings.interruption_queue or not allows_spot(pool):
        return None
    return Violation(
        "spec.template.spec.requirements",
        "the pool allows spot but the controller has no interruption queue: spot reclaims arrive unannounced and "
        "pods are killed with the node",
        f"set {KEY}.interruptionQueue.enabled: true, or keep the pool on-demand",
    )


def fargate_problem(settings: ControllerSettings) -> Violation | None:
    """EKS Pod Identity does not work on Fargate; a controller running there needs IRSA."""
    if settings.runs_on_fargate and settings.identity == POD_IDENTITY:
        return Violation(f"{KEY}.identity", "the controller runs on Fargate, where EKS Pod Identity is not available",
                         "set identity: irsa with the cluster's oidcProviderArn, or run the controller on EC2 nodes")
    return None


def block_problems(settings: ControllerSettings) -> list[tuple[str, Violation]]:
    """Problems of the block on its own, by rule id (reported while loading, like the schema rules)."""
    found = [(NAME_LENGTH, v) for v in name_problems(settings)]
    fargate = fargate_problem(settings)
    if fargate:
        found.append((FARGATE_POD_IDENTITY, fargate))
    return found


def cni_problem(settings: ControllerSettings, cluster_ip_family: str | None) -> str | None:
    """The node role's CNI policy must match the cluster's real IP family (found by looking the cluster up)."""
    actual = (cluster_ip_family or IPV4).lower()
    if actual == settings.ip_family:
        return None
    policy = "AmazonEKS_CNI_Policy" if settings.ip_family == IPV4 else "the IPv6 CNI policy"
    return (f"cluster {settings.cluster_name!r} is {actual} but {KEY}.ipFamily is {settings.ip_family}: the node role "
            f"would get {policy} and pods would get no addresses [{CNI_IP_FAMILY}]")


def kms_policy_problem(key_policy: Mapping[str, Any]) -> str | None:
    """A customer-managed queue key must let EventBridge encrypt for it, or events are silently dropped."""
    needed = {"kms:GenerateDataKey", "kms:Decrypt"}
    statements = key_policy.get("Statement") or []
    for item in [statements] if isinstance(statements, Mapping) else statements:
        principal = item.get("Principal")
        services = principal.get("Service") if isinstance(principal, Mapping) else None
        services = [services] if isinstance(services, str) else services or []
        if item.get("Effect") != "Allow" or "events.amazonaws.com" not in services:
            continue
        needed = {a for a in needed if not any(fnmatch.fnmatchcase(a.lower(), g.lower()) for g in _actions(item))}
    if not needed:
        return None
    return (f"the queue's KMS key policy does not allow events.amazonaws.com {', '.join(sorted(needed))}: EventBridge "
            f"cannot deliver interruption events [{QUEUE_KMS}]")


def fargate_selects(selectors: Iterable[Mapping[str, Any]], namespace: str) -> bool:
    """Whether a Fargate profile's selectors take pods of ``namespace`` (labels may narrow it; assume they match)."""
    return any(fnmatch.fnmatchcase(namespace, s.get("namespace") or "") for s in selectors)
