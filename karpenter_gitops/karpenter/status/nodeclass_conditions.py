"""The status conditions Karpenter would set on an EC2NodeClass, predicted from our own resolution.

The reconciler reports one ``StepOutcome`` per dependency (AMIs, subnets, security groups,
instance profile, validation); ``predict_conditions`` turns them into the conditions and the
``Ready`` roll-up the controller's operatorpkg ``ConditionSet`` would produce.

The conditions are the release's own words, even where Karpenter knows less than we do: it reports
a named instance profile True without asking IAM, and from 1.15 only its launch dry run says that
EC2 does not know the profile (:func:`profile_refused_at_launch`). Our judgement that such a node
can never join is a finding beside the prediction, never a condition of ours. Only our own look-ups
that fail are ``Unknown`` with a reason naming the error rather than a silent ``AwaitingReconciliation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from karpenter_gitops.core.resolved import Condition
from karpenter_gitops.core.versions import Release
from karpenter_gitops.karpenter.amifamily.dispatch import USERDATA_REFUSED_AT_LAUNCH_SINCE

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"

AMIS_READY = "AMIsReady"
SUBNETS_READY = "SubnetsReady"
SECURITY_GROUPS_READY = "SecurityGroupsReady"
INSTANCE_PROFILE_READY = "InstanceProfileReady"
VALIDATION_SUCCEEDED = "ValidationSucceeded"
READY = "Ready"

# Reason and message when a step finds nothing usable, per condition (Karpenter's where it has one).
_NOT_FOUND = {
    AMIS_READY: ("AMINotFound", "AMISelector did not match any AMIs"),
    SUBNETS_READY: ("SubnetsNotFound", "SubnetSelector did not match any Subnets"),
    SECURITY_GROUPS_READY: ("SecurityGroupsNotFound", "SecurityGroupSelector did not match any SecurityGroups"),
    INSTANCE_PROFILE_READY: ("InstanceProfileNotFound", "instance profile not found"),
    VALIDATION_SUCCEEDED: ("ValidationFailed", "validation failed"),
}
# From 1.15 the validation's RunInstances dry run names an explicit profile EC2 refuses (provider v1.15.0
# pkg/controllers/nodeclass/validation.go, validateRunInstancesAuthorization); before, it requeued silently.
PROFILE_REFUSED_AT_LAUNCH_SINCE = Release((1, 15))
# The validation builds a real launch template (EnsureAll) from 1.7 (mock inputs before, so no userData in it);
# from 1.14.1 it names EC2's refusal of oversized userData (validateCreateLaunchTemplateAuthorization, which
# 1.14.0 lacks), before that it returned the error and left the condition as it was.
REAL_LAUNCH_TEMPLATE_SINCE = Release((1, 7))
_DEPENDENCIES_NOT_READY = "DependenciesNotReady"
_AWAITING_MESSAGE, _AWAITING_REASON = (
    "object is awaiting reconciliation",
    "AwaitingReconciliation",
)  # operatorpkg's initial condition
_DEPENDENCIES_MESSAGE = "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"


class Resolution(Enum):
    READY = "ready"
    NOT_FOUND = "not-found"  # resolved to nothing usable; ``reason`` may say why (e.g. UnsupportedAlias)
    TRANSIENT_ERROR = "transient-error"  # the lookup failed (throttling, 5xx, unreachable); retry later
    AWAITING_DEPENDENCY = "awaiting-dependency"  # an earlier step this one needs is not ready
    ERRORED = "errored"  # the controller's reconcile fails and requeues; retrying without a change will not help


@dataclass(frozen=True)
class StepOutcome:
    """How one dependency of the NodeClass resolved."""

    resolution: Resolution
    message: str = ""
    reason: str | None = None  # overrides the condition's default reason

    @classmethod
    def ready(cls) -> StepOutcome:
        return cls(Resolution.READY)

    @classmethod
    def not_found(cls, message: str = "", reason: str | None = None) -> StepOutcome:
        return cls(Resolution.NOT_FOUND, message, reason)

    @classmethod
    def transient_error(cls, message: str, reason: str = "TransientError") -> StepOutcome:
        return cls(Resolution.TRANSIENT_ERROR, message, reason)

    @classmethod
    def errored(cls) -> StepOutcome:
        """Karpenter returns an error or requeues without setting the condition, so it keeps operatorpkg's
        initial Unknown with its words; what went wrong reaches the user as a finding."""
        return cls(Resolution.ERRORED, _AWAITING_MESSAGE, _AWAITING_REASON)

    @classmethod
    def awaiting(cls, dependency: str) -> StepOutcome:
        return cls(Resolution.AWAITING_DEPENDENCY, f"awaiting {dependency}", "AwaitingDependency")

    def condition(self, type_: str) -> Condition:
        if self.resolution is Resolution.READY:
            return Condition(type_, TRUE, type_)
        if self.resolution is Resolution.NOT_FOUND:
            reason, message = _NOT_FOUND[type_]
            return Condition(type_, FALSE, self.reason or reason, self.message or message)
        return Condition(type_, UNKNOWN, self.reason or _AWAITING_REASON, self.message)


def _validation(
    dependencies: list[Condition], validation: StepOutcome, spec: StepOutcome | None, expressions: StepOutcome | None
) -> Condition:
    """ValidationSucceeded judges the spec first (from 1.15, its kubelet block), then waits for the four
    resolutions, then evaluates the kubelet expressions per instance type, then the authorization."""
    if spec is not None and spec.resolution is not Resolution.READY:
        return spec.condition(VALIDATION_SUCCEEDED)
    if any(c.status == FALSE for c in dependencies):
        return Condition(VALIDATION_SUCCEEDED, FALSE, _DEPENDENCIES_NOT_READY, _DEPENDENCIES_MESSAGE)
    if any(c.status == UNKNOWN for c in dependencies):
        return Condition(VALIDATION_SUCCEEDED, UNKNOWN, _DEPENDENCIES_NOT_READY, _DEPENDENCIES_MESSAGE)
    if expressions is not None and expressions.resolution is not Resolution.READY:
        return expressions.condition(VALIDATION_SUCCEEDED)
    return validation.condition(VALIDATION_SUCCEEDED)


def profile_refused_at_launch(release: Release, name: str) -> StepOutcome:
    """What ValidationSucceeded says once EC2's launch dry run refuses ``spec.instanceProfile`` (a profile
    that does not exist, an ARN, a name with a path): from 1.15 False with Karpenter's reason and message
    (``%q`` of the name as Go quotes it), before that whatever it said before, operatorpkg's initial Unknown."""
    if release < PROFILE_REFUSED_AT_LAUNCH_SINCE:
        return StepOutcome.errored()
    return StepOutcome.not_found(f"Instance profile {_go_quoted(name)} not found", "InstanceProfileNotFound")


