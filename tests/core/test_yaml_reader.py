"""Documents built from libyaml's events equal PyYAML's safe loader's, hostile YAML is refused, and nodes know their lines."""

from __future__ import annotations

import datetime as dt
import io
import math

import pytest
import yaml
from hypothesis import given, settings
from support.yaml_strategies import dumped_yaml

from karpenter_gitops.core import yaml_reader
from karpenter_gitops.core.yaml_reader import (
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    MappingNode,
    document,
    documents,
    nodes,
    problem,
)


def pyyaml(text: str) -> list:
    return list(yaml.load_all(text, Loader=yaml.CSafeLoader))


def ours(text: str) -> list:
    return list(documents(text))


def same(left, right) -> bool:
    """Equality where NaN equals NaN (``.nan`` loads as a float NaN both ways)."""
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left) and math.isnan(right):
        return True
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):  # key order aside: PyYAML 6.0.4 changed the order of merged keys (see below)
        return sorted(left, key=repr) == sorted(right, key=repr) and all(same(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same, left, right))
    return left == right


YAML_11_SCALARS = """\
bools: [yes, No, on, OFF, true, False, y, n]
ints: [0, -17, 0o17, 017, 0x1F, 0b101, 1_000, "1_000", 1:30, +12]
floats: [1.5, -.5, 1e3, 6.02e+23, .inf, -.Inf, .nan, 1_000.5, 1:30.5]
nulls: [~, null, Null, ""]
empty:
dates: [2024-01-01, 2024-01-01T10:20:30Z, 2024-01-01 10:20:30.5 +02:00]
strings: ["yes", 'on', plain text, "multi\\nline", v1.2, 1.2.3, 0x, <<x]
folded: >
  one
  two
literal: |
  keep
   this
explicit: [!!str 1, !!int "2", !!float "3", !!bool "true", !!null "", !!binary aGVsbG8=, !!timestamp 2024-01-02]
nonspecific: ! 12
unicode: "caf\\u00e9 ✓"
"""

ANCHORS = """\
base: &base {a: 1, b: [x, y]}
defaults: &defaults {c: 3, a: 0}
merged:
  <<: [*base, *defaults]
  b: own
single:
  <<: *base
  d: 4
shared: [*base, *base]
scalar: &s hello
again: *s
"""


@pytest.mark.parametrize("text", [YAML_11_SCALARS, ANCHORS, "", "---\n---\n", "--- 1\n--- [a]\n", "a: 1\n...\n---\nb: 2\n"])
def test_documents_equal_pyyaml_safe_loader(text):
    assert same(ours(text), pyyaml(text))


def test_a_second_merge_key_is_a_duplicate_key():
    with pytest.raises(yaml.YAMLError, match="duplicate key '<<'"):
        ours("base: &b {a: 1}\nother: &o {a: 2}\ntwice:\n  <<: *b\n  <<: *o\n")


def test_merged_keys_come_in_go_yaml_order():
    """Go YAML (what Kubernetes tools read with) merges a list of maps last to first, so the last map's keys
    come first; PyYAML did the same before 6.0.4. Values: the first map wins, the mapping's own keys win over all."""
    merged = ours(ANCHORS)[0]["merged"]
    assert list(merged.items()) == [("c", 3), ("a", 1), ("b", "own")]


def test_the_timestamps_and_bytes_are_pyyaml_types():
    loaded = ours(YAML_11_SCALARS)[0]
    assert loaded["dates"][0] == dt.date(2024, 1, 1)
    assert loaded["explicit"][5] == b"hello"
    assert loaded["ints"][2:4] == ["0o17", 15] and loaded["ints"][8] == 90  # YAML 1.1: 017 is octal, 1:30 base 60


def test_equal_short_scalars_are_one_object():
    first, second = ours("a: some-value\n---\na: some-value\n")
    assert first["a"] is second["a"]
    assert next(iter(first)) is next(iter(second))


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(dumped_yaml)
def test_any_dumped_data_loads_as_pyyaml_loads_it(text):
    assert same(ours(text), pyyaml(text))


@pytest.mark.parametrize(
    "text, problem",
    [
        ("a: 1\nb: 2\na: 3\n", "duplicate key 'a'"),
        ("? [a]\n: 1\n", "found unhashable key"),
        ("a: *nothing\n", "found undefined alias 'nothing'"),
        ("a: &x [1, *x]\n", "a YAML alias refers to a value that contains it"),
        ("a: &x 1\nb: &x 2\n", "found duplicate anchor 'x'"),
        ("a: !Ref b\n", "could not determine a constructor for the tag '!Ref'"),
        ("a: !!set {x, y}\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:set'"),
        ("a: !!omap [{x: 1}]\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:omap'"),
        ("a: <<\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:merge'"),
        ("a:\n  <<: 1\n", "expected a mapping or list of mappings for merging, but found int"),
        ("a:\n  <<: [{x: 1}, 2]\n", "expected a mapping or list of mappings for merging, but found a list with other items"),
    ],
)
def test_refused_with_the_problem_and_its_line(text, problem):
    with pytest.raises(yaml.MarkedYAMLError) as raised:
        ours(text)
    assert raised.value.problem.startswith(problem)
    assert raised.value.problem_mark is not None


