"""Benchmark: how long a user waits for one command (pre-commit hooks and CI run one per changed file).

Run by hand: ``.venv/bin/python benchmarks/startup.py [--runs 20]``. Each figure is the median
wall time of whole ``karpenter-gitops`` processes, started as a shell starts them (the console
script next to this interpreter), with bytecode caching on, as after ``pip install``:

* ``--help``;
* ``validate`` of one small manifest (an EC2NodeClass and its NodePool);
* ``python -c 'import yaml'`` with the same interpreter: the floor any Python checker pays;
* ``validate`` of 100 such files, one process per file, in total (what a hook per file costs).

Targets: ``--help`` ≤ 0.10 s, one small manifest ≤ 0.15 s, and one small manifest
≤ 0.12 s above ``import yaml``. An editable install
(``make test``'s) adds its import hook's cost; the figures in docs/project/benchmarks.md come from a regular install.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.measure import console_script, install, user_environment

SMALL = """\
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms:
    - alias: al2023@v20240807
  role: KarpenterNodeRole-demo
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      expireAfter: 720h
  limits: {cpu: 1000}
"""
TARGETS = {"--help": 0.10, "validate, one small manifest": 0.15}
ABOVE_IMPORT_YAML = 0.12  # one small manifest, above the interpreter's own start with PyYAML


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per figure (the median is shown)")
    parser.add_argument("--files", type=int, default=100, help="files for the one-process-per-file figure")
    args = parser.parse_args()
    command = str(console_script())
    env = user_environment()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}")
    print(f"install: {install()}")
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for index in range(args.files):
            path = Path(tmp) / f"small-{index}.yaml"
            path.write_text(SMALL)
            files.append(str(path))
        timed([command, "validate", "--no-cache", files[0]], env)  # writes the bytecode caches
        help_runs, validate_runs, yaml_runs = [], [], []
        for _ in range(args.runs):  # in turns, so a busy spell slows each alike
            help_runs.append(timed([command, "--help"], env))
            validate_runs.append(timed([command, "validate", "--no-cache", files[0]], env))
            yaml_runs.append(timed([sys.executable, "-c", "import yaml"], env))
        figures = {"--help": statistics.median(help_runs), "validate, one small manifest": statistics.median(validate_runs)}
        import_yaml = statistics.median(yaml_runs)
        per_file = sum(timed([command, "validate", "--no-cache", path], env) for path in files)
    for name, seconds in figures.items():
        verdict = "met" if seconds <= TARGETS[name] else "NOT met"
        print(f"{name:<32} {seconds:6.3f} s   (target ≤ {TARGETS[name]:.2f} s: {verdict})")
    above = figures["validate, one small manifest"] - import_yaml
    verdict = "met" if above <= ABOVE_IMPORT_YAML else "NOT met"
    print(f"{'python -c import yaml':<32} {import_yaml:6.3f} s")
    print(f"{'one small manifest above it':<32} {above:6.3f} s   (target ≤ {ABOVE_IMPORT_YAML:.2f} s: {verdict})")
    print(f"{f'validate, {args.files} files, a process each':<32} {per_file:6.2f} s in total")


if __name__ == "__main__":
    main()
