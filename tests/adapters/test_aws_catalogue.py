"""Instance-type catalogue: raw entries + zonal offerings, a 12 h disk cache, and readiness."""

import pytest

from karpenter_gitops.adapters.aws.instance_types import (
    CATALOGUE_TTL_SECONDS,
    load_catalogue,
)
from karpenter_gitops.adapters.aws.throttling import Throttler

SMALL_WORLD = """
region: us-west-2
kubernetesVersion: "1.32"
instanceTypes: [m5.large, m7g.large, g5.xlarge, g5g.xlarge, inf2.xlarge, mac2.metal]
"""


@pytest.mark.slow
def test_full_catalogue_is_hydrated_with_raw_entries_and_zones(default_aws, catalogue_cache):
    catalogue = load_catalogue(default_aws.session(), cache_dir=catalogue_cache)
    assert catalogue.hydrated and len(catalogue.instance_types) > 1000
    m5 = next(t for t in catalogue.instance_types if t["InstanceType"] == "m5.large")
    assert m5["MemoryInfo"]["SizeInMiB"] == 8192
    assert "us-west-2a" in catalogue.offerings["m5.large"]
    warm = default_aws.session()
    assert load_catalogue(warm, cache_dir=catalogue_cache) == catalogue
    assert warm.call_counts() == {}


def test_a_narrowed_world_filters_to_hvm_x86_and_arm(world, tmp_path):
    env = world(SMALL_WORLD)
    aws = env.session()
    catalogue = load_catalogue(aws, cache_dir=tmp_path)
    assert [t["InstanceType"] for t in catalogue.instance_types] == [
        "g5.xlarge",
        "g5g.xlarge",
        "inf2.xlarge",
        "m5.large",
        "m7g.large",
    ]  # mac2 is arm64_mac
    assert set(catalogue.offerings) <= {"m5.large", "m7g.large", "g5.xlarge", "g5g.xlarge", "inf2.xlarge", "mac2.metal"}
    assert aws.call_counts() == {"DescribeInstanceTypeOfferings": 1, "DescribeInstanceTypes": 1}


def test_cache_expires_after_twelve_hours_and_a_corrupt_file_is_refetched(world, tmp_path):
    env = world(SMALL_WORLD)
    now = [1_000_000.0]
    first = load_catalogue(env.session(), cache_dir=tmp_path, clock=lambda: now[0])
    now[0] += CATALOGUE_TTL_SECONDS - 1
    cached = env.session()
    assert load_catalogue(cached, cache_dir=tmp_path, clock=lambda: now[0]) == first and not cached.call_counts()
    now[0] += 1
    expired = env.session()
    assert load_catalogue(expired, cache_dir=tmp_path, clock=lambda: now[0]).fetched_at == now[0]
    assert expired.call_counts()["DescribeInstanceTypes"] == 1

    [cache_file] = tmp_path.rglob("*.json")
    cache_file.write_text('{"format": 1, "region": "us-west-2", "instanceTy')
    corrupt = env.session()
    assert load_catalogue(corrupt, cache_dir=tmp_path, clock=lambda: now[0]).hydrated
    assert corrupt.call_counts()["DescribeInstanceTypes"] == 1
    assert not list(tmp_path.rglob("*.tmp"))


def test_transient_failure_leaves_the_catalogue_unhydrated_not_empty(world, tmp_path):
    env = world(SMALL_WORLD)
    aws = env.session(max_attempts=1)
    Throttler(1.0).install(aws)
    catalogue = load_catalogue(aws, cache_dir=tmp_path)
    assert not catalogue.hydrated and "RequestLimitExceeded" in catalogue.message


def test_transient_failure_falls_back_to_an_expired_cache(world, tmp_path):
    env = world(SMALL_WORLD)
    fresh = load_catalogue(env.session(), cache_dir=tmp_path, clock=lambda: 0.0)
    aws = env.session(max_attempts=1)
    Throttler(1.0).install(aws)
    stale = load_catalogue(aws, cache_dir=tmp_path, clock=lambda: 2 * CATALOGUE_TTL_SECONDS)
    assert stale.hydrated and stale.instance_types == fresh.instance_types
    assert "refresh failed" in stale.message


def test_an_unwritable_cache_does_not_fail_the_run(world, tmp_path):
    """The cache only saves time: a read-only or full home (common in CI containers) must not crash a plan."""
    env = world(SMALL_WORLD)
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    catalogue = load_catalogue(env.session(), cache_dir=blocked)
    assert catalogue.hydrated and catalogue.message == ""


def test_a_cache_from_the_future_is_refetched(world, tmp_path):
    """A clock set back (or a cache copied from a skewed machine) must not make a copy fresh for days."""
    env = world(SMALL_WORLD)
    load_catalogue(env.session(), cache_dir=tmp_path, clock=lambda: 10 * CATALOGUE_TTL_SECONDS)
    earlier = env.session()
    assert load_catalogue(earlier, cache_dir=tmp_path, clock=lambda: 1.0).fetched_at == 1.0
    assert earlier.call_counts()["DescribeInstanceTypes"] == 1


def test_every_page_is_read(monkeypatch, tmp_path):
    """Real EC2 pages DescribeInstanceTypes by 100 and offerings by 1000 (moto never pages): NextToken is followed."""
    from botocore.stub import Stubber

    from karpenter_gitops.adapters.aws.client import AwsSession

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    aws = AwsSession("us-west-2", cache_namespace="stubbed")
    stub = Stubber(aws.client("ec2"))
    for page, token in ((["m5.large"], {"NextToken": "2"}), (["m7g.large"], {})):
        stub.add_response("describe_instance_types", {"InstanceTypes": [{"InstanceType": t} for t in page], **token})
    for page, token in ((["m5.large"], {"NextToken": "2"}), (["m7g.large"], {})):
        offerings = [{"InstanceType": t, "Location": "us-west-2a", "LocationType": "availability-zone"} for t in page]
        stub.add_response("describe_instance_type_offerings", {"InstanceTypeOfferings": offerings, **token})
    with stub:
        catalogue = load_catalogue(aws, cache_dir=tmp_path)
    stub.assert_no_pending_responses()
    assert [t["InstanceType"] for t in catalogue.instance_types] == ["m5.large", "m7g.large"]
    assert set(catalogue.offerings) == {"m5.large", "m7g.large"}
