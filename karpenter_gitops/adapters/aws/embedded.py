"""An embedded AWS for the demo and the tests: moto in server mode on 127.0.0.1, seeded from a world.

A *world fixture* (YAML, see ``karpenter_gitops/adapters/aws/worlds/default.yaml``) describes the account:
images, the SSM parameters that publish alias AMIs, roles and instance profiles, subnets,
security groups and which instance types exist. :func:`embedded_aws` starts moto, seeds the world
and points the standard AWS environment (endpoint, dummy credentials, region) at it; on exit the
environment is restored and the server stopped.

Seeding goes through moto's API where the API can express the thing (IAM) and through moto's
in-process backend where it cannot, following the moto reference:

* images in any of EC2's eight states with real creation dates, owners and arm64; another
  account's image is AWS-published (owner alias ``amazon``) unless it says ``ownerAlias: null``,
  and its tags are not seeded, since EC2 shows an image's tags to its owner only;
* ``/aws/service/eks/...`` and ``/aws/service/bottlerocket/...`` parameters (reserved names);
* subnets and security groups under the fixture's own ids (created, then re-keyed in the
  backend; tags are attached after the re-key because moto stores tags by resource id), and a
  subnet's free-IP count;
* ``DeprecationTime``: moto does not model it, but its response serializer reads any attribute
  named after a shape member, so a ``deprecation_time`` attribute on the seeded image makes
  DescribeImages return it without patching moto;
* EKS clusters (``clusters``), so a program's ``aws.eks.get_cluster`` finds its cluster;
* ``instanceTypes: [names]``: the region's backend gets its own narrowed list (moto keeps the
  catalogue on the class), and offerings are narrowed to match;
* prices: moto has no Pricing API and answers DescribeSpotPriceHistory with a placeholder
  (``0.00001`` from 2006), so a WSGI layer in front of moto (the reference's server-side recipe)
  answers those two calls itself: ``GetProducts`` from Karpenter's static on-demand table for the
  region asked (filters and paging as the Pricing API), and the spot history with the world's own
  spot prices — a fixed share of on-demand per (type, zone), 30–70 %, from a hash of both, for every
  type moto offers in a zone. :data:`SPOT_SHARE` says how they are made.
* RunInstances refuses a launch template whose instance profile IAM does not have, dry run or not,
  as EC2 does (moto launches it), and CreateLaunchTemplate userData over 16,384 bytes once decoded
  (moto takes any size): Karpenter's validation reads both refusals (:class:`_LaunchChecks`).

moto's backends are process-global, so one world is embedded per process at a time.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import hashlib
import html
import io
import ipaddress
import json
import logging
import os
import random
import re
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.errors import InputError

DEFAULT_WORLD = "default"
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
_CLEARED_ENV = ("AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")

# --- the world fixture contract -------------------------------------------------------------

_TAGS = {"type": "object", "additionalProperties": {"type": "string"}, "propertyNames": {"minLength": 1}}
_TIMESTAMP = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"}
_NAME = {"type": "string", "minLength": 1}
_IAM_PATH = {"type": "string", "pattern": r"^/([\w+=,.@-]+/)*$"}


def _items(properties: dict, required: list[str]) -> dict:
    return {
        "type": "array",
        "items": {"type": "object", "additionalProperties": False, "required": required, "properties": properties},
    }


# Every state EC2 reports for an image; Karpenter selects only ``available`` ones.
IMAGE_STATES = ("available", "pending", "invalid", "deregistered", "transient", "failed", "error", "disabled")

WORLD_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["region", "kubernetesVersion"],
    "properties": {
        "region": {"type": "string", "pattern": r"^[a-z]{2}(-[a-z]+)+-\d$"},
        "accountId": {"type": "string", "pattern": r"^\d{12}$"},
        "kubernetesVersion": {"type": "string", "pattern": r"^\d+\.\d+$"},
        "images": _items(
            {
                "id": {"type": "string", "pattern": r"^ami-[0-9a-z]+$"},
                "name": _NAME,
                "description": {"type": "string"},
                "architecture": {"enum": ["x86_64", "arm64", "i386", "x86_64_mac", "arm64_mac"]},
                "state": {"enum": list(IMAGE_STATES)},
                "creationDate": _TIMESTAMP,
                "deprecationTime": _TIMESTAMP,
                "ownerId": {"type": "string", "pattern": r"^\d{12}$"},
                "ownerAlias": {"enum": ["amazon", "aws-marketplace", None]},
                "tags": _TAGS,
            },
            ["id", "name", "architecture"],
        ),
        "ssmParameters": {
            "type": "object",
            "propertyNames": {"pattern": "^/"},
            "additionalProperties": {"type": "string", "minLength": 1},
        },
        "roles": _items({"name": {"type": "string", "pattern": r"^[\w+=,.@-]+$"}, "path": _IAM_PATH}, ["name"]),
        "instanceProfiles": _items(
            {
                "name": {"type": "string", "pattern": r"^[\w+=,.@-]+$"},
                "path": _IAM_PATH,
                "roles": {"type": "array", "maxItems": 1, "items": _NAME},  # IAM allows one role per profile
            },
            ["name"],
        ),
        "subnets": {
            **_items(
                {
                    "id": {"type": "string", "pattern": r"^subnet-[0-9a-z]+$"},
                    "availabilityZone": {"type": "string", "pattern": r"^[a-z]{2}(-[a-z]+)+-\d[a-z]$"},
                    "tags": _TAGS,
                    "availableIpAddressCount": {"type": "integer", "minimum": 0, "maximum": 1019},
                },
                ["id", "availabilityZone"],
            ),
            "maxItems": 64,
        },
        "securityGroups": _items(
            {"id": {"type": "string", "pattern": r"^sg-[0-9a-z]+$"}, "name": _NAME, "tags": _TAGS}, ["id", "name"]
        ),
        "clusters": _items(
            {"name": _NAME, "ipFamily": {"enum": ["ipv4", "ipv6"]}},
            ["name"],
        ),
        "instanceTypes": {
            "oneOf": [{"const": "all"}, {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": r"^[a-z0-9-]+\.[a-z0-9-]+$"}}]
        },
    },
}


@dataclass(frozen=True)
class World:
    """A validated world fixture (the YAML's camelCase fields, as plain data) and where it came from."""

    source: str
    data: dict

    @property
    def region(self) -> str:
        return self.data["region"]

    @property
    def account_id(self) -> str:
        return self.data.get("accountId", "123456789012")

    @property
    def kubernetes(self) -> str:
        return self.data["kubernetesVersion"]

    @property
    def instance_types(self) -> str | tuple[str, ...]:
        selection = self.data.get("instanceTypes", "all")
        return selection if selection == "all" else tuple(sorted(set(selection)))

    def section(self, name: str) -> Any:
        return self.data.get(name, {} if name == "ssmParameters" else [])


def load_world(source: str | Path | None = None) -> World:
    """A world from a YAML file, or a packaged world by name (``default``); InputError if it is invalid."""
    if source is None or (isinstance(source, str) and "/" not in source and not source.endswith((".yaml", ".yml"))):
        name = source or DEFAULT_WORLD
        resource = resources.files("karpenter_gitops.adapters.aws.worlds") / f"{name}.yaml"
        if not resource.is_file():
            raise InputError(f"no packaged world named {name!r}", hint="pass a world YAML file instead")
        return parse_world(resource.read_text(), f"<packaged world {name}>")
    path = Path(source)
    try:
        text = path.read_text()
    except OSError as error:
        raise InputError(f"cannot read the world fixture: {error.strerror}", file=str(path)) from error
    return parse_world(text, str(path))


def parse_world(text: str, source: str) -> World:
    """Validate a world fixture strictly: an unknown or malformed field is an InputError naming its path."""
    try:
        data = _plain(yaml_reader.document(text))
    except yaml_reader.YAMLError as error:
        problem, line = yaml_reader.problem(error)
        raise InputError(f"not valid YAML: {problem}", file=source, line=line) from error
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(WORLD_SCHEMA).iter_errors(data))
    if error is not None:
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
        raise InputError(f"world field {where.lstrip('.') or '(top level)'}: {error.message}", file=source)
    world = World(source, data)
    _check_references(world)
    return world


