"""Benchmark: a fleet of stacks (default 200 × 5 EC2NodeClasses × 10 NodePools) validated and planned in one run.

Run by hand: ``.venv/bin/python benchmarks/fleet_scale.py [--stacks 200 20] [--classes 5] [--pools 10]``.
It writes a project whose stacks share a handful of distinct selector sets (as clusters built from
one template do), then runs ``validate --all-stacks`` and ``plan --all-stacks --embedded-aws`` (moto
on 127.0.0.1, default world), each in its own process, and prints wall time, peak RSS and, for
plan, the AWS calls. Target: AWS calls grow with distinct queries, not with stacks, so
the call count is the same for every fleet size. Figures go in docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

SELECTORS = [  # distinct selector sets the classes cycle through
    [{"alias": "al2023@v20250201"}],
    [{"alias": "al2023@v20240807"}],
    [{"alias": "bottlerocket@1.32.0"}],
]


def node_class(index: int) -> dict:
    return {
        "amiSelectorTerms": SELECTORS[index % len(SELECTORS)],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
    }


def node_pool(class_name: str, index: int) -> dict:
    categories = [["c"], ["m"], ["r"], ["c", "m"], ["m", "r"]][index % 5]
    return {
        "template": {
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": class_name},
                "requirements": [
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": categories},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                ],
            }
        },
        "limits": {"cpu": "1000"},
    }


def write_project(root: Path, stacks: int, classes: int, pools: int) -> None:
    (root / "Pulumi.yaml").write_text("name: fleet\nruntime: python\nstackConfigDir: stacks\n")
    (root / "stacks").mkdir()
    for stack in range(stacks):
        names = [f"class-{c}" for c in range(classes)]
        config = {
            "aws:region": "us-west-2",
            "karpenter-gitops:cluster": {"name": f"cluster-{stack}", "kubernetesVersion": "1.32"},
            "karpenter-gitops:nodeClasses": {name: node_class(c) for c, name in enumerate(names)},
            "karpenter-gitops:nodePools": {
                f"pool-{c}-{p}": node_pool(name, p) for c, name in enumerate(names) for p in range(pools)
            },
        }
        (root / "stacks" / f"Pulumi.stack-{stack:03}.yaml").write_text(yaml.safe_dump({"config": config}))


def measure(argv: list[str], cwd: Path) -> dict:
    """Run the CLI in a child process: wall time, peak RSS, exit code, the JSON report's summary. Its output goes
    to a file, read back only at its end: a fleet plan prints some 700 KB a stack, and held here it would swell
    this process, whose peak a child started from it reports as its own (Linux keeps the peak across exec)."""
    probe = (
        "import resource, sys, time\n"
        "from karpenter_gitops.cli import main\n"
        "start = time.perf_counter()\n"
        "code = main(sys.argv[1:])\n"
        "wall = time.perf_counter() - start\n"
        "rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(f'\\n@@ {wall:.3f} {rss:.1f} {code}', file=sys.stderr)\n"
    )
    with tempfile.TemporaryFile() as out:
        done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True)
        out.seek(max(out.seek(0, 2) - 65_536, 0))
        tail = out.read().decode()
    wall, rss, code = done.stderr.strip().splitlines()[-1].split()[1:]
    at = tail.rfind('"summary": ')  # a fleet's report; one stack's has none
    summary = json.JSONDecoder().raw_decode(tail[at + len('"summary": ') :])[0] if at >= 0 else None
    return {"wall": float(wall), "rss": float(rss), "code": int(code), "summary": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--pools", type=int, default=10)
    args = parser.parse_args()
    print(f"{'stacks':>6} {'objects':>8}  {'validate':>9} {'RSS':>8}  {'plan':>8} {'RSS':>8} {'AWS calls':>10}")
    for stacks in args.stacks:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            write_project(root, stacks, args.classes, args.pools)
            cache = ["--cache-dir", str(root / "cache")]
            validated = measure(["validate", "--all-stacks", "--format", "json"], root)
            measure(["plan", "--stack", "stack-000", "--embedded-aws", *cache, "--format", "json"], root)  # warm the catalogue
            planned = measure(["plan", "--all-stacks", "--embedded-aws", *cache, "--format", "json"], root)
            calls = sum(planned["summary"]["awsCalls"].values())
            objects = stacks * args.classes * (1 + args.pools)
            print(
                f"{stacks:>6} {objects:>8}  {validated['wall']:>8.2f}s {validated['rss']:>6.0f}MiB "
                f"{planned['wall']:>7.2f}s {planned['rss']:>6.0f}MiB {calls:>10}"
            )


if __name__ == "__main__":
    main()
