"""The folded sections of the PR comment after its summary: node impact, the cost forecast, AMI changes,
Pulumi's steps and the policy results, each a function of the preview, whether it is written in full (the
full report) or cut to TABLE_ROWS rows, and the comment's :class:`OutsideText`; and the tables and lists
they are built of. :mod:`karpenter_gitops.output.pr_comment` puts them in order within the budget.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core.findings import Severity
from karpenter_gitops.karpenter.disruption.drift import AMI_DRIFT, AMIMove, Drift, summarise_types
from karpenter_gitops.karpenter.disruption.replacement import Move, Replacement
from karpenter_gitops.output import cost_text
from karpenter_gitops.output.markdown import OutsideText, table
from karpenter_gitops.output.workload_forecast_text import rounds_text

if TYPE_CHECKING:
    from karpenter_gitops.app.preview_result import Preview


LISTED = 20  # names or errors listed in the always-kept part before "… and N more"
TABLE_ROWS = 50  # rows of a section table in the comment (the full report has all)


def and_more(total: int, shown: int) -> list[str]:
    """The line that counts what a list left out, pointing at the full report (none when nothing was)."""
    return [f"- … and {total - shown} more (see the full report)"] if total > shown else []


def first_of(items: Sequence, limit: int | None) -> Sequence:
    """The first ``limit`` items, or all of them (``None``: the full report)."""
    return items if limit is None else items[:limit]


# Instance type names as AWS writes them: the wildcard summarise_types puts after a family (``c5.*``)
# cannot open emphasis after one of these, so the summary is shown as written.
_INSTANCE_TYPE = re.compile(r"[a-z0-9-]+\.[a-z0-9-]+")


def types_text(instance_types: Sequence[str], full: bool, quoted: OutsideText) -> str:
    """Instance types as a short summary (``c5.*``), as written when AWS's names are all it holds."""
    text = summarise_types(instance_types, None if full else 8)
    return text if all(_INSTANCE_TYPE.fullmatch(name) for name in instance_types) else quoted.prose(text)


def section_table(header: Sequence[str], items: Sequence, full: bool, row: Callable[[Any], Sequence[str]] = list) -> list[str]:
    """A table of one ``row`` per item, the first TABLE_ROWS of them unless ``full`` (rows never shown are
    never written, so nothing is cut for them)."""
    shown = first_of(items, None if full else TABLE_ROWS)
    lines = [table(header, [row(item) for item in shown])]
    if len(items) > len(shown):
        lines.append(f"\n… and {len(items) - len(shown)} more row(s) (see the full report)")
    return lines


