"""The network steps: an EC2NodeClass's subnets and its security groups, each by its selector terms.

Two steps, as Karpenter has two providers: the mapping of a NodePool needs its class's subnets (the
zones it may launch in), not its security groups, so a group look-up that fails does not hold it up.
A look-up finds something, finds nothing (persistent, observed as ``live/selector-matches-nothing``)
or fails, classified transient or persistent.

Layer: a step of reconcile/; imports context, graph, rules, adapters and core.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from karpenter_gitops.adapters.aws.error_kinds import AWSError, TransientAWSError
from karpenter_gitops.adapters.aws.network_lookup import resolve_security_groups, resolve_subnets
from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.core.resolved import SecurityGroup, Subnet
from karpenter_gitops.karpenter.status.nodeclass_conditions import Resolution, StepOutcome
from karpenter_gitops.reconcile.context import Run, observation, unverified
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.rules import live

T = TypeVar("T")


@dataclass(frozen=True)
class Selected(StepResult, Generic[T]):
    found: tuple[T, ...]
    outcome: StepOutcome  # what SubnetsReady or SecurityGroupsReady says

    @property
    def ready(self) -> bool:
        return self.outcome.resolution is Resolution.READY


@dataclass(frozen=True)
class _Selector:
    what: str  # in the transient note
    field: str  # of the spec
    empty: str  # Karpenter's condition message when nothing matches
    nothing: str  # the finding's


_SUBNETS = _Selector(
    "subnets", "subnetSelectorTerms", "SubnetSelector did not match any Subnets", "the subnet selector matches no subnet"
)
_SECURITY_GROUPS = _Selector(
    "security groups",
    "securityGroupSelectorTerms",
    "SecurityGroupSelector did not match any SecurityGroups",
    "the security-group selector matches no group",
)


def subnets(run: Run, node_class: EC2NodeClass) -> Selected[Subnet]:
    return _select(node_class, _SUBNETS, lambda: resolve_subnets(run.aws, node_class.spec.subnet_selector_terms or ()))


def security_groups(run: Run, node_class: EC2NodeClass) -> Selected[SecurityGroup]:
    return _select(
        node_class,
        _SECURITY_GROUPS,
        lambda: resolve_security_groups(run.aws, node_class.spec.security_group_selector_terms or ()),
    )


def _select(node_class: EC2NodeClass, selector: _Selector, resolve: Callable[[], tuple[T, ...]]) -> Selected[T]:
    try:
        found = resolve()
    except TransientAWSError as error:
        outcome = StepOutcome.transient_error(str(error))
        return Selected((), outcome, transient=unverified(node_class, selector.what, outcome))
    except AWSError as error:
        return Selected((), StepOutcome.not_found(str(error), "AWSError"))
    if found:
        return Selected(found, StepOutcome.ready())
    nothing = observation(node_class, live.SELECTOR_MATCHES_NOTHING, f"spec.{selector.field}", selector.nothing)
    return Selected((), StepOutcome.not_found(selector.empty), observed=(nothing,))
