"""Read input files: paths → UTF-8 text → YAML documents, with errors that name the file and line.

Unreadable input raises :class:`InputError` (the CLI prints one line and exits 2); what the
documents say is for :mod:`karpenter_gitops.load.documents` to read.
"""

from __future__ import annotations

import codecs
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.model import pack

# Big enough for a rendered fleet, small enough that a stray dump cannot exhaust memory.
MAX_FILE_BYTES = 256 * 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")
_CHUNK = 1 << 20


def display(path: Path) -> str:
    """A path as the user gave it (directory walks keep the directory the user named)."""
    return str(path)


def _check_size(path: Path, name: str) -> None:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file or directory", name, hint="check the path") from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None
    if size > MAX_FILE_BYTES:
        raise InputError(
            f"file is {size / 1_048_576:,.0f} MiB; files over {MAX_FILE_BYTES // 1_048_576} MiB are refused",
            name,
            hint="split it into smaller files",
        )


class _TextChunks:
    """A binary file read in chunks for the YAML parser, refused as soon as a chunk is not UTF-8 text."""

    def __init__(self, file: BinaryIO, name: str) -> None:
        self.file, self.name, self.offset = file, name, 0
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def read(self, size: int) -> bytes:
        chunk = self._chunk(size)
        self._decode(chunk)
        return chunk

    def read_all(self) -> str:
        return "".join(self._decode(chunk) for chunk in iter(lambda: self._chunk(_CHUNK), b"")) + self._decode(b"")

    def _chunk(self, size: int) -> bytes:
        try:
            chunk = self.file.read(size)
        except OSError as err:
            raise InputError(f"cannot read: {err.strerror}", self.name) from None
        if b"\0" in chunk:
            raise InputError("binary file, not YAML", self.name, hint="pass manifest or stack files only")
        return chunk

    def _decode(self, chunk: bytes) -> str:
        pending = len(self.decoder.getstate()[0])  # bytes of a character the last chunk cut in two
        try:
            text = self.decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as err:
            byte = self.offset - pending + err.start
            raise InputError(f"not UTF-8 text (byte {byte})", self.name, hint="save the file as UTF-8") from None
        self.offset += len(chunk)
        return text


def _open(path: Path, name: str) -> BinaryIO:
    _check_size(path, name)
    try:
        return path.open("rb")
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", name) from None


def read_text(path: Path) -> str:
    """Read a text file or raise an InputError that names it."""
    name = display(path)
    with _open(path, name) as file:
        return _TextChunks(file, name).read_all()


def read_documents(path: Path) -> list[Any]:
    """The YAML documents of a file, parsed as it is read (the text is never held whole)."""
    name = display(path)
    with _open(path, name) as file:
        return parse_yaml(_TextChunks(file, name), name)


def parse_yaml(source: str | _TextChunks, name: str) -> list[Any]:
    """The documents of YAML text (or a file being read); malformed YAML is an InputError naming the line."""
    try:
        return list(yaml_reader.documents(source))
    except yaml_reader.YAMLError as err:
        problem, line = yaml_reader.problem(err)
        raise InputError(f"invalid YAML: {problem}", name, line, "fix the YAML syntax at that line" if line else None) from None


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


class Documents(Sequence[Any]):
    """A file's YAML documents, each kept pickled (see :func:`karpenter_gitops.core.model.pack`) until read.

    A run reads every file before it knows which release to judge against (stack files say),
    so the documents of a large run wait here in a third of the memory their dicts take; a stack
    file's single document stays as it is, since it is read at once.
    """

    def __init__(self, documents: Iterable[Any]) -> None:
        self._items = [doc if is_stack_document(doc) else pack(doc) for doc in documents]

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]  (no slices: nothing needs them)
        item = self._items[index]
        return pickle.loads(item) if type(item) is bytes else item

    def packed(self, index: int) -> bytes:
        item = self._items[index]
        return item if type(item) is bytes else pack(item)


class ReadFile(NamedTuple):
    """One input file: its name as the user gave it, its path and its YAML documents."""

    name: str
    documents: Documents
    path: Path


class Texts(Mapping[str, str]):
    """File name → text, read again from disk when asked: only files with findings are, to locate them."""

    def __init__(self, files: Iterable[ReadFile]) -> None:
        self._paths = {file.name: file.path for file in files}

    def __getitem__(self, name: str) -> str:
        return read_text(self._paths[name])

    def __contains__(self, name: object) -> bool:  # Mapping's default would read the file to answer
        return name in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


def read_files(paths: Iterable[str | Path]) -> Iterator[ReadFile]:
    """Read and parse every file under ``paths``, one at a time."""
    for path in expand(paths):
        yield ReadFile(display(path), Documents(read_documents(path)), path)


def read(paths: Iterable[str | Path]) -> list[tuple[str, list[Any]]]:
    """Parse every file under ``paths`` into ``(file name, documents)`` pairs."""
    return [(file.name, file.documents) for file in read_files(paths)]
