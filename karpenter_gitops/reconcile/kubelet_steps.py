"""The kubelet steps of an EC2NodeClass, from Karpenter 1.15 (``spec.kubelet`` may hold CEL expressions).

``kubelet_spec``: what Karpenter's validation reconciler refuses in the block itself, before it waits
for anything. ``kubelet_expressions``: every expression evaluated for every instance type of the
catalogue, as Karpenter does once the class resolves; until the catalogue is loaded Karpenter
requeues, and so the step waits. ``kubelet_values``: once the NodePools are mapped, the values that
Karpenter accepts but no node can use, on the instance types the class's NodePools launch.

Layer: a step of reconcile/; imports mapping, catalogue, context, graph, rules and core.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from karpenter_gitops.core.findings import Observation
from karpenter_gitops.core.model import EC2NodeClass
from karpenter_gitops.karpenter.status.nodeclass_conditions import StepOutcome
from karpenter_gitops.reconcile.catalogue import LoadedCatalogue
from karpenter_gitops.reconcile.context import Run, observation
from karpenter_gitops.reconcile.graph import StepResult
from karpenter_gitops.reconcile.mapping import PoolMapping
from karpenter_gitops.rules import kubelet as kubelet_rules
from karpenter_gitops.rules import live


@dataclass(frozen=True)
class KubeletSpec(StepResult):
    refused: StepOutcome | None = None  # ValidationSucceeded=False for the block, with Karpenter's reason


@dataclass(frozen=True)
class KubeletExpressions(StepResult):
    evaluated: tuple[kubelet_rules.Evaluated, ...] = ()  # per instance type, by type name
    outcome: StepOutcome | None = None  # the first failure, or awaiting the catalogue; None when all evaluate

    @property
    def ready(self) -> bool:
        return self.outcome is None


def open_for(run: Run, node_class: EC2NodeClass) -> bool:
    """Whether Karpenter's release validates ``spec.kubelet`` (1.15+)."""
    return run.release >= kubelet_rules.OPEN


def validate_spec(run: Run, node_class: EC2NodeClass) -> KubeletSpec:
    failure = kubelet_rules.validation_failure(node_class, run.inputs.cluster)
    return KubeletSpec(StepOutcome.not_found(failure[1], failure[0]) if failure else None)


def evaluated_for(run: Run, node_class: EC2NodeClass) -> bool:
    """Whether Karpenter gets as far as evaluating the class's expressions (1.15+, gate on, all compile)."""
    return open_for(run, node_class) and kubelet_rules.evaluates(node_class, run.inputs.cluster)


def evaluate(run: Run, node_class: EC2NodeClass, *, catalogue: LoadedCatalogue) -> KubeletExpressions:
    evaluated = tuple(kubelet_rules.evaluate_expressions(node_class, catalogue.catalogue.instance_types))
    failure = kubelet_rules.first_failure(evaluated)
    outcome = StepOutcome.not_found(failure, kubelet_rules.EVALUATION_FAILED) if failure else None
    return KubeletExpressions(evaluated, outcome, observed=_failed(node_class, evaluated))


def awaiting(run: Run, node_class: EC2NodeClass, need: str, blocked: StepResult) -> KubeletExpressions:
    return KubeletExpressions(outcome=StepOutcome.awaiting("the instance-type catalogue"))


def unusable_values(
    run: Run, node_class: EC2NodeClass, *, kubelet_expressions: KubeletExpressions, mapping: Mapping[str, PoolMapping]
) -> StepResult:
    """Values Karpenter accepts but no node can use, on the instance types the class's NodePools launch
    (every type of the catalogue when none of them maps)."""
    plans = [m.plan for m in mapping.values()]
    launched = {t for p in plans if p.node_class == node_class.name and p.mapping for t in p.mapping.instance_types}
    by_path: dict[str, list[str]] = {}
    for e in kubelet_expressions.evaluated:
        if (not launched or e.instance_type in launched) and (problem := kubelet_rules.implausible(e)):
            by_path.setdefault(e.path, []).append(f"{e.instance_type}: {problem}")
    return StepResult(
        observed=tuple(
            observation(
                node_class,
                live.KUBELET_EXPRESSION_UNUSABLE,
                path,
                f"gives a value no node can use on {len(problems)} instance type(s): {_listed(problems, 2)}",
            )
            for path, problems in by_path.items()
        )
    )


def _failed(node_class: EC2NodeClass, evaluated: tuple[kubelet_rules.Evaluated, ...]) -> tuple[Observation, ...]:
    """One finding per expression that fails on some instance type: how many, which, and Karpenter's words for the first."""
    by_path: dict[str, list[kubelet_rules.Evaluated]] = {}
    for e in evaluated:
        if e.failure:
            by_path.setdefault(e.path, []).append(e)
    types = len({e.instance_type for e in evaluated})
    return tuple(
        observation(
            node_class,
            live.KUBELET_EXPRESSION_FAILED,
            path,
            f"fails on {len(failed)} of {types} instance types ({_listed([e.instance_type for e in failed])}): {failed[0].failure}",
            kubelet_rules.failure_hint(failed[0].failure or ""),
        )
        for path, failed in by_path.items()
    )


def _listed(names: list[str], limit: int = 3) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
