"""Benchmark: our `validate` next to bare schema checking, on the same generated objects, in one run.

Run by hand: ``.venv/bin/python benchmarks/validate_side_by_side.py [--sizes 1000 10000 100000]``.
It writes realistic objects (half EC2NodeClasses with block devices, metadata options, tags and
AL2023 userData; half NodePools with requirements, taints, disruption budgets and limits) as
multi-document files of 1,000 objects, then times each way of checking them in its own process,
so every peak RSS is that way's alone:

* ``schema``: PyYAML's C loader and a jsonschema validator built once from the v1.14.1 CRDs'
  ``openAPIV3Schema``, nothing else: the floor any checker pays.
* ``schema+cel``: the same CRDs as ``validate --crd`` judges them (structural schema through
  jsonschema, every ``x-kubernetes-validations`` rule through cel-python, compiled once).
* ``validate``: what ``karpenter-gitops validate`` does (read, parse, load, every rule, line
  numbers); ``validate --policy``: the hygiene catalogue and a waiver too.

Targets (issue 14): ``validate`` ≥ 1.5× the ``schema`` baseline's objects/s and ≥ 5,000 objects/s,
peak RSS ≤ 1.2× the baseline's. Figures go in docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[1]
CRDS = PROJECT.parent / "shared" / "crds" / "v1.14.1"
MODES = ("schema", "schema+cel", "validate", "validate --policy")
TARGETS = {"ratio": 1.5, "objects_per_s": 5_000, "rss_ratio": 1.2}
PER_FILE = 1_000

USERDATA = """\
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  kubelet:
    config:
      shutdownGracePeriod: 30s

--BOUNDARY--
"""


def node_class(index: int) -> dict:
    return {
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": f"class-{index}"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@v20240807"}],
            "role": f"KarpenterNodeRole-team-{index % 50}",
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "ebs": {"volumeSize": "100Gi", "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True},
                }
            ],
            "metadataOptions": {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"},
            "tags": {"team": f"team-{index % 50}", "cost-center": "platform"},
            "userData": USERDATA,
        },
    }


def node_pool(index: int) -> dict:
    requirement = lambda key, *values: {"key": key, "operator": "In", "values": list(values)}  # noqa: E731
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"pool-{index}"},
        "spec": {
            "template": {
                "metadata": {"labels": {"team": f"team-{index % 50}"}},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": f"class-{index}"},
                    "requirements": [
                        requirement("karpenter.sh/capacity-type", "on-demand", "spot"),
                        requirement("kubernetes.io/arch", "amd64"),
                        requirement("karpenter.k8s.aws/instance-category", "c", "m", "r"),
                        {"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["5"]},
                    ],
                    "taints": [{"key": "team", "value": f"team-{index % 50}", "effect": "NoSchedule"}],
                    "expireAfter": "720h",
                },
            },
            "disruption": {
                "consolidationPolicy": "WhenEmptyOrUnderutilized",
                "consolidateAfter": "1m",
                "budgets": [{"nodes": "10%"}, {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}],
            },
            "limits": {"cpu": "1000", "memory": "1000Gi"},
        },
    }


def write_objects(directory: Path, count: int) -> None:
    """``count`` objects, one file per 1,000 as a repository would split them."""
    docs = [make(index) for index in range(count // 2) for make in (node_class, node_pool)]
    for start in range(0, len(docs), PER_FILE):
        text = yaml.dump_all(docs[start : start + PER_FILE], Dumper=yaml.CSafeDumper, sort_keys=False)
        (directory / f"objects-{start:06}.yaml").write_text(text)


def crd_schemas() -> dict[str, dict]:
    """The served v1 ``openAPIV3Schema`` of each kind in the v1.14.1 CRDs."""
    schemas = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
        schemas[crd["spec"]["names"]["kind"]] = version["schema"]["openAPIV3Schema"]
    return schemas


def run_schema(directory: Path) -> tuple[int, int]:
    from jsonschema import Draft202012Validator

    validators = {kind: Draft202012Validator(schema) for kind, schema in crd_schemas().items()}
    objects = errors = 0
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            objects += 1
            errors += sum(1 for _ in validators[doc["kind"]].iter_errors(doc))
    return objects, errors


def run_schema_cel(directory: Path) -> tuple[int, int]:
    from karpenter_gitops.load.crds import load

    crds = load([str(CRDS)])
    objects = errors = 0
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=yaml.CSafeLoader):
            objects += 1
            errors += len(crds.check(doc).observations)
    return objects, errors


def run_validate(directory: Path, policy: bool) -> tuple[int, int]:
    from karpenter_gitops.app.sources import read_sources
    from karpenter_gitops.app.validate import validate_sources
    from karpenter_gitops.core.inputs import Waiver

    waivers = (Waiver("policy/bounded-instance-size", "pool-1*", "benchmark", dt.date(2999, 1, 1)),) if policy else ()
    report = validate_sources(read_sources([directory]), policy=policy, waivers=waivers)
    return report.objects, report.errors


def measure(mode: str, directory: Path) -> dict:
    """One mode in this process: seconds, objects, errors found, peak RSS."""
    start = time.perf_counter()
    if mode == "schema":
        objects, errors = run_schema(directory)
    elif mode == "schema+cel":
        objects, errors = run_schema_cel(directory)
    else:
        objects, errors = run_validate(directory, policy=mode.endswith("--policy"))
    seconds = time.perf_counter() - start
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"mode": mode, "objects": objects, "errors": errors, "seconds": seconds, "rss_mib": rss_mib}


def in_child(mode: str, directory: Path) -> dict:
    argv = [sys.executable, __file__, "--measure", mode, "--dir", str(directory)]
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def report(size: int, rows: list[dict]) -> None:
    base = next(row for row in rows if row["mode"] == "schema")
    base_rate = base["objects"] / base["seconds"]
    print(f"\n{size:,} objects")
    print(f"  {'mode':<18} {'seconds':>8} {'objects/s':>10} {'× schema':>9} {'peak RSS':>9} {'× RSS':>6} {'errors':>7}")
    met = True
    for row in rows:
        rate = row["objects"] / row["seconds"]
        ratio, rss_ratio = rate / base_rate, row["rss_mib"] / base["rss_mib"]
        print(
            f"  {row['mode']:<18} {row['seconds']:>8.2f} {rate:>10,.0f} {ratio:>8.2f}× "
            f"{row['rss_mib']:>6,.0f} MiB {rss_ratio:>5.2f}× {row['errors']:>7}"
        )
        if row["mode"] == "validate":
            met = ratio >= TARGETS["ratio"] and rate >= TARGETS["objects_per_s"] and rss_ratio <= TARGETS["rss_ratio"]
    print(
        f"  targets for validate: ≥ {TARGETS['ratio']}× schema, ≥ {TARGETS['objects_per_s']:,} objects/s, "
        f"≤ {TARGETS['rss_ratio']}× RSS: {'met' if met else 'NOT met'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--measure", choices=MODES, help=argparse.SUPPRESS)  # a child process: one mode
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.dir)))
        return
    modes = ["schema", *(mode for mode in args.modes if mode != "schema")]
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            write_objects(Path(tmp), size)
            report(size, [in_child(mode, Path(tmp)) for mode in modes])


if __name__ == "__main__":
    main()
