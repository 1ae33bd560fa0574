"""Bottlerocket: userData is TOML settings (:mod:`.userdata.toml_settings`) that Karpenter parses, overrides and re-emits.

Karpenter decodes ``settings.kubernetes`` into a typed struct: keys it does not know are
logged and dropped, ``node-taints`` is replaced by the NodePool's taints, and the map-valued
settings want string values. A dotted key such as ``memory.available`` must be quoted; bare,
TOML reads it as nested tables, which the typed maps (and Bottlerocket's sysctl map) refuse.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from karpenter_gitops.core import versions
from karpenter_gitops.core.text import closest
from karpenter_gitops.karpenter.amifamily import bottlerocket_releases as releases
from karpenter_gitops.karpenter.amifamily.protocol import (
    NEURON,
    NVIDIA,
    STANDARD,
    Alias,
    AliasParameter,
    Family,
)
from karpenter_gitops.karpenter.amifamily.userdata import mime, rendered, taints, toml_settings
from karpenter_gitops.karpenter.amifamily.userdata.problems import (
    BOTTLEROCKET_LATEST_SETTING,
    BOTTLEROCKET_NODE_TAINTS,
    BOTTLEROCKET_OVERRIDDEN_SETTING,
    BOTTLEROCKET_RELEASE_SETTING,
    BOTTLEROCKET_SETTING_TYPE,
    BOTTLEROCKET_UNKNOWN_SETTING,
    FORMAT_MISMATCH,
    TOML,
    TOML_DOTTED_KEY,
    Problem,
)

# The settings.kubernetes keys of Karpenter's BottlerocketKubernetes struct (bottlerocketsettings.go).
KUBERNETES_SETTINGS = frozenset(
    {
        "api-server",
        "cloud-provider",
        "cluster-certificate",
        "cluster-name",
        "cluster-dns-ip",
        "credential-providers",
        "node-labels",
        "node-taints",
        "max-pods",
        "static-pods",
        "eviction-hard",
        "eviction-soft",
        "eviction-soft-grace-period",
        "eviction-max-pod-grace-period",
        "kube-reserved",
        "system-reserved",
        "allowed-unsafe-sysctls",
        "server-tls-bootstrap",
        "registry-qps",
        "registry-burst",
        "event-qps",
        "event-burst",
        "kube-api-qps",
        "kube-api-burst",
        "container-log-max-size",
        "container-log-max-files",
        "cpu-manager-policy",
        "cpu-manager-policy-options",
        "cpu-manager-reconcile-period",
        "topology-manager-scope",
        "topology-manager-policy",
        "image-gc-high-threshold-percent",
        "image-gc-low-threshold-percent",
        "ids-per-pod",
        "cpu-cfs-quota-enforced",
        "shutdown-grace-period",
        "shutdown-grace-period-for-critical-pods",
        "cluster-domain",
        "seccomp-default",
        "pod-pids-limit",
        "device-ownership-from-security-context",
        "single-process-oom-kill",
        "container-log-max-workers",
        "container-log-monitor-interval",
        "hostname-override-source",
        "log-level",
    }
)
# settings.kubernetes keys Karpenter always sets from the cluster, the NodePool and the EC2NodeClass.
OVERRIDDEN = {
    "cluster-name": "remove it: Karpenter sets the cluster's name",
    "api-server": "remove it: Karpenter sets the cluster endpoint",
    "cluster-certificate": "remove it: Karpenter sets the cluster's CA",
    "max-pods": "set spec.kubelet.maxPods in the EC2NodeClass instead",
    "cluster-dns-ip": "set spec.kubelet.clusterDNS in the EC2NodeClass instead",
}
_INTEGERS = ("max-pods", "eviction-max-pod-grace-period")
# settings.kubernetes maps whose keys are names that often contain dots.
_STRING_MAPS = (
    "node-labels",
    "eviction-hard",
    "eviction-soft",
    "eviction-soft-grace-period",
    "kube-reserved",
    "system-reserved",
)
_EXAMPLE = '[settings.kubernetes]\nmax-pods = 110\n\n[settings.kubernetes.eviction-hard]\n"memory.available" = "10%"'


def check(text: str) -> list[Problem]:
    if mime.is_mime(text):
        message = "Bottlerocket userData must be TOML settings; Karpenter cannot merge a MIME archive"
        return [Problem(TOML, message, _EXAMPLE)]
    if text.lstrip().startswith("#!"):
        message = (
            "this userData is a shell script, but Bottlerocket runs no userData scripts: Karpenter merges "
            "userData as TOML settings, and a script is not TOML, so the launch template fails"
        )
        hint = f"write Bottlerocket settings as TOML ({_EXAMPLE.splitlines()[0]} ...); run commands as bootstrap containers"
        return [Problem(FORMAT_MISMATCH, message, hint)]
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message = f"userData is not valid TOML, so Karpenter fails to build the launch template: {err}"
        return [Problem(TOML, message, _EXAMPLE)]
    kubernetes = toml_settings.table(document, "settings", "kubernetes")
    problems = [
        Problem(
            BOTTLEROCKET_UNKNOWN_SETTING,
            f"settings.kubernetes.{key} is not a setting Karpenter knows; it logs the key and drops it",
            _did_you_mean(key),
        )
        for key in kubernetes
        if key not in KUBERNETES_SETTINGS
    ]
    problems.extend(_overridden(kubernetes))
    problems.extend(_wrong_types(kubernetes))
    for name in _STRING_MAPS:
        problems.extend(_dotted_keys(kubernetes.get(name), f"settings.kubernetes.{name}"))
    problems.extend(_dotted_keys(toml_settings.table(document, "settings", "kernel").get("sysctl"), "settings.kernel.sysctl"))
    found = toml_settings.node_taints(document)
    if "node-taints" in kubernetes:
        listed = ", ".join(str(t) for t in found) or "none"
        moved = [t.repaired().as_dict() for t in found if t.key != taints.REGISTRATION_KEY]
        problems.append(
            Problem(
                BOTTLEROCKET_NODE_TAINTS,
                f"Karpenter replaces settings.kubernetes.node-taints with the NodePool's taints; these are lost: {listed}",
                "move them to the NodePool's spec.template.spec.taints:\n" + yaml.safe_dump(moved, sort_keys=False).rstrip(),
            )
        )
    return problems


def _overridden(kubernetes: Mapping[str, Any]) -> Iterator[Problem]:
    for key in kubernetes:
        instead = OVERRIDDEN.get(key)
        if instead:
            yield Problem(
                BOTTLEROCKET_OVERRIDDEN_SETTING,
                f"settings.kubernetes.{key} is set by Karpenter itself when it merges userData, so this value is replaced",
                instead,
            )


def _wrong_types(kubernetes: Mapping[str, Any]) -> Iterator[Problem]:
    """Values Karpenter's typed settings cannot decode: the launch template then fails."""
    for name in _STRING_MAPS:
        table = kubernetes.get(name)
        if table is not None and not isinstance(table, Mapping):
            yield _wrong_type(name, table, "a table of string values")
        elif isinstance(table, Mapping):
            for key, value in table.items():
                if not isinstance(value, (str, Mapping)):  # nested tables are the dotted-key mistake
                    yield _wrong_type(f"{name}.{json.dumps(key)}", value, "a string")
    for name in _INTEGERS:
        value = kubernetes.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            yield _wrong_type(name, value, "an integer")


