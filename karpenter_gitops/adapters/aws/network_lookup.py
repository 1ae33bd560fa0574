"""Subnets and security groups matched by a NodeClass's selector terms, as Karpenter resolves them.

Each term is one Describe query (id, tags, and for security groups the group name); the results
are merged by id. An empty result is an answer (SubnetsNotFound / SecurityGroupsNotFound), not
an error; AWS failures raise :class:`~karpenter_gitops.adapters.aws.error_kinds.AWSError`.
"""

from __future__ import annotations

from collections.abc import Sequence

from karpenter_gitops.adapters.aws.client import AwsSession, tag_filters
from karpenter_gitops.core.model import SecurityGroupSelectorTerm, SubnetSelectorTerm
from karpenter_gitops.core.resolved import SecurityGroup, Subnet


def resolve_subnets(aws: AwsSession, terms: Sequence[SubnetSelectorTerm]) -> tuple[Subnet, ...]:
    """Matching subnets, most free IPs first, then by id (the order Karpenter prefers them in)."""
    found: dict[str, Subnet] = {}
    for term in terms:
        filters = tag_filters(term.tags) + ([{"Name": "subnet-id", "Values": [term.id]}] if term.id else [])
        if not filters:  # an empty term would match every subnet in the account; CEL forbids it anyway
            continue
        for raw in aws.paginate("ec2", "DescribeSubnets", "Subnets", Filters=filters):
            found[raw["SubnetId"]] = Subnet(
                id=raw["SubnetId"],
                zone=raw["AvailabilityZone"],
                zone_id=raw.get("AvailabilityZoneId"),
                available_ips=int(raw.get("AvailableIpAddressCount", 0)),
            )
    return tuple(sorted(found.values(), key=lambda subnet: (-subnet.available_ips, subnet.id)))


def resolve_security_groups(aws: AwsSession, terms: Sequence[SecurityGroupSelectorTerm]) -> tuple[SecurityGroup, ...]:
    """Matching security groups, by id."""
    found: dict[str, SecurityGroup] = {}
    for term in terms:
        filters = tag_filters(term.tags)
        if term.id:
            filters.append({"Name": "group-id", "Values": [term.id]})
        if term.name:
            filters.append({"Name": "group-name", "Values": [term.name]})
        if not filters:
            continue
        for raw in aws.paginate("ec2", "DescribeSecurityGroups", "SecurityGroups", Filters=filters):
            found[raw["GroupId"]] = SecurityGroup(id=raw["GroupId"], name=raw["GroupName"])
    return tuple(sorted(found.values(), key=lambda group: group.id))
