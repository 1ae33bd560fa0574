"""The human form of a :class:`~karpenter_gitops.karpenter.status.prediction.Plan`: readable tables for a terminal or CI log.

Everything AWS answered (AMI names, security group names, error messages) is shown as AWS holds it:
lines are built from parts by :mod:`karpenter_gitops.output.terminal`, never as markup.
"""

from __future__ import annotations

from collections import Counter

from karpenter_gitops.core.outcome import Outcome
from karpenter_gitops.karpenter.nodeoverlay.applied import FirstChoice
from karpenter_gitops.karpenter.status.prediction import NodeClassPlan, NodePoolPlan, OverlayPlan, Plan, PoolOverlays
from karpenter_gitops.output.terminal import Terminal
from karpenter_gitops.output.transient import summed

_STATUS_STYLE = {"True": "green", "False": "red", "Unknown": "yellow"}
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_SHOWN_UNSERVED = 5
_SHOWN_CHANGES = 5


def _variant(ami) -> str:
    """An AMI's requirement set in words: its architecture and the GPU/accelerator variant it serves."""
    exists = {r.key.rpartition("/")[2] for r in ami.requirements if r.operator == "Exists"}
    absent = {r.key.rpartition("/")[2] for r in ami.requirements if r.operator == "DoesNotExist"}
    if "instance-gpu-count" in exists:
        variant = "nvidia"
    elif "instance-accelerator-count" in exists:
        variant = "neuron"
    elif {"instance-gpu-count", "instance-accelerator-count"} <= absent:
        variant = "standard"
    else:
        variant = "any instance type"
    return f"{ami.architecture} {variant}"


def _node_class(console: Terminal, name: str, plan: NodeClassPlan) -> None:
    ready = plan.condition("Ready")
    status = ready.status if ready else "Unknown"
    console.rule((f"EC2NodeClass {name}", "bold"), " — Ready=", (status, _STATUS_STYLE[status]))
    if plan.no_status:
        console.print("  ", (plan.no_status, "red"), " (see the findings)")
    healthy = [c.type for c in plan.conditions if c.status == "True" and c.type != "Ready"]
    if healthy:
        console.print("  ", ("True", "green"), ": " + ", ".join(healthy))
    unhealthy = [c for c in plan.conditions if c.status != "True" and c.type != "Ready"]
    if unhealthy:
        console.table(
            ("condition", "status", "reason", "message"),
            [(c.type, (c.status, _STATUS_STYLE[c.status]), c.reason or "", c.message or "") for c in unhealthy],
        )
    if plan.amis:
        console.table(
            ("AMI", "serves", "name"),
            [(ami.id, _variant(ami), ami.name + (" (deprecated)" if ami.deprecated else "")) for ami in plan.amis],
        )
    for skipped in plan.skipped_amis:
        console.print("  ", ("skipped", "yellow"), f" {skipped.id} {skipped.name}: {skipped.reason}")
    if plan.subnets:
        console.print("  subnets: " + ", ".join(f"{s.id} ({s.zone}, {s.available_ips} free IPs)" for s in plan.subnets))
    if plan.security_groups:
        console.print("  security groups: " + ", ".join(f"{g.id} ({g.name})" for g in plan.security_groups))
    if plan.instance_profile:
        console.print(f"  instance profile: {plan.instance_profile}")
    console.blank()


def _node_pool(console: Terminal, name: str, plan: NodePoolPlan) -> None:
    if plan.not_mapped:
        console.rule((f"NodePool {name}", "bold"))
        console.print(f"  not mapped: {plan.not_mapped}")
        console.blank()
        return
    console.rule((f"NodePool {name}", "bold"), f" → EC2NodeClass {plan.node_class}")
    if plan.awaiting:
        console.print("  ", ("not mapped yet", "yellow"), f": waiting for {plan.awaiting}")
        console.blank()
        return
    mapping = plan.mapping
    per_ami = Counter(mapping.instance_types.values())
    console.print(f"  {len(mapping.instance_types)} instance type(s) can launch")
    for ami_id, count in sorted(per_ami.items()):
        console.print(f"    {ami_id}: {count} type(s)")
    if mapping.no_instance_types:
        console.print("  ", ("no instance type allowed", "red"), f": {mapping.no_instance_types}")
    if mapping.unserved:
        console.print("  ", (f"{len(mapping.unserved)} allowed type(s) have no AMI", "yellow"), ":")
        for unserved in mapping.unserved[:_SHOWN_UNSERVED]:
            console.print(f"    {unserved.type}: {unserved.reason}")
        if len(mapping.unserved) > _SHOWN_UNSERVED:
            console.print(f"    … and {len(mapping.unserved) - _SHOWN_UNSERVED} more (see --format json)")
    for shortfall in mapping.min_values_shortfalls:
        console.print("  ", ("minValues not met", "red"), f": {shortfall.to_json()}")
    if plan.overlays:
        _pool_overlays(console, plan.overlays)
    console.blank()


def _money(price: float | None) -> str:
    return "unknown" if price is None else f"${price:.6g}/h"


