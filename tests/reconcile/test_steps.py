"""The step engine keeps a declaration: a step never runs before what it needs is ready, and a transient
failure of one step leaves exactly its dependents awaiting (the instance-type start-up race)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from karpenter_gitops.reconcile.graph import Graph, Scope, Step, StepResult


@dataclass(frozen=True)
class Named:
    name: str


@dataclass(frozen=True)
class Value(StepResult):
    what: str
    fine: bool = True

    @property
    def ready(self) -> bool:
        return self.fine


def waiting(context, *subject_need_result) -> Value:
    *_, need, _result = subject_need_result
    return Value(f"awaiting {need}", fine=False)


def test_a_step_whose_need_is_not_ready_does_not_run_and_its_own_dependents_wait_in_turn():
    called = []

    def record(name, subject) -> Value:
        called.append((name, subject.name))
        return Value(name)

    graph = Graph(
        Step("source", Scope.RUN, lambda context: Value("down", fine=False, transient=("source down",))),
        Step("needs_source", Scope.NODE_CLASS, lambda context, subject, *, source: record("needs_source", subject),
             needs=("source",), awaiting=waiting),
        Step("needs_that", Scope.NODE_CLASS, lambda context, subject, *, needs_source: record("needs_that", subject),
             needs=("needs_source",), awaiting=waiting),
        Step("reads_source", Scope.NODE_CLASS, lambda context, subject, *, source: record(f"reads {source.what}", subject),
             reads=("source",)),
        Step("alone", Scope.NODE_CLASS, lambda context, subject: record("alone", subject)),
    )
    results = graph.run(None, [Named("a"), Named("b")], [], lambda _message: None)

    assert called == [("reads down", "a"), ("alone", "a"), ("reads down", "b"), ("alone", "b")]
    assert results.awaited == {
        ("needs_source", "a"): "source", ("needs_that", "a"): "needs_source",
        ("needs_source", "b"): "source", ("needs_that", "b"): "needs_source",
    }
    assert results.by_step["needs_that"]["a"] == Value("awaiting needs_source", fine=False)
    assert results.transient == ("source down",)


def test_a_nodepool_step_takes_the_results_of_the_class_its_binding_names():
    graph = Graph(
        Step("resolved", Scope.NODE_CLASS, lambda context, node_class: Value(f"resolved {node_class.name}")),
        Step("bound", Scope.NODE_POOL, lambda context, pool: Bound(pool.name.split("-")[0])),
        Step("mapped", Scope.NODE_POOL, lambda context, pool, *, bound, resolved: Value(f"{pool.name} on {resolved.what}"),
             needs=("bound", "resolved"), awaiting=waiting),
        Step("everything", Scope.RUN, lambda context, *, mapped: Value(", ".join(sorted(m.what for m in mapped.values()))),
             reads=("mapped",)),
        binding="bound",
    )
    results = graph.run(None, [Named("x"), Named("y")], [Named("y-pool"), Named("x-pool")], lambda _message: None)
    assert results.once("everything", Value).what == "x-pool on resolved x, y-pool on resolved y"


@dataclass(frozen=True)
class Bound(StepResult):
    node_class_name: str


def _first(context) -> Value:
    return Value("first")


@pytest.mark.parametrize(("steps", "why"), [
    ((Step("second", Scope.RUN, lambda context, *, first: Value("2"), reads=("first",)), Step("first", Scope.RUN, _first)),
     "step second: takes first, which is not declared before it"),
    ((Step("first", Scope.RUN, _first), Step("second", Scope.RUN, lambda context, *, other: Value("2"), reads=("first",))),
     "step second: its function takes ['other'] by keyword, but the step declares ['first']"),
    ((Step("first", Scope.RUN, _first), Step("second", Scope.RUN, lambda context, *, first: Value("2"), needs=("first",))),
     "step second: a step that needs another says what it is while awaiting it"),
    ((Step("per_class", Scope.NODE_CLASS, lambda context, node_class: Value("1")),
      Step("whole", Scope.RUN, lambda context, *, per_class: Value("2"), needs=("per_class",), awaiting=waiting)),
     "step whole: needs per_class, which it sees for many subjects; a step can only read those"),
    ((Step("per_class", Scope.NODE_CLASS, lambda context, node_class: Value("1")),
      Step("per_pool", Scope.NODE_POOL, lambda context, pool, *, per_class: Value("2"), reads=("per_class",))),
     "step per_pool: takes per_class of its EC2NodeClass, but no step binds a NodePool to one"),
    ((Step("first", Scope.RUN, lambda context, extra: Value("1")),),
     "step first: runs once per run, so its function takes the context by position"),
])
def test_a_declaration_that_could_run_a_step_too_early_or_hand_it_what_it_did_not_declare_is_refused(steps, why):
    with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
        Graph(*steps)


def test_a_step_that_claims_to_be_ready_while_awaiting_is_refused_when_it_runs():
    graph = Graph(
        Step("source", Scope.RUN, lambda context: Value("down", False)),
        Step("sink", Scope.RUN, lambda context, *, source: Value("never"), needs=("source",),
             awaiting=lambda context, need, result: Value("pretends")),
    )
    with pytest.raises(ValueError, match="step sink: its result while awaiting source says it is ready"):
        graph.run(None, [], [], lambda _message: None)
