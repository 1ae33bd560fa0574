"""Instance profile and role checks."""

from karpenter_gitops.adapters.aws.instance_profiles import (
    PROFILE_TTL_SECONDS,
    ProfileOutcome,
    bare_role_name,
    profile_cache,
    resolve_instance_profile,
    resolve_role,
)
from karpenter_gitops.core.resolved import InstanceProfile


def test_profile_with_role_is_ready_and_reports_role_names(default_aws):
    result = resolve_instance_profile(default_aws.session(), "PaymentsNodeProfile", cache=profile_cache())
    assert result.ready
    assert result.profile == InstanceProfile("PaymentsNodeProfile", True, ("PaymentsNodeRole",))


def test_profile_without_role_and_missing_profile(default_aws):
    aws = default_aws.session()
    assert resolve_instance_profile(aws, "EmptyProfile", cache=profile_cache()).outcome is ProfileOutcome.NO_ROLE
    missing = resolve_instance_profile(aws, "NoSuchProfile", cache=profile_cache())
    assert missing.outcome is ProfileOutcome.NOT_FOUND and missing.profile == InstanceProfile("NoSuchProfile", False)


def test_arn_is_rejected_with_the_name_and_never_reaches_iam(default_aws):
    aws = default_aws.session()
    result = resolve_instance_profile(aws, "arn:aws:iam::123456789012:instance-profile/team/a/KarpenterNodeProfile")
    assert result.outcome is ProfileOutcome.ARN_NOT_NAME
    assert "use 'KarpenterNodeProfile'" in result.message
    assert aws.call_counts() == {}


def test_results_are_cached_for_fifteen_minutes_across_runs_and_dropped_when_gone(default_aws):
    now = [0.0]
    cache = profile_cache(timer=lambda: now[0])
    first, second = default_aws.session(), default_aws.session()
    assert resolve_instance_profile(first, "KarpenterNodeProfile", cache=cache).ready
    assert resolve_instance_profile(second, "KarpenterNodeProfile", cache=cache).ready
    assert second.call_counts() == {}

    iam = first.client("iam")
    iam.remove_role_from_instance_profile(InstanceProfileName="KarpenterNodeProfile", RoleName="KarpenterNodeRole-demo")
    iam.delete_instance_profile(InstanceProfileName="KarpenterNodeProfile")
    now[0] = PROFILE_TTL_SECONDS
    assert (
        resolve_instance_profile(default_aws.session(), "KarpenterNodeProfile", cache=cache).outcome is ProfileOutcome.NOT_FOUND
    )
    assert cache.get((first.cache_namespace, "KarpenterNodeProfile")) is None


def test_role_checks_strip_paths(default_aws):
    aws = default_aws.session()
    assert resolve_role(aws, "teams/payments/PaymentsNodeRole").ready
    assert resolve_role(aws, "KarpenterNodeRole-missing").outcome is ProfileOutcome.ROLE_NOT_FOUND
    assert bare_role_name("arn:aws:iam::123456789012:role/teams/payments/PaymentsNodeRole") == "PaymentsNodeRole"


def test_a_profile_name_with_a_path_is_rejected_with_the_name_and_never_reaches_iam(default_aws):
    """IAM answers such a name with ValidationError (moto: NoSuchEntity), and EC2 launches take the bare name."""
    aws = default_aws.session()
    result = resolve_instance_profile(aws, "teams/payments/PaymentsNodeProfile", cache=profile_cache())
    assert result.outcome is ProfileOutcome.PATH_IN_NAME and not result.ready
    assert "use 'PaymentsNodeProfile'" in result.message
    assert aws.call_counts() == {}
