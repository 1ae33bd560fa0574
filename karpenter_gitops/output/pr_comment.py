"""The PR preview as one GitHub comment: markdown within a character budget.

The comment puts the verdict, the counts, predicted readiness and blocking errors first, outside
any fold, then the cost forecast, node impact, AMI changes, Pulumi steps, policy results and one
folded ``diff`` per object. It fits a character budget (GitHub refuses comments over 65,536): the
summary and the errors are always kept (their lists are capped so they stay small); the other
sections follow in priority order, a long diff is cut with a marker, and what does not fit is
counted at the end with the path of the full report. Output is deterministic: sorted, no
timestamps; everything from outside is escaped as text (:func:`_text`).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tabulate import DataRow, TableFormat, tabulate

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.karpenter.status.prediction import PERSISTENT, TRANSIENT
from karpenter_gitops.output import DEFAULT_BUDGET
from karpenter_gitops.karpenter.disruption.drift import summarise_types
from karpenter_gitops.output import cost_text
from karpenter_gitops.output.escape import visible

if TYPE_CHECKING:
    from karpenter_gitops.app.preview_result import ObjectChange, Preview

MARKER = "<!-- karpenter-gitops-preview -->"
LISTED = 20  # names or errors listed in the always-kept part before "… and N more"
TABLE_ROWS = 50  # rows of a section table in the comment (the full report has all)
_FOOTER_RESERVE = 600
_FOOTER_LABEL = 60  # five labels of at most this length keep the footer inside its reserve
_MIN_CUT_DIFF = 400

def _text(value: str) -> str:
    """Free text for markdown: no HTML, no table breaks, no line breaks or control characters (shown escaped)."""
    return html.escape(visible(value), quote=False).replace("|", "\\|")


def _failure(findings: tuple[Finding, ...]) -> str:
    """Why a class's nodes will fail, after what Karpenter will show: the first error found on it."""
    if not findings:
        return ""
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"; it will fail: {_text(findings[0].message)} [`{findings[0].rule}`]{more}"


def _more(total: int, shown: int) -> list[str]:
    return [f"- … and {total - shown} more (see the full report)"] if total > shown else []


def _cap(items: Sequence, full: bool, limit: int) -> Sequence:
    return items if full else items[:limit]


def _verdict(preview: Preview) -> str:
    code = preview.exit_code
    if code == TRANSIENT:
        return ":hourglass: transient trouble, nothing decided — re-run"
    if code == PERSISTENT:
        problems = len(preview.errors) + len(preview.not_ready) + len(preview.blocking_pulumi)
        problems += len(preview.cost.newly_unschedulable) if preview.cost else 0
        return f":x: {problems} blocking problem(s)"
    return ":white_check_mark: no blocking problems"


def _summary(preview: Preview, full: bool) -> str:
    counts = preview.counts()
    lines = [MARKER, f"### Karpenter preview: {_verdict(preview)}", ""]
    lines.append(
        f"**Objects** vs `{preview.base_label}`: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['removed']} removed."
    )
    if preview.head_plan is None:
        lines.append("**Predicted Ready**: not reconciled (offline preview: no AWS look-ups).")
    else:
        total = len(preview.head_plan.node_classes)
        not_ready = preview.not_ready
        lines.append(f"**Predicted Ready**: {total - len(not_ready)}/{total} EC2NodeClass(es).")
        outlook = preview.outlook
        shown = _cap(outlook, full, LISTED)
        lines.extend(f"- `{name}`: Karpenter will show {_text(will_show)}" + _failure(failing) for name, will_show, failing in shown)
        lines.extend(_more(len(outlook), len(shown)))
    moves = [m for m in preview.moves if m.old and m.new]
    if moves:
        pools = sorted({m.node_pool for m in moves})
        lines.append(
            f"**AMIs**: {sum(len(m.instance_types) for m in moves)} instance type(s) move to another AMI "
            f"in {len(pools)} NodePool(s): {', '.join(f'`{p}`' for p in _cap(pools, full, LISTED))}"
            + (" …" if len(pools) > len(_cap(pools, full, LISTED)) else "")
            + "."
        )
    choices = preview.first_choice_moves
    lines.extend(
        f"**First choice**: `{m.node_pool}` would launch {_text(m.after.describe())} first, "
        f"instead of {_text(m.before.describe())} (NodeOverlay change)."
        for m in _cap(choices, full, LISTED)
    )
    lines.extend(_more(len(choices), len(_cap(choices, full, LISTED))))
    lines.append(f"**Node impact**: {_impact_line(preview)}")
    if preview.cost:
        lines.append(f"**Cost** of the workloads ({preview.cost.head.pods} pod(s)): {_text(cost_text.summary(preview.cost))}.")
    if preview.pulumi:
        counts = preview.pulumi.counts
        lines.append("**Pulumi**: " + ", ".join(f"{n} to {op}" for op, n in counts.items()) + ".")
    notes = [f"transient: {t}" for t in preview.transient] + list(preview.notes)
    if notes:
        lines.append("**Notes**:")
        shown = _cap(notes, full, LISTED)
        lines.extend(f"- {_text(note)}" for note in shown)
        lines.extend(_more(len(notes), len(shown)))
    return "\n".join(lines) + "\n"


