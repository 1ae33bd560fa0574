"""The PR preview as one GitHub comment: markdown within a character budget.

The comment puts the verdict, the counts, predicted readiness and blocking errors first, outside
any fold, then the cost forecast, node impact, AMI changes, Pulumi steps, policy results and one
folded ``diff`` per object. It fits a character budget (GitHub refuses comments over 65,536): the
summary and the errors are always kept (their lists are capped so they stay small, and capped harder
with less room per value when even that would not fit); the other sections follow in priority order,
a long diff is cut with a marker, and what does not fit is counted at the end with the path of the
full report. Output is deterministic: sorted, no timestamps.

Every name, message and path that came from outside (manifests, AWS, the cluster, Pulumi,
file names) is written by :class:`~karpenter_gitops.output.markdown.OutsideText`: as written when
nothing in it can be markup, else as inline code, so a pull request can never put a link, an emoji, a
mention or a bold "approved" into the bot's verdict. What it cuts to keep a value in bounds follows
its section in full, folded.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from karpenter_gitops.core.findings import Finding
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.core.text import visible
from karpenter_gitops.karpenter.disruption.drift import AMI_DRIFT, PoolForecast
from karpenter_gitops.output import DEFAULT_BUDGET, cost_text
from karpenter_gitops.output.comment_sections import (
    LISTED,
    ami_section,
    and_more,
    cost_section,
    first_of,
    impact_section,
    policy_section,
    pulumi_section,
)
from karpenter_gitops.output.markdown import EMPTY, OutsideText, code_span

if TYPE_CHECKING:
    from karpenter_gitops.app.preview_result import ObjectChange, Preview

MARKER = "<!-- karpenter-gitops-preview -->"
LISTED_TIGHT = 5  # when the always-kept part would not fit its budget with LISTED
_FOOTER_RESERVE = 600
_FOOTER_LABEL = 60  # five labels of at most this length keep the footer inside its reserve
_MIN_CUT_DIFF = 400


def _failure(findings: tuple[Finding, ...], quoted: OutsideText) -> str:
    """Why a class's nodes will fail, after what Karpenter will show: the first error found on it."""
    if not findings:
        return ""
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"; it will fail: {quoted.prose(findings[0].message)} [{quoted.code(findings[0].rule)}]{more}"


def _verdict(preview: Preview) -> str:
    code = preview.exit_code
    if code is Outcome.TRANSIENT:
        return ":hourglass: transient trouble, nothing decided — re-run"
    if code is Outcome.FINDINGS:
        problems = len(preview.errors) + len(preview.not_ready) + len(preview.blocking_pulumi)
        problems += len(preview.cost.newly_unschedulable) if preview.cost else 0
        return f":x: {problems} blocking problem(s)"
    return ":white_check_mark: no blocking problems"


def _in_code(preview: Preview, quoted: OutsideText, listed: int | None) -> str:
    """The counted objects declared in the Pulumi program's code, which only Pulumi's preview shows."""
    code = preview.code_changes
    if not code:
        return ""
    shown = first_of(code, listed)
    named = ", ".join(f"{quoted.code(f'{kind}/{name}')} {status}" for status, kind, name in shown)
    more = f" and {len(code) - len(shown)} more" if len(code) > len(shown) else ""
    return f" Of them, declared in code (from Pulumi's preview): {named}{more}."


