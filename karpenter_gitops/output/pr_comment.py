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
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core.findings import Finding, Severity
from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.karpenter.disruption.drift import AMIMove, summarise_types
from karpenter_gitops.output import DEFAULT_BUDGET, cost_text
from karpenter_gitops.output.escape import visible
from karpenter_gitops.output.markdown import EMPTY, OutsideText, code_span, table

if TYPE_CHECKING:
    from karpenter_gitops.app.preview_result import ObjectChange, Preview

MARKER = "<!-- karpenter-gitops-preview -->"
LISTED = 20  # names or errors listed in the always-kept part before "… and N more"
LISTED_TIGHT = 5  # when the always-kept part would not fit its budget with LISTED
TABLE_ROWS = 50  # rows of a section table in the comment (the full report has all)
_FOOTER_RESERVE = 600
_FOOTER_LABEL = 60  # five labels of at most this length keep the footer inside its reserve
_MIN_CUT_DIFF = 400


def _failure(findings: tuple[Finding, ...], quoted: OutsideText) -> str:
    """Why a class's nodes will fail, after what Karpenter will show: the first error found on it."""
    if not findings:
        return ""
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"; it will fail: {quoted.prose(findings[0].message)} [{quoted.code(findings[0].rule)}]{more}"


def _more(total: int, shown: int) -> list[str]:
    return [f"- … and {total - shown} more (see the full report)"] if total > shown else []


def _cap(items: Sequence, limit: int | None) -> Sequence:
    return items if limit is None else items[:limit]


# Instance type names as AWS writes them: the wildcard summarise_types puts after a family (``c5.*``)
# cannot open emphasis after one of these, so the summary is shown as written.
_INSTANCE_TYPE = re.compile(r"[a-z0-9-]+\.[a-z0-9-]+")


def _types(instance_types: Sequence[str], full: bool, quoted: OutsideText) -> str:
    text = summarise_types(instance_types, None if full else 8)
    return text if all(_INSTANCE_TYPE.fullmatch(name) for name in instance_types) else quoted.prose(text)


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
    shown = _cap(code, listed)
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
        shown = _cap(outlook, listed)
        lines.extend(f"- {quoted.code(name)}: Karpenter will show {quoted.prose(will_show)}" + _failure(failing, quoted)
                     for name, will_show, failing in shown)
        lines.extend(_more(len(outlook), len(shown)))
    moves = [m for m in preview.moves if m.old and m.new]
    if moves:
        pools = sorted({m.node_pool for m in moves})
        lines.append(
            f"**AMIs**: {sum(len(m.instance_types) for m in moves)} instance type(s) move to another AMI "
            f"in {len(pools)} NodePool(s): {', '.join(quoted.code(p) for p in _cap(pools, listed))}"
            + (" …" if len(pools) > len(_cap(pools, listed)) else "")
            + "."
        )
    choices = preview.first_choice_moves
    lines.extend(
        f"**First choice**: {quoted.code(m.node_pool)} would launch {quoted.prose(m.after.describe())} first, "
        f"instead of {quoted.prose(m.before.describe())} (NodeOverlay change)."
        for m in _cap(choices, listed)
    )
    lines.extend(_more(len(choices), len(_cap(choices, listed))))
    lines.append(f"**Node impact**: {_impact_line(preview, quoted, listed)}")
    if preview.cost:
        lines.append(f"**Monthly cost** of the workloads ({preview.cost.head.pods} pod(s)): {quoted.prose(cost_text.total(preview.cost))}.")
    elif preview.cost_note:
        lines.append(f"**Monthly cost**: not known: {quoted.prose(preview.cost_note)}.")
    if preview.pulumi:
        counts = preview.pulumi.counts
        lines.append("**Pulumi**: " + ", ".join(f"{n} to {op}" for op, n in counts.items()) + ".")
    notes = [f"transient: {t}" for t in preview.transient] + list(preview.notes)
    if notes:
        lines.append("**Notes**:")
        shown = _cap(notes, listed)
        lines.extend(f"- {quoted.prose(note) or EMPTY}" for note in shown)
        lines.extend(_more(len(notes), len(shown)))
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
            text += f"; blocked by a zero budget: {', '.join(quoted.code(b) for b in _cap(blocked, listed))}"
            text += " …" if len(blocked) > len(_cap(blocked, listed)) else ""
        return text + "."
    affected = ", ".join(quoted.code(p.node_pool) for p in _cap(forecast.pools, listed or LISTED))
    return f"{len(forecast.pools)} NodePool(s) drift: {affected} (no --kubeconfig: no node counts)."


