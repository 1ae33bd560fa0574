"""Live rules (``live/``): what only the reconciliation against AWS can find.

They have no offline check: the reconciliation observes them and hands them to the judge, and the
CrossGuard pack judges the same observations again from a Reconciliation resource's outputs.
Declaring them gives every such finding a severity, a doc and a fix hint, and lets stacks and
waivers name them. Their cases are exercised by the reconciliation and policy-pack tests rather
than by spec examples.
"""

from __future__ import annotations

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.core.model import EC2NODECLASS, NODEOVERLAY, NODEOVERLAY_SINCE, NODEPOOL
from karpenter_gitops.core.typed_schema import REQUIRED
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.registry import Stage, rule

SELECTOR_MATCHES_NOTHING = "live/selector-matches-nothing"
AMI_NOT_AVAILABLE = "live/ami-not-available"
UNSERVED_INSTANCE_TYPES = "live/unserved-instance-types"
POOL_LAUNCHES_NOTHING = "live/pool-launches-nothing"
VALUE_NOT_OFFERED = "live/requirement-value-not-offered"
INSTANCE_PROFILE_WITHOUT_ROLE = "live/instance-profile-without-role"
INSTANCE_PROFILE_NOT_FOUND = "live/instance-profile-not-found"
ROLE_NOT_FOUND = "live/role-not-found"
CATALOGUE_REFUSED = "live/catalogue-refused"
AMI_FAMILY_MISMATCH = "live/ami-family-mismatch"
AMI_KUBERNETES_VERSION = "live/ami-kubernetes-version"
OVERLAY_CONFLICT = "live/overlay-conflict"
OVERLAY_MATCHES_NOTHING = "live/overlay-matches-nothing"
OVERLAY_EVALUATION_STALLED = "live/overlay-evaluation-stalled"
KUBELET_EXPRESSION_FAILED = "live/kubelet-expression-failed"
KUBELET_EXPRESSION_UNUSABLE = "live/kubelet-expression-unusable"


def _live(id: str, severity: Severity, kind: str, doc: str, fix: str, **declared) -> None:
    rule(id, severity, (kind,), doc, fix, stage=Stage.LIVE, origin="ours", **declared)


