"""Everything one run reads, as plain immutable data: objects, cluster facts, policy, waivers, controller.

:mod:`karpenter_gitops.load` builds these from files, stack config or Pulumi values; every layer
above reads them. Nothing here decides anything: the rules judge the objects, and the judge
applies the policy settings and waivers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Waiver as Waiver  # declared beside Finding, which carries inline ones

if TYPE_CHECKING:  # annotations only: the CLI reads this module's constants before it needs the models
    from karpenter_gitops.core.findings import Observation, Severity
    from karpenter_gitops.core.model import AMISelectorTerm, CapacityBuffer, EC2NodeClass, NodeOverlay, NodePool

NAMESPACE = "karpenter-gitops"


@dataclass(frozen=True)
class Cluster:
    """The cluster a stack file describes: its name, Kubernetes version, Karpenter release and the
    feature gates that release runs with."""

    name: str | None = None
    kubernetes: versions.Kubernetes | None = None
    release: versions.Release | None = None
    feature_gates: frozenset[str] = frozenset()  # the gates switched on; a gate not named is off

    def gate(self, name: str) -> bool:
        """Whether the Karpenter feature gate ``name`` is on."""
        return name in self.feature_gates


# --- policy -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleSetting:
    """A stack's setting for one rule: switched off, or another severity."""

    enabled: bool = True
    severity: Severity | None = None


@dataclass(frozen=True)
class PolicySettings:
    """The ``karpenter-gitops:policy`` block (or the policy pack's config).

    ``params`` holds the tunable values rules declare (``maxHopLimit``...); a rule reads its own
    through :meth:`karpenter_gitops.rules.registry.Context.param`, which falls back to the default
    the rule declares. ``origins`` says where each param was set (``set by the stack in
    stacks/Pulumi.prod.yaml``, ``set by the policy file policies/karpenter.yaml``, ``set by the pack
    config``), so a message can name it rather than speak of a stack there may not be.
    """

    production: bool = False
    params: Mapping[str, Any] = field(default_factory=dict)
    rules: Mapping[str, RuleSetting] = field(default_factory=dict)
    origins: Mapping[str, str] = field(default_factory=dict)

    def over(self, base: PolicySettings) -> PolicySettings:
        """These settings laid over ``base`` key by key: a param or rule set here wins, the rest is base's."""
        return PolicySettings(
            self.production or base.production,
            {**base.params, **self.params},
            {**base.rules, **self.rules},
            {**base.origins, **self.origins},
        )


DEFAULT_WAIVERS = Path("karpenter_gitops_policies/waivers.yaml")  # the waiver file a --policy run reads when there is one


# --- controller block -----------------------------------------------------------------------

CONTROLLER_KEY = f"{NAMESPACE}:controller"
CONTROLLER_KIND = "KarpenterController"  # the kind of findings about the controller block itself
POD_IDENTITY, IRSA = "podIdentity", "irsa"
IPV4, IPV6 = "ipv4", "ipv6"
ACCESS_ENTRY_TYPES = ("EC2_LINUX", "EC2_WINDOWS")
ACCESS_CREATE, ACCESS_EXISTING = "create", "existing"
ECR_READ_ONLY, ECR_PULL_ONLY = "readOnly", "pullOnly"
OIDC_PROVIDER_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:oidc-provider/(.+)$")


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
        match = OIDC_PROVIDER_ARN.match(self.oidc_provider_arn or "")
        return match.group(1) if match else None

    def role_of_profile(self, profile: str) -> str | None:
        """The role inside an instance profile this block knows about."""
        if self.instance_profile_name == profile:
            return self.node_role_name
        return next((r.name for r in self.node_roles if profile in r.instance_profiles), None)

    def has_access_entry(self, role: str) -> bool:
        """Whether the stack creates, or says it already has, an EKS access entry for ``role`` (path ignored)."""
        known = {self.node_role_name, *(r.name for r in self.node_roles)}
        return bare_role(role) in {bare_role(name) for name in known}


