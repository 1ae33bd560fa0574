"""Subnets and security groups by selector terms, against the embedded default world."""

from karpenter_gitops.aws.network import resolve_security_groups, resolve_subnets
from karpenter_gitops.model import SecurityGroupSelectorTerm, SubnetSelectorTerm


def test_subnets_by_discovery_tag_most_free_ips_first_with_zones(default_aws):
    subnets = resolve_subnets(default_aws.session(), [SubnetSelectorTerm(tags={"karpenter.sh/discovery": "demo"})])
    assert [(s.id, s.zone, s.available_ips) for s in subnets] == [
        ("subnet-0d1a000000000b001", "us-west-2b", 1003),
        ("subnet-0d1a000000000a001", "us-west-2a", 812),
        ("subnet-0d1a000000000c001", "us-west-2c", 455),
    ]
    assert all(s.zone_id and s.zone_id.startswith("usw2-az") for s in subnets)


def test_subnet_terms_are_merged_without_duplicates(default_aws):
    subnets = resolve_subnets(default_aws.session(), [
        SubnetSelectorTerm(id="subnet-0d1a000000000a002"),
        SubnetSelectorTerm(tags={"Name": "demo-*"}),
    ])
    assert len(subnets) == 4 and len({s.id for s in subnets}) == 4
    assert resolve_subnets(default_aws.session(), [SubnetSelectorTerm(tags={"karpenter.sh/discovery": "other"})]) == ()


def test_security_groups_by_wildcard_tag_and_by_name_sorted_by_id(default_aws):
    groups = resolve_security_groups(default_aws.session(), [
        SecurityGroupSelectorTerm(tags={"karpenter.sh/discovery": "*"}),
        SecurityGroupSelectorTerm(name="payments-db"),
        SecurityGroupSelectorTerm(id="sg-0d1a0000000000001"),
    ])
    assert [(g.id, g.name) for g in groups] == [
        ("sg-0d1a0000000000001", "demo-node"),
        ("sg-0d1a0000000000002", "demo-cluster"),
        ("sg-0d1a0000000000003", "payments-db"),
    ]
