"""Waivers applied to findings: an active waiver marks what it covers; an expired one is itself a finding.

An expired waiver stops waiving and is observed under ``policy/waiver-expired``, so an exception
cannot outlive its reason silently.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from karpenter_gitops.core.findings import Finding, Observation, Source, Violation
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.rules.hygiene import WAIVER_EXPIRED

if TYPE_CHECKING:
    from karpenter_gitops.judge import Judge


@dataclass(frozen=True)
class Outcome:
    """Which finding each active waiver covers, and the findings of expired waivers."""

    active: tuple[Waiver, ...]
    waived: Mapping[Finding, Waiver]
    expired: tuple[Finding, ...]


def expiry(waiver: Waiver) -> Observation:
    """What an expired waiver is: a violation of ``policy/waiver-expired`` at its entry."""
    return Observation(
        WAIVER_EXPIRED,
        "Waiver",
        waiver.object,
        Violation(
            waiver.entry,
            f"the waiver of {waiver.rule} for {waiver.object!r} expired on {waiver.expires.isoformat()} "
            f"(reason given: {waiver.reason})",
            "fix the findings it waived and delete the waiver, or agree a new expiry date",
        ),
        Source(waiver.file) if waiver.file else None,
    )


def apply(judge: Judge, findings: Iterable[Finding], waivers: Iterable[Waiver], today: dt.date) -> Outcome:
    waivers = tuple(waivers)
    active = tuple(w for w in waivers if not w.expired(today))
    waived = {}
    for finding in findings:
        waiver = next((w for w in active if w.covers(finding)), None)
        if waiver is not None:
            waived[finding] = waiver
    expired = tuple(judge.findings(expiry(w) for w in waivers if w.expired(today)))
    return Outcome(active, waived, expired)
