"""The ``NodeClass`` component: a reconciled, validated EC2NodeClass custom resource.

No ``from __future__ import annotations`` in the component modules: the component provider
reads the ``args`` annotations at run time to infer the schema.
"""

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from karpenter_gitops.app import analyze, stack
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import NAMESPACE
from karpenter_gitops.core.model import EC2NODECLASS, EC2NODECLASS_API
from karpenter_gitops_pulumi import arguments, manifests
from karpenter_gitops_pulumi.errors import one_line_errors
from karpenter_gitops_pulumi.identity import taken_import, with_the_other_forms_alias
from karpenter_gitops_pulumi.reconciliation import Reconciliation

# Written by the Karpenter controller, never by us (``pkg/controllers/nodeclass/`` of
# github.com/aws/karpenter-provider-aws: the hash annotations, the finalizer, the status). With server-side
# apply Pulumi owns only the fields it sends; ignoring these also keeps refreshes diff-free.
CONTROLLER_OWNED = [
    'metadata.annotations["karpenter.k8s.aws/ec2nodeclass-hash"]',
    'metadata.annotations["karpenter.k8s.aws/ec2nodeclass-hash-version"]',
    "metadata.finalizers",
    "status",
]
# The managed policies a Karpenter node role needs (Karpenter's getting-started template).
NODE_ROLE_POLICIES = {
    "worker": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "cni": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "ecr": "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
    "ssm": "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
}
EC2_ASSUME_ROLE = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    }
)


class ClusterArgs(TypedDict):
    """The cluster facts a reconciliation needs (the stack's ``karpenter-gitops:cluster`` block)."""

    name: NotRequired[str]
    """EKS cluster name."""
    kubernetes_version: NotRequired[str]
    """Kubernetes minor version, e.g. "1.32"; picks the AMI an alias resolves to."""
    karpenter_version: NotRequired[str]
    """Karpenter release the cluster runs, e.g. "1.15"; picks the rules and fields that apply."""
    feature_gates: NotRequired[dict[str, bool]]
    """The feature gates that Karpenter runs with, e.g. {"NodeClassCEL": True}; a gate not named is off."""


CLUSTER_KEY = f"{NAMESPACE}:cluster"


def cluster_of(given: Any, where: str) -> ClusterArgs:
    """The cluster a component is for: the fields its args give, the others from the stack's
    ``karpenter-gitops:cluster``, so a program need not repeat the stack. The stack's block is read as
    ``validate --stack`` reads it, so a mistake in it gets the same line; so are the waivers the stack names."""
    waivers_named_by_the_stack()
    try:
        block = pulumi.Config(NAMESPACE).get_object("cluster")
    except pulumi.ConfigTypeError:
        raise InputError("is not a JSON object", CLUSTER_KEY, hint='e.g. {"name": "demo", "kubernetesVersion": "1.32"}') from None
    if block is not None:
        stack.load_inputs(block, {}, {})
    defaults = arguments.read(block, ClusterArgs, CLUSTER_KEY) if block is not None else {}
    own = arguments.read(given, ClusterArgs, where) if given is not None else {}
    return ClusterArgs(**{**defaults, **{field: value for field, value in own.items() if value is not None}})  # type: ignore[typeddict-item]


def waivers_named_by_the_stack() -> None:
    """The waivers the policy pack will read for this stack (``karpenter-gitops:waivers``, the file
    ``$KARPENTER_GITOPS_WAIVERS`` names, the project's default file), read when the program runs: a file
    named but missing or malformed stops the preview in one line, as ``validate --stack --policy`` exits 2 on
    it, where the pack alone could only warn that nothing is waived. Relative paths are the project's, the
    program's working directory."""
    _readable(os.environ.get(analyze.WAIVER_FILE_ENV), pulumi.Config(NAMESPACE).get("waivers"), Path.cwd())


@functools.lru_cache(maxsize=4)
def _readable(named: str | None, stack_value: str | None, project: Path) -> None:
    analyze.stack_waivers(named, stack_value, project)  # each component asks; the files are read once


def cluster_block(cluster: ClusterArgs | None) -> dict[str, Any]:
    """``ClusterArgs`` spelled as the stack file spells the cluster block."""
    return {arguments.camel(key): value for key, value in (cluster or {}).items() if value is not None}


# The stack keys that hold specs: ``pulumi config set --secret --path`` on any part marks the whole key secret.
SPEC_KEYS = ("nodeClasses", "nodePools", "nodeOverlays", "capacityBuffers")


def stack_specs_are_secret() -> bool:
    """Whether any of the stack's ``karpenter-gitops`` spec keys is secret config.

    ``config.require_object`` of a secret key hands the program plain data, so a component cannot tell which
    value came from it: when any spec key of the stack is secret, every spec a component is given is kept
    secret (what it costs is only that the echoes of non-secret specs are encrypted in state too)."""
    return any(pulumi.runtime.is_config_secret(f"{NAMESPACE}:{key}") for key in SPEC_KEYS)


