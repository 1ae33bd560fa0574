"""Hygiene policies on NodePools (``policy/``): limits, instance size, node lifetime, disruption and spot."""

from __future__ import annotations

from karpenter_gitops.core import labels
from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEPOOL
from karpenter_gitops.core.text import duration_seconds
from karpenter_gitops.rules.registry import Param, rule

WARNING = Severity.WARNING
NP = (NODEPOOL,)
_POSITIVE = {"type": "integer", "minimum": 1}


def _requirements(obj):
    template = obj.spec.template
    spec = template.spec if template else None
    return tuple(r for r in (spec.requirements if spec else None) or () if r is not None and r.key)


@rule(
    "policy/nodepool-limits",
    WARNING,
    NP,
    "A NodePool caps what it may provision in spec.limits (cpu, memory, nvidia.com/gpu or any other "
    "resource): without a limit a scheduling bug, a runaway HPA or a pending-pod storm scales the bill "
    "without bound. A cap on any one resource bounds the pool. [NP-01]",
    "Set spec.limits on what the pool pays for, e.g. cpu and memory, or nvidia.com/gpu for a GPU pool "
    "(below the account's vCPU quota).",
    origin="ours",
    hygiene=True,
    good=(
        {"kind": "NodePool", "spec": {"limits": {"cpu": "100", "memory": "400Gi"}}},
        {"kind": "NodePool", "spec": {"limits": {"nvidia.com/gpu": "16"}}},
        {"kind": "NodePool", "spec": {"limits": {"cpu": "100"}}},
    ),
    bad=({"kind": "NodePool", "spec": {"limits": None}},),
)
def nodepool_limits(obj, ctx):
    if not obj.spec.limits:
        yield Violation("spec.limits", "no limits: nothing caps how many nodes the pool launches")


_CPU_CAPS = {"Lt": -1, "Lte": 0}  # operator -> offset from its value to the largest allowed cpu count


def _largest_cpu(requirement) -> int | None:
    values = [int(v) for v in requirement.values or () if v.isdigit()]
    if not values:
        return None
    if requirement.operator in _CPU_CAPS:
        return values[0] + _CPU_CAPS[requirement.operator]
    return max(values) if requirement.operator == "In" else None


def _metal_excluded(requirement) -> bool:
    values = requirement.values or ()
    if requirement.key == labels.INSTANCE_TYPE and requirement.operator == "In":
        return not any(".metal" in v for v in values)
    if requirement.key == labels.SIZE:
        metal = [v for v in values if v.startswith("metal")]
        return bool(metal) if requirement.operator == "NotIn" else requirement.operator == "In" and not metal
    return False


@rule(
    "policy/bounded-instance-size",
    WARNING,
    NP,
    "Requirements bound instance size, either by excluding metal sizes or by capping instance-cpu at "
    "maxInstanceCpu (default 96): an unbounded pool can answer one pending pod with a 192-vCPU "
    "metal host. [NP-02]",
    "Add {key: karpenter.k8s.aws/instance-size, operator: NotIn, values: [metal]} or "
    "{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: ['97']}.",
    origin="ours",
    hygiene=True,
    good=(
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["33"]}]}
                }
            },
        },
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {"key": "karpenter.k8s.aws/instance-size", "operator": "NotIn", "values": ["metal", "metal-24xl"]}
                        ]
                    }
                }
            },
        },
    ),
    bad=(
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m"]}]
                    }
                }
            },
        },
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["192"]}]}
                }
            },
        },
    ),
    params=(Param("maxInstanceCpu", 96, _POSITIVE, "a positive integer"),),
)
def bounded_instance_size(obj, ctx):
    cap = ctx.param("maxInstanceCpu")
    requirements = _requirements(obj)
    if any(_metal_excluded(r) for r in requirements):
        return
    largest = [n for r in requirements if r.key == labels.CPU and (n := _largest_cpu(r)) is not None]
    if largest and min(largest) <= cap:
        return
    detail = f"instance-cpu is capped at {min(largest)}" if largest else "no size or cpu bound"
    yield Violation(
        "spec.template.spec.requirements",
        f"{detail}: the pool may launch metal or larger instances; {ctx.setting('maxInstanceCpu')}",
    )