def _plain(value: Any) -> Any:
    """YAML timestamps (unquoted dates) become the ISO strings the schema expects."""
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _check_references(world: World) -> None:
    """Ids are unique and every profile's role is declared."""
    for section, key in (("images", "id"), ("subnets", "id"), ("securityGroups", "id"), ("roles", "name"),
                         ("instanceProfiles", "name")):
        seen: set[str] = set()
        for index, entry in enumerate(world.section(section)):
            if entry[key] in seen:
                raise InputError(f"world field {section}[{index}].{key}: duplicate {entry[key]!r}", file=world.source)
            seen.add(entry[key])
    roles = {role["name"] for role in world.section("roles")}
    for index, profile in enumerate(world.section("instanceProfiles")):
        for position, role in enumerate(profile.get("roles", [])):
            if role not in roles:
                raise InputError(f"world field instanceProfiles[{index}].roles[{position}]: role {role!r} is not "
                                 f"declared under roles", file=world.source)


# --- the server -----------------------------------------------------------------------------

_ONE_WORLD = threading.Lock()


@dataclass(frozen=True)
class EmbeddedAWS:
    """What :func:`embedded_aws` yields: where the emulator listens and the world it holds."""

    endpoint_url: str
    world: World
    environment: dict[str, str]  # the variables set for the duration (dummy credentials only)

    @property
    def region(self) -> str:
        return self.world.region

    @property
    def cache_namespace(self) -> str:
        """On-disk cache namespace: the emulator's catalogue depends only on moto's data and the world's selection."""
        from moto import __version__ as moto_version

        selection = json.dumps(self.world.instance_types)
        return f"moto-{moto_version}-{hashlib.sha256(selection.encode()).hexdigest()[:12]}"

    def session(self, **options: Any) -> AwsSession:
        """An AwsSession on this emulator (options as for AwsSession, e.g. ``max_attempts``)."""
        return AwsSession(self.region, endpoint_url=self.endpoint_url, cache_namespace=self.cache_namespace, **options)

    def publish(self, name: str, value: str) -> None:
        """A new version of a public SSM parameter, as AWS publishes an AMI release (PutParameter refuses ``/aws/`` names)."""
        from moto.backends import get_backend

        _put_parameter(get_backend("ssm")[self.world.account_id][self.region], self.world.account_id, name, value)


