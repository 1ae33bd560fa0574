"""The cluster's nodes and pods as the scheduler sees them, from a :class:`~karpenter_gitops.core.cluster.ClusterState`.

Karpenter's cluster state holds every Node (a NodePool's or not) with the pods bound to it
(``state.StateNode``). A pod bound to a node (``spec.nodeName``) is that node's load; one a
DaemonSet owns counts as daemon overhead there, and its DaemonSet's pod lands on every new node as
well; a mirror pod or a pod a Node owns stays with its node; a pod bound nowhere is pending.
Terminal pods (``Succeeded``, ``Failed``) take no room and are left out, as cluster state leaves them.
A Node being deleted is left out (Karpenter schedules onto active nodes only). A NodeClaim that has
launched (it reports its capacity) but has no Node yet (no ``status.nodeName``) is a node in flight: its labels,
its taints but the startup ones, its capacity and allocatable, no pods, not initialized.

Pods of the forecast's workloads that the cluster already runs (or holds pending) are counted once:
:func:`not_yet_running` drops as many of a workload's pods as the cluster has of it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.cluster import MIRROR_ANNOTATION, NODEPOOL_LABEL, ClusterState
from karpenter_gitops.core.findings import Source
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.existing import Cluster, StateNode
from karpenter_gitops.karpenter.scheduling.matching import INITIALIZED, Taint
from karpenter_gitops.karpenter.scheduling.pods import DaemonSet, Pod
from karpenter_gitops.load.workloads import PodSpecError, pod_template

TERMINAL = ("Succeeded", "Failed")
#: Taints a node carries while it starts, which Karpenter looks past on a node it has not initialized.
EPHEMERAL_TAINTS = frozenset(
    {
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
        "node.cloudprovider.kubernetes.io/uninitialized",
        "karpenter.sh/unregistered",
    }
)
POD_TEMPLATE_HASH = "pod-template-hash"
SNAPSHOT = "the cluster state"


def _owner(metadata: Mapping[str, Any]) -> Mapping[str, Any] | None:
    owners = [o for o in metadata.get("ownerReferences") or () if isinstance(o, Mapping)]
    return next((o for o in owners if o.get("controller") is True), owners[0] if owners else None)


def workload_of(pod: Mapping[str, Any]) -> str:
    """``Kind/name`` of the workload a pod belongs to, as the workload manifests name it: a ReplicaSet
    a Deployment made (named ``<deployment>-<pod-template-hash>``) stands for its Deployment."""
    metadata = pod["metadata"]
    owner = _owner(metadata)
    if owner is None:
        return f"Pod/{metadata['name']}"
    kind, name = str(owner.get("kind", "")), str(owner.get("name", ""))
    template_hash = (metadata.get("labels") or {}).get(POD_TEMPLATE_HASH)
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        return f"Deployment/{name[: -len(template_hash) - 1]}"
    return f"{kind}/{name}"


def cluster(state: ClusterState, kubernetes: versions.Kubernetes | None = None) -> Cluster:
    """The scheduler's view of ``state``; a pod whose spec cannot be read is left out with a note."""
    notes: list[str] = []
    bound: dict[str, dict[str, list[Pod]]] = {}
    pending: list[Pod] = []
    daemon_sets: dict[str, DaemonSet] = {}
    for item in state.pods:
        metadata, spec = item["metadata"], item["spec"]
        if item["status"].get("phase") in TERMINAL:
            continue
        namespace, workload = metadata["namespace"], workload_of(item)
        try:
            template = pod_template(item, namespace, workload, Source(SNAPSHOT), kubernetes)
        except PodSpecError as error:
            notes.append(f"Pod {namespace}/{metadata['name']} left out: {error}")
            continue
        pod = Pod(metadata["name"], template)
        owner = _owner(metadata) or {}
        kind = "daemon" if owner.get("kind") == "DaemonSet" else "static" if _stays(metadata, owner) else "pods"
        if kind == "daemon":
            daemon_sets.setdefault(f"{namespace}/{owner.get('name')}", DaemonSet(str(owner.get("name")), template))
        node = spec.get("nodeName")
        if node:
            bound.setdefault(node, {}).setdefault(kind, []).append(pod)
        elif kind == "pods":
            pending.append(pod)
    nodes = []
    for node in state.nodes:
        name = node["metadata"]["name"]
        if node["metadata"].get("deletionTimestamp"):
            continue
        nodes.append(_state_node(node, bound.pop(name, {})))
    for claim in state.node_claims:
        if claim["status"]["nodeName"] is None and claim["status"].get("capacity"):
            nodes.append(_in_flight(claim))
    for name, kinds in sorted(bound.items()):
        notes.append(
            f"{sum(len(p) for p in kinds.values())} pod(s) bound to node {name}, which the state does not hold: left out"
        )
    return Cluster(tuple(nodes), tuple(pending), tuple(daemon_sets[k] for k in sorted(daemon_sets)), tuple(notes))


