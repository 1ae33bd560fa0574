"""Read the pods a repository's workload manifests would create, for the provisioning simulation.

Deployments, StatefulSets, ReplicaSets, Jobs, CronJobs (one run of the job template), DaemonSets and
bare Pods, from manifest files, rendered Helm/Kustomize output or ``kubectl get -o yaml`` (``List``
documents are opened; objects a controller owns and pods already bound to a node are skipped, so a
dump does not count a pod three times). Other documents are passed over with a note.

A pod template is read as the API server would store its pods: container requests default to their
limits, a host-network port is also a host port, ``restartPolicy: Always`` makes an init container
a sidecar from Kubernetes 1.29 and ``spec.resources`` counts from 1.34. A pod Karpenter would refuse
to provision for (``Provisioner.Validate``: restricted labels, ``matchFields``, malformed operators)
is kept with Karpenter's reason. What the simulation does not model marks the template approximated
(:data:`karpenter_gitops.karpenter.scheduling.pods.UNMODELLED`). A workload whose manifest is malformed
(a quantity that is none, a field of the wrong type) is left out with a problem naming the file,
document, object and field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.findings import Source
from karpenter_gitops.core.requirements import DOES_NOT_EXIST, EXISTS, GT, IN, LT, NOT_IN, Requirement, Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import NODEPOOL, LabelSelector, Toleration, restricted_label_error
from karpenter_gitops.karpenter.scheduling.nodes import POD_ENI
from karpenter_gitops.karpenter.scheduling.pods import (
    KUBE_SCHEDULER,
    AffinityTerm,
    Container,
    DaemonSet,
    HostPort,
    Pod,
    PodTemplate,
    Spread,
    replicas,
)
from karpenter_gitops.load.files import read

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "ReplicaSet", "Job", "CronJob", "DaemonSet", "Pod")
_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)  # Kubernetes' node selector operators (Gte/Lte are Karpenter's own)
_INTEGER = re.compile(r"^\d+$")
_SELECTOR_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
SIDECARS_SINCE = versions.Kubernetes(1, 29)
POD_RESOURCES_SINCE = versions.Kubernetes(1, 34)


@dataclass(frozen=True)
class WorkloadProblem:
    """A workload left out because its manifest is malformed: where, and how to fix it."""

    source: Source
    kind: str
    name: str
    path: str
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        where = f"{self.source.file}: document {self.source.document}" if self.source.document else self.source.file
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{where}: {self.kind} {self.name}: {self.path}: {self.message}{hint}"


@dataclass(frozen=True)
class Workloads:
    """The pods and DaemonSets the manifests describe, what was left out and why."""

    pods: tuple[Pod, ...] = ()
    daemon_sets: tuple[DaemonSet, ...] = ()
    problems: tuple[WorkloadProblem, ...] = ()
    notes: tuple[str, ...] = ()


class PodSpecError(ValueError):
    """A pod field that is not what the API server would store: ``path`` names it, ``hint`` how to fix it."""

    def __init__(self, path: str, message: str, hint: str | None = None):
        super().__init__(f"{path}: {message}")
        self.path, self.message, self.hint = path, message, hint


# --- typed access -------------------------------------------------------------------------------


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PodSpecError(path, f"expected a mapping, got {type(value).__name__}")
    return value


def _list(value: Any, path: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise PodSpecError(path, f"expected a list, got {type(value).__name__}")
    return value


def _text(value: Any, path: str, default: str = "") -> str:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise PodSpecError(path, f"expected a string, got {type(value).__name__}")
    return str(value)


def _count(value: Any, path: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PodSpecError(path, f"expected a non-negative integer, got {value!r}", "write a whole number, e.g. 3")
    return value


def _labels(value: Any, path: str) -> dict[str, str]:
    return {str(k): _text(v, f"{path}.{k}") for k, v in _mapping(value, path).items()}


def _quantities(value: Any, path: str) -> dict[str, str]:
    out = {}
    for name, quantity in _mapping(value, path).items():
        try:
            if resources.milli(quantity) < 0:
                raise PodSpecError(f"{path}.{name}", f"{quantity!r} is negative", "requests and limits are never negative")
        except resources.QuantityError as error:
            raise PodSpecError(f"{path}.{name}", str(error), "write a quantity such as 500m, 2, 512Mi or 1.5Gi") from None
        out[str(name)] = str(quantity)
    return out


# --- the pod spec -------------------------------------------------------------------------------


@dataclass
class _Read:
    """What reading one pod spec found besides the template fields."""

    approximations: set[str]
    invalid: list[str]


def _container(raw: Any, path: str, sidecars: bool, host_network: bool, found: _Read) -> Container:
    spec = _mapping(raw, path)
    name = _text(spec.get("name"), f"{path}.name")
    res = _mapping(spec.get("resources"), f"{path}.resources")
    limits = _quantities(res.get("limits"), f"{path}.resources.limits")
    requests = {**limits, **_quantities(res.get("requests"), f"{path}.resources.requests")}  # requests default to limits
    if POD_ENI in requests:
        found.approximations.add("pod-eni")
        requests.pop(POD_ENI)
        limits.pop(POD_ENI, None)
    ports = []
    for index, port in enumerate(_list(spec.get("ports"), f"{path}.ports")):
        where = f"{path}.ports[{index}]"
        port = _mapping(port, where)
        host = _count(port.get("hostPort"), f"{where}.hostPort", 0)
        if host_network and not host:
            host = _count(port.get("containerPort"), f"{where}.containerPort", 0)
        if host:
            ports.append(
                HostPort(
                    host,
                    _text(port.get("protocol"), f"{where}.protocol", "TCP"),
                    _text(port.get("hostIP"), f"{where}.hostIP", "0.0.0.0") or "0.0.0.0",
                )
            )
    sidecar = sidecars and spec.get("restartPolicy") == "Always"
    return Container(name, requests, limits, sidecar, tuple(ports))


def _requirement(raw: Any, path: str, found: _Read | None) -> Requirement:
    spec = _mapping(raw, path)
    key = _text(spec.get("key"), f"{path}.key")
    operator = _text(spec.get("operator"), f"{path}.operator")
    values = tuple(_text(v, f"{path}.values[{i}]") for i, v in enumerate(_list(spec.get("values"), f"{path}.values")))
    # what the API server refuses in a pod's node selector terms, before Karpenter ever sees the pod
    if operator not in _OPERATORS:
        raise PodSpecError(
            f"{path}.operator", f"{operator!r} is not a node selector operator", f"use one of {', '.join(_OPERATORS)}"
        )
    if (operator in (IN, NOT_IN)) != bool(values) or (
        operator in (GT, LT) and not (len(values) == 1 and _INTEGER.match(values[0]))
    ):
        raise PodSpecError(
            f"{path}.values",
            f"{list(values)} do not suit operator {operator}",
            "In/NotIn take values, Exists/DoesNotExist none, Gt/Lt one non-negative integer",
        )
    if found is not None and (restricted := restricted_label_error(key)):
        found.invalid.append(restricted)
    return Requirement(key, operator, values)


def _term(raw: Any, path: str, found: _Read | None) -> tuple[Requirement, ...]:
    """One node selector term; ``found`` collects what Karpenter's validation refuses (required terms only)."""
    spec = _mapping(raw, path)
    if found is not None and spec.get("matchFields"):
        found.invalid.append("node selector term with matchFields is not supported")
    return tuple(
        _requirement(r, f"{path}.matchExpressions[{i}]", found)
        for i, r in enumerate(_list(spec.get("matchExpressions"), f"{path}.matchExpressions"))
    )


