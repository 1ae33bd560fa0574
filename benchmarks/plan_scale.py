"""Benchmark: `plan` for 1, 10, 100 and 1000 EC2NodeClasses (sharing 10 selector sets) × 20 NodePools each.

Run by hand: ``.venv/bin/python benchmarks/plan_scale.py [--sizes 1 10 100 1000]``. Everything runs
against the embedded AWS (moto on 127.0.0.1, default world) over moto's full instance-type
catalogue. For each size it reports wall time (cold: empty catalogue cache; warm: cached),
the time spent mapping, peak memory and the AWS calls. Targets: AWS calls grow with
distinct selectors, not with NodeClasses (1000 NodeClasses ≤ 60 calls cold, no catalogue
calls warm); mapping for 1000 NodeClasses ≤ 2 s. Figures go in docs/project/benchmarks.md, never into tests.
"""

from __future__ import annotations

import argparse
import copy
import resource
import tempfile
import time
from pathlib import Path

from karpenter_gitops.adapters.aws.embedded import embedded_aws
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.karpenter.amifamily import resolver as ami_mapping
from karpenter_gitops.load.into_inputs import load_documents
from karpenter_gitops.reconcile import reconcile
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

SELECTOR_SETS = [
    {"amiSelectorTerms": [{"alias": "al2023@v20250201"}]},
    {"amiSelectorTerms": [{"alias": "al2023@v20240807"}]},
    {"amiSelectorTerms": [{"alias": "al2023@latest"}]},
    {"amiSelectorTerms": [{"alias": "bottlerocket@1.32.0"}]},
    {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]},
    {"amiFamily": "AL2023", "amiSelectorTerms": [{"name": "payments-node-20*", "owner": "self"}]},
    {"amiFamily": "AL2023", "amiSelectorTerms": [{"tags": {"team": "payments"}}]},
    {"amiFamily": "AL2023", "amiSelectorTerms": [{"tags": {"pipeline": "packer"}, "owner": "self"}]},
    {"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"name": "bottlerocket-aws-k8s-1.32-*"}]},
    {"amiFamily": "AL2023", "amiSelectorTerms": [{"id": "ami-0a23000000000b001"}, {"id": "ami-0a23000000000b004"}]},
]
CATEGORIES = ["c", "m", "r", "t", "g", "p", "i", "x", "z", "d"]


def pool_requirements(index: int) -> list[dict]:
    """Twenty distinct requirement sets: arch × capacity type × instance category."""
    arch = ["amd64"] if index % 2 else ["amd64", "arm64"]
    return [
        {"key": "kubernetes.io/arch", "operator": "In", "values": arch},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand", "spot"]},
        {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": [CATEGORIES[index % 10]]},
    ]


def documents(node_classes: int, pools_per_class: int = 20) -> list[dict]:
    docs = []
    for index in range(node_classes):
        node_class = copy.deepcopy(BASE_NODECLASS)
        node_class["metadata"]["name"] = f"class-{index}"
        node_class["spec"].update(copy.deepcopy(SELECTOR_SETS[index % len(SELECTOR_SETS)]))
        docs.append(node_class)
        for pool_index in range(pools_per_class):
            pool = copy.deepcopy(BASE_NODEPOOL)
            pool["metadata"]["name"] = f"class-{index}-pool-{pool_index}"
            pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] = f"class-{index}"
            pool["spec"]["template"]["spec"]["requirements"] = pool_requirements(pool_index)
            docs.append(pool)
    return docs


class MappingClock:
    """Times Mapper.map_node_pool across a run (the pure mapping, without AWS or validation)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._original = ami_mapping.Mapper.map_node_pool

    def __enter__(self) -> MappingClock:
        clock, original = self, self._original

        def timed(mapper, target, pool):
            start = time.perf_counter()
            try:
                return original(mapper, target, pool)
            finally:
                clock.seconds += time.perf_counter() - start

        ami_mapping.Mapper.map_node_pool = timed
        return self

    def __exit__(self, *_: object) -> None:
        ami_mapping.Mapper.map_node_pool = self._original


def run(env, inputs, cache_dir: Path) -> tuple[float, float, dict]:
    with MappingClock() as clock:
        start = time.perf_counter()
        plan = reconcile(inputs, aws=env.session(), kubernetes=Kubernetes(1, 32), cache_dir=cache_dir)
        wall = time.perf_counter() - start
    return wall, clock.seconds, plan.aws_calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 100, 1000])
    args = parser.parse_args()
    print(
        "| NodeClasses | NodePools | cold wall | warm wall | mapping (warm) | AWS calls cold | catalogue calls warm | peak RSS |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with embedded_aws() as env:
        for size in args.sizes:
            inputs = load_documents([("bench.yaml", documents(size))])
            with tempfile.TemporaryDirectory() as cache:
                cold_wall, _, cold_calls = run(env, inputs, Path(cache))
                warm_wall, warm_mapping, warm_calls = run(env, inputs, Path(cache))
            catalogue_warm = sum(n for op, n in warm_calls.items() if op.startswith("DescribeInstanceType"))
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(
                f"| {size} | {len(inputs.node_pools)} | {cold_wall:.1f} s | {warm_wall:.1f} s | {warm_mapping:.2f} s "
                f"| {sum(cold_calls.values())} | {catalogue_warm} | {peak:,.0f} MiB |",
                flush=True,
            )


if __name__ == "__main__":
    main()