def _summary(preview: Preview, quoted: OutsideText, listed: int | None) -> str:
    counts = preview.counts()
    lines = [MARKER, f"### Karpenter preview: {_verdict(preview)}", ""]
    lines.append(
        f"**Objects** vs {quoted.code(preview.base_label)}: {counts['added']} added, {counts['changed']} changed, "
        f"{counts['removed']} removed." + _in_code(preview, quoted, listed)
    )
    if preview.head_plan is None:
        lines.append("**Predicted Ready**: not reconciled (offline preview: no AWS look-ups).")
    else:
        total = len(preview.head_plan.node_classes)
        not_ready = preview.not_ready
        lines.append(f"**Predicted Ready**: {total - len(not_ready)}/{total} EC2NodeClass(es).")
        outlook = preview.outlook
        shown = first_of(outlook, listed)
        lines.extend(
            f"- {quoted.code(name)}: Karpenter will show {quoted.prose(will_show)}" + _failure(failing, quoted)
            for name, will_show, failing in shown
        )
        lines.extend(and_more(len(outlook), len(shown)))
    moves = [m for m in preview.moves if m.old and m.new]
    if moves:
        pools = sorted({m.node_pool for m in moves})
        lines.append(
            f"**AMIs**: {sum(len(m.instance_types) for m in moves)} instance type(s) move to another AMI "
            f"in {len(pools)} NodePool(s): {', '.join(quoted.code(p) for p in first_of(pools, listed))}"
            + (" …" if len(pools) > len(first_of(pools, listed)) else "")
            + "."
        )
    choices = preview.first_choice_moves
    lines.extend(
        f"**First choice**: {quoted.code(m.node_pool)} would launch {quoted.prose(m.after.describe())} first, "
        f"instead of {quoted.prose(m.before.describe())} (NodeOverlay change)."
        for m in first_of(choices, listed)
    )
    lines.extend(and_more(len(choices), len(first_of(choices, listed))))
    lines.append(f"**Node impact**: {_impact_line(preview, quoted, listed)}")
    if preview.cost:
        lines.append(
            f"**Monthly cost** of the workloads ({preview.cost.head.pods} pod(s)): {quoted.prose(cost_text.total(preview.cost))}."
        )
    elif preview.cost_note:
        lines.append(f"**Monthly cost**: not known: {quoted.prose(preview.cost_note)}.")
    if preview.pulumi:
        counts = preview.pulumi.counts
        lines.append("**Pulumi**: " + ", ".join(f"{n} to {op}" for op, n in counts.items()) + ".")
    notes = [f"transient: {t}" for t in preview.transient] + list(preview.notes)
    if notes:
        lines.append("**Notes**:")
        shown = first_of(notes, listed)
        lines.extend(f"- {quoted.prose(note) or EMPTY}" for note in shown)
        lines.extend(and_more(len(notes), len(shown)))
    return "\n".join(lines) + "\n"


def _impact_line(preview: Preview, quoted: OutsideText, listed: int | None) -> str:
    forecast = preview.forecast
    if forecast is None:
        return f"not available: {quoted.prose(preview.impact_note or 'the cluster was not read')}."
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
            text += f"; blocked by a zero budget: {', '.join(quoted.code(b) for b in first_of(blocked, listed))}"
            text += " …" if len(blocked) > len(first_of(blocked, listed)) else ""
        stuck = sum(len(p.replacement.stuck) for p in forecast.pools if p.replacement)
        if stuck:
            text += f"; {stuck} of their pod(s) fit nowhere, which keeps their nodes from being replaced (see below)"
        return text + "."
    shown = first_of(forecast.pools, listed or LISTED)
    affected = ", ".join(f"{quoted.code(p.node_pool)} ({_reasons(p)})" for p in shown)
    more = " …" if len(forecast.pools) > len(shown) else ""
    return f"{len(forecast.pools)} NodePool(s) drift: {affected}{more} (no node counts: give --kubeconfig or a --cluster-state snapshot)."


def _reasons(pool: PoolForecast) -> str:
    """A pool's reasons in Karpenter's order, each once: ``RequirementsDrifted, AMIDrift unknown offline``."""
    if pool.removed:
        return "removed"
    named = [d.reason + (" unknown offline" if d.unknown else "") for d in pool.drifts]
    named += [AMI_DRIFT] * bool(pool.moves)
    return ", ".join(dict.fromkeys(named))


def _errors(preview: Preview, quoted: OutsideText, listed: int | None) -> str:
    errors = [
        f"{quoted.code(f'{f.kind}/{f.name}')} {quoted.prose(f.path)}: {quoted.prose(f.message)} [{quoted.code(f.rule)}]"
        for f in first_of(preview.errors, listed)
    ]
    errors += [quoted.prose(line) for line in first_of(preview.blocking_pulumi, listed)]
    errors += [
        f"{len(pods)} pod(s) of {quoted.code(workload)} can no longer be scheduled: {quoted.prose(message)}"
        for workload, message, pods in first_of(preview.cost.newly_unschedulable if preview.cost else (), listed)
    ]
    total = len(preview.errors) + len(preview.blocking_pulumi) + (len(preview.cost.newly_unschedulable) if preview.cost else 0)
    if not total:
        return ""
    shown = first_of(errors, listed)
    lines = [f"#### Blocking errors ({total})", *(f"- {e}" for e in shown), *and_more(total, len(shown))]
    return "\n" + "\n".join(lines) + "\n"