def _errors(preview: Preview, quoted: OutsideText, listed: int | None) -> str:
    errors = [f"{quoted.code(f'{f.kind}/{f.name}')} {quoted.prose(f.path)}: {quoted.prose(f.message)} [{quoted.code(f.rule)}]"
              for f in _cap(preview.errors, listed)]
    errors += [quoted.prose(line) for line in _cap(preview.blocking_pulumi, listed)]
    errors += [f"{len(pods)} pod(s) of {quoted.code(workload)} can no longer be scheduled: {quoted.prose(message)}"
               for workload, message, pods in _cap(preview.cost.newly_unschedulable if preview.cost else (), listed)]
    total = len(preview.errors) + len(preview.blocking_pulumi) + (len(preview.cost.newly_unschedulable) if preview.cost else 0)
    if not total:
        return ""
    shown = _cap(errors, listed)
    lines = [f"#### Blocking errors ({total})", *(f"- {e}" for e in shown), *_more(total, len(shown))]
    return "\n" + "\n".join(lines) + "\n"


def _table(header: Sequence[str], items: Sequence, full: bool, row: Callable[[Any], Sequence[str]] = list) -> list[str]:
    """A table of one ``row`` per item, the first TABLE_ROWS of them unless ``full`` (rows never shown are
    never written, so nothing is cut for them)."""
    shown = _cap(items, None if full else TABLE_ROWS)
    lines = [table(header, [row(item) for item in shown])]
    if len(items) > len(shown):
        lines.append(f"\n… and {len(items) - len(shown)} more row(s) (see the full report)")
    return lines


def _impact_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    forecast = preview.forecast
    if forecast is None or not forecast.pools:
        return ""
    lines = ["", "#### Node impact"]
    if forecast.with_cluster:
        lines += _table(["NodePool", "nodes", "drifted", "by reason", "budget (Drifted)", "waves"], forecast.pools, full, lambda p: [
            quoted.code(p.node_pool, cell=True) + (" (removed)" if p.removed else ""),
            str(p.nodes),
            str(p.drifted_total),
            ", ".join(f"{quoted.prose(reason, cell=True)} {n}" for reason, n in sorted(p.drifted.items())) or "—",
            quoted.prose(p.budget.describe(), cell=True),
            "blocked (budget 0)" if p.waves is None else f"~{p.waves}",
        ])
    else:
        lines += _table(["NodePool", "drifts", "budget (Drifted)", "waves if every node drifts"], forecast.pools, full, lambda p: [
            quoted.code(p.node_pool, cell=True),
            "removed: its nodes are deleted" if p.removed else ("every node" if p.whole_pool else "nodes of the moving instance types"),
            quoted.prose(p.budget.describe(), cell=True),
            "—" if p.waves is None else f"~{p.waves}",
        ])
    names = preview.ami_names()

    def why(pool: str, reason: str | AMIMove) -> str:
        if isinstance(reason, str):
            return f"- {quoted.code(pool)}: {quoted.prose(reason)}"
        return (f"- {quoted.code(pool)}: {_types(reason.instance_types, full, quoted)} would move from "
                f"{_ami(reason.old, names, quoted)} to {_ami(reason.new, names, quoted)} (AMIDrift)")

    reasons = [(pool.node_pool, reason) for pool in forecast.pools for reason in (*pool.whole_pool, *pool.moves)]
    shown = _cap(reasons, None if full else TABLE_ROWS)
    lines += ["", *(why(*reason) for reason in shown), *_more(len(reasons), len(shown))]
    return "\n".join(lines) + "\n"


