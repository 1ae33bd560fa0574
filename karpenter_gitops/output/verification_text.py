"""The forms of a :class:`~karpenter_gitops.karpenter.status.verification.Verification`: terminal text and a PR comment
(the JSON form is the verification's own ``to_json``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from karpenter_gitops.karpenter.scheduling.launched import PoolLaunch, mix
from karpenter_gitops.karpenter.status.verification import CATEGORIES, Difference, Verification
from karpenter_gitops.output.escape import visible

_TITLES = {
    "drift": "Live specs that differ from Git",
    "prediction": "Conditions that differ from the prediction",
    "node": "Nodes the prediction does not map",
}
_SHOWN = 50  # differences listed per category in a comment; the JSON form has them all


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
    table = tabulate(_launched_rows(verification.launched), _LAUNCHED_HEADER, tablefmt="simple", disable_numparse=True)
    return [f"{_LAUNCHED}:", *(f"  {row}" for row in table.splitlines()), *(f"  {p.sentence()}" for p in verification.launched)]


def summary(verification: Verification) -> str:
    """One line: what was compared and what differs."""
    checked = ", ".join(f"{count} {kind}" for kind, count in sorted(verification.checked.items())) or "nothing"
    counts = ", ".join(f"{len(verification.of(c))} {c}" for c in CATEGORIES)
    verdict = ("the cluster differs" if verification.differences else
               "not reconciled yet" if verification.unreconciled else "the cluster is as the pull request said")
    return f"verify {verification.cluster}: {verdict} ({counts}; compared {checked})"


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
    """Markdown for a PR comment posted after ``pulumi up`` or a sync."""
    icon = ":x:" if verification.differences else ":hourglass:" if verification.unreconciled else ":white_check_mark:"
    lines = [f"### Karpenter verify: {icon} {summary(verification).split(': ', 1)[1]}", ""]
    for category in CATEGORIES:
        found = verification.of(category)
        if not found:
            continue
        lines += [f"<details open><summary>{_TITLES[category]} ({len(found)})</summary>", "",
                  f"| object | field | {'Git' if category == 'drift' else 'predicted'} | cluster | |", "|---|---|---|---|---|"]
        for d in found[:_SHOWN]:
            cells = (d.object, d.path, _value(d.expected), _value(d.actual), d.note)
            shown = (visible(c).replace("|", "\\|") for c in cells)
            lines.append("| " + " | ".join(f"`{c}`" if i < 4 and c else c for i, c in enumerate(shown)) + " |")
        if len(found) > _SHOWN:
            lines.append(f"\n… and {len(found) - _SHOWN} more (the JSON output has them all)")
        lines += ["", "</details>", ""]
    if verification.unreconciled:
        lines.append("Not reconciled by Karpenter before the deadline: " + ", ".join(f"`{u}`" for u in verification.unreconciled))
    if verification.launched:
        lines += [f"<details><summary>{_LAUNCHED}</summary>", "",
                  tabulate([[visible(c).replace("|", "\\|") for c in row] for row in _launched_rows(verification.launched)],
                           _LAUNCHED_HEADER, tablefmt="github", disable_numparse=True), ""]
        lines += [f"- {visible(p.sentence())}" for p in verification.launched]
        lines += ["", "</details>", ""]
    lines += [f"> {visible(note)}" for note in verification.notes]
    return "\n".join(lines).rstrip() + "\n"
