"""Benchmark: validate 10,000 objects offline (target ≥ 2,000 objects/s on one core).

Run by hand: ``.venv/bin/python benchmarks/validate_10k.py [--objects N] [--policy]``. It writes a
directory of multi-document manifests with realistic EC2NodeClasses (with userData) and NodePools,
then times the whole `validate` path: read, parse, load into models, run every rule. ``--policy``
runs it as ``validate --policy`` does: the hygiene catalogue too, with a waiver covering part of
the findings. Prints objects/s and peak memory; the figure goes in the README, never into a test.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import resource
import tempfile
import time
from pathlib import Path

import yaml

from karpenter_gitops.core import versions
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.judge import validate
from karpenter_gitops.load.documents import load
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

AL2023_USERDATA = """\
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
WAIVERS = (Waiver("policy/bounded-instance-size", "pool-1*", "benchmark", dt.date(2999, 1, 1)),)


def documents(count: int) -> list[dict]:
    docs = []
    for index in range(count // 2):
        node_class = copy.deepcopy(BASE_NODECLASS)
        node_class["metadata"]["name"] = f"class-{index}"
        node_class["spec"]["userData"] = AL2023_USERDATA
        node_class["spec"]["tags"] = {"team": f"team-{index % 50}", "cost-center": "platform"}
        node_pool = copy.deepcopy(BASE_NODEPOOL)
        node_pool["metadata"]["name"] = f"pool-{index}"
        node_pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] = f"class-{index}"
        node_pool["spec"]["template"]["spec"]["requirements"].append(
            {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]}
        )
        docs += [node_class, node_pool]
    return docs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--policy", action="store_true", help="also the hygiene catalogue and a waiver")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        docs = documents(args.objects)
        for start_index in range(0, len(docs), 1000):  # one file per 1,000 objects, as a repo would split them
            chunk = docs[start_index : start_index + 1000]
            (Path(tmp) / f"objects-{start_index:05}.yaml").write_text(yaml.safe_dump_all(chunk))
        start = time.perf_counter()
        inputs = load([tmp], versions.DEFAULT)
        loaded = time.perf_counter()
        waivers = WAIVERS if args.policy else ()
        report = validate(inputs, versions.DEFAULT, policy=args.policy, waivers=waivers)
        done = time.perf_counter()
    total = done - start
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"objects:          {report.objects}")
    print(f"findings:         {len(report.findings)} ({report.errors} errors, {len(report.waived)} waived)")
    print(f"read+parse+load:  {loaded - start:.2f} s")
    print(f"rules:            {done - loaded:.2f} s")
    print(f"throughput:       {report.objects / total:,.0f} objects/s (target >= 2,000)")
    print(f"peak RSS:         {peak_mib:,.0f} MiB")


if __name__ == "__main__":
    main()
