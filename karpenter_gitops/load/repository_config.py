"""The repository's configuration file, ``.karpenter-gitops.yaml``: the defaults of the flags a team would
otherwise repeat on every run, read strictly.

.. code-block:: yaml

    karpenter-version: "1.12"
    feature-gates: {NodeOverlay: true}
    paths: [deploy/karpenter]
    policy: true
    policy-file: policies/karpenter.yaml
    rules:
      policy/ebs-encrypted: {severity: error}
    waivers: policies/waivers.yaml

:func:`find` looks for it from the working directory up to the repository's root (the folder holding
``.git``: a folder, or a file in a worktree or submodule) and never above it, so a file in a folder that
holds repositories is none of theirs; outside any repository, in the working directory alone. Paths in
it are relative to the folder holding it, wherever the command runs. Everything in it is checked before
anything else is read: an unknown key or a value of the wrong type is one :class:`InputError` naming the
file and the key, with a did-you-mean. The CLI lays it under its flags (:mod:`karpenter_gitops.cli.options`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from karpenter_gitops.core import feature_gates, versions
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.inputs import PolicySettings
from karpenter_gitops.core.text import did_you_mean
from karpenter_gitops.load import policy_settings
from karpenter_gitops.load.files import display, parse_yaml, read_text
from karpenter_gitops.load.keys import CONFIG_KEYS

FILE_NAME = ".karpenter-gitops.yaml"
_EXAMPLE = {
    "karpenter-version": 'karpenter-version: "1.12"',
    "feature-gates": "feature-gates: {NodeOverlay: true}",
    "paths": "paths: [deploy/karpenter]",
    "policy": "policy: true",
    "policy-file": "policy-file: policies/karpenter.yaml",
    "rules": "rules: {policy/ebs-encrypted: {severity: error}}",
    "waivers": "waivers: policies/waivers.yaml",
}


@dataclass(frozen=True)
class RepositoryConfig:
    """What a configuration file sets (None or empty: not set), its paths relative to the working directory."""

    file: Path
    release: versions.Release | None = None
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    paths: tuple[Path, ...] = ()
    policy: bool | None = None
    policy_file: Path | None = None
    rules: PolicySettings | None = None  # laid over the policy file's, rule by rule
    waivers: Path | None = None
    keys: tuple[str, ...] = ()  # the keys it sets, in its order


def find(start: Path) -> Path | None:
    """The configuration file that applies in ``start``: the nearest one from ``start`` up to its repository's
    root, or, outside a repository, the one in ``start``; None when there is none."""
    start = start.absolute()
    root = next((folder for folder in (start, *start.parents) if (folder / ".git").exists()), None)
    searched = [start] if root is None else [start, *start.parents[: len(start.parts) - len(root.parts)]]
    return next((folder / FILE_NAME for folder in searched if (folder / FILE_NAME).is_file()), None)


def read(path: Path) -> RepositoryConfig:
    """The configuration in the file at ``path``; anything it cannot use is an InputError naming the file."""
    shown = Path(os.path.relpath(path)) if path.is_absolute() else path
    name = display(shown)
    documents = [d for d in parse_yaml(read_text(path), name) if d is not None]
    if len(documents) > 1 or (documents and not isinstance(documents[0], Mapping)):
        raise InputError("a configuration file holds one mapping of settings", name, hint=f"keys: {', '.join(CONFIG_KEYS)}")
    return parse(documents[0] if documents else {}, shown)


def parse(settings: Mapping[Any, Any], file: Path) -> RepositoryConfig:
    """The configuration ``settings`` (the file's mapping) give; ``file`` is where they were read, as shown."""
    name, folder = display(file), file.parent
    values: dict[str, Any] = {}
    for key, value in settings.items():
        if key not in CONFIG_KEYS:
            hint = did_you_mean(str(key), CONFIG_KEYS) or f"known keys: {', '.join(CONFIG_KEYS)}"
            raise InputError(f"unknown key {str(key)!r}", name, hint=hint)
        values[key] = _READERS[key](value, key, name, folder)
    return RepositoryConfig(
        file,
        release=values.get("karpenter-version"),
        feature_gates=values.get("feature-gates", {}),
        paths=values.get("paths", ()),
        policy=values.get("policy"),
        policy_file=values.get("policy-file"),
        rules=values.get("rules"),
        waivers=values.get("waivers"),
        keys=tuple(values),
    )


def _wrong(key: str, name: str, expected: str) -> InputError:
    return InputError(f"'{key}' must be {expected}", name, hint=f"e.g. {_EXAMPLE[key]}")


def _release(value: Any, key: str, name: str, _folder: Path) -> versions.Release:
    if not isinstance(value, str):  # 1.10 unquoted is the number 1.1
        raise _wrong(key, name, "a quoted version")
    try:
        return versions.parse(value)
    except ValueError as err:
        raise InputError(f"'{key}': {err}", name, hint=f"e.g. {_EXAMPLE[key]}") from None


def _gates(value: Any, key: str, name: str, _folder: Path) -> dict[str, bool]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and type(v) is bool for k, v in value.items()):
        raise _wrong(key, name, "a mapping of gate names to true or false")
    # named as Karpenter's flag or its chart names them; whether the release judged has each is checked with it
    return feature_gates.canonical(value, versions.NEWEST, f"{name}: '{key}'")


def _paths(value: Any, key: str, name: str, folder: Path) -> tuple[Path, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise _wrong(key, name, "a list of paths")
    return tuple(_path(item, folder) for item in value)


def _flag(value: Any, key: str, name: str, _folder: Path) -> bool:
    if type(value) is not bool:
        raise _wrong(key, name, "true or false")
    return value


def _rules(value: Any, key: str, name: str, _folder: Path) -> PolicySettings:
    """Per rule id, ``{enabled, severity}``, read as a policy file's ``rules`` (an unknown rule id is refused with a
    did-you-mean, and what mirrors Karpenter cannot be changed)."""
    return policy_settings.parse({key: value}, name, key="", origin=f"set by the configuration file {name}")


def _file(value: Any, key: str, name: str, folder: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise _wrong(key, name, "a path")
    return _path(value, folder)


def _path(value: str, folder: Path) -> Path:
    """``value`` (relative to the configuration file's ``folder``) as the working directory reaches it."""
    return Path(os.path.normpath(folder / value))


_READERS = {
    "karpenter-version": _release,
    "feature-gates": _gates,
    "paths": _paths,
    "policy": _flag,
    "policy-file": _file,
    "rules": _rules,
    "waivers": _file,
}
