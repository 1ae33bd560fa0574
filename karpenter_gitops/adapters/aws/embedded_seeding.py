"""Seeding a validated world into moto: through moto's API where it can express the thing, its backend where not.

IAM goes through the API. Images in any of EC2's eight states, the reserved ``/aws/service/...``
SSM parameters, subnets and security groups under the fixture's own ids (created, then re-keyed in
the backend; tags attached after the re-key because moto stores tags by resource id), a subnet's
free-IP count, a narrowed instance-type catalogue and EKS clusters go into moto's in-process
backends. ``DeprecationTime`` is not modelled by moto, but its serializer reads any attribute named
after a shape member, so a ``deprecation_time`` attribute makes DescribeImages return it.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
from datetime import UTC, datetime
from typing import Any

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.embedded_world import World
from karpenter_gitops.core.errors import InputError


def seed(world: World, endpoint_url: str) -> None:
    """Reset moto to a clean account and put ``world`` in it (IAM through the server at ``endpoint_url``)."""
    from moto.backends import get_backend
    from moto.moto_api._internal.models import moto_api_backend

    moto_api_backend.reset()  # a clean account, created under this world's environment
    ec2 = get_backend("ec2")[world.account_id][world.region]
    ssm = get_backend("ssm")[world.account_id][world.region]
    _seed_images(ec2, world)
    _seed_parameters(ssm, world)
    _seed_network(ec2, world)
    _narrow_instance_types(ec2, world.instance_types)
    _seed_iam(world, endpoint_url)
    _seed_clusters(get_backend("eks")[world.account_id][world.region], world)


def _seed_clusters(eks: Any, world: World) -> None:
    """EKS clusters of the world's Kubernetes version, so a program's cluster look-up finds them."""
    for cluster in world.section("clusters"):
        created = eks.create_cluster(
            name=cluster["name"],
            role_arn=f"arn:aws:iam::{world.account_id}:role/eks-cluster",
            resources_vpc_config={},
            kubernetes_network_config=_network_config(cluster.get("ipFamily", "ipv4")),
            version=str(world.kubernetes),
        )
        # moto draws the endpoint at random per process; a real cluster keeps its own, so runs compare.
        token = hashlib.sha256(f"{world.account_id}/{world.region}/{cluster['name']}".encode()).hexdigest()[:32].upper()
        created.endpoint = f"https://{token}.gr7.{world.region}.eks.amazonaws.com"


# EKS's default service ranges. Karpenter reads the cluster's from DescribeCluster before it validates
# an AL2023 class (the nodes' kubelet needs it); moto drops its default when ipFamily is given.
_SERVICE_RANGES = {"ipv4": {"serviceIpv4Cidr": "172.20.0.0/16"}, "ipv6": {"serviceIpv6Cidr": "fd00:ec2:172:20::/108"}}


def _network_config(ip_family: str) -> dict[str, str]:
    return {"ipFamily": ip_family, **_SERVICE_RANGES[ip_family]}


def _seed_images(ec2: Any, world: World) -> None:
    from moto.ec2.models.amis import Ami

    for image in world.section("images"):
        owner = image.get("ownerId", world.account_id)
        foreign = owner != world.account_id
        ami = Ami(
            ec2,
            image["id"],
            name=image["name"],
            description=image.get("description"),
            architecture=image["architecture"],
            state=image.get("state", "available"),
            creation_date=_parse_time(image.get("creationDate")),
            owner_id=owner,
            # Another account's image is AWS-published unless the fixture says otherwise (ownerAlias: null).
            owner_alias=image.get("ownerAlias", "amazon") if foreign else None,
            public=foreign,
            virtualization_type="hvm",
            root_device_type="ebs",
            root_device_name="/dev/xvda",
            region_name=f"{world.region}a",
            tags=None if foreign else image.get("tags"),  # EC2 shows an image's tags to its owner only
        )
        if "deprecationTime" in image:
            ami.deprecation_time = _parse_time(image["deprecationTime"]).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        ec2.amis[image["id"]] = ami


def _seed_parameters(ssm: Any, world: World) -> None:
    for name, value in world.section("ssmParameters").items():
        put_parameter(ssm, world.account_id, name, value)


def put_parameter(ssm: Any, account_id: str, name: str, value: str) -> None:
    """A new version of an SSM parameter, written into the backend: PutParameter refuses the reserved ``/aws/`` names."""
    from moto.core.utils import utcnow
    from moto.ssm.models import Parameter

    versions = ssm._parameters[name]
    versions.append(
        Parameter(
            account_id=account_id,
            name=name,
            value=value,
            parameter_type="String",
            description=None,
            allowed_pattern=None,
            keyid=None,
            last_modified_date=utcnow(),
            version=len(versions) + 1,
            data_type="aws:ec2:image",
        )
    )


def _seed_network(ec2: Any, world: World) -> None:
    vpc = ec2.create_vpc(cidr_block="10.0.0.0/16")
    blocks = ipaddress.ip_network("10.0.0.0/16").subnets(new_prefix=22)
    for entry, block in zip(world.section("subnets"), blocks, strict=False):  # blocks: as many as the /16 holds
        subnet = ec2.create_subnet(vpc.id, str(block), availability_zone=entry["availabilityZone"])
        _rekey(ec2.subnets[entry["availabilityZone"]], subnet, entry["id"])
        if "availableIpAddressCount" in entry:
            subnet._available_ip_addresses = entry["availableIpAddressCount"]
        _tag(ec2, entry)
    for entry in world.section("securityGroups"):
        group = ec2.create_security_group(entry["name"], f"{entry['name']} (embedded world)", vpc_id=vpc.id)
        _rekey(ec2.groups[vpc.id], group, entry["id"])
        group.group_id = entry["id"]
        _tag(ec2, entry)


def _rekey(table: dict, resource: Any, new_id: str) -> None:
    """Give a freshly created (still untagged) moto resource the fixture's id."""
    table[new_id] = table.pop(resource.id)
    resource.id = new_id


