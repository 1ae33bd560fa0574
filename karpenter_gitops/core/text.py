"""Small text helpers every layer shares: suggestions, articles, Karpenter durations, outside text shown as it is."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

_DURATION = re.compile(r"^(?:\d+[smh])+$")
_DURATION_PART = re.compile(r"(\d+)([smh])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def closest(word: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The known word closest to ``word``, if any is close enough."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str], cutoff: float = 0.6) -> str | None:
    """``did you mean 'x'?`` for the closest known word, or None."""
    close = closest(word, known, cutoff)
    return f"did you mean {close!r}?" if close else None


def article(noun: str) -> str:
    """``an object``, ``a string``."""
    return f"an {noun}" if noun[:1] in "aeiou" else f"a {noun}"


def duration_seconds(value: str) -> int | None:
    """Seconds in a Karpenter duration (``720h``, ``1h30m``); None for ``Never`` or a malformed value."""
    if not _DURATION.match(value):
        return None
    return sum(int(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(value))


# Outside text made safe to show as it is. Control characters would reach the terminal itself (``ESC``
# starts an escape sequence that can move the cursor, recolour or retitle the window; ``U+202E`` reverses
# the rest of a line; a newline would start a line the tool did not write), and a lone surrogate (an
# undecodable file name) cannot be encoded at all: C0 and C1 controls and DEL, the bidirectional controls,
# the Unicode line and paragraph separators, and lone surrogates are written as their Python escapes.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape", "backslashreplace").decode("ascii")


def visible(value: object) -> str:
    """``value`` as text that shows as it is, on its line (``\\x1b``, ``\\n``, ``\\u202e``, ``\\udcff``):
    printable text, unicode included, is left alone."""
    return _INVISIBLE.sub(_escaped, str(value))
