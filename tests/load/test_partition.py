"""Cutting YAML at its document markers: what the markers say is what the parser finds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.core.yaml_reader import YAMLError, documents, nodes
from karpenter_gitops.load.partition import document_count, document_starts, line_breaks

PIECES = st.sampled_from(
    [
        "---\n",
        "--- # next\n",
        "---\n# only a comment\n",
        "# between\n",
        "%YAML 1.1\n---\n",
        "\n",
        "kind: NodePool\nspec: {a: 1}\n",
        "s: |\n  --- not a marker when indented\n",
        "metadata: {name: n}\n",
        "a: [1,\n  2]\n",
        "x: 'p\r\nq'\n",
    ]
)
STREAMS = st.lists(PIECES, max_size=16).map("".join)


def parsed(text: str) -> int | None:
    try:
        return len(list(documents(text)))
    except YAMLError:
        return None


@given(st.lists(st.sampled_from(["a", " ", "\n", "\r", "\r\n", "\x85", "\u2028", "\u2029"]), max_size=30).map("".join))
def test_line_breaks_are_counted_as_libyaml_counts_them_in_its_marks(inside):
    before = f'a: "{inside}"\n'
    after = nodes(before + "b: 1\n")[0].value[1][0]
    assert line_breaks(before.encode()) == after.start_mark.line


@given(STREAMS)
def test_the_markers_count_the_documents_the_parser_finds(text):
    found = parsed(text)
    if found is not None:
        assert document_count(text) == found


@given(STREAMS)
def test_text_and_its_bytes_have_their_documents_in_the_same_places(text):
    assert document_starts(text) == document_starts(text.encode())


def test_an_end_marker_leaves_the_count_to_the_parser():
    assert document_count("a: 1\n...\nb: 2\n") is None and document_count(b"a: 1\n...\nb: 2\n") is None