class EmbeddedServer:
    """moto's server app on 127.0.0.1, reusable across worlds (e.g. one per test session).

    The server binds port 0 itself and keeps the socket: probing a free port and letting moto bind it
    later lost the race to any process that took the port meanwhile, and moto's thread then died
    while the run waited for it forever.
    """

    def __init__(self) -> None:
        try:
            from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
            from werkzeug.serving import make_server
        except ModuleNotFoundError as missing:  # the `embedded` extra is optional
            raise InputError(
                f"--embedded-aws needs moto, which is not installed (no module {missing.name!r})",
                hint="pip install 'karpenter-gitops[embedded]'",
            ) from None

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one access-log line per AWS call is noise here
        self.prices = _PriceService(DomainDispatcherApplication(create_backend_app))
        try:
            self._server = make_server("127.0.0.1", 0, _LaunchChecks(self.prices), threaded=True)
        except OSError as error:
            raise InputError(
                f"the embedded AWS cannot listen on 127.0.0.1: {error.strerror or error}",
                hint="check that the loopback interface is up and this process may open sockets",
            ) from None
        self.endpoint_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-aws", daemon=True)

    def start(self) -> EmbeddedServer:
        self._thread.start()  # the socket already listens: requests queue until the loop picks them up
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


class _LaunchChecks:
    """EC2's checks of the instance profile at launch and of the userData size, which moto leaves out, around
    moto's WSGI app.

    EC2 answers a RunInstances (a dry run too) whose launch template names an instance profile IAM does not
    have with ``InvalidParameterValue`` "… Invalid IAM Instance Profile name"; Karpenter's validation dry run
    turns exactly that answer into its condition (1.15) or a silent requeue (1.14), so the controller
    compared with ``plan`` must get it here too."""

    def __init__(self, app: Any) -> None:
        self._app = app

    def __call__(self, environ: dict, start_response: Any) -> Any:
        scope = re.search(r"Credential=[^/]+/[^/]+/([^/]+)/ec2/", environ.get("HTTP_AUTHORIZATION", ""))
        if scope and environ.get("REQUEST_METHOD") == "POST":
            body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
            environ["wsgi.input"] = io.BytesIO(body)
            form = urllib.parse.parse_qs(body.decode("utf-8", "replace"))
            profile = _unknown_launch_profile(form, scope[1]) if form.get("Action") == ["RunInstances"] else None
            if profile is not None:
                message = f"Value ({profile}) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name"
                return _refuse(start_response, "InvalidParameterValue", message)
            if form.get("Action") == ["CreateLaunchTemplate"] and _user_data_bytes(form) > USER_DATA_LIMIT:
                return _refuse(start_response, "InvalidUserData.Malformed", f"User data is limited to {USER_DATA_LIMIT} bytes")
        return self._app(environ, start_response)


