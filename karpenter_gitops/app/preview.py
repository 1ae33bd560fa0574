"""The ``preview`` use case: what a change does compared with its base, as one PR comment's worth of data.

The base is a directory of manifests (rendered by ``render`` or hand-written) or the same paths
at a Git ref. The head is validated with the hygiene policies and waivers, the transition rules
judge each object the change updates, and, when asked, both sides are reconciled against the
same AWS, the cluster's NodeClaims are read and Pulumi's own preview is folded in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from karpenter_gitops.adapters import git
from karpenter_gitops.app.cost_comparison import CostComparison
from karpenter_gitops.app.preview_result import Preview
from karpenter_gitops.app.sources import Sources
from karpenter_gitops.app.validate import waivers_for
from karpenter_gitops.app.workload_forecast import WorkloadForecast
from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import Inputs
from karpenter_gitops.judge import validate
from karpenter_gitops.karpenter.disruption import drift
from karpenter_gitops.karpenter.status.prediction import Plan
from karpenter_gitops.load import files, into_inputs, pulumi_events


def load_base(base: str, head_paths: Sequence[Path], release: versions.Release) -> Inputs:
    """The base inputs: ``base`` as a directory when one exists, else as a Git ref."""
    path = Path(base)
    if path.is_dir():
        return _from_directory(path, release)
    if files.STDIN in head_paths:
        raise InputError(
            f"--base {base!r}: standard input has no version at a Git ref",
            files.STDIN_NAME,
            hint="give --base a directory of the base manifests",
        )
    texts = git.files_at_ref(base, head_paths)
    return into_inputs.load_files([files.from_text(name, text) for name, text in texts], release)


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
    pulumi: pulumi_events.PulumiPreview | None = None,
    forecast: Callable[[Inputs, Plan], WorkloadForecast] | None = None,
) -> Preview:
    """Compare ``head`` with ``base_ref``; ``plan`` reconciles both sides, ``kubeconfig`` counts drifting nodes,
    ``forecast`` (with ``plan``) forecasts the same workloads on both sides and compares their cost."""
    base = load_base(base_ref, head_paths, head.release).with_gates(head.feature_gates)
    fleet, impact_note = None, None
    if kubeconfig:
        from karpenter_gitops.adapters import kube

        try:
            fleet = kube.read_fleet(kubeconfig)
        except (kube.ClusterUnavailable, kube.Forbidden) as error:  # the comment still helps without its node counts
            impact_note = f"cluster not read: {error}"
    base_plan, head_plan = (plan(base), plan(head.inputs)) if plan else (None, None)
    cost = None
    if forecast and base_plan and head_plan:
        cost = CostComparison(forecast(base, base_plan), forecast(head.inputs, head_plan))
    return Preview.build(
        base_ref,
        base,
        head.inputs,
        validate(head.inputs, head.release, policy=True, waivers=waivers_for(True, None), base=base),
        None if impact_note else drift.forecast(base, head.inputs, base_plan, head_plan, fleet, head.release),
        head_plan=head_plan,
        base_plan=base_plan,
        impact_note=impact_note,
        pulumi=pulumi,
        notes=head.inputs.notes,
        cost=cost,
    )