def _cost_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    """The total monthly change first; then per NodePool that changes, its monthly cost on each side and the
    change, and the chart; how every figure is made, folded; the pods the head cannot schedule."""
    cost = preview.cost
    if cost is None:
        return ""
    head = cost.head
    lines = ["", f"#### Cost forecast: {head.pods} pod(s) from {quoted.prose(', '.join(head.sources))}", ""]
    lines.append(f"**Monthly cost**: {quoted.prose(cost_text.total(cost))}.")
    if head.forecast is None or cost.base.forecast is None:
        return "\n".join(lines) + "\n"
    changed = cost.changed
    if changed:
        lines += ["", *_table(["NodePool", "base, monthly", "head, monthly", "change"], changed, full, lambda p: [
            quoted.code(p.node_pool, cell=True),
            *(quoted.prose(text, cell=True) for text in (cost_text.side_cell(p, p.base), cost_text.side_cell(p, p.head),
                                                          cost_text.change_cell(p)))])]
        if cost.monthly is not None:  # a bar for a NodeClaim without a price would draw it as free
            lines += ["", cost_text.mermaid(cost)]
    limits = [(p.node_pool, row) for p in cost.pools if (row := cost_text.limit_row(p)) and row[0] != "unchanged"]
    if changed or limits:
        lines += _cost_details(preview, changed, limits, full, quoted)
    unschedulable = head.forecast.unschedulable
    if unschedulable:
        lines += ["", f"Pods the head cannot schedule ({sum(len(u.pods) for u in unschedulable)}):"]
        shown = _cap(unschedulable, None if full else LISTED)
        lines += [f"- {quoted.code(u.workload)} × {len(u.pods)}: {quoted.prose(u.message)}" for u in shown]
        lines += _more(len(unschedulable), len(shown))
    return "\n".join(lines) + "\n"


def _cost_details(preview: Preview, changed: Sequence, limits: Sequence, full: bool, quoted: OutsideText) -> list[str]:
    """How the figures are made, folded: each changed NodePool's NodeClaims (types, counts, capacity types,
    price sources), where prices come from, what on-demand and spot are taken to cost, what is approximated,
    and what each NodePool whose limits changed costs at them."""
    cost = preview.cost
    base, head = cost.base, cost.head
    rows = None if full else TABLE_ROWS
    lines = ["", "<details><summary>How these figures are made</summary>", ""]
    lines += [f"- {quoted.code(p.node_pool)}: base {quoted.prose(cost_text.claims(p.base, base))}; "
              f"head {quoted.prose(cost_text.claims(p.head, head))}" for p in _cap(changed, rows)]
    lines += _more(len(changed), len(_cap(changed, rows)))
    if head.prices:
        lines.append(f"- Prices: {quoted.prose(head.prices.summary)}.")
    lines.append(f"- {cost_text.ASSUMPTIONS}")
    approximated = head.forecast.approximated
    if approximated:
        lines.append("- Approximated: " + "; ".join(f"{quoted.code(a.workload)} ({quoted.prose(', '.join(a.reasons))})"
                                                    for a in _cap(approximated, rows)) + ".")
    if limits:
        lines += ["", "What each NodePool whose limits changed costs at them, on its cheapest and its dearest compatible type:", ""]
        lines += _table(["NodePool", "base", "head"], limits, full, lambda limit: [
            quoted.code(limit[0], cell=True), quoted.prose(limit[1][0], cell=True), quoted.prose(limit[1][1], cell=True)])
    return [*lines, "", "</details>"]


def _ami(ami_id: str | None, names: Mapping[str, str], quoted: OutsideText) -> str:
    if ami_id is None:
        return "no AMI (not launchable)"
    return quoted.code(ami_id) + (f" ({quoted.prose(names[ami_id])})" if ami_id in names else "")


def _ami_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    if preview.head_plan is None:
        return ""
    names = preview.ami_names()
    lines = []
    for move in preview.moves:
        types = _types(move.instance_types, full, quoted)
        pool = quoted.code(move.node_pool)
        if move.old is None:
            lines.append(f"- {pool}: {len(move.instance_types)} instance type(s) become launchable on {_ami(move.new, names, quoted)}: {types}")
        elif move.new is None:
            lines.append(f"- {pool}: {len(move.instance_types)} instance type(s) no longer launchable (were on {quoted.code(move.old)}): {types}")
        else:
            lines.append(f"- {pool}: {types}: {_ami(move.old, names, quoted)} → {_ami(move.new, names, quoted)}")
    for node_class, ami_id, name, reason in preview.new_skipped_amis():
        lines.append(f"- EC2NodeClass {quoted.code(node_class)} now matches {quoted.code(ami_id)} ({quoted.prose(name)}) "
                     f"but skips it: {quoted.prose(reason)}")
    for pool, reasons in _new_unserved(preview):
        lines.append(f"- {quoted.code(pool)}: allowed but without an AMI: " + "; ".join(f"{n} × {quoted.prose(r)}" for r, n in reasons))
    if not lines:
        return ""
    shown = _cap(lines, None if full else TABLE_ROWS)
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