def specs_are_secret(flag: Any) -> bool:
    """Whether the specs must be kept secret as a whole: the ``secret`` flag, or secret stack config."""
    return bool(flag) or stack_specs_are_secret()


def when_known(spec: Any, shape: Callable[[Any], Any]) -> Any:
    """``shape(spec)``; for a spec that is an Output as a whole (``require_secret_object``), once it is known."""
    return spec.apply(shape) if isinstance(spec, pulumi.Output) else shape(spec)


def kept_secret(value: Any, secret: bool) -> Any:
    """``value`` as a secret Output when it must stay secret (:func:`specs_are_secret`); a value holding Outputs
    as one Output, secret exactly when one of them is, so the whole registered spec is encrypted, not only the
    secret field (a provider that accepts no secrets marks an echoed input secret only by its top-level key)."""
    if secret:
        return pulumi.Output.secret(value)
    return pulumi.Output.from_input(value) if holds_outputs(value) else value


class NodeClassArgs(TypedDict):
    """One EC2NodeClass; the component's resource name is its ``metadata.name``."""

    spec: dict[str, Any]
    """The EC2NodeClass spec, spelled as the CRD (camelCase)."""
    node_pools: NotRequired[dict[str, dict[str, Any]]]
    """Specs of the NodePools using this class, by name: validated with it and given an AMI per instance type."""
    cluster: NotRequired[ClusterArgs]
    """The cluster the class is for."""
    pin_amis: NotRequired[bool]
    """Pin custom-AMI selectors to the reconciled ids, so AMI roll-outs happen only through a reviewed
    update; alias classes are pinned by their version (``@latest`` is refused)."""
    policy: NotRequired[dict[str, Any]]
    """The stack's policy block (``karpenter-gitops:policy``): severities, switched-off rules and rule
    parameters, applied by the check as ``validate`` applies them."""
    secret: NotRequired[bool]
    """Keep the specs secret in every registration, output and state entry. Rarely needed: specs holding
    Outputs (``require_secret_object``) and specs read while a ``karpenter-gitops`` spec key is secret stack
    config are kept secret without it."""
    create_node_role: NotRequired[bool]
    """Create the node IAM role and instance profile; the spec then names the profile (by name, never ARN)."""
    node_overlays: NotRequired[dict[str, dict[str, Any]]]
    """The cluster's NodeOverlay specs by name: the reconciliation applies them to this class's pools as
    ``plan`` does (which types they reprice, what each pool launches first)."""
    workloads: NotRequired[list[dict[str, Any]]]
    """Workload objects (Deployments, Pods, DaemonSets, ...): the reconciliation forecasts what Karpenter would
    launch for them over this class's NodePools and what it costs (the ``forecast`` output)."""


@dataclass(frozen=True)
class PoolJudging:
    """What a ``NodePool`` built on a class is judged with: the class's name and applied spec, its cluster and
    policy, and the pool specs its reconciliation judges already (``NodeClassArgs.node_pools``, by name)."""

    name: str
    spec: Any
    cluster: dict[str, Any]
    policy: dict[str, Any] | None
    judged: dict[str, Any]

    def judges(self, pool: str, spec: Any) -> bool:
        """Whether the class's reconciliation judges this very spec of ``pool`` (the same object, or equal
        plain values), so the pool need not be judged again."""
        given = self.judged.get(pool)
        if given is spec:
            return True
        return not holds_outputs(spec) and not holds_outputs(given) and given == spec


def holds_outputs(value: Any) -> bool:
    """Whether ``value`` holds an Output anywhere: it can be judged only once the Outputs are known."""
    if isinstance(value, pulumi.Output):
        return True
    if isinstance(value, dict):
        return any(holds_outputs(item) for item in value.values())
    return isinstance(value, (list, tuple)) and any(holds_outputs(item) for item in value)


def _needs_kubernetes_version(name: str, spec: Any, cluster: ClusterArgs) -> None:
    """Refuse an alias class whose cluster has no Kubernetes version: the AMI look-up needs it, and a
    preview would pass only for ``up`` to fail."""
    aliases = manifests.aliases(spec)
    if aliases and not cluster.get("kubernetes_version"):
        raise InputError(
            f"alias {aliases[0]!r} needs the cluster's Kubernetes version to find its AMIs",
            f"NodeClass {name!r}",
            hint=f"pulumi config set --path {CLUSTER_KEY}.kubernetesVersion 1.32, or pass "
            'NodeClassArgs(cluster=ClusterArgs(kubernetes_version="1.32"))',
        )


