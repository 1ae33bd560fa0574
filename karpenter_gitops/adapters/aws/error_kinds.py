"""AWS failures sorted into the two kinds the reconciler acts on differently.

*Transient* failures (throttling, 5xx, timeouts, an unreachable endpoint, a garbled reply, a
catalogue not yet loaded) say nothing about the configuration: the plan reports the affected
resolution as Unknown and a later run may succeed. *Persistent* failures (not found, invalid
input, access denied) are facts about the configuration or the account and are reported as such.
"""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    HTTPClientError,
)
from botocore.exceptions import (
    ConnectionError as BotoConnectionError,
)
from botocore.parsers import ResponseParserError

from karpenter_gitops.core.errors import Unreachable

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "RequestThrottled",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "SlowDown",
        "PriorRequestNotComplete",
        "BandwidthLimitExceeded",
        "EC2ThrottledException",
    }
)
SERVER_SIDE_CODES = frozenset(
    {
        "InternalError",
        "InternalFailure",
        "InternalServerError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "Unavailable",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
NOT_FOUND_CODES = frozenset({"NoSuchEntity", "ParameterNotFound", "ParameterVersionNotFound", "InvalidInstanceType"})


class AWSError(Exception):
    """A failed AWS call: the operation (``service:Operation``), the AWS error code and a one-line message."""

    kind = "AWS"

    def __init__(self, operation: str, code: str, detail: str):
        self.operation, self.code, self.detail = operation, code, " ".join(str(detail).split())
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.kind} AWS error in {self.operation} ({self.code}): {self.detail}"

    def __reduce__(self):  # copy and pickle rebuild it from its fields, without a traceback
        return (type(self), (self.operation, self.code, self.detail))

    @property
    def not_found(self) -> bool:
        """True when AWS said the thing asked for does not exist (as opposed to refusing to answer)."""
        return self.code in NOT_FOUND_CODES or self.code.endswith((".NotFound", "NotFoundException"))


class TransientAWSError(AWSError):
    """Retrying later may succeed; the configuration is not at fault."""

    kind = "transient"


class PersistentAWSError(AWSError):
    """AWS answered, and the answer will not change on retry (not found, invalid, access denied)."""

    kind = "persistent"


def classify(error: Exception, operation: str) -> AWSError:
    """Turn a botocore exception raised by ``operation`` into a Transient or Persistent AWSError."""
    if isinstance(error, AWSError):
        return error
    if isinstance(error, ClientError):
        info = error.response.get("Error", {})
        code = str(info.get("Code") or "Unknown")
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        detail = info.get("Message") or str(error)
        transient = (
            code in THROTTLING_CODES or code in SERVER_SIDE_CODES or status >= 500 or (code.isdigit() and int(code) >= 500)
        )
        return (TransientAWSError if transient else PersistentAWSError)(operation, code, detail)
    if isinstance(error, (BotoConnectionError, HTTPClientError)):
        return TransientAWSError(operation, type(error).__name__, str(error))
    if isinstance(error, ResponseParserError):
        # moto answers unimplemented calls and crashes with an HTML 500 page botocore cannot parse.
        return TransientAWSError(operation, "ResponseParserError", "the endpoint sent a reply botocore could not parse")
    if isinstance(error, BotoCoreError):
        # No credentials, no region, invalid parameters: configuration problems a retry will not fix.
        return PersistentAWSError(operation, type(error).__name__, str(error))
    raise TypeError(f"not an AWS error: {error!r}") from error


class AwsUnreachable(Unreachable):
    """The connectivity probe got no answer from the endpoint: the run stops before its first real call."""

    def __init__(self, endpoint: str, region: str, timeout: float, cause: str):
        self.endpoint, self.region, self.timeout, self.cause = endpoint, region, timeout, " ".join(cause.split())
        super().__init__(str(self))

    def __str__(self) -> str:
        return (
            f"AWS unreachable: no answer from {self.endpoint} (region {self.region}) within {self.timeout:g} s: "
            f"{self.cause}; check the network, a proxy (HTTPS_PROXY) or AWS_ENDPOINT_URL, or try --embedded-aws"
        )
