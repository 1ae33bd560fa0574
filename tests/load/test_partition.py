"""Cutting YAML at its document markers: what the markers say is what the parser finds, and a run's parts
hold its files (or slices of them, numbered as in the file) in order."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from karpenter_gitops.core.yaml_reader import YAMLError, documents, nodes
from karpenter_gitops.load import partition
from karpenter_gitops.load.partition import Piece, document_count, document_starts, in_parts, in_two, line_breaks

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


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(STREAMS, st.integers(1, 120))
def test_a_file_in_parts_is_sliced_in_order_each_slice_numbered_as_in_the_file(tmp_path_factory, text, part_bytes):
    path = tmp_path_factory.mktemp("parts") / "rendered.yaml"
    path.write_bytes(text.encode())
    data = path.read_bytes()
    file = Piece(path, str(path))
    try:
        parts = list(in_parts([file], [len(data)], part_bytes))
    except partition.Uncuttable:
        return
    pieces = [piece for part in parts for piece in part.pieces]
    if pieces == [file]:
        return  # not cut: read whole
    assert [piece.start for piece in pieces] == [0, *(piece.end for piece in pieces[:-1])] and pieces[-1].end == len(data)
    for piece in pieces:
        sliced = data[piece.start : piece.end]
        assert piece.lines_before == line_breaks(data[: piece.start])
        assert piece.documents == document_count(sliced)
        assert piece.documents_before == sum(earlier.documents for earlier in pieces if earlier.start < piece.start)
        assert sliced.startswith(b"---") or piece.start == 0


def test_small_files_go_in_groups_and_a_large_one_in_slices(tmp_path):
    small = [tmp_path / f"{index}.yaml" for index in range(3)]
    for path in small:
        path.write_text("kind: NodePool\n")
    large = tmp_path / "large.yaml"
    large.write_text("---\nkind: NodePool\n" * 10)
    files = [Piece(path, path.name) for path in (*small, large)]
    parts = list(in_parts(files, [path.stat().st_size for path in (*small, large)], 40))
    assert [piece.name for piece in parts[0].pieces] == ["0.yaml", "1.yaml"] and parts[1].pieces == (files[2],)
    assert all(not part.pieces[0].whole and part.pieces[0].name == "large.yaml" for part in parts[2:]) and len(parts) > 3


def test_a_file_with_an_end_marker_is_not_sliced(tmp_path):
    path = tmp_path / "ended.yaml"
    path.write_text("a: 1\n...\n" + "---\nb: 2\n" * 10)
    with pytest.raises(partition.Uncuttable, match="end markers"):
        list(in_parts([Piece(path, path.name)], [path.stat().st_size], 20))


def test_two_parts_cut_between_files_when_that_leaves_them_close(tmp_path):
    files, sizes = [], []
    for index in range(4):
        path = tmp_path / f"{index}.yaml"
        path.write_text("---\nkind: NodePool\n" * 5)
        files.append(Piece(path, path.name))
        sizes.append(path.stat().st_size)
    first, second = in_two(files, sizes, large=1)
    assert first.pieces == tuple(files[:2]) and second.pieces == tuple(files[2:])


def test_two_parts_cut_inside_the_large_file_holding_the_middle(tmp_path):
    small, large = tmp_path / "a.yaml", tmp_path / "b.yaml"
    small.write_text("kind: NodePool\n")
    large.write_text("---\nkind: NodePool\n" * 40)
    files = [Piece(small, "a.yaml"), Piece(large, "b.yaml")]
    first, second = in_two(files, [small.stat().st_size, large.stat().st_size], large=100)
    head, tail = first.pieces[-1], second.pieces[0]
    assert first.pieces[0] == files[0] and (head.start, head.end, tail.start) == (0, tail.start, head.end)
    assert tail.documents_before == head.documents and head.documents + tail.documents == 40
    between = in_two(files, [small.stat().st_size, large.stat().st_size], large=10**6)  # too small to cut inside
    assert [part.pieces for part in between] == [(files[0],), (files[1],)]


def test_folders_passed_over_go_with_the_last_part(tmp_path):
    files = []
    for index in range(4):
        path = tmp_path / f"{index}.yaml"
        path.write_text("---\nkind: NodePool\n" * 5)
        files.append(Piece(path, path.name))
    looped = Piece(tmp_path / "up", "up", passed_over="a link to a folder already read")
    sizes = [file.path.stat().st_size for file in files]
    first, second = in_two([*files[:2], looped, *files[2:]], sizes, large=1)
    assert first.pieces == tuple(files[:2]) and second.pieces == (*files[2:], looped)
    parts = in_parts([looped, *files], sizes, part_bytes=1)
    assert parts[-1].pieces[-1] == looped and [piece for part in parts for piece in part.pieces].count(looped) == 1