_live(
    SELECTOR_MATCHES_NOTHING,
    Severity.ERROR,
    EC2NODECLASS,
    "An AMI, subnet or security-group selector matches nothing in the account and region; Karpenter sets "
    "AMIsReady/SubnetsReady/SecurityGroupsReady=False and the class launches no node. Good: the discovery "
    "tag is on the VPC's private subnets. Bad: a tag typo, or terms written for another account.",
    "Fix the selector terms (tags, ids, names) or tag the resources they should match.",
    restates=(REQUIRED,),  # a selector the class lacks matches nothing: the missing field is the one mistake
)
_live(
    AMI_NOT_AVAILABLE,
    Severity.ERROR,
    EC2NODECLASS,
    "The AMI selector matches only images that are not 'available' (pending builds, failed or disabled "
    "images); Karpenter since 1.3 filters them out and finds no AMI. Good: the pipeline's finished image. "
    "Bad: a name glob that so far matches only a build still in progress.",
    "Wait for the image build to finish, or pin the last available image by id or a tighter name/tag.",
)
_live(
    UNSERVED_INSTANCE_TYPES,
    Severity.WARNING,
    NODEPOOL,
    "Instance types the NodePool's requirements allow but no selected AMI can run (architecture or "
    "GPU/accelerator variant missing); Karpenter silently never launches them. Good: amd64 and arm64 types "
    "with an alias that resolves both. Bad: g5 types with an image set lacking the nvidia variant.",
    "Narrow the requirements to the types the AMIs serve, or select AMIs for the missing architecture/variant.",
)
_live(
    POOL_LAUNCHES_NOTHING,
    Severity.ERROR,
    NODEPOOL,
    "No instance type in the region's catalogue meets the NodePool's requirements (with its EC2NodeClass's "
    "zones and AMI family), so Karpenter can launch nothing for it and its pods stay pending. Good: "
    "instance-family In [m7i, c7i]. Bad: instance-family In [m7x], a family no instance type has.",
    "Fix the requirement the message names (a misspelt family, size or zone), or widen it.",
)
_live(
    VALUE_NOT_OFFERED,
    Severity.WARNING,
    NODEPOOL,
    "An In requirement names an instance family, category, size or type EC2 has but the region's catalogue "
    "offers none of: beside values the region offers it selects nothing there. Good: instance-family In "
    "[m7i, c7i] where both are offered. Bad: a family only other regions offer.",
    "Drop the value, or pick a family the plan lists for the region; values EC2 does not have at all are "
    "nodepool/requirement-dead-value.",
)
_live(
    INSTANCE_PROFILE_WITHOUT_ROLE,
    Severity.ERROR,
    EC2NODECLASS,
    "The instance profile exists but holds no IAM role, so nodes boot without credentials and never join; "
    "Karpenter still reports InstanceProfileReady=True for a user-managed profile. Good: the profile holds "
    "the node role. Bad: a profile created by hand and never given its role.",
    "Add the node role to the instance profile (aws iam add-role-to-instance-profile), or use spec.role.",
)
_live(
    INSTANCE_PROFILE_NOT_FOUND,
    Severity.ERROR,
    EC2NODECLASS,
    "spec.instanceProfile names a profile IAM does not have (a typo, another account's, a name with its "
    "path): every launch fails with 'Invalid IAM Instance Profile name'. Karpenter reports InstanceProfileReady=True "
    "without asking IAM; from 1.15 its launch dry run makes the class ValidationSucceeded=False "
    "(InstanceProfileNotFound), before 1.15 ValidationSucceeded stays Unknown. Good: the bare name of an existing "
    "profile. Bad: teams/payments/PaymentsNodeProfile.",
    "Create the instance profile, or give the bare name of an existing one (no path), or use spec.role.",
)
_live(
    ROLE_NOT_FOUND,
    Severity.ERROR,
    EC2NODECLASS,
    "spec.role names an IAM role that does not exist: Karpenter cannot create the instance profile for it, "
    "InstanceProfileReady stays Unknown and the class launches no node. Good: the node role the cluster's access "
    "entry names. Bad: a role of another cluster or account.",
    "Create the role (and its EKS access entry), or name an existing one.",
)
_live(
    CATALOGUE_REFUSED,
    Severity.ERROR,
    NODEPOOL,
    "AWS refused the instance-type catalogue (DescribeInstanceTypes / DescribeInstanceTypeOfferings), "
    "e.g. access denied: no NodePool can be mapped, and retrying will not help. Good: the identity may "
    "call both. Bad: a read-only role without ec2:DescribeInstanceTypes.",
    "Allow ec2:DescribeInstanceTypes and ec2:DescribeInstanceTypeOfferings for the identity that plans.",
)
_live(
    AMI_FAMILY_MISMATCH,
    Severity.WARNING,
    EC2NODECLASS,
    "amiFamily contradicts the images a custom selector picks (AL2023 with an image named like an AL2 EKS "
    "image): Karpenter writes the amiFamily's bootstrap, which the image does not read. Good: amiFamily AL2023 "
    "with amazon-eks-node-al2023-* images. Bad: amiFamily AL2023 with amazon-eks-node-1.32-* images.",
    "Set amiFamily to the images' family, or select images of the family you set.",
)
_live(
    AMI_KUBERNETES_VERSION,
    Severity.WARNING,
    EC2NODECLASS,
    "A name or tag selector picks EKS images built for another Kubernetes version than the cluster's, because "
    "the name does not pin it. Good: amazon-eks-node-al2023-x86_64-standard-1.32-*. Bad: "
    "amazon-eks-node-al2023-x86_64-standard-* on a 1.32 cluster once 1.33 images exist.",
    "Put the cluster's Kubernetes version in the name pattern (or use an alias, which follows the cluster).",
)

