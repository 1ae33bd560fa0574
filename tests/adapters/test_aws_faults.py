"""Under faults a resolution ends with the clean result or a transient outcome, never a wrong answer."""

import pytest
from botocore.retries.standard import ExponentialBackoff

from karpenter_gitops.adapters.aws.amis import AMIOutcome, resolve_amis
from karpenter_gitops.adapters.aws.error_kinds import TransientAWSError
from karpenter_gitops.adapters.aws.instance_profiles import (
    ProfileOutcome,
    profile_cache,
    resolve_instance_profile,
)
from karpenter_gitops.adapters.aws.network_lookup import resolve_subnets
from karpenter_gitops.adapters.aws.throttling import Throttler
from karpenter_gitops.core.model import AMISelectorTerm, SubnetSelectorTerm
from karpenter_gitops.core.versions import Kubernetes

TERMS = {
    "alias": [AMISelectorTerm(alias="al2023@latest")],
    "tags": [AMISelectorTerm(tags={"team": "payments"})],
}


@pytest.fixture
def no_backoff(monkeypatch):
    """Retries without botocore's sleeps, so a throttled run takes milliseconds instead of seconds."""
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: 0)


@pytest.mark.slow
@pytest.mark.parametrize("selector", sorted(TERMS))
def test_a_third_of_calls_throttled_gives_the_clean_result_or_a_transient_outcome(default_aws, no_backoff, selector):
    clean = resolve_amis(default_aws.session(), TERMS[selector], Kubernetes(1, 32))
    assert clean.outcome is AMIOutcome.READY
    outcomes = set()
    injected = 0
    for seed in range(12):
        aws = default_aws.session(max_attempts=2)
        throttler = Throttler(1 / 3, seed=seed).install(aws)
        result = resolve_amis(aws, TERMS[selector], Kubernetes(1, 32))
        injected += throttler.injected
        outcomes.add(result.outcome)
        assert result == clean or (result.outcome is AMIOutcome.TRANSIENT_ERROR and result.amis == ()), result
    assert injected and AMIOutcome.READY in outcomes


def test_throttled_network_and_profile_lookups_are_clean_or_transient(default_aws, no_backoff):
    term = [SubnetSelectorTerm(tags={"karpenter.sh/discovery": "demo"})]
    clean = resolve_subnets(default_aws.session(), term)
    for seed in range(6):
        aws = default_aws.session(max_attempts=2)
        Throttler(1 / 3, seed=seed).install(aws)
        try:
            assert resolve_subnets(aws, term) == clean
        except TransientAWSError:
            pass  # the other acceptable ending; a PersistentAWSError or a wrong list fails the test
        profile = resolve_instance_profile(aws, "KarpenterNodeProfile", cache=profile_cache())
        assert profile.outcome in (ProfileOutcome.READY, ProfileOutcome.TRANSIENT_ERROR)


def test_always_throttled_is_transient_never_not_found(default_aws, no_backoff):
    aws = default_aws.session(max_attempts=2)
    Throttler(1.0).install(aws)
    result = resolve_amis(aws, TERMS["alias"], Kubernetes(1, 32))
    assert result.outcome is AMIOutcome.TRANSIENT_ERROR and "ThrottlingException" in result.message
    profile = resolve_instance_profile(aws, "NoSuchProfile", cache=profile_cache())
    assert profile.outcome is ProfileOutcome.TRANSIENT_ERROR


def test_no_such_entity_is_persistent_not_transient(default_aws):
    result = resolve_instance_profile(default_aws.session(), "NoSuchProfile", cache=profile_cache())
    assert result.outcome is ProfileOutcome.NOT_FOUND


def test_an_arn_profile_never_reaches_iam_even_under_faults(default_aws):
    aws = default_aws.session()
    throttler = Throttler(1.0).install(aws)
    result = resolve_instance_profile(aws, "arn:aws:iam::123456789012:instance-profile/KarpenterNodeProfile")
    assert result.outcome is ProfileOutcome.ARN_NOT_NAME and throttler.injected == 0 and aws.call_counts() == {}
