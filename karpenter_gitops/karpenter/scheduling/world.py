"""The world a simulation runs in: NodePools, each EC2NodeClass's instance types, the pods and DaemonSets.

It serialises to the JSON Karpenter's own scheduler is fed in a differential run (``to_json``):
``objects`` holds the NodePools, Pods and DaemonSets as Kubernetes JSON, ``instanceTypes`` each
class's types with requirements, capacity, overhead and offerings (zone, capacity type, price,
availability).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from karpenter_gitops.core.model import NodePool
from karpenter_gitops.core.requirements import Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.matching import Taint
from karpenter_gitops.karpenter.scheduling.nodes import InstanceType
from karpenter_gitops.karpenter.scheduling.pods import DaemonSet, Pod


@dataclass(frozen=True)
class NodePoolSpec:
    """What of a NodePool the scheduler reads."""

    name: str
    node_class: str
    requirements: Requirements = Requirements()  # spec.template.spec.requirements (with minValues) and template labels
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    weight: int = 0
    limits: Mapping[str, int] | None = None
    static: bool = False  # spec.replicas is set: Karpenter's provisioner does not schedule pods to it
    manifest: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def node_requirements(self) -> Requirements:
        """Its requirements and its template labels, as every node of the pool has them."""
        return self.requirements & Requirements.from_labels(self.labels) if self.labels else self.requirements

    @classmethod
    def from_node_pool(cls, pool: NodePool) -> NodePoolSpec:
        """From a loaded NodePool; a limit that is no quantity raises :class:`resources.QuantityError`."""
        spec = pool.spec
        template = spec.template
        template_spec = template.spec if template else None
        metadata = template.metadata if template else None
        reference = template_spec.node_class_ref if template_spec else None
        taints = tuple(Taint(t.key or "", t.value or "", t.effect or "") for t in (template_spec and template_spec.taints) or ())
        limits = resources.vector({k: str(v) for k, v in spec.limits.items()}) if spec.limits is not None else None
        return cls(
            pool.name,
            (reference.name if reference else None) or "",
            Requirements.from_node_pool(pool),
            dict((metadata and metadata.labels) or {}),
            taints,
            spec.weight or 0,
            limits,
            spec.replicas is not None,
            pool.raw,
        )

    def to_json(self) -> dict[str, Any]:
        if self.manifest is not None:
            return dict(self.manifest)
        requirements = []
        for key in sorted(self.requirements):
            if key in self.labels:
                continue
            allowed = self.requirements[key]
            entry: dict[str, Any] = {"key": key, "operator": allowed.operator}
            if allowed.values:
                entry["values"] = sorted(allowed.values)
            if allowed.gte is not None:
                entry = {"key": key, "operator": "Gt", "values": [str(allowed.gte - 1)]}
            if allowed.lte is not None:
                entry = {"key": key, "operator": "Lt", "values": [str(allowed.lte + 1)]}
            if allowed.min_values is not None:
                entry["minValues"] = allowed.min_values
            requirements.append(entry)
        spec: dict[str, Any] = {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": self.node_class},
                    "requirements": requirements,
                }
            }
        }
        if self.labels:
            spec["template"]["metadata"] = {"labels": dict(self.labels)}
        if self.taints:
            spec["template"]["spec"]["taints"] = [t.to_json() for t in self.taints]
        if self.weight:
            spec["weight"] = self.weight
        if self.limits is not None:
            spec["limits"] = resources.as_quantities(self.limits)
        return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": self.name}, "spec": spec}


@dataclass(frozen=True)
class World:
    """Everything one simulation reads."""

    node_pools: tuple[NodePoolSpec, ...]
    instance_types: Mapping[str, tuple[InstanceType, ...]]  # by EC2NodeClass name
    pods: tuple[Pod, ...]
    daemon_sets: tuple[DaemonSet, ...] = ()
    price_source: str = ""
    notes: tuple[str, ...] = ()  # what the world leaves out (existing nodes, reservations, ...), said once

    def to_json(self) -> dict[str, Any]:
        objects = [pool.to_json() for pool in self.node_pools]
        objects += [daemon_set.to_json() for daemon_set in self.daemon_sets]
        objects += [pod.to_json() for pod in self.pods]
        return {
            "objects": objects,
            "instanceTypes": {name: [t.to_json() for t in types] for name, types in sorted(self.instance_types.items())},
        }