def _selector(raw: Any, path: str) -> LabelSelector | None:
    if raw is None:
        return None
    spec = _mapping(raw, path)
    expressions = []
    for index, expression in enumerate(_list(spec.get("matchExpressions"), f"{path}.matchExpressions")):
        where = f"{path}.matchExpressions[{index}]"
        expression = _mapping(expression, where)
        operator = _text(expression.get("operator"), f"{where}.operator")
        values = tuple(_text(v, f"{where}.values[{i}]") for i, v in enumerate(_list(expression.get("values"), f"{where}.values")))
        if operator not in _SELECTOR_OPERATORS or (operator in (IN, NOT_IN)) != bool(values):
            return LabelSelector(match_expressions=(("", "Invalid", ()),))  # selects nothing, as an invalid selector does
        expressions.append((_text(expression.get("key"), f"{where}.key"), operator, values))
    return LabelSelector(tuple(sorted(_labels(spec.get("matchLabels"), f"{path}.matchLabels").items())), tuple(expressions))


def _affinity_term(raw: Any, path: str, found: _Read) -> AffinityTerm:
    spec = _mapping(raw, path)
    if spec.get("namespaceSelector") is not None:
        found.approximations.add("namespace-selector")
    namespaces = tuple(
        _text(n, f"{path}.namespaces[{i}]") for i, n in enumerate(_list(spec.get("namespaces"), f"{path}.namespaces"))
    )
    return AffinityTerm(
        _text(spec.get("topologyKey"), f"{path}.topologyKey"),
        _selector(spec.get("labelSelector"), f"{path}.labelSelector"),
        namespaces,
    )


