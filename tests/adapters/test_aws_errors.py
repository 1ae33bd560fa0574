"""Every failure is transient (retry later) or persistent (a fact about the configuration)."""

import pytest
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from karpenter_gitops.adapters.aws.error_kinds import (
    PersistentAWSError,
    TransientAWSError,
    classify,
)


def client_error(code, status=400, message="boom"):
    return ClientError({"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}, "X")


@pytest.mark.parametrize(
    "error",
    [
        client_error("RequestLimitExceeded", 503),
        client_error("Throttling"),
        client_error("ThrottlingException"),
        client_error("InternalError", 500),
        client_error("500", 500),
        client_error("SomethingNew", 502),
        EndpointConnectionError(endpoint_url="http://127.0.0.1:1"),
        ReadTimeoutError(endpoint_url="http://127.0.0.1:1"),
        ResponseParserError("Unable to parse response <html>"),
    ],
)
def test_transient_failures(error):
    assert isinstance(classify(error, "ec2:DescribeImages"), TransientAWSError)


@pytest.mark.parametrize(
    "error, not_found",
    [
        (client_error("NoSuchEntity", 404), True),
        (client_error("ParameterNotFound"), True),
        (client_error("InvalidAMIID.NotFound"), True),
        (client_error("InvalidAMIID.Malformed"), False),
        (client_error("ValidationError"), False),
        (client_error("AccessDenied", 403), False),
        (client_error("UnauthorizedOperation", 403), False),
        (NoCredentialsError(), False),
    ],
)
def test_persistent_failures(error, not_found):
    classified = classify(error, "iam:GetInstanceProfile")
    assert isinstance(classified, PersistentAWSError)
    assert classified.not_found is not_found


def test_message_is_one_line_with_kind_operation_and_code():
    error = classify(client_error("Throttling", message="Rate\nexceeded"), "iam:GetRole")
    assert str(error) == "transient AWS error in iam:GetRole (Throttling): Rate exceeded"
    assert (error.operation, error.code) == ("iam:GetRole", "Throttling")