def _impact_line(preview: Preview) -> str:
    forecast = preview.forecast
    if forecast is None:
        return f"not available: {_text(preview.impact_note or 'the cluster was not read')}."
    if not forecast.pools:
        unknown = "" if forecast.reconciled else "; AMI drift not evaluated (not reconciled)"
        return "no existing node drifts" + unknown + "."
    if forecast.with_cluster:
        nodes = sum(p.nodes or 0 for p in forecast.pools)
        drifted = sum(p.drifted_total for p in forecast.pools)
        slowest = [p.waves for p in forecast.pools if p.waves is not None]
        blocked = [p.node_pool for p in forecast.pools if p.drifted_total and p.waves is None]
        text = f"{drifted} of {nodes} node(s) in the affected NodePools would be replaced"
        if slowest:
            text += f"; the slowest NodePool needs ~{max(slowest)} wave(s)"
        if blocked:
            text += f"; blocked by a zero budget: {', '.join(blocked)}"
        return text + "."
    affected = ", ".join(f"`{p.node_pool}`" for p in _cap(forecast.pools, False, LISTED))
    return f"{len(forecast.pools)} NodePool(s) drift: {affected} (no --kubeconfig: no node counts)."


def _errors(preview: Preview, full: bool) -> str:
    errors = [f"`{f.kind}/{f.name}` {f.path}: {_text(f.message)} [`{f.rule}`]" for f in preview.errors]
    errors += [_text(line) for line in preview.blocking_pulumi]
    errors += [f"{len(pods)} pod(s) of `{_text(workload)}` can no longer be scheduled: {_text(message)}"
               for workload, message, pods in (preview.cost.newly_unschedulable if preview.cost else ())]
    if not errors:
        return ""
    shown = _cap(errors, full, LISTED)
    lines = [f"#### Blocking errors ({len(errors)})", *(f"- {e}" for e in shown), *_more(len(errors), len(shown))]
    return "\n" + "\n".join(lines) + "\n"


# A GitHub table with every cell as given (already escaped by ``_text``): no padding to column widths,
# so a long cell does not widen the others and the comment stays within its budget.
_MARKDOWN = TableFormat(
    lineabove=None,
    linebelowheader=lambda widths, _aligns: "|" + "---|" * len(widths),
    linebetweenrows=None,
    linebelow=None,
    headerrow=DataRow("| ", " | ", " |"),
    datarow=DataRow("| ", " | ", " |"),
    padding=0,
    with_header_hide=None,
)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], full: bool) -> list[str]:
    shown = _cap(rows, full, TABLE_ROWS)
    lines = [
        tabulate(shown, header, tablefmt=_MARKDOWN, stralign=None, numalign=None, disable_numparse=True, preserve_whitespace=True)
    ]
    if len(rows) > len(shown):
        lines.append(f"\n… and {len(rows) - len(shown)} more row(s) (see the full report)")
    return lines


