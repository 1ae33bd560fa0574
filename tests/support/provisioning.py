"""Karpenter's whole provisioning loop on the real controller, beside ``plan --workloads``' forecast of it.

:func:`submit` puts a workload's pods on the API server as kube-scheduler leaves a pod it cannot place
(``PodScheduled=False``, reason ``Unschedulable``: Karpenter's provisioner takes only such pods,
``pkg/utils/pod.IsProvisionable``) and its DaemonSets (Karpenter reads their templates for the daemon
overhead; no controller makes their pods here). :func:`settle` waits until the controller's provisioner
has made its last NodeClaim: every NodeClaim launched on the embedded EC2 (none registers: there is no
kubelet) and two of its passes begun since, the first of which made nothing. The provisioner runs a pass
each time its pod trigger requeues (every 10 s while a pod stays pending), each with the launched
NodeClaims in flight: the rounds of ``karpenter/scheduling/rounds.py``.

Which pods a NodeClaim took is what Karpenter's ``Nominated`` event says ("Pod should schedule on:
nodeclaim/NAME", ``provisioning/scheduling/events.go``). That event is rate-limited (a token bucket of
10, refilled at 5 a second, shared by every nomination) and deduplicated per pod for two minutes, so it
names the NodeClaim of a pod's *first* nomination and a Solve of more than ten pods loses some. A pod
without an event is put back on the NodeClaim whose ``pods`` request it is missing from, which is
unambiguous when such pods are replicas of one workload and no DaemonSet counts in the requests
(:func:`controller_claims` refuses otherwise).

Both sides become :class:`Claim` (NodePool, instance-type options, launched capacity type, pods per
workload: on the forecast's side its ``nominated`` pods, each pod's first nomination over the rounds)
and the pods left pending; NodeClaim names are random, so they are compared as multisets
(:func:`differences`).
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from karpenter_gitops.core import labels
from karpenter_gitops.karpenter.scheduling import Forecast, Pod
from karpenter_gitops.load.workloads import Workloads
from support.api_server import kube_client

NODECLAIMS = ("karpenter.sh", "v1", "nodeclaims")
NODEPOOL = "karpenter.sh/nodepool"
IMAGE = "registry.k8s.io/pause:3.10"  # the API server requires one; nothing runs it
UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/0 nodes are available"}
NOMINATED = re.compile(r"^Pod should schedule on: nodeclaim/([^,\s]+)")
SETTLE_WITHIN = 55.0  # seconds; a pass every 10 s, the first ~2 s after the pods (idle batch window)
PASSES_AFTER_LAUNCH = 2
# The controller's log lines that mark its provisioner's steps (provisioner.go, lifecycle/launch.go).
PASS, CREATED, LAUNCHED = "computing scheduling decision for provisionable pod(s)", "created nodeclaim", "launched nodeclaim"


@dataclass(frozen=True, order=True)
class Claim:
    """One NodeClaim in the terms both sides share."""

    node_pool: str
    options: tuple[str, ...]  # the instance types it carries (sorted)
    capacity_type: str | None  # what it launched as
    workloads: tuple[tuple[str, int], ...]  # (namespace/Kind/name, pods)

    def show(self) -> str:
        pods = ", ".join(f"{n}×{w.split('/')[-1]}" for w, n in self.workloads)
        return (
            f"{self.node_pool}: [{pods}] {self.capacity_type}, {len(self.options)} options ({', '.join(self.options[:4])}, ...)"
        )


def _with_images(spec: dict) -> dict:
    for container in [*spec.get("containers", ()), *spec.get("initContainers", ())]:
        container.setdefault("image", IMAGE)
    return spec


def ready_pools(cluster, names: Iterable[str], within: float = SETTLE_WITHIN) -> None:
    """Wait until every NodePool of ``names`` is Ready: the provisioner leaves a NodePool out of its Solve until
    then, so pods that came earlier would be placed on the others, or nowhere, and again once it is."""
    deadline = time.monotonic() + within
    waiting = set(names)
    while waiting:
        for name in sorted(waiting):
            conditions = cluster.get("NodePool", name).get("status", {}).get("conditions", [])
            if any(c["type"] == "Ready" and c["status"] == "True" for c in conditions):
                waiting.discard(name)
        if waiting and time.monotonic() > deadline:
            raise AssertionError(f"NodePools not Ready within {within:.0f} s: {sorted(waiting)}\n{cluster.controller.tail()}")
        time.sleep(0.5)


def submit(cluster, workloads: Workloads) -> None:
    """Namespaces, DaemonSets, then the pods, then each pod marked unschedulable through its status subresource."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    api = kube_client(cluster.api)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    namespaces = {p.template.namespace for p in workloads.pods} | {d.template.namespace for d in workloads.daemon_sets}
    for namespace in sorted(namespaces):
        try:
            core.create_namespace({"metadata": {"name": namespace}})
        except ApiException as exists:
            if exists.status != 409:
                raise
    for daemon_set in workloads.daemon_sets:
        body = daemon_set.to_json()
        _with_images(body["spec"]["template"]["spec"])
        apps.create_namespaced_daemon_set(daemon_set.template.namespace, body)
    for pod in workloads.pods:
        body = pod.to_json()
        _with_images(body["spec"])
        core.create_namespaced_pod(pod.template.namespace, body)

    def unschedulable(pod: Pod) -> None:
        core.patch_namespaced_pod_status(pod.name, pod.template.namespace, {"status": {"conditions": [UNSCHEDULABLE]}})

    # All at once, as a Deployment's replicas fail to schedule: the provisioner batches pods that come
    # within a second of each other, and a pod marked later would wait for its next pass.
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(unschedulable, workloads.pods))


