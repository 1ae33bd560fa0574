"""AWS unreachable or not configured, as a user meets it: one line, the right exit code, in seconds.

An endpoint that does not answer (a port nothing listens on, a black hole) is named with its region
in one line and exit 3 well within 30 seconds, by every command that reads AWS; AWS that answers
but fails every call is summed up in one line per cause, not one per look-up; no credentials says
how to configure them or to try ``--embedded-aws``; the spinner shows on a terminal only.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PROJECT
from support.dead_endpoints import BlackHole, free_port
from support.fault_proxy import FaultProxy

MANIFESTS = PROJECT / "examples" / "manifests"
COMMANDS = {
    "plan": ["plan", "--manifests", "platform.yaml", "--kubernetes-version", "1.32"],
    "preview": ["preview", "--manifests", "platform.yaml", "--base", "base", "--reconcile", "--kubernetes-version", "1.32"],
    "render": ["render", "--manifests", "platform.yaml", "--out", "rendered", "--reconcile", "--kubernetes-version", "1.32"],
    "verify": ["verify", "--manifests", "platform.yaml", "--kubernetes-version", "1.32", "--wait", "0"],
    "bump": ["bump", "--stack", "demo", "--dry-run"],
}


@pytest.fixture
def repository(tmp_path, monkeypatch, catalogue_cache) -> Path:
    """A user's repository outside the project: manifests, a base to compare with, a stack to bump."""
    shutil.copy(MANIFESTS / "platform.yaml", tmp_path / "platform.yaml")
    (tmp_path / "base").mkdir()
    shutil.copy(MANIFESTS / "platform.yaml", tmp_path / "base" / "platform.yaml")
    (tmp_path / "Pulumi.yaml").write_text("name: infra\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    shutil.copy(PROJECT / "stacks" / "Pulumi.demo.yaml", tmp_path / "stacks" / "Pulumi.demo.yaml")
    monkeypatch.chdir(tmp_path)
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance role look-up on a CI runner
    return tmp_path


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_dead_endpoint_is_one_line_naming_it_and_exit_3(repository, cli, monkeypatch, command):
    endpoint = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    started = time.monotonic()
    code, out, err = cli(*COMMANDS[command])
    took = time.monotonic() - started
    assert code == 3, (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and endpoint in lines[0] and "region eu-west-1" in lines[0], err
    assert "Traceback" not in err and took < 30
    if command != "bump":
        assert out == ""
    assert not (repository / "rendered").exists()
    assert (repository / "stacks" / "Pulumi.demo.yaml").read_bytes() == (PROJECT / "stacks" / "Pulumi.demo.yaml").read_bytes()


@pytest.mark.slow
def test_a_black_hole_is_named_within_30_seconds_by_the_console_script(repository):
    """The whole command as a user runs it, start-up included, against an endpoint that never answers."""
    with BlackHole() as endpoint:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "karpenter_gitops", *COMMANDS["plan"]],
            capture_output=True,
            text=True,
            env={**os.environ, "AWS_ENDPOINT_URL": endpoint},
            timeout=60,
        )
        took = time.monotonic() - started
    assert done.returncode == 3 and done.stdout == "", done.stderr
    assert done.stderr.count("\n") == 1 and endpoint in done.stderr and "region eu-west-1" in done.stderr
    assert took < 30, f"took {took:.1f} s"


def test_no_credentials_say_how_to_configure_them(repository, cli, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code, out, err = cli(*COMMANDS["plan"])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    for advice in ("aws configure", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "--embedded-aws"):
        assert advice in err


def test_no_region_points_at_the_embedded_aws_too(repository, cli, monkeypatch):
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    code, _, err = cli(*COMMANDS["plan"])
    assert code == 2 and "AWS_REGION" in err and "--embedded-aws" in err


@pytest.mark.slow
def test_aws_failing_every_call_is_summed_up_per_cause(repository, cli, monkeypatch, default_aws):
    """AWS answers (the probe passes), then fails every call with one of the six faults the proxy
    injects: at most one line per fault, however many look-ups it hit; the JSON keeps every note."""
    argv = ["plan", "--stack", "demo", "--cache-dir", repository / "cache"]
    with FaultProxy(default_aws.endpoint_url, fraction=1.0) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        code, out, _ = cli(*argv)
        json_code, json_out, _ = cli(*argv, "--format", "json")
    transient = [line for line in out.splitlines() if line.startswith("transient:")]
    notes = json.loads(json_out)["transient"]
    assert code == json_code == 3
    assert 1 <= len(transient) <= 6 < len(notes), (transient, notes)
    assert any("look-ups got no answer from AWS" in line for line in transient), transient


def _stderr_of(argv: list[str], cwd: Path, *, tty: bool) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal (or a pipe); its exit code and what stderr showed."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    command = [sys.executable, "-m", "karpenter_gitops", *argv]
    if not tty:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        return done.returncode, done.stderr
    primary, secondary = pty.openpty()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=secondary, stdin=subprocess.DEVNULL)
    os.close(secondary)
    shown = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 1)
        if ready:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    os.close(primary)
    return process.wait(timeout=300), shown.decode(errors="replace")


@pytest.mark.slow
@pytest.mark.parametrize("tty", [True, False], ids=["terminal", "pipe"])
def test_a_spinner_shows_on_a_terminal_only(repository, catalogue_cache, tty):
    argv = [*COMMANDS["plan"], "--embedded-aws", "--cache-dir", str(catalogue_cache)]
    code, stderr = _stderr_of(argv, repository, tty=tty)
    assert code in (0, 1), stderr
    if tty:
        assert "asking AWS" in stderr or "planning" in stderr, stderr
    else:
        assert stderr == "", stderr
