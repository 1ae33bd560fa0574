"""Waivers applied to findings: an active waiver marks what it covers; an expired one is itself a finding.

An expired waiver stops waiving and is observed under ``policy/waiver-expired``, so an exception
cannot outlive its reason silently.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from karpenter_gitops.core.findings import Finding, Observation, Source, Violation
from karpenter_gitops.core.inputs import Waiver
from karpenter_gitops.rules.policy import WAIVER_EXPIRED


@dataclass(frozen=True)
class Outcome:
    """Which finding each active waiver covers, and what the expired ones are (for the judge to judge)."""

    active: tuple[Waiver, ...]
    waived: Mapping[Finding, Waiver]
    expired: tuple[Observation, ...]


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


def apply(findings: Iterable[Finding], waivers: Iterable[Waiver], today: dt.date) -> Outcome:
    waivers = tuple(waivers)
    active = tuple(w for w in waivers if not w.expired(today))
    waived = {}
    for finding in findings:
        waiver = next((w for w in active if w.covers(finding)), None)
        if waiver is not None:
            waived[finding] = waiver
    return Outcome(active, waived, tuple(expiry(w) for w in waivers if w.expired(today)))
