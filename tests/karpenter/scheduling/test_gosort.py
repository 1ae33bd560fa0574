"""Go's sort.Slice, ported: the same permutations Go 1.27 gives (recorded from a Go program sorting
indices by these keys with ``sort.Slice``), including how it reorders equal keys."""

from __future__ import annotations

import pytest

from karpenter_gitops.karpenter.scheduling.gosort import sort_slice

# (keys as digits, the indices in the order Go's sort.Slice leaves them)
GO = [
    ("0011301112212", "5 1 0 6 3 2 7 8 11 9 10 12 4"),
    ("313322211310111022211303012201", "11 28 24 22 15 14 19 7 8 29 10 1 12 13 25 20 18 26 6 16 4 5 27 17 2 0 23 3 21 9"),
    (
        "3100023132330031122322331313001012201123301301120320123020100103",
        "28 62 2 3 4 60 59 57 55 51 48 44 12 13 41 35 31 29 32 52 1 61 58 7 24 46 26 45 42 37 30 16 36 15 47 33 20 17 38 21 5 56 18 53 9 50 34 10 14 49 27 11 19 43 54 8 25 23 22 6 40 39 0 63",
    ),
    (
        "3021113333123022331320022030302103021313300203033001323232220230301322100102013303302002112212221332021212310231031133020211212213",
        "32 1 120 118 112 108 100 86 85 83 80 76 74 13 72 71 65 63 60 50 49 21 22 46 44 25 42 27 41 29 34 31 18 128 125 123 36 122 38 3 115 114 4 111 5 107 104 102 96 92 89 51 88 10 77 73 70 66 103 93 58 61 127 126 30 124 57 35 68 69 121 15 14 55 2 75 11 119 43 109 53 24 105 23 84 101 99 87 95 94 90 91 20 59 26 52 48 97 98 7 6 8 47 0 9 82 106 45 81 79 78 110 37 113 28 40 116 117 39 54 12 56 19 67 16 64 17 62 33 129",
    ),
]


@pytest.mark.parametrize(("keys", "expected"), GO, ids=[f"{len(keys)}-items" for keys, _ in GO])
def test_the_permutation_is_gos(keys, expected):
    values = [int(c) for c in keys]
    items = list(range(len(values)))
    sort_slice(items, list(values))
    assert items == [int(i) for i in expected.split()]


def test_equal_keys_move_once_there_are_more_than_twelve():
    """Up to 12 items Go uses insertion sort (stable); beyond, equal keys are reordered."""
    small = list(range(12))
    sort_slice(small, [1] * 11 + [0])
    assert small == [11, *range(11)]
    values = [int(c) for c in GO[1][0]]
    items = list(range(len(values)))
    sort_slice(items, list(values))
    zeros = [i for i in items if values[i] == 0]
    assert zeros != sorted(zeros)


def test_a_sorted_slice_is_left_as_it_is():
    items = list(range(200))
    sort_slice(items, [i // 10 for i in items])
    assert items == list(range(200))
