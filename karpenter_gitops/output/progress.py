"""A progress line for a long run that prints as it goes (``validate --format jsonl`` judged part by part).

Only on a terminal: stderr to a log or a pipe gets nothing, so a CI log stays the findings and the
summary. The run's own lines (on stdout, which may be the same terminal) go above the progress line:
:meth:`ProgressLine.aside` clears it while they are printed and draws it again after. Plain text and
an ANSI erase, not rich: ``validate`` starts without importing rich.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from collections.abc import Iterator
from typing import TextIO

_ERASE = "\r\x1b[K"  # back to the line's start, and clear it


class ProgressLine:
    """One line on ``stream`` (stderr) saying how far the run is, rewritten in place; nothing unless the
    stream is a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._shown = self._stream.isatty()
        self._text = ""

    def say(self, text: str) -> None:
        """Show ``text`` (our own words and numbers, never the user's) in place of the line before."""
        self._text = text
        self._draw()

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """The line cleared while the caller prints, drawn again after."""
        self._erase()
        try:
            yield
        finally:
            sys.stdout.flush()
            self._draw()

    def close(self) -> None:
        """The line cleared for good: the run has ended."""
        self._erase()
        self._text = ""

    def _draw(self) -> None:
        if self._shown and self._text:
            width = shutil.get_terminal_size().columns
            self._stream.write(_ERASE + self._text[: max(width - 1, 1)])
            self._stream.flush()

    def _erase(self) -> None:
        if self._shown and self._text:
            self._stream.write(_ERASE)
            self._stream.flush()


@contextlib.contextmanager
def progress_line() -> Iterator[ProgressLine]:
    """A progress line on stderr for the length of the block, cleared at its end (an error's line included)."""
    shown = ProgressLine()
    try:
        yield shown
    finally:
        shown.close()
