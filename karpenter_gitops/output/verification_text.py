"""The forms of a :class:`~karpenter_gitops.karpenter.status.verification.Verification`: terminal text and a PR comment
(the JSON form is the verification's own ``to_json``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from karpenter_gitops.core.text import visible
from karpenter_gitops.karpenter.scheduling.launched import PoolLaunch, mix
from karpenter_gitops.karpenter.status.verification import CATEGORIES, Difference, Verification
from karpenter_gitops.output import DEFAULT_BUDGET
from karpenter_gitops.output.markdown import EMPTY, OutsideText, table

_TITLES = {
    "drift": "Live specs that differ from Git",
    "prediction": "Conditions that differ from the prediction",
    "node": "Nodes the prediction does not map",
}
_SHOWN = 50  # differences listed per category in a comment; the JSON form has them all
_SHOWN_TIGHT = 10  # when the values of _SHOWN would not fit GitHub's limit
_CUT_ELSEWHERE = "\nThe values cut above are whole in `--format json`.\n"


def _value(value: Any) -> str:
    if value is None:
        return "(absent)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _line(difference: Difference) -> str:
    where = f"{difference.object} {difference.path}".strip()
    source = "Git" if difference.category == "drift" else "predicted"
    said = f"{source} {_value(difference.expected)}, cluster {_value(difference.actual)}"
    return f"{where}: {said}" + (f" — {difference.note}" if difference.note else "")


_LAUNCHED = "NodeClaims launched beside the forecast for the workloads (information, not a finding)"
_LAUNCHED_HEADER = ("NodePool", "forecast", "launched", "capacity types", "zones")


def _launched_rows(pools: Sequence[PoolLaunch]) -> list[list[str]]:
    return [[p.node_pool, mix(p.forecast), mix(p.launched), mix(p.capacity_types), mix(p.zones)] for p in pools]


def _launched_text(verification: Verification) -> list[str]:
    if verification.launched is None:
        return []
    if not verification.launched:
        return [f"{_LAUNCHED}: the forecast has no NodePool"]
    rows = tabulate(_launched_rows(verification.launched), _LAUNCHED_HEADER, tablefmt="simple", disable_numparse=True)
    return [f"{_LAUNCHED}:", *(f"  {row}" for row in rows.splitlines()), *(f"  {p.sentence()}" for p in verification.launched)]


def _verdict(verification: Verification) -> str:
    """What verify found and what it compared, without the cluster's name."""
    checked = ", ".join(f"{count} {kind}" for kind, count in sorted(verification.checked.items())) or "nothing"
    counts = ", ".join(f"{len(verification.of(c))} {c}" for c in CATEGORIES)
    verdict = (
        "the cluster differs"
        if verification.differences
        else "not reconciled yet"
        if verification.unreconciled
        else "the cluster is as the pull request said"
    )
    return f"{verdict} ({counts}; compared {checked})"


def summary(verification: Verification) -> str:
    """One line: what was compared and what differs."""
    return f"verify {verification.cluster}: {_verdict(verification)}"


def text(verification: Verification) -> str:
    lines = []
    for category in CATEGORIES:
        found = verification.of(category)
        if found:
            lines.append(f"{_TITLES[category]}:")
            lines += [f"  {_line(d)}" for d in found]
    if verification.unreconciled:
        lines.append("Not reconciled by Karpenter before the deadline: " + ", ".join(verification.unreconciled))
    if verification.unmanaged:
        lines.append("In the cluster, not in Git (not compared): " + ", ".join(verification.unmanaged))
    lines += _launched_text(verification)
    lines += [f"note: {note}" for note in verification.notes]
    lines.append(summary(verification))
    return "\n".join(visible(line) for line in lines) + "\n"  # what the cluster and AWS said, shown as they said it


def comment(verification: Verification) -> str:
    """Markdown for a PR comment posted after ``pulumi up`` or a sync, within GitHub's size limit whatever
    the cluster holds: when it would not fit, fewer rows and less room per value, and the full text of
    what was cut only if it fits too (``--format json`` has everything)."""
    quoted = OutsideText()
    body = _comment(verification, quoted, _SHOWN)
    if len(body) > DEFAULT_BUDGET - len(_CUT_ELSEWHERE):
        quoted = OutsideText(tight=True)
        body = _comment(verification, quoted, _SHOWN_TIGHT)
    details = quoted.cut_details("this comment")
    return body + (details if len(body) + len(details) <= DEFAULT_BUDGET else _CUT_ELSEWHERE if details else "")


def _comment(verification: Verification, quoted: OutsideText, shown: int) -> str:
    """What the cluster, AWS and Git said is written by :class:`~karpenter_gitops.output.markdown.OutsideText`
    (inert text as written, else code), so nothing a manifest or the cluster holds becomes markup here."""
    icon = ":x:" if verification.differences else ":hourglass:" if verification.unreconciled else ":white_check_mark:"
    lines = [f"### Karpenter verify: {icon} {quoted.prose(_verdict(verification))}", ""]
    for category in CATEGORIES:
        found = verification.of(category)
        if not found:
            continue
        lines += [
            f"<details open><summary>{_TITLES[category]} ({len(found)})</summary>",
            "",
            table(
                ["object", "field", "Git" if category == "drift" else "predicted", "cluster", ""],
                [
                    [
                        *(
                            quoted.code(c, cell=True) if c else ""
                            for c in (d.object, d.path, _value(d.expected), _value(d.actual))
                        ),
                        quoted.prose(d.note, cell=True),
                    ]
                    for d in found[:shown]
                ],
            ),
        ]
        if len(found) > shown:
            lines.append(f"\n… and {len(found) - shown} more (the JSON output has them all)")
        lines += ["", "</details>", ""]
    unreconciled = verification.unreconciled
    if unreconciled:
        lines.append(
            "Not reconciled by Karpenter before the deadline: "
            + ", ".join(quoted.code(u) for u in unreconciled[:shown])
            + (f" and {len(unreconciled) - shown} more" if len(unreconciled) > shown else "")
        )
    if verification.launched:
        launched = verification.launched[:shown]
        lines += [
            f"<details><summary>{_LAUNCHED}</summary>",
            "",
            table(
                _LAUNCHED_HEADER,
                [
                    [quoted.code(pool, cell=True), *(quoted.prose(mixed, cell=True) for mixed in mixes)]
                    for pool, *mixes in _launched_rows(launched)
                ],
            ),
            "",
        ]
        lines += [f"- {quoted.prose(p.sentence())}" for p in launched]
        lines += ["", "</details>", ""]
    lines += [f"> {quoted.prose(note) or EMPTY}" for note in verification.notes[:shown]]
    return "\n".join(lines).rstrip() + "\n"
