"""Benchmark: the whole rule catalogue, hygiene policies and waivers included, over 10,000 objects.

Run by hand: ``.venv/bin/python benchmarks/policy_10k.py [--objects N]``. Same documents and the
same timed path as ``validate_10k.py`` (read, parse, load, judge) but as ``validate --policy`` runs
it, with a waiver that covers part of the findings. Prints objects/s; the figure goes in the README.
"""

from __future__ import annotations

import argparse
import datetime as dt
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate_10k import documents  # noqa: E402  (the shared document generator)

from karpenter_gitops import config, versions  # noqa: E402
from karpenter_gitops.validate import validate  # noqa: E402
from karpenter_gitops.waivers import Waiver  # noqa: E402

WAIVERS = (Waiver("policy/bounded-instance-size", "pool-1*", "benchmark", dt.date(2999, 1, 1)),)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        docs = documents(args.objects)
        for start_index in range(0, len(docs), 1000):
            (Path(tmp) / f"objects-{start_index:05}.yaml").write_text(yaml.safe_dump_all(docs[start_index : start_index + 1000]))
        start = time.perf_counter()
        inputs = config.load([tmp], versions.DEFAULT)
        loaded = time.perf_counter()
        report = validate(inputs, versions.DEFAULT, policy=True, waivers=WAIVERS)
        done = time.perf_counter()
    total = done - start
    print(f"objects:          {report.objects}")
    print(f"findings:         {len(report.findings)} ({report.errors} errors, {len(report.waived)} waived)")
    print(f"read+parse+load:  {loaded - start:.2f} s")
    print(f"rules+waivers:    {done - loaded:.2f} s")
    print(f"throughput:       {report.objects / total:,.0f} objects/s")
    print(f"peak RSS:         {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
