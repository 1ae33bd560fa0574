"""A time limit per test (pytest plugin; tests/conftest.py loads it).

A test that hangs would otherwise hold CI until CI's own limit, and print nothing of where it stopped.
Past the limit, every thread's stack goes to the test's stderr and the test fails; the run goes on.
The slowest test takes about 70 s on two busy cores. KARPENTER_GITOPS_TEST_TIME_LIMIT sets another
limit (seconds).
"""

from __future__ import annotations

import faulthandler
import os
import signal

import pytest

LIMIT = float(os.environ.get("KARPENTER_GITOPS_TEST_TIME_LIMIT", "600"))  # setup, call and teardown together


class Overran(BaseException):
    """Raised in the test process when a test runs past the limit. Not an Exception: hypothesis would
    take one for a failing example and replay it to shrink it, hanging again with no limit left (which
    is why this is not pytest-timeout, whose signal method raises pytest's Failed, an Exception to
    hypothesis). pytest reports the test as failed, and the next test runs."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    def overran(signum, frame):
        faulthandler.dump_traceback(all_threads=True)
        raise Overran(f"{item.nodeid} ran past {LIMIT:.0f} s (the stacks of its threads are in its stderr)")

    previous = signal.signal(signal.SIGALRM, overran)
    signal.setitimer(signal.ITIMER_REAL, LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
