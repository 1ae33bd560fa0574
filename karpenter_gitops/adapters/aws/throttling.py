"""Injected throttling: AWS's own throttling answers for a share of attempts, to test retries against them.

Tests and benchmarks use it on any AwsSession (the embedded AWS or a recorded one); botocore's retry
logic sees exactly the reply AWS would send.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

from karpenter_gitops.adapters.aws.client import AwsSession

_THROTTLE_REPLIES = {
    "ec2": (
        503,
        b"<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded."
        b"</Message></Error></Errors><RequestID>injected</RequestID></Response>",
        "text/xml",
    ),
    "iam": (
        400,
        b"<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message>"
        b"</Error><RequestId>injected</RequestId></ErrorResponse>",
        "text/xml",
    ),
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
