"""Retries that get through: back-off until the run's deadline, a rate limiter per service, and a plan
of the demo stack through a seeded fault proxy that gives the clean answer or exit 3, never another."""

from __future__ import annotations

import contextlib
import io
import json
from types import SimpleNamespace

import botocore.session
import pytest
from botocore.retries.standard import ExponentialBackoff
from conftest import PROJECT
from support.fault_proxy import FaultProxy

from karpenter_gitops.adapters.aws import retries
from karpenter_gitops.adapters.aws.retries import DEADLINE_ENV, Deadline, DeadlineRetryHandler
from karpenter_gitops.cli import main
from karpenter_gitops.core.errors import InputError

EC2 = botocore.session.get_session().get_service_model("ec2")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _attempt(number: int, status: int, code: str) -> dict:
    """What botocore's endpoint hands a needs-retry handler after one failed attempt."""
    parsed = {"Error": {"Code": code, "Message": ""}, "ResponseMetadata": {"HTTPStatusCode": status}}
    operation = EC2.operation_model("DescribeImages")
    return {
        "attempts": number,
        "response": (SimpleNamespace(status_code=status, headers={}), parsed),
        "caught_exception": None,
        "operation": operation,
        "request_dict": {"context": {}},
    }


def test_throttling_is_retried_with_back_off_until_the_deadline_and_no_longer():
    clock = FakeClock()
    handler = DeadlineRetryHandler("ec2", Deadline.after(60, clock))
    delays = [handler.needs_retry(**_attempt(n, 503, "RequestLimitExceeded")) for n in range(1, 12)]
    assert all(delay is not None and 0 <= delay <= 20 for delay in delays), delays  # far past botocore's 3 attempts
    clock.now = 60.0
    assert handler.needs_retry(**_attempt(12, 503, "RequestLimitExceeded")) is None


def test_a_persistent_error_is_never_retried():
    handler = DeadlineRetryHandler("ec2", Deadline.after(60, FakeClock()))
    assert handler.needs_retry(**_attempt(1, 403, "UnauthorizedOperation")) is None


def test_max_attempts_still_bounds_when_given():
    handler = DeadlineRetryHandler("ec2", Deadline.after(60, FakeClock()), max_attempts=2)
    assert handler.needs_retry(**_attempt(1, 500, "InternalError")) is not None
    assert handler.needs_retry(**_attempt(2, 500, "InternalError")) is None


@pytest.mark.parametrize("value", ["soon", "0", "-5", "inf"])
def test_a_bad_deadline_setting_is_an_input_error(monkeypatch, value):
    monkeypatch.setenv(DEADLINE_ENV, value)
    with pytest.raises(InputError, match=DEADLINE_ENV):
        retries.deadline_from_environment()


def test_the_deadline_defaults_to_a_few_minutes(monkeypatch):
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    assert retries.deadline_from_environment() == retries.DEFAULT_DEADLINE == 180
    monkeypatch.setenv(DEADLINE_ENV, "30")
    assert retries.deadline_from_environment() == 30


# --- the demo stack's plan through faults --------------------------------------------------------


@pytest.fixture
def short_back_off(monkeypatch):
    """Back-off a hundred times shorter than botocore's, so seeded runs stay quick; the deadline still bounds them."""
    original = ExponentialBackoff.delay_amount
    monkeypatch.setattr(ExponentialBackoff, "delay_amount", lambda self, context: original(self, context) / 100)


@pytest.fixture
def proxied(default_aws, monkeypatch):
    """The embedded AWS behind a fault proxy, with the environment pointing every run at the proxy."""
    with FaultProxy(default_aws.endpoint_url, 0.0) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        monkeypatch.chdir(PROJECT)
        yield proxy


def plan(cache) -> tuple[int, dict | None]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["plan", "--stack", "demo", "--cache-dir", str(cache), "--format", "json"])
    answer = json.loads(out.getvalue())
    answer.pop("awsCalls", None)
    return code, answer


@pytest.mark.slow
def test_a_third_of_calls_failing_still_gives_the_clean_answer(proxied, short_back_off, catalogue_cache, monkeypatch):
    monkeypatch.setenv(DEADLINE_ENV, "120")  # the default's order, not the suite's short one
    clean = plan(catalogue_cache)
    assert clean[0] in (0, 1)
    for seed in range(3):
        proxied.reseed(seed, fraction=1 / 3)
        assert plan(catalogue_cache) == clean, f"seed {seed}"
        assert proxied.injected > 0


def test_aws_down_is_exit_three_once_the_deadline_passes(proxied, short_back_off, catalogue_cache, monkeypatch):
    monkeypatch.setenv(DEADLINE_ENV, "1.5")
    proxied.reseed(0, fraction=1.0)
    code, answer = plan(catalogue_cache)
    assert code == 3 and proxied.forwarded == 0
    assert proxied.injected > 2 * sum(1 for _ in answer["nodeClasses"])  # retried past three attempts a call