rule(
    OVERLAY_CONFLICT,
    Severity.ERROR,
    (NODEOVERLAY,),
    "Two NodeOverlays of the same weight price the same offering (instance type, capacity type, zone) of a "
    "NodePool, or set the same capacity key of an instance type: Karpenter rejects the one applied later (on "
    "equal weight, the name that sorts first) whole, for every NodePool, with ValidationSucceeded=False "
    "(Conflict). Good: weights 20 and 10, the heavier one wins where both match. Bad: both weight 10.",
    "Give the overlays different weights (the heavier one wins where both match), or make their requirements disjoint.",
    stage=Stage.LIVE,
    since=NODEOVERLAY_SINCE,
)
_live(
    OVERLAY_MATCHES_NOTHING,
    Severity.WARNING,
    NODEOVERLAY,
    "A NodeOverlay's requirements match no offering of any instance type a NodePool can launch, so it changes "
    "nothing: a typo in a value, a label no NodePool template sets, or instance types no NodePool allows. "
    "Good: instance-family In [g5] with a NodePool that launches g5. Bad: instance-family In [g5 ] or [p5] "
    "when no NodePool allows p5.",
    "Check the requirement values against the instance types the plan lists per NodePool, and that custom "
    "label keys are set in a NodePool's spec.template.metadata.labels.",
    since=NODEOVERLAY_SINCE,
)
rule(
    OVERLAY_EVALUATION_STALLED,
    Severity.ERROR,
    (NODEPOOL,),
    "With the NodeOverlay feature gate on, Karpenter 1.7 to 1.12 evaluates NodeOverlays for all NodePools at once "
    "and gives up when one NodePool's instance types cannot be listed (its EC2NodeClass has no subnets); until it "
    "succeeds, the provisioner skips every NodePool as awaiting nodeoverlay evaluation, so nothing launches, even "
    "without a NodeOverlay. From 1.13 the other NodePools are evaluated anyway. Good: every class resolves subnets. "
    "Bad: a NodePool left on a class whose subnet tags were removed.",
    "Fix the EC2NodeClass's subnet selector or remove the NodePool; upgrading Karpenter to 1.13 confines the damage to it.",
    stage=Stage.LIVE,
    since=NODEOVERLAY_SINCE,
    until=Release((1, 13)),
)
_live(
    KUBELET_EXPRESSION_FAILED,
    Severity.ERROR,
    EC2NODECLASS,
    "From Karpenter 1.15 with the NodeClassCEL gate on, Karpenter evaluates the kubelet expressions for every "
    "instance type of the region; one that fails on any of them (division by zero, integer overflow, a "
    "non-finite double, a negative reservation, a maxPods outside 0..2147483647) makes the class "
    "ValidationSucceeded=False (KubeletExpressionEvaluationFailed), and no node launches. Good: "
    '"max(70, vcpus * 10)". Bad: "memory_mib / (default_enis - 2)" on the types with two ENIs.',
    "Make the expression total: guard divisors (x > 0 ? a / x : a), keep int arithmetic within int64, clamp with max/min.",
    since=Release((1, 15)),
)
_live(
    KUBELET_EXPRESSION_UNUSABLE,
    Severity.WARNING,
    EC2NODECLASS,
    "A kubelet expression Karpenter accepts gives, on instance types the class's NodePools launch, a value no "
    "node can use: maxPods 0, above EKS's 250, or above 110 on fewer than 30 vCPUs; a kubeReserved or "
    'systemReserved cpu or memory at least the type\'s own. Good: "min(max_pods, 110)". Bad: kubeReserved '
    'memory "memory_mib" (all of it).',
    "Scale the value with the type (memory_mib / 10, vcpus * 10) and bound it with min/max, or narrow the NodePool's instance types.",
    since=Release((1, 15)),
)
