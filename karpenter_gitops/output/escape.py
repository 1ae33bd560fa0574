"""Outside text made safe to show as it is, without importing rich (``validate`` never loads it).

Control characters would reach the terminal itself (``ESC`` starts an escape sequence that can
move the cursor, recolour or retitle the window; ``U+202E`` reverses the rest of a line; a newline
would start a line the tool did not write), and a lone surrogate (an undecodable file name) cannot
be encoded at all. :func:`visible` writes each of them as its Python escape (``\\x1b``, ``\\n``,
``\\u202e``, ``\\udcff``), so a value still reads as its source holds it and stays on its line.
Printable text, unicode included, is left alone.
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, the bidirectional controls, the Unicode line and paragraph separators,
# and lone surrogates: what would act on the terminal (or fail to encode) instead of being shown.
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match) -> str:
    return match.group().encode("unicode_escape", "backslashreplace").decode("ascii")


def visible(value: object) -> str:
    """``value`` as text that shows as it is: control, bidi and separator characters as Python escapes."""
    return _INVISIBLE.sub(_escaped, str(value))
