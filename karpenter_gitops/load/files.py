"""Read input files: paths → UTF-8 text → YAML documents, with errors that name the file and line.

Paths come as users have them: relative, absolute, through ``..``, under dot-directories (hidden
entries are skipped only *below* a directory the user named), and ``-`` for a multi-document
stream on standard input (``helm template … | karpenter-gitops validate -``), named ``<stdin>``.

A repository holds YAML that is not Kubernetes (Helm templates, CloudFormation, CI settings): a
file passes over with a reason (:attr:`ReadFile.skipped`) when nothing in it says it is meant as
a manifest or a stack file. The evidence is ``apiVersion`` or ``kind`` at a document's top, a
stack's ``config`` block, or the name ``Pulumi.<stack>.yaml``: a file that has it and does not
parse stays an error (exit 2), as does any file that cannot be read at all.
What the documents say is for :mod:`karpenter_gitops.load.into_inputs` to read.
"""

from __future__ import annotations

import codecs
import io
import os
import pickle
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, BinaryIO, NamedTuple

from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.errors import InputError
from karpenter_gitops.core.model import pack
from karpenter_gitops.load import kustomizations
from karpenter_gitops.load.partition import Part, Piece

# Big enough for a rendered fleet, small enough that a stray dump cannot exhaust memory.
MAX_FILE_BYTES = 256 * 1024 * 1024
YAML_SUFFIXES = (".yaml", ".yml")
_CHUNK = 1 << 20
STDIN = Path("-")  # as kubectl and kubeconform take it: the documents come on standard input
STDIN_NAME = "<stdin>"


def display(path: Path) -> str:
    """A path as the user gave it (directory walks keep the directory the user named)."""
    return STDIN_NAME if path == STDIN else str(path)


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

    def __init__(self, file: BinaryIO, name: str, first_byte: int = 0) -> None:
        self.file, self.name, self.offset = file, name, 0
        self.first_byte = first_byte  # where the stream starts in its file: errors name the file's byte
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
        if self.offset + len(chunk) > MAX_FILE_BYTES:  # a stream has no size to check before it is read
            raise InputError(
                f"input is over {MAX_FILE_BYTES // 1_048_576} MiB; refused", self.name, hint="split it into smaller files"
            )
        if b"\0" in chunk:
            raise InputError("binary file, not YAML", self.name, hint="pass manifest or stack files only")
        return chunk

    def _decode(self, chunk: bytes) -> str:
        pending = len(self.decoder.getstate()[0])  # bytes of a character the last chunk cut in two
        try:
            text = self.decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as err:
            byte = self.first_byte + self.offset - pending + err.start
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
    """The YAML documents of a file, checked chunk by chunk as it is read (its bytes, not its text, are held whole)."""
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


