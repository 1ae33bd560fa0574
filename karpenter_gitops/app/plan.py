"""The ``plan`` use case: resolve what Karpenter will resolve from AWS and predict what it will report,
and, given workloads, what it would launch for them and what that would cost."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from karpenter_gitops.karpenter.disruption import drift
from karpenter_gitops.karpenter.disruption.replacement import replacement
from karpenter_gitops.karpenter.scheduling import DaemonSet, Options, Pod, World, build_world, simulate
from karpenter_gitops.karpenter.scheduling.existing import Cluster
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load import files
from karpenter_gitops.load.existing_cluster import not_yet_running
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
) -> Callable[..., WorkloadForecast]:
    """Forecasts ``workloads`` over the NodePools of a plan: the same catalogue and AMI mapping the plan
    used (answered from the session's memory, no second look-up), prices asked once per session. Given
    the cluster (``existing``), the forecast starts from its nodes: its pending pods join the workloads'
    pods the cluster does not run yet, and its DaemonSets those the workloads name."""

    def forecast(inputs: Inputs, plan: Plan, existing: Cluster | None = None) -> WorkloadForecast:
        pods, daemon_sets = workloads.pods, workloads.daemon_sets
        if existing is not None:
            pods = (*existing.pending, *not_yet_running(workloads.pods, existing))
            named = {(d.template.namespace, d.name) for d in daemon_sets}
            daemon_sets = (*daemon_sets, *(d for d in existing.daemon_sets if (d.template.namespace, d.name) not in named))
        built = _world(target, release, inputs, plan, cache_dir, pods, daemon_sets, existing)
        if built is None:
            return WorkloadForecast(
                workloads, sources=tuple(sources), unavailable="the instance-type catalogue is not loaded (see the plan)"
            )
        world, prices, amis = built
        nodes = existing.nodes if existing is not None else None
        return WorkloadForecast(
            workloads, simulate(world, Options(release=release), cluster_nodes=nodes), prices, amis, tuple(sources)
        )

    return forecast


def drift_replacer(
    target: Target, release: versions.Release, *, cache_dir: Path | None = None
) -> Callable[[Inputs, Plan, Cluster, drift.Forecast], drift.Forecast]:
    """Adds to each NodePool of a drift forecast where its drifted nodes' pods go when they are replaced,
    over the head's NodePools and instance types (those of ``plan``)."""

    def replaced(inputs: Inputs, plan: Plan, existing: Cluster, impact: drift.Forecast) -> drift.Forecast:
        built = _world(target, release, inputs, plan, cache_dir, (), existing.daemon_sets, existing)
        if built is None:
            return impact
        world, options = built[0], Options(release=release)
        pools = tuple(
            dataclasses.replace(pool, replacement=replacement(world, existing, frozenset(pool.drifted_nodes), options))
            if pool.drifted_nodes and not pool.removed
            else pool
            for pool in impact.pools
        )
        return dataclasses.replace(impact, pools=pools)

    return replaced


def _world(
    target: Target,
    release: versions.Release,
    inputs: Inputs,
    plan: Plan,
    cache_dir: Path | None,
    pods: Sequence[Pod],
    daemon_sets: Sequence[DaemonSet],
    existing: Cluster | None,
) -> tuple[World, Prices, dict[str, dict[str, str]]] | None:
    """The world the plan's NodePools schedule ``pods`` in, its prices and each pool's AMI by instance type;
    None when the catalogue did not load."""
    aws = target.session
    run = Run(inputs, release, None, aws, cache_dir, ())
    catalogue = load_catalogue(run).labelled
    if catalogue is None:
        return None
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
        pods,
        daemon_sets,
        traits={c.name: family_of(c).node_traits for c in classes},
        subnet_zones={name: {s.zone for s in p.subnets} for name, p in plan.node_classes.items()},
        served={c.name: served.get(c.name, set()) for c in classes},
        node_overlays=len(inputs.node_overlays),
        cluster_nodes=None if existing is None else len(existing.nodes),
        node_class_cel=inputs.cluster.gate("NodeClassCEL"),
    )
    if existing is not None and existing.notes:
        world = dataclasses.replace(world, notes=(*world.notes, *existing.notes))
    return world, prices, amis


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
        workloads = dataclasses.replace(
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
