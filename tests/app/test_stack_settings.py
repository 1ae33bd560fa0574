"""The stack's aws: provider config read as pulumi-aws reads it, and applied to the AWS session."""

from __future__ import annotations

import json

import pytest

from karpenter_gitops.adapters.aws.client import AwsSession, AwsSettings
from karpenter_gitops.app.stack import provider_settings
from karpenter_gitops.core.errors import InputError


def test_structured_settings_arrive_as_json_text_or_values():
    config = {
        "aws:region": "eu-west-1",
        "aws:profile": "platform",
        "aws:assumeRoles": json.dumps([{"roleArn": "arn:aws:iam::111122223333:role/deployer", "sessionName": "ci"}]),
        "aws:endpoints": [{"ec2": "http://127.0.0.1:4566"}, {"iam": "http://127.0.0.1:4567"}],
        "aws:sharedConfigFiles": ["/etc/aws/config"],
    }
    settings = provider_settings(config)
    assert (settings.region, settings.profile, settings.shared_config_file) == ("eu-west-1", "platform", "/etc/aws/config")
    assert (settings.role_arn, settings.role_session_name) == ("arn:aws:iam::111122223333:role/deployer", "ci")
    assert settings.endpoints == {"ec2": "http://127.0.0.1:4566", "iam": "http://127.0.0.1:4567"}
    legacy = provider_settings({"aws:assumeRole": json.dumps({"roleArn": "arn:aws:iam::1:role/r", "externalId": "x"})})
    assert (legacy.role_arn, legacy.role_external_id) == ("arn:aws:iam::1:role/r", "x")
    with pytest.raises(InputError, match="aws:endpoints is not valid JSON"):
        provider_settings({"aws:endpoints": "[{ec2"})


def test_explicit_settings_win_over_the_environment(monkeypatch):
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    session = AwsSession(
        settings=AwsSettings(
            region="eu-west-1", access_key="AKIASTACK", secret_key="s", endpoints={"ec2": "http://127.0.0.1:4566"}
        )
    )
    assert session.region == "eu-west-1"
    assert session.client("ec2").meta.endpoint_url == "http://127.0.0.1:4566"
    assert session.client("ec2")._request_signer._credentials.access_key == "AKIASTACK"
    assert AwsSession().region == "us-east-1"  # without stack settings the environment decides


def test_an_assumed_role_replaces_the_base_credentials(default_aws):
    session = AwsSession(
        endpoint_url=default_aws.endpoint_url, settings=AwsSettings(role_arn="arn:aws:iam::123456789012:role/deployer")
    )
    session.client("ec2").describe_regions()
    assert session._botocore.get_credentials().access_key.startswith("ASIA")  # STS session credentials
