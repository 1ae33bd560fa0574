"""The controller coherence rules on the resources a stack really creates: the policy pack's stack policies.

The pack never sees a ``karpenter-gitops:controller`` block, only the instance profiles, roles,
policies, access entries, queues, keys, Pod Identity associations and Fargate profiles a stack
creates. It reads them into a :class:`CreatedStack` of plain values, with :data:`PENDING` where a
preview cannot know one yet (the ARN or generated name of a resource not created); this module asks
:mod:`karpenter_gitops.controller` about them under the rules of
:mod:`karpenter_gitops.rules.controller`. A check that needs a pending value says nothing: it runs
at ``pulumi up``, where the engine analyses the stack again with every output known.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.controller import coherence, iam
from karpenter_gitops.core.findings import Observation, Source, Violation
from karpenter_gitops.core.inputs import CONTROLLER_KIND, Inputs
from karpenter_gitops.core.model import EC2NODECLASS, NODEPOOL
from karpenter_gitops.rules import controller as controller_rules
from karpenter_gitops.rules import live

PENDING = type("Pending", (), {"__repr__": lambda self: "PENDING", "__bool__": lambda self: False})()


@dataclass(frozen=True)
class Created:
    """A value read from a resource the stack creates (PENDING while unknown), and that resource's URN."""

    value: Any
    urn: str


@dataclass(frozen=True)
class Queue:
    """An SQS queue the stack creates."""

    name: str
    kms_key: Any  # the key id or ARN it is encrypted with
    urn: str


@dataclass(frozen=True)
class PodIdentity:
    """An EKS Pod Identity association the stack creates."""

    cluster: Any
    namespace: str
    service_account: Any
    urn: str


@dataclass(frozen=True)
class FargateProfile:
    """A Fargate profile the stack creates."""

    cluster: Any
    selectors: Any
    name: str


@dataclass(frozen=True)
class CreatedStack:
    """What the coherence rules read from the resources a stack creates."""

    profile_roles: Mapping[str, Created] = field(default_factory=dict)  # instance profile name -> the role it holds
    role_trusts: Mapping[str, Created] = field(default_factory=dict)  # role name -> its trust policy
    policies: Sequence[Any] = ()  # IAM policy documents, as JSON text or mappings
    entry_principals: Sequence[Any] = ()  # each EKS access entry's principal ARN
    key_policies: Mapping[str, Any] = field(default_factory=dict)  # KMS key ARN or id -> the key's policy
    queues: Sequence[Queue] = ()
    pod_identities: Sequence[PodIdentity] = ()
    fargate_profiles: Sequence[FargateProfile] = ()


def observations(stack: CreatedStack, inputs: Inputs) -> Iterator[Observation]:
    """Where the stack creates the node's IAM: each profile holds a role, each role trusts EC2; where it
    creates the controller's IAM too, the controller rules on the resources themselves."""
    grants = coherence.Grants(
        [iam.policy_document(doc) for doc in stack.policies if doc is not PENDING], PENDING not in stack.policies
    )
    entries = coherence.entry_roles(stack.entry_principals) if PENDING not in stack.entry_principals else None
    for node_class in inputs.node_classes:
        spec, name, urn = node_class.spec, node_class.name, node_class.source.file
        role_name = spec.role
        profile = stack.profile_roles.get(spec.instance_profile)
        if profile is not None:
            role_name = profile.value
            if role_name is PENDING:
                continue
            yield from _observed(
                live.INSTANCE_PROFILE_WITHOUT_ROLE,
                EC2NODECLASS,
                name,
                profile.urn,
                coherence.profile_without_role(spec.instance_profile, role_name),
            )
        role = stack.role_trusts.get(role_name)
        if role is not None and role.value is not PENDING:
            yield from _observed(
                controller_rules.NODE_ROLE_TRUST,
                EC2NODECLASS,
                name,
                role.urn,
                coherence.untrusted_node_role(role_name, iam.policy_document(role.value)),
            )
        if not grants.pass_role or not role_name:
            continue  # the stack does not create the controller's IAM, or the profile's role is not in the stack
        yield from _observed(controller_rules.PASS_ROLE, EC2NODECLASS, name, urn, coherence.pass_role_denied(grants, role_name))
        if role is not None and entries is not None:
            yield from _observed(
                controller_rules.ACCESS_ENTRY, EC2NODECLASS, name, role.urn, coherence.missing_access_entry(role_name, entries)
            )
    for pool in inputs.node_pools:
        yield from _observed(
            controller_rules.SPOT_QUEUE, NODEPOOL, pool.name, pool.source.file, coherence.spot_queue_unread(grants, pool)
        )
    yield from _queue_keys(stack)
    yield from _pod_identity_on_fargate(stack)


def _observed(rule_id: str, kind: str, name: str, urn: str, violation: Violation | None) -> Iterator[Observation]:
    if violation is not None:
        yield Observation(rule_id, kind, name, violation, Source(urn))


def _queue_keys(stack: CreatedStack) -> Iterator[Observation]:
    """Queues encrypted with a key whose policy is in the stack: that policy must let EventBridge use the key."""
    key_policies = {ref: iam.policy_document(policy) for ref, policy in stack.key_policies.items()}
    for queue in stack.queues:
        key_policy = key_policies.get(queue.kms_key) if queue.kms_key else None
        problem = key_policy is not None and coherence.kms_policy_problem(key_policy)
        if problem:
            yield from _observed(
                controller_rules.QUEUE_KMS,
                CONTROLLER_KIND,
                queue.name,
                queue.urn,
                Violation("interruptionQueue.kmsKeyArn", problem),
            )


def _pod_identity_on_fargate(stack: CreatedStack) -> Iterator[Observation]:
    for association in stack.pod_identities:
        if association.cluster is PENDING or association.namespace is PENDING:
            continue
        for profile in stack.fargate_profiles:
            if (
                profile.cluster == association.cluster
                and profile.selectors is not PENDING
                and coherence.fargate_selects(profile.selectors or [], association.namespace)
            ):
                account = f"{association.namespace}/{association.service_account}"
                message = f"Fargate profile {profile.name} runs the pods of {account}, which get no Pod Identity credentials"
                yield from _observed(
                    controller_rules.FARGATE_POD_IDENTITY,
                    CONTROLLER_KIND,
                    account,
                    association.urn,
                    Violation("identity", message),
                )
