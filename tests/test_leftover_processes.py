"""The check that fails a run whose tests leave processes behind (tests/support/leftover_processes.py),
on runs of their own, and the remedy it asks for: ending a process tree by its session."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.processes import kill_session, session_members
from support.run_of_its_own import run_of_its_own

TESTS = """
import subprocess

def test_a_child_left_running():
    subprocess.Popen(["sleep", "301"])

def test_a_grandchild_orphaned_when_its_parent_exits():
    subprocess.run(["sh", "-c", "sleep 302 &"])

def test_a_child_waited_for():
    subprocess.run(["true"])
"""


def _run(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return run_of_its_own(tmp_path, TESTS, "support.leftover_processes", *options)


@pytest.mark.slow
@pytest.mark.parametrize("options", [pytest.param((), id="one-process"), pytest.param(("-n", "1"), id="xdist-worker")])
def test_a_run_whose_tests_leave_processes_fails_naming_them(tmp_path, options):
    done = _run(tmp_path, *options)
    assert "3 passed" in done.stdout and done.returncode == 1, done.stdout[-3000:]
    summary = done.stdout.split("processes left behind", 1)[1]
    assert "sleep 301" in summary and "sleep 302" in summary  # the orphan too: the test process adopts orphans
    assert "sh -c" not in summary and "true" not in summary


def test_ending_a_session_ends_the_processes_its_members_started_in_process_groups_of_their_own():
    """As the Pulumi CLI starts its plugins: each in a process group of its own, left running when it is killed."""
    plugin = "import subprocess; subprocess.Popen(['sleep', '304'], process_group=0)"
    tree = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "{plugin}"; exec sleep 305'], start_new_session=True)
    deadline = time.monotonic() + 30
    while (groups := {member.command: member.group for member in session_members(tree.pid)}).keys() != {"sleep 304", "sleep 305"}:
        assert time.monotonic() < deadline, groups
        time.sleep(0.05)
    assert groups["sleep 304"] != groups["sleep 305"] == tree.pid, groups
    kill_session(tree.pid)
    assert tree.wait(timeout=10) == -9 and session_members(tree.pid) == []