def _stays(metadata: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """A mirror pod, or a pod a Node owns: nothing reschedules it (``IsOwnedByNode``, mirror pods)."""
    return MIRROR_ANNOTATION in (metadata.get("annotations") or {}) or owner.get("kind") == "Node"


def _state_node(node: Mapping[str, Any], pods: Mapping[str, list[Pod]]) -> StateNode:
    labels = node["metadata"]["labels"]
    pool = labels.get(NODEPOOL_LABEL, "")
    initialized = not pool or labels.get(INITIALIZED) == "true"  # a node no NodePool launched always is
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
        for t in node["spec"].get("taints") or ()
        if initialized or t.get("key") not in EPHEMERAL_TAINTS
    )
    status = node["status"]
    capacity = resources.vector(status.get("capacity") or {})
    allocatable = resources.vector(status["allocatable"]) if status.get("allocatable") else dict(capacity)
    return StateNode(
        node["metadata"]["name"], pool, dict(labels), taints, capacity, allocatable,
        tuple(pods.get("pods", ())), tuple(pods.get("static", ())), tuple(pods.get("daemon", ())), initialized, registered=True,
    )  # fmt: skip


def _in_flight(claim: Mapping[str, Any]) -> StateNode:
    """A launched NodeClaim before its Node registers, as cluster state holds it (``StateNode.Taints``: the
    NodeClaim's, less its startup taints and the ephemeral ones, while it is not initialized)."""
    spec, status = claim.get("spec") or {}, claim["status"]
    startup = {(t.get("key"), t.get("effect")) for t in spec.get("startupTaints") or ()}
    taints = tuple(
        Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
        for t in spec.get("taints") or ()
        if (t.get("key"), t.get("effect")) not in startup and t.get("key") not in EPHEMERAL_TAINTS
    )
    capacity = resources.vector(status["capacity"])
    allocatable = resources.vector(status["allocatable"]) if status.get("allocatable") else dict(capacity)
    labels = claim["metadata"]["labels"]
    return StateNode(claim["metadata"]["name"], labels.get(NODEPOOL_LABEL, ""), dict(labels), taints, capacity, allocatable)


def not_yet_running(workload_pods: Iterable[Pod], known: Cluster) -> tuple[Pod, ...]:
    """The workload pods beyond those of the same workload (namespace and ``Kind/name``) the cluster
    already runs or holds pending: a Deployment of 5 replicas with 3 running adds 2."""
    present: Counter[tuple[str, str]] = Counter()
    for pod in (*known.pending, *(p for node in known.nodes for p in (*node.pods, *node.static_pods))):
        present[(pod.namespace, pod.template.workload)] += 1
    out = []
    for pod in workload_pods:
        key = (pod.namespace, pod.template.workload)
        if present[key]:
            present[key] -= 1
            continue
        out.append(pod)
    return tuple(out)