def _impact_section(preview: Preview, full: bool) -> str:
    forecast = preview.forecast
    if forecast is None or not forecast.pools:
        return ""
    lines = ["", "#### Node impact"]
    if forecast.with_cluster:
        rows = [
            [
                f"`{p.node_pool}`" + (" (removed)" if p.removed else ""),
                str(p.nodes),
                str(p.drifted_total),
                ", ".join(f"{reason} {n}" for reason, n in sorted(p.drifted.items())) or "—",
                _text(p.budget.describe()),
                "blocked (budget 0)" if p.waves is None else f"~{p.waves}",
            ]
            for p in forecast.pools
        ]
        lines += _table(["NodePool", "nodes", "drifted", "by reason", "budget (Drifted)", "waves"], rows, full)
    else:
        rows = [
            [
                f"`{p.node_pool}`",
                "removed: its nodes are deleted" if p.removed else ("every node" if p.whole_pool else "nodes of the moving instance types"),
                _text(p.budget.describe()),
                "—" if p.waves is None else f"~{p.waves}",
            ]
            for p in forecast.pools
        ]
        lines += _table(["NodePool", "drifts", "budget (Drifted)", "waves if every node drifts"], rows, full)
    names = preview.ami_names()
    why = []
    for pool in forecast.pools:
        why += [f"- `{pool.node_pool}`: {_text(reason)}" for reason in pool.whole_pool]
        why += [
            f"- `{pool.node_pool}`: {summarise_types(m.instance_types, None if full else 8)} would move from "
            f"{_ami(m.old, names)} to {_ami(m.new, names)} (AMIDrift)"
            for m in pool.moves
        ]
    lines += ["", *_cap(why, full, TABLE_ROWS), *_more(len(why), len(_cap(why, full, TABLE_ROWS)))]
    return "\n".join(lines) + "\n"


def _cost_section(preview: Preview, full: bool) -> str:
    """Per NodePool whose NodeClaims change: base and head, the change per hour and month; the chart; where prices come from."""
    cost = preview.cost
    if cost is None:
        return ""
    head = cost.head
    lines = ["", f"#### Cost forecast: {head.pods} pod(s) from {_text(', '.join(head.sources))}"]
    if head.forecast is None or cost.base.forecast is None:
        why = head.unavailable or cost.base.unavailable or "nothing to simulate"
        return "\n".join([*lines, f"No forecast: {_text(why)}."]) + "\n"
    changed = [p for p in cost.pools if p.changed]
    if changed:
        rows = [[f"`{_text(p.node_pool)}`", _text(cost_text.describe(p.base)), _text(cost_text.describe(p.head)), _text(cost_text.delta_text(p))]
                for p in changed]
        lines += _table(["NodePool", "base", "head", "change"], rows, full)
    else:
        lines.append("The change moves no pod: every NodePool launches the same NodeClaims.")
    limits = [(p.node_pool, row) for p in cost.pools if (row := cost_text.limit_row(p))]
    if limits:
        lines += ["", "What each limited NodePool costs at its limits, on its cheapest and its dearest compatible type:", ""]
        lines += _table(["NodePool", "base", "head"], [[f"`{_text(name)}`", _text(base), _text(head)] for name, (base, head) in limits], full)
    lines += ["", cost_text.mermaid(cost), ""]
    if head.prices:
        lines.append(f"Prices: {_text(head.prices.summary)}.")
    approximated = head.forecast.approximated
    if approximated:
        lines.append("Approximated: " + "; ".join(f"`{_text(a.workload)}` ({_text(', '.join(a.reasons))})" for a in approximated) + ".")
    unschedulable = head.forecast.unschedulable
    if unschedulable:
        lines += ["", f"Pods the head cannot schedule ({sum(len(u.pods) for u in unschedulable)}):"]
        shown = _cap(unschedulable, full, LISTED)
        lines += [f"- `{_text(u.workload)}` × {len(u.pods)}: {_text(u.message)}" for u in shown]
        lines += _more(len(unschedulable), len(shown))
    return "\n".join(lines) + "\n"


def _ami(ami_id: str | None, names: Mapping[str, str]) -> str:
    if ami_id is None:
        return "no AMI (not launchable)"
    return f"`{ami_id}`" + (f" ({_text(names[ami_id])})" if ami_id in names else "")


