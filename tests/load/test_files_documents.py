"""A file's documents as a part of it holds them: the documents of the parts before it are counted, read as
empty ones, and never stored or walked (a large file is read in many slices)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from karpenter_gitops.load.files import Documents, from_text

DOCUMENT = st.dictionaries(st.sampled_from(["apiVersion", "kind", "metadata"]), st.text(max_size=5), min_size=1)


@given(st.lists(DOCUMENT, max_size=5), st.integers(0, 1_000_000), st.booleans())
def test_a_part_reads_as_its_file_read_whole_from_its_first_document(documents, after, live):
    part = Documents(documents, live=live, after=after)
    assert len(part) == after + len(documents)
    assert list(part.numbered()) == [(after + index, doc) for index, doc in enumerate(documents)]
    if after:
        assert part[0] is None and part[after - 1] is None
    for index, doc in enumerate(documents):
        assert part[after + index] == doc
        assert part[index - len(documents)] == doc  # counted from the end, as a list is
    with pytest.raises(IndexError):
        part[len(part)]


def test_a_packed_document_is_the_one_at_its_place_in_the_file():
    part = Documents([{"kind": "NodePool"}, {"kind": "EC2NodeClass"}], live=True, after=7)
    assert part.packed(8) == Documents([{"kind": "EC2NodeClass"}]).packed(0)
    assert part[8] == {"kind": "EC2NodeClass"}


def test_the_rest_of_a_file_keeps_the_numbers_of_its_documents():
    rest = from_text("big.yaml", "kind: NodePool\n---\nkind: EC2NodeClass\n", after=40_000)
    assert len(rest.documents) == 40_002
    assert [index for index, _ in rest.documents.numbered()] == [40_000, 40_001]
