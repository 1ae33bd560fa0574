"""The identity step: the instance profile an EC2NodeClass's nodes launch with.

By name only: an ARN passes the CRD and fails at launch, so it is refused without asking IAM. A named
profile must exist and hold a role; for ``spec.role`` the role must exist (Karpenter names the profile
it manages for it). Karpenter 1.14 reports a named profile True without looking; we say what we find.

Layer: a step of reconcile/; imports context, graph, rules, adapters and core.
"""

from __future__ import annotations

from dataclasses import dataclass

from karpenter_gitops.adapters.aws import instance_profiles
from karpenter_gitops.core.conditions import Resolution, StepOutcome
from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.reconcile.context import Run, observation, unverified
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.rules import live

_NOT_FOUND = {
    instance_profiles.ProfileOutcome.ARN_NOT_NAME: "InstanceProfileIsARN",
    instance_profiles.ProfileOutcome.PATH_IN_NAME: "InstanceProfileNameInvalid",
    instance_profiles.ProfileOutcome.NOT_FOUND: "InstanceProfileNotFound",
    instance_profiles.ProfileOutcome.NO_ROLE: "InstanceProfileHasNoRole",
    instance_profiles.ProfileOutcome.ROLE_NOT_FOUND: "RoleNotFound",
    instance_profiles.ProfileOutcome.AWS_ERROR: "AWSError",
}


@dataclass(frozen=True)
class InstanceProfile(StepResult):
    name: str | None  # None when Karpenter names it (spec.role) or nothing is set
    outcome: StepOutcome  # what InstanceProfileReady says

    @property
    def ready(self) -> bool:
        return self.outcome.resolution is Resolution.READY


def resolve(run: Run, node_class: EC2NodeClass) -> InstanceProfile:
    name, outcome = _resolve(run, node_class)
    observed = ()
    if outcome.reason == "InstanceProfileHasNoRole":
        observed = (observation(node_class, live.INSTANCE_PROFILE_WITHOUT_ROLE, "spec.instanceProfile", outcome.message),)
    return InstanceProfile(name, outcome, observed=observed, transient=unverified(node_class, "instance profile", outcome))


def _resolve(run: Run, node_class: EC2NodeClass) -> tuple[str | None, StepOutcome]:
    spec = node_class.spec
    if spec.instance_profile:
        result = instance_profiles.resolve_instance_profile(run.aws, spec.instance_profile)
        name = result.profile.name if result.profile else spec.instance_profile
    elif spec.role:
        result = instance_profiles.resolve_role(run.aws, spec.role)
        name = None  # Karpenter names the profile it manages for a role
    else:
        return None, StepOutcome.not_found("neither role nor instanceProfile is set", "InstanceProfileNotFound")
    if result.ready:
        return name, StepOutcome.ready()
    if result.outcome is instance_profiles.ProfileOutcome.TRANSIENT_ERROR:
        return name, StepOutcome.transient_error(result.message)
    return name, StepOutcome.not_found(result.message, _NOT_FOUND[result.outcome])
