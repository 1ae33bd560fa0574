"""Do the NodeClasses, NodePools and Karpenter's AWS side fit? Pure checks returning violations.

:mod:`karpenter_gitops.rules.controller` declares the rules these checks serve; the CrossGuard
pack applies the same checks to the IAM documents and resources a stack really creates.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from karpenter_gitops.controller.iam import _actions
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
        return Violation(f"{KEY}.identity", "the controller runs on Fargate, where EKS Pod Identity is not available",
                         "set identity: irsa with the cluster's oidcProviderArn, or run the controller on EC2 nodes")
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
            f"cannot deliver interruption events")

def fargate_selects(selectors: Iterable[Mapping[str, Any]], namespace: str) -> bool:
    """Whether a Fargate profile's selectors take pods of ``namespace`` (labels may narrow it; assume they match)."""
    return any(fnmatch.fnmatchcase(namespace, s.get("namespace") or "") for s in selectors)