def _pulumi_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    pulumi = preview.pulumi
    if not pulumi or not (pulumi.steps or pulumi.policy_events or pulumi.diagnostics):
        return ""
    counts = ", ".join(f"{n} {op}" for op, n in pulumi.counts.items())
    lines = ["", f"<details><summary>Pulumi preview: {counts}</summary>", ""]
    if pulumi.steps:
        lines += _table(["op", "type", "name", "changed"], pulumi.steps, full, lambda s: [
            quoted.prose(s.op, cell=True), quoted.code(s.type, cell=True), quoted.code(s.name, cell=True),
            quoted.prose(", ".join(s.reasons), cell=True) or "—"])
    if pulumi.policy_events:
        lines += ["", "Policy events:"]
        lines += [f"- {quoted.prose(p.level)} {quoted.code(f'{p.pack}/{p.policy}')}: {quoted.prose(p.message)}"
                  for p in _cap(pulumi.policy_events, None if full else TABLE_ROWS)]
    other = [d for d in pulumi.diagnostics if d.severity != "error"]
    if other:
        lines += ["", "Diagnostics:"]
        lines += [f"- {quoted.prose(d.severity)}: {quoted.prose(d.message)}" for d in _cap(other, None if full else TABLE_ROWS)]
    return "\n".join(lines + ["", "</details>"]) + "\n"


def _policy_section(preview: Preview, full: bool, quoted: OutsideText, *, show_info: bool) -> str:
    """Warnings, waived findings and active waivers; ``info`` findings (house-style notes, many on any
    repository) only with ``show_info``, so the warnings are not lost among them."""
    others = [f for f in preview.findings if (f.severity is not Severity.ERROR or preview.waived(f))
              and (show_info or f.severity is not Severity.INFO)]
    waivers = preview.validation.waivers
    if not others and not waivers:
        return ""
    warnings = sum(1 for f in others if f.severity is Severity.WARNING and not preview.waived(f))
    waived = sum(1 for f in others if preview.waived(f))
    lines = ["", f"<details><summary>Policy results: {warnings} warning(s), {waived} waived, {len(waivers)} active waiver(s)</summary>", ""]
    if others:
        lines += _table(["severity", "object", "path", "message", "rule"], others, full, lambda f: [
            "waived" if preview.waived(f) else f.severity.value, quoted.code(f"{f.kind}/{f.name}", cell=True),
            quoted.prose(f.path, cell=True), quoted.prose(f.message, cell=True), quoted.code(f.rule, cell=True)])
    if waivers:
        lines += ["", "Active waivers:"]
        lines += [f"- {quoted.code(w.rule)} on {quoted.code(w.object)} until {w.expires.isoformat()}: {quoted.prose(w.reason)}"
                  for w in _cap(waivers, None if full else TABLE_ROWS)]
    return "\n".join(lines + ["", "</details>"]) + "\n"


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


def markdown(preview: Preview, budget: int | None = DEFAULT_BUDGET, full_report: str | None = None, *,
             show_info: bool = False) -> tuple[str, bool]:
    """The comment and whether anything was cut; ``budget=None`` gives the full report. ``info`` findings
    are listed only with ``show_info``."""
    full = budget is None
    kept = _kept(preview, full, tight=False)
    tight = budget is not None and sum(len(b.text) for b in kept if b.kept) > budget - _FOOTER_RESERVE
    if tight:
        kept = _kept(preview, full, tight=True)
    blocks = [
        *kept,
        *_section(_cost_section, preview, full, "cost forecast"),
        *_section(_impact_section, preview, full, "node impact"),
        *_section(_ami_section, preview, full, "AMI changes"),
        *_section(_pulumi_section, preview, full, "Pulumi preview"),
        *_section(functools.partial(_policy_section, show_info=show_info), preview, full, "policy results"),
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
        shown = [quoted.prose(label if len(label) <= _FOOTER_LABEL else label[: _FOOTER_LABEL - 1] + "…") for label in omitted[:5]]
        names = ", ".join(shown) + (f", … {len(omitted) - 5} more" if len(omitted) > 5 else "")
        what.append(f"{len(omitted)} section(s) left out ({names})")
    reason = "; ".join(what) or "long lists shortened"
    where = f"The full report is in {_report_path(full_report)}." if full_report else "Run with --full-report FILE for everything."
    return f"\n---\n:scissors: Shortened to fit {budget:,} characters: {reason}. {where}\n"