def expand(paths: Iterable[str | Path], passed_over: list[tuple[Path, str]] | None = None) -> list[Path]:
    """Files named directly, plus every *.yaml / *.yml below named directories, sorted; ``-`` stays itself.

    Below a named directory, hidden entries (``.git``, ``.github``...) are passed over and not
    walked; the directory the user named, and any of its parents, may be hidden themselves.
    Symlinked folders are walked as folders are (a repository may link a shared one in), each
    folder once however many links reach it, so a link back up the tree ends. A folder that
    cannot be read, or one already walked, is added to ``passed_over`` with the reason, for a note.
    Kustomizations and the patch files they list hold no whole object: they are left out, each
    kustomization that left out a file (or could not be read) in ``passed_over`` with a note
    (see :mod:`karpenter_gitops.load.kustomizations`).
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path == STDIN:
            if STDIN in files:
                raise InputError("standard input named twice", STDIN_NAME, hint="give - once")
            files.append(STDIN)
        elif path.is_dir():
            found = sorted(_walk(path, [] if passed_over is None else passed_over))
            if not found:
                raise InputError(
                    "directory holds no .yaml or .yml files",
                    display(path),
                    hint="name the folder that holds your Karpenter manifests",
                )
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise InputError("no such file or directory", display(path), hint="check the path")
    layouts = kustomizations.Layouts()
    files = [file for file in files if file == STDIN or not layouts.takes(file)]
    if passed_over is not None:
        passed_over.extend(layouts.notes())
    return files


def _walk(directory: Path, passed_over: list[tuple[Path, str]]) -> Iterator[Path]:
    """The YAML files below ``directory``, hidden files and directories below it left out (and not entered);
    folders not entered for another reason go to ``passed_over`` (see :func:`expand`)."""

    def unreadable(err: OSError) -> None:
        passed_over.append((Path(err.filename), f"cannot be read ({err.strerror or err})"))

    walked = {os.path.realpath(directory)}
    for root, subdirectories, names in os.walk(directory, onerror=unreadable, followlinks=True):
        entered = []
        for name in sorted(subdirectories):
            if name.startswith("."):
                continue
            real = os.path.realpath(os.path.join(root, name))
            if real in walked:
                passed_over.append((Path(root, name), f"a link to {real}, a folder already read"))
            else:
                walked.add(real)
                entered.append(name)
        subdirectories[:] = entered
        for name in names:
            path = Path(root, name)
            if not name.startswith(".") and path.suffix in YAML_SUFFIXES and path.is_file():
                yield path


# Where a file says it is meant as a Kubernetes manifest, read from its text when it does not parse.
_MANIFEST_KEY = re.compile(r"^(?:apiVersion|kind)\s*:", re.MULTILINE)
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_STACK_FILE = re.compile(r"^Pulumi\.[^/]+\.ya?ml$")  # a Pulumi stack's settings, never another tool's YAML
_CLOUDFORMATION = re.compile(
    r"^\s*AWSTemplateFormatVersion\s*:|!(?:Ref|Sub|GetAtt|Join|If|FindInMap|ImportValue)\b", re.MULTILINE
)


def _foreign_reason(text: str, line: int | None) -> str | None:
    """Why YAML text that does not parse (at ``line``, when known) is no manifest (a template,
    CloudFormation, another tool's YAML), or None when it says it is one (``apiVersion:`` or ``kind:``
    at a document's top)."""
    if _TEMPLATE.search(text):
        return "a template ({{ ... }}), not YAML yet; render it first, e.g. helm template ... | karpenter-gitops validate -"
    if _MANIFEST_KEY.search(text):
        return None
    if _CLOUDFORMATION.search(text):
        return "CloudFormation YAML (!Ref-style tags), not a Kubernetes manifest"
    where = f" at line {line}" if line else ""
    return f"YAML that is not a Kubernetes manifest (it does not parse{where}, and no document has apiVersion or kind)"


def _is_manifest_document(doc: Any) -> bool:
    """Whether a parsed document says it is meant as a Kubernetes object."""
    return isinstance(doc, Mapping) and ("apiVersion" in doc or "kind" in doc)


PULUMI_PROJECT_FILES = ("Pulumi.yaml", "Pulumi.yml")


def enclosing_project(start: Path) -> Path | None:
    """The Pulumi project ``start`` lies in: the nearest directory at or above it holding ``Pulumi.yaml``, as the
    Pulumi CLI finds its project."""
    start = start.absolute()
    for directory in (start, *start.parents):
        if any((directory / name).is_file() for name in PULUMI_PROJECT_FILES):
            return directory
    return None


def is_stack_document(doc: Any) -> bool:
    return isinstance(doc, Mapping) and "config" in doc and "kind" not in doc and "apiVersion" not in doc


def is_stack_file(documents: Sequence[Any]) -> bool:
    """Whether a file's documents are a Pulumi stack file's: one document of stack settings."""
    return len(documents) == 1 and is_stack_document(documents[0])


class Documents(Sequence[Any]):
    """A file's YAML documents, each kept pickled (see :func:`karpenter_gitops.core.model.pack`) until read.

    A run reads every file before it knows which release to judge against (stack files say),
    so the documents of a large run wait here in a third of the memory their dicts take; a stack
    file's single document stays as it is, since it is read at once. ``live=True`` keeps them as
    parsed until :meth:`compact` (reads give the parsed document itself, not a copy), so that a
    reader can load the file before they are packed, without unpickling each again.

    ``after``: the documents are the rest of a file whose first part held that many, which read as empty
    ones (None) so that each document keeps its number; they are counted, never stored, and
    :meth:`numbered` passes them by: a large file read in many slices would otherwise hold, and walk,
    more empty documents the further its slice lies in the file.
    """

    def __init__(self, documents: Iterable[Any], *, live: bool = False, after: int = 0) -> None:
        self._items = list(documents)
        self._after = after
        if not live:
            self.compact()

    def compact(self) -> None:
        """Keep the documents pickled from now on (each read gives a fresh copy)."""
        self._items = [doc if type(doc) is bytes or is_stack_document(doc) else pack(doc) for doc in self._items]

    def __len__(self) -> int:
        return self._after + len(self._items)

    def __getitem__(self, index: int) -> Any:  # type: ignore[override]  # no slices: nothing needs them
        own = self._own(index)
        return None if own < 0 else _unpacked(self._items[own])

    def numbered(self) -> Iterator[tuple[int, Any]]:
        """(index, document) of each document this part of its file holds, as ``enumerate`` gives them, the
        documents of the parts before it passed by."""
        return ((self._after + own, _unpacked(item)) for own, item in enumerate(self._items))

    def packed(self, index: int) -> bytes:
        """The document pickled; a live one stays packed from then on, so that its object and the file share the bytes."""
        own = self._own(index)
        item = self._items[own]
        if type(item) is bytes:
            return item
        packed = pack(item)
        if not is_stack_document(item):
            self._items[own] = packed
        return packed

    def _own(self, index: int) -> int:
        """The place in ``_items`` of the document at ``index`` of the file: negative for one of an earlier part."""
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return index - self._after


def _unpacked(item: Any) -> Any:
    """A document as :class:`Documents` keeps it, as a reader gets it: a fresh copy of a pickled one."""
    return pickle.loads(item) if type(item) is bytes else item


class ReadFile(NamedTuple):
    """One input file: its name as the user gave it, its path and its YAML documents; ``skipped``
    says why a file that is no Kubernetes YAML was passed over (then it has no documents)."""

    name: str
    documents: Documents
    path: Path
    skipped: str | None = None
    text: str | None = None  # standard input's, kept: it cannot be read twice
    passed_over: str | None = None  # why an entry below a named folder was not read at all (no documents)


class Texts(Mapping[str, str]):
    """File name → text, read again from disk when asked: only files with findings are, to locate them."""

    def __init__(self, files: Iterable[ReadFile]) -> None:
        self._files = {file.name: file for file in files}

    def __getitem__(self, name: str) -> str:
        file = self._files[name]
        return file.text if file.text is not None else read_text(file.path)

    def __contains__(self, name: object) -> bool:  # Mapping's default would read the file to answer
        return name in self._files

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def read_files(
    paths: Iterable[str | Path], stdin: BinaryIO | None = None, *, live: bool = False, stdin_name: str = STDIN_NAME
) -> Iterator[ReadFile]:
    """Read and parse every file under ``paths``, one at a time; ``-`` reads ``stdin`` (default: the process's),
    named ``stdin_name``. With ``live``, each file's documents stay as parsed until the caller compacts them
    (:class:`Documents`)."""
    passed_over: list[tuple[Path, str]] = []
    for path in expand(paths, passed_over):
        yield _read_stdin(stdin or sys.stdin.buffer, live, stdin_name) if path == STDIN else _read_file(path, live)
    for path, reason in passed_over:
        yield ReadFile(display(path), Documents(()), path, passed_over=reason)


def pieces(
    files: Iterable[Path], stdin: Path | None = None, passed_over: Iterable[tuple[Path, str]] = (), rendered: Path | None = None
) -> list[Piece]:
    """Each of ``files`` (as :func:`expand` gives them) as a whole piece of a run (see
    :mod:`karpenter_gitops.load.partition`), standard input read from ``stdin``, the file it was spooled to, and
    named after the folder it was ``rendered`` from when it is kustomize's rendering, whose lines are no file's;
    then the folders :func:`expand` passed over, as :func:`read_files` gives them."""
    read = [
        Piece(
            stdin,
            STDIN_NAME if rendered is None else kustomizations.rendered_name(rendered),
            stdin=True,
            rendered=None if rendered is None else str(rendered),
        )
        if path == STDIN and stdin is not None
        else Piece(path, display(path))
        for path in files
    ]
    return read + [Piece(path, display(path), passed_over=reason) for path, reason in passed_over]


def read_part(part: Part, *, live: bool = False) -> Iterator[ReadFile]:
    """The files of ``part``, read one at a time: a whole file as :func:`read_files` reads it, a slice from its
    bytes, its documents numbered after those before it in its file (they stand in as empty ones) and an error
    in it placed on its line in the file."""
    for piece in part.pieces:
        if piece.passed_over is not None:
            yield ReadFile(piece.name, Documents(()), piece.path, passed_over=piece.passed_over)
        elif not piece.whole:
            yield _read_slice(piece, live)
        elif piece.stdin:
            with piece.path.open("rb") as spooled:  # refused as too large as it is read, as standard input is
                yield _read_stdin(spooled, live, piece.name)
        else:
            yield _read_file(piece.path, live)


def _read_slice(piece: Piece, live: bool) -> ReadFile:
    assert piece.end is not None
    try:
        with piece.path.open("rb") as file:
            file.seek(piece.start)
            data = file.read(piece.end - piece.start)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", piece.name) from None
    text = read_stream(io.BytesIO(data), piece.name, piece.start)
    try:
        return from_text(piece.name, text, STDIN if piece.stdin else piece.path, live=live, after=piece.documents_before)
    except InputError as err:
        if err.line is not None:
            err.line += piece.lines_before
        raise


def _read_file(path: Path, live: bool = False) -> ReadFile:
    name = display(path)
    try:
        documents = read_documents(path)
    except InputError as err:
        if not err.message.startswith("invalid YAML"):
            raise
        return _foreign(name, path, read_text(path), err)
    return _classified(name, path, documents, live)


def _read_stdin(stream: BinaryIO, live: bool = False, name: str = STDIN_NAME) -> ReadFile:
    return from_text(name, read_stream(stream, name), STDIN, live=live)


def read_stream(stream: BinaryIO, name: str, first_byte: int = 0) -> str:
    """The text of a stream (standard input, or a part of a file from ``first_byte`` on), refused as a file is:
    too large, binary, not UTF-8 (at the byte of the file)."""
    return _TextChunks(stream, name, first_byte).read_all()


def spool(stream: BinaryIO, limit: int) -> IO[bytes]:
    """A stream (standard input) copied to a temporary file, to be measured, cut and read more than once;
    the file is deleted when closed. No more than one byte over ``limit`` is copied: its reader refuses
    it as too large (an endless stream must not fill the disk)."""
    spooled = tempfile.NamedTemporaryFile(prefix="karpenter-gitops-stdin-")  # the caller closes it
    left = limit + 1
    while left > 0 and (block := stream.read(min(_CHUNK, left))):
        spooled.write(block)
        left -= len(block)
    spooled.flush()
    spooled.seek(0)
    return spooled


def from_text(name: str, text: str, path: Path | None = None, *, live: bool = False, after: int = 0) -> ReadFile:
    """A file already read (standard input, a file at a Git ref), parsed and classified as files on disk are;
    it keeps its text, as it cannot be read again. ``after``: the text is the rest of a file whose first
    part held that many documents, which stand in here as empty ones so that each document keeps its
    number (``validate`` reads a large file in slices, :func:`read_part`)."""
    try:
        documents = parse_yaml(text, name)
    except InputError as err:
        return _foreign(name, path or Path(name), text, err)._replace(text=text)
    return _classified(name, path or Path(name), documents, live, after)._replace(text=text)


def _foreign(name: str, path: Path, text: str, err: InputError) -> ReadFile:
    """A file that does not parse: passed over when it is no manifest or stack file, else its parse error."""
    reason = None if _STACK_FILE.match(path.name) else _foreign_reason(text, err.line)
    if reason is None:
        raise err
    return ReadFile(name, Documents(()), path, reason)


def _classified(name: str, path: Path, documents: list[Any], live: bool = False, after: int = 0) -> ReadFile:
    """A file that parses: its documents (after ``after`` of an earlier part, see :class:`Documents`), or passed
    over when none is a manifest or a stack file."""
    if _STACK_FILE.match(path.name) or any(_is_manifest_document(doc) or is_stack_document(doc) for doc in documents):
        return ReadFile(name, Documents(documents, live=live, after=after), path)
    if all(doc is None for doc in documents):
        return ReadFile(name, Documents(()), path, "empty: no YAML document")
    return ReadFile(name, Documents(()), path, "YAML that is not a Kubernetes manifest (no document has apiVersion or kind)")


def read(paths: Iterable[str | Path]) -> list[tuple[str, list[Any]]]:
    """Parse every file under ``paths`` into ``(file name, documents)`` pairs, whatever YAML it holds
    (for readers that pass over other documents themselves: CRDs, workloads)."""
    return [(display(path), Documents(read_documents(path))) for path in expand(paths)]
