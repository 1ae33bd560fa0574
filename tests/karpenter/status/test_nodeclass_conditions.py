"""Predicted EC2NodeClass conditions and the Ready roll-up, with our stricter instance-profile checks."""

from __future__ import annotations

from karpenter_gitops.core.resolved import Condition
from karpenter_gitops.karpenter.status.nodeclass_conditions import StepOutcome, predict_conditions

READY = StepOutcome.ready()


def by_type(conditions) -> dict[str, tuple[str, str, str]]:
    return {c.type: (c.status, c.reason, c.message) for c in conditions}


def test_everything_resolves():
    conditions = predict_conditions(amis=READY, subnets=READY, security_groups=READY, instance_profile=READY)
    assert [c.type for c in conditions] == [
        "AMIsReady", "InstanceProfileReady", "Ready", "SecurityGroupsReady", "SubnetsReady", "ValidationSucceeded",
    ]  # fmt: skip
    assert all(c.status == "True" and c.reason == c.type for c in conditions)


def test_subnet_selector_matches_nothing():
    got = by_type(predict_conditions(amis=READY, subnets=StepOutcome.not_found(), security_groups=READY, instance_profile=READY))
    assert got["SubnetsReady"] == ("False", "SubnetsNotFound", "SubnetSelector did not match any Subnets")
    assert got["ValidationSucceeded"] == (
        "False", "DependenciesNotReady", "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution",
    )  # fmt: skip
    assert got["Ready"] == ("False", "UnhealthyDependents", "SubnetsReady=False, ValidationSucceeded=False")


def test_alias_ssm_permission_missing_is_unknown_not_not_found():
    denied = StepOutcome.transient_error("ssm:GetParameter AccessDenied for /aws/service/bottlerocket/...")
    got = by_type(predict_conditions(amis=denied, subnets=READY, security_groups=READY, instance_profile=READY))
    assert got["AMIsReady"][:2] == ("Unknown", "TransientError")
    assert got["ValidationSucceeded"][:2] == ("Unknown", "DependenciesNotReady")
    assert got["Ready"] == ("Unknown", "ReconcilingDependents", "AMIsReady=Unknown, ValidationSucceeded=Unknown")


def test_false_beats_unknown_and_awaiting_is_never_a_false_not_found():
    got = by_type(
        predict_conditions(
            amis=StepOutcome.not_found("alias al2@latest is not supported on 1.33", reason="UnsupportedAlias"),
            subnets=StepOutcome.awaiting("VPC lookup"),
            security_groups=READY,
            instance_profile=READY,
        )
    )
    assert got["AMIsReady"] == ("False", "UnsupportedAlias", "alias al2@latest is not supported on 1.33")
    assert got["SubnetsReady"] == ("Unknown", "AwaitingDependency", "awaiting VPC lookup")
    assert got["Ready"][:2] == ("False", "UnhealthyDependents")
    # operatorpkg lists every dependent that is not True, the Unknown ones too (seen on Karpenter 1.14.1)
    assert got["Ready"][2] == "AMIsReady=False, SubnetsReady=Unknown, ValidationSucceeded=False"


def test_validation_failure_when_dependencies_are_ready():
    denied = StepOutcome.not_found("Controller isn't authorized to call ec2:RunInstances", reason="RunInstancesAuthCheckFailed")
    conditions = predict_conditions(amis=READY, subnets=READY, security_groups=READY, instance_profile=READY, validation=denied)
    assert Condition("ValidationSucceeded", "False", "RunInstancesAuthCheckFailed", denied.message) in conditions
