"""Small text helpers every layer shares: suggestions, articles, Karpenter durations."""

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