class NodeClass(pulumi.ComponentResource):
    """An EC2NodeClass applied only after the reconciliation accepted and resolved it."""

    node_class_name: pulumi.Output[str]
    """The EC2NodeClass's metadata.name."""
    ami_ids: pulumi.Output[list[str]]
    """AMI ids Karpenter will launch, newest first."""
    amis: pulumi.Output[list[dict[str, Any]]]
    """Resolved AMIs with the requirements each serves."""
    instance_profile: pulumi.Output[str]
    """The instance profile name nodes launch with."""
    conditions: pulumi.Output[list[dict[str, Any]]]
    """Predicted status conditions."""
    node_pools: pulumi.Output[dict[str, Any]]
    """Per NodePool: instance type to AMI id, and unserved instance types."""
    forecast: pulumi.Output[dict[str, Any]] | None
    """With workloads: per NodePool the NodeClaims Karpenter would launch, $/hour and $/month, the cost at its
    limits, and the pods that cannot be scheduled and why."""

    @one_line_errors
    def __init__(self, name: str, args: NodeClassArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        given = arguments.read(args, NodeClassArgs, f"NodeClass {name!r}")
        cluster = cluster_of(given.get("cluster"), f"NodeClass {name!r}")
        _needs_kubernetes_version(name, given["spec"], cluster)
        pin = given.get("pin_amis") and not manifests.pins_by_version(given["spec"], f"NodeClass {name!r}")
        opts, imported = taken_import(opts, name, EC2NODECLASS, f"NodeClass {name!r}")
        super().__init__("karpenter-gitops:index:NodeClass", name, None, with_the_other_forms_alias(opts))
        child = pulumi.ResourceOptions(parent=self)
        profile = self._node_role(name, child) if given.get("create_node_role") else None
        spec = when_known(given["spec"], lambda known: manifests.node_class_spec(known, profile.name if profile else None))
        node_pools = given.get("node_pools") or {}
        secret = specs_are_secret(given.get("secret"))
        reconciliation = Reconciliation(
            f"{name}-reconciliation",
            node_class_name=name,
            spec=kept_secret(spec, secret),
            node_pool_specs={
                pool: kept_secret(when_known(pool_spec, lambda known: manifests.node_pool_spec(known, name)), secret)
                for pool, pool_spec in node_pools.items()
            },
            cluster=cluster_block(cluster),
            policy=given.get("policy"),
            opts=child,
            # Whether an Output is secret is known only once it resolves, after the registration must say which
            # outputs to encrypt: the echoes of a spec holding any Output are encrypted.
            secret=secret or holds_outputs([given["spec"], node_pools, given.get("node_overlays")]),
            node_overlay_specs={
                overlay: kept_secret(overlay_spec, secret) for overlay, overlay_spec in (given.get("node_overlays") or {}).items()
            },
            workloads=given.get("workloads"),
        )
        self.pool_judging = PoolJudging(name, spec, cluster_block(cluster), given.get("policy"), dict(node_pools))
        self.ami_ids = reconciliation.amis.apply(lambda amis: list(dict.fromkeys(a["id"] for a in amis)))
        applied = (
            # a spec that is one Output is known only here: an alias class stays pinned by its version
            pulumi.Output.all(pulumi.Output.from_input(spec), self.ami_ids).apply(
                lambda a: a[0] if manifests.aliases(a[0]) else manifests.pinned(a[0], a[1])
            )
            if pin
            else spec
        )
        k8s.apiextensions.CustomResource(
            f"{name}-ec2nodeclass",
            api_version=EC2NODECLASS_API,
            kind=EC2NODECLASS,
            metadata={"name": name},
            spec=kept_secret(applied, secret),
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[reconciliation], ignore_changes=CONTROLLER_OWNED, import_=imported
            ),
        )
        self.node_class_name = pulumi.Output.from_input(name)
        self.amis = reconciliation.amis
        self.instance_profile = reconciliation.instanceProfile
        self.conditions = reconciliation.conditions
        self.node_pools = reconciliation.nodePools
        self.forecast = reconciliation.forecast if given.get("workloads") is not None else None
        self.register_outputs(
            {
                "nodeClassName": self.node_class_name,
                "amiIds": self.ami_ids,
                "amis": self.amis,
                "instanceProfile": self.instance_profile,
                "conditions": self.conditions,
                "nodePools": self.node_pools,
                **({"forecast": self.forecast} if self.forecast is not None else {}),
            }
        )

    @staticmethod
    def _node_role(name: str, child: pulumi.ResourceOptions) -> aws.iam.InstanceProfile:
        role = aws.iam.Role(f"{name}-node-role", assume_role_policy=EC2_ASSUME_ROLE, opts=child)
        for short, arn in NODE_ROLE_POLICIES.items():
            aws.iam.RolePolicyAttachment(f"{name}-node-role-{short}", role=role.name, policy_arn=arn, opts=child)
        return aws.iam.InstanceProfile(f"{name}-instance-profile", role=role.name, opts=child)