USER_DATA_LIMIT = 16_384  # EC2's, on the decoded userData


def _user_data_bytes(form: dict[str, list[str]]) -> int:
    """The decoded size of a CreateLaunchTemplate's userData (0 without any, or when it is not base64: moto says so)."""
    try:
        return len(base64.b64decode(form.get("LaunchTemplateData.UserData", [""])[0], validate=True))
    except binascii.Error:
        return 0


def _refuse(start_response: Any, code: str, message: str) -> list[bytes]:
    reply = (f"<Response><Errors><Error><Code>{code}</Code><Message>{html.escape(message)}</Message></Error></Errors>"
             "<RequestID>embedded</RequestID></Response>").encode()
    start_response("400 Bad Request", [("Content-Type", "text/xml"), ("Content-Length", str(len(reply)))])
    return [reply]


def _unknown_launch_profile(form: dict[str, list[str]], region: str) -> str | None:
    """The instance profile name of the RunInstances' launch template when IAM does not have it, else None."""
    from moto.backends import get_backend
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.exceptions import EC2ClientError
    from moto.iam.exceptions import NotFoundException

    account = os.environ.get("MOTO_ACCOUNT_ID", DEFAULT_ACCOUNT_ID)
    name, version = form.get("LaunchTemplate.LaunchTemplateName", [None])[0], form.get("LaunchTemplate.Version", ["$Default"])[0]
    try:
        data = get_backend("ec2")[account][region].get_launch_template_by_name(name).get_version(version).data if name else {}
    except (EC2ClientError, ValueError):  # an unknown template or version: moto answers that itself
        return None
    profile = (data.get("IamInstanceProfile") or {}).get("Name")
    if not profile:
        return None
    try:
        get_backend("iam")[account]["global"].get_instance_profile(profile)
    except NotFoundException:
        return profile
    return None


