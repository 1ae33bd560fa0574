"""The AWS environment as a front door: profiles, regions and shared config and credentials files as users
write them, mistakes included. Whatever they hold, a command that asks AWS says what is wrong in one line
(exit 2, the user's set-up) or that AWS did not answer (exit 3); never a traceback. AWS itself is a
loopback port nothing listens on, so a set-up that is right ends at the connectivity probe, in seconds."""

from __future__ import annotations

import os
from unittest import mock

from conftest import PROJECT
from hypothesis import given
from hypothesis import strategies as st
from support.dead_endpoints import free_port
from support.hostile import PROFILE, run

NAMES = st.sampled_from(["default", "team", "sso-dev", "missing", "a b", "ünïcode", ""])
REGIONS = st.sampled_from(["us-east-1", "eu-west-1", "us east 1", "", "US-EAST-1", "x" * 70, "../etc"])
# Keys that change how botocore reads a profile; none that runs a program (credential_process) or asks
# the instance metadata service, so no draw leaves the test's loopback world.
KEY_VALUES = st.one_of(
    st.tuples(st.just("region"), REGIONS),
    st.tuples(
        st.sampled_from(["aws_access_key_id", "aws_secret_access_key", "aws_session_token"]),
        st.sampled_from(["AKIAX", "s3cr3t", ""]),
    ),
    st.tuples(st.just("source_profile"), NAMES),
    st.tuples(st.just("role_arn"), st.sampled_from(["arn:aws:iam::111122223333:role/x", "not-an-arn", ""])),
    st.tuples(
        st.sampled_from(["sso_start_url", "sso_region", "sso_account_id", "sso_role_name", "sso_session"]),
        st.sampled_from(["https://example.awsapps.com/start", "us-east-1", "111122223333", "Admin", ""]),
    ),
    st.tuples(
        st.sampled_from(["max_attempts", "retry_mode", "duration_seconds"]), st.sampled_from(["3", "standard", "-1", "many"])
    ),
)
SECTION = st.tuples(
    st.sampled_from(["[default]", "[profile {}]", "[{}]", "[sso-session {}]", "[profile {}", "profile {}]"]),
    NAMES,
    st.lists(KEY_VALUES, max_size=4),
).map(lambda drawn: "\n".join([drawn[0].format(drawn[1]), *(f"{key} = {value}" for key, value in drawn[2])]))
FILE_TEXT = st.one_of(st.none(), st.lists(SECTION, max_size=3).map("\n\n".join), st.text(max_size=60))
ENVIRONMENT = st.fixed_dictionaries(
    {},
    optional={
        "AWS_PROFILE": NAMES,
        "AWS_REGION": REGIONS,
        "AWS_DEFAULT_REGION": REGIONS,
        "AWS_ACCESS_KEY_ID": st.sampled_from(["AKIAEXAMPLE", ""]),
        "AWS_SECRET_ACCESS_KEY": st.sampled_from(["secret", ""]),
    },
)


@PROFILE
@given(environment=ENVIRONMENT, config=FILE_TEXT, credentials=FILE_TEXT)
def test_plan_says_what_is_wrong_with_the_aws_environment(tmp_path_factory, environment, config, credentials):
    home = tmp_path_factory.mktemp("home")
    files = {"AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentials}
    for variable, text in files.items():
        if text is not None:
            (home / variable).write_text(text)
    aws = {key: value for key, value in os.environ.items() if key.startswith("AWS_")}
    with mock.patch.dict(os.environ, {key: "" for key in aws}):
        for key in aws:
            del os.environ[key]
        os.environ.update(
            environment,
            HOME=str(home),
            AWS_EC2_METADATA_DISABLED="true",
            AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}",
            AWS_CONFIG_FILE=str(home / "AWS_CONFIG_FILE"),
            AWS_SHARED_CREDENTIALS_FILE=str(home / "AWS_SHARED_CREDENTIALS_FILE"),
        )
        code, _, err = run(
            ["plan", "--manifests", str(PROJECT / "examples" / "manifests"), "--kubernetes-version", "1.32"], aws=True
        )
    assert code in (2, 3), err
    assert err.count("\n") == 1 or code == 3, err
