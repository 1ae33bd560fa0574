"""Pods as the provisioning scheduler sees them: requests, node constraints, tolerations, topology.

Replicas of one workload share one :class:`PodTemplate` (frozen; the parsed spec) and differ only in
name, so ten thousand pods cost ten thousand small objects. A pod's requests follow kube-scheduler's
rule (``k8s.io/component-helpers/resource.PodRequests``, which Karpenter calls): the containers'
sum plus the sidecars (init containers with ``restartPolicy: Always``), against the largest
regular init container plus the sidecars started before it; pod-level ``resources`` replace cpu
and memory; ``overhead`` is added; Karpenter then adds ``pods: 1``.

What the simulation does not model is listed once, in :data:`UNMODELLED`; a template that uses
any of it carries the reasons in ``approximations`` and every report shows them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from karpenter_gitops.core.findings import Source
from karpenter_gitops.core.requirements import Requirement, Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import LabelSelector, Toleration

#: What a pod may ask for that the simulation does not follow, by id: the one list of approximations.
UNMODELLED = MappingProxyType({
    "volumes": "persistent volumes: their zone (volume topology) and CSI attachment limits are not modelled",
    "pod-eni": "vpc.amazonaws.com/pod-eni (security groups for pods): no per-type branch-interface table; the request is left out",
    "namespace-selector": "an affinity term's namespaceSelector needs namespace labels; only the pod's own and the listed namespaces count",
    "runtime-class": "runtimeClassName without spec.overhead: the RuntimeClass's overhead is unknown and left out",
    "scheduler-name": "a schedulerName other than default-scheduler: Karpenter acts only when kube-scheduler marks the pod unschedulable",
    "resource-claims": "resource claims (DRA) would need their ResourceClaims; Karpenter 1.15 ignores such pods by default",
})  # fmt: skip

KUBE_SCHEDULER = "default-scheduler"


@dataclass(frozen=True)
class Container:
    """One container's requests (already defaulted from limits, as the API server does) and host ports."""

    name: str
    requests: Mapping[str, str]
    limits: Mapping[str, str] = field(default_factory=dict)
    sidecar: bool = False  # an init container with restartPolicy: Always
    host_ports: tuple[HostPort, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "resources": {}}
        if self.requests:
            out["resources"]["requests"] = dict(self.requests)
        if self.limits:
            out["resources"]["limits"] = dict(self.limits)
        if self.sidecar:
            out["restartPolicy"] = "Always"
        if self.host_ports:
            out["ports"] = [port.to_json() for port in self.host_ports]
        return out


@dataclass(frozen=True, order=True)
class HostPort:
    """A host port a container binds (Karpenter's ``HostPort``: ip, port, protocol)."""

    port: int
    protocol: str = "TCP"
    ip: str = "0.0.0.0"

    def conflicts(self, other: HostPort) -> bool:
        unspecified = ("0.0.0.0", "::")
        same_ip = self.ip == other.ip or self.ip in unspecified or other.ip in unspecified
        return self.port == other.port and self.protocol == other.protocol and same_ip

    def to_json(self) -> dict[str, Any]:
        return {
            "containerPort": self.port,
            "hostPort": self.port,
            "protocol": self.protocol,
            **({"hostIP": self.ip} if self.ip != "0.0.0.0" else {}),
        }


@dataclass(frozen=True)
class Spread:
    """A ``topologySpreadConstraint``."""

    topology_key: str
    max_skew: int
    when_unsatisfiable: str = "DoNotSchedule"
    selector: LabelSelector | None = None
    min_domains: int | None = None
    node_taints_policy: str = "Ignore"
    node_affinity_policy: str = "Honor"
    match_label_keys: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.when_unsatisfiable != "ScheduleAnyway"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topologyKey": self.topology_key,
            "maxSkew": self.max_skew,
            "whenUnsatisfiable": self.when_unsatisfiable,
            "nodeTaintsPolicy": self.node_taints_policy,
            "nodeAffinityPolicy": self.node_affinity_policy,
        }
        if self.selector is not None:
            out["labelSelector"] = self.selector.to_json()
        if self.min_domains is not None:
            out["minDomains"] = self.min_domains
        if self.match_label_keys:
            out["matchLabelKeys"] = list(self.match_label_keys)
        return out


