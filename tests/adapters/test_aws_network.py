"""Subnets and security groups by selector terms, against the embedded default world."""

from datetime import UTC

from karpenter_gitops.adapters.aws.network_lookup import (
    resolve_security_groups,
    resolve_subnets,
)
from karpenter_gitops.core.model import SecurityGroupSelectorTerm, SubnetSelectorTerm
from karpenter_gitops.core.versions import Kubernetes


def test_subnets_by_discovery_tag_most_free_ips_first_with_zones(default_aws):
    subnets = resolve_subnets(default_aws.session(), [SubnetSelectorTerm(tags={"karpenter.sh/discovery": "demo"})])
    assert [(s.id, s.zone, s.available_ips) for s in subnets] == [
        ("subnet-0d1a000000000b001", "us-west-2b", 1003),
        ("subnet-0d1a000000000a001", "us-west-2a", 812),
        ("subnet-0d1a000000000c001", "us-west-2c", 455),
    ]
    assert all(s.zone_id and s.zone_id.startswith("usw2-az") for s in subnets)


def test_subnet_terms_are_merged_without_duplicates(default_aws):
    subnets = resolve_subnets(
        default_aws.session(),
        [
            SubnetSelectorTerm(id="subnet-0d1a000000000a002"),
            SubnetSelectorTerm(tags={"Name": "demo-*"}),
        ],
    )
    assert len(subnets) == 4 and len({s.id for s in subnets}) == 4
    assert resolve_subnets(default_aws.session(), [SubnetSelectorTerm(tags={"karpenter.sh/discovery": "other"})]) == ()


def test_security_groups_by_wildcard_tag_and_by_name_sorted_by_id(default_aws):
    groups = resolve_security_groups(
        default_aws.session(),
        [
            SecurityGroupSelectorTerm(tags={"karpenter.sh/discovery": "*"}),
            SecurityGroupSelectorTerm(name="payments-db"),
            SecurityGroupSelectorTerm(id="sg-0d1a0000000000001"),
        ],
    )
    assert [(g.id, g.name) for g in groups] == [
        ("sg-0d1a0000000000001", "demo-node"),
        ("sg-0d1a0000000000002", "demo-cluster"),
        ("sg-0d1a0000000000003", "payments-db"),
    ]


def test_every_page_of_subnets_groups_and_images_is_read(monkeypatch):
    """moto answers in one page; real EC2 pages with NextToken, and a dropped page would be a wrong plan."""
    from datetime import datetime

    from botocore.stub import Stubber

    from karpenter_gitops.adapters.aws.amis import resolve_amis
    from karpenter_gitops.adapters.aws.client import AwsSession
    from karpenter_gitops.core.model import AMISelectorTerm

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    aws = AwsSession("us-west-2", cache_namespace="stubbed")
    stub = Stubber(aws.client("ec2"))
    for zone, token in (("a", {"NextToken": "2"}), ("b", {})):
        subnet = {"SubnetId": f"subnet-{zone}", "AvailabilityZone": f"us-west-2{zone}", "AvailableIpAddressCount": 9}
        stub.add_response("describe_subnets", {"Subnets": [subnet], **token})
    for group, token in (("sg-1", {"NextToken": "2"}), ("sg-2", {})):
        stub.add_response("describe_security_groups", {"SecurityGroups": [{"GroupId": group, "GroupName": group}], **token})
    for image, token in (("ami-old", {"NextToken": "2"}), ("ami-new", {})):
        created = "2025-01-01T00:00:00.000Z" if image == "ami-old" else "2025-02-01T00:00:00.000Z"
        entry = {"ImageId": image, "Name": image, "Architecture": "x86_64", "State": "available", "CreationDate": created}
        stub.add_response("describe_images", {"Images": [entry], **token})
    with stub:
        subnets = resolve_subnets(aws, [SubnetSelectorTerm(tags={"k": "v"})])
        groups = resolve_security_groups(aws, [SecurityGroupSelectorTerm(tags={"k": "v"})])
        amis = resolve_amis(aws, [AMISelectorTerm(tags={"k": "v"})], Kubernetes(1, 32), now=datetime(2025, 3, 1, tzinfo=UTC))
    stub.assert_no_pending_responses()
    assert [s.id for s in subnets] == ["subnet-a", "subnet-b"] and [g.id for g in groups] == ["sg-1", "sg-2"]
    assert [a.id for a in amis.amis] == ["ami-new"]  # the newer image was on the second page
