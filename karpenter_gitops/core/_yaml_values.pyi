"""The types of the native reader built from ``_yaml_values.c`` (a C extension carries none of its own)."""

from collections.abc import Callable
from typing import Any

def documents(
    text: str | bytes,
    plain: dict[str, Any],
    quoted: dict[str, Any],
    resolved: Callable[[str], Any],
    merge: object,
    max_depth: int,
    shared_length: int,
    unique_keys: bool,
    /,
) -> list[Any] | None:
    """Every document of ``text`` built into values, or None where the text is for the Python builder."""