def test_merged_keys_may_be_overridden_but_own_keys_not_repeated():
    assert ours("base: &b {a: 1}\nx:\n  <<: *b\n  a: 2\n")[0]["x"] == {"a": 2}


def test_an_alias_bomb_is_refused_before_anyone_walks_it():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]  # 10^9 leaves
    with pytest.raises(yaml.MarkedYAMLError) as raised:
        ours("\n".join(lines) + "\n")
    assert f"expand to more than {MAX_ALIAS_NODES:,} values" in raised.value.problem


def test_reused_anchors_within_bounds_load():
    text = "base: &b {a: 1}\n" + "".join(f"x{i}: *b\n" for i in range(1_000))
    assert same(ours(text), pyyaml(text))


def test_nesting_beyond_the_limit_is_refused():
    with pytest.raises(yaml.MarkedYAMLError) as raised:
        ours("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert "levels deep" in raised.value.problem
    assert ours("[" * MAX_DEPTH + "]" * MAX_DEPTH)


def test_repeated_keys_of_files_other_tools_read_first_keep_the_last_value():
    """A kubeconfig or a NodeConfig: kubectl and nodeadm take the last value of a repeated key, as PyYAML does."""
    text = "a: 1\nb: 2\na: 3\n<<: {c: 1}\n<<: {c: 2, d: 1}\n"
    assert list(documents(text, unique_keys=False)) == [{"a": 3, "b": 2, "c": 2, "d": 1}]
    assert pyyaml("a: 1\nb: 2\na: 3\n") == list(documents("a: 1\nb: 2\na: 3\n", unique_keys=False))


def test_one_document_as_pyyaml_safe_load_reads_it():
    assert document("a: [1, yes]\n") == yaml.safe_load("a: [1, yes]\n") == {"a": [1, True]}
    assert document("") is None and document("# only a comment\n") is None
    with pytest.raises(yaml.YAMLError, match="expected a single document"):
        document("a: 1\n---\nb: 2\n")


def test_nodes_carry_the_line_of_every_value():
    first, second = nodes("kind: A\nspec:\n  x: 1\n---\nkind: B\n")
    assert isinstance(first, MappingNode)
    spec = dict((key.value, value) for key, value in first.value)["spec"]
    assert [spec.start_mark.line + 1, second.start_mark.line + 1] == [3, 5]


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (yaml.MarkedYAMLError(problem="found a tab", problem_mark=yaml.Mark("f", 0, 6, 2, None, None)), ("found a tab", 7)),
        (yaml.MarkedYAMLError(context="while scanning", context_mark=yaml.Mark("f", 0, 1, 0, None, None)), ("while scanning", 2)),
        (yaml.MarkedYAMLError(), ("malformed YAML", None)),
        (yaml.YAMLError("no document"), ("no document", None)),
    ],
)
def test_a_problem_is_its_message_and_its_line(error, expected):
    assert problem(error) == expected


BOM = "\ufeff"


@pytest.mark.parametrize("native", [True, False], ids=["C reader", "PyYAML's events"])
@pytest.mark.parametrize(
    "form",
    [str, lambda text: text.encode(), lambda text: io.BytesIO(text.encode())],
    ids=["text", "bytes", "a file read in chunks"],
)
@pytest.mark.parametrize(
    "stream",
    [
        "a: 1\nb: 2\n---\n{BOM}c: 3\nd: 4\n",  # a BOM after the start marker, as `kubectl` accepts
        "a: 1\n---\n{BOM}---\nc: 3\nd: 4\n",  # a file that starts with a BOM, joined to another
        "{BOM}a: 1\r\nb: 2\r\n---\r\n{BOM}# Source: chart/templates/pool.yaml\r\nc: 3\r\nd: 4\r\n",  # CRLF, a comment
    ],
)
def test_a_byte_order_mark_may_open_any_document_of_a_stream(stream, form, native, monkeypatch):
    if not native:
        monkeypatch.setattr(yaml_reader, "_yaml_values", None)
    read = list(documents(form(stream.format(BOM=BOM))))
    assert read == list(documents(stream.format(BOM="")))
    assert read[-1] == {"c": 3, "d": 4}


def test_a_byte_order_mark_inside_a_line_is_still_the_parsers_to_judge():
    assert ours("a: x\ufeffy\n") == pyyaml("a: x\ufeffy\n")


def test_nodes_behind_a_byte_order_mark_keep_their_lines():
    *_, last = nodes("a: 1\n---\n\ufeffc: 3\nd: 4\n")
    assert [(key.start_mark.line, key.start_mark.column) for key, _ in last.value] == [(2, 0), (3, 0)]
