"""Transient AWS trouble summed up: one line per cause, not one line per look-up it failed.

When AWS is down or throttles hard, every look-up of a run fails alike: sixty notes that differ
only in the class and the operation they name. A person needs the cause once, how many look-ups
it hit and which; the JSON form keeps every note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_AWS_ERROR = re.compile(r"transient AWS error in (?P<operation>\S+) \((?P<code>[^)]*)\): (?P<detail>.*)$")
_NAMED = 3  # look-ups named in a summed line before "… and N more"


def summed(notes: Sequence[str]) -> list[str]:
    """``notes`` with those of one AWS cause (same code and message, any operation) on one line, in
    the order each cause first appeared; a note with a cause of its own stays as it is."""
    causes: dict[str, list[tuple[str, str]]] = {}  # cause -> (note, what it could not look up)
    for note in dict.fromkeys(notes):
        match = _AWS_ERROR.search(note)
        cause = f"{match['code']}: {match['detail']}" if match else note
        causes.setdefault(cause, []).append((note, note[: match.start()].rstrip(": ") if match else note))
    lines = []
    for cause, hit in causes.items():
        if len(hit) == 1:
            lines.append(hit[0][0])
            continue
        named = ", ".join(what for _, what in hit[:_NAMED]) + (f", … and {len(hit) - _NAMED} more" if len(hit) > _NAMED else "")
        lines.append(f"{len(hit)} look-ups got no answer from AWS ({cause}): {named}")
    return lines
