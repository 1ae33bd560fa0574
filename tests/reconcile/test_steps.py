"""The step engine keeps a declaration: a step never runs before what it needs is ready, and a transient
failure of one step leaves exactly its dependents awaiting (the instance-type start-up race); the
reconciliation's own declaration is kept the same way."""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import pytest

from karpenter_gitops.adapters.aws.error_kinds import TransientAWSError
from karpenter_gitops.core.inputs import Cluster
from karpenter_gitops.core.versions import Kubernetes
from karpenter_gitops.load import into_inputs
from karpenter_gitops.reconcile import catalogue as catalogue_step
from karpenter_gitops.reconcile.context import Run
from karpenter_gitops.reconcile.graph import Graph, Scope, Step, StepResult
from karpenter_gitops.reconcile.steps import STEPS
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL


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
        Step(
            "needs_source",
            Scope.NODE_CLASS,
            lambda context, subject, *, source: record("needs_source", subject),
            needs=("source",),
            awaiting=waiting,
        ),
        Step(
            "needs_that",
            Scope.NODE_CLASS,
            lambda context, subject, *, needs_source: record("needs_that", subject),
            needs=("needs_source",),
            awaiting=waiting,
        ),
        Step(
            "reads_source",
            Scope.NODE_CLASS,
            lambda context, subject, *, source: record(f"reads {source.what}", subject),
            reads=("source",),
        ),
        Step("alone", Scope.NODE_CLASS, lambda context, subject: record("alone", subject)),
    )
    results = graph.run(None, [Named("a"), Named("b")], [], lambda _message: None)

    assert called == [("reads down", "a"), ("alone", "a"), ("reads down", "b"), ("alone", "b")]
    assert results.awaited == {
        ("needs_source", "a"): "source",
        ("needs_that", "a"): "needs_source",
        ("needs_source", "b"): "source",
        ("needs_that", "b"): "needs_source",
    }
    assert results.by_step["needs_that"]["a"] == Value("awaiting needs_source", fine=False)
    assert results.transient == ("source down",)


def test_a_nodepool_step_takes_the_results_of_the_class_its_binding_names():
    graph = Graph(
        Step("resolved", Scope.NODE_CLASS, lambda context, node_class: Value(f"resolved {node_class.name}")),
        Step("bound", Scope.NODE_POOL, lambda context, pool: Bound(pool.name.split("-")[0])),
        Step(
            "mapped",
            Scope.NODE_POOL,
            lambda context, pool, *, bound, resolved: Value(f"{pool.name} on {resolved.what}"),
            needs=("bound", "resolved"),
            awaiting=waiting,
        ),
        Step(
            "everything",
            Scope.RUN,
            lambda context, *, mapped: Value(", ".join(sorted(m.what for m in mapped.values()))),
            reads=("mapped",),
        ),
        binding="bound",
    )
    results = graph.run(None, [Named("x"), Named("y")], [Named("y-pool"), Named("x-pool")], lambda _message: None)
    assert results.once("everything", Value).what == "x-pool on resolved x, y-pool on resolved y"


@dataclass(frozen=True)
class Bound(StepResult):
    node_class_name: str


def _first(context) -> Value:
    return Value("first")


@pytest.mark.parametrize(
    ("steps", "why"),
    [
        (
            (Step("second", Scope.RUN, lambda context, *, first: Value("2"), reads=("first",)), Step("first", Scope.RUN, _first)),
            "step second: takes first, which is not declared before it",
        ),
        (
            (Step("first", Scope.RUN, _first), Step("second", Scope.RUN, lambda context, *, other: Value("2"), reads=("first",))),
            "step second: its function takes ['other'] by keyword, but the step declares ['first']",
        ),
        (
            (Step("first", Scope.RUN, _first), Step("second", Scope.RUN, lambda context, *, first: Value("2"), needs=("first",))),
            "step second: a step that needs another says what it is while awaiting it",
        ),
        (
            (
                Step("per_class", Scope.NODE_CLASS, lambda context, node_class: Value("1")),
                Step("whole", Scope.RUN, lambda context, *, per_class: Value("2"), needs=("per_class",), awaiting=waiting),
            ),
            "step whole: needs per_class, which it sees for many subjects; a step can only read those",
        ),
        (
            (
                Step("per_class", Scope.NODE_CLASS, lambda context, node_class: Value("1")),
                Step("per_pool", Scope.NODE_POOL, lambda context, pool, *, per_class: Value("2"), reads=("per_class",)),
            ),
            "step per_pool: takes per_class of its EC2NodeClass, but no step binds a NodePool to one",
        ),
        (
            (Step("first", Scope.RUN, lambda context, extra: Value("1")),),
            "step first: runs once per run, so its function takes the context by position",
        ),
    ],
)
def test_a_declaration_that_could_run_a_step_too_early_or_hand_it_what_it_did_not_declare_is_refused(steps, why):
    with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
        Graph(*steps)


def test_a_step_that_claims_to_be_ready_while_awaiting_is_refused_when_it_runs():
    graph = Graph(
        Step("source", Scope.RUN, lambda context: Value("down", False)),
        Step(
            "sink",
            Scope.RUN,
            lambda context, *, source: Value("never"),
            needs=("source",),
            awaiting=lambda context, need, result: Value("pretends"),
        ),
    )
    with pytest.raises(ValueError, match="step sink: its result while awaiting source says it is ready"):
        graph.run(None, [], [], lambda _message: None)


def _dependents(name: str) -> set[str]:
    """The steps that need ``name``, directly or through another step that needs it."""
    found = {step.name for step in STEPS.steps.values() if name in step.needs}
    for dependent in set(found):
        found |= _dependents(dependent)
    return found


def test_the_declared_catalogue_is_needed_by_the_kubelet_expressions_and_the_mapping_alone():
    assert _dependents("catalogue") == {"kubelet_expressions", "mapping"}


def test_a_transient_catalogue_leaves_exactly_its_dependents_awaiting(default_aws, tmp_path, monkeypatch):
    def throttled(aws, cache_dir=None):
        raise TransientAWSError("DescribeInstanceTypes", "RequestLimitExceeded", "Request limit exceeded.")

    monkeypatch.setattr(catalogue_step, "load_catalogue", throttled)
    with_expressions = copy.deepcopy(BASE_NODECLASS)
    with_expressions["spec"].update(amiSelectorTerms=[{"alias": "al2023@latest"}], kubelet={"maxPods": "min(max_pods, 110)"})
    plain = copy.deepcopy(BASE_NODECLASS)
    plain["metadata"]["name"] = "plain"
    pools = [copy.deepcopy(BASE_NODEPOOL) for _ in range(2)]
    pools[1]["metadata"]["name"] = "second"
    pools[1]["spec"]["template"]["spec"]["nodeClassRef"]["name"] = "plain"
    inputs = into_inputs.load_documents([("test.yaml", [with_expressions, plain, *pools])], (1, 15))
    inputs = dataclasses.replace(inputs, cluster=Cluster(feature_gates=frozenset({"NodeClassCEL"})))
    run = Run(inputs, (1, 15), Kubernetes(1, 32), default_aws.session(), tmp_path, ())

    results = STEPS.run(run, inputs.node_classes, inputs.node_pools, lambda _message: None)

    assert results.awaited == {
        ("kubelet_expressions", "default"): "catalogue",
        ("mapping", "general"): "catalogue",
        ("mapping", "second"): "catalogue",
    }
    assert {step for step, _ in results.awaited} == _dependents("catalogue")
    assert results.transient[0].startswith("instance-type catalogue not loaded: transient AWS error in DescribeInstanceTypes")
