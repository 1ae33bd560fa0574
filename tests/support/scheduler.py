"""Karpenter's own provisioning scheduler as a judge: the ``karpenter-scheduler`` program `make tools`
builds from tools/karpenter-scheduler (our Go module; Karpenter v1.15.0 and its AWS provider as
dependencies).

One process per world: the world goes in as JSON on stdin, Karpenter's answer comes back as JSON
(the schema is the package comment of tools/karpenter-scheduler/main.go). The builders below make
the objects of a world as a user's manifests and EC2 would give them.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from support import real_tools as tools

# The release the scheduler is built from: the go.mod of tools/karpenter-scheduler decides it.
RELEASE = (1, 15)
HOW_TO_GET = "run `make tools` (needs Go; it builds tools/karpenter-scheduler with GOTOOLCHAIN=go1.27.3)"
EC2NODECLASS = {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}


class SchedulerRefused(RuntimeError):
    """The program answered with an exit code other than 0: 2 for an unusable world, 3 for a failure."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"karpenter-scheduler exited {code}: {message}")
        self.code = code
        self.message = message


def binary() -> Path:
    path = tools.find("karpenter-scheduler")
    if path is None:
        tools.unavailable(f"karpenter-scheduler not found: {HOW_TO_GET}")
    return path


def _json(value: Any) -> Any:
    """boto3 answers carry datetimes; the program reads RFC 3339."""
    if isinstance(value, datetime.datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON")


def schedule(world: Mapping[str, Any], *, program: Path | None = None, timeout: float = 300) -> dict[str, Any]:
    """Karpenter's answer for ``world``; raises SchedulerRefused when it gives none."""
    done = subprocess.run(
        [str(program or binary())],
        input=json.dumps(world, default=_json),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={},
    )
    if done.returncode != 0:
        raise SchedulerRefused(done.returncode, done.stderr.strip())
    return json.loads(done.stdout)


# --- builders ----------------------------------------------------------------------------------------


def pod(
    name: str,
    cpu: str = "1",
    memory: str = "1Gi",
    *,
    namespace: str = "default",
    labels: Mapping[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A pending pod with one container requesting ``cpu`` and ``memory``; ``spec`` adds pod-spec fields."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": {
            "containers": [{"name": "app", "image": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            **spec,
        },
    }


def node_pool(
    name: str,
    *,
    requirements: Iterable[Mapping[str, Any]] = (),
    weight: int | None = None,
    taints: Iterable[Mapping[str, Any]] = (),
    limits: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    node_class: str = "default",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": dict(labels or {})},
            "spec": {
                "nodeClassRef": {**EC2NODECLASS, "name": node_class},
                "requirements": list(requirements),
                "taints": list(taints),
            },
        }
    }
    if weight is not None:
        spec["weight"] = weight
    if limits is not None:
        spec["limits"] = dict(limits)
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def daemon_set(name: str, cpu: str, memory: str, *, namespace: str = "kube-system", **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": name, "image": name, "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
                    **spec,
                },
            },
        },
    }


def instance_type(
    name: str,
    cpu: int,
    memory_mib: int,
    pods: int,
    *,
    zones: Iterable[str] = ("us-east-1a", "us-east-1b", "us-east-1c"),
    on_demand: float,
    spot: float | None = None,
    arch: str = "amd64",
    kube_reserved: Mapping[str, str] | None = None,
    eviction: Mapping[str, str] | None = None,
    extended: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """An instance type as the scheduler sees it: capacity (``extended`` resources besides cpu, memory,
    pods and 20Gi of disk), overhead, and one offering per zone and market."""
    family, size = name.split(".", 1)
    offerings = [{"zone": zone, "capacityType": "on-demand", "price": on_demand} for zone in zones]
    if spot is not None:
        offerings += [{"zone": zone, "capacityType": "spot", "price": spot} for zone in zones]
    return {
        "name": name,
        "labels": {
            "kubernetes.io/arch": arch,
            "kubernetes.io/os": "linux",
            "karpenter.k8s.aws/instance-family": family,
            "karpenter.k8s.aws/instance-size": size,
            "karpenter.k8s.aws/instance-cpu": str(cpu),
            "karpenter.k8s.aws/instance-memory": str(memory_mib),
        },
        "capacity": {
            "cpu": str(cpu),
            "memory": f"{memory_mib}Mi",
            "pods": str(pods),
            "ephemeral-storage": "20Gi",
            **(extended or {}),
        },
        "overhead": {
            "kubeReserved": dict(kube_reserved or {}),
            "systemReserved": {},
            "evictionThreshold": dict(eviction or {"memory": "100Mi"}),
        },
        "offerings": offerings,
    }


def requirement(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)} if values else {"key": key, "operator": operator}
