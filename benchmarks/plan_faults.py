"""Benchmark: `plan --stack demo` through a fault proxy failing a third of AWS calls, and with AWS down.

Run by hand: ``.venv/bin/python benchmarks/plan_faults.py [--runs 25] [--fraction 0.333] [--deadline 180]``.
The embedded AWS (default world) sits behind the seeded fault proxy of the tests
(``tests/support/fault_proxy.py``: throttling errors and bare 5xx, decided per request and seed).
A clean run gives the reference answer; each seeded run must give exactly that answer or exit 3.
Then, with every call failing and ``--down-deadline`` seconds of deadline, how long the run takes
to exit 3. Back-off is botocore's, unscaled. Figures go in docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT / "tests"))

from support.fault_proxy import FaultProxy  # noqa: E402

from karpenter_gitops.adapters.aws.embedded import embedded_aws  # noqa: E402
from karpenter_gitops.adapters.aws.retries import DEADLINE_ENV  # noqa: E402
from karpenter_gitops.cli import main  # noqa: E402


def plan(cache: str) -> tuple[int, dict | None, float, dict | None]:
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["plan", "--stack", "demo", "--cache-dir", cache, "--format", "json"])
    elapsed = time.perf_counter() - started
    answer = json.loads(out.getvalue()) if out.getvalue().strip() else None
    calls = answer.pop("awsCalls", None) if answer else None
    return code, answer, elapsed, calls


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--fraction", type=float, default=1 / 3)
    parser.add_argument("--deadline", type=float, default=180, help="run deadline (s) under faults")
    parser.add_argument("--down-deadline", type=float, default=20, help="run deadline (s) with AWS down")
    args = parser.parse_args()
    os.chdir(PROJECT)
    with tempfile.TemporaryDirectory() as cache, embedded_aws() as world, FaultProxy(world.endpoint_url, 0.0) as proxy:
        os.environ["AWS_ENDPOINT_URL"] = proxy.url
        os.environ[DEADLINE_ENV] = str(args.deadline)
        clean_code, clean, clean_time, calls = plan(cache)
        print(f"clean run: exit {clean_code}, {clean_time:.1f} s, {sum((calls or {}).values())} AWS calls")
        outcomes: Counter[str] = Counter()
        times, injected = [], 0
        for seed in range(args.runs):
            proxy.reseed(seed, fraction=args.fraction)
            code, answer, elapsed, _ = plan(cache)
            injected += proxy.injected
            times.append(elapsed)
            outcome = "clean answer" if (code, answer) == (clean_code, clean) else "exit 3" if code == 3 else "WRONG"
            outcomes[outcome] += 1
        times.sort()
        print(
            f"{args.runs} runs with {args.fraction:.0%} of attempts failing ({injected} faults injected): "
            + ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        )
        print(f"  run time: median {times[len(times) // 2]:.1f} s, max {times[-1]:.1f} s")
        os.environ[DEADLINE_ENV] = str(args.down_deadline)
        proxy.reseed(0, fraction=1.0)
        code, _, elapsed, _ = plan(cache)
        print(f"AWS down, deadline {args.down_deadline:g} s: exit {code} after {elapsed:.1f} s ({proxy.injected} attempts)")
        if outcomes["WRONG"] or code != 3:
            sys.exit(1)


if __name__ == "__main__":
    main_()
