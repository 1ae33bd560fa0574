"""The ``validate`` use case: judge manifests and stack files offline, as Karpenter's API server and ours would."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from karpenter_gitops.app import both_cores
from karpenter_gitops.app.sources import Sources
from karpenter_gitops.core import versions
from karpenter_gitops.core.inputs import DEFAULT_WAIVERS, Waiver
from karpenter_gitops.judge import validate
from karpenter_gitops.judge.report import Report
from karpenter_gitops.load import locate, waiver_files
from karpenter_gitops.load.context_files import node_class_names

if TYPE_CHECKING:
    from karpenter_gitops.rules.crd.engine import Crds


def waivers_for(policy: bool, waiver_file: str | None) -> tuple[Waiver, ...]:
    """The waivers of a --policy run: the named file, else the default file if there is one."""
    if waiver_file:
        return waiver_files.read_file(waiver_file)
    return waiver_files.read_file(DEFAULT_WAIVERS) if policy and DEFAULT_WAIVERS.is_file() else ()


def validate_sources(
    sources: Sources,
    *,
    policy: bool = False,
    waivers: Sequence[Waiver] = (),
    crds: Crds | None = None,
    context: Sequence[str] = (),
) -> Report:
    """The report on ``sources``, with the user's CRDs' verdicts when given, each finding on its line.

    ``context`` names the rest of the repository: the EC2NodeClasses defined there resolve the
    NodePools' references (see :mod:`karpenter_gitops.load.context_files`); nothing there is judged.
    """
    inputs = sources.inputs
    if context:
        inputs = dataclasses.replace(inputs, context_node_classes=node_class_names(context))
    check = crds.check_inputs(inputs, both_cores.ordered_map) if crds is not None else None
    observed = check.observations if check is not None else ()
    report = validate(inputs, sources.release, policy=policy, waivers=waivers, observed=observed)
    notes = tuple(check.notes) if check is not None else ()
    return dataclasses.replace(report, notes=report.notes + notes, findings=locate.with_lines(report.findings, sources.texts))


def crds_at(paths: Sequence[str]) -> Crds | None:
    """The CRDs under ``paths`` (``--crd``), or None when none are given."""
    if not paths:
        return None
    from karpenter_gitops.load.crds import load  # jsonschema and a CEL interpreter, only for runs given CRDs

    return load(paths)


@dataclass(frozen=True)
class Verdict:
    """What a validate run prints: the report, the release it was judged for and the note on that release."""

    report: Report
    release: versions.Release
    release_note: str | None = None


def validate_once(
    run_paths: Sequence[Path],
    judge: Callable[[Sequence[Path]], Verdict],
    *,
    options: dict[str, Any],
    extra: Sequence[str | Path] = (),
    cache: bool = True,
    note: Callable[[str], None],
) -> tuple[Verdict, bool]:
    """``judge(run_paths)``, or its stored verdict when nothing it depends on changed (see
    :mod:`karpenter_gitops.app.verdict_cache`); the verdict and whether it came from the cache."""
    from karpenter_gitops.app import verdict_cache

    run_key = verdict_cache.key(run_paths, options, extra) if cache else None
    stored = verdict_cache.load(run_key, note) if run_key else None
    if isinstance(stored, Verdict):
        return stored, True
    verdict = judge(run_paths)
    if run_key:
        verdict_cache.store(run_key, verdict, note)
    return verdict, False
