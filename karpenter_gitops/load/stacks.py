"""Pulumi stack files: where ``Pulumi.<stack>.yaml`` lives, and the cluster facts runs need before loading.

A stack file is one cluster: its ``karpenter-gitops:cluster`` block names the cluster, its
Kubernetes version and the Karpenter release it runs; ``aws:region`` is the region pulumi-aws uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from karpenter_gitops.core import versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import NAMESPACE, Cluster
from karpenter_gitops.core.text import article, did_you_mean
from karpenter_gitops.core.typed_schema import type_name
from karpenter_gitops.load.files import (
    display,
    is_stack_file,
    parse_yaml,
    read_text,
)
from karpenter_gitops.load.keys import CLUSTER_KEYS


def cluster_block(value: Any, name: str) -> Cluster:
    key = f"{NAMESPACE}:cluster"
    if not isinstance(value, Mapping):
        raise InputError(f"'{key}' must be a mapping", name, hint=f"keys: {', '.join(CLUSTER_KEYS)}")
    for field_name in value:
        if field_name not in CLUSTER_KEYS:
            hint = did_you_mean(str(field_name), CLUSTER_KEYS) or f"known keys: {', '.join(CLUSTER_KEYS)}"
            raise InputError(f"unknown field '{key}.{field_name}'", name, hint=hint)
    for field_name in ("kubernetesVersion", "karpenterVersion"):
        if isinstance(value.get(field_name), float):
            raise InputError(
                f"'{key}.{field_name}' is the number {value[field_name]}; YAML drops trailing zeros",
                name,
                hint=f'quote it, e.g. {field_name}: "1.30"',
            )
    gates = value.get("featureGates") or {}
    if not isinstance(gates, Mapping) or not all(isinstance(k, str) and isinstance(v, bool) for k, v in gates.items()):
        raise InputError(
            f"'{key}.featureGates' must map gate names to true or false", name, hint="e.g. featureGates: {NodeClassCEL: true}"
        )
    for field_name in (k for k in CLUSTER_KEYS if k != "featureGates"):
        field_value = value.get(field_name)
        if field_value is not None and not isinstance(field_value, (str, int)) or isinstance(field_value, bool):
            raise InputError(
                f"'{key}.{field_name}' is {article(type_name(field_value))}; expected a string", name, hint="quote the value"
            )
    karpenter = value.get("karpenterVersion")
    try:
        parsed = versions.parse(str(karpenter)) if karpenter is not None else None
    except ValueError as err:
        raise InputError(f"'{key}.karpenterVersion': {err}", name) from None
    kube = value.get("kubernetesVersion")
    try:
        if kube is not None and not str(kube).count(".") == 1:
            raise ValueError
        kubernetes = versions.Kubernetes.parse(str(kube)) if kube is not None else None
    except ValueError:
        raise InputError(f"'{key}.kubernetesVersion' {kube!r} is not major.minor", name, hint='e.g. "1.32"') from None
    return Cluster(
        name=str(value["name"]) if value.get("name") is not None else None,
        kubernetes=kubernetes,
        release=parsed,
        feature_gates=frozenset(gate for gate, on in gates.items() if on),
    )


def _config_dir(project_dir: Path | None) -> Path:
    """Where the project keeps its stack files: Pulumi.yaml's stackConfigDir, else the project directory."""
    root = project_dir or Path()  # relative to the working directory, so messages name it as typed
    project = root / "Pulumi.yaml"
    if not project.is_file():
        return root
    docs = parse_yaml(read_text(project), display(project))
    meta = docs[0] if len(docs) == 1 and isinstance(docs[0], Mapping) else {}
    return root / str(meta.get("stackConfigDir") or ".")


def stack_names(project_dir: Path | None = None) -> list[str]:
    """Every stack of the project (``Pulumi.<name>.yaml`` in its stack directory), sorted."""
    names = sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in _config_dir(project_dir).glob("Pulumi.*.yaml"))
    if not names:
        raise InputError("the project has no stack files", display(_config_dir(project_dir)), hint="add Pulumi.<stack>.yaml")
    return names


def stack_file(stack: str, project_dir: Path | None = None) -> Path:
    """``stacks/Pulumi.<stack>.yaml`` (or the project's stackConfigDir)."""
    path = _config_dir(project_dir) / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise InputError(f"stack {stack!r} has no config file", display(path), hint="check --stack")
    return path


def _config(doc: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stack document's ``config`` when it is a mapping; loading the stack reports it otherwise."""
    config = doc.get("config")
    return config if isinstance(config, Mapping) else {}


def stack_release(files: Iterable[tuple[str, list[Any]]]) -> versions.Release | None:
    """The ``cluster.karpenterVersion`` the stack files among parsed ``files`` agree on, if any.

    One run judges every object against one release, so stacks that name different releases
    are refused rather than silently judged by the first one's rules.
    """
    found: dict[versions.Release, str] = {}
    for name, docs in files:
        if is_stack_file(docs):
            cluster = _config(docs[0]).get(f"{NAMESPACE}:cluster")
            if isinstance(cluster, Mapping) and cluster.get("karpenterVersion") is not None:
                found.setdefault(cluster_block(cluster, name).release, name)
    if len(found) > 1:
        (first, first_file), (other, other_file) = list(found.items())[:2]
        raise InputError(
            f"'{NAMESPACE}:cluster.karpenterVersion' is {versions.show(other)} here but "
            f"{versions.show(first)} in {first_file}; one run checks against one Karpenter release",
            other_file,
            hint="check the stacks in separate runs, or pass --karpenter-version",
        )
    return next(iter(found), None)


def workload_paths(value: Any, where: str | None = None) -> tuple[str, ...]:
    """A ``karpenter-gitops:workloads`` value as the paths it names; anything but a list of paths is an InputError."""
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise InputError(
            f"{NAMESPACE}:workloads must be a list of file or directory paths", where, hint="workloads: [k8s/apps, k8s/jobs.yaml]"
        )
    return tuple(value)


def stack_workloads(files: Iterable[tuple[str, list[Any]]]) -> tuple[str, ...]:
    """The ``workloads`` paths of the first stack file among parsed ``files`` naming them (empty when none does)."""
    for name, docs in files:
        if is_stack_file(docs) and (paths := _config(docs[0]).get(f"{NAMESPACE}:workloads")) is not None:
            return workload_paths(paths, name)
    return ()


def stack_aws_config(files: Iterable[tuple[str, list[Any]]]) -> dict[str, Any]:
    """The ``aws:`` keys of the first stack file among parsed ``files`` (the settings of its pulumi-aws provider)."""
    for _name, docs in files:
        if is_stack_file(docs):
            return {key: value for key, value in _config(docs[0]).items() if isinstance(key, str) and key.startswith("aws:")}
    return {}
