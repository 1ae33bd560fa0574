"""Small worlds for the provisioning simulation tests: real instance types (moto's catalogue), made-up prices."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from moto.ec2.models.instance_types import INSTANCE_TYPES

from karpenter_gitops.core import labels
from karpenter_gitops.core.findings import Source
from karpenter_gitops.core.requirements import Requirement, Requirements
from karpenter_gitops.karpenter.scheduling import resources
from karpenter_gitops.karpenter.scheduling.existing import StateNode
from karpenter_gitops.karpenter.scheduling.matching import HOSTNAME, INITIALIZED, NODEPOOL, Taint, Toleration
from karpenter_gitops.karpenter.scheduling.nodes import FamilyTraits, InstanceType, NodeClassSettings, PriceTable, instance_types
from karpenter_gitops.karpenter.scheduling.pods import Container, Pod, PodTemplate, replicas
from karpenter_gitops.karpenter.scheduling.world import NodePoolSpec, World

REGION = "us-west-2"
ZONES = ("us-west-2a", "us-west-2b", "us-west-2c")
#: On-demand $/h, us-east-1 list prices of the time (any table works: these only order the types).
PRICES = {
    "m5.large": 0.096, "m5.xlarge": 0.192, "m5.2xlarge": 0.384, "m5.4xlarge": 0.768,
    "c5.large": 0.085, "c5.xlarge": 0.17, "c5.2xlarge": 0.34,
    "r5.large": 0.126, "r5.xlarge": 0.252,
    "m6g.large": 0.077, "m6g.xlarge": 0.154, "c6g.large": 0.068,
    "g5.xlarge": 1.006, "m5.metal": 4.608,
}  # fmt: skip
AL2023 = FamilyTraits()
BOTTLEROCKET = FamilyTraits(eni_limited_memory_overhead=False, pods_per_core=False, ephemeral_device="/dev/xvdb")
SOURCE = Source("workloads.yaml", 1)


def info(name: str) -> dict:
    return INSTANCE_TYPES[name]


def types(
    names: Iterable[str] = tuple(PRICES),
    settings: NodeClassSettings | None = None,
    prices: Mapping[str, float] = PRICES,
    zones: Iterable[str] = ZONES,
    spot: Mapping[tuple[str, str], float] | None = None,
) -> tuple[InstanceType, ...]:
    names = tuple(names)
    return instance_types(
        [info(n) for n in names],
        {n: tuple(zones) for n in names},
        REGION,
        settings or NodeClassSettings("default"),
        PriceTable(dict(prices), "test prices", spot),
    )


def pool(
    name: str = "default",
    *requirements: Requirement,
    weight: int = 0,
    taints: Iterable[Taint] = (),
    limits: Mapping[str, str] | None = None,
    labels_: Mapping[str, str] | None = None,
    node_class: str = "default",
) -> NodePoolSpec:
    return NodePoolSpec(
        name,
        node_class,
        Requirements.of(requirements),
        dict(labels_ or {}),
        tuple(taints),
        weight,
        resources.vector(limits) if limits is not None else None,
    )


def on_demand(*extra: Requirement) -> tuple[Requirement, ...]:
    return (Requirement(labels.CAPACITY_TYPE, "In", ("on-demand",)), *extra)


def template(name: str = "web", cpu: str = "1", memory: str = "1Gi", namespace: str = "default", **fields) -> PodTemplate:
    fields.setdefault("labels", {"app": name})
    return PodTemplate(
        namespace, f"Deployment/{name}", SOURCE, containers=(Container("main", {"cpu": cpu, "memory": memory}),), **fields
    )


def pods(count: int, name: str = "web", cpu: str = "1", memory: str = "1Gi", **fields) -> tuple[Pod, ...]:
    return replicas(template(name, cpu, memory, **fields), count)


def world(
    pods_: Iterable[Pod], *pools: NodePoolSpec, instance_types_: Iterable[InstanceType] | None = None, daemon_sets=()
) -> World:
    pools = pools or (pool("default", *on_demand()),)
    classes = {p.node_class for p in pools}
    its = tuple(instance_types_) if instance_types_ is not None else types()
    return World(tuple(pools), {c: its for c in classes}, tuple(pods_), tuple(daemon_sets), "test prices")


def tolerate(key: str, value: str = "", effect: str = "NoSchedule") -> Toleration:
    return Toleration(key, "Equal" if value else "Exists", value, effect)


def state_node(
    name: str, *, bound=(), daemon_pods=(), pool_name: str = "default", initialized: bool = True, type_name: str = "m5.xlarge"
) -> StateNode:
    """A registered on-demand node of ``pool_name`` in us-west-2a with ``bound`` pods on it."""
    (kind,) = types([type_name])
    node_labels = {
        labels.INSTANCE_TYPE: kind.name, labels.ZONE: ZONES[0], labels.CAPACITY_TYPE: "on-demand",
        "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", NODEPOOL: pool_name, HOSTNAME: name,
        **({INITIALIZED: "true"} if initialized else {}),
    }  # fmt: skip
    return StateNode(
        name, pool_name, node_labels, (), dict(kind.capacity), dict(kind.allocatable), tuple(bound), (), tuple(daemon_pods),
        initialized, registered=True,
    )  # fmt: skip