def _ami_section(preview: Preview, full: bool) -> str:
    if preview.head_plan is None:
        return ""
    names = preview.ami_names()
    lines = []
    for move in preview.moves:
        types = summarise_types(move.instance_types, None if full else 8)
        if move.old is None:
            lines.append(f"- `{move.node_pool}`: {len(move.instance_types)} instance type(s) become launchable on {_ami(move.new, names)}: {types}")
        elif move.new is None:
            lines.append(f"- `{move.node_pool}`: {len(move.instance_types)} instance type(s) no longer launchable (were on `{move.old}`): {types}")
        else:
            lines.append(f"- `{move.node_pool}`: {types}: {_ami(move.old, names)} → {_ami(move.new, names)}")
    for node_class, ami_id, name, reason in preview.new_skipped_amis():
        lines.append(f"- EC2NodeClass `{node_class}` now matches `{ami_id}` ({_text(name)}) but skips it: {_text(reason)}")
    for pool, reasons in _new_unserved(preview):
        lines.append(f"- `{pool}`: allowed but without an AMI: " + "; ".join(f"{n} × {_text(r)}" for r, n in reasons))
    if not lines:
        return ""
    shown = _cap(lines, full, TABLE_ROWS)
    return "\n" + "\n".join(["#### AMI changes", *shown, *_more(len(lines), len(shown))]) + "\n"


def _new_unserved(preview: Preview) -> list[tuple[str, list[tuple[str, int]]]]:
    """Per NodePool whose unserved instance types changed, the head's unserved counts by reason."""
    out = []
    for name, plan in sorted(preview.head_plan.node_pools.items()):
        before = preview.base_plan.node_pools.get(name) if preview.base_plan else None
        now = plan.mapping.unserved if plan.mapping else ()
        was = before.mapping.unserved if before and before.mapping else ()
        if now and {u.type for u in now} != {u.type for u in was}:
            out.append((name, sorted(Counter(u.reason for u in now).items())))
    return out


def _pulumi_section(preview: Preview, full: bool) -> str:
    pulumi = preview.pulumi
    if not pulumi or not (pulumi.steps or pulumi.policy_events or pulumi.diagnostics):
        return ""
    counts = ", ".join(f"{n} {op}" for op, n in pulumi.counts.items())
    lines = ["", f"<details><summary>Pulumi preview: {counts}</summary>", ""]
    if pulumi.steps:
        rows = [[s.op, f"`{_text(s.type)}`", f"`{_text(s.name)}`", _text(", ".join(s.reasons)) or "—"] for s in pulumi.steps]
        lines += _table(["op", "type", "name", "changed"], rows, full)
    if pulumi.policy_events:
        lines += ["", "Policy events:"]
        lines += [f"- {p.level} `{_text(p.pack)}/{_text(p.policy)}`: {_text(p.message)}" for p in pulumi.policy_events]
    other = [d for d in pulumi.diagnostics if d.severity != "error"]
    if other:
        lines += ["", "Diagnostics:"]
        lines += [f"- {d.severity}: {_text(d.message)}" for d in _cap(other, full, TABLE_ROWS)]
    return "\n".join(lines + ["", "</details>"]) + "\n"


def _policy_section(preview: Preview, full: bool) -> str:
    others = [f for f in preview.findings if f.severity is not Severity.ERROR or preview.waived(f)]
    waivers = preview.validation.waivers
    if not others and not waivers:
        return ""
    warnings = sum(1 for f in others if f.severity is Severity.WARNING and not preview.waived(f))
    waived = sum(1 for f in others if preview.waived(f))
    lines = ["", f"<details><summary>Policy results: {warnings} warning(s), {waived} waived, {len(waivers)} active waiver(s)</summary>", ""]
    if others:
        rows = [
            ["waived" if preview.waived(f) else f.severity.value, f"`{f.kind}/{f.name}`", f.path, _text(f.message), f"`{f.rule}`"]
            for f in others
        ]
        lines += _table(["severity", "object", "path", "message", "rule"], rows, full)
    if waivers:
        lines += ["", "Active waivers:"]
        lines += [
            f"- `{w.rule}` on `{w.object}` until {w.expires.isoformat()}: {_text(w.reason)}" for w in _cap(waivers, full, TABLE_ROWS)
        ]
    return "\n".join(lines + ["", "</details>"]) + "\n"


