"""The cost forecast of ``plan --workloads`` (:class:`~karpenter_gitops.app.workload_forecast.WorkloadForecast`)
as text, and as the outline a Pulumi output holds. Everything that came from outside (workload and pool
names, messages quoting manifests, AWS answers) reaches the terminal as rich ``Text``, never as markup.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from karpenter_gitops.core import versions
from karpenter_gitops.karpenter.scheduling import Forecast, PlannedNode, PoolForecast
from karpenter_gitops.karpenter.scheduling.limits import Fill, LimitCost
from karpenter_gitops.karpenter.scheduling.nodes import HOURS_PER_MONTH
from karpenter_gitops.karpenter.scheduling.resources import CPU, quantity
from karpenter_gitops.karpenter.scheduling.scheduler import NODES
from karpenter_gitops.output.terminal import Terminal

if TYPE_CHECKING:
    from karpenter_gitops.app.workload_forecast import WorkloadForecast

SHOWN_NODES = 30  # NodeClaims listed per NodePool in text (JSON has all)
SHOWN_PODS = 20  # unschedulable pod names listed per workload


def outline(result: WorkloadForecast) -> dict:
    """The forecast as a Pulumi output holds it: per NodePool its NodeClaims (type, capacity type, zones, pod
    count, price), $/hour and $/month and its cost at its limits; the pods that cannot be scheduled and why.
    Candidates and pod names stay out: the output lives in every stack's state."""
    workloads = {"pods": result.pods, "problems": [str(p) for p in result.workloads.problems]}
    if result.forecast is None:
        return {**workloads, "unavailable": result.unavailable or "nothing to simulate"}
    forecast = result.forecast
    pools = {}
    for pool in forecast.pools:
        full = pool.to_json()
        claims = [
            {
                "instanceType": n.instance_type,
                "capacityType": n.launch.capacity_type,
                "zones": list(n.zones),
                "pods": len(n.pods),
                "pricePerHour": claim["pricePerHour"],
                "launchError": n.launch.error,
            }
            for n, claim in zip(pool.nodes, full["nodeClaims"], strict=True)
        ]
        pools[pool.node_pool] = {
            "nodeClaims": claims,
            **{k: full[k] for k in ("pods", "pricePerHour", "pricePerMonth", "unusable", "limitCost")},
        }
    full = forecast.to_json()
    return {
        **workloads, "karpenter": full["karpenter"], "prices": result.prices.summary if result.prices else forecast.price_source,
        "pricePerHour": full["pricePerHour"], "pricePerMonth": full["pricePerMonth"], "nodePools": pools,
        "unschedulable": [{"workload": u.workload, "pods": len(u.pods), "message": u.message,
                           "reasons": [r.to_json() for r in u.reasons]} for u in forecast.unschedulable],
        "approximated": full["approximated"], "notes": [*result.workloads.notes, *forecast.notes],
    }  # fmt: skip


# --- words shared by text, SVG and markdown ----------------------------------------------------------


