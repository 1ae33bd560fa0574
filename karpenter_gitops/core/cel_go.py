"""cel-go's behaviour on top of cel-expr-python, the native CEL runtime every CEL expression here runs on.

Kubernetes and Karpenter run cel-go; cel-expr-python is Google's C++ runtime of the same language.
The two agree on what compiles, on types and on values, except where the C++ runtime converts
strings more leniently than Go's strconv (``int(" 5")`` is 5 there and an error in cel-go) and in
the words of their errors. This module holds what closes that gap, for the CRD rules and for the
kubelet expressions alike: the conversion functions with Go's rules (:func:`conversions`), declared
under names of their own because the standard overloads cannot be redeclared, a renaming of the
calls (:func:`with_go_conversions`) that leaves string literals alone, and cel-go's words for the
runtime's evaluation errors (:func:`cel_go_words`). Pure: nothing here reads or writes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the runtime loads with the first expression: commands that meet none never pay for it
    from cel_expr_python import cel

INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
# Raised inside a conversion for what the callers do not follow cel-go on; the runtime turns it into an
# error value carrying this text, which :func:`cel_go_words` leaves as it is.
UNMODELLED = "unmodelled: "

_GO_INT = re.compile(r"[+-]?\d+\Z", re.ASCII)
_GO_UINT = re.compile(r"\d+\Z", re.ASCII)
# Go's ParseFloat: its float literals (underscores between digits, hex with a p exponent) and inf/nan words.
_DIGITS, _HEX = r"\d(?:_?\d)*", r"[0-9a-fA-F](?:_?[0-9a-fA-F])*"
_GO_FLOAT = re.compile(
    rf"[+-]?(?:(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?|inf|infinity|nan)\Z", re.I | re.A
)
_GO_HEX_FLOAT = re.compile(rf"[+-]?0[xX]_?(?:{_HEX}(?:\.(?:{_HEX})?)?|\.{_HEX})[pP][+-]?{_DIGITS}\Z", re.ASCII)
_GO_TRUTH = {
    "1": True,
    "t": True,
    "T": True,
    "TRUE": True,
    "true": True,
    "True": True,
    "0": False,
    "f": False,
    "F": False,
    "FALSE": False,
    "false": False,
    "False": False,
}


class CelGoError(ValueError):
    """An evaluation error in cel-go's words; raised in a function, it becomes the expression's error value."""


def _conversion_error(target: str) -> CelGoError:
    return CelGoError(f"type conversion error from 'string' to '{target}'")


def _int_of_string(value: str) -> int:
    if not _GO_INT.match(value) or not INT64_MIN <= int(value) <= INT64_MAX:
        raise _conversion_error("int")
    return int(value)


def _int_of_double(value: float) -> int:
    if math.isnan(value) or not INT64_MIN < value < INT64_MAX:
        raise CelGoError("integer overflow")
    return int(value)


def _int_of_uint(value: int) -> int:
    if value > INT64_MAX:
        raise CelGoError("integer overflow")
    return value


def _uint_of_string(value: str) -> int:
    if not _GO_UINT.match(value) or int(value) > UINT64_MAX:
        raise _conversion_error("uint")
    return int(value)


def _uint_of_number(value: float) -> int:
    if math.isnan(value) or not 0 <= value < UINT64_MAX:
        raise CelGoError("unsigned integer overflow")
    return int(value)


def _double_of_string(value: str) -> float:
    number = float(value) if _GO_FLOAT.match(value) else None
    if _GO_HEX_FLOAT.match(value):
        number = float.fromhex(value.replace("_", ""))
    if number is None or (math.isinf(number) and value.lower().lstrip("+-") not in ("inf", "infinity")):
        raise _conversion_error("double")
    return number


def _bool_of_string(value: str) -> bool:
    if value not in _GO_TRUTH:
        raise _conversion_error("bool")
    return _GO_TRUTH[value]


def _string_of_double(value: float) -> str:
    raise CelGoError(f"{UNMODELLED}string(double)")  # Go's float formatting is not modelled


def _string_of_bytes(value: Any) -> str:
    return bytes(value).decode("utf-8", "replace")


def _same(value: Any) -> Any:
    return value


# name → (the name it is declared under, overloads as (argument type, result type, implementation)); types by
# their cel.Type names.
_GO_CONVERSIONS: Mapping[str, tuple[str, tuple[tuple[str, str, Callable[[Any], Any]], ...]]] = {
    "int": (
        "goInt_",
        (
            ("INT", "INT", _same),
            ("UINT", "INT", _int_of_uint),
            ("DOUBLE", "INT", _int_of_double),
            ("STRING", "INT", _int_of_string),
        ),
    ),
    "uint": (
        "goUint_",
        (
            ("UINT", "UINT", _same),
            ("INT", "UINT", _uint_of_number),
            ("DOUBLE", "UINT", _uint_of_number),
            ("STRING", "UINT", _uint_of_string),
        ),
    ),
    "double": (
        "goDouble_",
        (
            ("DOUBLE", "DOUBLE", _same),
            ("INT", "DOUBLE", float),
            ("UINT", "DOUBLE", float),
            ("STRING", "DOUBLE", _double_of_string),
        ),
    ),
    "bool": ("goBool_", (("BOOL", "BOOL", _same), ("STRING", "BOOL", _bool_of_string))),
    "string": (
        "goString_",
        (
            ("STRING", "STRING", _same),
            ("INT", "STRING", str),
            ("UINT", "STRING", str),
            ("DOUBLE", "STRING", _string_of_double),
            ("BOOL", "STRING", lambda v: "true" if v else "false"),
            ("BYTES", "STRING", _string_of_bytes),
        ),
    ),
}


def conversions(*names: str) -> list[cel.FunctionDecl]:
    """The declarations of Go's conversions ``names`` (keys of the table above) for ``cel.NewEnv(functions=)``."""
    from cel_expr_python import cel

    declared = []
    for name in names:
        alias, overloads = _GO_CONVERSIONS[name]
        declared.append(
            cel.FunctionDecl(
                alias,
                [
                    cel.Overload(
                        f"{alias}{argument.lower()}",
                        getattr(cel.Type, result),
                        [getattr(cel.Type, argument)],
                        impl=implementation,
                    )
                    for argument, result, implementation in overloads
                ],
            )
        )
    return declared


