"""CEL literals read as cel-go's lexer reads them: int and uint ranges, the float forms it takes, string and
bytes escapes, and its words for a literal it refuses.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from karpenter_gitops.core.cel_go import INT64_MAX, INT64_MIN, UINT64_MAX

if TYPE_CHECKING:
    from lark import Token

LITERAL_FLOAT = re.compile(r"^-?(\d+\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+([eE][+-]?\d+)?)$")


class Uint(int):
    """A CEL uint value (an int that remembers it is unsigned)."""


ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "`": "`", "?": "?"}
ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.S)


def literal(token: Token) -> Any:
    """A literal's value, or ValueError in cel-go's words for one it refuses."""
    text = token.value
    if token.type == "INT_LIT":
        value = int(text, 16) if "x" in text.lower() else int(text)
        if not INT64_MIN <= value <= INT64_MAX:
            raise ValueError("invalid int literal")
        return value
    if token.type == "UINT_LIT":
        value = int(text[:-1], 16) if "x" in text.lower() else int(text[:-1])
        if not 0 <= value <= UINT64_MAX:
            raise ValueError("invalid uint literal")
        return Uint(value)
    if token.type == "FLOAT_LIT":
        if not LITERAL_FLOAT.match(text):  # celpy takes "1." and "1.e3"; cel-go's lexer does not
            raise ValueError(f"Syntax error: no viable alternative at input '{text[text.index('.'):][:1]}'")
        value = float(text)
        if math.isinf(value):
            raise ValueError("invalid double literal")
        return value
    if token.type == "BOOL_LIT":
        return text == "true"
    if token.type == "NULL_LIT":
        return None
    raw = token.type == "BYTES_LIT"
    body = text[1:] if raw else text
    is_raw = body[:1] in "rR"
    body = body[1:] if is_raw else body
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    decoded = body if is_raw else ESCAPE.sub(lambda m: unescape(m.group(1)), body)
    return decoded.encode("utf-8", "surrogatepass") if raw else decoded


def unescape(code: str) -> str:
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code[0] in "0123" and len(code) == 3:
        return chr(int(code, 8))
    return ESCAPES.get(code, "\\" + code)