def withdraw(cluster, workloads: Workloads) -> None:
    """The pods, DaemonSets and NodeClaims gone again (the controller terminates the claims' instances)."""
    from kubernetes import client

    api = kube_client(cluster.api)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    for namespace in sorted(
        {p.template.namespace for p in workloads.pods} | {d.template.namespace for d in workloads.daemon_sets}
    ):
        core.delete_collection_namespaced_pod(namespace, grace_period_seconds=0)
        apps.delete_collection_namespaced_daemon_set(namespace)
        core.delete_collection_namespaced_event(namespace)
    cluster._objects().delete_collection_cluster_custom_object(*NODECLAIMS)


def provisioner_log(cluster) -> list[dict]:
    """The provisioner's steps in this cluster's part of the controller log (passes, NodeClaims created and
    launched, what each pass found and computed): what a failing comparison shows."""
    wanted = (PASS, CREATED, LAUNCHED, "found provisionable pod(s)", "computed new nodeclaim(s) to fit pod(s)",
              "computed unready node(s) will fit pod(s)")  # fmt: skip
    shown = ("time", "message", "NodeClaim", "pending-pods", "Pods", "nodeclaims", "nodes", "pods", "requests",
             "instance-type", "capacity-type", "zone")  # fmt: skip
    steps = []
    for line in cluster.controller.log.read_text(errors="replace")[cluster.log_from :].splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if entry.get("message") in wanted:
                steps.append({key: entry[key] for key in shown if key in entry})
    return steps


def _log_steps(cluster) -> list[tuple[str, str]]:
    return [(step["message"], (step.get("NodeClaim") or {}).get("name", "")) for step in provisioner_log(cluster)]


def settled(steps: Sequence[tuple[str, str]]) -> bool:
    """Every NodeClaim created has launched, and :data:`PASSES_AFTER_LAUNCH` passes began after the last
    creation or launch: the one before the last began with every NodeClaim in flight and made nothing."""
    created = {name for message, name in steps if message == CREATED}
    launched = {name for message, name in steps if message == LAUNCHED}
    last = max((i for i, (message, _) in enumerate(steps) if message != PASS), default=-1)
    passes = sum(1 for message, _ in steps[last + 1 :] if message == PASS)
    return created <= launched and passes >= PASSES_AFTER_LAUNCH and any(m == PASS for m, _ in steps)


def settle(cluster, within: float = SETTLE_WITHIN) -> list[dict]:
    """The NodeClaims once the provisioner has settled (see :func:`settled`)."""
    deadline = time.monotonic() + within
    while not settled(_log_steps(cluster)):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"the provisioner did not settle within {within:.0f} s: {_log_steps(cluster)}\n{cluster.controller.tail()}"
            )
        time.sleep(0.5)
    return cluster._objects().list_cluster_custom_object(*NODECLAIMS)["items"]


def pod_events(cluster, namespaces: Iterable[str]) -> tuple[dict[str, str], set[str]]:
    """Pod (namespace/name) → the NodeClaim its Nominated event names, and the pods with a FailedScheduling
    event (Karpenter's "Failed to schedule pod, ..." or "ignoring pod": the provisioner placed them nowhere)."""
    from kubernetes import client

    core = client.CoreV1Api(kube_client(cluster.api))
    nominated, failed = {}, set()
    for namespace in sorted(set(namespaces)):
        # an event of an earlier case's pod of the same name (published late) names that pod's UID, not this one's
        current = {pod.metadata.uid for pod in core.list_namespaced_pod(namespace).items}
        for event in core.list_namespaced_event(namespace).items:
            if event.involved_object.kind != "Pod" or event.involved_object.uid not in current:
                continue
            pod = f"{namespace}/{event.involved_object.name}"
            matched = NOMINATED.match(event.message or "")
            if event.reason == "Nominated" and matched:
                nominated.setdefault(pod, matched[1])
            elif event.reason == "FailedScheduling":
                failed.add(pod)
    return nominated, failed


