"""The policy pack's policies called directly, as the Pulumi engine calls them: resources and stacks
built from the rule examples, and the messages the policies report."""

from __future__ import annotations

import copy

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import unknown_checking_proxy

from karpenter_gitops.rules.examples import BASE_NODEPOOL
from karpenter_gitops_policies import pack

OPTS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])
POLICIES = {p.name: p for p in pack.all_policies()}
NC_URN = "urn:pulumi:dev::infra::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::default"
NP_URN = "urn:pulumi:dev::infra::kubernetes:karpenter.sh/v1:NodePool::general"


def node_pool(class_name="default") -> dict:
    doc = copy.deepcopy(BASE_NODEPOOL)
    doc["spec"]["template"]["spec"]["nodeClassRef"]["name"] = class_name
    return doc


def validate_resource(policy_name, resource_type, props, config=None) -> list[str]:
    violations = []
    args = ResourceValidationArgs(resource_type, unknown_checking_proxy(props), NC_URN, "default", OPTS, None, config or {})
    POLICIES[policy_name].validate(args, lambda message, urn=None: violations.append(message))
    return violations


def resource(resource_type, urn, props) -> PolicyResource:
    return PolicyResource(resource_type, unknown_checking_proxy(props), urn, urn.rsplit("::", 1)[-1], OPTS, None, None, [], {})


def validate_stack(policy_name, resources) -> list[tuple[str, str | None]]:
    violations = []
    POLICIES[policy_name].validate(StackValidationArgs(resources, {}), lambda m, urn=None: violations.append((m, urn)))
    return violations
