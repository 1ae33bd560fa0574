"""Controller coherence rules (``controller/``): do the NodeClasses, NodePools and Karpenter's AWS side fit?

They judge a stack that creates the controller (a ``karpenter-gitops:controller`` block) and are
silent otherwise. Three are checks per object; two judge the block itself while it loads (like the
schema rules), and two need facts only a preview sees: the cluster's IP family (the component looks
the cluster up) and a customer-managed key's policy (the policy pack reads it from the stack). The
logic is in :mod:`karpenter_gitops.controller.coherence`; the CrossGuard ``karpenter-iam-coherence`` stack
policy applies the same functions to the IAM documents and resources a stack really creates.

Examples carry a ``controller`` key: the block, for a stack whose cluster is named ``demo``.
"""

from __future__ import annotations

from karpenter_gitops.controller import coherence, iam
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.inputs import CONTROLLER_KIND, ControllerSettings
from karpenter_gitops.core.model import EC2NODECLASS, NODEPOOL
from karpenter_gitops.rules.registry import Context, Stage, rule

ERROR = Severity.ERROR
PASS_ROLE = "controller/pass-role"
ACCESS_ENTRY = "controller/access-entry"
SPOT_QUEUE = "controller/spot-interruption-queue"
QUEUE_KMS = "controller/queue-kms-eventbridge"
FARGATE_POD_IDENTITY = "controller/fargate-pod-identity"
NAME_LENGTH = "controller/name-length"
CNI_IP_FAMILY = "controller/cni-ip-family"
NODE_ROLE_TRUST = "controller/node-role-trust"
OWN_ROLE = {"nodeRoleName": "KarpenterNodeRole-demo"}  # the base example NodeClass's role


@rule(
    PASS_ROLE,
    ERROR,
    (EC2NODECLASS,),
    "The controller may pass every node role the NodeClasses launch with (iam:PassRole). Its policy lists the "
    "controller's node role, each role a NodeClass names and the declared nodeRoles; an instanceProfile is "
    "passable only when the stack says which role it holds. Otherwise launches fail with UnauthorizedOperation. "
    "[CT-02; cdk-eks-blueprints #1061, cdk-eks-karpenter #157, blueprints-addons #276]",
    "List the profile under karpenter-gitops:controller.nodeRoles.<role>.instanceProfiles, or use spec.role.",
    origin="ours",
    good=(
        {"controller": OWN_ROLE},
        {
            "controller": {**OWN_ROLE, "nodeRoles": {"Payments": {"instanceProfiles": ["Pay"]}}},
            "spec": {"role": None, "instanceProfile": "Pay"},
        },
    ),
    bad=({"controller": OWN_ROLE, "spec": {"role": None, "instanceProfile": "HandMadeProfile"}},),
)
def pass_role(obj, ctx: Context):
    settings = ctx.inputs.controller
    gap = settings and coherence.pass_role_gap(settings, obj.spec.role, obj.spec.instance_profile)
    if gap:
        yield gap


@rule(
    ACCESS_ENTRY,
    ERROR,
    (EC2NODECLASS,),
    "Every node role the NodeClasses use has an EKS access entry (type EC2_LINUX or EC2_WINDOWS) that this stack "
    "creates or declares as existing; without one nodes launch but never join the cluster. [CT-03; "
    "blueprints-addons #389]",
    "Use the controller's node role, or add the role under karpenter-gitops:controller.nodeRoles with "
    "accessEntry: create (or existing).",
    origin="ours",
    good=({"controller": OWN_ROLE}, {"controller": {"nodeRoles": {"KarpenterNodeRole-demo": {"accessEntry": "create"}}}}),
    bad=({"controller": {}}, {"controller": OWN_ROLE, "spec": {"role": "SomeOtherRole"}}),
)
def access_entry(obj, ctx: Context):
    settings = ctx.inputs.controller
    gap = settings and coherence.access_entry_gap(settings, obj.spec.role, obj.spec.instance_profile)
    if gap:
        yield gap


_SPOT = {
    "kind": NODEPOOL,
    "spec": {
        "template": {
            "spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]}]}
        }
    },
}


