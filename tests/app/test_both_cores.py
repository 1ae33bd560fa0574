"""Both cores for many objects: the same results in the same order as one process, whatever the worker does."""

from __future__ import annotations

import copy
import json
import os
import sys

import pytest
import yaml
from support.upstream import crds

from karpenter_gitops.app import both_cores
from karpenter_gitops.cli import main
from karpenter_gitops.rules.examples import BASE_NODECLASS, BASE_NODEPOOL

linux_only = pytest.mark.skipif(sys.platform != "linux" or (os.cpu_count() or 1) < 2, reason="a plain map elsewhere")


@linux_only
def test_the_second_half_is_worked_out_in_another_process_and_comes_back_in_order():
    items = list(range(both_cores.THRESHOLD))
    done = both_cores.ordered_map(lambda n: (n * n, os.getpid()), items)
    assert [square for square, _ in done] == [n * n for n in items]
    first, second = {pid for _, pid in done[: len(items) // 2]}, {pid for _, pid in done[len(items) // 2:]}
    assert first == {os.getpid()} and len(second) == 1 and second != first


def test_small_runs_stay_in_this_process():
    assert {pid for pid in both_cores.ordered_map(lambda _: os.getpid(), range(both_cores.THRESHOLD - 1))} == {os.getpid()}


@linux_only
@pytest.mark.parametrize("mapped", [both_cores.ordered_map, lambda *args: list(both_cores.interleaved_map(*args))],
                         ids=["ordered", "interleaved"])
def test_a_worker_that_dies_leaves_its_items_to_this_process(mapped):
    parent = os.getpid()

    def dies_in_the_worker(n):
        if os.getpid() != parent:
            os._exit(9)
        return n

    items = list(range(both_cores.THRESHOLD))
    assert mapped(dies_in_the_worker, items) == items


@linux_only
def test_a_copy_that_dies_midway_leaves_the_rest_to_this_process():
    """The copy answers the first odd items, then dies: those answers stand, and the rest is done here."""
    parent = os.getpid()

    def dies_at_the_twenty_first(n):
        if os.getpid() != parent and n == 21:
            os._exit(9)
        return n, os.getpid()

    done = list(both_cores.interleaved_map(dies_at_the_twenty_first, range(40)))
    assert [n for n, _ in done] == list(range(40))
    assert {pid for n, pid in done if n % 2 and n < 21} - {parent} and {pid for n, pid in done if n >= 21} == {parent}


@linux_only
def test_an_error_in_the_worker_is_raised_here_as_in_one_process():
    def fails_late(n):
        if n == both_cores.THRESHOLD - 1:
            raise ValueError("the last item")
        return n

    with pytest.raises(ValueError, match="the last item"):
        both_cores.ordered_map(fails_late, range(both_cores.THRESHOLD))


@linux_only
def test_every_other_item_is_worked_out_in_another_process_and_each_comes_as_soon_as_it_is_known():
    taken = []

    def item(n):
        taken.append(n)  # in this process's list only
        return n * n, os.getpid()

    done = []
    for result in both_cores.interleaved_map(item, range(7)):
        done.append(result)
        assert taken[-1] == 2 * ((len(done) - 1) // 2)  # this process's items are worked out as they are asked for
    assert [square for square, _ in done] == [n * n for n in range(7)]
    assert {pid for _, pid in done[0::2]} == {os.getpid()} and len({pid for _, pid in done[1::2]} - {os.getpid()}) == 1


@pytest.mark.slow
def test_validate_crd_reports_the_same_on_both_cores_as_on_one(tmp_path, capsys, monkeypatch):
    """Mistakes spread over both halves: the report is the same byte for byte, in the same order."""
    documents = []
    for index in range(both_cores.THRESHOLD // 2 + 1):
        node_class, node_pool = copy.deepcopy(dict(BASE_NODECLASS)), copy.deepcopy(dict(BASE_NODEPOOL))
        node_class["metadata"] = {"name": f"class-{index}"}
        node_pool["metadata"] = {"name": f"pool-{index}"}
        node_pool["spec"]["template"]["spec"]["nodeClassRef"]["name"] = f"class-{index}"
        if index % 97 == 0:
            node_class["spec"]["amiSelectorTerms"] = [{"alias": "al2023@latest", "id": "ami-0123456789abcdef0"}]
            node_pool["spec"]["template"]["spec"]["requirements"] = [{"key": "karpenter.sh/capacity-type", "operator": "Gt"}]
        documents += [node_class, node_pool]
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    argv = ["validate", "--no-cache", "--format", "json", "--crd", str(crds("v1.14.1")), str(path)]
    assert main(argv) == 1
    spread = capsys.readouterr().out
    monkeypatch.setattr(both_cores, "THRESHOLD", 10**9)
    assert main(argv) == 1
    assert capsys.readouterr().out == spread
    crd_findings = [f for f in json.loads(spread)["findings"] if f["rule"].startswith("crd/")]
    assert {"class-0", "pool-0", "class-970", "pool-970"} <= {f["name"] for f in crd_findings}  # in both halves