def userdata_refused_at_launch(release: Release) -> StepOutcome | None:
    """What ValidationSucceeded says once ec2:CreateLaunchTemplate refuses the merged userData as too large
    (it runs before the fleet and launch dry runs, so it decides first): from 1.14 False with Karpenter's
    reason and message, from 1.7 operatorpkg's initial Unknown, before that nothing (None: the mock
    launch template passes)."""
    if release < REAL_LAUNCH_TEMPLATE_SINCE:
        return None
    if release < USERDATA_REFUSED_AT_LAUNCH_SINCE:
        return StepOutcome.errored()
    return StepOutcome.not_found(
        "ec2:CreateLaunchTemplate rejected the rendered user data as too large: "
        "Rendered user data exceeds the EC2 user data size limit",
        "UserDataSizeLimitExceeded",
    )


def _go_quoted(text: str) -> str:
    """``text`` as Go's ``%q`` writes it for the names IAM and EC2 take (backslash and quote escaped)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def roll_up(dependents: list[Condition]) -> Condition:
    """The root ``Ready`` as operatorpkg rolls it up: False if any dependent is False, else Unknown if any is, else True; the
    message lists every dependent that is not True (operatorpkg orders them by transition time)."""
    unhealthy = [c for c in dependents if c.status != TRUE]
    if not unhealthy:
        return Condition(READY, TRUE, READY)
    status, reason = (
        (FALSE, "UnhealthyDependents") if any(c.status == FALSE for c in unhealthy) else (UNKNOWN, "ReconcilingDependents")
    )
    return Condition(READY, status, reason, ", ".join(f"{c.type}={c.status}" for c in unhealthy))


def predict_conditions(
    *,
    amis: StepOutcome,
    subnets: StepOutcome,
    security_groups: StepOutcome,
    instance_profile: StepOutcome,
    validation: StepOutcome | None = None,
    spec: StepOutcome | None = None,
    expressions: StepOutcome | None = None,
) -> tuple[Condition, ...]:
    """The NodeClass conditions, sorted by type as Karpenter stores them.

    ``validation`` is the launch dry runs' outcome; None assumes they pass (the controller is allowed, EC2 knows
    the instance profile).
    ``spec`` is what the validation reconciler finds in the spec before it waits for the resolutions;
    ``expressions`` what it finds evaluating the kubelet expressions once they are resolved (from 1.15).
    Dependents are listed in Karpenter's reconcile order in the ``Ready`` message.
    """
    dependencies = [
        amis.condition(AMIS_READY),
        subnets.condition(SUBNETS_READY),
        security_groups.condition(SECURITY_GROUPS_READY),
        instance_profile.condition(INSTANCE_PROFILE_READY),
    ]
    dependents = [*dependencies, _validation(dependencies, validation or StepOutcome.ready(), spec, expressions)]
    return tuple(sorted([*dependents, roll_up(dependents)], key=lambda c: c.type))
