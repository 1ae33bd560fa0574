"""Which AWS a command reads: the real one (standard credential chain) or the embedded moto world.

Real AWS takes the stack's ``aws:`` settings as its pulumi-aws provider does (``aws:region``,
``aws:profile``, assumed role, endpoints... win; the environment and the shared config fill in the
rest), so a command reads the account and region the stack deploys to, whatever ``AWS_REGION`` the
shell or CI has. No region, no credentials or refused credentials is an input error before any
real call, rather than one failed look-up per resolution, with a hint on how to set them up (or to
try ``--embedded-aws``); an endpoint that does not answer the connectivity probe is named in one
line (:class:`~karpenter_gitops.adapters.aws.error_kinds.AwsUnreachable`, exit 3) within seconds. The
embedded AWS is started, seeded from a world fixture and stopped
around the command.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.adapters.aws.client import AwsSession, AwsSettings
from karpenter_gitops.adapters.aws.error_kinds import PersistentAWSError
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError

_EMBEDDED_HINT = "or try it without an account: --embedded-aws"
_SETUP_HINTS = {  # by what was wrong; refused or expired credentials (AWS's and botocore's own codes) get the last one
    "NoRegion": _EMBEDDED_HINT,
    "InvalidRegion": "a region name looks like us-east-1, " + _EMBEDDED_HINT,
    "NoCredentials": _EMBEDDED_HINT,
    "ProfileNotFound": "`aws configure list-profiles` lists the profiles; fix the name or unset AWS_PROFILE, " + _EMBEDDED_HINT,
    "ConfigParseError": "fix its INI syntax ([profile NAME] sections of `key = value` lines), " + _EMBEDDED_HINT,
}
_REFUSED_HINT = (
    "renew or reconfigure the credentials (`aws sso login`, `aws configure`, AWS_PROFILE, or "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), " + _EMBEDDED_HINT
)


@dataclass(frozen=True)
class Target:
    """A session to read, and the Kubernetes version the embedded world runs (None on real AWS)."""

    session: AwsSession
    world_kubernetes: versions.Kubernetes | None = None


@contextlib.contextmanager
def aws_target(embedded: bool, fixture: str | None = None, stack_aws: Mapping[str, Any] | None = None) -> Iterator[Target]:
    """Real AWS with the stack's ``aws:`` settings, or moto seeded from ``fixture`` (default world) for the block."""
    if not embedded:
        try:
            session = AwsSession(settings=AwsSettings.from_stack_config(stack_aws or {}))
            session.require_credentials()
            session.probe()  # AwsUnreachable: said in seconds, not after minutes of retries
        except PersistentAWSError as error:  # no region, no or refused credentials: the user's setup, not AWS's answer
            raise InputError(error.detail, hint=_SETUP_HINTS.get(error.code, _REFUSED_HINT)) from None
        yield Target(session)
        return
    from karpenter_gitops.adapters.aws import embedded as moto_world

    with moto_world.embedded_aws(fixture) as world:
        yield Target(world.session(), world.world.kubernetes)