@dataclass(frozen=True)
class AffinityTerm:
    """A pod (anti-)affinity term: pods matching ``selector`` in ``namespaces`` (empty: the pod's own)."""

    topology_key: str
    selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topologyKey": self.topology_key}
        if self.selector is not None:
            out["labelSelector"] = self.selector.to_json()
        if self.namespaces:
            out["namespaces"] = list(self.namespaces)
        return out


NodeTerm = tuple[Requirement, ...]  # one nodeSelectorTerm's matchExpressions


@dataclass(frozen=True, eq=False)
class PodTemplate:
    """What every replica of a workload shares. Identity-hashed: replicas point at one template."""

    namespace: str
    workload: str  # "Deployment/web", "DaemonSet/node-exporter", "Pod/debug"
    source: Source
    labels: Mapping[str, str] = field(default_factory=dict)
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: Mapping[str, str] = field(default_factory=dict)
    pod_resources: Mapping[str, str] = field(default_factory=dict)  # spec.resources.requests (pod-level)
    node_selector: Mapping[str, str] = field(default_factory=dict)
    required_terms: tuple[NodeTerm, ...] = ()  # OR-ed nodeSelectorTerms
    preferred_terms: tuple[tuple[int, NodeTerm], ...] = ()  # (weight, term)
    tolerations: tuple[Toleration, ...] = ()
    spreads: tuple[Spread, ...] = ()
    affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[tuple[int, AffinityTerm], ...] = ()
    anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[tuple[int, AffinityTerm], ...] = ()
    approximations: tuple[str, ...] = ()  # keys of UNMODELLED this template uses
    ignored: str | None = None  # why Karpenter would not provision for it at all, in its words
    sidecars_enabled: bool = True  # restartPolicy: Always on init containers is honoured (Kubernetes 1.29+)
    pod_resources_enabled: bool = True  # spec.resources is honoured (Kubernetes 1.34+)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_requests", None)

    @property
    def requests(self) -> resources.Vector:
        """The pod's requests as the scheduler counts them, including ``pods: 1`` (computed once)."""
        cached: resources.Vector | None = self.__dict__["_requests"]
        if cached is None:
            cached = pod_requests(self)
            object.__setattr__(self, "_requests", cached)
        return cached

    @property
    def host_ports(self) -> tuple[HostPort, ...]:
        """Karpenter's ``GetHostPorts``: the regular containers' host ports."""
        return tuple(port for container in self.containers for port in container.host_ports)

    @property
    def node_selector_requirements(self) -> Requirements:
        return Requirements.from_labels(self.node_selector)

    def to_json(self, name: str) -> dict[str, Any]:
        """One replica as a Kubernetes Pod (what Karpenter's own scheduler is fed in a differential run)."""
        spec: dict[str, Any] = {"containers": [c.to_json() for c in self.containers]}
        if self.init_containers:
            spec["initContainers"] = [c.to_json() for c in self.init_containers]
        if self.overhead:
            spec["overhead"] = dict(self.overhead)
        if self.pod_resources and self.pod_resources_enabled:
            spec["resources"] = {"requests": dict(self.pod_resources)}
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        if self.tolerations:
            spec["tolerations"] = [t.to_json() for t in self.tolerations]
        if self.spreads:
            spec["topologySpreadConstraints"] = [s.to_json() for s in self.spreads]
        affinity = self._affinity_json()
        if affinity:
            spec["affinity"] = affinity
        metadata: dict[str, Any] = {"name": name, "namespace": self.namespace}
        if self.labels:
            metadata["labels"] = dict(self.labels)
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}

    def _affinity_json(self) -> dict[str, Any]:
        def term(requirements: NodeTerm) -> dict[str, Any]:
            return {
                "matchExpressions": [
                    {"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                    for r in requirements
                ]
            }

        out: dict[str, Any] = {}
        node: dict[str, Any] = {}
        if self.required_terms:
            node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term(t) for t in self.required_terms]}
        if self.preferred_terms:
            node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": w, "preference": term(t)} for w, t in self.preferred_terms
            ]
        if node:
            out["nodeAffinity"] = node
        for key, required, preferred in (
            ("podAffinity", self.affinity, self.preferred_affinity),
            ("podAntiAffinity", self.anti_affinity, self.preferred_anti_affinity),
        ):
            block: dict[str, Any] = {}
            if required:
                block["requiredDuringSchedulingIgnoredDuringExecution"] = [t.to_json() for t in required]
            if preferred:
                block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                    {"weight": w, "podAffinityTerm": t.to_json()} for w, t in preferred
                ]
            if block:
                out[key] = block
        return out


