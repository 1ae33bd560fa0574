"""Read input files: paths → UTF-8 text → YAML documents, with errors that name the file and line.

Unreadable input raises :class:`InputError` (the CLI prints one line and exits 2); what the
documents say is for :mod:`karpenter_gitops.load.documents` to read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from karpenter_gitops.core.errors import InputError
from karpenter_gitops.load import shape

MAX_FILE_BYTES = 5 * 1024 * 1024


YAML_SUFFIXES = (".yaml", ".yml")


_FastLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_MERGE_TAG = "tag:yaml.org,2002:merge"


class _Loader(_FastLoader):
    """A safe loader that refuses a key given twice in one mapping.

    PyYAML keeps the last value silently; kubectl and Pulumi (Go YAML) reject the file, so a
    check that passed here would judge a spec that never reaches the cluster. Keys a merge
    (``<<: *anchor``) brings in may still be overridden, as YAML allows.
    """

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: the base constructor reports it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep)


def display(path: Path) -> str:
    """A path as the user gave it (directory walks keep the directory the user named)."""
    return str(path)


def read_text(path: Path) -> str:
    """Read a text file or raise an InputError that names it."""
    name = display(path)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file or directory", name, hint="check the path") from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"file is {size / 1_048_576:.1f} MiB; files over {MAX_FILE_BYTES // 1_048_576} MiB are refused",
            name,
            hint="split it into smaller manifests",
        )
    try:
        data = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None
    if b"\0" in data:
        raise InputError("binary file, not YAML", name, hint="pass manifest or stack files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text (byte {err.start})", name, hint="save the file as UTF-8") from None


def parse_yaml(text: str, name: str) -> list[Any]:
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else None
        problem = err.problem or err.context or "malformed YAML"
        raise InputError(f"invalid YAML: {problem}", name, line, "fix the YAML syntax at that line") from None
    except yaml.YAMLError as err:
        raise InputError(f"invalid YAML: {err}", name) from None
    for index, document in enumerate(documents):
        shape.check(document, index + 1, name)
    return documents


def expand(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, plus every *.yaml / *.yml below named directories, sorted."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p
                for p in path.rglob("*")
                if p.suffix in YAML_SUFFIXES and p.is_file() and not any(part.startswith(".") for part in p.parts)
            )
            if not found:
                raise InputError("directory holds no .yaml or .yml files", display(path))
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise InputError("no such file or directory", display(path), hint="check the path")
    return files


def is_stack_document(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "config" in doc and "kind" not in doc and "apiVersion" not in doc


class ReadFile(NamedTuple):
    """One input file: its name as the user gave it, its YAML documents and the text they came from."""

    name: str
    documents: list[Any]
    text: str


def read_files(paths: Iterable[str | Path]) -> Iterator[ReadFile]:
    """Read and parse every file under ``paths``, one at a time, keeping each text (to locate findings)."""
    for path in expand(paths):
        name = display(path)
        text = read_text(path)
        yield ReadFile(name, parse_yaml(text, name), text)


def read(paths: Iterable[str | Path]) -> list[tuple[str, list[Any]]]:
    """Parse every file under ``paths`` into ``(file name, documents)`` pairs."""
    return [(file.name, file.documents) for file in read_files(paths)]
