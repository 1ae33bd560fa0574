"""The ``validate`` use case: judge manifests and stack files offline, as Karpenter's API server and ours would."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from karpenter_gitops.app.sources import Sources
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.judge import validate
from karpenter_gitops.judge.report import Report
from karpenter_gitops.load import locate, waivers
from karpenter_gitops.load.crds import load as load_crds
from karpenter_gitops.rules import crd

DEFAULT_WAIVERS = Path("policies/waivers.yaml")


def waivers_for(policy: bool, waiver_file: str | None) -> tuple[Waiver, ...]:
    """The waivers of a --policy run: the named file, else the default file if there is one."""
    if waiver_file:
        return waivers.read_file(waiver_file)
    return waivers.read_file(DEFAULT_WAIVERS) if policy and DEFAULT_WAIVERS.is_file() else ()


def validate_sources(
    sources: Sources,
    *,
    policy: bool = False,
    waivers: Sequence[Waiver] = (),
    crds: crd.Crds | None = None,
) -> Report:
    """The report on ``sources``, with the user's CRDs' verdicts when given, each finding on its line."""
    observed, notes = crd.check_inputs(crds, sources.inputs) if crds is not None else ([], [])
    report = validate(sources.inputs, sources.version, policy=policy, waivers=waivers, observed=observed)
    return dataclasses.replace(
        report, notes=report.notes + tuple(notes), findings=locate.with_lines(report.findings, sources.texts)
    )


def crds_at(paths: Sequence[str]) -> crd.Crds | None:
    """The CRDs under ``paths`` (``--crd``), or None when none are given."""
    return load_crds(paths) if paths else None
