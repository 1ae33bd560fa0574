"""The IAM side of a NodeClass: does the instance profile exist and carry a role?

Karpenter itself makes no IAM call for ``spec.instanceProfile`` and only finds out at launch
time (an ARN, a typo, a profile without a role). We check up front, by name only: an ARN or a
name with a path is rejected with the name to use and never sent to IAM. For ``spec.role`` Karpenter creates the
profile itself (``pkg/providers/instanceprofile/`` of github.com/aws/karpenter-provider-aws), so only the role's
existence is checked.
"""

from __future__ import annotations

import enum
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from cachetools import TTLCache

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.error_kinds import AWSError, TransientAWSError
from karpenter_gitops.core.resolved import InstanceProfile

PROFILE_TTL_SECONDS = 15 * 60  # Karpenter's InstanceProfileTTL
PROFILES_KEPT = 4096  # far more profiles than a fleet names; past it the oldest answers go first


def profile_cache(timer: Callable[[], float] = time.monotonic) -> TTLCache:
    """A cache of IAM's answers, each kept for Karpenter's InstanceProfileTTL (shared by a process's runs)."""
    return TTLCache(maxsize=PROFILES_KEPT, ttl=PROFILE_TTL_SECONDS, timer=timer)


PROFILE_CACHE = profile_cache()
_CACHE_LOCK = threading.Lock()  # cachetools' caches are not thread-safe; a fleet's stacks resolve in threads

_PROFILE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::\d{12}:instance-profile/(?:.*/)?([^/]+)$")


class ProfileOutcome(enum.StrEnum):
    READY = "Ready"
    ARN_NOT_NAME = "InstanceProfileNameInvalid"  # EC2 would reject it at launch time
    PATH_IN_NAME = "InstanceProfileNameHasPath"  # likewise; IAM itself rejects the name (ValidationError)
    NOT_FOUND = "InstanceProfileNotFound"
    NO_ROLE = "InstanceProfileHasNoRole"  # nodes would launch without credentials and never join
    ROLE_NOT_FOUND = "RoleNotFound"
    TRANSIENT_ERROR = "TransientError"
    AWS_ERROR = "AWSError"


@dataclass(frozen=True)
class ProfileResolution:
    outcome: ProfileOutcome
    message: str
    profile: InstanceProfile | None = None  # None for spec.role (Karpenter names the profile) and for ARNs

    @property
    def ready(self) -> bool:
        return self.outcome is ProfileOutcome.READY


def resolve_instance_profile(aws: AwsSession, name: str, *, cache: TTLCache = PROFILE_CACHE) -> ProfileResolution:
    """Check ``spec.instanceProfile``: a name (not an ARN) of an existing profile with a role attached."""
    arn = _PROFILE_ARN.match(name)
    if arn:
        return ProfileResolution(
            ProfileOutcome.ARN_NOT_NAME,
            f"instanceProfile {name!r} is an ARN; EC2 launches take the name: use {arn.group(1)!r}",
        )
    if "/" in name:  # asking IAM would only say ValidationError (AWS) or NoSuchEntity (moto)
        return ProfileResolution(
            ProfileOutcome.PATH_IN_NAME,
            f"instanceProfile {name!r} includes a path; EC2 launches take the bare name: use {name.rsplit('/', 1)[-1]!r}",
        )
    key = (aws.cache_namespace, name)
    with _CACHE_LOCK:
        profile = cache.get(key)
    if profile is None:
        try:
            raw = aws.call("iam", "GetInstanceProfile", InstanceProfileName=name)["InstanceProfile"]
        except AWSError as error:
            if error.not_found:
                return ProfileResolution(
                    ProfileOutcome.NOT_FOUND, f"instance profile {name!r} does not exist", InstanceProfile(name, False)
                )
            return _failure(error)
        profile = InstanceProfile(name, True, tuple(role["RoleName"] for role in raw.get("Roles", ())))
        with _CACHE_LOCK:
            cache[key] = profile
    if not profile.roles:
        return ProfileResolution(
            ProfileOutcome.NO_ROLE, f"instance profile {name!r} has no role; nodes would get no credentials", profile
        )
    return ProfileResolution(ProfileOutcome.READY, f"instance profile {name!r} has role {', '.join(profile.roles)}", profile)


def resolve_role(aws: AwsSession, role: str) -> ProfileResolution:
    """Check ``spec.role``: the role exists (Karpenter attaches it by bare name, any path stripped)."""
    name = bare_role_name(role)
    try:
        aws.call("iam", "GetRole", RoleName=name)
    except AWSError as error:
        if error.not_found:
            return ProfileResolution(ProfileOutcome.ROLE_NOT_FOUND, f"role {name!r} does not exist")
        return _failure(error)
    return ProfileResolution(ProfileOutcome.READY, f"role {name!r} exists; Karpenter creates the instance profile for it")


def bare_role_name(role: str) -> str:
    """``some/path/Name`` or a role ARN → ``Name``, the form IAM reports and Karpenter compares against."""
    return role.rsplit("/", 1)[-1]


def _failure(error: AWSError) -> ProfileResolution:
    outcome = ProfileOutcome.TRANSIENT_ERROR if isinstance(error, TransientAWSError) else ProfileOutcome.AWS_ERROR
    return ProfileResolution(outcome, str(error))