# A CEL token that matters for renaming: string and bytes literals (skipped whole), or an identifier.
_TOKEN = re.compile(
    r"""(?P<literal>[rRbB]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*)",
    re.DOTALL,
)


def with_go_conversions(expression: str, *names: str) -> str:
    """``expression`` with each global call of the conversions ``names`` made a call of its Go twin; literals untouched."""
    aliases = {name: _GO_CONVERSIONS[name][0] for name in names}

    def rename(match: re.Match[str]) -> str:
        word = match.group("word")
        if word not in aliases:
            return match.group(0)
        before, after = expression[: match.start()].rstrip(), expression[match.end() :].lstrip()
        return aliases[word] if after.startswith("(") and not before.endswith(".") else word

    return _TOKEN.sub(rename, expression)


# The runtime's evaluation errors in cel-go's words: (pattern on the text without its status code, replacement).
_CEL_GO_WORDS: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r'Key not found in map : "?(.*?)"?\Z', re.DOTALL), r"no such key: \1"),
    (re.compile(r"Index error: index=(-?\d+) size=\d+\Z"), r"index out of bounds: \1"),
    (re.compile(r"Index error: expected integer type.*\Z", re.DOTALL), "unsupported index value"),
    (re.compile(r"No matching overloads found.*\Z", re.DOTALL), "no such overload"),
    (re.compile(r"divide by zero\Z"), "division by zero"),
    (re.compile(r"(?:double|int64) out of int64 range\Z"), "integer overflow"),
    (re.compile(r"(?:double|int64) out of uint64 range\Z"), "unsigned integer overflow"),
    (re.compile(r"cannot convert string to (int|uint|double|bool)\Z"), r"type conversion error from 'string' to '\1'"),
)
_STATUS = re.compile(r"\A[A-Z_]+: ")


def cel_go_words(text: str) -> str:
    """One evaluation error of cel-expr-python (``OUT_OF_RANGE: ...``) as cel-go says it."""
    text = _STATUS.sub("", str(text).strip(), count=1)
    for pattern, replacement in _CEL_GO_WORDS:
        said, count = pattern.subn(replacement, text, count=1)
        if count:
            return said
    return text


def compile_error(error: Exception) -> str:
    """A compile error of cel-expr-python without its status wrapping, on one line: ``ERROR: <input>:1:5: ...``."""
    text = _STATUS.sub("", str(error).strip(), count=1)
    for name, (alias, _) in _GO_CONVERSIONS.items():
        text = text.replace(alias, name)
    return re.sub(r"\s*\[[A-Z_]+\]\Z", "", text).replace("\n", " ")
