"""The ``KarpenterController`` component: Karpenter's AWS side for an existing EKS cluster.

It creates the node role (its policies, optional instance profile, EKS access entry), the controller
role with its policy documents and its trust (EKS Pod Identity association or IRSA), the interruption
queue with its TLS-only policy and five EventBridge rules, and optionally the Karpenter Helm release.
Every document comes from :mod:`karpenter_gitops.controller`; this module only registers resources.

Before it registers anything, it runs the ``controller/`` coherence rules over the stack's NodeClasses
and NodePools and compares the CNI policy with the cluster's real IP family: a problem is an
``InputError`` in preview, and nothing is created.
"""

import json
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from karpenter_gitops.app import stack
from karpenter_gitops.controller import coherence, iam
from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Observation, Source
from karpenter_gitops.core.inputs import (
    ACCESS_CREATE,
    CONTROLLER_KEY,
    CONTROLLER_KIND,
    IPV6,
    POD_IDENTITY,
    ControllerSettings,
    Inputs,
)
from karpenter_gitops.core.model import CAPACITYBUFFER_API
from karpenter_gitops.rules import controller as controller_rules
from karpenter_gitops_pulumi import arguments
from karpenter_gitops_pulumi.errors import one_line_errors, refuse_errors

_BLOCK = Source(stack.SOURCE, stack_key=CONTROLLER_KEY)
QUEUE_TARGET_ID = "KarpenterInterruptionQueueTarget"
# Types of the custom resources whose CRDs the karpenter-crd chart installs (CapacityBuffer's among them from 1.14).
KARPENTER_CUSTOM_RESOURCES = ("kubernetes:karpenter", f"kubernetes:{CAPACITYBUFFER_API}:")


class KarpenterControllerArgs(TypedDict):
    """Karpenter's AWS side for one cluster, and the objects that must fit it."""

    cluster_name: str
    """Name of the existing EKS cluster."""
    settings: NotRequired[dict[str, Any]]
    """The controller block, spelled as the stack's ``karpenter-gitops:controller`` (camelCase); parsed strictly."""
    node_classes: NotRequired[dict[str, dict[str, Any]]]
    """EC2NodeClass specs by name: the roles they name join ``iam:PassRole``, and they are checked for coherence."""
    node_pools: NotRequired[dict[str, dict[str, Any]]]
    """NodePool specs by name: a pool allowing spot requires the interruption queue."""
    karpenter_version: NotRequired[str]
    """The Karpenter release the rules are judged for, e.g. "1.15"."""
    feature_gates: NotRequired[dict[str, bool]]
    """The cluster's feature gates (``karpenter-gitops:cluster.featureGates``): the Helm release runs with them."""
    policy: NotRequired[dict[str, Any]]
    """The stack's policy block (``karpenter-gitops:policy``): severities and switched-off rules apply here too."""