@contextlib.contextmanager
def embedded_aws(world: World | str | Path | None = None, *, server: EmbeddedServer | None = None) -> Iterator[EmbeddedAWS]:
    """Seed ``world`` (default: the packaged default world) into moto and point the AWS environment at it."""
    world = world if isinstance(world, World) else load_world(world)
    if not _ONE_WORLD.acquire(blocking=False):
        raise RuntimeError("an embedded AWS world is already active in this process (moto's state is global)")
    own_server = server is None
    try:
        server = server or EmbeddedServer().start()
        environment = {
            **DUMMY_CREDENTIALS,
            "AWS_ENDPOINT_URL": server.endpoint_url,
            "AWS_REGION": world.region,
            "AWS_DEFAULT_REGION": world.region,
            "AWS_CONFIG_FILE": os.devnull,  # nothing from the user's AWS config or credentials leaks in
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "MOTO_ACCOUNT_ID": world.account_id,
            "MOTO_EC2_LOAD_DEFAULT_AMIS": "false",  # only the world's images: "newest" stays deterministic
        }
        with _patched_environment(environment, _CLEARED_ENV):
            _seed(world, server.endpoint_url)
            server.prices.world = world
            yield EmbeddedAWS(server.endpoint_url, world, environment)
    finally:
        if server is not None:
            server.prices.world = None
        if own_server and server is not None:
            server.stop()
        _ONE_WORLD.release()


@contextlib.contextmanager
def _patched_environment(values: dict[str, str], cleared: tuple[str, ...]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in (*values, *cleared)}
    os.environ.update(values)
    for name in cleared:
        os.environ.pop(name, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- seeding --------------------------------------------------------------------------------


def _seed(world: World, endpoint_url: str) -> None:
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
            version=world.kubernetes,
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
        _put_parameter(ssm, world.account_id, name, value)


def _put_parameter(ssm: Any, account_id: str, name: str, value: str) -> None:
    from moto.core.utils import utcnow
    from moto.ssm.models import Parameter

    versions = ssm._parameters[name]
    versions.append(Parameter(
        account_id=account_id, name=name, value=value, parameter_type="String", description=None,
        allowed_pattern=None, keyid=None, last_modified_date=utcnow(), version=len(versions) + 1, data_type="aws:ec2:image",
    ))


def _seed_network(ec2: Any, world: World) -> None:
    vpc = ec2.create_vpc(cidr_block="10.0.0.0/16")
    blocks = ipaddress.ip_network("10.0.0.0/16").subnets(new_prefix=22)
    for entry, block in zip(world.section("subnets"), blocks):
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
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                                "Principal": {"Service": "ec2.amazonaws.com"}}]})
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
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


# --- prices ---------------------------------------------------------------------------------

SPOT_SHARE = (0.30, 0.70)  # the embedded world's spot price: this share of on-demand, drawn per (type, zone)
_PAGE = 100  # GetProducts' largest page
_EC2_NAMESPACE = "http://ec2.amazonaws.com/doc/2016-11-15/"


def spot_price(instance_type: str, zone: str, on_demand: float) -> float:
    """The embedded world's spot price of one offering: stable across runs and processes."""
    digest = int.from_bytes(hashlib.sha256(f"{instance_type}/{zone}".encode()).digest()[:4], "big")
    low, high = SPOT_SHARE
    return round(on_demand * (low + (high - low) * digest / 2**32), 5)


def _price_item(instance_type: str, region: str, price: float, metal: bool) -> str:
    """One PriceList entry as the Pricing API writes it (the fields Karpenter reads, and their neighbours)."""
    sku = hashlib.sha256(f"{region}/{instance_type}".encode()).hexdigest()[:16].upper()
    unit = "CNY" if region.startswith("cn-") else "USD"
    return json.dumps({
        "product": {"productFamily": "Compute Instance (bare metal)" if metal else "Compute Instance", "sku": sku,
                    "attributes": {"instanceType": instance_type, "regionCode": region, "operatingSystem": "Linux",
                                   "tenancy": "Dedicated" if metal else "Shared", "preInstalledSw": "NA",
                                   "capacitystatus": "Used", "marketoption": "OnDemand", "servicecode": "AmazonEC2"}},
        "serviceCode": "AmazonEC2",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {"priceDimensions": {f"{sku}.JRTCKXETXF.6YS6EN2CT7": {
            "unit": "Hrs", "pricePerUnit": {unit: f"{price:.10f}"}}}}}},
    })  # fmt: skip


