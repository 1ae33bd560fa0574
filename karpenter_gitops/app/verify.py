"""The ``verify`` use case: after a merge, did the cluster do what the pull request said?

Reads the live cluster (read-only), renders what Git says, predicts what Karpenter reports with
``plan``, and compares the three (see :mod:`karpenter_gitops.karpenter.status.verification`). An EC2NodeClass
Karpenter has not reported on yet is waited for until the deadline, then named as unreconciled.
Given workloads, the NodeClaims Karpenter launched are also set beside the forecast for them, per
NodePool, as information (:mod:`karpenter_gitops.karpenter.scheduling.launched`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from karpenter_gitops.adapters import atomic, kube
from karpenter_gitops.app.sources import Sources
from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.core.cluster import ClusterState, FleetNode
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.core.model import EC2NODECLASS, NAMESPACED, NODEOVERLAY
from karpenter_gitops.karpenter.scheduling.launched import PoolLaunch, launched
from karpenter_gitops.karpenter.status import verification as compare
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load import files, pulumi_events
from karpenter_gitops.output.manifests import manifest, to_yaml
from karpenter_gitops.rules.crd.openapi import as_stored

POLL_SECONDS = 2.0


def objects_in_pulumi_state(path: Path) -> frozenset[tuple[str, str]]:
    """(kind, name) of the Karpenter objects in a ``pulumi stack export`` file: those the stack's program declares."""
    return pulumi_events.parse_stack_export(files.read_text(path), str(path))


def verify_sources(
    sources: Sources,
    kubeconfig: Path | None,
    context: str | None = None,
    *,
    plan: Callable[[Inputs], Plan] | None = None,
    wait_seconds: float = 60.0,
    progress: Callable[[str], None] | None = None,
    forecast: Callable[[Inputs, Plan], WorkloadForecast] | None = None,
    write_cluster_state: Path | None = None,
    in_pulumi_state: frozenset[tuple[str, str]] = frozenset(),
) -> compare.Verification:
    """Compare the cluster with ``sources`` (drift) and, with ``plan``, with its prediction (conditions, nodes);
    with ``forecast`` (the workloads'), list the NodeClaims launched beside the forecast per NodePool. With
    ``write_cluster_state``, the NodeClaims, Nodes and Pods read are saved there as a snapshot ``preview
    --cluster-state`` reads, for a later job that has no cluster credentials. ``in_pulumi_state``: (kind, name)
    of the objects the Pulumi stack's state holds; those no file holds are declared in its program's code,
    so they are said to be, not listed as unknown to Git."""
    say = progress or (lambda _message: None)
    inputs = sources.inputs
    planned = None
    notes: list[str] = []
    if plan is not None:
        say("predicting Karpenter's status")
        planned = plan(inputs)
        if planned.transient:
            notes.append(f"no prediction: AWS trouble ({planned.transient[0]}); conditions and nodes not compared")
            planned = None
    else:
        notes.append("no prediction asked for: conditions and nodes not compared")
    classes = [nc.name for nc in inputs.node_classes]
    deadline = time.monotonic() + wait_seconds
    while True:
        say("reading the cluster")
        live = kube.read_cluster(kubeconfig, context)
        waiting = [
            name for name in classes if (stored := live.objects.get((EC2NODECLASS, name))) and compare.unreconciled(stored)
        ]
        if not waiting or time.monotonic() >= deadline:
            break
        say(f"waiting for Karpenter to reconcile {', '.join(waiting)}")
        time.sleep(POLL_SECONDS)
    notes.extend(live.state.notes)  # pods the identity may not list
    if write_cluster_state is not None:
        _save(live.state, write_cluster_state)

    differences: list[compare.Difference] = []
    checked: dict[str, int] = {}
    for obj in inputs.objects:
        if obj.kind in NAMESPACED:
            notes.append(f"{obj.kind}/{obj.name} not compared: verify reads cluster-scoped kinds only")
            continue
        schema = live.schemas.get(obj.kind)
        rendered = as_stored(schema, manifest(obj)) if schema else manifest(obj)
        stored = live.objects.get((obj.kind, obj.name))
        differences += compare.drift(obj.kind, obj.name, rendered, stored)
        checked[obj.kind] = checked.get(obj.kind, 0) + 1
    missing_schemas = sorted({obj.kind for obj in inputs.objects if obj.kind not in NAMESPACED} - set(live.schemas))
    if missing_schemas:
        notes.append(f"CRDs of {', '.join(missing_schemas)} not readable: fields the API server defaulted may show as drift")
    if planned is not None:
        for name, predicted in sorted(planned.node_classes.items()):
            stored = live.objects.get((EC2NODECLASS, name))
            if stored is not None and name not in waiting:
                differences += compare.conditions(f"{EC2NODECLASS}/{name}", predicted.conditions, stored)
        overlays = planned.node_overlays
        for name in sorted(overlays.conditions) if overlays and overlays.not_applied is None else ():
            stored = live.objects.get((NODEOVERLAY, name))
            if stored is not None and compare.has_conditions(stored):  # none yet: Karpenter has not reconciled it
                differences += compare.conditions(f"{NODEOVERLAY}/{name}", overlays.predicted(name), stored)
        differences += compare.nodes(planned.node_pools, live.state.fleet)
        checked["NodeClaim"] = len(live.state.fleet)
    launches = _launches(inputs, planned, forecast, live.state.fleet, notes, say) if forecast is not None else None
    ours = {(obj.kind, obj.name) for obj in inputs.objects}
    in_code = sorted(key for key in live.objects if key in in_pulumi_state and key not in ours)
    if in_code:
        notes.append(
            "declared in the Pulumi program's code (the stack's state holds them), not compared: "
            + ", ".join(f"{kind}/{name}" for kind, name in in_code)
        )
    ours |= set(in_code)
    return compare.Verification(
        cluster=live.host,
        differences=tuple(differences),
        unreconciled=tuple(f"EC2NodeClass/{name}" for name in waiting),
        unmanaged=tuple(f"{kind}/{name}" for kind, name in sorted(live.objects) if (kind, name) not in ours),
        checked=checked,
        notes=tuple(notes),
        launched=launches,
    )


def _save(state: ClusterState, path: Path) -> None:
    try:
        atomic.write_file(path, to_yaml(state.to_list()))
    except OSError as error:
        raise InputError(f"cannot write the cluster state: {error.strerror or error}", str(path)) from None


def _launches(
    inputs: Inputs,
    planned: Plan | None,
    forecast: Callable[[Inputs, Plan], WorkloadForecast],
    fleet: Sequence[FleetNode],
    notes: list[str],
    say: Callable[[str], None],
) -> tuple[PoolLaunch, ...] | None:
    """The launched NodeClaims beside the forecast, or None with a note saying why there is no forecast."""
    if planned is None:
        notes.append("no forecast of the workloads: it needs the prediction")
        return None
    say("forecasting the workloads")
    result = forecast(inputs, planned)
    if result.forecast is None:
        notes.append(f"no forecast of the workloads: {result.unavailable or 'nothing to simulate'}")
        return None
    return launched(result.forecast, fleet)