def _tag(ec2: Any, entry: dict) -> None:
    if entry.get("tags"):
        ec2.create_tags([entry["id"]], entry["tags"])


def _narrow_instance_types(ec2: Any, selection: str | tuple[str, ...]) -> None:
    if selection == "all":
        return
    known = {entry.name for entry in ec2.instance_types}
    unknown = sorted(set(selection) - known)
    if unknown:
        raise InputError(f"world field instanceTypes: moto does not know {', '.join(unknown)}")
    ec2.instance_types = [entry for entry in ec2.instance_types if entry.name in selection]
    original = ec2.describe_instance_type_offerings

    @functools.wraps(original)
    def narrowed(*args: Any, **kwargs: Any) -> list:
        return [offering for offering in original(*args, **kwargs) if offering["InstanceType"] in selection]

    ec2.describe_instance_type_offerings = narrowed


def _seed_iam(world: World, endpoint_url: str) -> None:
    """Roles and profiles through IAM's API, which moto implements fully for these calls."""
    iam = AwsSession(world.region, endpoint_url=endpoint_url, max_attempts=1).client("iam")
    trust = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "ec2.amazonaws.com"}}],
        }
    )
    for role in world.section("roles"):
        iam.create_role(RoleName=role["name"], Path=role.get("path", "/"), AssumeRolePolicyDocument=trust)
    for profile in world.section("instanceProfiles"):
        iam.create_instance_profile(InstanceProfileName=profile["name"], Path=profile.get("path", "/"))
        for role in profile.get("roles", []):
            iam.add_role_to_instance_profile(InstanceProfileName=profile["name"], RoleName=role)


def _parse_time(text: str | None) -> datetime | None:
    if text is None:
        return None
    parsed = datetime.fromisoformat(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