def _workload(pod: Pod) -> str:
    return f"{pod.namespace}/{pod.template.workload}"


def _workloads(pods: Iterable[Pod]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(_workload(p) for p in pods).items()))


def _requirement(claim: Mapping, key: str) -> list[str]:
    return next((r.get("values") or [] for r in claim["spec"]["requirements"] if r["key"] == key), [])


def controller_claims(
    claims: Sequence[Mapping], nominated: Mapping[str, str], failed: set[str], workloads: Workloads
) -> tuple[list[Claim], list[Pod]]:
    """The controller's NodeClaims, each with the pods nominated to it, and the pods it placed nowhere.

    A pod whose Nominated event the rate limit dropped is neither nominated nor failed; it goes back on the
    NodeClaim whose ``pods`` request it is missing from, which needs no DaemonSet in the requests (their pods
    count there too) and such pods of one workload (else the test cannot tell and says so)."""
    by_uid = {p.uid: p for p in workloads.pods}
    taken: dict[str, list[Pod]] = {c["metadata"]["name"]: [] for c in claims}
    for uid, name in nominated.items():
        taken.setdefault(name, []).append(by_uid[uid])
    requested = {c["metadata"]["name"]: int(c["spec"]["resources"]["requests"].get("pods", 0)) for c in claims}
    lost = sum(requested.values()) - sum(len(pods) for pods in taken.values())
    candidates = sorted((p for p in workloads.pods if p.uid not in nominated and p.uid not in failed), key=lambda p: p.uid)
    if lost and candidates:  # without candidates, every pod is accounted for: the rest of the requests is daemons
        if workloads.daemon_sets or len({_workload(p) for p in candidates}) != 1 or len(candidates) < lost:
            raise AssertionError(
                f"{lost} Nominated event(s) lost to Karpenter's rate limit and the pods cannot be attributed: "
                f"{[p.uid for p in candidates]}"
            )
        for name, pods in taken.items():
            missing = requested[name] - len(pods)
            pods.extend(candidates[:missing])
            candidates = candidates[missing:]
    placed = {p.uid for pods in taken.values() for p in pods}
    found = sorted(
        Claim(
            claim["metadata"]["labels"][NODEPOOL],
            tuple(sorted(_requirement(claim, labels.INSTANCE_TYPE))),
            claim["metadata"]["labels"].get(labels.CAPACITY_TYPE),
            _workloads(taken[claim["metadata"]["name"]]),
        )
        for claim in claims
    )
    return found, [p for p in workloads.pods if p.uid not in placed]


def forecast_claims(forecast: Forecast, workloads: Workloads) -> list[Claim]:
    """The forecast's NodeClaims, each with the pods first nominated to it (as the events are read)."""
    by_uid = {p.uid: p for p in workloads.pods}
    return sorted(
        Claim(
            node.node_pool, tuple(sorted(node.options)), node.launch.capacity_type, _workloads(by_uid[u] for u in node.nominated)
        )
        for pool in forecast.pools
        for node in pool.nodes
    )


def forecast_pending(forecast: Forecast, workloads: Workloads) -> list[Pod]:
    """The pods the forecast places nowhere: unschedulable, or ignored by the provisioner."""
    pending = {uid for group in (*forecast.unschedulable, *forecast.ignored) for uid in group.pods}
    return [p for p in workloads.pods if p.uid in pending]


def differences(
    ours: Sequence[Claim], controllers: Sequence[Claim], our_pending: Sequence[Pod], pending: Sequence[Pod]
) -> list[str]:
    """One line per NodeClaim only one side has and per workload whose pods one side leaves pending more of
    (replicas are interchangeable: which of them Karpenter's queue takes first is its random UIDs' order)."""
    only_ours = sorted((Counter(ours) - Counter(controllers)).elements())
    only_theirs = sorted((Counter(controllers) - Counter(ours)).elements())
    mine, theirs = Counter(map(_workload, our_pending)), Counter(map(_workload, pending))
    return [
        *(f"only in the forecast: {c.show()}{_options_apart(c, only_theirs)}" for c in only_ours),
        *(f"only in the controller's: {c.show()}" for c in only_theirs),
        *(
            f"pending: {w} × {mine[w]} in the forecast, × {theirs[w]} in the controller's"
            for w in sorted(mine | theirs)
            if mine[w] != theirs[w]
        ),
    ]


def _options_apart(claim: Claim, others: Sequence[Claim]) -> str:
    """Where a NodeClaim of the other side differs from ``claim`` only in its options, which types."""
    twin = next(
        (
            o
            for o in others
            if (o.node_pool, o.capacity_type, o.workloads) == (claim.node_pool, claim.capacity_type, claim.workloads)
        ),
        None,
    )
    if twin is None:
        return ""
    return f"; the controller's twin also has {sorted(set(twin.options) - set(claim.options))}, not {sorted(set(claim.options) - set(twin.options))}"