class _PriceService:
    """WSGI in front of moto: answers GetProducts and DescribeSpotPriceHistory for the active world, passes the rest on."""

    def __init__(self, app: Any):
        self.app = app
        self.world: World | None = None

    def __call__(self, environ: dict, start_response: Any) -> Any:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        if target.startswith("AWSPriceListService."):
            return self._pricing(target.split(".", 1)[1], self._body(environ), start_response)
        if environ.get("REQUEST_METHOD") == "POST" and environ.get("CONTENT_TYPE", "").startswith("application/x-www-form-urlencoded"):
            body = self._body(environ)
            from urllib.parse import parse_qs

            form = {key: values[-1] for key, values in parse_qs(body.decode(errors="replace")).items()}
            if form.get("Action") == "DescribeSpotPriceHistory" and self.world is not None:
                return self._spot(form, start_response)
        return self.app(environ, start_response)

    @staticmethod
    def _body(environ: dict) -> bytes:
        import io

        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length else b""
        environ["wsgi.input"] = io.BytesIO(body)  # moto reads it again
        return body

    @staticmethod
    def _reply(start_response: Any, status: str, body: bytes, content_type: str) -> list[bytes]:
        start_response(status, [("Content-Type", content_type), ("Content-Length", str(len(body)))])
        return [body]

    def _pricing(self, operation: str, body: bytes, start_response: Any) -> list[bytes]:
        from karpenter_gitops.adapters.aws.pricing import on_demand_prices

        content_type = "application/x-amz-json-1.1"
        try:
            request = json.loads(body or b"{}")
            filters = {f["Field"]: f["Value"] for f in request.get("Filters", [])}
            start = int(request.get("NextToken") or 0)
            size = max(1, min(int(request.get("MaxResults") or _PAGE), _PAGE))
        except (ValueError, TypeError, KeyError, AttributeError):
            return self._reply(start_response, "400 Bad Request", b'{"__type":"InvalidParameterException","Message":"malformed request"}',
                               content_type)
        if operation != "GetProducts":
            message = json.dumps({"__type": "InvalidParameterException", "Message": f"{operation} is not served by the embedded AWS"})
            return self._reply(start_response, "400 Bad Request", message.encode(), content_type)
        region = filters.get("regionCode")
        wanted = {"serviceCode": "AmazonEC2", "preInstalledSw": "NA", "operatingSystem": "Linux", "capacitystatus": "Used",
                  "marketoption": "OnDemand"}
        items: list[str] = []
        if isinstance(region, str) and region and all(filters.get(k, v) == v for k, v in wanted.items()) and request.get("ServiceCode") == "AmazonEC2":
            metal = filters.get("productFamily") == "Compute Instance (bare metal)"
            tenancy = filters.get("tenancy")
            if tenancy is None or tenancy == ("Dedicated" if metal else "Shared"):
                table = on_demand_prices(region).prices
                items = [_price_item(name, region, price, metal) for name, price in sorted(table.items())
                         if "productFamily" not in filters or name.partition(".")[2].startswith("metal") == metal]
        page = items[start:start + size]
        reply: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": page}
        if start + size < len(items):
            reply["NextToken"] = str(start + size)
        return self._reply(start_response, "200 OK", json.dumps(reply).encode(), content_type)

    def _spot(self, form: dict[str, str], start_response: Any) -> list[bytes]:
        from xml.sax.saxutils import escape

        from moto.backends import get_backend

        from karpenter_gitops.adapters.aws.pricing import on_demand_prices

        world = self.world
        ec2 = get_backend("ec2")[world.account_id][world.region]
        types = {v for k, v in form.items() if k.startswith("InstanceType.")}
        zones: set[str] = set()
        for key, name in form.items():
            if key.startswith("Filter.") and key.endswith(".Name") and name == "availability-zone":
                prefix = key[: -len("Name")]
                zones |= {v for k, v in form.items() if k.startswith(prefix + "Value.")}
        products = [v for k, v in sorted(form.items()) if k.startswith("ProductDescription.")] or ["Linux/UNIX"]
        product = next((p for p in products if p.startswith("Linux/UNIX")), None)
        table = on_demand_prices(world.region).prices
        rows = []
        if product is not None:
            for offering in ec2.describe_instance_type_offerings("availability-zone"):
                name, zone = offering["InstanceType"], offering["Location"]
                if name in table and (not types or name in types) and (not zones or zone in zones):
                    rows.append(f"<item><instanceType>{escape(name)}</instanceType><productDescription>{escape(product)}</productDescription>"
                                f"<spotPrice>{spot_price(name, zone, table[name]):.5f}</spotPrice><timestamp>{_SPOT_STAMP}</timestamp>"
                                f"<availabilityZone>{escape(zone)}</availabilityZone></item>")
        body = (f'<DescribeSpotPriceHistoryResponse xmlns="{_EC2_NAMESPACE}"><requestId>embedded-spot-prices</requestId>'
                f"<spotPriceHistorySet>{''.join(rows)}</spotPriceHistorySet><nextToken></nextToken></DescribeSpotPriceHistoryResponse>")
        return self._reply(start_response, "200 OK", body.encode(), "text/xml")


