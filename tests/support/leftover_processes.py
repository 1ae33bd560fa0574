"""A run fails when a test leaves a process behind (pytest plugin; tests/conftest.py loads it).

A process a test started and never ended runs on after the run: it holds ports and CPU on a shared
machine, and in CI it outlives the job. At the end of the session (of each xdist worker) the live
children of the process that ran the tests are named, ended, and the run fails.

A test's process that starts programs of its own can leave grandchildren: killed, it leaves them to
be re-parented. So the process running the tests makes itself a child subreaper (Linux's
PR_SET_CHILD_SUBREAPER): orphans of its descendants become its children instead of init's, and the
check sees them too.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time

import pytest

from support.processes import live_children

PR_SET_CHILD_SUBREAPER = 36
# A child a fixture just stopped may take a moment to exit.
GRACE = 5.0
# The processes left behind, named: a worker's own, or in xdist's controller every worker's.
LEFT_BEHIND = pytest.StashKey[list]()


def _runs_tests(config: pytest.Config) -> bool:
    """False in xdist's controller, whose children are the workers (each worker checks itself)."""
    return not config.pluginmanager.hasplugin("dsession")


def _adopt_orphans() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _left_behind() -> list[str]:
    deadline = time.monotonic() + GRACE
    while (children := live_children()) and time.monotonic() < deadline:
        time.sleep(0.1)
    for child in children:
        try:
            os.kill(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return [str(child) for child in children]


def pytest_sessionstart(session: pytest.Session) -> None:
    if _runs_tests(session.config):
        _adopt_orphans()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if _runs_tests(config):
        left = _left_behind()
        if hasattr(config, "workeroutput"):  # an xdist worker: its controller reports
            config.workeroutput["left_behind"] = left
        config.stash[LEFT_BEHIND] = left
    if config.stash.get(LEFT_BEHIND, []) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist's controller: what a worker left behind."""
    config = node.config
    worker = getattr(node, "workeroutput", {})  # none from a worker that crashed
    config.stash[LEFT_BEHIND] = config.stash.get(LEFT_BEHIND, []) + worker.get("left_behind", [])


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if left := config.stash.get(LEFT_BEHIND, []):
        terminalreporter.section("processes left behind", red=True)
        terminalreporter.write_line("the run fails: these processes outlived the tests that started them (now ended):")
        for process in left:
            terminalreporter.write_line(f"  {process}")
