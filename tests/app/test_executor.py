"""Work on two cores: the same results in the same order as one process, whatever the forked copy does."""

from __future__ import annotations

import copy
import functools
import json
import os
import sys

import pytest
import yaml
from support.upstream import crds

from karpenter_gitops.app import executor, validate_strategies
from karpenter_gitops.cli import main
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

linux_only = pytest.mark.skipif(sys.platform != "linux" or (os.cpu_count() or 1) < 2, reason="a plain map elsewhere")


@linux_only
def test_the_second_half_is_worked_out_in_another_process_and_comes_back_in_order():
    items = list(range(executor.THRESHOLD))
    done = executor.ordered_map(lambda n: (n * n, os.getpid()), items)
    assert [square for square, _ in done] == [n * n for n in items]
    first, second = {pid for _, pid in done[: len(items) // 2]}, {pid for _, pid in done[len(items) // 2 :]}
    assert first == {os.getpid()} and len(second) == 1 and second != first


def test_small_runs_stay_in_this_process():
    assert {pid for pid in executor.ordered_map(lambda _: os.getpid(), range(executor.THRESHOLD - 1))} == {os.getpid()}


def each(function, items) -> list:
    """``function`` over ``items`` as one step of an executor, every other item in the forked copy."""
    with executor.Executor([functools.partial(function, item) for item in items]) as running:
        return list(running.each(_called, None))


def _called(worker, _):
    return worker()


@linux_only
@pytest.mark.parametrize("mapped", [executor.ordered_map, each], ids=["ordered", "each"])
def test_a_copy_that_dies_leaves_its_items_to_this_process(mapped):
    parent = os.getpid()

    def dies_in_the_copy(n):
        if os.getpid() != parent:
            os._exit(9)
        return n

    items = list(range(executor.THRESHOLD))
    assert mapped(dies_in_the_copy, items) == items


@linux_only
def test_a_copy_that_dies_midway_leaves_the_rest_to_this_process():
    """The copy answers the first odd items, then dies: those answers stand, and the rest is done here."""
    parent = os.getpid()

    def dies_at_the_twenty_first(n):
        if os.getpid() != parent and n == 21:
            os._exit(9)
        return n, os.getpid()

    done = each(dies_at_the_twenty_first, range(40))
    assert [n for n, _ in done] == list(range(40))
    assert {pid for n, pid in done if n % 2 and n < 21} - {parent} and {pid for n, pid in done if n >= 21} == {parent}


@linux_only
def test_an_error_in_the_copy_is_raised_here_as_in_one_process():
    def fails_late(n):
        if n == executor.THRESHOLD - 1:
            raise ValueError("the last item")
        return n

    with pytest.raises(ValueError, match="the last item"):
        executor.ordered_map(fails_late, range(executor.THRESHOLD))


@linux_only
def test_every_other_item_is_worked_out_in_another_process_and_each_comes_as_soon_as_it_is_known():
    taken = []

    def item(n):
        taken.append(n)  # in this process's list only
        return n * n, os.getpid()

    done = []
    with executor.Executor([functools.partial(item, n) for n in range(7)]) as running:
        for result in running.each(_called, None):
            done.append(result)
            assert taken[-1] == 2 * ((len(done) - 1) // 2)  # this process's items are worked out as they are asked for
    assert [square for square, _ in done] == [n * n for n in range(7)]
    assert {pid for _, pid in done[0::2]} == {os.getpid()} and len({pid for _, pid in done[1::2]} - {os.getpid()}) == 1


class Counter:
    """A worker that keeps what its first step counted, for the next."""

    def __init__(self) -> None:
        self.counted: list[int] = []

    def count(self, n: int) -> tuple[int, int]:
        self.counted.append(n)
        return len(self.counted), os.getpid()

    def total(self, dies_in: int | None) -> tuple[int, int]:
        if dies_in is not None and os.getpid() != dies_in:
            os._exit(9)
        return sum(self.counted), os.getpid()


@linux_only
def test_a_worker_keeps_in_the_copy_what_one_step_built_for_the_next():
    with executor.Executor([Counter(), Counter()]) as running:
        assert [counted for counted, _ in running.each(Counter.count, 5)] == [1, 1]
        assert [counted for counted, _ in running.each(Counter.count, 7)] == [2, 2]
        totals = list(running.each(Counter.total, None))
    assert [total for total, _ in totals] == [12, 12] and totals[1][1] != os.getpid()


@linux_only
def test_a_copy_gone_between_steps_leaves_its_untouched_workers_to_this_process():
    """What the copy's worker built is gone with it; this process's own copy of that worker, untouched, takes
    the next step (a step must do what the earlier ones did when it finds its worker untouched)."""
    with executor.Executor([Counter(), Counter()]) as running:
        list(running.each(Counter.count, 5))
        totals = list(running.each(Counter.total, os.getpid()))  # the copy dies on this step
    assert totals == [(5, os.getpid()), (0, os.getpid())]


@linux_only
def test_a_step_stopped_before_its_end_asks_the_copy_nothing_more():
    with executor.Executor([Counter() for _ in range(6)]) as running:
        steps = running.each(Counter.count, 1)
        next(steps)
        steps.close()
        assert {pid for _, pid in running.each(Counter.count, 1)} == {os.getpid()}


@pytest.mark.slow
def test_validate_crd_of_a_run_in_one_part_reports_the_same_on_two_cores_as_on_one(tmp_path, capsys, monkeypatch):
    """The CRD check of a run judged whole, its objects mapped half in the copy: mistakes spread over both
    halves, the report the same byte for byte, in the same order."""
    monkeypatch.setattr(validate_strategies, "SPLIT_BYTES", 10**12)
    documents = []
    for index in range(executor.THRESHOLD // 2 + 1):
        node_class, node_pool = copy.deepcopy(dict(BASE_NODECLASS)), copy.deepcopy(dict(BASE_NODEPOOL))
        node_class["metadata"] = {"name": f"class-{index}"}
        node_pool["metadata"] = {"name": f"pool-{index}"}
        node_pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] = f"class-{index}"
        if index % 97 == 0:  # mistakes the 1.14.1 CRDs find that our rules for 1.15 do not: fields 1.15 brought
            node_class["spec"]["enclaveOptions"] = {"enabled": True}
            node_pool["spec"]["disruption"] = {"budgets": [{"nodes": "10%", "reasons": ["Unhealthy"]}]}
        documents += [node_class, node_pool]
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    argv = ["validate", "--no-cache", "--format", "json", "--crd", str(crds("v1.14.1")), str(path)]
    assert main(argv) == 1
    spread = capsys.readouterr().out
    monkeypatch.setattr(executor, "THRESHOLD", 10**9)
    assert main(argv) == 1
    assert capsys.readouterr().out == spread
    crd_findings = [f for f in json.loads(spread)["findings"] if f["rule"].startswith("crd/")]
    assert {"class-0", "pool-0", "class-970", "pool-970"} <= {f["name"] for f in crd_findings}  # in both halves
