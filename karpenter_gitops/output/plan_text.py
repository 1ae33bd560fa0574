"""The human form of a :class:`~karpenter_gitops.core.plan.Plan`: readable tables for a terminal or CI log."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from karpenter_gitops.core.plan import NodeClassPlan, NodePoolPlan, Plan

_STATUS_STYLE = {"True": "green", "False": "red", "Unknown": "yellow"}
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
_SHOWN_UNSERVED = 5


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


def _node_class(console: Console, name: str, plan: NodeClassPlan) -> None:
    ready = plan.condition("Ready")
    status = ready.status if ready else "Unknown"
    console.rule(f"[bold]EC2NodeClass {name}[/] — Ready=[{_STATUS_STYLE[status]}]{status}[/]", align="left")
    healthy = [c.type for c in plan.conditions if c.status == "True" and c.type != "Ready"]
    if healthy:
        console.print("  [green]True[/]: " + ", ".join(healthy))
    unhealthy = [c for c in plan.conditions if c.status != "True" and c.type != "Ready"]
    if unhealthy:
        conditions = Table("condition", "status", "reason", "message", box=None, pad_edge=False)
        for c in unhealthy:
            # messages quote user text ("kubeReserved[cpu]") that rich would read as its markup
            conditions.add_row(c.type, f"[{_STATUS_STYLE[c.status]}]{c.status}[/]", escape(c.reason or ""), escape(c.message or ""))
        console.print(conditions)
    if plan.amis:
        amis = Table("AMI", "serves", "name", box=None, pad_edge=False)
        for ami in plan.amis:
            amis.add_row(ami.id, _variant(ami), ami.name + (" (deprecated)" if ami.deprecated else ""))
        console.print(amis)
    for skipped in plan.skipped_amis:
        console.print(f"  [yellow]skipped[/] {skipped.id} {skipped.name}: {skipped.reason}")
    if plan.subnets:
        console.print("  subnets: " + ", ".join(f"{s.id} ({s.zone}, {s.available_ips} free IPs)" for s in plan.subnets))
    if plan.security_groups:
        console.print("  security groups: " + ", ".join(f"{g.id} ({g.name})" for g in plan.security_groups))
    if plan.instance_profile:
        console.print(f"  instance profile: {plan.instance_profile}")
    console.print()


def _node_pool(console: Console, name: str, plan: NodePoolPlan) -> None:
    if plan.not_mapped:
        console.rule(f"[bold]NodePool {name}[/]", align="left")
        console.print(f"  not mapped: {plan.not_mapped}\n")
        return
    console.rule(f"[bold]NodePool {name}[/] → EC2NodeClass {plan.node_class}", align="left")
    if plan.awaiting:
        console.print(f"  [yellow]not mapped yet[/]: waiting for {plan.awaiting}\n")
        return
    mapping = plan.mapping
    per_ami = Counter(mapping.instance_types.values())
    console.print(f"  {len(mapping.instance_types)} instance type(s) can launch")
    for ami_id, count in sorted(per_ami.items()):
        console.print(f"    {ami_id}: {count} type(s)")
    if mapping.no_instance_types:
        console.print(f"  [red]no instance type allowed[/]: {mapping.no_instance_types}")
    if mapping.unserved:
        console.print(f"  [yellow]{len(mapping.unserved)} allowed type(s) have no AMI[/]:")
        for unserved in mapping.unserved[:_SHOWN_UNSERVED]:
            console.print(f"    {unserved.type}: {unserved.reason}")
        if len(mapping.unserved) > _SHOWN_UNSERVED:
            console.print(f"    … and {len(mapping.unserved) - _SHOWN_UNSERVED} more (see --format json)")
    for shortfall in mapping.min_values_shortfalls:
        console.print(f"  [red]minValues not met[/]: {shortfall.to_json()}")
    console.print()


def print_plan(plan: Plan, console: Console) -> None:
    for name, node_class in sorted(plan.node_classes.items()):
        _node_class(console, name, node_class)
    for name, node_pool in sorted(plan.node_pools.items()):
        _node_pool(console, name, node_pool)
    if plan.findings:
        console.rule("[bold]findings[/]", align="left")
        for f in plan.findings:
            style = _SEVERITY_STYLE[f.severity.value]
            console.print(f"  [{style}]{f.severity.value:<7}[/] {f.kind}/{f.name} {escape(f.path)}: {escape(f.message)}  [dim]\\[{f.rule}][/]")
        console.print()
    for note in plan.transient:
        console.print(f"[yellow]transient:[/] {note}")
    calls = ", ".join(f"{op} {n}" for op, n in sorted(plan.aws_calls.items())) or "none (all answers cached)"
    console.print(f"[dim]AWS calls: {calls}[/]")
    ready = sum(1 for p in plan.node_classes.values() if p.ready)
    mapped = sum(1 for p in plan.node_pools.values() if p.mapping is not None)
    verdict = {0: "[green]ready[/]", 1: "[red]persistent problems[/]", 3: "[yellow]transient: nothing decided, retry[/]"}
    console.print(
        f"[bold]{ready}/{len(plan.node_classes)} EC2NodeClass(es) predicted Ready, "
        f"{mapped}/{len(plan.node_pools)} NodePool(s) mapped: {verdict[plan.exit_code]}[/]"
    )
