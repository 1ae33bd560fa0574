"""Cutting YAML at its document markers: the one module that finds them, for every reader that takes YAML
in pieces.

Two readers do. ``validate`` judges a large run in parts (:func:`in_two`, :func:`in_parts`): whole files,
or slices of a large file cut at a marker, each slice's documents and lines numbered as in its file. And a
finding is placed on its line by composing only its own document, from that document's slice of the text
(:func:`document_slices`, for :mod:`karpenter_gitops.load.locate`).

A document start marker (``---`` at the start of a line, then a space, a line break or the end) and an
end marker (``...``) end any scalar at the start of a line, so they are found without parsing: cheap
beside parsing. Whoever relies on them checks what the parser then finds (a slice that reads otherwise
than its markers say is not judged as a part of its file; a document slice that does not compose as
one document has the whole file composed instead).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import AnyStr

from karpenter_gitops.core.errors import InputError

_START = r"^---(?=[ \t\r\n]|$)"
_END = r"^\.\.\.(?=[ \t\r\n]|$)"
_TEXT_MARKERS = (re.compile(_START, re.MULTILINE), re.compile(_END, re.MULTILINE), ("#", "%"))
_BYTE_MARKERS = (re.compile(_START.encode(), re.MULTILINE), re.compile(_END.encode(), re.MULTILINE), (b"#", b"%"))
# A start marker with what follows it already read: a file read block by block is cut there, never at a
# `---` the next block may continue.
_CUT = re.compile(rb"^---(?=[ \t\r\n])", re.MULTILINE)
_BLOCK = 1 << 20  # bytes read at a time while looking for the markers to cut at

# The line breaks libyaml counts beside \n and \r\n: a lone \r, NEL, LINE and PARAGRAPH SEPARATOR.
OTHER_LINE_BREAK = re.compile(r"\r(?!\n)|[\x85\u2028\u2029]")
# What keeps a text from being cut into document slices for locating: a directive (it belongs to the
# document after it), a byte order mark, and line breaks other than \n and \r\n (the lines before a
# slice are counted by \n there).
_UNCUT = re.compile(r"^%|\ufeff", re.MULTILINE)


def document_starts(text: AnyStr) -> list[int] | None:
    """Where each document the parser finds in ``text`` (or UTF-8 bytes) starts, from its markers: at each
    start marker, and at the beginning when something other than comments and directives stands before the
    first. None with an end marker, which lets a document start without a start marker."""
    if isinstance(text, str):
        start, end, comments = _TEXT_MARKERS
    else:
        start, end, comments = _BYTE_MARKERS
    if end.search(text):
        return None
    starts: list[int] = [found.start() for found in start.finditer(text)]
    before = text[: starts[0]] if starts else text
    opened = any(line.strip() and not line.lstrip().startswith(comments) for line in before.splitlines())
    return [0, *starts] if opened else starts


def document_count(text: AnyStr) -> int | None:
    """How many documents the parser finds in ``text``, by its markers (:func:`document_starts`); None when
    the markers cannot tell."""
    starts = document_starts(text)
    return None if starts is None else len(starts)


def document_slices(text: str) -> list[tuple[int, int, int]] | None:
    """(start, end, lines before) of each document of ``text``, cut at its markers; None when they cannot be
    trusted to cut it (a directive, a byte order mark, a line break other than \\n and \\r\\n, an end marker)."""
    cuttable = not (_UNCUT.search(text) or OTHER_LINE_BREAK.search(text))
    starts = document_starts(text) if cuttable else None
    if starts is None:
        return None
    slices, lines, counted = [], 0, 0
    for start, end in itertools.pairwise([*starts, len(text)]):
        lines += text.count("\n", counted, start)
        counted = start
        slices.append((start, end, lines))
    return slices


def line_breaks(data: bytes | bytearray) -> int:
    """How many lines the UTF-8 ``data`` ends, counted as libyaml counts them in its marks: ``\\r\\n`` ends
    one, and so does each ``\\n``, lone ``\\r``, NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR. A line
    number worked out from a piece of a file (a slice read on its own) must count the lines before it so."""
    return (
        data.count(b"\n")
        + data.count(b"\r")
        - data.count(b"\r\n")
        + data.count(b"\xc2\x85")
        + data.count(b"\xe2\x80\xa8")
        + data.count(b"\xe2\x80\xa9")
    )


class Uncuttable(Exception):
    """Why a file cannot be cut at its markers."""


@dataclass(frozen=True)
class Piece:
    """One file of a part, whole (``end`` None) or its bytes ``start``–``end``: named ``name`` as the user gave
    it, read from ``path`` (standard input, ``stdin``, from the file it was spooled to). A slice comes after
    ``lines_before`` lines and ``documents_before`` documents of its file and holds ``documents`` documents by
    its markers (the parser must agree). A folder below a named one that was not read at all holds nothing
    but why (``passed_over``), for a note. Standard input ``rendered`` from a folder (kustomize's rendering of it)
    has no lines of a file to point at."""

    path: Path
    name: str
    stdin: bool = False
    start: int = 0
    end: int | None = None
    lines_before: int = 0
    documents_before: int = 0
    documents: int = 0
    passed_over: str | None = None
    rendered: str | None = None

    @property
    def whole(self) -> bool:
        return self.end is None


@dataclass(frozen=True)
class Part:
    """Some of a run's files, in the order the run reads them, judged together."""

    pieces: tuple[Piece, ...]


def whole(files: Sequence[Piece]) -> Part:
    """The run in one part."""
    return Part(tuple(files))


def in_two(files: Sequence[Piece], sizes: Sequence[int], large: int) -> tuple[Part, Part] | None:
    """The run cut in two at about half its bytes (``sizes``: those of the pieces with bytes to read, in order): between two files, or, when a cut between files would leave
    the halves more than a quarter apart and the file holding the middle has ``large`` bytes or more (one large
    file, standard input, a large file beside small ones), at the document marker nearest after the middle
    inside that file. None when no cut is found. Folders passed over go last, as one process notes them."""
    files, sizes, notes = _with_bytes(files, sizes)
    total = sum(sizes)
    half, before = total / 2, 0
    index = next(i for i, size in enumerate(sizes) if (before := before + size) >= half)  # the file holding the middle
    size = sizes[index]
    before -= size
    if min(half - before, before + size - half) > total / 8 and size >= large:
        try:
            head, *tail = _slices(files[index], every=int(half - before), most=2)
        except Uncuttable:
            tail = []
        if tail:
            return Part((*files[:index], head)), Part((*tail, *files[index + 1 :], *notes))
    middle = min(max(index + 1 if before + size - half < half - before else index, 1), len(files) - 1)
    if not 0 < middle < len(files):
        return None
    return Part(tuple(files[:middle])), Part((*files[middle:], *notes))


def in_parts(files: Sequence[Piece], sizes: Sequence[int], part_bytes: int) -> list[Part]:
    """The run cut into parts of about ``part_bytes`` (``sizes`` as for :func:`in_two`): consecutive whole files, a larger file (and standard
    input, however small) in slices cut at the first marker after each ``part_bytes``. Uncuttable when a file
    to be sliced cannot be. Folders passed over go last, as one process notes them."""
    files, sizes, notes = _with_bytes(files, sizes)
    parts: list[Part] = []
    group: list[Piece] = []
    grouped = 0
    for file, size in zip(files, sizes, strict=True):
        if size <= part_bytes and not file.stdin:
            if grouped + size > part_bytes and group:
                parts.append(Part(tuple(group)))
                group, grouped = [], 0
            group.append(file)
            grouped += size
            continue
        if group:
            parts.append(Part(tuple(group)))
            group, grouped = [], 0
        parts.extend(Part((piece,)) for piece in _slices(file, every=part_bytes))
    if group:
        parts.append(Part(tuple(group)))
    if notes:
        last = parts.pop() if parts else Part(())
        parts.append(Part((*last.pieces, *notes)))
    return parts


def _with_bytes(files: Sequence[Piece], sizes: Sequence[int]) -> tuple[list[Piece], list[int], list[Piece]]:
    """The pieces with bytes to read, ``sizes`` (theirs, in order), and the folders passed over."""
    read = [file for file in files if file.passed_over is None]
    if len(read) != len(sizes):
        raise ValueError(f"{len(sizes)} sizes for {len(read)} files")
    return read, list(sizes), [file for file in files if file.passed_over is not None]


def _slices(file: Piece, every: int, most: int | None = None) -> Iterator[Piece]:
    """``file`` cut at the first document marker after each ``every`` bytes (into ``most`` slices at the most),
    each slice numbered after the lines and documents before it; ``file`` itself when it is not cut. A document
    end marker lets a document start without a marker, so a file with one is not cut: Uncuttable."""
    lines = documents = start = 0
    pending = bytearray()
    cuts = 0

    def piece(end: int) -> Piece:
        counted = document_count(bytes(memoryview(pending)[:end]))
        if counted is None:
            raise Uncuttable("it has document end markers ('...')")
        return dataclasses.replace(
            file, start=start, end=start + end, lines_before=lines, documents_before=documents, documents=counted
        )

    try:
        with file.path.open("rb") as read:
            while block := read.read(_BLOCK):
                pending += block
                while (most is None or cuts < most - 1) and len(pending) > every and (marker := _CUT.search(pending, every)):
                    cut = marker.start()
                    sliced = piece(cut)
                    yield sliced
                    cuts += 1
                    lines += line_breaks(pending[:cut])
                    documents += sliced.documents
                    start += cut
                    del pending[:cut]
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", file.name) from None
    yield piece(len(pending)) if cuts else file  # a file not cut is read whole
