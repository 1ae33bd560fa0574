"""The words of a cost comparison: what each NodePool had and will have, the change in $/hour and $/month
("4 × m6i.large ($0.384/h) → 3 × c7g.xlarge ($0.435/h): +$0.051/h, +$37/month"), and a Mermaid bar chart
of cost per NodePool before and after, which GitHub renders in a comment.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from karpenter_gitops.karpenter.scheduling import PoolForecast
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH
from karpenter_gitops.output.workload_forecast_text import limit_text, money, node_mix, price_range

if TYPE_CHECKING:
    from karpenter_gitops.app.cost_comparison import CostComparison, PoolCost


def signed(value: float, per: str) -> str:
    sign = "+" if value >= 0 else "−"
    amount = abs(value)
    text = f"${amount:,.0f}" if per == "month" and amount >= 10 else money(amount)
    return f"{sign}{text}/{per}"


def change(low: float, high: float, per: str) -> str:
    return signed(low, per) if abs(high - low) < 1e-9 else f"{signed(low, per)} to {signed(high, per)}"


def describe(pool: PoolForecast | None) -> str:
    """One side of a NodePool: its NodeClaims and their price."""
    if pool is None:
        return "no such NodePool"
    if not pool.nodes:
        return "no NodeClaims"
    return f"{node_mix(pool)} ({price_range(*pool.hourly)})"


def delta_text(pool: PoolCost) -> str:
    """``+$0.051/h, +$37/month``."""
    low, high = pool.delta
    return f"{change(low, high, 'h')}, {change(low * HOURS_PER_MONTH, high * HOURS_PER_MONTH, 'month')}"


def sentence(pool: PoolCost) -> str:
    """``14 pod(s): 4 × m6i.large ($0.384/h) → 3 × c7g.xlarge ($0.435/h): +$0.051/h, +$37/month``."""
    pods = max(pool.base.pods if pool.base else 0, pool.head.pods if pool.head else 0)
    return f"{pods} pod(s): {describe(pool.base)} → {describe(pool.head)}: {delta_text(pool)}"


def limit_row(pool: PoolCost) -> tuple[str, str] | None:
    """(base, head) of what the pool costs at its limits; the base says ``unchanged`` when the change leaves it."""
    base, head = (side.limit_cost if side else None for side in (pool.base, pool.head))
    if base is None and head is None:
        return None
    return (
        "unchanged" if base == head else limit_text(base, "") if pool.base else "no such NodePool",
        limit_text(head, "") if pool.head else "no such NodePool",
    )


def summary(comparison: CostComparison) -> str:
    """The whole change: both sides' $/hour and the difference per hour and per month."""
    (base_low, base_high), (head_low, head_high) = comparison.hourly
    low, high = head_low - base_low, head_high - base_high
    return (
        f"{price_range(base_low, base_high)} → {price_range(head_low, head_high)}: {change(low, high, 'h')}, "
        f"{change(low * HOURS_PER_MONTH, high * HOURS_PER_MONTH, 'month')}"
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
