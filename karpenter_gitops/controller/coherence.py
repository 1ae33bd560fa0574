"""Do the NodeClasses, NodePools and Karpenter's AWS side fit? Pure checks returning violations.

:mod:`karpenter_gitops.rules.controller` declares the rules these checks serve. They are asked
twice: about a stack's ``karpenter-gitops:controller`` block (the rules themselves), and about the
IAM documents and resources a stack really creates (the CrossGuard pack, through
:mod:`karpenter_gitops.app.pack_coherence`), which has no block to read.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from karpenter_gitops.controller import iam
from karpenter_gitops.core import labels
from karpenter_gitops.core.findings import Violation
from karpenter_gitops.core.inputs import CONTROLLER_KEY as KEY
from karpenter_gitops.core.inputs import IPV4, POD_IDENTITY, ControllerSettings
from karpenter_gitops.core.requirements import Requirements


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
        return Violation(
            f"{KEY}.identity",
            "the controller runs on Fargate, where EKS Pod Identity is not available",
            "set identity: irsa with the cluster's oidcProviderArn, or run the controller on EC2 nodes",
        )
    return None


def cni_problem(settings: ControllerSettings, cluster_ip_family: str | None) -> Violation | None:
    """The node role's CNI policy must match the cluster's real IP family (found by looking the cluster up)."""
    actual = (cluster_ip_family or IPV4).lower()
    if actual == settings.ip_family:
        return None
    policy = "AmazonEKS_CNI_Policy" if settings.ip_family == IPV4 else "the IPv6 CNI policy"
    return Violation(
        f"{KEY}.ipFamily",
        f"cluster {settings.cluster_name!r} is {actual} but {KEY}.ipFamily is {settings.ip_family}: the node role "
        f"would get {policy} and pods would get no addresses",
        f"set {KEY}.ipFamily: {actual}",
    )


def kms_policy_problem(key_policy: Mapping[str, Any]) -> str | None:
    """A customer-managed queue key must let EventBridge encrypt for it, or events are silently dropped."""
    needed = {"kms:GenerateDataKey", "kms:Decrypt"}
    for item in iam.statements(key_policy):
        if item.get("Effect") != "Allow" or "events.amazonaws.com" not in iam.services(item):
            continue
        needed = {a for a in needed if not any(fnmatch.fnmatchcase(a.lower(), g.lower()) for g in iam.statement_actions(item))}
    if not needed:
        return None
    return (
        f"the queue's KMS key policy does not allow events.amazonaws.com {', '.join(sorted(needed))}: EventBridge "
        f"cannot deliver interruption events"
    )


def fargate_selects(selectors: Iterable[Mapping[str, Any]], namespace: str) -> bool:
    """Whether a Fargate profile's selectors take pods of ``namespace`` (labels may narrow it; assume they match)."""
    return any(fnmatch.fnmatchcase(namespace, s.get("namespace") or "") for s in selectors)


# --- on the resources a stack creates ------------------------------------------------------------
# The policy pack sees no controller block, only the roles, profiles and policies themselves.


@dataclass(frozen=True)
class Grants:
    """The controller's IAM policy documents that a stack creates."""

    documents: Sequence[Mapping[str, Any]]
    complete: bool  # False while a preview cannot know one of them: it may allow what the others do not

    @cached_property
    def pass_role(self) -> list[str]:
        """The resources the documents grant iam:PassRole on; none: the stack does not create the controller's IAM."""
        return [resource for doc in self.documents for resource in iam.allowed_resources(doc, "iam:PassRole")]

    def reads_queue(self) -> bool:
        return any(iam.allowed_resources(doc, "sqs:ReceiveMessage") for doc in self.documents)


def profile_without_role(profile: str, role: str | None) -> Violation | None:
    """An instance profile that holds no role: the nodes launched with it have no credentials."""
    if role:
        return None
    return Violation(
        "spec.instanceProfile", f"instance profile {profile!r} holds no role, so nodes boot without credentials and never join"
    )


def untrusted_node_role(role: str, trust_policy: Mapping[str, Any]) -> Violation | None:
    """A node role whose trust policy does not let EC2 assume it."""
    if iam.trusts_ec2(trust_policy):
        return None
    return Violation("spec.role", f"node role {role!r} does not let ec2.amazonaws.com assume it, so instances get no credentials")


def pass_role_denied(grants: Grants, role: str) -> Violation | None:
    """A node role the controller's created policies do not let it pass (silent while one is unknown)."""
    if not grants.complete or iam.may_pass(grants.pass_role, role):
        return None
    return Violation(
        "spec", f"the controller's policies do not allow iam:PassRole on {role!r}, so launches fail with UnauthorizedOperation"
    )


def entry_roles(principals: Iterable[str | None]) -> frozenset[str]:
    """The role names EKS access entries are for, from their principal ARNs."""
    return frozenset(str(p or "").rsplit("/", 1)[-1] for p in principals)


def missing_access_entry(role: str, entries: Collection[str]) -> Violation | None:
    """A node role (a name, or ``path/name``) with none of the stack's access entries."""
    if role.rsplit("/", 1)[-1] in entries:
        return None
    return Violation("spec.role", f"node role {role!r} has no EKS access entry in the stack, so its nodes cannot join")


def spot_queue_unread(grants: Grants, pool) -> Violation | None:
    """A spot pool while the controller's created policies read no interruption queue."""
    if not (grants.pass_role and grants.complete) or grants.reads_queue() or not allows_spot(pool):
        return None
    return Violation("spec.template.spec.requirements", "allows spot but the controller reads no interruption queue")