def _first_choice(choice: FirstChoice | None) -> str:
    return choice.describe() if choice else "none with a known price"


def _pool_overlays(console: Terminal, overlays: PoolOverlays) -> None:
    rows = [row for row in overlays.price_rows if row.after is not None]
    unknown = {row.instance_type for row in overlays.price_rows if row.after is None}
    if rows or unknown:
        console.print(f"  NodeOverlays reprice {len({r.instance_type for r in overlays.price_rows})} instance type(s):")
        for row in rows[:_SHOWN_CHANGES]:
            console.print(
                f"    {row.instance_type} {row.capacity_type} ({len(row.zones)} zone(s)): "
                f"{_money(row.before)} → {_money(row.after)} by {row.overlay} ({row.change})"
            )
        if len(rows) > _SHOWN_CHANGES:
            console.print(f"    … and {len(rows) - _SHOWN_CHANGES} more (see --format json)")
        if unknown:
            console.print(f"    and adjust the spot price of {len(unknown)} type(s), which is not known offline")
    changes = overlays.capacity_changes
    if changes:
        console.print(f"  NodeOverlays set capacity on {len({c.instance_type for c in changes})} instance type(s):")
        for change in changes[:_SHOWN_CHANGES]:
            was = f"{change.before} → " if change.before is not None else ""
            console.print(f"    {change.instance_type}: {change.resource}: {was}{change.quantity} by {change.overlay}")
        if len(changes) > _SHOWN_CHANGES:
            console.print(f"    … and {len(changes) - _SHOWN_CHANGES} more (see --format json)")
    before, after = overlays.before, overlays.after
    spot = " (spot prices unknown offline)" if after and after.unknown_spot else ""
    if overlays.moved:
        console.print(
            "  ", ("first choice", "yellow"), f": {_first_choice(before)} → {_first_choice(after)} with the overlays{spot}"
        )
    elif before and after and before.price != after.price:
        console.print(f"  first choice: {_first_choice(after)} with the overlays ({_money(before.price)} without){spot}")
    else:
        console.print(f"  first choice: {_first_choice(after)}, no overlay changes it{spot}")


def _node_overlays(console: Terminal, plan: OverlayPlan) -> None:
    console.rule(("NodeOverlays", "bold"))
    if plan.not_applied:
        console.print("  ", ("not applied", "yellow"), f": {plan.not_applied}")
    for name in plan.refused:
        console.print(f"  {name}: refused by the API server (see findings), so Karpenter never sees it")
    for name, condition in sorted(plan.conditions.items()):
        status = (f"  {name}: ValidationSucceeded=", (condition.status, _STATUS_STYLE[condition.status]))
        conflict = plan.conflicts.get(name)
        if conflict:
            console.print(
                *status,
                f" {condition.reason}: {condition.message} "
                f"({conflict.other} also sets {conflict.what} of {conflict.instance_type} in NodePool {conflict.node_pool})",
            )
        elif condition.status == "False":
            console.print(*status, f" {condition.reason}: {condition.message}")
        else:
            console.print(*status)
    if plan.base_prices:
        priced = ", ".join(f"{name} {_money(price)}" for name, price in sorted(plan.base_prices.items()))
        console.print(f"  priced by an overlay, as Karpenter prices a type it has no price for: {priced}")
    if plan.prices and not plan.not_applied:
        console.print("  ", (plan.prices, "dim"))
    console.blank()


def print_plan(plan: Plan, console: Terminal) -> None:
    for name, node_class in sorted(plan.node_classes.items()):
        _node_class(console, name, node_class)
    for name, node_pool in sorted(plan.node_pools.items()):
        _node_pool(console, name, node_pool)
    if plan.node_overlays:
        _node_overlays(console, plan.node_overlays)
    if plan.findings:
        console.rule(("findings", "bold"))
        for f in plan.findings:
            console.print(
                "  ",
                (f"{f.severity.value:<7}", _SEVERITY_STYLE[f.severity.value]),
                f" {f.kind}/{f.name} {f.path}: {f.message}  ",
                (f"[{f.rule}]", "dim"),
            )
        console.blank()
    for note in summed(plan.transient):
        console.print(("transient:", "yellow"), f" {note}")
    calls = ", ".join(f"{op} {n}" for op, n in sorted(plan.aws_calls.items())) or "none (all answers cached)"
    console.print((f"AWS calls: {calls}", "dim"))
    ready = sum(1 for p in plan.node_classes.values() if p.ready)
    mapped = sum(1 for p in plan.node_pools.values() if p.mapping is not None)
    verdict = {
        Outcome.OK: ("ready", "green"),
        Outcome.FINDINGS: ("persistent problems", "red"),
        Outcome.TRANSIENT: ("transient: nothing decided, retry", "yellow"),
    }
    counts = (
        f"{ready}/{len(plan.node_classes)} EC2NodeClass(es) predicted Ready, {mapped}/{len(plan.node_pools)} NodePool(s) mapped: "
    )
    console.print((counts, "bold"), (verdict[plan.exit_code][0], f"bold {verdict[plan.exit_code][1]}"))