def money(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def price_range(low: float, high: float, per: str = "h") -> str:
    return f"{money(low)}/{per}" if abs(high - low) < 1e-9 else f"{money(low)}–{money(high)}/{per}"


def monthly(low: float, high: float) -> str:
    return price_range(low * HOURS_PER_MONTH, high * HOURS_PER_MONTH, "month")


def node_mix(pool: PoolForecast) -> str:
    """``3 × c7g.xlarge, 1 × m6i.large``: the pool's NodeClaims by the type each launches (its cheapest)."""
    counts = Counter(n.instance_type or "no type" for n in pool.nodes)
    return ", ".join(f"{n} × {name}" for name, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def zones(names: Sequence[str]) -> str:
    """``us-west-2a/b/c``: zones of one region written once."""
    if not names:
        return "—"
    stem = names[0][:-1]
    if all(len(z) == len(names[0]) and z.startswith(stem) for z in names):
        return stem + "/".join(z[-1] for z in names)
    return ", ".join(names)


def _fill(fill: Fill) -> str:
    return f"{fill.nodes} × {fill.instance_type} {fill.capacity_type}, {money(fill.hourly)}/h ({money(fill.hourly * HOURS_PER_MONTH)}/month)"


def _limit_value(name: str, value: int) -> str:
    return f"{value / 1000:g}" if name in (CPU, NODES) else quantity(name, value)


def limit_text(cost: LimitCost | None, lead: str = "at its limits ") -> str:
    """``at its limits (cpu 1000, memory 1000Gi): cheapest 250 × c7g.xlarge spot, $10.75/h ($7,848/month); dearest ...``."""
    if cost is None:
        return "no cpu/memory limit"
    limits = f"{lead}({', '.join(f'{name} {_limit_value(name, value)}' for name, value in sorted(cost.limits.items()))})"
    if cost.cheapest is None or cost.dearest is None:
        return f"{limits}: no compatible instance type fits under them"
    if cost.cheapest == cost.dearest:
        return f"{limits}: {_fill(cost.cheapest)}"
    return f"{limits}: cheapest {_fill(cost.cheapest)}; dearest {_fill(cost.dearest)}"


def rounds_text(forecast: Forecast) -> str | None:
    """``Karpenter's provisioning takes 3 rounds (...): round 1 made 4 NodeClaim(s) and left 6 pod(s) pending; round 2
    made 3, left 2; ...``; None when one round made every NodeClaim (the next, finding nothing left to do, is no news)."""
    making = [r for r in forecast.rounds if r.node_claims]
    if len(making) <= 1 and forecast.settled:
        return None
    steps = [
        f"round {r.number} made {sum(r.node_claims.values())}" + (" NodeClaim(s)" if i == 0 else "")
        + (f" and left {r.pending} pod(s) pending" if i == 0 else f", left {r.pending}")
        for i, r in enumerate(making)
    ]  # fmt: skip
    lead = (
        f"Karpenter's provisioning takes {len(making)} rounds"
        if forecast.settled
        else f"the forecast stops at its bound of {len(forecast.rounds)} round(s) with NodeClaims still being made"
    )
    return f"{lead} (the NodeClaims launch between rounds; the pods still pending are placed again): {'; '.join(steps)}"


def _percent(node: PlannedNode, name: str) -> str:
    share = node.utilisation.get(name)
    return "—" if share is None else f"{share:.0%}"


# --- text --------------------------------------------------------------------------------------------


def print_forecast(result: WorkloadForecast, console: Terminal) -> None:
    console.rule(("Forecast", "bold"), " — what Karpenter would launch for the workloads")
    workloads = result.workloads
    daemons = f", {len(workloads.daemon_sets)} DaemonSet(s) counted on every node they land on" if workloads.daemon_sets else ""
    console.print(f"  read {result.pods} pod(s){daemons} from {', '.join(result.sources) or 'no path'}")
    for problem in workloads.problems:
        console.print(("  left out ", "yellow"), str(problem))
    for note in workloads.notes:
        console.print((f"  note: {note}", "dim"))
    if result.forecast is None:
        console.print(("  no forecast: ", "yellow"), result.unavailable or "nothing to simulate")
        console.blank()
        return
    forecast = result.forecast
    if not result.pods:
        console.print(("  no pods in the workloads given: nothing to launch, the forecast is empty", "yellow"))
    console.print(
        (
            f"  Karpenter {versions.show(forecast.release)}; prices: {result.prices.summary if result.prices else forecast.price_source}",
            "dim",
        )
    )
    for note in result.prices.notes if result.prices else ():
        console.print((f"  prices: {note}", "yellow"))
    rounds = rounds_text(forecast)
    if rounds:
        console.print(f"  {rounds}")
    for pool in forecast.pools:
        _pool(console, result, pool, by_round=rounds is not None)
    _unschedulable(console, forecast)
    for approximated in forecast.approximated:
        console.print(
            ("  approximated ", "yellow"),
            f"{approximated.workload} ({approximated.pods} pod(s)): ",
            "; ".join(approximated.reasons),
        )
    for note in forecast.notes:
        console.print((f"  note: {note}", "dim"))
    low, high = forecast.hourly
    scheduled = sum(p.pods for p in forecast.pools)
    nodes = sum(len(p.nodes) for p in forecast.pools)
    unscheduled = sum(len(u.pods) for u in forecast.unschedulable)
    console.print(
        ("  total: ", "bold"), (f"{nodes} NodeClaim(s) for {scheduled} pod(s), {price_range(low, high)} ({monthly(low, high)})", "bold"),
        (f"; {unscheduled} pod(s) cannot be scheduled", "red") if unscheduled else "",
    )  # fmt: skip
    console.blank()


def _pool(console: Terminal, result: WorkloadForecast, pool: PoolForecast, by_round: bool = False) -> None:
    low, high = pool.hourly
    if not pool.nodes:
        why = f": {pool.unusable}" if pool.unusable else ""
        console.print("  NodePool ", (pool.node_pool, "bold"), f": no NodeClaims{why}")
        _limit(console, pool)
        return
    console.print(
        "  NodePool ",
        (pool.node_pool, "bold"),
        f": {len(pool.nodes)} NodeClaim(s) ({node_mix(pool)}) for {pool.pods} pod(s), "
        f"{price_range(low, high)} ({monthly(low, high)})",
    )
    rows = []
    for node in pool.nodes[:SHOWN_NODES]:
        others = len(node.launch.instance_types) - 1
        name = [node.instance_type or "—", *([(f" (+{others})", "dim")] if others > 0 else [])]
        rows.append(
            [
                name,
                node.launch.capacity_type or node.launch.error or "—",
                zones(node.zones),
                str(len(node.pods)),
                _percent(node, "cpu"),
                _percent(node, "memory"),
                price_range(*node.hourly),
                result.price_source(node) or "—",
                *([str(node.round)] if by_round else []),
            ]
        )
    console.table(
        (
            "instance type (+others)",
            "capacity",
            "zones",
            "pods",
            "cpu",
            "memory",
            "$/hour",
            "price from",
            *(("round",) if by_round else ()),
        ),
        rows,
        indent=4,
    )
    amis = sorted({ami for node in pool.nodes if (ami := result.ami(node))})
    if amis:
        console.print((f"    AMI{'s' if len(amis) > 1 else ''}: {', '.join(amis)}", "dim"))
    if len(pool.nodes) > SHOWN_NODES:
        console.print((f"    … and {len(pool.nodes) - SHOWN_NODES} more NodeClaim(s) (see --format json)", "dim"))
    _limit(console, pool)


def _limit(console: Terminal, pool: PoolForecast) -> None:
    if pool.limit_cost is not None:
        console.print(f"    {limit_text(pool.limit_cost)}")


def _unschedulable(console: Terminal, forecast: Forecast) -> None:
    for group, style in ((forecast.unschedulable, "red"), (forecast.ignored, "yellow")):
        for entry in group:
            label = "cannot schedule" if group is forecast.unschedulable else "ignored by Karpenter"
            names = ", ".join(entry.pods[:SHOWN_PODS]) + (
                f", … {len(entry.pods) - SHOWN_PODS} more" if len(entry.pods) > SHOWN_PODS else ""
            )
            console.print((f"  {label} ", style), f"{entry.workload} ({len(entry.pods)} pod(s): {names}): {entry.message}")
            for reason in entry.reasons if group is forecast.unschedulable else ():
                console.print((f"    {reason.node_pool or 'every NodePool'}: {reason.kind}: {reason.message}", "dim"))