def _weighted(raw: Any, path: str, field: str, read_one: Any, found: _Read) -> tuple:
    out = []
    for index, entry in enumerate(_list(raw, path)):
        where = f"{path}[{index}]"
        entry = _mapping(entry, where)
        out.append((_count(entry.get("weight"), f"{where}.weight", 0), read_one(entry.get(field), f"{where}.{field}", found)))
    return tuple(out)


def _spread(raw: Any, path: str) -> Spread:
    spec = _mapping(raw, path)
    max_skew = _count(spec.get("maxSkew"), f"{path}.maxSkew", 1)
    min_domains = spec.get("minDomains")
    return Spread(
        _text(spec.get("topologyKey"), f"{path}.topologyKey"), max_skew,
        _text(spec.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable", "DoNotSchedule"),
        _selector(spec.get("labelSelector"), f"{path}.labelSelector"),
        None if min_domains is None else _count(min_domains, f"{path}.minDomains", 1),
        _text(spec.get("nodeTaintsPolicy"), f"{path}.nodeTaintsPolicy", "Ignore"),
        _text(spec.get("nodeAffinityPolicy"), f"{path}.nodeAffinityPolicy", "Honor"),
        tuple(_text(k, f"{path}.matchLabelKeys[{i}]") for i, k in enumerate(_list(spec.get("matchLabelKeys"), f"{path}.matchLabelKeys"))),
    )  # fmt: skip


def _toleration(raw: Any, path: str) -> Toleration:
    spec = _mapping(raw, path)
    return Toleration(*(_text(spec.get(f), f"{path}.{f}") for f in ("key", "operator", "value", "effect")))


def _pod_template(
    raw: Any, path: str, namespace: str, workload: str, source: Source, kubernetes: versions.Kubernetes | None = None
) -> PodTemplate:
    """A pod template (``{metadata, spec}``) as the scheduler reads its pods; raises ``PodSpecError`` on a malformed field."""
    template = _mapping(raw, path)
    at = f"{path}.spec" if path else "spec"
    spec = _mapping(template.get("spec"), at)
    newest = kubernetes is None
    sidecars = newest or kubernetes >= SIDECARS_SINCE
    pod_level = newest or kubernetes >= POD_RESOURCES_SINCE
    found = _Read(set(), [])
    host_network = spec.get("hostNetwork") is True
    containers = tuple(
        _container(c, f"{at}.containers[{i}]", sidecars, host_network, found)
        for i, c in enumerate(_list(spec.get("containers"), f"{at}.containers"))
    )
    init_containers = tuple(
        _container(c, f"{at}.initContainers[{i}]", sidecars, host_network, found)
        for i, c in enumerate(_list(spec.get("initContainers"), f"{at}.initContainers"))
    )
    pod_resources = _mapping(spec.get("resources"), f"{at}.resources")
    pod_requests = {
        **_quantities(pod_resources.get("limits"), f"{at}.resources.limits"),
        **_quantities(pod_resources.get("requests"), f"{at}.resources.requests"),
    }
    affinity = _mapping(spec.get("affinity"), f"{at}.affinity")
    node = _mapping(affinity.get("nodeAffinity"), f"{at}.affinity.nodeAffinity")
    required = _mapping(node.get("requiredDuringSchedulingIgnoredDuringExecution"), f"{at}.affinity.nodeAffinity.required")
    terms_at = f"{at}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    required_terms = tuple(
        _term(t, f"{terms_at}[{i}]", found) for i, t in enumerate(_list(required.get("nodeSelectorTerms"), terms_at))
    )
    preferred_terms = _weighted(
        node.get("preferredDuringSchedulingIgnoredDuringExecution"),
        f"{at}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution",
        "preference",
        lambda raw, where, _: _term(raw, where, None),
        found,
    )  # Karpenter validates required terms only
    blocks = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        block = _mapping(affinity.get(kind), f"{at}.affinity.{kind}")
        where = f"{at}.affinity.{kind}"
        blocks[kind] = (
            tuple(
                _affinity_term(t, f"{where}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", found)
                for i, t in enumerate(_list(block.get("requiredDuringSchedulingIgnoredDuringExecution"), where))
            ),
            _weighted(
                block.get("preferredDuringSchedulingIgnoredDuringExecution"),
                f"{where}.preferredDuringSchedulingIgnoredDuringExecution",
                "podAffinityTerm",
                _affinity_term,
                found,
            ),
        )
    node_selector = _labels(spec.get("nodeSelector"), f"{at}.nodeSelector")
    for key in node_selector:
        if restricted := restricted_label_error(key):
            found.invalid.append(restricted)
    for index, volume in enumerate(_list(spec.get("volumes"), f"{at}.volumes")):
        volume = _mapping(volume, f"{at}.volumes[{index}]")
        if "persistentVolumeClaim" in volume or "ephemeral" in volume:
            found.approximations.add("volumes")
    if _list(spec.get("resourceClaims"), f"{at}.resourceClaims"):
        found.approximations.add("resource-claims")
    overhead = _quantities(spec.get("overhead"), f"{at}.overhead")
    if spec.get("runtimeClassName") and not overhead:
        found.approximations.add("runtime-class")
    if _text(spec.get("schedulerName"), f"{at}.schedulerName", KUBE_SCHEDULER) != KUBE_SCHEDULER:
        found.approximations.add("scheduler-name")
    pod = PodTemplate(
        namespace, workload, source,
        labels=_labels(_mapping(template.get("metadata"), "metadata").get("labels"), f"{path}.metadata.labels" if path else "metadata.labels"),
        containers=containers, init_containers=init_containers, overhead=overhead, pod_resources=pod_requests,
        node_selector=node_selector, required_terms=required_terms, preferred_terms=preferred_terms,
        tolerations=tuple(_toleration(t, f"{at}.tolerations[{i}]") for i, t in enumerate(_list(spec.get("tolerations"), f"{at}.tolerations"))),
        spreads=tuple(_spread(c, f"{at}.topologySpreadConstraints[{i}]")
                      for i, c in enumerate(_list(spec.get("topologySpreadConstraints"), f"{at}.topologySpreadConstraints"))),
        affinity=blocks["podAffinity"][0], preferred_affinity=blocks["podAffinity"][1],
        anti_affinity=blocks["podAntiAffinity"][0], preferred_anti_affinity=blocks["podAntiAffinity"][1],
        approximations=tuple(sorted(found.approximations)), sidecars_enabled=sidecars, pod_resources_enabled=pod_level,
    )  # fmt: skip
    if _list(spec.get("schedulingGates"), f"{at}.schedulingGates"):  # never marked unschedulable while gated
        return replace(pod, ignored="scheduling gates: kube-scheduler holds the pod back, so Karpenter does not provision for it")
    return _validated(pod, found.invalid)


