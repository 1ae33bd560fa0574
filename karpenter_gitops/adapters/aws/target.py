"""Which AWS a command reads: the real one (standard credential chain) or the embedded moto world.

Real AWS takes the region from the environment, else the stack's ``aws:region``, else the
profile; no region or no credentials is an input error before any call, rather than one failed
look-up per resolution. The embedded AWS is started, seeded from a world fixture and stopped
around the command.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.errors import PersistentAWSError
from karpenter_gitops.core.errors import InputError


@dataclass(frozen=True)
class Target:
    """A session to read, and the Kubernetes version the embedded world runs (None on real AWS)."""

    session: AwsSession
    world_kubernetes_version: str | None = None


@contextlib.contextmanager
def aws_target(embedded: bool, fixture: str | None = None, stack_region: str | None = None) -> Iterator[Target]:
    """Real AWS, or moto seeded from ``fixture`` (default world) for the duration of the block."""
    if not embedded:
        named = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        try:
            session = AwsSession(None if named else stack_region)
            session.require_credentials()
        except PersistentAWSError as error:  # no region or no credentials: the user's setup, not AWS's answer
            raise InputError(error.detail) from None
        yield Target(session)
        return
    from karpenter_gitops.adapters.aws import embedded as moto_world

    with moto_world.embedded_aws(fixture) as world:
        yield Target(world.session(), world.world.kubernetes_version)
