"""The identity step: the instance profile an EC2NodeClass's nodes launch with.

Two things come out of it, kept apart. What Karpenter will report, in its words: a named profile is
``InstanceProfileReady=True`` without any IAM call (it copies the name), and for ``spec.role`` a role
it cannot make a profile for leaves the condition Unknown; from 1.15 its launch dry run turns a
profile EC2 refuses into ``ValidationSucceeded=False`` (``InstanceProfileNotFound``). And what we find
asking IAM by name: a profile that does not exist or names a path, a profile without a role, a
missing role, each an error finding beside the prediction (an ARN is refused offline,
``nodeclass/instance-profile-arn``, and never sent to IAM).

Layer: a step of reconcile/; imports context, graph, rules, adapters and core.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.adapters.aws import instance_profiles
from karpenter_gitops.adapters.aws.instance_profiles import ProfileOutcome
from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.karpenter.status.nodeclass_conditions import Resolution, StepOutcome, profile_refused_at_launch
from karpenter_gitops.reconcile.context import Run, observation, unverified
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.rules import live

# The profiles EC2's RunInstances refuses ("Invalid IAM Instance Profile name"), which Karpenter's dry run sees.
_REFUSED_AT_LAUNCH = frozenset({ProfileOutcome.NOT_FOUND, ProfileOutcome.PATH_IN_NAME, ProfileOutcome.ARN_NOT_NAME})


@dataclass(frozen=True)
class InstanceProfile(StepResult):
    name: str | None  # the name Karpenter writes to status.instanceProfile; None when it names it (spec.role)
    outcome: StepOutcome  # what InstanceProfileReady says
    launch: StepOutcome | None = None  # what the validation's launch dry run says of the profile; None: it passes

    @property
    def ready(self) -> bool:
        return self.outcome.resolution is Resolution.READY


def resolve(run: Run, node_class: EC2NodeClass) -> InstanceProfile:
    spec = node_class.spec
    if spec.instance_profile:
        found = instance_profiles.resolve_instance_profile(run.aws, spec.instance_profile)
    elif spec.role:
        found = instance_profiles.resolve_role(run.aws, spec.role)
    else:  # the CRD requires one of them
        return InstanceProfile(None, StepOutcome.not_found("neither role nor instanceProfile is set"))
    observed = _judged(node_class, found)
    outcome = _reported(found)
    launch = None
    if spec.instance_profile and found.outcome in _REFUSED_AT_LAUNCH:
        launch = profile_refused_at_launch(run.release, spec.instance_profile)
    return InstanceProfile(
        spec.instance_profile, outcome, launch, observed=observed, transient=unverified(node_class, "instance profile", outcome)
    )


def _judged(node_class: EC2NodeClass, found: instance_profiles.ProfileResolution) -> tuple:
    """What IAM told us that no node survives, as the live rule that says so (an ARN has its offline rule)."""
    if found.outcome in (ProfileOutcome.NOT_FOUND, ProfileOutcome.PATH_IN_NAME):
        return (observation(node_class, live.INSTANCE_PROFILE_NOT_FOUND, "spec.instanceProfile", found.message),)
    if found.outcome is ProfileOutcome.NO_ROLE:
        return (observation(node_class, live.INSTANCE_PROFILE_WITHOUT_ROLE, "spec.instanceProfile", found.message),)
    if found.outcome is ProfileOutcome.ROLE_NOT_FOUND:
        return (observation(node_class, live.ROLE_NOT_FOUND, "spec.role", found.message),)
    return ()


def _reported(found: instance_profiles.ProfileResolution) -> StepOutcome:
    """InstanceProfileReady as Karpenter reports it, or our look-up's own trouble when IAM did not answer us."""
    if found.outcome is ProfileOutcome.TRANSIENT_ERROR:
        return StepOutcome.transient_error(found.message)
    if found.outcome is ProfileOutcome.AWS_ERROR:
        return StepOutcome.not_found(found.message, "AWSError")
    if found.outcome is ProfileOutcome.ROLE_NOT_FOUND:
        return StepOutcome.errored()  # creating the profile fails and the reconcile returns the error
    return StepOutcome.ready()
