"""The benchmarks still run (on tiny inputs): a figure in the README must come from a script that works.

Their timings are not asserted here; ``make bench`` prints them.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import PROJECT


@pytest.mark.parametrize(
    "argv",
    [["benchmarks/validate_10k.py", "--objects", "20"], ["benchmarks/validate_10k.py", "--objects", "20", "--policy"],
     ["benchmarks/plan_scale.py", "--sizes", "1"],
     ["benchmarks/plan_faults.py", "--runs", "1", "--deadline", "60", "--down-deadline", "1"]],
    ids=lambda argv: " ".join(argv[0:1] + argv[2:]),
)
def test_benchmark_runs(argv):
    result = subprocess.run([sys.executable, *argv], cwd=PROJECT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()
