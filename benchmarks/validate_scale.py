"""Benchmark: how `validate`'s time and peak memory grow with the number of objects (1k, 10k, 50k, 500k).

Run by hand: ``.venv/bin/python benchmarks/validate_scale.py [--sizes 1000 10000 50000 500000]``.
For each size it writes the benchmark objects (``harness/objects.py``, all valid) as files of
``--per-file`` objects (``--per-file 0``: one file holding them all, as ``helm template`` output
is), runs the installed console script once on them and reports wall time, objects per second,
microseconds per object, peak RSS and kilobytes per object, and the marginal cost: time and
memory per object added since the previous size (constant when the cost grows linearly; start-up
is in the first size's figures and cancels out of the margins). A run is stopped after ``--cap`` seconds, or
when it needs more than ``--cap-mib`` of address space, and the table says so.

Targets: 50,000 objects in ≤ 15 s and ≤ 300 MB; linear growth to 500,000. Figures go
in docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

from harness.measure import Run, run
from harness.objects import object_count, write_objects

CONSOLE_SCRIPT = Path(sys.executable).with_name("karpenter-gitops")
TARGET_SIZE, TARGET_SECONDS, TARGET_MB = 50_000, 15.0, 300


def judged(done: Run) -> int | None:
    """The objects the run's summary counts: the JSON report's, or the last line's in JSON Lines."""
    text = done.stdout.strip()
    for document in (text, text.rpartition("\n")[2]):
        try:
            return json.loads(document)["summary"]["objects"]
        except (ValueError, KeyError, TypeError):
            continue
    return None


def line(size: int, done: Run, previous: tuple[int, Run] | None) -> str:
    """One size's row; the marginal columns are the cost of each object added since the previous size."""
    if done.capped:
        return (
            f"  {size:>9,} stopped after {done.seconds:,.0f} s (the --cap), {done.rss_mib:,.0f} MiB by then: "
            f"under {size / done.seconds:,.0f} objects/s"
        )
    if done.returncode not in (0, 1) or judged(done) != size:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        return f"  {size:>9,} failed after {done.seconds:,.1f} s, peak {done.rss_mib:,.0f} MiB: {why[0][:200]}"
    margin = ""
    if previous is not None:
        added, before = size - previous[0], previous[1]
        margin = f" {(done.seconds - before.seconds) / added * 1e6:>9.0f} {(done.rss_mib - before.rss_mib) * 1024 / added:>7.1f}"
    return (
        f"  {size:>9,} {done.seconds:>9.2f} {done.cpu_seconds:>7.2f} {size / done.seconds:>10,.0f} {done.seconds / size * 1e6:>9.0f} "
        f"{done.rss_mib:>8,.0f} {done.rss_mib * 1024 / size:>7.1f}{margin}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=object_count, nargs="+", default=[1_000, 10_000, 50_000, 500_000])
    parser.add_argument("--per-file", type=int, default=1_000, help="objects per file; 0 puts them all in one file")
    parser.add_argument(
        "--format",
        choices=["json", "jsonl"],
        default="json",
        help="jsonl: runs of 100 MB and more are judged part by part, their findings printed as they come",
    )
    parser.add_argument("--cap", type=float, default=900, help="seconds a run may take before it is stopped")
    parser.add_argument("--cap-mib", type=int, default=8_192, help="address space a run may take before it fails")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}")
    layout = "one file" if args.per_file == 0 else f"files of {args.per_file:,} objects"
    print(
        f"validate --format {args.format} on {layout}; stopped after {args.cap:,.0f} s or {args.cap_mib:,} MiB of address space"
    )
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    print(
        f"  {'objects':>9} {'seconds':>9} {'CPU s':>7} {'objects/s':>10} {'µs/object':>9} {'peak MiB':>8} {'KB/obj':>7} {'margin µs':>9} {'KB':>7}"
    )
    previous, sound, at_target = None, True, None
    for size in sorted(args.sizes):
        with tempfile.TemporaryDirectory() as tmp:
            write_objects(Path(tmp), size, per_file=args.per_file or size)
            done = run(
                [str(CONSOLE_SCRIPT), "validate", "--no-cache", "--format", args.format, tmp],
                cap_seconds=args.cap,
                cap_mib=args.cap_mib,
            )
        print(line(size, done, previous), flush=True)
        ok = not done.capped and done.returncode in (0, 1) and judged(done) == size
        sound = sound and (ok or done.capped)  # a capped run is a figure too (a lower bound), said in its line
        if ok:
            previous = (size, done)
        if size == TARGET_SIZE:
            at_target = done
    if at_target is not None and not at_target.capped:
        met = at_target.seconds <= TARGET_SECONDS and at_target.rss_mib * 1.048576 <= TARGET_MB
        print(
            f"  target: {TARGET_SIZE:,} objects in ≤ {TARGET_SECONDS:.0f} s and ≤ {TARGET_MB} MB: "
            f"{at_target.seconds:.1f} s, {at_target.rss_mib * 1.048576:,.0f} MB, {'met' if met else 'NOT met'}"
        )
    return 0 if sound else 1


if __name__ == "__main__":
    sys.exit(main())