def _wrong_type(path: str, value: Any, expected: str) -> Problem:
    return Problem(
        BOTTLEROCKET_SETTING_TYPE,
        f"settings.kubernetes.{path} is {json.dumps(value, default=str)}, but Karpenter reads it as {expected}, "
        "so merging the userData fails and no launch template is made",
        f"write it as {expected}",
    )


def _dotted_keys(table: Any, path: str) -> Iterator[Problem]:
    if not isinstance(table, Mapping):
        return
    for key, value in table.items():
        if isinstance(value, Mapping):
            leaves = list(_flatten(key, value))
            names = ", ".join(name for name, _ in leaves)
            quoted = [f"{json.dumps(name)} = {json.dumps(leaf, default=str)}" for name, leaf in leaves]
            yield Problem(
                TOML_DOTTED_KEY,
                f"{path}: {names} is written without quotes, so TOML reads it as nested tables under {key!r} "
                "instead of one key with dots; the setting is rejected or lost",
                "\n".join([f"[{path}]", *quoted]),
            )


def _flatten(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _flatten(f"{prefix}.{key}", inner)
    else:
        yield prefix, value


def _did_you_mean(key: str) -> str:
    close = closest(key, KUBERNETES_SETTINGS)
    return f"did you mean {close}?" if close else "remove it, or set it through a supported setting"


# --- the settings of the release behind the alias ----------------------------------------------

_RELEASE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)\Z")


