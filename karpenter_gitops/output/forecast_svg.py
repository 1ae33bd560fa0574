"""A picture of the forecast: each NodePool's NodeClaims and the pods packed on them, as one SVG.

One row of nodes per NodePool. A node is a card naming the instance type it launches, its capacity
type and price; inside it two columns fill up as its allocatable is used: CPU on the left, memory
on the right, DaemonSet overhead in grey at the bottom, then one band per pod coloured by its
workload (the legend names the colours). Deterministic (no timestamps, sorted input), and every
name in it is XML-escaped: it is safe to publish beside a report.
"""

from __future__ import annotations

import colorsys
import hashlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

from karpenter_gitops.core import versions
from karpenter_gitops.karpenter.scheduling import PlannedNode, Pod
from karpenter_gitops.karpenter.scheduling.resources import CPU, MEMORY
from karpenter_gitops.output.workload_forecast_text import monthly, node_mix, price_range

if TYPE_CHECKING:
    from karpenter_gitops.app.workload_forecast import WorkloadForecast

SHOWN_NODES = 24  # cards per NodePool; the rest are counted
_WIDTH, _CARD_W, _CARD_H, _GAP, _MARGIN = 1040, 150, 190, 12, 20
_PER_ROW = (_WIDTH - 2 * _MARGIN + _GAP) // (_CARD_W + _GAP)
_BAR_TOP, _BAR_H, _BAR_W = 46, 112, 56
_DAEMON, _FREE, _INK = "#b0b0b0", "#f4f4f4", "#222"
_FONT = 'font-family="ui-sans-serif, system-ui, sans-serif"'


#: Colours told apart at a glance (Tableau 10), given to the workloads in name order; beyond ten, drawn from a hash.
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")


def colours(workloads: Sequence[str]) -> dict[str, str]:
    """Each workload's colour in one picture: the palette in name order, then a stable colour from the name."""
    out = {}
    for index, workload in enumerate(sorted(set(workloads))):
        if index < len(PALETTE):
            out[workload] = PALETTE[index]
            continue
        hue = int(hashlib.sha256(workload.encode()).hexdigest()[:4], 16) / 0xFFFF
        red, green, blue = colorsys.hls_to_rgb(hue, 0.55, 0.55)
        out[workload] = f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"
    return out


def _text(x: float, y: float, text: str, size: int = 12, weight: str = "normal", fill: str = _INK, anchor: str = "start") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" font-weight="{weight}" fill="{fill}" '
        f'text-anchor="{anchor}">{escape(text)}</text>'
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, title: str | None = None, stroke: str = "none") -> str:
    tip = f"<title>{escape(title)}</title>" if title else ""
    return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill={quoteattr(fill)} stroke="{stroke}">{tip}</rect>'


def _column(x: float, y: float, name: str, node: PlannedNode, pods: list[Pod], palette: Mapping[str, str]) -> list[str]:
    """One resource's column: overhead, then each pod's share of the allocatable, from the bottom up."""
    total = node.allocatable.get(name, 0)
    parts = [_rect(x, y, _BAR_W, _BAR_H, _FREE, stroke="#999")]
    if total <= 0:
        return parts
    bottom = y + _BAR_H
    used = node.daemon_overhead.get(name, 0)
    height = min(_BAR_H, _BAR_H * used / total)
    if height > 0:
        parts.append(_rect(x, bottom - height, _BAR_W, height, _DAEMON, "DaemonSet overhead"))
    level = height
    for pod in pods:
        share = _BAR_H * pod.template.requests.get(name, 0) / total
        share = min(share, _BAR_H - level)
        if share <= 0:
            continue
        parts.append(
            _rect(x, bottom - level - share, _BAR_W, share, palette[_workload(pod)], f"{pod.uid} ({pod.template.workload})")
        )
        level += share
    parts.append(_text(x + _BAR_W / 2, y + _BAR_H + 13, f"{name} {node.utilisation.get(name, 0):.0%}", 10, anchor="middle"))
    return parts


def _workload(pod: Pod) -> str:
    return f"{pod.namespace}/{pod.template.workload}"