def _fence(lines: Sequence[str]) -> str:
    """A code fence longer than any backtick run in the content."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


_SIGN = {"added": "+", "changed": "~", "removed": "-"}


def _diff_block(change: ObjectChange, limit: int | None = None, full_report: str | None = None) -> str:
    """One folded diff; with ``limit``, as many lines as fit and a cut marker ("" if too few fit)."""
    added, removed = change.line_counts
    head = f"\n<details><summary>{_SIGN[change.status]} {change.label} ({change.status}, +{added} −{removed})</summary>\n\n"
    fence = _fence(change.diff)
    body = list(change.diff)
    cut = 0
    if limit is not None:
        where = f" — full report: `{full_report}`" if full_report else ""
        marker_room = len(f"\n*:scissors: diff cut: {len(body)} more line(s){where}*\n")
        room = limit - len(head) - 2 * len(fence) - len("diff\n\n\n\n</details>\n") - marker_room
        kept, used = [], 0
        for line in body:
            if used + len(line) + 1 > room:
                break
            kept.append(line)
            used += len(line) + 1
        if len(kept) < 3:
            return ""
        cut, body = len(body) - len(kept), kept
    text = f"{head}{fence}diff\n" + "\n".join(body) + f"\n{fence}\n"
    if cut:
        where = f" — full report: `{full_report}`" if full_report else ""
        text += f"\n*:scissors: diff cut: {cut} more line(s){where}*\n"
    return text + "\n</details>\n"


@dataclass(frozen=True)
class _Block:
    text: str
    label: str
    kept: bool = False
    shrink: Callable[[int], str] | None = None


def markdown(preview: Preview, budget: int | None = DEFAULT_BUDGET, full_report: str | None = None) -> tuple[str, bool]:
    """The comment and whether anything was cut; ``budget=None`` gives the full report."""
    full = budget is None
    blocks = [
        _Block(_summary(preview, full), "summary", kept=True),
        _Block(_errors(preview, full), "errors", kept=True),
        _Block(_cost_section(preview, full), "cost forecast"),
        _Block(_impact_section(preview, full), "node impact"),
        _Block(_ami_section(preview, full), "AMI changes"),
        _Block(_pulumi_section(preview, full), "Pulumi preview"),
        _Block(_policy_section(preview, full), "policy results"),
    ]
    blocks += [
        _Block(_diff_block(c), c.label, shrink=lambda room, c=c: _diff_block(c, room, full_report)) for c in preview.changes
    ]
    if full:
        return "".join(b.text for b in blocks), False
    return _fit(blocks, budget, full_report, capped=_lists_capped(preview))


def _lists_capped(preview: Preview) -> bool:
    """Whether the always-kept part had to shorten a list (then the full report is needed too)."""
    return len(preview.errors) + len(preview.blocking_pulumi) > LISTED or len(preview.not_ready) > LISTED


def _fit(blocks: Sequence[_Block], budget: int, full_report: str | None, capped: bool) -> tuple[str, bool]:
    remaining = budget - _FOOTER_RESERVE - sum(len(b.text) for b in blocks if b.kept)
    parts, shortened, omitted = [], [], []
    for block in blocks:
        if block.kept or not block.text:
            parts.append(block.text)
        elif len(block.text) <= remaining:
            parts.append(block.text)
            remaining -= len(block.text)
        elif block.shrink and remaining >= _MIN_CUT_DIFF and (cut := block.shrink(remaining)):
            parts.append(cut)
            remaining -= len(cut)
            shortened.append(block.label)
        else:
            omitted.append(block.label)
    truncated = bool(shortened or omitted or capped)
    if truncated:
        parts.append(_footer(budget, shortened, omitted, full_report))
    return "".join(parts), truncated


def _footer(budget: int, shortened: Sequence[str], omitted: Sequence[str], full_report: str | None) -> str:
    what = []
    if shortened:
        what.append(f"{len(shortened)} diff(s) cut")
    if omitted:
        shown = [label if len(label) <= _FOOTER_LABEL else label[: _FOOTER_LABEL - 1] + "…" for label in omitted[:5]]
        names = ", ".join(shown) + (f", … {len(omitted) - 5} more" if len(omitted) > 5 else "")
        what.append(f"{len(omitted)} section(s) left out ({_text(names)})")
    reason = "; ".join(what) or "long lists shortened"
    where = f"The full report is in `{full_report}`." if full_report else "Run with --full-report FILE for everything."
    return f"\n---\n:scissors: Shortened to fit {budget:,} characters: {reason}. {where}\n"