@dataclass(frozen=True)
class Pod:
    """One pod: a name and the template it shares with its siblings."""

    name: str
    template: PodTemplate

    @property
    def namespace(self) -> str:
        return self.template.namespace

    @property
    def uid(self) -> str:
        """``namespace/name``: the queue's last tie-break, the same UID the Go harness gives a pod without one."""
        return f"{self.template.namespace}/{self.name}"

    def to_json(self) -> dict[str, Any]:
        return self.template.to_json(self.name)


@dataclass(frozen=True)
class DaemonSet:
    """A DaemonSet: its pod lands on every node it tolerates and selects, and counts as overhead there."""

    name: str
    template: PodTemplate

    def to_json(self) -> dict[str, Any]:
        pod = self.template.to_json(self.name)
        return {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": self.name, "namespace": self.template.namespace},
            "spec": {
                "selector": {"matchLabels": dict(self.template.labels) or {"app": self.name}},
                "template": {"metadata": {"labels": dict(self.template.labels) or {"app": self.name}}, "spec": pod["spec"]},
            },
        }


def _add(total: resources.Vector, more: Mapping[str, int]) -> None:
    for name, value in more.items():
        total[name] = total.get(name, 0) + value


def _raise_to(total: resources.Vector, other: Mapping[str, int]) -> None:
    for name, value in other.items():
        if name not in total or value > total[name]:
            total[name] = value


def pod_requests(template: PodTemplate) -> resources.Vector:
    """Requests as kube-scheduler counts them (``PodRequests``), plus ``pods: 1`` (``RequestsForPods``)."""
    total: resources.Vector = {}
    for container in template.containers:
        _add(total, resources.vector(container.requests))
    sidecars: resources.Vector = {}
    largest_init: resources.Vector = {}
    for container in template.init_containers:
        requests = resources.vector(container.requests)
        if container.sidecar and template.sidecars_enabled:
            _add(total, requests)
            _add(sidecars, requests)
            _raise_to(largest_init, sidecars)
        else:
            _raise_to(largest_init, resources.merge(requests, sidecars))
    _raise_to(total, largest_init)
    if template.pod_resources_enabled:
        for name, value in resources.vector(template.pod_resources).items():
            if name in (resources.CPU, resources.MEMORY) or name.startswith("hugepages-"):
                total[name] = value
    _add(total, resources.vector(template.overhead))
    total[resources.PODS] = resources.ONE_POD
    return total


def replicas(template: PodTemplate, count: int, names: Iterable[str] | None = None) -> tuple[Pod, ...]:
    """``count`` pods of one template, named ``<workload name>-<n>`` unless names are given."""
    if names is not None:
        return tuple(Pod(name, template) for name in names)
    base = template.workload.partition("/")[2]
    return tuple(Pod(f"{base}-{index}", template) for index in range(count))