@rule(
    "policy/expire-after-bounded",
    WARNING,
    NP,
    "Nodes are replaced at least every maxExpireAfter (default 720h, Karpenter's own default) so they pick "
    "up patched AMIs; 'Never' or a longer period leaves unpatched hosts running. [NP-03]",
    "Set spec.template.spec.expireAfter to maxExpireAfter or less.",
    origin="ours",
    hygiene=True,
    good=({"kind": "NodePool", "spec": {"template": {"spec": {"expireAfter": "336h"}}}},),
    bad=(
        {"kind": "NodePool", "spec": {"template": {"spec": {"expireAfter": "Never"}}}},
        {"kind": "NodePool", "spec": {"template": {"spec": {"expireAfter": "2160h"}}}},
    ),
    params=(
        Param(
            "maxExpireAfter",
            "720h",
            {"type": "string", "pattern": r"^([0-9]+(s|m|h))+$"},
            "a duration like 720h",
            valid=lambda v: duration_seconds(v) is not None,
        ),
    ),
)
def expire_after_bounded(obj, ctx):
    template = obj.spec.template
    value = (template.spec.expire_after if template and template.spec else None) or "720h"
    allowed = ctx.param("maxExpireAfter")
    seconds = duration_seconds(value)
    if value == "Never" or (seconds is not None and seconds > duration_seconds(allowed)):
        yield Violation("spec.template.spec.expireAfter", f"nodes live up to {value}; {ctx.setting('maxExpireAfter')}")


@rule(
    "policy/disruption-budgets",
    WARNING,
    NP,
    "A NodePool states its disruption budgets: without them Karpenter may disrupt 10% of the pool's nodes "
    "at any time, drift after an AMI change included. [NP-04]",
    "Add spec.disruption.budgets, e.g. [{nodes: '10%'}, {nodes: '0', schedule: '0 9 * * mon-fri', "
    "duration: 8h, reasons: [Drifted, Underutilized]}].",
    origin="ours",
    hygiene=True,
    good=({"kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "10%"}]}}},),
    bad=({"kind": "NodePool", "spec": {"disruption": {"budgets": None}}},),
)
def disruption_budgets(obj, ctx):
    disruption = obj.spec.disruption
    if disruption is None or not disruption.budgets:
        yield Violation("spec.disruption.budgets", "no disruption budgets (Karpenter assumes nodes: 10%)")


@rule(
    "policy/consolidate-after",
    WARNING,
    NP,
    "A NodePool sets its disruption block with consolidateAfter: left out, Karpenter defaults to "
    "WhenEmptyOrUnderutilized after 0s and consolidates nodes the moment a pod leaves. [NP-05]",
    "Add spec.disruption with consolidationPolicy and consolidateAfter (e.g. 5m).",
    origin="ours",
    hygiene=True,
    good=({"kind": "NodePool", "spec": {"disruption": {"consolidateAfter": "5m"}}},),
    bad=({"kind": "NodePool", "spec": {"disruption": None}},),
)
def consolidate_after(obj, ctx):
    if obj.spec.disruption is None:
        yield Violation("spec.disruption", "no disruption block: consolidateAfter defaults to 0s")


def _allows_spot(requirements) -> bool:
    capacity = next((r for r in requirements if r.key == labels.CAPACITY_TYPE), None)
    if capacity is None:
        return False  # Karpenter defaults to on-demand
    values = capacity.values or ()
    return (
        (capacity.operator == "In" and "spot" in values)
        or (capacity.operator == "NotIn" and "spot" not in values)
        or capacity.operator == "Exists"
    )


@rule(
    "policy/spot-flexibility",
    WARNING,
    NP,
    "A pool that allows spot stays flexible: with few instance families a capacity-pool shortage or "
    "interruption wave leaves pods pending. It needs at least minSpotFamilies (default 3) families, or "
    "minValues of that size on the family or instance-type requirement. [NP-07]",
    "Allow more instance families or categories, or add minValues to the family requirement.",
    origin="ours",
    hygiene=True,
    good=(
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                            {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5", "m6i", "m7i"]},
                        ]
                    }
                }
            },
        },
    ),
    bad=(
        {
            "kind": "NodePool",
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large", "m5.xlarge"]},
                        ]
                    }
                }
            },
        },
    ),
    params=(Param("minSpotFamilies", 3, _POSITIVE, "a positive integer"),),
)
def spot_flexibility(obj, ctx):
    requirements = _requirements(obj)
    if not _allows_spot(requirements):
        return
    needed = ctx.param("minSpotFamilies")
    narrowing = [r for r in requirements if r.key in (labels.FAMILY, labels.INSTANCE_TYPE)]
    if any((r.min_values or 0) >= needed for r in narrowing):
        return
    for r in narrowing:
        if r.operator != "In":
            continue
        families = {v.split(".")[0] for v in r.values or ()}
        if len(families) < needed:
            yield Violation(
                "spec.template.spec.requirements",
                f"spot is allowed but {r.key} leaves {len(families)} instance famil{'y' if len(families) == 1 else 'ies'}; "
                f"{ctx.setting('minSpotFamilies')}",
            )
            return
