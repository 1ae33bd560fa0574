"""Markdown for text we did not write: values and messages from manifests, stack files, AWS, the cluster,
Pulumi and file names, in a comment a bot posts on pull requests anyone may open, and reviewers trust.

Escaping is not enough. GitHub acts on a comment's text after CommonMark has parsed it: it links bare
URLs and ``www.`` names, ``@user`` mentions, ``#123`` and ``GH-123`` references and commit hashes, and
turns ``:name:`` into an emoji. A backslash escape gets past CommonMark, not past those filters; they
leave only code alone. So a value is shown as inline code (:meth:`OutsideText.code`), fenced by a
backtick string that occurs nowhere in it, as CommonMark asks, and nothing acts on it.

Code everywhere would be unreadable: most messages are sentences we wrote around a value ("instance
profile 'PaymentsNodeProfile-v2' has no role"). :meth:`OutsideText.prose` keeps a word as written when
it is inert, and sets every other word, with the quoted stretch around it, as inline code. Inert is
decided by what a word is made of, never by recognising markup: letters, digits, any non-ASCII
character, and only the ASCII punctuation that starts nothing (no ``# $ & * < > @ \\ ^ _ ` { | } ~``,
``$`` only before a digit; an underscore makes emphasis only at a word's edge, but a word holding one
is code all the same: it reads as a value), and none of the sequences GitHub still links
(``www.``, ``://``, ``](``, ``:name:``, ``GH-1``, a hash). A construct nobody thought of is code too.

Everything is bounded: a value longer than its room is cut, its full text kept in a fenced block for a
folded section of its own (:meth:`OutsideText.cut_details`), which the comment's budget may leave out.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from itertools import count

from tabulate import DataRow, TableFormat, tabulate

from karpenter_gitops.core.text import visible

VALUE_LIMIT, PROSE_LIMIT = 256, 600  # characters shown of one value (a name, a tag) and of one message
# When the always-kept part of a comment would not fit its budget, values and messages get less room.
TIGHT_VALUE_LIMIT, TIGHT_PROSE_LIMIT = 64, 160

# The ASCII punctuation that starts no markdown or GitHub construct; letters, digits and non-ASCII are inert too.
_INERT_PUNCTUATION = frozenset("!\"'()+,-./:;=?[]%")
# What GitHub still links or replaces in a word made of inert characters: ``www.`` and ``scheme://``
# autolinks, ``[text](url)`` and ``[text][ref]``, ``:emoji:``, ``GH-123`` and a commit hash.
_ACTED_ON = re.compile(
    r"(?i:www\.)|://|\]\(|\]\[|:[A-Za-z0-9_+-]+:|(?i:\bGH-\d)|(?<![A-Za-z0-9])(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{7,}(?![A-Za-z0-9])"
)
# A first word that starts a block where the text starts a line (a list item, a quote): a list marker,
# a thematic break, a task box or a link reference definition.
_BLOCK_START = re.compile(r"[-+=]+|\d{1,9}[.)]|\[.*")
# A last word that the colon our templates put after a path or a severity would turn into an emoji.
_OPEN_EMOJI = re.compile(r":[A-Za-z0-9_+-]+$")
# Around a quoted value: what may open the quoted stretch before its quote, and close it after.
_BEFORE_QUOTE, _AFTER_QUOTE = "(", ").,;:!?"
_CUT = "…"
EMPTY = "(empty)"  # an empty value; also what a line that starts with outside text shows when it is empty, as a
# bare "- " under a paragraph would underline it into a heading


def _inert_character(word: str, at: int) -> bool:
    char = word[at]
    if char.isalnum() or ord(char) > 0x7F or char in _INERT_PUNCTUATION:
        return True
    if char == "$":  # a price; a math span needs a ``$`` before something other than a digit
        return word[at + 1 : at + 2].isdigit()
    return False


def inert(word: str) -> bool:
    """Whether ``word`` (no whitespace) is shown as written by CommonMark and by GitHub's filters alike."""
    return all(_inert_character(word, at) for at in range(len(word))) and not _ACTED_ON.search(word)


def _starts_a_block(word: str) -> bool:
    return bool(_BLOCK_START.fullmatch(word))


def code_span(text: str) -> str:
    """``text`` as inline code: its fence is the shortest backtick string it does not contain, padded where
    CommonMark would otherwise take a backtick or space at its edge for part of the fence."""
    if not text:
        return EMPTY
    runs = {len(run) for run in re.findall("`+", text)}
    fence = "`" * next(n for n in count(1) if n not in runs)
    pad = text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " " and text.strip(" ") != "")
    space = " " if pad else ""
    return f"{fence}{space}{text}{space}{fence}"


def _quoted_stretches(words: Sequence[re.Match]) -> list[tuple[int, int]]:
    """(start, end) of each stretch from an opening quote to the same quote closing a later (or the same) word."""
    stretches, opened = [], None
    for match in words:
        word = match.group()
        core = word.lstrip(_BEFORE_QUOTE)
        if opened is None and core[:1] in ("'", '"'):
            opened, quote, first = match.start() + len(word) - len(core), core[0], match
        if opened is None:
            continue
        closing = word.rstrip(_AFTER_QUOTE)
        if closing.endswith(quote) and (match is not first or len(closing) - (len(word) - len(core)) > 1):
            stretches.append((opened, match.start() + len(closing)))
            opened = None
    return stretches