class KarpenterController(pulumi.ComponentResource):
    """IAM, access entry, interruption queue and (optionally) the Helm release of Karpenter."""

    node_role_name: pulumi.Output[str]
    """The node role's name: what an EC2NodeClass's ``role`` takes."""
    node_role_arn: pulumi.Output[str]
    """The node role's ARN."""
    instance_profile_name: pulumi.Output[str | None]
    """The instance profile's name, when one is created: what an EC2NodeClass's ``instanceProfile`` takes."""
    controller_role_arn: pulumi.Output[str]
    """The controller's role ARN."""
    queue_name: pulumi.Output[str | None]
    """The interruption queue's name (the chart's ``settings.interruptionQueue``), when enabled."""
    queue_arn: pulumi.Output[str | None]
    """The interruption queue's ARN, when enabled."""

    @one_line_errors
    def __init__(self, name: str, args: KarpenterControllerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        args = arguments.read(args, KarpenterControllerArgs, f"KarpenterController {name!r}")  # type: ignore[assignment]
        super().__init__("karpenter-gitops:index:KarpenterController", name, None, opts)
        inputs, release = _judged(args)
        settings = inputs.controller
        cluster = aws.eks.get_cluster(name=settings.cluster_name, opts=pulumi.InvokeOptions(parent=self))
        ip_family = next((c.ip_family for c in cluster.kubernetes_network_configs or ()), None)
        problem = coherence.cni_problem(settings, ip_family)
        if problem:
            observed = Observation(controller_rules.CNI_IP_FAMILY, CONTROLLER_KIND, "controller", problem, _BLOCK)
            refuse_errors(stack.judged(inputs, release, [observed]), CONTROLLER_KEY)
        account = iam.Account.from_cluster_arn(cluster.arn)
        given = iam.names(settings)
        child = pulumi.ResourceOptions(parent=self)

        node_role, self.access_entry, profile = self._node_role(name, settings, account, child)
        class_roles = [nc.spec.role for nc in inputs.node_classes if nc.spec.role]
        roles = iam.pass_roles(settings, class_roles)
        controller_role = self._controller_role(name, settings, iam.controller_statements(settings, account, roles), child)
        queue = self._interruption_queue(name, settings, account, child) if given.queue else None
        identity = (
            [
                aws.eks.PodIdentityAssociation(
                    f"{name}-pod-identity",
                    cluster_name=settings.cluster_name,
                    namespace=settings.namespace,
                    service_account=settings.service_account,
                    role_arn=controller_role.arn,
                    opts=child,
                )
            ]
            if settings.identity == POD_IDENTITY
            else []
        )
        waits = [*identity, *([queue] if queue else [])]
        self.release = self._release(name, settings, cluster, controller_role, waits, args.get("feature_gates"))
        self.instance_profile = profile
        self.settings = settings
        self.node_role_name = node_role.name
        self.node_role_arn = node_role.arn
        self.instance_profile_name = profile.name if profile else pulumi.Output.from_input(None)
        self.controller_role_arn = controller_role.arn
        self.queue_name = queue.name if queue else pulumi.Output.from_input(None)
        self.queue_arn = queue.arn if queue else pulumi.Output.from_input(None)
        self.register_outputs(
            {
                "nodeRoleName": self.node_role_name,
                "nodeRoleArn": self.node_role_arn,
                "instanceProfileName": self.instance_profile_name,
                "controllerRoleArn": self.controller_role_arn,
                "queueName": self.queue_name,
                "queueArn": self.queue_arn,
            }
        )

    def _release(self, name, settings, cluster, controller_role, waits, gates) -> k8s.helm.v3.Release | None:
        """Karpenter's CRDs (the ``karpenter-crd`` chart, so an upgrade upgrades them), then the controller
        with ``skip_crds`` (its chart's copies would be installed once and never again)."""
        if not settings.helm_version:
            return None
        crds = k8s.helm.v3.Release(
            f"{name}-crds",
            name="karpenter-crd",
            chart=iam.CRD_CHART,
            version=settings.helm_version,
            namespace=settings.namespace,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return k8s.helm.v3.Release(
            f"{name}-helm",
            name="karpenter",
            chart=iam.CHART,
            version=settings.helm_version,
            namespace=settings.namespace,
            skip_crds=True,
            values=iam.helm_values(settings, cluster.endpoint, controller_role.arn, gates),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[crds, *waits]),
        )

    @staticmethod
    def _node_role(
        name: str, settings: ControllerSettings, account: iam.Account, child: pulumi.ResourceOptions
    ) -> tuple[aws.iam.Role, aws.eks.AccessEntry, aws.iam.InstanceProfile | None]:
        role = aws.iam.Role(
            f"{name}-node-role", name=settings.node_role_name, assume_role_policy=json.dumps(iam.node_role_trust()), opts=child
        )
        for short, arn in iam.node_managed_policies(settings, account.partition).items():
            aws.iam.RolePolicyAttachment(f"{name}-node-role-{short}", role=role.name, policy_arn=arn, opts=child)
        if settings.ip_family == IPV6:
            aws.iam.RolePolicy(
                f"{name}-node-role-cni-ipv6",
                role=role.name,
                policy=json.dumps(iam.ipv6_cni_policy(account.partition)),
                opts=child,
            )
        entry = aws.eks.AccessEntry(
            f"{name}-node-access-entry",
            cluster_name=settings.cluster_name,
            principal_arn=role.arn,
            type=settings.access_entry_type,
            opts=child,
        )
        for other in settings.node_roles:
            if other.access_entry == ACCESS_CREATE:
                aws.eks.AccessEntry(
                    f"{name}-access-entry-{other.name.replace('/', '-')}",
                    cluster_name=settings.cluster_name,
                    principal_arn=account.role_arn(other.name),
                    type=settings.access_entry_type,
                    opts=child,
                )
        profile = (
            aws.iam.InstanceProfile(f"{name}-instance-profile", name=settings.instance_profile_name, role=role.name, opts=child)
            if settings.create_instance_profile
            else None
        )
        return role, entry, profile

    @staticmethod
    def _controller_role(
        name: str, settings: ControllerSettings, statements: list[dict[str, Any]], child: pulumi.ResourceOptions
    ) -> aws.iam.Role:
        given = iam.names(settings)
        role = aws.iam.Role(
            f"{name}-controller-role",
            name=given.controller_role,
            assume_role_policy=json.dumps(iam.controller_trust(settings)),
            opts=child,
        )
        for index, doc in enumerate(iam.split_documents(statements)):
            policy = aws.iam.Policy(
                f"{name}-controller-policy-{index + 1}", name=given.policy(index), policy=json.dumps(doc), opts=child
            )
            aws.iam.RolePolicyAttachment(
                f"{name}-controller-policy-{index + 1}-attachment", role=role.name, policy_arn=policy.arn, opts=child
            )
        return role

    @staticmethod
    def _interruption_queue(
        name: str, settings: ControllerSettings, account: iam.Account, child: pulumi.ResourceOptions
    ) -> aws.sqs.Queue:
        given = iam.names(settings)
        encryption = (
            {"kms_master_key_id": settings.kms_key_arn, "kms_data_key_reuse_period_seconds": 300}
            if settings.kms_key_arn
            else {"sqs_managed_sse_enabled": True}
        )
        queue = aws.sqs.Queue(
            f"{name}-interruption-queue",
            name=given.queue,
            message_retention_seconds=iam.QUEUE_RETENTION_SECONDS,
            **encryption,
            opts=child,
        )
        aws.sqs.QueuePolicy(
            f"{name}-interruption-queue-policy",
            queue_url=queue.url,
            policy=json.dumps(iam.queue_policy(iam.queue_arn(settings, account))),
            opts=child,
        )
        for event, rule_name in given.rules.items():
            rule = aws.cloudwatch.EventRule(
                f"{name}-{event}", name=rule_name, event_pattern=json.dumps(iam.event_pattern(event)), opts=child
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{event}-target", rule=rule.name, arn=queue.arn, target_id=QUEUE_TARGET_ID, opts=child
            )
        return queue

    def node_class_wiring(self, args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
        """A transformation for the Fleet's components. Their Karpenter custom resources (classes, pools, overlays,
        buffers) wait for the Helm release (the CRDs) and the node role's access entry (nodes must be able to
        join); a class naming this controller's node role or instance profile takes it from the resource, by
        object, so its reconciliation and custom resource also wait for the role or profile."""
        is_custom_resource = args.type_.startswith(KARPENTER_CUSTOM_RESOURCES)
        if not is_custom_resource and args.type_ != "pulumi-python:dynamic/karpenter-gitops:Reconciliation":
            return None
        spec = args.props.get("spec")
        props = args.props
        if isinstance(spec, dict):
            wired = dict(spec)
            if spec.get("role") == self.settings.node_role_name:
                wired["role"] = self.node_role_name
            if self.instance_profile is not None and spec.get("instanceProfile") == self.settings.instance_profile_name:
                wired["instanceProfile"] = self.instance_profile_name
            props = {**args.props, "spec": wired}
        waits_for = [r for r in (self.release, self.access_entry) if r is not None] if is_custom_resource else []
        return pulumi.ResourceTransformationResult(
            props, pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(depends_on=waits_for))
        )


def _judged(args: KarpenterControllerArgs) -> tuple[Inputs, versions.Release]:
    """The stack's objects and release, after the controller rules found no error."""
    cluster = {
        "name": args["cluster_name"],
        **({"karpenterVersion": args["karpenter_version"]} if args.get("karpenter_version") else {}),
    }
    inputs, release = stack.load_inputs(
        cluster, args.get("node_classes") or {}, args.get("node_pools") or {}, args.get("policy"), args.get("settings") or {}
    )
    refuse_errors(stack.controller_findings(inputs, release), CONTROLLER_KEY)
    return inputs, release
