"""The native reader (core/_yaml_values.c) builds exactly what yaml_reader's builder builds, or leaves the text to it."""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from support.yaml_strategies import dumped_yaml

from karpenter_gitops.core import yaml_reader


def test_the_native_reader_is_built():
    assert yaml_reader._yaml_values is not None, (
        "core/_yaml_values.c was not compiled: install libyaml's header (Debian: libyaml-dev) and a C compiler, "
        "then reinstall (rm .venv/.installed; make test)"
    )


def native(text: str | bytes, unique_keys: bool = True) -> list | None:
    """What the native reader alone gives: the documents, or None where it leaves them to the builder (of the
    stream both are handed: without the byte order marks that open a later line)."""
    scalars = yaml_reader._Scalars()
    return yaml_reader._yaml_values.documents(
        yaml_reader._inner_byte_order_marks_dropped(text),
        scalars.plain,
        scalars.quoted,
        scalars.resolved,
        yaml_reader.MERGE,
        yaml_reader.MAX_DEPTH,
        yaml_reader._SHARED_LENGTH,
        unique_keys,
    )


@contextmanager
def builder_only() -> Iterator[None]:
    kept, yaml_reader._yaml_values = yaml_reader._yaml_values, None
    try:
        yield
    finally:
        yaml_reader._yaml_values = kept


def built(text: str | bytes, unique_keys: bool = True) -> list | Exception:
    """What yaml_reader's builder gives: the documents, or the error it raises."""
    with builder_only():
        try:
            return list(yaml_reader.documents(text, unique_keys=unique_keys))
        except (yaml.YAMLError, ValueError, TypeError, UnicodeError) as error:
            return error


def identical(left, right) -> bool:
    """The same values of the same types, keys in the same order (NaN equals NaN)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float) and math.isnan(left):
        return math.isnan(right)
    if isinstance(left, dict):
        return list(left) == list(right) and all(identical(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(identical, left, right))
    return left == right


# Pieces of YAML that make every kind of event, every scalar style and resolution, and the things the native
# reader leaves to the builder: anchors, aliases, tags, merge keys, repeated keys, directives, malformed text.
PIECES = [
    "a",
    "b",
    "k: ",
    "- ",
    ": ",
    "\n",
    "  ",
    "    ",
    "---\n",
    "--- ",
    "...\n",
    "&x ",
    "*x",
    "!!str ",
    "! ",
    "!!binary ",
    "{",
    "}",
    "[",
    "]",
    ", ",
    "'q'",
    '"d\\n"',
    '"\\u00e9"',
    "yes",
    "No",
    "0o7",
    "017",
    "0x1F",
    "1_000",
    "1:20",
    "1e3",
    ".inf",
    ".nan",
    "~",
    "null",
    "2024-01-01",
    "2024-01-01T10:20:30Z",
    "=",
    "<<: ",
    "<<",
    "# c\n",
    "\t",
    "|\n  t\n",
    ">-\n  f\n",
    "%YAML 1.1\n",
    "%TAG ! tag:x,2000:\n",
    "\ufeff",
    "\r\n",
    "\r",
    "\x85",
    "\u2028",
    "\x07",
    "? ",
    "1.5",
    "true",
    "-",
    "'",
    '"',
    "@",
    "%",
    "é",
    "✓",
    "x" * 300,
    "'" + "q" * 300 + "'",  # past the length up to which equal scalars share one object
]
soups = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=600, deadline=None)
@given(soups, st.booleans(), st.booleans())
def test_any_text_is_built_as_the_builder_builds_it_or_left_to_it(text, unique_keys, as_bytes):
    data = text.encode("utf-8") if as_bytes else text
    fast, slow = native(data, unique_keys), built(data, unique_keys)
    if isinstance(slow, Exception):
        assert fast is None, f"the native reader took text the builder refuses ({slow})"
    elif fast is not None:
        assert identical(fast, slow)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(dumped_yaml)
def test_plain_data_is_the_native_readers_own(text):
    fast = native(text)
    assert fast is not None, "plain data was left to the builder"
    assert identical(fast, built(text))


@pytest.mark.parametrize(
    "text",
    [
        "a: &x 1\nb: *x\n",  # anchors and aliases (and their bounds)
        "a: !!str 1\n",  # explicit tags
        "[! 12]\n",
        "base: {a: 1}\nm:\n  <<: {b: 2}\n",  # merge keys
        "a: 1\na: 2\n",  # a repeated key: refused
        "? [a]\n: 1\n",  # an unhashable key: refused
        "[" * (yaml_reader.MAX_DEPTH + 1) + "]" * (yaml_reader.MAX_DEPTH + 1),  # deeper than allowed: refused
        "a: =\n",  # a plain scalar PyYAML resolves to a tag it has no constructor for
        "a: [1\n",  # malformed
        "a: \ud800\n",  # a lone surrogate
    ],
)
def test_what_the_builder_must_judge_is_left_to_it(text):
    assert native(text) is None


def test_nesting_up_to_the_limit_is_its_own():
    depth = yaml_reader.MAX_DEPTH
    assert native("[" * depth + "]" * depth) == built("[" * depth + "]" * depth)


def test_a_repeated_key_of_a_file_other_tools_read_first_keeps_the_last_value():
    assert native("a: 1\na: 2\n", unique_keys=False) == [{"a": 2}]


def test_a_file_read_in_chunks_gives_the_documents_of_its_text():
    text = "".join(f"---\nkind: K\nname: n{i}\nlist: [yes, '0o7', 1:20]\n" for i in range(5_000))  # over one chunk
    assert list(yaml_reader.documents(io.BytesIO(text.encode()))) == list(yaml_reader.documents(text))
    assert list(yaml_reader.documents(io.StringIO(text))) == list(yaml_reader.documents(text))
    assert list(yaml_reader.documents(io.BytesIO(b""))) == []


def test_what_it_leaves_is_read_again_whole_from_a_file():
    text = "a: 1\n---\nb: &x [1]\nc: *x\n"
    assert list(yaml_reader.documents(io.BytesIO(text.encode()))) == [{"a": 1}, {"b": [1], "c": [1]}]
