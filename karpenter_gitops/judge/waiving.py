"""Waivers applied to findings: an active waiver marks what it covers; an expired one is itself a finding.

An expired waiver stops waiving and is observed under ``policy/waiver-expired``, so an exception
cannot outlive its reason silently. A waiver an object carries in its annotation (:func:`carried`) is
set on the findings made on that object, where they are made, and applies in every run, ``--policy``
or not: it is a decision written on the object itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from karpenter_gitops.core.findings import Finding, InlineWaiver, Observation, Source, Violation, Waiver
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
    """What ``waivers`` (``today`` deciding which have expired) and the findings' own inline waivers cover; the
    inline waivers that cover a finding are listed as active with the others."""
    waivers = tuple(waivers)
    active = tuple(w for w in waivers if not w.expired(today))
    waived: dict[Finding, Waiver] = {}
    for finding in findings:
        waiver = finding.inline_waiver or next((w for w in active if w.covers(finding)), None)
        if waiver is not None:
            waived[finding] = waiver
    inline = tuple(dict.fromkeys(w for w in waived.values() if isinstance(w, InlineWaiver)))
    return Outcome(active + inline, waived, tuple(expiry(w) for w in waivers if w.expired(today)))


def carried(findings: list[Finding], objects: Iterable[Any]) -> list[Finding]:
    """``findings`` each with the inline waiver its own object (of ``objects``: same place, kind and name)
    carries for its rule, if any."""
    by_object = {(obj.source, obj.kind, obj.name): obj.waivers for obj in objects if obj.waivers}
    if not by_object:
        return findings
    return [_carrying(finding, by_object.get((finding.source, finding.kind, finding.name), ())) for finding in findings]


def _carrying(finding: Finding, waivers: tuple[InlineWaiver, ...]) -> Finding:
    waiver = next((w for w in waivers if w.rule == finding.rule), None)
    return finding if waiver is None else dataclasses.replace(finding, inline_waiver=waiver)