def impact_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    """Per NodePool, each reason Karpenter would give, which nodes, the budget that paces them and the waves."""
    forecast = preview.forecast
    if forecast is None or not forecast.pools:
        return ""
    lines = ["", "#### Node impact"]
    if forecast.with_cluster:
        lines += section_table(
            ["NodePool", "nodes", "drifted", "by reason", "budget (Drifted)", "waves"],
            forecast.pools,
            full,
            lambda p: [
                quoted.code(p.node_pool, cell=True) + (" (removed)" if p.removed else ""),
                str(p.nodes),
                str(p.drifted_total),
                ", ".join(
                    [f"{quoted.prose(reason, cell=True)} {n}" for reason, n in sorted(p.drifted.items())]
                    + ([f"{p.undecided} only AWS can judge"] if p.undecided else [])
                )
                or "—",
                quoted.prose(p.budget.describe(), cell=True),
                "blocked (budget 0)" if p.waves is None else f"~{p.waves}",
            ],
        )
    else:
        # one row per reason, and one for the instance types whose AMI moves (a removed pool: that row alone)
        rows = [(p, d) for p in forecast.pools for d in (*p.drifts, *((None,) if p.moves or not p.drifts else ()))]
        lines += section_table(
            ["NodePool", "reason", "which nodes", "budget (Drifted)", "waves"],
            rows,
            full,
            lambda row: [
                quoted.code(row[0].node_pool, cell=True),
                "removed" if row[0].removed else (row[1].reason if row[1] else AMI_DRIFT),
                "its nodes are deleted"
                if row[0].removed
                else (quoted.prose(row[1].nodes, cell=True) if row[1] else "nodes of the moving instance types (below)"),
                quoted.prose(row[0].budget.describe(), cell=True),
                "—"
                if row[0].removed
                else ("" if row[1] and row[1].every_node else "up to ") + row[0].budget.pace(),  # ours: numbers
            ],
        )
    names = preview.ami_names()

    def why(pool: str, reason: Drift | AMIMove) -> str:
        if isinstance(reason, Drift):
            return f"- {quoted.code(pool)}: {reason.reason} ({quoted.prose(reason.change)})" + (
                f": {quoted.prose(reason.nodes)}" if forecast.with_cluster else ""
            )
        return (
            f"- {quoted.code(pool)}: {types_text(reason.instance_types, full, quoted)} would move from "
            f"{_ami(reason.old, names, quoted)} to {_ami(reason.new, names, quoted)} (AMIDrift)"
        )

    reasons = [(pool.node_pool, reason) for pool in forecast.pools for reason in (*pool.drifts, *pool.moves)]
    shown = first_of(reasons, None if full else TABLE_ROWS)
    lines += ["", *(why(*reason) for reason in shown), *and_more(len(reasons), len(shown))]
    for pool in forecast.pools:
        if pool.replacement is not None:
            lines += _replacement(pool.node_pool, pool.replacement, full, quoted)
    return "\n".join(lines) + "\n"


SHOWN_TYPES = 3  # a new NodeClaim's cheapest instance types named in its cell


def _replacement(node_pool: str, replacement: Replacement, full: bool, quoted: OutsideText) -> list[str]:
    """Folded: each pod of the pool's drifted nodes, and where it goes when they are replaced."""
    if not replacement.moves:
        return ["", f"- {quoted.code(node_pool)}: its drifted nodes run no pods that move"]
    claims = {claim.name: claim for claim in replacement.node_claims}
    stuck = len(replacement.stuck)
    summary = (
        f"Where the pods go when {quoted.html(node_pool)}'s {len(replacement.nodes)} drifted node(s) are replaced: "
        f"{len(replacement.moves)} pod(s), {len(claims)} new NodeClaim(s)" + (f", {stuck} fit nowhere" if stuck else "")
    )

    def to(move: Move) -> str:
        if move.to is None:
            return "fits nowhere: " + quoted.prose(move.reason or "no reason given", cell=True)
        if not move.new:
            return "existing node " + quoted.code(move.to, cell=True)
        claim = claims[move.to]
        named = ", ".join(quoted.code(t, cell=True) for t in claim.instance_types[:SHOWN_TYPES])
        more = f" and {len(claim.instance_types) - SHOWN_TYPES} more" if len(claim.instance_types) > SHOWN_TYPES else ""
        launch = (
            quoted.code(claim.capacity_type, cell=True)
            if claim.capacity_type
            else "no launch: " + quoted.prose(claim.launch_error or "", cell=True)
        )
        return f"new NodeClaim {quoted.code(move.to, cell=True)}: {named}{more} ({launch})"

    rows = section_table(
        ["pod", "from", "goes to"],
        replacement.moves,
        full,
        lambda move: [quoted.code(move.pod, cell=True), quoted.code(move.node, cell=True), to(move)],
    )
    return ["", f"<details><summary>{summary}</summary>", "", *rows, "", "</details>"]