def _release(match: re.Match[str]) -> releases.Release:
    """The release a ``_RELEASE`` match names."""
    major, minor, patch = (int(n) for n in match.groups())
    return major, minor, patch


# settings.kubernetes keys whose value in the merged settings is not the user's: set from the cluster (empty
# offline), the NodePool's taints, or spec.kubelet (which may write a shorter value).
_REPLACED = frozenset({"cluster-name", "api-server", "cluster-certificate", "node-taints", "max-pods", "cluster-dns-ip"})
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def render(text: str, release: versions.Release) -> str | None:
    """A lower bound of Karpenter's merge (``Bottlerocket.Script``): it parses the TOML, keeps the settings it
    knows, sets the cluster's and the NodePool's, and re-emits the whole as TOML, comments and layout gone.
    Rendered here with Karpenter's own settings as its encoder writes them, and the user's kept settings
    in the tersest TOML (one header per table that has values, ``key = value`` lines), which its encoder
    never undercuts; None when the text is not TOML (``userdata/toml`` says why)."""
    document = toml_settings.load(text) if text else {}
    if document is None:
        return None
    settings = dict(toml_settings.table(document, "settings"))
    kubernetes = {
        k: v for k, v in toml_settings.table(settings, "kubernetes").items() if k in KUBERNETES_SETTINGS and k not in _REPLACED
    }
    user_labels = kubernetes.pop("node-labels", None)
    labels = {**(user_labels if isinstance(user_labels, dict) else {}), **rendered.validation_labels(release)}
    key, effect = rendered.REGISTRATION_TAINT
    lines = ["[settings]", "[settings.kubernetes]", "api-server = ''", "cluster-name = ''"]
    if labels:
        lines += ["", "[settings.kubernetes.node-labels]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in labels.items())]
    lines += ["", "[settings.kubernetes.node-taints]", f"'{key}' = [':{effect}']"]
    lines += _tersest({**document, "settings": {**settings, "kubernetes": kubernetes}}, ())
    return "\n".join(lines) + "\n"


def _tersest(table: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[str]:
    """``table`` as the shortest TOML: a header and ``key = value`` lines for its values, then its subtables."""
    values = {k: v for k, v in table.items() if not isinstance(v, dict)}
    if values and path:
        yield "[" + ".".join(_toml_key(part) for part in path) + "]"
    for key, value in values.items():
        yield f"{_toml_key(key)} = {_toml_value(value)}"
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _tersest(value, (*path, key))


def _toml_key(key: str) -> str:
    """A bare key, else a quoted one (the encoder's single quotes are as long as our double ones)."""
    return key if _BARE_KEY.match(key) else json.dumps(key, ensure_ascii=False)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def release_problems(text: str, alias_version: str) -> list[Problem]:
    """Settings the Bottlerocket release an alias pins does not have (``latest``: judged as the newest recorded).

    Bottlerocket's API refuses userData with a setting its model lacks, whole. Karpenter passes every
    top-level setting through unread and the settings.kubernetes keys it knows, so both are judged.
    """
    document = None if mime.is_mime(text) else toml_settings.load(text)
    settings = toml_settings.table(document or {}, "settings")
    match = _RELEASE.match(alias_version)
    if not settings or not (match or alias_version == "latest"):
        return []
    pinned = _release(match) if match else None
    # The pinned release when every setting of it is recorded; None judges by the newest known.
    recorded = pinned if pinned is not None and pinned <= releases.NEWEST else None
    if recorded is not None:
        rule, where = BOTTLEROCKET_RELEASE_SETTING, f"Bottlerocket {releases.show(recorded)}"
    else:
        rule = BOTTLEROCKET_LATEST_SETTING
        where = (
            f"any Bottlerocket release up to {releases.show(releases.NEWEST)}, the newest karpenter-gitops knows "
            f"(bottlerocket@{alias_version} was judged as that release)"
        )
    refused = "Bottlerocket refuses the whole userData, so the node keeps none of its settings and never joins"
    problems = []
    for key in settings:
        since = releases.TOP_LEVEL.get(key)
        if since is None:
            known = [k for k, first in releases.TOP_LEVEL.items() if recorded is None or first <= recorded]
            close = closest(key, known)
            hint = f"did you mean settings.{close}?" if close else f"remove settings.{key}"
            problems.append(Problem(rule, f"settings.{key} is not a setting of {where}: {refused}", hint))
        elif pinned and since > pinned:
            problems.append(_too_new(f"settings.{key}", since, pinned, refused))
    for key in toml_settings.table(settings, "kubernetes"):
        if key not in KUBERNETES_SETTINGS or not pinned:
            continue  # Karpenter drops a key it does not know (bottlerocket-unknown-setting); Bottlerocket never sees it
        since = releases.KUBERNETES.get(key)
        if since and since > pinned:
            problems.append(_too_new(f"settings.kubernetes.{key}", since, pinned, refused))
        elif since is None and pinned <= releases.KUBERNETES_UNTIL:  # every key up to that release is recorded
            problems.append(
                Problem(
                    BOTTLEROCKET_RELEASE_SETTING,
                    f"settings.kubernetes.{key} is not a setting of Bottlerocket {releases.show(pinned)} (a later release "
                    f"brought it): {refused}",
                    f"pin a Bottlerocket release after {releases.show(releases.KUBERNETES_UNTIL)} that has it, or remove settings.kubernetes.{key}",
                )
            )
    return problems


def _too_new(path: str, since: releases.Release, pinned: releases.Release, refused: str) -> Problem:
    return Problem(
        BOTTLEROCKET_RELEASE_SETTING,
        f"{path} first appears in Bottlerocket {releases.show(since)}, but the alias pins {releases.show(pinned)}: {refused}",
        f"pin bottlerocket@{releases.show(since)} or later, or remove {path}",
    )


# --- the family ---------------------------------------------------------------------------------


def parameters(alias: Alias, k: str, release: versions.Release) -> tuple[AliasParameter, ...]:
    version = alias.version.lstrip("v")
    neuron_on_standard = release >= (1, 3)  # before v1.3.0 neuron types got the nvidia image

    def path(flavour: str, arch: str) -> str:
        return f"/aws/service/bottlerocket/aws-k8s-{k}{flavour}/{arch}/{version}/image_id"

    return (
        AliasParameter(path("", "x86_64"), (STANDARD, NEURON) if neuron_on_standard else (STANDARD,)),
        AliasParameter(path("", "arm64"), (STANDARD,)),
        AliasParameter(path("-nvidia", "x86_64"), (NVIDIA,) if neuron_on_standard else (NVIDIA, NEURON)),
        AliasParameter(path("-nvidia", "arm64"), (NVIDIA,)),
    )


FAMILY = Family(
    "Bottlerocket",
    image_name=re.compile(r"^bottlerocket-aws-k8s-(?P<k8s>\d+\.\d+)-"),
    alias="bottlerocket",
    version_format=re.compile(r"^v?\d+\.\d+\.\d+\Z"),
    version_example="bottlerocket@v1.32.0",
    parameters=parameters,
    check_userdata=check,
    pods_per_core=False,  # its settings have no podsPerCore
    eni_limited_memory_overhead=False,  # kube-reserved memory follows its pods capacity
    ephemeral_device="/dev/xvdb",  # the data volume; /dev/xvda is the OS
    render_userdata=render,
)
