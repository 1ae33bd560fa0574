"""Cutting YAML at its document markers: the one module that finds them, for every reader that takes YAML
in pieces.

Two readers do. ``validate`` judges a large run in parts: whole files, or slices of a large file cut at a
marker, each slice's documents (:func:`document_count`) and lines (:func:`line_breaks`) numbered as in its
file. And a finding is placed on its line by composing only its own document, from that document's slice of
the text (:func:`document_slices`, for :mod:`karpenter_gitops.load.locate`).

A document start marker (``---`` at the start of a line, then a space, a line break or the end) and an
end marker (``...``) end any scalar at the start of a line, so they are found without parsing: cheap
beside parsing. Whoever relies on them checks what the parser then finds (a slice that reads otherwise
than its markers say is not judged as a part of its file; a document slice that does not compose as
one document has the whole file composed instead).
"""

from __future__ import annotations

import itertools
import re
from typing import AnyStr

_START = r"^---(?=[ \t\r\n]|$)"
_END = r"^\.\.\.(?=[ \t\r\n]|$)"
_TEXT_MARKERS = (re.compile(_START, re.MULTILINE), re.compile(_END, re.MULTILINE), ("#", "%"))
_BYTE_MARKERS = (re.compile(_START.encode(), re.MULTILINE), re.compile(_END.encode(), re.MULTILINE), (b"#", b"%"))

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