_SPOT_STAMP = "2026-01-01T00:00:00.000Z"  # the embedded world's spot prices do not move


# --- faults ---------------------------------------------------------------------------------

_THROTTLE_REPLIES = {
    "ec2": (503, b"<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded."
                 b"</Message></Error></Errors><RequestID>injected</RequestID></Response>", "text/xml"),
    "iam": (400, b"<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message>"
                 b"</Error><RequestId>injected</RequestId></ErrorResponse>", "text/xml"),
    "ssm": (400, b'{"__type":"ThrottlingException","message":"Rate exceeded"}', "application/x-amz-json-1.1"),
}


class Throttler:
    """Answers a seeded-random ``fraction`` of HTTP attempts with the service's throttling error.

    Installed as a botocore ``before-send`` hook on an AwsSession's clients, so botocore's retry
    logic sees exactly what AWS would send; the real request never leaves for those attempts.
    """

    def __init__(self, fraction: float, *, seed: int = 0):
        self.fraction = fraction
        self.injected = 0
        self._random = random.Random(seed)
        self._lock = threading.Lock()

    def install(self, aws: AwsSession) -> Throttler:
        for service in _THROTTLE_REPLIES:
            aws.register(f"before-send.{service}", self._maybe_throttle)
        return self

    def _maybe_throttle(self, request: Any, event_name: str, **_: Any) -> Any:
        from botocore.awsrequest import AWSResponse

        with self._lock:
            if self._random.random() >= self.fraction:
                return None
            self.injected += 1
        status, body, content_type = _THROTTLE_REPLIES[event_name.split(".")[1]]
        return AWSResponse(request.url, status, {"Content-Type": content_type}, _RawBody(body))


class _RawBody:
    """The minimal raw-stream interface botocore reads a response body through."""

    def __init__(self, body: bytes):
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


def run_against(command: list[str], fixture: str | Path | None = None) -> int:
    """Run ``command`` with the AWS environment pointing at a seeded embedded AWS; its exit code.

    The child inherits the environment ``embedded_aws`` sets (endpoint, region, dummy credentials,
    no user config), so any AWS SDK in it, the Pulumi engine's dynamic providers included, reads the
    world instead of an account."""
    import subprocess

    with embedded_aws(fixture):
        try:
            return subprocess.run(command, check=False).returncode
        except OSError as failure:  # not found, not executable
            raise InputError(f"cannot run {command[0]!r}: {failure.strerror}", hint="give a command on PATH, e.g. `-- pulumi preview`") from None
