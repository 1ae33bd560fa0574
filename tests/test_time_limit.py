"""The per-test time limit (tests/support/time_limit.py), on a run of its own with a 2 s limit."""

from __future__ import annotations

import pytest
from support.run_of_its_own import run_of_its_own

pytestmark = pytest.mark.slow

HANGING = """
import subprocess, time
from hypothesis import given, settings, strategies as st

@settings(deadline=None, database=None)
@given(st.integers())
def test_a_property_whose_every_example_hangs(number):
    time.sleep(600)

def test_a_child_that_never_exits():
    subprocess.run(["sleep", "600"])

def test_the_next_test_still_runs():
    pass
"""


def test_a_hanging_test_fails_with_its_stack_and_the_run_goes_on(tmp_path):
    done = run_of_its_own(tmp_path, HANGING, "support.time_limit", "-rA", environment={"KARPENTER_GITOPS_TEST_TIME_LIMIT": "2"})
    assert done.returncode == 1, done.stdout[-3000:]
    for name in ("test_a_property_whose_every_example_hangs", "test_a_child_that_never_exits"):
        assert f"support.time_limit.Overran: test_of_its_own.py::{name} ran past 2 s" in done.stdout
    assert 'test_of_its_own.py", line 11 in test_a_child_that_never_exits' in done.stdout  # the stack, where it hung
    assert "PASSED test_of_its_own.py::test_the_next_test_still_runs" in done.stdout