def _fence(lines: Sequence[str]) -> str:
    """A code fence longer than any backtick run in the content."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


_SIGN = {"added": "+", "changed": "~", "removed": "-"}


def _report_path(full_report: str) -> str:
    """The full report's path: the workflow's choice, shown whole (never cut: it is where the rest is)."""
    return code_span(visible(full_report))


def _diff_block(change: ObjectChange, limit: int | None = None, full_report: str | None = None) -> str:
    """One folded diff; with ``limit``, as many lines as fit and a cut marker ("" if too few fit). The
    object's name in the fold's summary is cut to a value's room: the diff under it names it whole."""
    added, removed = change.line_counts
    label = OutsideText().html(change.label)
    head = f"\n<details><summary>{_SIGN[change.status]} {label} ({change.status}, +{added} −{removed})</summary>\n\n"
    body = [visible(line) for line in change.diff]  # a bidi control would reorder what a reviewer reads
    fence = _fence(body)
    where = f" — full report: {_report_path(full_report)}" if full_report else ""
    cut = 0
    if limit is not None:
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
        text += f"\n*:scissors: diff cut: {cut} more line(s){where}*\n"
    return text + "\n</details>\n"


@dataclass(frozen=True)
class _Block:
    text: str
    label: str
    kept: bool = False
    shrink: Callable[[int], str] | None = None


def _kept(preview: Preview, full: bool, tight: bool) -> list[_Block]:
    """The summary and the blocking errors, then (not kept) the full text of the values they had to cut."""
    quoted = OutsideText(cut=not full, tight=tight)
    listed = None if full else LISTED_TIGHT if tight else LISTED
    return [
        _Block(_summary(preview, quoted, listed), "summary", kept=True),
        _Block(_errors(preview, quoted, listed), "errors", kept=True),
        _Block(quoted.cut_details("the summary and the blocking errors"), "values cut in the summary"),
    ]


def _section(render: Callable[[Preview, bool, OutsideText], str], preview: Preview, full: bool, label: str) -> list[_Block]:
    """A section, then (a block of its own, so a long value cannot crowd out the section) what it had to cut."""
    quoted = OutsideText(cut=not full)
    text = render(preview, full, quoted)
    return [_Block(text, label), _Block(quoted.cut_details(f"the {label}"), f"values cut in the {label}")]


def markdown(
    preview: Preview, budget: int | None = DEFAULT_BUDGET, full_report: str | None = None, *, show_info: bool = False
) -> tuple[str, bool]:
    """The comment and whether anything was cut; ``budget=None`` gives the full report. ``info`` findings
    are listed only with ``show_info``."""
    full = budget is None
    kept = _kept(preview, full, tight=False)
    tight = budget is not None and sum(len(b.text) for b in kept if b.kept) > budget - _FOOTER_RESERVE
    if tight:
        kept = _kept(preview, full, tight=True)
    blocks = [
        *kept,
        *_section(cost_section, preview, full, "cost forecast"),
        *_section(impact_section, preview, full, "node impact"),
        *_section(ami_section, preview, full, "AMI changes"),
        *_section(pulumi_section, preview, full, "Pulumi preview"),
        *_section(functools.partial(policy_section, show_info=show_info), preview, full, "policy results"),
    ]
    blocks += [
        _Block(_diff_block(c), c.label, shrink=lambda room, c=c: _diff_block(c, room, full_report)) for c in preview.changes
    ]
    if full:
        return "".join(b.text for b in blocks), False
    return _fit(blocks, budget, full_report, capped=tight or _lists_capped(preview))


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
        quoted = OutsideText(cut=False)
        shown = [
            quoted.prose(label if len(label) <= _FOOTER_LABEL else label[: _FOOTER_LABEL - 1] + "…") for label in omitted[:5]
        ]
        names = ", ".join(shown) + (f", … {len(omitted) - 5} more" if len(omitted) > 5 else "")
        what.append(f"{len(omitted)} section(s) left out ({names})")
    reason = "; ".join(what) or "long lists shortened"
    where = (
        f"The full report is in {_report_path(full_report)}." if full_report else "Run with --full-report FILE for everything."
    )
    return f"\n---\n:scissors: Shortened to fit {budget:,} characters: {reason}. {where}\n"
