"""Colour as a user on a terminal, or in a pipe, gets it: the installed console script run on a
pseudo-terminal (its standard output a pty, as in a shell) and in a pipe, under NO_COLOR,
FORCE_COLOR and --color/--no-color, for a command printing through click (validate) and one
printing through rich (plan)."""

from __future__ import annotations

import os
import subprocess

import pytest
from test_newcomer_repositories import CLASS, POOL, SCRIPT

pytestmark = pytest.mark.packaging

ESCAPE = b"\x1b["
COMMANDS = {"validate": ["validate", "karpenter"], "plan": ["plan", "karpenter", "--embedded-aws"]}


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    root = tmp_path_factory.mktemp("infra")
    (root / "karpenter").mkdir()
    (root / "karpenter" / "nodeclass.yaml").write_text(CLASS)
    (root / "karpenter" / "nodepool.yaml").write_text(POOL)
    return root


def _environment(**settings: str) -> dict[str, str]:
    plain = {
        key: value
        for key, value in os.environ.items()
        if key not in ("NO_COLOR", "FORCE_COLOR", "TERM") and not key.startswith(("AWS_", "KARPENTER_GITOPS_"))
    }
    return plain | {"TERM": "xterm-256color", "COLUMNS": "120"} | settings


def on_terminal(cwd, argv: list[str], **settings: str) -> bytes:
    """Standard output of a run whose standard output is a terminal."""
    leader, follower = os.openpty()
    run = subprocess.Popen(
        [str(SCRIPT), *argv],
        cwd=cwd,
        stdout=follower,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=_environment(**settings),
    )
    os.close(follower)
    written = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the run ended and closed its side
            break
        if not chunk:
            break
        written += chunk
    os.close(leader)
    _, err = run.communicate(timeout=300)
    assert b"Traceback" not in err, err
    assert written.strip(), err
    return written


def in_pipe(cwd, argv: list[str], **settings: str) -> bytes:
    done = subprocess.run([str(SCRIPT), *argv], cwd=cwd, capture_output=True, env=_environment(**settings), timeout=300)
    assert b"Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip(), done.stderr
    return done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_a_terminal_is_coloured(repository, command):
    assert ESCAPE in on_terminal(repository, COMMANDS[command])


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("how", ["NO_COLOR=1", "--no-color", "--no-color with FORCE_COLOR=1", "NO_COLOR=1 with FORCE_COLOR=1"])
def test_no_colour_on_a_terminal_when_asked(repository, command, how):
    settings = {"NO_COLOR": "1"} if "NO_COLOR" in how else {}
    settings |= {"FORCE_COLOR": "1"} if "FORCE_COLOR" in how else {}
    flag = ["--no-color"] if how.startswith("--no-color") else []
    assert ESCAPE not in on_terminal(repository, [*flag, *COMMANDS[command]], **settings)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_pipe_is_plain_unless_colour_is_forced(repository, command):
    assert ESCAPE not in in_pipe(repository, COMMANDS[command])
    assert ESCAPE in in_pipe(repository, COMMANDS[command], FORCE_COLOR="1")


@pytest.mark.parametrize("command", COMMANDS)
def test_the_flag_wins_over_the_environment(repository, command):
    assert ESCAPE in in_pipe(repository, ["--color", *COMMANDS[command]], NO_COLOR="1")
