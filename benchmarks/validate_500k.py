"""Benchmark: `validate --format jsonl` up to 500,000 objects, in one file and in files of 1,000.

Run by hand: ``.venv/bin/python benchmarks/validate_500k.py [--sizes 10000 50000 250000 500000]``.
For each layout (one file, as ``helm template`` writes a chart's output; files of 1,000 objects, as a
fleet's rendered folders hold them) and each size, it writes the benchmark objects (``harness/objects.py``,
all valid) into a scratch folder, runs the installed console script once on them with ``--no-cache
--format jsonl`` (from 100 MB of YAML, about 100,000 objects, the run is judged part by part, each
part's findings printed as it is judged) and prints the row of ``validate_scale.py``: wall and CPU time,
peak RSS (the larger of the two processes: ``wait4`` reports the child's and its children's largest),
and the time and memory each object added costs.

Targets: 500,000 objects in < 60 s on two cores with a peak RSS < 300 MB, in either layout; growth
linear: each size five times the one before takes at most six times its time. The machines are shared,
so times stretch with the load (printed at the start); the memory figures do not. Figures go in
docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
from pathlib import Path

from harness.measure import Run, run
from harness.objects import object_count, write_objects
from validate_scale import CONSOLE_SCRIPT, judged, line

TARGET_SIZE, TARGET_SECONDS, TARGET_MB = 500_000, 60.0, 300
GROWTH = 6.0  # at most this many times the time for five times the objects
LAYOUTS = {"one file": 0, "files of 1,000": 1_000}


def measured(size: int, per_file: int, cap: float) -> Run:
    with tempfile.TemporaryDirectory() as tmp:
        write_objects(Path(tmp), size, per_file=per_file or size)
        return run([str(CONSOLE_SCRIPT), "validate", "--no-cache", "--format", "jsonl", tmp], cap_seconds=cap)


def verdicts(layout: str, runs: dict[int, Run]) -> list[str]:
    """The targets' lines for one layout: the time and memory at 500,000 objects, the growth for each ×5."""
    lines = []
    done = runs.get(TARGET_SIZE)
    if done is not None and not done.capped:
        megabytes = done.rss_mib * 1.048576
        met = done.seconds < TARGET_SECONDS and megabytes < TARGET_MB
        lines.append(
            f"  target ({layout}): {TARGET_SIZE:,} objects in < {TARGET_SECONDS:.0f} s and < {TARGET_MB} MB: "
            f"{done.seconds:.1f} s, {megabytes:,.0f} MB, {'met' if met else 'NOT met'}"
        )
    for size, smaller in ((size, size // 5) for size in sorted(runs)):
        if smaller in runs and not runs[size].capped and not runs[smaller].capped:
            growth = runs[size].seconds / runs[smaller].seconds
            verdict = "met" if growth <= GROWTH else "NOT met"
            lines.append(
                f"  growth ({layout}): {smaller:,} → {size:,} objects took {growth:.2f}× the time (≤ {GROWTH:.0f}×): {verdict}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=object_count, nargs="+", default=[10_000, 50_000, 250_000, 500_000])
    parser.add_argument("--layouts", nargs="+", choices=sorted(LAYOUTS), default=list(LAYOUTS))
    parser.add_argument("--cap", type=float, default=900, help="seconds a run may take before it is stopped")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}")
    print(f"load average at the start: {os.getloadavg()[0]:.1f} (times stretch with it; peak RSS does not)")
    sound, summary = True, []
    for layout in args.layouts:
        print(f"validate --format jsonl, {layout}")
        print(
            f"  {'objects':>9} {'seconds':>9} {'CPU s':>7} {'objects/s':>10} {'µs/object':>9} {'peak MiB':>8} {'KB/obj':>7} {'margin µs':>9} {'KB':>7}"
        )
        runs: dict[int, Run] = {}
        previous = None
        for size in sorted(args.sizes):
            done = measured(size, LAYOUTS[layout], args.cap)
            print(line(size, done, previous), flush=True)
            if not done.capped and done.returncode in (0, 1) and judged(done) == size:
                runs[size], previous = done, (size, done)
            elif not done.capped:
                sound = False
        summary += verdicts(layout, runs)
    print("\n".join(summary))
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
