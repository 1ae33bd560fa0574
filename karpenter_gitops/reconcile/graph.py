"""The step engine: each step declared with what it takes, run only once what it needs is ready.

The lesson this project was founded on is Karpenter's start-up race: a step that ran before the
instance-type catalogue was loaded reported "no instance types found". So a step here is declared
(:class:`Step`) with the steps whose results it takes, and :class:`Graph` keeps the promise two ways:

* when it is built, it refuses a step listed before a step it takes, a step whose function's keyword
  parameters are not exactly what it declares, and a step that needs one of many results;
* when it runs, it never calls a step whose ``needs`` are not ready: the step's ``awaiting`` says
  what it waits for instead, and that result is not ready either, so the steps that need it wait in
  turn. A transient failure of one step therefore marks exactly the steps that depend on it.

``reads`` are taken as they came out, ready or not: the status conditions roll up whatever their
dependencies resolved to. A step runs once per run, per EC2NodeClass or per NodePool
(:class:`Scope`); it takes the run's result, its own subject's, or, for a NodePool, the result for
the EC2NodeClass its binding step names; a narrower scope's results reach it as a mapping by name.
Steps of one scope declared one after another run subject by subject, so what one EC2NodeClass
resolves stays together. Every result carries what only AWS revealed (observations, judged once
by the caller) and notes on transient trouble; :class:`Results` collects both in run order.

Layer: the bottom of reconcile/; imports core only.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import groupby
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from karpenter_gitops.core.findings import Observation


class Scope(Enum):
    RUN = "once per run"
    NODE_CLASS = "per EC2NodeClass"
    NODE_POOL = "per NodePool"


# A scope sees one result of its own scope or a broader one (a NodePool: its EC2NodeClass's), a mapping of a narrower one's.
_BREADTH = {Scope.RUN: 0, Scope.NODE_CLASS: 1, Scope.NODE_POOL: 2}


class Subject(Protocol):
    """An EC2NodeClass or a NodePool, as far as the engine cares: results are kept by name."""

    @property
    def name(self) -> str: ...


class Binding(Protocol):
    """The result of the step that names a NodePool's EC2NodeClass."""

    @property
    def node_class_name(self) -> str: ...


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """What every step's result carries beside its own fields."""

    observed: tuple[Observation, ...] = ()  # what only AWS revealed, under the live/ rules
    transient: tuple[str, ...] = ()  # transient trouble: nothing is decided, the run exits 3

    @property
    def ready(self) -> bool:
        """Whether the steps that need this one may run."""
        return True


R = TypeVar("R", bound=StepResult)


@dataclass(frozen=True)
class Step:
    """One step: its function gets the run's context, its subject (unless it runs once per run) and, as
    keyword arguments named after the steps, what it ``needs`` (ready) and ``reads`` (as it came out).

    ``awaiting(context, [subject,] need, result)`` is the result of the step when ``need`` is not ready;
    a step with ``applies(context, [subject])`` false has ``skipped`` for its result and waits for nothing.
    ``says`` is its progress line (``{name}``: the subject's name)."""

    name: str
    scope: Scope
    run: Callable[..., StepResult]
    needs: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    awaiting: Callable[..., StepResult] | None = None
    applies: Callable[..., bool] | None = None
    skipped: StepResult | None = None
    says: str | None = None


@dataclass(frozen=True)
class Results:
    """Every step's result per subject (``None`` for the run), which steps waited and for what, and what
    the results observed and noted as transient, in run order."""

    by_step: Mapping[str, Mapping[str | None, StepResult]]
    awaited: Mapping[tuple[str, str | None], str]  # (step, subject) → the need that was not ready
    observed: tuple[Observation, ...]
    transient: tuple[str, ...]

    def once(self, step: str, kind: type[R]) -> R:
        return _typed(self.by_step[step][None], kind)

    def each(self, step: str, kind: type[R]) -> dict[str, R]:
        return {name: _typed(result, kind) for name, result in self.by_step[step].items() if name is not None}


def _typed(result: StepResult, kind: type[R]) -> R:
    if not isinstance(result, kind):
        raise TypeError(f"{type(result).__name__} is no {kind.__name__}")
    return result


