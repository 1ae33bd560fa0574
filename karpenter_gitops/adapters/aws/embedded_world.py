"""The world fixture contract of the embedded AWS: what a world YAML may say, checked before anything is seeded.

A world (see ``karpenter_gitops/adapters/aws/worlds/default.yaml``) describes one account: images,
the SSM parameters that publish alias AMIs, roles and instance profiles, subnets, security groups,
EKS clusters and which instance types exist. It is input from a user like any manifest, so it is
validated strictly (an unknown or malformed field is an InputError naming its path) apart from the
moto code that seeds it (``embedded_seeding``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from karpenter_gitops.core import versions, yaml_reader
from karpenter_gitops.core.errors import InputError

DEFAULT_WORLD = "default"

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
            "oneOf": [
                {"const": "all"},
                {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": r"^[a-z0-9-]+\.[a-z0-9-]+$"}},
            ]
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
    def kubernetes(self) -> versions.Kubernetes:
        return versions.Kubernetes.parse(self.data["kubernetesVersion"])

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
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _check_references(world: World) -> None:
    """Ids are unique and every profile's role is declared."""
    for section, key in (
        ("images", "id"),
        ("subnets", "id"),
        ("securityGroups", "id"),
        ("roles", "name"),
        ("instanceProfiles", "name"),
    ):
        seen: set[str] = set()
        for index, entry in enumerate(world.section(section)):
            if entry[key] in seen:
                raise InputError(f"world field {section}[{index}].{key}: duplicate {entry[key]!r}", file=world.source)
            seen.add(entry[key])
    roles = {role["name"] for role in world.section("roles")}
    for index, profile in enumerate(world.section("instanceProfiles")):
        for position, role in enumerate(profile.get("roles", [])):
            if role not in roles:
                raise InputError(
                    f"world field instanceProfiles[{index}].roles[{position}]: role {role!r} is not declared under roles",
                    file=world.source,
                )
