"""The ``preview`` use case: what a change does compared with its base, as one PR comment's worth of data.

The base is a directory of manifests (rendered by ``render`` or hand-written) or the same paths
at a Git ref. The head is validated with the hygiene policies and waivers, the transition rules
judge each object the change updates, and, when asked, both sides are reconciled against the
same AWS, the cluster's NodeClaims are read and Pulumi's own preview is folded in.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

from karpenter_gitops.adapters import git, kustomize
from karpenter_gitops.app.cost_comparison import CostComparison
from karpenter_gitops.app.preview_result import Preview
from karpenter_gitops.app.sources import Sources
from karpenter_gitops.app.validate import waivers_for
from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.core import versions
from karpenter_gitops.core.cluster import ClusterState
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.disruption import drift
from karpenter_gitops.karpenter.scheduling.existing import Cluster
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load import existing_cluster, files, into_inputs, kustomizations, pulumi_events


def load_base(base: str, head_paths: Sequence[Path], release: versions.Release, kustomized: Path | None = None) -> Inputs:
    """The base inputs: ``base`` as a directory when one exists, else as a Git ref; there, with ``kustomized``,
    what kustomize renders from that folder as the ref has it."""
    path = Path(base)
    if path.is_dir():
        return _from_directory(path, release)
    if kustomized is not None:
        return _rendered_at_ref(base, kustomized, release)
    if files.STDIN in head_paths:
        raise InputError(
            f"--base {base!r}: standard input has no version at a Git ref",
            files.STDIN_NAME,
            hint="give --base a directory of the base manifests",
        )
    texts = git.files_at_ref(base, head_paths)
    return into_inputs.load_files([files.from_text(name, text) for name, text in texts], release)


def rendered_head(folder: Path) -> tuple[str, bytes]:
    """kustomize's rendering of ``folder`` in the working tree, and the name its findings go by."""
    return kustomizations.rendered_name(folder), kustomize.render(folder)


def _rendered_at_ref(ref: str, folder: Path, release: versions.Release) -> Inputs:
    """What kustomize renders from ``folder`` as ``ref`` has it (rendered from a copy of the ref's tree); nothing
    when the ref has no such folder (an overlay the change adds: everything in it is new)."""
    name = f"{ref}:{folder}"
    with git.tree_at_ref(ref, folder) as copy:
        if not copy.is_dir():
            return Inputs()
        text = files.read_stream(io.BytesIO(kustomize.render(copy, name)), name)
    return into_inputs.load_files([files.from_text(kustomizations.rendered_name(name), text)], release)


def _from_directory(path: Path, release: versions.Release) -> Inputs:
    found = [
        p for p in sorted(path.rglob("*")) if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    ]
    foreign = [str(p.relative_to(path)) for p in found if p.suffix not in files.YAML_SUFFIXES]
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise InputError(
            f"base directory holds files that are not manifests ({shown})", str(path), hint="pass a rendered directory"
        )
    if not found:
        return Inputs()  # an empty base: everything in the head is new
    return into_inputs.load([path], release)


def pulumi_preview(preview_json: Path | None, event_log: Path | None) -> pulumi_events.PulumiPreview | None:
    """Pulumi's own view of the change, from ``pulumi preview --json`` and/or an ``--event-log`` file."""
    sources = []
    if preview_json:
        sources.append(pulumi_events.parse_preview_json(files.read_text(preview_json), str(preview_json)))
    if event_log:
        sources.append(pulumi_events.parse_event_log(files.read_text(event_log), str(event_log)))
    return pulumi_events.merge(sources)


def preview_sources(
    head: Sources,
    base_ref: str,
    head_paths: Sequence[Path],
    *,
    plan: Callable[[Inputs], Plan] | None = None,
    kubeconfig: Path | None = None,
    cluster_state: ClusterState | None = None,
    pulumi: pulumi_events.PulumiPreview | None = None,
    forecast: Callable[..., WorkloadForecast] | None = None,
    replacer: Callable[[Inputs, Plan, Cluster, drift.Forecast], drift.Forecast] | None = None,
    kustomized: Path | None = None,
) -> Preview:
    """Compare ``head`` with ``base_ref``; ``plan`` reconciles both sides, the cluster read with ``kubeconfig`` (or
    its snapshot, ``cluster_state``) counts drifting nodes, ``forecast`` (with ``plan``) forecasts the same
    workloads on both sides and compares their cost; ``kustomized``: the head is kustomize's rendering of that
    folder, and so is the base at a Git ref. A cluster read with its pods is where the forecast starts, and
    ``replacer`` (with ``plan``) says where the drifted nodes' pods go."""
    base = load_base(base_ref, head_paths, head.release, kustomized).with_gates(head.feature_gates)
    state, impact_note = cluster_state, None
    if kubeconfig:
        from karpenter_gitops.adapters import kube

        try:
            state = kube.read_state(kubeconfig)
        except (kube.ClusterUnavailable, kube.Forbidden) as error:  # the comment still helps without its node counts
            impact_note = f"cluster not read: {error}"
    existing = existing_cluster.cluster(state, head.inputs.cluster.kubernetes) if state is not None and state.pods else None
    notes = [*head.inputs.notes, *(state.notes if state else ())]
    if state is not None and existing is None and plan is not None:
        notes.append(
            "the cluster state holds no pods: the forecast starts from an empty cluster (read them with kubectl get pods -A)"
        )
    base_plan, head_plan = (plan(base), plan(head.inputs)) if plan else (None, None)
    cost = cost_note = None
    if forecast and base_plan and head_plan:
        cost = CostComparison(forecast(base, base_plan, existing), forecast(head.inputs, head_plan, existing))
    elif head.workload_paths and plan is None:
        cost_note = "an offline preview reads no prices; add --embedded-aws or --reconcile to forecast the stack's workloads"
    impact = None
    if not impact_note:
        impact = drift.forecast(base, head.inputs, base_plan, head_plan, state.fleet if state else None, head.release)
        if replacer is not None and existing is not None and head_plan is not None:
            impact = replacer(head.inputs, head_plan, existing, impact)
        elif existing is not None and head_plan is None and any(pool.drifted_nodes for pool in impact.pools):
            notes.append(
                "where the drifted nodes' pods go needs the head's instance types, which an offline preview does not "
                "read; add --embedded-aws or --reconcile"
            )
    return Preview.build(
        base_ref,
        base,
        head.inputs,
        validate(head.inputs, head.release, policy=True, waivers=waivers_for(True, None), base=base),
        impact,
        head_plan=head_plan,
        base_plan=base_plan,
        impact_note=impact_note,
        pulumi=pulumi,
        notes=tuple(notes),
        cost=cost,
        cost_note=cost_note,
    )