def _card(
    x: float, y: float, node: PlannedNode, pods: Mapping[str, Pod], ami: str | None, palette: Mapping[str, str]
) -> list[str]:
    title = f"{node.instance_type or 'no type'}"
    capacity = node.launch.capacity_type or "cannot launch"
    zones = ", ".join(node.zones) or "no zone"
    tip = f"{title} ({capacity}) in {zones}; AMI {ami or 'none'}"
    parts = [
        f"<g><title>{escape(tip)}</title>",
        _rect(x, y, _CARD_W, _CARD_H, "#fff", stroke="#666"),
        _text(x + 8, y + 17, title, 13, "bold"),
        _text(x + 8, y + 33, f"{capacity}, {len(node.pods)} pod(s)", 11, fill="#555"),
    ]
    members = [pods[uid] for uid in node.pods if uid in pods]
    parts += _column(x + 12, y + _BAR_TOP, CPU, node, members, palette)
    parts += _column(x + 12 + _BAR_W + 14, y + _BAR_TOP, MEMORY, node, members, palette)
    parts.append(_text(x + 8, y + _CARD_H - 8, price_range(*node.hourly), 11, "bold"))
    parts.append("</g>")
    return parts


def svg(result: WorkloadForecast) -> str:
    """The picture; a forecast that could not be made is drawn as one line saying why."""
    body: list[str] = []
    y = _MARGIN + 8
    forecast = result.forecast
    if forecast is None:
        body.append(_text(_MARGIN, y + 12, f"No forecast: {result.unavailable or 'nothing to simulate'}", 14))
        return _document(body, y + 40)
    low, high = forecast.hourly
    body.append(
        _text(
            _MARGIN,
            y + 12,
            f"What Karpenter {versions.show(forecast.release)} would launch for {result.pods} pod(s): "
            f"{price_range(low, high)} ({monthly(low, high)})",
            16,
            "bold",
        )
    )
    y += 30
    pods = {pod.uid: pod for pod in result.workloads.pods}
    palette = colours([_workload(pod) for pod in pods.values()])
    workloads: dict[str, None] = {}
    for pool in forecast.pools:
        heading = f"NodePool {pool.node_pool}: "
        if pool.nodes:
            heading += f"{len(pool.nodes)} NodeClaim(s) ({node_mix(pool)}), {pool.pods} pod(s), {price_range(*pool.hourly)}"
        else:
            heading += "no NodeClaims" + (f": {pool.unusable}" if pool.unusable else "")
        body.append(_text(_MARGIN, y + 14, heading, 14, "bold"))
        y += 26
        shown = pool.nodes[:SHOWN_NODES]
        for index, node in enumerate(shown):
            column, row = index % _PER_ROW, index // _PER_ROW
            body += _card(_MARGIN + column * (_CARD_W + _GAP), y + row * (_CARD_H + _GAP), node, pods, result.ami(node), palette)
            workloads.update((_workload(pods[uid]), None) for uid in node.pods if uid in pods)
        if shown:
            y += ((len(shown) - 1) // _PER_ROW + 1) * (_CARD_H + _GAP)
        if len(pool.nodes) > SHOWN_NODES:
            body.append(_text(_MARGIN, y + 12, f"… and {len(pool.nodes) - SHOWN_NODES} more NodeClaim(s)", 12, fill="#555"))
            y += 20
        y += 8
    unscheduled = sum(len(u.pods) for u in forecast.unschedulable)
    if unscheduled:
        body.append(
            _text(
                _MARGIN,
                y + 14,
                f"{unscheduled} pod(s) cannot be scheduled: " + "; ".join(u.workload for u in forecast.unschedulable[:6]),
                13,
                fill="#b00020",
            )
        )
        y += 24
    y = _legend(body, y, sorted(workloads), palette)
    return _document(body, y + _MARGIN)


def _legend(body: list[str], y: float, workloads: list[str], palette: Mapping[str, str]) -> float:
    x = _MARGIN
    body.append(_rect(x, y + 3, 12, 12, _DAEMON))
    body.append(_text(x + 17, y + 13, "DaemonSet overhead", 11))
    x += 150
    for name in workloads:
        width = 30 + 7 * len(name)
        if x + width > _WIDTH - _MARGIN:
            x, y = _MARGIN, y + 18
        body.append(_rect(x, y + 3, 12, 12, palette[name]))
        body.append(_text(x + 17, y + 13, name, 11))
        x += width
    return y + 22


def _document(body: list[str], height: float) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{height:.0f}" viewBox="0 0 {_WIDTH} {height:.0f}" '
        f'{_FONT} role="img">\n<rect width="100%" height="100%" fill="#fafafa"/>\n' + "\n".join(body) + "\n</svg>\n"
    )
