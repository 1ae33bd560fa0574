"""The ``plan`` use case: resolve what Karpenter will resolve from AWS and predict what it will report,
and, given workloads, what it would launch for them and what that would cost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from karpenter_gitops.adapters import atomic
from karpenter_gitops.adapters.aws.client import AwsSession
from karpenter_gitops.adapters.aws.pricing import Prices, load_prices
from karpenter_gitops.adapters.aws.target import Target
from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.karpenter.amifamily import family_of
from karpenter_gitops.karpenter.scheduling import Options, build_world, simulate
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load import files
from karpenter_gitops.load.workloads import WORKLOAD_KINDS, Workloads, workloads_from_documents
from karpenter_gitops.output.forecast_svg import svg
from karpenter_gitops.reconcile import Progress, reconcile
from karpenter_gitops.reconcile.catalogue import load as load_catalogue
from karpenter_gitops.reconcile.context import Run


def planner(
    target: Target,
    release: versions.Release,
    *,
    kubernetes: versions.Kubernetes | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Callable[[Inputs], Plan]:
    """Plans inputs against one AWS target. The cluster's Kubernetes version is the one given, else
    the inputs' stack's, else the embedded world's."""

    def plan(inputs: Inputs) -> Plan:
        kube = kubernetes or inputs.cluster.kubernetes or target.world_kubernetes
        return reconcile(inputs, release=release, kubernetes=kube, aws=target.session, cache_dir=cache_dir, progress=progress)

    return plan


def forecaster(
    target: Target, release: versions.Release, workloads: Workloads, sources: Sequence[str], *, cache_dir: Path | None = None
) -> Callable[[Inputs, Plan], WorkloadForecast]:
    """Forecasts ``workloads`` over the NodePools of a plan: the same catalogue and AMI mapping the plan
    used (answered from the session's memory, no second look-up), prices asked once per session."""

    def forecast(inputs: Inputs, plan: Plan) -> WorkloadForecast:
        aws = target.session
        run = Run(inputs, release, None, aws, cache_dir, ())
        catalogue = load_catalogue(run).labelled
        if catalogue is None:
            return WorkloadForecast(
                workloads, sources=tuple(sources), unavailable="the instance-type catalogue is not loaded (see the plan)"
            )
        prices = _prices(aws)
        served: dict[str, set[str]] = {}
        amis: dict[str, dict[str, str]] = {}
        for name, pool in plan.node_pools.items():
            if pool.mapping is not None:
                served.setdefault(pool.node_class, set()).update(pool.mapping.instance_types)
                amis[name] = dict(pool.mapping.instance_types)
        classes = inputs.node_classes
        world = build_world(
            inputs.node_pools,
            classes,
            catalogue,
            prices.price_table(),
            workloads.pods,
            workloads.daemon_sets,
            traits={c.name: family_of(c).node_traits for c in classes},
            subnet_zones={name: {s.zone for s in p.subnets} for name, p in plan.node_classes.items()},
            served={c.name: served.get(c.name, set()) for c in classes},
            node_overlays=len(inputs.node_overlays),
            node_class_cel=inputs.cluster.gate("NodeClassCEL"),
        )
        return WorkloadForecast(workloads, simulate(world, Options(release=release)), prices, amis, tuple(sources))

    return forecast


def _prices(aws: AwsSession) -> Prices:
    """Prices once per session: a fleet's stacks of one region, and a preview's two sides, share them."""
    return aws.remember("prices", lambda: load_prices(aws))


def read_workloads(
    paths: Sequence[str], kubernetes: versions.Kubernetes | None, stdin: Callable[[], str] | None = None
) -> Workloads:
    """The workloads under ``paths`` (files, folders, ``-`` for standard input), read as a cluster of
    ``kubernetes`` stores their pods (sidecars from 1.29, pod-level resources from 1.34; newest when unknown)."""
    named = [p for p in paths if p != "-"]
    documents = files.read(named) if named else []
    if "-" in paths:
        if stdin is None:
            raise InputError("--workloads -: standard input is not available here")
        documents.append(("<stdin>", files.parse_yaml(stdin(), "<stdin>")))
    workloads = workloads_from_documents(documents, kubernetes)
    others = _other_kinds(doc for _, docs in documents for doc in docs)
    if others:
        counted = ", ".join(f"{kind} × {n}" for kind, n in sorted(others.items()))
        workloads = replace(
            workloads, notes=(*workloads.notes, f"passed over {sum(others.values())} object(s) that create no pods: {counted}")
        )
    return workloads


def _other_kinds(documents: Iterable[Any]) -> Counter[str]:
    """Objects beside the workloads (ConfigMaps, Services, Karpenter's own, ...), by kind; ``List`` items counted one by one."""
    kinds: Counter[str] = Counter()
    for doc in documents:
        if not isinstance(doc, Mapping):
            continue
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            kinds.update(_other_kinds(doc["items"]))
        elif kind not in WORKLOAD_KINDS:
            kinds[kind if isinstance(kind, str) and kind else "no kind"] += 1
    return kinds


def write_picture(forecast: WorkloadForecast, path: Path) -> None:
    """The forecast's SVG at ``path``, written whole or not at all."""
    try:
        atomic.write_file(path, svg(forecast))
    except OSError as error:
        raise InputError(f"cannot write the picture: {error.strerror or error}", str(path)) from None