def _code_ranges(text: str) -> list[tuple[int, int]]:
    """Where ``text`` must be code: each word that is not inert (or that would start a block), or the quoted
    stretch it sits in (from quote to quote, so ``(use '…')`` keeps its parentheses), joined with the next
    across whitespace."""
    words = list(re.finditer(r"\S+", text))
    acted = [
        (m.start(), m.end())
        for i, m in enumerate(words)
        if not inert(m.group())
        or (i == 0 and _starts_a_block(m.group()))
        or (i == len(words) - 1 and _OPEN_EMOJI.search(m.group()))
    ]
    ranges = []
    for start, end in _quoted_stretches(words):
        inside = [(a, b) for a, b in acted if a < end and start < b]
        if inside:
            ranges.append((start, end))
            acted = [word for word in acted if word not in inside]
    merged: list[list[int]] = []
    for start, end in sorted(ranges + acted):
        if merged and (start <= merged[-1][1] or not text[merged[-1][1] : start].strip()):
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` as (piece, is code) in order. What is left as written is checked once more as a whole, so
    the quoting above can only make more code, never less: if a piece is not inert, the whole text is code."""
    pieces, at = [], 0
    for start, end in _code_ranges(text):
        pieces += [(text[at:start], False), (text[start:end], True)]
        at = end
    pieces.append((text[at:], False))
    pieces = [(piece, is_code) for piece, is_code in pieces if piece]
    written = [piece for piece, is_code in pieces if not is_code]
    words = text.split()
    starts_written, ends_written = bool(pieces) and not pieces[0][1], bool(pieces) and not pieces[-1][1]
    if (
        not all(inert(word) for piece in written for word in piece.split())
        or (starts_written and _starts_a_block(words[0]))
        or (ends_written and _OPEN_EMOJI.search(words[-1]))
    ):
        return [(text, True)]
    return pieces


def _cut_before_escaped_pipe(text: str) -> int:
    """Where a table cell must end ``text``: GitHub reads ``\\|`` as a backslash and a cell's end even in code."""
    at = text.find("\\|")
    return len(text) if at < 0 else at


class OutsideText:
    """Writes outside text into one section of a comment, and keeps the full text of what it had to cut.

    ``cut=False`` (the full report) shows everything whole; ``tight`` gives each value less room.
    """

    def __init__(self, cut: bool = True, tight: bool = False):
        self.cut = cut
        self.value_limit, self.prose_limit = (TIGHT_VALUE_LIMIT, TIGHT_PROSE_LIMIT) if tight else (VALUE_LIMIT, PROSE_LIMIT)
        self._cut_texts: list[str] = []

    def _shown(self, text: str, limit: int, cell: bool) -> tuple[str, str]:
        """(the part shown, the cut marker or "")."""
        end = _cut_before_escaped_pipe(text) if cell else len(text)
        if self.cut:
            end = min(end, limit)
        if end >= len(text):
            return text, ""
        if text not in self._cut_texts:  # an AMI's name cut once in a section is listed once
            self._cut_texts.append(text)
        return text[:end], f"{_CUT} (cut, {self._cut_texts.index(text) + 1} below)"

    def code(self, value: object, cell: bool = False) -> str:
        """A value (a name, an id, a path) as inline code; in a table ``cell``, its pipes escaped as GFM asks."""
        shown, marker = self._shown(visible(value), self.value_limit, cell)
        span = code_span(shown)
        return (span.replace("|", "\\|") if cell else span) + marker

    def prose(self, text: object, cell: bool = False) -> str:
        """A sentence from outside, or one of ours quoting outside values: inert words as written, the rest as code."""
        shown, marker = self._shown(visible(text).strip(), self.prose_limit, cell)
        written = "".join(code_span(piece) if is_code else piece for piece, is_code in _pieces(shown))
        return (written.replace("|", "\\|") if cell else written) + marker

    def html(self, text: object) -> str:
        """Outside text inside an HTML block (a ``<summary>``), where markdown is not parsed but GitHub's
        filters still run: inert words as written, the rest as ``<code>``; cut without a note (the folded
        block below it holds the whole)."""
        shown = visible(text).strip()
        if self.cut and len(shown) > self.value_limit:
            shown = shown[: self.value_limit] + _CUT
        return "".join(
            f"<code>{html.escape(piece, quote=False)}</code>" if is_code else piece for piece, is_code in _pieces(shown)
        )

    def cut_details(self, where: str) -> str:
        """The full text of every value cut in this section, numbered as the cut notes say, in a folded
        fence (each line starts with its number, so no line of it closes the fence); "" when none was."""
        if not self._cut_texts:
            return ""
        lines = [f"{n}: {text}" for n, text in enumerate(self._cut_texts, 1)]
        summary = f"Full text of {len(lines)} value(s) cut in {where}"
        return "\n".join(["", f"<details><summary>{summary}</summary>", "", "```text", *lines, "```", "", "</details>", ""])


# A GitHub table with every cell as given (already written by :class:`OutsideText` with ``cell=True``):
# no padding to column widths, so a long cell does not widen the others and a comment keeps its budget.
_TABLE = TableFormat(
    lineabove=None,
    linebelowheader=lambda widths, _aligns: "|" + "---|" * len(widths),
    linebetweenrows=None,
    linebelow=None,
    headerrow=DataRow("| ", " | ", " |"),
    datarow=DataRow("| ", " | ", " |"),
    padding=0,
    with_header_hide=None,
)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    return tabulate(rows, header, tablefmt=_TABLE, stralign=None, numalign=None, disable_numparse=True, preserve_whitespace=True)
