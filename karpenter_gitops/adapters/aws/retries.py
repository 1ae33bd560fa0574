"""How a run's AWS calls retry: botocore's own back-off for longer, a token bucket per service, one deadline.

A CI job on a busy account meets throttling; three attempts per call across some forty calls
almost always lose one, and the run then says "retry" (exit 3) without an answer. So a run keeps
retrying each retryable failure (throttling, 5xx, connection trouble: botocore's standard retry
conditions) with botocore's exponential back-off and full jitter (up to 20 s between attempts),
until the run's deadline: only a call that cannot succeed before it ends the run as transient.

Each client also gets botocore's adaptive rate limiter: a client-side token bucket (one per
service client, so one per service for the whole run, as an :class:`AwsSession` shares its
clients) that starts unlimited, lowers the send rate when AWS throttles (CUBIC) and raises it as
calls succeed: a throttled run slows down instead of failing. Botocore's own ``adaptive`` mode
floors the rate at 0.5 requests a second, measured from a run's first second, which would stretch
a forty-call plan past a minute after one throttle; ours floors it at :data:`MIN_SEND_RATE`.
Botocore's per-client retry quota is left out on purpose: it gives up after a burst of retries
however much time is left.

The deadline (default three minutes from the session's creation) is set with the
``KARPENTER_GITOPS_AWS_DEADLINE`` environment variable, in seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.retries import adaptive, bucket, standard, throttling

from karpenter_gitops.core.errors import InputError

DEADLINE_ENV = "KARPENTER_GITOPS_AWS_DEADLINE"
DEFAULT_DEADLINE = 180.0
# What the amz-sdk-request header announces when only the deadline bounds the attempts.
UNBOUNDED_ATTEMPTS = 100
# Requests a second a throttled service is still sent (AWS's EC2 describe calls refill at 20 a second).
MIN_SEND_RATE = 5.0


def deadline_from_environment() -> float:
    """The run's deadline in seconds: ``KARPENTER_GITOPS_AWS_DEADLINE``, else the default."""
    raw = os.environ.get(DEADLINE_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_DEADLINE
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise InputError(f"{DEADLINE_ENV}={raw!r} is not a positive number of seconds", hint="e.g. 300")
    return seconds


@dataclass(frozen=True)
class Deadline:
    """The moment a run stops retrying, shared by all its clients."""

    at: float
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    def allows(self, delay: float) -> bool:
        """Whether sleeping ``delay`` seconds still leaves time for another attempt."""
        return self.clock() + delay < self.at


class DeadlineRetryHandler:
    """A ``needs-retry`` handler: botocore's standard conditions and back-off, bounded by a deadline.

    It takes the place of botocore's standard handler on a client (same unique id), so the
    adaptive rate limiter, registered separately, keeps seeing every response.
    """

    def __init__(self, service: str, deadline: Deadline, max_attempts: int | None = None) -> None:
        self._adapter = standard.RetryEventAdapter()
        self._conditions = standard.StandardRetryConditions(max_attempts=max_attempts or UNBOUNDED_ATTEMPTS)
        self._backoff = standard.ExponentialBackoff(
            service_name=service, throttling_detector=standard.ThrottlingErrorDetector(self._adapter)
        )
        self._deadline = deadline

    def needs_retry(self, **kwargs: Any) -> float | None:
        context = self._adapter.create_retry_context(**kwargs)
        delay = None
        if self._conditions.is_retryable(context):
            wait = self._backoff.delay_amount(context)
            if self._deadline.allows(wait):
                delay = wait
        self._adapter.adapt_retry_response_from_context(context)
        return delay


def _rate_limiter() -> adaptive.ClientRateLimiter:
    """Botocore's adaptive rate limiter, as its ``adaptive`` mode builds it, with our floor."""
    clock = bucket.Clock()
    return adaptive.ClientRateLimiter(
        rate_adjustor=throttling.CubicCalculator(starting_max_rate=0, start_time=clock.current_time()),
        rate_clocker=adaptive.RateClocker(clock),
        token_bucket=bucket.TokenBucket(max_rate=MIN_SEND_RATE, clock=clock, min_rate=MIN_SEND_RATE),
        throttling_detector=standard.ThrottlingErrorDetector(standard.RetryEventAdapter()),
        clock=clock,
    )


def install(client: Any, deadline: Deadline, max_attempts: int | None = None) -> None:
    """Give ``client`` (created in standard retry mode) our retry handler in place of botocore's, and a rate limiter."""
    service = client.meta.service_model.service_id.hyphenize()
    unique_id = f"retry-config-{service}"  # the id botocore registers its standard handler under
    event = f"needs-retry.{service}"
    client.meta.events.unregister(event, unique_id=unique_id)
    client.meta.events.register(event, DeadlineRetryHandler(service, deadline, max_attempts).needs_retry, unique_id=unique_id)
    limiter = _rate_limiter()
    client.meta.events.register("before-send", limiter.on_sending_request)
    client.meta.events.register("needs-retry", limiter.on_receiving_response)