def pod_template(
    pod: Mapping[str, Any], namespace: str, workload: str, source: Source, kubernetes: versions.Kubernetes | None = None
) -> PodTemplate:
    """A Pod object's template as the scheduler reads it (the cluster's pods share the workloads' reading);
    raises :class:`PodSpecError` on a malformed field."""
    try:
        return _pod_template(
            {"metadata": pod.get("metadata"), "spec": pod.get("spec")}, "", namespace, workload, source, kubernetes
        )
    except PodSpecError as bad:
        raise PodSpecError(bad.path, bad.message, bad.hint) from None


def _validated(pod: PodTemplate, invalid: list[str]) -> PodTemplate:
    """Karpenter's ``Provisioner.Validate``: a pod it ignores carries the reason, in its words."""
    wanted = pod.node_selector_requirements
    if pod.required_terms:
        wanted = wanted & Requirements.of(pod.required_terms[0])
    if pod.preferred_terms:
        wanted = wanted & Requirements.of(max(pod.preferred_terms, key=lambda t: t[0])[1])
    nodepool = wanted.get(NODEPOOL)
    if nodepool is not None and nodepool.operator == DOES_NOT_EXIST:
        return replace(
            pod, ignored=f"configured to not run on a Karpenter provisioned node (requirement={NODEPOOL} {DOES_NOT_EXIST})"
        )
    return replace(pod, ignored="ignoring pod, " + "; ".join(invalid)) if invalid else pod


# --- objects ------------------------------------------------------------------------------------


def _owned(metadata: Mapping[str, Any]) -> bool:
    owners = metadata.get("ownerReferences")
    return isinstance(owners, list) and any(isinstance(o, Mapping) and o.get("controller") is True for o in owners)


