"""The words of a cost comparison, as reviewers read cost in a pull request: the total monthly change first
("+$1,234 (+12%) — $10,300 → $11,534"), then per NodePool that changes its $/month on each side and the
change, then how each figure is made (instance types, counts, capacity types, where each price comes
from); and a Mermaid bar chart of cost per NodePool before and after, which GitHub renders in a comment.
A figure that is not known says so: it is never written as $0.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from karpenter_gitops.karpenter.scheduling import PlannedNode, PoolForecast
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH
from karpenter_gitops.output.workload_forecast_text import limit_text, node_mix, price_range

if TYPE_CHECKING:
    from karpenter_gitops.app.cost_comparison import CostComparison, PoolCost, Range
    from karpenter_gitops.app.workload_forecast import WorkloadForecast


def dollars(value: float) -> str:
    """``$1,234`` a month (cents only under $10, where they still matter)."""
    return f"${value:,.0f}" if abs(value) >= 10 else f"${value:,.2f}"


def per_month(value: Range) -> str:
    """``$10,300``, or ``$10,300–$10,900`` when spot NodeClaims make it a range."""
    low, high = value
    return dollars(low) if dollars(low) == dollars(high) else f"{dollars(low)}–{dollars(high)}"


def _signed(value: float) -> str:
    return "$0" if dollars(abs(value)) in ("$0.00", "$0") else ("+" if value > 0 else "−") + dollars(abs(value))


def percent(base: float, head: float) -> float | None:
    """The change as a share of the base; None when the base costs nothing (a new cost has no ratio)."""
    return None if base <= 0 else (head - base) / base * 100


def _percent(base: float, head: float) -> str:
    share = percent(base, head)
    if share is None:
        return "new"
    text = "0%" if abs(share) < 0.05 else f"{abs(share):.1f}%" if abs(share) < 10 else f"{abs(share):,.0f}%"
    return text if text == "0%" else ("+" if share > 0 else "−") + text


def _pair(low: str, high: str) -> str:
    return low if low == high else f"{low} to {high}"


def change(base: Range, head: Range) -> str:
    """``+$1,234 (+12%)``; with spot, ``+$1,234 to +$1,500 (+12% to +14%)``; from nothing, ``+$730 (new)``."""
    amount = _pair(*(_signed(h - b) for b, h in zip(base, head, strict=True)))
    return f"{amount} ({_pair(*(_percent(b, h) for b, h in zip(base, head, strict=True)))})"


def total(comparison: CostComparison) -> str:
    """The whole change in one line, first in the comment's cost section: ``+$1,234 (+12%) — $10,300 → $11,534``."""
    monthly = comparison.monthly
    if monthly is None:
        return f"not known: {comparison.unknown}"
    base, head = monthly
    if not comparison.changed:
        return f"no change — {per_month(head)} a month; every NodePool launches the same NodeClaims"
    return f"{change(base, head)} — {per_month(base)} → {per_month(head)}"


def describe(pool: PoolForecast | None) -> str:
    """One side of a NodePool in a few words: its NodeClaims and their $/hour."""
    if pool is None:
        return "no such NodePool"
    if not pool.nodes:
        return "no NodeClaims"
    return f"{node_mix(pool)} ({price_range(*pool.hourly)})"


def side_cell(pool: PoolCost, side: PoolForecast | None) -> str:
    """One side's $/month in the table: ``—`` where the NodePool is not, ``unknown`` where a NodeClaim has no price."""
    if side is None:
        return "—"
    monthly = pool.monthly(side)
    return per_month(monthly) if monthly else f"unknown ({pool.unpriced[side is pool.head]} NodeClaim(s) cannot launch)"


def change_cell(pool: PoolCost) -> str:
    base, head = pool.monthly(pool.base), pool.monthly(pool.head)
    if (pool.base and base is None) or (pool.head and head is None):
        return "unknown"
    return change(base or (0.0, 0.0), head or (0.0, 0.0))


def claims(side: PoolForecast | None, forecast: WorkloadForecast) -> str:
    """How one side's figure is made: ``2 × m5.large on-demand, $0.1920/h (Pricing API); 1 × c6g.large spot, ...``."""
    if side is None:
        return "no such NodePool"
    if not side.nodes:
        return "no NodeClaims"
    groups: dict[tuple[str, str, str], list[PlannedNode]] = {}
    for node in side.nodes:
        if not node.launch.candidates:
            key = ("cannot launch", "", node.launch.error or "no offering")
        else:
            key = (
                node.instance_type or "no type",
                node.launch.capacity_type or "",
                forecast.price_source(node) or "unknown source",
            )
        groups.setdefault(key, []).append(node)
    parts = []
    for (name, capacity, source), nodes in sorted(groups.items()):
        if name == "cannot launch":
            parts.append(f"{len(nodes)} NodeClaim(s) that cannot launch, no price: {source}")
            continue
        low, high = sum(n.hourly[0] for n in nodes), sum(n.hourly[1] for n in nodes)
        parts.append(f"{len(nodes)} × {name} {capacity}, {price_range(low, high)} ({source})")
    return "; ".join(parts)


#: How every figure is made, said once under the table.
ASSUMPTIONS = (
    "On-demand NodeClaims cost their cheapest offering (CreateFleet's lowest-price strategy); spot NodeClaims "
    "a range, from the cheapest to the dearest offering CreateFleet's price-capacity-optimized strategy may pick. "
    f"A month is {HOURS_PER_MONTH} hours; both sides are forecast for the same workloads at the same prices."
)


def limit_row(pool: PoolCost) -> tuple[str, str] | None:
    """(base, head) of what the pool costs at its limits; the base says ``unchanged`` when the change leaves it."""
    base, head = (side.limit_cost if side else None for side in (pool.base, pool.head))
    if base is None and head is None:
        return None
    return (
        "unchanged" if base == head else limit_text(base, "") if pool.base else "no such NodePool",
        limit_text(head, "") if pool.head else "no such NodePool",
    )


_LABEL = re.compile(r"[^A-Za-z0-9._/ -]")


def _label(text: str) -> str:
    """A Mermaid string: only characters that cannot end the string or the statement."""
    return _LABEL.sub("_", text)[:40]


def mermaid(comparison: CostComparison) -> str:
    """A bar chart of $/hour per NodePool, base and head side by side (spot: the low end of the range)."""
    labels, values = [], []
    for pool in comparison.pools:
        for side, forecast in (("base", pool.base), ("head", pool.head)):
            labels.append(f'"{_label(pool.node_pool)} {side}"')
            values.append(f"{forecast.hourly[0] if forecast else 0.0:.4f}")
    top = max((float(v) for v in values), default=0.0)
    return "\n".join([
        "```mermaid", "xychart-beta", '    title "$ per hour by NodePool, base and head"',
        f"    x-axis [{', '.join(labels)}]", f'    y-axis "$ per hour" 0 --> {max(top * 1.15, 0.01):.4f}',
        f"    bar [{', '.join(values)}]", "```",
    ])  # fmt: skip
