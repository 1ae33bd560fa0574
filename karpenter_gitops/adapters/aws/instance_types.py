"""The region's instance-type catalogue and zonal offerings, as Karpenter loads them
(``pkg/providers/instancetype/`` and ``pkg/controllers/providers/instancetype/`` of github.com/aws/karpenter-provider-aws).

Karpenter refreshes both every 12 h; so do we, through an on-disk cache per region (and per
endpoint namespace, so an emulator's catalogue never answers for real AWS). Until the catalogue
is loaded it is *not hydrated*: the reconciler reports "awaiting the catalogue", never Karpenter's
false "no instance types found" (aws/karpenter-provider-aws#8273). When a refresh fails transiently an expired cache
is still used, as Karpenter keeps its last map.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from karpenter_gitops.adapters import atomic
from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.error_kinds import TransientAWSError

CATALOGUE_TTL_SECONDS = 12 * 3600
_FORMAT = 1


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "karpenter-gitops"


@dataclass(frozen=True)
class Catalogue:
    """Raw DescribeInstanceTypes entries and instance type → zones offered, for the pure mapping code."""

    region: str
    instance_types: tuple[dict, ...] = ()
    offerings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fetched_at: float = 0.0  # epoch seconds of the AWS answer (not of the cache read)
    message: str = ""  # why it is not hydrated, or that a stale copy is in use
    refused: bool = False  # AWS answered with a persistent error (e.g. access denied): retrying won't help

    @property
    def hydrated(self) -> bool:
        return bool(self.instance_types) and bool(self.offerings)

    @property
    def zones(self) -> tuple[str, ...]:
        return tuple(sorted({zone for zones in self.offerings.values() for zone in zones}))


def load_catalogue(
    aws: AwsSession,
    *,
    cache_dir: Path | None = None,
    ttl: float = CATALOGUE_TTL_SECONDS,
    clock: Callable[[], float] = time.time,
) -> Catalogue:
    """The catalogue from a fresh cache, else from AWS (then cached); unhydrated on a transient failure.

    Persistent AWS errors (e.g. access denied) raise PersistentAWSError.
    """
    path = (cache_dir or default_cache_dir()) / aws.cache_namespace / f"instance-types-{aws.region}.json"
    cached = _read(path, aws.region)
    if cached and 0 <= clock() - cached.fetched_at < ttl:  # a copy from the future (clock reset) is not fresh
        return cached
    try:
        fresh = _fetch(aws, clock())
    except TransientAWSError as error:
        if cached:
            return Catalogue(
                cached.region,
                cached.instance_types,
                cached.offerings,
                cached.fetched_at,
                f"using the cache from {time.ctime(cached.fetched_at)}: refresh failed: {error}",
            )
        return Catalogue(aws.region, message=str(error))
    if fresh.hydrated:
        try:
            _write(path, fresh)
        except OSError:  # the cache only saves time: a read-only or full home must not fail the run
            pass
    return fresh


def _fetch(aws: AwsSession, now: float) -> Catalogue:
    instance_types = aws.paginate(
        "ec2",
        "DescribeInstanceTypes",
        "InstanceTypes",
        Filters=[
            {"Name": "supported-virtualization-type", "Values": ["hvm"]},
            {"Name": "processor-info.supported-architecture", "Values": ["x86_64", "arm64"]},
        ],
        MaxResults=100,
    )
    raw_offerings = aws.paginate(
        "ec2", "DescribeInstanceTypeOfferings", "InstanceTypeOfferings", LocationType="availability-zone", MaxResults=1000
    )
    zones: dict[str, set[str]] = {}
    for offering in raw_offerings:
        zones.setdefault(offering["InstanceType"], set()).add(offering["Location"])
    message = "" if instance_types and zones else "AWS returned an empty instance-type catalogue"
    return Catalogue(
        aws.region,
        tuple(sorted(instance_types, key=lambda t: t["InstanceType"])),
        {name: tuple(sorted(found)) for name, found in sorted(zones.items())},
        now,
        message,
    )


def _read(path: Path, region: str) -> Catalogue | None:
    """The cached catalogue, or None when absent or unreadable (a corrupt file is simply refetched)."""
    try:
        data = json.loads(path.read_text())
        if data["format"] != _FORMAT or data["region"] != region:
            return None
        offerings = {name: tuple(zones) for name, zones in data["offerings"].items()}
        catalogue = Catalogue(region, tuple(data["instanceTypes"]), offerings, float(data["fetchedAt"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return catalogue if catalogue.hydrated else None


def _write(path: Path, catalogue: Catalogue) -> None:
    """Written atomically, so a concurrent reader never sees half a file."""
    data = {
        "format": _FORMAT,
        "region": catalogue.region,
        "fetchedAt": catalogue.fetched_at,
        "instanceTypes": list(catalogue.instance_types),
        "offerings": {name: list(zones) for name, zones in catalogue.offerings.items()},
    }
    atomic.write_file(path, json.dumps(data, separators=(",", ":"), default=str))
