"""The Pulumi front doors called in process on one (possibly hostile) object: the dynamic provider's
Check and every policy of the pack. Neither may raise: a bad object is a check failure or a violation."""

from __future__ import annotations

from typing import Any

from pulumi.runtime import Settings, configure
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

from karpenter_gitops.rules.examples import BASE_NODECLASS
from karpenter_gitops_policies import pack
from karpenter_gitops_pulumi.reconciliation import ReconciliationProvider

_OPTS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
_TYPES = {"NodePool": pack.NODEPOOL_TYPE}
_POLICIES = pack.all_policies()


def check(obj: Any) -> None:
    """Check a Reconciliation whose class (or, for a NodePool, whose one pool) is ``obj``'s spec."""
    configure(Settings(project="karpenter-gitops", stack="fuzz"))  # engine-less: pulumi.log goes to stderr
    spec = obj.get("spec") if isinstance(obj, dict) else obj
    is_pool = isinstance(obj, dict) and obj.get("kind") == "NodePool"
    props = {
        "nodeClassName": "default",
        "spec": BASE_NODECLASS["spec"] if is_pool else spec,
        "nodePoolSpecs": {"general": spec} if is_pool else {},
        "cluster": {"name": "dev", "kubernetesVersion": "1.32"},
    }
    result = ReconciliationProvider().check({}, props)
    assert all(isinstance(failure.reason, str) for failure in result.failures)


def analyze(obj: Any) -> None:
    """Run every policy of the pack on ``obj`` as a custom resource, and the stack policies on a stack of it."""
    props = obj if isinstance(obj, dict) else {"spec": obj}
    kind = props.get("kind")
    resource_type = _TYPES.get(kind, pack.NODECLASS_TYPE) if isinstance(kind, str) else pack.NODECLASS_TYPE
    urn = f"urn:pulumi:dev::infra::{resource_type}::fuzz"
    messages: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        messages.append(message)

    resource = PolicyResource(resource_type, unknown_checking_proxy(props), urn, "fuzz", _OPTS, None, None, [], {})
    for policy in _POLICIES:
        if isinstance(policy, ResourceValidationPolicy):
            policy.validate(ResourceValidationArgs(resource_type, resource.props, urn, "fuzz", _OPTS, None, {}), report)
        else:
            policy.validate(StackValidationArgs([resource], {}), report)
    assert all(isinstance(message, str) for message in messages)