class Graph:
    """Steps in the order they run, each after every step it takes (checked here, once)."""

    def __init__(self, *steps: Step, binding: str | None = None) -> None:
        self.steps: dict[str, Step] = {}
        self.binding = binding  # the NodePool step whose result names the pool's EC2NodeClass
        for step in steps:
            self._check(step)
            self.steps[step.name] = step

    def _check(self, step: Step) -> None:
        def refuse(why: str) -> ValueError:
            return ValueError(f"step {step.name}: {why}")

        if step.name in self.steps:
            raise refuse("declared twice")
        for taken in step.needs + step.reads:
            if taken not in self.steps:
                raise refuse(f"takes {taken}, which is not declared before it")
        for need in step.needs:
            if _BREADTH[self.steps[need].scope] > _BREADTH[step.scope]:
                raise refuse(f"needs {need}, which it sees for many subjects; a step can only read those")
        if bool(step.needs) != (step.awaiting is not None):
            raise refuse("a step that needs another says what it is while awaiting it (awaiting), and only such a step")
        if (step.applies is None) != (step.skipped is None):
            raise refuse("a step that may not apply has a result for that case (skipped), and only such a step")
        through_class = [
            t for t in step.needs + step.reads if step.scope is Scope.NODE_POOL and self.steps[t].scope is Scope.NODE_CLASS
        ]
        if through_class and self.binding is None:
            raise refuse(f"takes {through_class[0]} of its EC2NodeClass, but no step binds a NodePool to one")
        if through_class and step.needs[:1] != (self.binding,):
            raise refuse(f"takes {through_class[0]} of its EC2NodeClass, so it first needs {self.binding}, which names it")
        _check_signature(step, refuse)

    def run(
        self, context: Any, node_classes: Sequence[Subject], node_pools: Sequence[Subject], say: Callable[[str], None]
    ) -> Results:
        """Every step over its subjects, in the declared order."""
        subjects: dict[Scope, Sequence[Subject | None]] = {
            Scope.RUN: [None],
            Scope.NODE_CLASS: node_classes,
            Scope.NODE_POOL: node_pools,
        }
        results: dict[str, dict[str | None, StepResult]] = {name: {} for name in self.steps}
        awaited: dict[tuple[str, str | None], str] = {}
        observed: list[Observation] = []
        transient: list[str] = []
        for scope, group in groupby(self.steps.values(), key=lambda step: step.scope):
            steps = list(group)
            for subject in subjects[scope]:
                key = subject.name if subject is not None else None
                for step in steps:
                    result, waited_for = self._evaluate(step, context, subject, results, say)
                    if waited_for is not None:
                        awaited[(step.name, key)] = waited_for
                    results[step.name][key] = result
                    observed.extend(result.observed)
                    transient.extend(result.transient)
        return Results(results, awaited, tuple(observed), tuple(transient))

    def _evaluate(
        self,
        step: Step,
        context: Any,
        subject: Subject | None,
        results: Mapping[str, Mapping[str | None, StepResult]],
        say: Callable[[str], None],
    ) -> tuple[StepResult, str | None]:
        """The step's result, and the need it waited for (None when it ran or did not apply)."""
        leading = (context,) if subject is None else (context, subject)
        if step.applies is not None and not step.applies(*leading):
            return step.skipped, None
        if step.says:
            say(step.says.format(name=subject.name if subject is not None else ""))
        for need in step.needs:  # in the declared order: a NodePool's EC2NodeClass is known once its binding is ready
            result = self._seen(need, step, subject, results)
            if not result.ready:
                waiting = step.awaiting(*leading, need, result)
                if waiting.ready:  # what needs this step would run on a result that waits
                    raise ValueError(f"step {step.name}: its result while awaiting {need} says it is ready")
                return waiting, need
        taken = {name: self._seen(name, step, subject, results) for name in step.needs + step.reads}
        return step.run(*leading, **taken), None

    def _seen(
        self, name: str, step: Step, subject: Subject | None, results: Mapping[str, Mapping[str | None, StepResult]]
    ) -> Any:
        """What ``step`` sees of the step ``name``: one result, or a mapping by name of a narrower scope's."""
        scope = self.steps[name].scope
        if scope is Scope.RUN:
            return results[name][None]
        if scope is step.scope:
            return results[name][subject.name]
        if scope is Scope.NODE_CLASS and step.scope is Scope.NODE_POOL:
            binding: Binding = results[self.binding][subject.name]
            return results[name][binding.node_class_name]
        return MappingProxyType(results[name])


def _check_signature(step: Step, refuse: Callable[[str], ValueError]) -> None:
    """The step's function takes its context (and subject) by position and exactly what it declares by keyword."""
    parameters = inspect.signature(step.run).parameters.values()
    leading = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = {p.name for p in parameters if p.kind is p.KEYWORD_ONLY}
    if len(leading) != (1 if step.scope is Scope.RUN else 2):
        raise refuse(
            f"runs {step.scope.value}, so its function takes the context{'' if step.scope is Scope.RUN else ' and its subject'} by position"
        )
    if keywords != set(step.needs + step.reads):
        raise refuse(
            f"its function takes {sorted(keywords)} by keyword, but the step declares {sorted(set(step.needs + step.reads))}"
        )
