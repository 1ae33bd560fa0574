"""The NodePool CRD's CEL rules (``cel/``), with the exact message of the chosen release.

Checked against the v1.0.14, v1.4.4, v1.8.8 and v1.14.1 CRDs. The rules that compare with the stored
object (``oldSelf``: ``nodeClassRef.group``/``kind`` immutability and the static/dynamic ``replicas``
transition) need the base of a change, so they live in :mod:`karpenter_gitops.rules.transition` and run
in ``preview``. The NodePool readers here (requirements, label keys, nodeClassRef) are the ones our
stricter rules (:mod:`karpenter_gitops.rules.nodepool`) and the transition rules read it with too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache

from karpenter_gitops.core.findings import Severity, Violation
from karpenter_gitops.core.model import NODEPOOL
from karpenter_gitops.core.versions import Release
from karpenter_gitops.rules.label_keys import RESTRICTED_LABELS, domain_messages, key_suggestion
from karpenter_gitops.rules.registry import rule

KINDS = (NODEPOOL,)
ERROR = Severity.ERROR
REF = "spec.template.spec.nodeClassRef"

# --- reading a NodePool ---------------------------------------------------------------------


def requirements(obj) -> Iterator[tuple[int, object]]:
    """(index, requirement) of each template requirement the schema layer could load."""
    template = obj.spec.template
    spec = template.spec if template else None
    for index, requirement in enumerate((spec.requirements if spec else None) or ()):
        if requirement is not None:
            yield index, requirement


def requirement_path(index: int) -> str:
    return f"spec.template.spec.requirements[{index}]"


def requirement_keys(obj) -> Iterator[tuple[str, str]]:
    for index, requirement in requirements(obj):
        if requirement.key is not None:
            yield f"{requirement_path(index)}.key", requirement.key


def label_keys(obj) -> Iterator[tuple[str, str]]:
    """Requirement keys and template labels: the CRD restricts both the same way."""
    yield from requirement_keys(obj)
    metadata = obj.spec.template.metadata if obj.spec.template else None
    for key in (metadata.labels if metadata else None) or {}:
        yield f"spec.template.metadata.labels[{key}]", key


def values_of(requirement) -> tuple:
    return requirement.values or ()


def node_class_ref(obj):
    template = obj.spec.template
    return template.spec.node_class_ref if template and template.spec else None


# --- label keys ---------------------------------------------------------------------------


@rule(
    "cel/label-domain-restricted",
    ERROR,
    KINDS,
    "CEL: requirement keys and template labels may not use Karpenter's domains beyond the well-known labels "
    "(nor, before 1.9, the kubernetes.io and k8s.io domains beyond an allow-list).",
    "Use a well-known Karpenter label or a label in a domain of your own.",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m5"]}]}
                }
            }
        },
        {"spec": {"template": {"metadata": {"labels": {"example.com/team": "a"}}}}},
    ),
    bad=(
        {"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-pods", "operator": "Exists"}]}}}},
        {"spec": {"template": {"metadata": {"labels": {"karpenter.sh/registered": "true"}}}}},
        {"karpenterVersion": "1.8", "spec": {"template": {"metadata": {"labels": {"kubernetes.io/team": "a"}}}}},
    ),
)
def label_domain_restricted(obj, ctx):
    for path, key in label_keys(obj):
        for message in domain_messages(key, ctx.release):
            yield Violation(path, message, key_suggestion(key, ctx.release))


@rule(
    "cel/label-restricted",
    ERROR,
    KINDS,
    "CEL: karpenter.sh/nodepool and kubernetes.io/hostname are set per node and may not be required or templated.",
    "Remove the key; Karpenter sets karpenter.sh/nodepool, and the hostname is unique per node.",
    good=(
        {"spec": {"template": {"spec": {"requirements": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}}}},
    ),
    bad=(
        {"spec": {"template": {"spec": {"requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["a"]}]}}}},
    ),
)
def label_restricted(obj, ctx):
    for path, key in label_keys(obj):
        if key in RESTRICTED_LABELS:
            yield Violation(path, f'label "{key}" is restricted')


# --- requirements -------------------------------------------------------------------------


@rule(
    "cel/requirement-in-values",
    ERROR,
    KINDS,
    "CEL: an 'In' requirement lists at least one value.",
    "Add values, or use Exists to accept any value.",
    good=(
        {
            "spec": {
                "template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]}]}}
            }
        },
    ),
    bad=({"spec": {"template": {"spec": {"requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": []}]}}}},),
)
def requirement_in_values(obj, ctx):
    for index, requirement in requirements(obj):
        if requirement.operator == "In" and not values_of(requirement):
            yield Violation(requirement_path(index), "requirements with operator 'In' must have a value defined")


_INTEGER = re.compile(r"^[+-]?[0-9]+\Z")  # CEL int(string): base 10, optional sign, int64


def is_non_negative_int64(value) -> bool:
    return isinstance(value, str) and bool(_INTEGER.match(value)) and 0 <= int(value) < 2**63


@cache
def numeric_operators(release: Release) -> tuple[tuple[str, ...], str]:
    if release >= (1, 9):
        return (
            "Gt",
            "Lt",
            "Gte",
            "Lte",
        ), "requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value"
    return ("Gt", "Lt"), "requirements operator 'Gt' or 'Lt' must have a single positive integer value"


@rule(
    "cel/requirement-numeric-operator",
    ERROR,
    KINDS,
    "CEL: Gt/Lt (and Gte/Lte since 1.9) compare with exactly one non-negative integer.",
    "Give exactly one integer value, e.g. values: ['4'].",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4"]}]}
                }
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {"requirements": [{"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["4", "8"]}]}
                }
            }
        },
    ),
)
def requirement_numeric_operator(obj, ctx):
    operators, message = numeric_operators(ctx.release)
    for index, requirement in requirements(obj):
        if requirement.operator in operators:
            values = values_of(requirement)
            if None in values:
                continue  # a value that is not a string (values: [5]): schema/type names it, CEL never runs on it
            if len(values) != 1 or not is_non_negative_int64(values[0]):
                yield Violation(requirement_path(index), message)


@rule(
    "cel/requirement-min-values",
    ERROR,
    KINDS,
    "CEL: an 'In' requirement with minValues lists at least that many values.",
    "List more values or lower minValues.",
    good=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": ["m5.large", "m6i.large"],
                                "minValues": 2,
                            }
                        ]
                    }
                }
            }
        },
    ),
    bad=(
        {
            "spec": {
                "template": {
                    "spec": {
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5.large"], "minValues": 2}
                        ]
                    }
                }
            }
        },
    ),
)
def requirement_min_values(obj, ctx):
    for index, requirement in requirements(obj):
        wanted = requirement.min_values
        if requirement.operator == "In" and wanted is not None and len(values_of(requirement)) < wanted:
            yield Violation(
                requirement_path(index),
                "requirements with 'minValues' must have at least that many values specified in the 'values' field",
            )


# --- disruption, static capacity ------------------------------------------------------------


@rule(
    "cel/budget-schedule-duration",
    ERROR,
    KINDS,
    "CEL: a disruption budget sets schedule and duration together, or neither.",
    "Add the missing schedule or duration, or drop both for an always-active budget.",
    good=({"spec": {"disruption": {"budgets": [{"nodes": "10%", "schedule": "@daily", "duration": "10m"}]}}},),
    bad=({"spec": {"disruption": {"budgets": [{"nodes": "0", "schedule": "@daily"}]}}},),
)
def budget_schedule_duration(obj, ctx):
    disruption = obj.spec.disruption
    for index, budget in enumerate((disruption.budgets if disruption else None) or ()):
        if budget is not None and (budget.schedule is None) != (budget.duration is None):
            yield Violation(f"spec.disruption.budgets[{index}]", "'schedule' must be set with 'duration'")


@rule(
    "cel/static-nodepool-limits",
    ERROR,
    KINDS,
    "CEL: a static NodePool (replicas set) supports only limits.nodes.",
    "Keep only limits.nodes, or drop replicas.",
    since=Release((1, 8)),
    good=({"spec": {"replicas": 3, "limits": {"cpu": None, "memory": None, "nodes": "5"}}},),
    bad=({"spec": {"replicas": 3}},),
)
def static_nodepool_limits(obj, ctx):
    limits = obj.spec.limits
    if obj.spec.replicas is not None and limits and set(limits) != {"nodes"}:
        yield Violation("spec.limits", "only 'limits.nodes' is supported on static NodePools")


@rule(
    "cel/static-nodepool-weight",
    ERROR,
    KINDS,
    "CEL: a static NodePool (replicas set) has no weight.",
    "Drop weight, or drop replicas.",
    since=Release((1, 8)),
    good=({"spec": {"weight": 10}},),
    bad=({"spec": {"replicas": 3, "limits": None, "weight": 10}},),
)
def static_nodepool_weight(obj, ctx):
    if obj.spec.replicas is not None and obj.spec.weight is not None:
        yield Violation("spec.weight", "'weight' is not supported on static NodePools")


# --- nodeClassRef -------------------------------------------------------------------------


@rule(
    "cel/node-class-ref-not-empty",
    ERROR,
    KINDS,
    "CEL: nodeClassRef group, kind and name may not be empty strings.",
    "Set group: karpenter.k8s.aws, kind: EC2NodeClass and the class's name.",
    since=Release((1, 1)),
    good=({"spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}}}}},),
    bad=({"spec": {"template": {"spec": {"nodeClassRef": {"name": ""}}}}},),
)
def node_class_ref_not_empty(obj, ctx):
    ref = node_class_ref(obj)
    if ref is None:
        return
    for field, value in (("group", ref.group), ("kind", ref.kind), ("name", ref.name)):
        if value == "":
            yield Violation(f"{REF}.{field}", f"{field} may not be empty")
