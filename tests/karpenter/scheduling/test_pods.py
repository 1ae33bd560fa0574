"""A pod's requests as kube-scheduler counts them (component-helpers ``PodRequests``), which Karpenter calls."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support.simulation import SOURCE

from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.pods import Container, PodTemplate


def requests(containers=(), init=(), **fields) -> str:
    template = PodTemplate("default", "Pod/p", SOURCE, containers=tuple(containers), init_containers=tuple(init), **fields)
    return resources.show(template.requests)


def c(cpu: str, memory: str = "0", sidecar: bool = False, name: str = "c") -> Container:
    return Container(name, {"cpu": cpu, "memory": memory}, sidecar=sidecar)


def test_containers_add_up_and_a_pod_slot_is_added():
    assert requests([c("250m", "64Mi"), c("500m", "128Mi")]) == '{"cpu":"750m","memory":"192Mi","pods":"1"}'


def test_the_largest_init_container_wins_when_larger():
    # max(250m, max(2, 100m)) = 2 cpu; memory max(64Mi, 1Gi) = 1Gi
    assert requests([c("250m", "64Mi")], [c("2", "1Gi"), c("100m")]) == '{"cpu":"2","memory":"1Gi","pods":"1"}'


def test_sidecars_run_beside_the_containers_and_the_init_containers_after_them():
    # init A (1 cpu) runs first, then sidecar S (300m) starts, then init B (800m) runs beside S:
    # init peak max(1, 800m + 300m = 1100m) = 1100m; steady state 500m + 300m = 800m → 1100m
    init = [c("1", name="a"), c("300m", sidecar=True, name="s"), c("800m", name="b")]
    assert requests([c("500m")], init) == '{"cpu":"1100m","memory":"0","pods":"1"}'
    # before Kubernetes 1.29 restartPolicy: Always is dropped: S is a plain init container → max(500m, 1) = 1
    assert requests([c("500m")], init, sidecars_enabled=False) == '{"cpu":"1","memory":"0","pods":"1"}'


def test_pod_level_resources_replace_cpu_and_memory_and_overhead_is_added():
    fields = {"pod_resources": {"cpu": "2", "memory": "1Gi"}, "overhead": {"cpu": "250m", "memory": "120Mi"}}
    assert requests([c("500m", "64Mi")], **fields) == '{"cpu":"2250m","memory":"1144Mi","pods":"1"}'
    assert requests([c("500m", "64Mi")], **fields, pod_resources_enabled=False) == '{"cpu":"750m","memory":"184Mi","pods":"1"}'


cpus = st.integers(0, 8000).map(lambda m: f"{m}m")


@given(st.lists(cpus, min_size=1, max_size=4), st.lists(st.tuples(cpus, st.booleans()), max_size=4))
def test_requests_cover_every_container_and_the_steady_state(containers, init):
    pod = PodTemplate(
        "default",
        "Pod/p",
        SOURCE,
        containers=tuple(c(x) for x in containers),
        init_containers=tuple(c(x, sidecar=s, name=f"i{i}") for i, (x, s) in enumerate(init)),
    )
    total = pod.requests["cpu"]
    steady = sum(resources.milli(x) for x in containers) + sum(resources.milli(x) for x, s in init if s)
    assert total >= steady and all(total >= resources.milli(x) for x, _ in init)
    assert pod.requests["pods"] == 1000
