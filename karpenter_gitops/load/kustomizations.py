"""Kustomize layouts: the files a kustomization merges into other objects, which hold no whole object.

An overlay's ``kustomization.yaml`` lists patches: pieces of NodePools and EC2NodeClasses that kustomize
lays over the objects its ``resources`` bring in. Judged as whole objects they fail for all they leave out
(``spec.template: Required value``) and repeat their targets' names ("defined twice"). So a run sets
aside the files a kustomization lists as patches (``patches[].path``, ``patchesStrategicMerge``'s file
entries, ``patchesJson6902[].path``), with one note per kustomization, and the kustomization itself,
which is kustomize's settings and no Kubernetes object, quietly. A component's files are set aside by
the same rule: its ``kind: Component`` kustomization lists its own patches. A file named directly (a
pre-commit hook passes only the files a commit changed) is set aside when the nearest kustomization up
the tree that lists it does; the search ends at the repository's root, the folder holding ``.git``.
What kustomize makes of them is judged by ``validate --kustomize DIR``, which renders the layout: its
findings name the folder (:func:`rendered_name`) and, when the kustomization asks kustomize to annotate
each object with the file it came from (``buildMetadata: [originAnnotations]``), that file
(:func:`with_origins`).

A kustomization that cannot be read is one note, and the files beside it are judged as they are; a file
named like one that is another tool's object (a Flux ``Kustomization`` of ``kustomize.toolkit.fluxcd.io``)
is an ordinary manifest.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.findings import Finding

#: The file names kustomize reads a folder's kustomization from, in the order it tries them.
NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_API_GROUP = "kustomize.config.k8s.io/"
_KINDS = ("Kustomization", "Component")
_MAX_BYTES = 1 << 20  # a kustomization is a page of settings; a larger file is not read as one
_SHOWN = 5  # patch files named in a note; the rest are counted
_ORIGIN = "config.kubernetes.io/origin"  # the annotation kustomize writes with buildMetadata: [originAnnotations]


@dataclass(frozen=True)
class Kustomization:
    """One kustomization file: its absolute path, the real paths of the files it lists as patches, and why it
    could not be read (then it lists none)."""

    path: Path
    patches: frozenset[str] = frozenset()
    problem: str | None = None


def read(path: Path, data: bytes | None = None) -> Kustomization | None:
    """The kustomization in the file ``path`` (its bytes ``data`` when it is not on disk: a Git ref's); None when
    the file is another tool's object that only shares the name."""
    path = Path(os.path.abspath(path))
    try:
        settings = _settings(path, data)
    except _Unreadable as unreadable:
        return Kustomization(path, problem=str(unreadable))
    if not _is_kustomize(settings):
        return None
    try:
        listed = list(_patch_files(settings))
    except _Unreadable as unreadable:
        return Kustomization(path, problem=str(unreadable))
    real = os.path.realpath if data is None else os.path.normpath  # a tree not on disk has no links to follow
    return Kustomization(path, frozenset(real(path.parent / entry) for entry in listed))


class _Unreadable(Exception):
    """Why a kustomization file cannot be read as one."""


def _settings(path: Path, data: bytes | None) -> Any:
    """The one document of a kustomization file (of ``data``, when given)."""
    try:
        if (path.stat().st_size if data is None else len(data)) > _MAX_BYTES:
            raise _Unreadable(f"over {_MAX_BYTES >> 20} MiB")
        text = (path.read_bytes() if data is None else data).decode("utf-8")
        documents = [doc for doc in yaml_reader.documents(text) if doc is not None]
    except OSError as err:
        raise _Unreadable(f"cannot be read ({err.strerror or err})") from None
    except UnicodeDecodeError:
        raise _Unreadable("not UTF-8 text") from None
    except yaml_reader.YAMLError as err:
        problem, line = yaml_reader.problem(err)
        raise _Unreadable(f"invalid YAML{f' at line {line}' if line else ''}: {problem}") from None
    if len(documents) != 1 or not isinstance(documents[0], Mapping):
        raise _Unreadable("it holds no mapping of kustomize's settings" if not documents else "not one mapping of settings")
    return documents[0]


def _is_kustomize(settings: Mapping[str, Any]) -> bool:
    """Whether the settings are kustomize's (it takes them without apiVersion and kind too)."""
    api, kind = settings.get("apiVersion"), settings.get("kind")
    return (api is None or (isinstance(api, str) and api.startswith(_API_GROUP))) and (kind is None or kind in _KINDS)


def _patch_files(settings: Mapping[str, Any]) -> Iterator[str]:
    """The paths the settings list as patch files, as written (relative to the kustomization's folder). An
    inline patch (``patch: |``, or a ``patchesStrategicMerge`` entry of several lines) is no file."""
    for key in ("patches", "patchesStrategicMerge", "patchesJson6902"):
        entries = settings.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise _Unreadable(f"'{key}' is not a list")
        for entry in entries:
            if isinstance(entry, Mapping):
                path = entry.get("path")
            else:  # patchesStrategicMerge lists a file's path, or a patch itself
                path = entry if key == "patchesStrategicMerge" else None
            if isinstance(path, str) and path.strip() and "\n" not in path.strip():
                yield path.strip()


class Layouts:
    """The kustomizations a run's files meet, each read once: which files they set aside, and the notes on them.
    The files are on disk, or in ``tree``: a Git ref's kustomization files, by the absolute path each would have
    checked out in the repository (whose root holds ``.git`` on disk), for files of that ref at such paths."""

    def __init__(self, tree: Mapping[Path, bytes] | None = None) -> None:
        self._tree = tree
        self._by_folder: dict[Path, Kustomization | None] = {}
        self._shown: dict[Path, Path] = {}  # a kustomization's path → as the user's paths reach it
        self._aside: dict[Path, list[Path]] = {}  # a kustomization's path → the patch files it set aside
        self._unread: dict[Path, str] = {}  # a kustomization's path → why it could not be read

    def takes(self, file: Path) -> bool:
        """Whether ``file`` is set aside: a kustomization, or a patch file the nearest kustomization up the tree
        that lists it lists."""
        absolute = Path(os.path.abspath(file))
        if file.name in NAMES:
            kustomization = self._kustomization(absolute.parent, absolute.name)
            if kustomization is not None:
                self._met(kustomization, file)
                return True
            return False
        real = os.path.realpath(absolute) if self._tree is None else os.path.normpath(absolute)
        for folder in _up_from(absolute.parent):
            kustomization = self._in(folder)
            if kustomization is None:
                continue
            self._met(kustomization, file)
            if real in kustomization.patches:
                self._aside.setdefault(kustomization.path, []).append(absolute)
                return True
        return False

    def notes(self) -> list[tuple[Path, str]]:
        """(kustomization, why) for each kustomization that set aside a file, or could not be read."""
        notes = [
            (self._shown[path], f"not read as a kustomization ({problem}); the files beside it are judged as they are")
            for path, problem in self._unread.items()
        ]
        for path, aside in self._aside.items():
            folder = self._shown[path].parent
            named = [os.path.relpath(file, path.parent) for file in aside]
            shown = ", ".join(named[:_SHOWN]) + (f" and {len(named) - _SHOWN} more" if len(named) > _SHOWN else "")
            count = (
                f"{len(aside)} patch files not judged as whole objects"
                if len(aside) > 1
                else "1 patch file not judged as a whole object"
            )
            notes.append(
                (
                    self._shown[path],
                    f"{count} (kustomize merges them): {shown}; judge them merged with "
                    f"validate --kustomize {folder}, or kustomize build {folder} | karpenter-gitops validate -",
                )
            )
        return notes

    def _in(self, folder: Path) -> Kustomization | None:
        """The kustomization of ``folder``, if it has one: the first of kustomize's file names it holds."""
        if folder not in self._by_folder:
            name = next((name for name in NAMES if self._holds(folder / name)), None)
            self._by_folder[folder] = self._read(folder / name) if name else None
        return self._by_folder[folder]

    def _holds(self, path: Path) -> bool:
        return path.is_file() if self._tree is None else path in self._tree

    def _read(self, path: Path) -> Kustomization | None:
        return read(path, None if self._tree is None else self._tree[path])

    def _kustomization(self, folder: Path, name: str) -> Kustomization | None:
        """The kustomization file ``name`` of ``folder`` (the folder's own when it is the one kustomize reads there)."""
        found = self._in(folder)
        if found is not None and found.path.name == name:
            return found
        return self._read(folder / name) if self._holds(folder / name) else None

    def _met(self, kustomization: Kustomization, reached_from: Path) -> None:
        """Keep how the user's paths reach ``kustomization`` (relative when ``reached_from`` is), and why it was not read."""
        path = kustomization.path
        if path not in self._shown:
            self._shown[path] = path if reached_from.is_absolute() else Path(os.path.relpath(path))
        if kustomization.problem is not None:
            self._unread.setdefault(path, kustomization.problem)


def rendered_name(folder: Path | str) -> str:
    """What findings on kustomize's rendering of ``folder`` name as their file: its objects have no lines in any file."""
    return f"rendered by kustomize from {folder}"


def with_origins(findings: Iterable[Finding], documents: Sequence[Any], folder: str) -> list[Finding]:
    """``findings``, those on the objects of kustomize's rendering of ``folder`` (its ``documents``) naming the file
    each object came from as well, where kustomize annotated it: its path beside ``folder`` as the user named that
    (``base/nodepool.yaml`` for ``overlays/prod``'s ``../../base/nodepool.yaml``), a remote base's with its repository."""
    rendering = rendered_name(folder)
    origins: dict[int, str | None] = {}
    located = []
    for finding in findings:
        document = finding.source.document if finding.source is not None and finding.file == rendering else None
        if document is not None and document not in origins:
            origins[document] = _origin(documents[document - 1], folder) if 0 < document <= len(documents) else None
        origin = origins.get(document) if document is not None else None
        located.append(dataclasses.replace(finding, file=f"{rendering}, from {origin}") if origin else finding)
    return located


def _origin(document: Any, folder: str) -> str | None:
    """The file kustomize says ``document`` came from (``path``, relative to the kustomization, and ``repo`` for a
    remote base), or None."""
    metadata = document.get("metadata") if isinstance(document, Mapping) else None
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    said = annotations.get(_ORIGIN) if isinstance(annotations, Mapping) else None
    try:
        origin = yaml_reader.document(said) if isinstance(said, str) else None
    except yaml_reader.YAMLError:
        return None
    if not isinstance(origin, Mapping) or not isinstance(origin.get("path"), str) or not origin["path"]:
        return None
    path, repo = origin["path"], origin.get("repo")
    return f"{path} of {repo}" if isinstance(repo, str) and repo else os.path.normpath(os.path.join(folder, path))


def _up_from(folder: Path) -> Iterator[Path]:
    """``folder`` and the folders above it, to the repository's root (the folder holding ``.git``) or the file system's."""
    for above in (folder, *folder.parents):
        yield above
        if (above / ".git").exists():
            return
