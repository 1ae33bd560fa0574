"""AwsSession: the standard environment, call counts, one answer per identical query, threads."""

import pickle
import socket
import threading

import pytest

from karpenter_gitops.adapters.aws.client import AwsSession, tag_filters
from karpenter_gitops.adapters.aws.error_kinds import PersistentAWSError, TransientAWSError


def test_plain_session_follows_aws_endpoint_url_and_region_from_the_environment(default_aws):
    aws = AwsSession()  # nothing passed: AWS_ENDPOINT_URL, AWS_REGION and credentials come from the environment
    assert aws.region == "us-west-2"
    assert aws.client("ec2").meta.endpoint_url == default_aws.endpoint_url
    assert aws.call("ssm", "GetParameter", Name="/aws/service/bottlerocket/aws-k8s-1.32/x86_64/latest/image_id")


def test_calls_are_counted_per_operation_and_identical_queries_made_once(default_aws):
    aws = default_aws.session()
    first = aws.call("iam", "GetInstanceProfile", InstanceProfileName="KarpenterNodeProfile")
    again = aws.call("iam", "GetInstanceProfile", InstanceProfileName="KarpenterNodeProfile")
    aws.call("iam", "GetInstanceProfile", InstanceProfileName="EmptyProfile")
    aws.paginate("ec2", "DescribeSubnets", "Subnets", Filters=[{"Name": "tag-key", "Values": ["Name"]}])
    aws.paginate("ec2", "DescribeSubnets", "Subnets", Filters=[{"Values": ["Name"], "Name": "tag-key"}])
    assert first == again
    assert aws.call_counts() == {"DescribeSubnets": 1, "GetInstanceProfile": 2}


def test_failures_are_classified_and_remembered_for_the_run(default_aws):
    aws = default_aws.session()
    for _ in range(2):
        with pytest.raises(PersistentAWSError) as caught:
            aws.call("iam", "GetRole", RoleName="missing")
    assert caught.value.not_found and caught.value.operation == "iam:GetRole"
    assert aws.call_counts() == {"GetRole": 1}


def test_a_remembered_failure_is_raised_afresh_and_keeps_no_askers_frames(default_aws):
    """A fleet asks the same failing question once per stack: the memo must not chain each stack's frames
    (and their locals) onto one exception object for the rest of the run."""
    aws = default_aws.session()

    def ask():
        stack_locals = bytearray(1024)  # noqa: F841 - what a frame would keep alive
        with pytest.raises(PersistentAWSError) as raised:
            aws.call("iam", "GetRole", RoleName="no-such-role")
        return raised.value

    first, second = ask(), ask()
    assert first is not second and str(first) == str(second)
    assert aws.call_counts() == {"GetRole": 1}
    (remembered,) = [future.exception() for future in aws._memo.values()]
    assert remembered.__traceback__ is None
    assert pickle.loads(pickle.dumps(first)).detail == first.detail


def test_threads_asking_the_same_question_share_one_call(default_aws):
    aws = default_aws.session()
    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(aws.call("ec2", "DescribeSecurityGroups", GroupIds=["sg-0d1a0000000000001"]))
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(result == results[0] for result in results)
    assert aws.call_counts() == {"DescribeSecurityGroups": 1}


def test_unreachable_endpoint_is_transient(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with socket.socket() as probe:  # held, not listening, so no other process can take the port meanwhile
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
        aws = AwsSession("us-west-2", endpoint_url=closed, max_attempts=1, connect_timeout=1)
        with pytest.raises(TransientAWSError) as caught:
            aws.call("ec2", "DescribeImages", Owners=["self"])
    assert caught.value.code == "EndpointConnectionError"


def test_session_is_never_pickled_and_shows_no_credentials(default_aws):
    aws = default_aws.session()
    with pytest.raises(TypeError):
        pickle.dumps(aws)
    assert "testing" not in repr(aws)


def test_tag_filters_use_tag_key_for_wildcard_values():
    assert tag_filters({"team": "payments", "karpenter.sh/discovery": "*"}) == [
        {"Name": "tag-key", "Values": ["karpenter.sh/discovery"]},
        {"Name": "tag:team", "Values": ["payments"]},
    ]


def test_a_garbled_reply_is_transient_not_a_crash(default_aws):
    """botocore's ResponseParserError is no BotoCoreError: it used to escape classification."""
    from botocore.awsrequest import AWSResponse

    from karpenter_gitops.adapters.aws.throttling import _RawBody

    aws = default_aws.session(max_attempts=1)
    aws.register(
        "before-send.ec2",
        lambda request, **_: AWSResponse(request.url, 200, {"Content-Type": "text/xml"}, _RawBody(b"<html><body>proxy error")),
    )
    with pytest.raises(TransientAWSError) as caught:
        aws.paginate("ec2", "DescribeSubnets", "Subnets")
    assert caught.value.code == "ResponseParserError"


def _stubbed_account(monkeypatch, account: str | None) -> AwsSession:
    """A session on real AWS's endpoints whose STS answer is stubbed (nothing leaves the process)."""
    from botocore.stub import Stubber

    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_EC2", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    aws = AwsSession("us-west-2")
    stub = Stubber(aws.client("sts"))
    if account:
        stub.add_response("get_caller_identity", {"Account": account, "Arn": f"arn:aws:iam::{account}:user/x", "UserId": "x"})
    else:
        stub.add_client_error("get_caller_identity", "AccessDenied", http_status_code=403)
    stub.activate()
    return aws


def test_real_aws_caches_are_per_account(monkeypatch):
    """Zone names map to other physical zones in each account: one account's offerings never answer another's."""
    first, second = _stubbed_account(monkeypatch, "111111111111"), _stubbed_account(monkeypatch, "222222222222")
    assert first.cache_namespace == "aws-111111111111" and second.cache_namespace == "aws-222222222222"
    assert first.cache_namespace == "aws-111111111111"  # asked once: a second STS call would find no stubbed answer
    unknown = _stubbed_account(monkeypatch, None)  # no STS (isolated VPC): the credentials still tell accounts apart
    assert unknown.cache_namespace.startswith("aws-key-") and "testing" not in unknown.cache_namespace


def test_a_service_specific_endpoint_gets_its_own_cache_namespace(monkeypatch):
    """AWS_ENDPOINT_URL_EC2 (or a profile's endpoint_url) sends EC2 elsewhere: its answers are not real AWS's."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:4566")
    aws = AwsSession("us-west-2")
    assert aws.cache_namespace.startswith("endpoint-") and aws.call_counts() == {}


def test_missing_credentials_are_found_before_any_call(monkeypatch, tmp_path):
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    aws = AwsSession("us-west-2")
    with pytest.raises(PersistentAWSError) as caught:
        aws.require_credentials()
    assert caught.value.code == "NoCredentials" and "AWS_PROFILE" in caught.value.detail
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    AwsSession("us-west-2").require_credentials()