def cost_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
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
    existing = head.forecast.existing
    if existing is not None:
        placed = sum(len(node.pods) for node in existing)
        lines.append(
            f"\nThe head's forecast starts from the cluster's nodes: {placed} pod(s) fit the room left on "
            f"{len(existing)} of them, at no new cost; only the rest make NodeClaims."
        )
    changed = cost.changed
    if changed:
        lines += [
            "",
            *section_table(
                ["NodePool", "base, monthly", "head, monthly", "change"],
                changed,
                full,
                lambda p: [
                    quoted.code(p.node_pool, cell=True),
                    *(
                        quoted.prose(text, cell=True)
                        for text in (cost_text.side_cell(p, p.base), cost_text.side_cell(p, p.head), cost_text.change_cell(p))
                    ),
                ],
            ),
        ]
        if cost.monthly is not None:  # a bar for a NodeClaim without a price would draw it as free
            lines += ["", cost_text.mermaid(cost)]
    limits = [(p.node_pool, row) for p in cost.pools if (row := cost_text.limit_row(p)) and row[0] != "unchanged"]
    if changed or limits:
        lines += _cost_details(preview, changed, limits, full, quoted)
    unschedulable = head.forecast.unschedulable
    if unschedulable:
        lines += ["", f"Pods the head cannot schedule ({sum(len(u.pods) for u in unschedulable)}):"]
        shown = first_of(unschedulable, None if full else LISTED)
        lines += [f"- {quoted.code(u.workload)} × {len(u.pods)}: {quoted.prose(u.message)}" for u in shown]
        lines += and_more(len(unschedulable), len(shown))
    return "\n".join(lines) + "\n"


def _cost_details(preview: Preview, changed: Sequence, limits: Sequence, full: bool, quoted: OutsideText) -> list[str]:
    """How the figures are made, folded: each changed NodePool's NodeClaims (types, counts, capacity types,
    price sources), where prices come from, what on-demand and spot are taken to cost, what is approximated,
    and what each NodePool whose limits changed costs at them."""
    cost = preview.cost
    base, head = cost.base, cost.head
    rows = None if full else TABLE_ROWS
    lines = ["", "<details><summary>How these figures are made</summary>", ""]
    lines += [
        f"- {quoted.code(p.node_pool)}: base {quoted.prose(cost_text.claims(p.base, base))}; "
        f"head {quoted.prose(cost_text.claims(p.head, head))}"
        for p in first_of(changed, rows)
    ]
    lines += and_more(len(changed), len(first_of(changed, rows)))
    if rounds := rounds_text(head.forecast):
        lines.append(f"- Head: {rounds}.")
    if head.prices:
        lines.append(f"- Prices: {quoted.prose(head.prices.summary)}.")
    lines.append(f"- {cost_text.ASSUMPTIONS}")
    approximated = head.forecast.approximated
    if approximated:
        lines.append(
            "- Approximated: "
            + "; ".join(f"{quoted.code(a.workload)} ({quoted.prose(', '.join(a.reasons))})" for a in first_of(approximated, rows))
            + "."
        )
    if limits:
        lines += [
            "",
            "What each NodePool whose limits changed costs at them, on its cheapest and its dearest compatible type:",
            "",
        ]
        lines += section_table(
            ["NodePool", "base", "head"],
            limits,
            full,
            lambda limit: [
                quoted.code(limit[0], cell=True),
                quoted.prose(limit[1][0], cell=True),
                quoted.prose(limit[1][1], cell=True),
            ],
        )
    return [*lines, "", "</details>"]


def _ami(ami_id: str | None, names: Mapping[str, str], quoted: OutsideText) -> str:
    if ami_id is None:
        return "no AMI (not launchable)"
    return quoted.code(ami_id) + (f" ({quoted.prose(names[ami_id])})" if ami_id in names else "")