class _Reader:
    def __init__(self, kubernetes: versions.Kubernetes | None):
        self.kubernetes = kubernetes
        self.pods: list[Pod] = []
        self.daemon_sets: list[DaemonSet] = []
        self.problems: list[WorkloadProblem] = []
        self.notes: list[str] = []
        self._uids: set[str] = set()

    def document(self, doc: Any, file: str, number: int) -> None:
        if not isinstance(doc, Mapping):
            if doc is not None:
                self.notes.append(f"{file}: document {number} is not a Kubernetes object: passed over")
            return
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            for item in doc["items"]:
                self.document(item, file, number)
            return
        if kind not in WORKLOAD_KINDS:
            return
        metadata = doc.get("metadata") if isinstance(doc.get("metadata"), Mapping) else {}
        name = metadata.get("name") if isinstance(metadata.get("name"), str) and metadata.get("name") else f"<document {number}>"
        namespace = (
            metadata.get("namespace") if isinstance(metadata.get("namespace"), str) and metadata.get("namespace") else "default"
        )
        source = Source(file, number)
        if _owned(metadata):
            self.notes.append(f"{file}: {kind} {namespace}/{name} is owned by a controller: counted through its owner")
            return
        try:
            self._object(kind, name, namespace, doc, source)
        except PodSpecError as bad:
            self.problems.append(WorkloadProblem(source, kind, f"{namespace}/{name}", bad.path, bad.message, bad.hint))

    def _object(self, kind: str, name: str, namespace: str, doc: Mapping[str, Any], source: Source) -> None:
        spec = _mapping(doc.get("spec"), "spec")
        workload = f"{kind}/{name}"
        if kind == "Pod":
            if spec.get("nodeName"):
                self.notes.append(
                    f"{source.file}: Pod {namespace}/{name} is bound to node {spec['nodeName']}: not pending, passed over"
                )
                return
            template = _pod_template(
                {"metadata": doc.get("metadata"), "spec": spec}, "", namespace, workload, source, self.kubernetes
            )
            self._add(replicas(template, 1, [name]))
            return
        if kind == "CronJob":
            job = _mapping(_mapping(spec.get("jobTemplate"), "spec.jobTemplate").get("spec"), "spec.jobTemplate.spec")
            if spec.get("suspend") is True:
                self.notes.append(f"{source.file}: CronJob {namespace}/{name} is suspended: no pods")
                return
            self._job(job, "spec.jobTemplate.spec", name, namespace, workload, source)
            return
        if kind == "Job":
            self._job(spec, "spec", name, namespace, workload, source)
            return
        template = _pod_template(spec.get("template"), "spec.template", namespace, workload, source, self.kubernetes)
        if kind == "DaemonSet":
            self.daemon_sets.append(DaemonSet(name, template))
            return
        count = _count(spec.get("replicas"), "spec.replicas", 1)
        if kind == "StatefulSet" and _list(spec.get("volumeClaimTemplates"), "spec.volumeClaimTemplates"):
            template = _approximated(template, "volumes")
        self._add(replicas(template, count))

    def _job(self, spec: Mapping[str, Any], path: str, name: str, namespace: str, workload: str, source: Source) -> None:
        if spec.get("suspend") is True:
            self.notes.append(f"{source.file}: Job {namespace}/{name} is suspended: no pods")
            return
        parallelism = _count(spec.get("parallelism"), f"{path}.parallelism", 1)
        completions = spec.get("completions")
        count = parallelism if completions is None else min(parallelism, _count(completions, f"{path}.completions", 1))
        template = _pod_template(spec.get("template"), f"{path}.template", namespace, workload, source, self.kubernetes)
        self._add(replicas(template, count))

    def _add(self, pods: Iterable[Pod]) -> None:
        for pod in pods:
            if pod.uid in self._uids:  # two workloads whose pods would share a name: keep both apart
                pod = Pod(f"{pod.name}-{re.sub('[^a-z0-9]', '', pod.template.workload.partition('/')[0].lower())}", pod.template)
            self._uids.add(pod.uid)
            self.pods.append(pod)


def _approximated(template: PodTemplate, reason: str) -> PodTemplate:
    return replace(template, approximations=tuple(sorted({*template.approximations, reason})))


def workloads_from_documents(
    files: Iterable[tuple[str, Iterable[Any]]], kubernetes: versions.Kubernetes | None = None
) -> Workloads:
    """Workloads from already-parsed YAML documents, given as ``(file name, documents)`` pairs (stdin too)."""
    reader = _Reader(kubernetes)
    for name, docs in files:
        for index, doc in enumerate(docs):
            reader.document(doc, name, index + 1)
    return Workloads(tuple(reader.pods), tuple(reader.daemon_sets), tuple(reader.problems), tuple(reader.notes))


def read_workloads(paths: Iterable[str | Path], kubernetes: versions.Kubernetes | None = None) -> Workloads:
    """Workloads from files and directories (every ``*.yaml``/``*.yml`` below a directory)."""
    return workloads_from_documents(read(paths), kubernetes)