def bare_role(role: str) -> str:
    """A role name without its IAM path, as access entries and instance profiles see it."""
    return role.rsplit("/", 1)[-1]


# --- the whole input ------------------------------------------------------------------------


@dataclass(frozen=True)
class Inputs:
    """Everything one run reads: the objects, the cluster facts and what loading observed."""

    node_classes: tuple[EC2NodeClass, ...] = ()
    node_pools: tuple[NodePool, ...] = ()
    cluster: Cluster = field(default_factory=Cluster)
    #: Schema and block problems seen while loading, judged with the rest.
    observations: tuple[Observation, ...] = ()
    notes: tuple[str, ...] = ()
    policy: PolicySettings = field(default_factory=PolicySettings)
    waivers: tuple[Waiver, ...] = ()
    #: ``karpenter-gitops:amiSources``: per class, the selector its pinned ``id`` terms were resolved from.
    ami_sources: Mapping[str, tuple[AMISelectorTerm, ...]] = field(default_factory=dict)
    #: ``karpenter-gitops:controller``: Karpenter's AWS side, when the stack creates it.
    controller: ControllerSettings | None = None
    #: EC2NodeClass names the rest of the repository defines (``validate --context``); None: not given.
    context_node_classes: frozenset[str] | None = None
    node_overlays: tuple[NodeOverlay, ...] = ()
    capacity_buffers: tuple[CapacityBuffer, ...] = ()
    #: Files passed over as no Kubernetes YAML (a Helm template, CloudFormation), each ``"file: why"``.
    skipped: tuple[str, ...] = ()
    #: Folders below a named one not read at all (unreadable, or reached again through a link), each
    #: ``"folder: why"``: noted after the skipped files, not counted among them.
    passed_over: tuple[str, ...] = ()
    #: EC2NodeClass names, by scope, of the run's other parts (``validate`` loads and judges a large run in
    #: parts, see :mod:`karpenter_gitops.app.validate_pipeline`).
    node_classes_elsewhere: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def with_gates(self, gates: Mapping[str, bool]) -> Inputs:
        """These inputs on a cluster whose named feature gates are set as given (``--feature-gates``
        over the stack's ``cluster.featureGates``)."""
        if not gates:
            return self
        on = (self.cluster.feature_gates | {g for g, value in gates.items() if value}) - {
            g for g, value in gates.items() if not value
        }
        return replace(self, cluster=replace(self.cluster, feature_gates=frozenset(on)))

    @property
    def objects(self) -> tuple[EC2NodeClass | NodePool | NodeOverlay | CapacityBuffer, ...]:
        return self.node_classes + self.node_pools + self.node_overlays + self.capacity_buffers

    @cached_property
    def _node_classes_by_scope(self) -> dict[str, dict[str, EC2NodeClass]]:
        scopes: dict[str, dict[str, EC2NodeClass]] = {}
        for node_class in self.node_classes:
            scopes.setdefault(node_class.source.scope, {}).setdefault(node_class.name, node_class)
        return scopes

    @cached_property
    def node_class_names_by_scope(self) -> dict[str, frozenset[str]]:
        """Every scope's EC2NodeClass names (:meth:`node_class_names`)."""
        names = {scope: frozenset(classes) for scope, classes in self._node_classes_by_scope.items()}
        for scope, elsewhere in self.node_classes_elsewhere.items():
            names[scope] = names.get(scope, frozenset()) | elsewhere
        return names

    def node_class_names(self, scope: str) -> frozenset[str]:
        """Names a NodePool of ``scope`` can reference (see :attr:`Source.scope`)."""
        return self.node_class_names_by_scope.get(scope, frozenset())

    def node_class(self, name: str, scope: str | None = None) -> EC2NodeClass | None:
        """The class ``name`` in ``scope``, or in any scope when none is given."""
        scopes = [self._node_classes_by_scope.get(scope, {})] if scope is not None else self._node_classes_by_scope.values()
        return next((classes[name] for classes in scopes if name in classes), None)