def ami_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    if preview.head_plan is None:
        return ""
    names = preview.ami_names()
    lines = []
    for move in preview.moves:
        types = types_text(move.instance_types, full, quoted)
        pool = quoted.code(move.node_pool)
        if move.old is None:
            lines.append(
                f"- {pool}: {len(move.instance_types)} instance type(s) become launchable on {_ami(move.new, names, quoted)}: {types}"
            )
        elif move.new is None:
            lines.append(
                f"- {pool}: {len(move.instance_types)} instance type(s) no longer launchable (were on {quoted.code(move.old)}): {types}"
            )
        else:
            lines.append(f"- {pool}: {types}: {_ami(move.old, names, quoted)} → {_ami(move.new, names, quoted)}")
    for node_class, ami_id, name, reason in preview.new_skipped_amis():
        lines.append(
            f"- EC2NodeClass {quoted.code(node_class)} now matches {quoted.code(ami_id)} ({quoted.prose(name)}) "
            f"but skips it: {quoted.prose(reason)}"
        )
    for pool, reasons in _new_unserved(preview):
        lines.append(
            f"- {quoted.code(pool)}: allowed but without an AMI: " + "; ".join(f"{n} × {quoted.prose(r)}" for r, n in reasons)
        )
    if not lines:
        return ""
    shown = first_of(lines, None if full else TABLE_ROWS)
    return "\n" + "\n".join(["#### AMI changes", *shown, *and_more(len(lines), len(shown))]) + "\n"


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


def pulumi_section(preview: Preview, full: bool, quoted: OutsideText) -> str:
    pulumi = preview.pulumi
    if not pulumi or not (pulumi.steps or pulumi.policy_events or pulumi.diagnostics):
        return ""
    counts = ", ".join(f"{n} {op}" for op, n in pulumi.counts.items())
    lines = ["", f"<details><summary>Pulumi preview: {counts}</summary>", ""]
    if pulumi.steps:
        lines += section_table(
            ["op", "type", "name", "changed"],
            pulumi.steps,
            full,
            lambda s: [
                quoted.prose(s.op, cell=True),
                quoted.code(s.type, cell=True),
                quoted.code(s.name, cell=True),
                quoted.prose(", ".join(s.reasons), cell=True) or "—",
            ],
        )
    if pulumi.policy_events:
        lines += ["", "Policy events:"]
        lines += [
            f"- {quoted.prose(p.level)} {quoted.code(f'{p.pack}/{p.policy}')}: {quoted.prose(p.message)}"
            for p in first_of(pulumi.policy_events, None if full else TABLE_ROWS)
        ]
    other = [d for d in pulumi.diagnostics if d.severity != "error"]
    if other:
        lines += ["", "Diagnostics:"]
        lines += [
            f"- {quoted.prose(d.severity)}: {quoted.prose(d.message)}" for d in first_of(other, None if full else TABLE_ROWS)
        ]
    return "\n".join(lines + ["", "</details>"]) + "\n"


def policy_section(preview: Preview, full: bool, quoted: OutsideText, *, show_info: bool) -> str:
    """Warnings, waived findings and active waivers; ``info`` findings (house-style notes, many on any
    repository) only with ``show_info``, so the warnings are not lost among them."""
    others = [
        f
        for f in preview.findings
        if (f.severity is not Severity.ERROR or preview.waived(f)) and (show_info or f.severity is not Severity.INFO)
    ]
    waivers = preview.validation.waivers
    if not others and not waivers:
        return ""
    warnings = sum(1 for f in others if f.severity is Severity.WARNING and not preview.waived(f))
    waived = sum(1 for f in others if preview.waived(f))
    lines = [
        "",
        f"<details><summary>Policy results: {warnings} warning(s), {waived} waived, {len(waivers)} active waiver(s)</summary>",
        "",
    ]
    if others:
        lines += section_table(
            ["severity", "object", "path", "message", "rule"],
            others,
            full,
            lambda f: [
                "waived" if preview.waived(f) else f.severity.value,
                quoted.code(f"{f.kind}/{f.name}", cell=True),
                quoted.prose(f.path, cell=True),
                quoted.prose(f.message, cell=True),
                quoted.code(f.rule, cell=True),
            ],
        )
    if waivers:
        lines += ["", "Active waivers:"]
        lines += [
            f"- {quoted.code(w.rule)} on {quoted.code(w.object)} {quoted.prose(w.term)}: {quoted.prose(w.reason)}"
            for w in first_of(waivers, None if full else TABLE_ROWS)
        ]
    return "\n".join(lines + ["", "</details>"]) + "\n"