@rule(
    SPOT_QUEUE,
    ERROR,
    (NODEPOOL,),
    "A NodePool that allows spot needs the controller's interruption queue: without it Karpenter never hears the "
    "two-minute spot warning and the node's pods die with it. [NP-07]",
    "Enable karpenter-gitops:controller.interruptionQueue, or restrict the pool to on-demand.",
    origin="ours",
    good=(
        {**_SPOT, "controller": OWN_ROLE},
        {"kind": NODEPOOL, "controller": {**OWN_ROLE, "interruptionQueue": {"enabled": False}}},
    ),
    bad=({**_SPOT, "controller": {**OWN_ROLE, "interruptionQueue": {"enabled": False}}},),
)
def spot_interruption_queue(obj, ctx: Context):
    settings = ctx.inputs.controller
    gap = settings and coherence.spot_queue_gap(settings, obj)
    if gap:
        yield gap


def _block_rule(id: str, doc: str, fix: str, good: tuple, bad: tuple) -> None:
    """A rule on the controller block itself, observed while the block loads (see :func:`block_violations`)."""
    rule(id, ERROR, (CONTROLLER_KIND,), doc, fix, stage=Stage.LOAD, origin="ours", good=good, bad=bad)


def _judged_in_preview(id: str, doc: str, fix: str) -> None:
    """A rule needing a fact only the Pulumi layer has (a cluster look-up, a key policy in the stack)."""
    rule(id, ERROR, (CONTROLLER_KIND,), doc, fix, stage=Stage.PULUMI, origin="ours")


_block_rule(
    NAME_LENGTH,
    "The names derived from namePrefix fit AWS's limits: SQS queue 80, EventBridge rule 64, IAM role 64 characters. "
    "Names are refused, not truncated, so two clusters can never end up sharing a queue or a rule. "
    "[terraform-aws-eks #2311]",
    "Set a shorter karpenter-gitops:controller.namePrefix (default Karpenter-<cluster name>).",
    good=({"controller": {"namePrefix": "kp-demo"}},),
    bad=({"controller": {"namePrefix": "Karpenter-" + "a-rather-long-cluster-name-" * 2}},),
)
_block_rule(
    FARGATE_POD_IDENTITY,
    "A controller that runs on Fargate is trusted through IRSA: Fargate pods get no EKS Pod Identity "
    "credentials. [CT-04; terraform-aws-eks #3477, #3544]",
    "Set identity: irsa with the cluster's oidcProviderArn, or run the controller on EC2 nodes.",
    good=(
        {
            "controller": {
                "runsOnFargate": True,
                "identity": "irsa",
                "oidcProviderArn": "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-west-2.amazonaws.com/id/ABC",
            }
        },
    ),
    bad=({"controller": {"runsOnFargate": True}},),
)
_judged_in_preview(
    CNI_IP_FAMILY,
    "The node role's CNI policy matches the cluster's IP family: AmazonEKS_CNI_Policy on IPv4 clusters, the IPv6 "
    "CNI policy on IPv6 ones. Judged by the KarpenterController component against the cluster it looks up.",
    "Set karpenter-gitops:controller.ipFamily to the cluster's IP family.",
)
_judged_in_preview(
    QUEUE_KMS,
    "When the interruption queue is encrypted with a customer-managed KMS key, the key policy lets "
    "events.amazonaws.com use it (kms:GenerateDataKey, kms:Decrypt); otherwise EventBridge silently drops every "
    "event. Judged by the policy pack on the key policy in the stack. [CT-01; karpenter #7209, #3929]",
    "Add a key-policy statement allowing Service events.amazonaws.com kms:GenerateDataKey and kms:Decrypt, or use "
    "SQS-managed encryption (drop kmsKeyArn).",
)

rule(
    NODE_ROLE_TRUST,
    ERROR,
    (EC2NODECLASS,),
    "A node role the stack creates lets ec2.amazonaws.com assume it; otherwise instances boot without "
    "credentials and never join. Judged by the policy pack on the roles in the stack.",
    "Give the role a trust policy allowing Service ec2.amazonaws.com sts:AssumeRole.",
    stage=Stage.PULUMI,
    origin="ours",
)

# The rules the KarpenterController component runs before it creates anything.
OBJECT_RULES = (PASS_ROLE, ACCESS_ENTRY, SPOT_QUEUE)
BLOCK_RULES = (NAME_LENGTH, FARGATE_POD_IDENTITY)


def block_violations(settings: ControllerSettings) -> list[tuple[str, Violation]]:
    """Violations of the block on its own, by rule id (observed while loading, like the schema rules)."""
    found = [(NAME_LENGTH, v) for v in iam.name_problems(settings)]
    fargate = coherence.fargate_problem(settings)
    if fargate:
        found.append((FARGATE_POD_IDENTITY, fargate))
    return found
