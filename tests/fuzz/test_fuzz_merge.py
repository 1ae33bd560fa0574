"""``merge`` on hostile shards: any JSON (or none) in a shard file gives exit 0, 1 or 2, one JSON document
or one line on stderr, never a traceback (the contract ``support.hostile.run`` checks)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from support.hostile import HOSTILE, PROFILE, run

SUMMARIES = st.one_of(
    st.fixed_dictionaries({"stacks": st.integers(), "errors": HOSTILE, "warnings": st.integers(), "objects": st.integers()}),
    st.fixed_dictionaries(
        {"stacks": st.integers(), "exitCodes": st.dictionaries(st.text(max_size=3), HOSTILE), "awsCalls": HOSTILE}
    ),
    HOSTILE,
)
SHARDS = st.one_of(
    st.fixed_dictionaries({"stacks": st.dictionaries(st.text(max_size=3), HOSTILE, max_size=3), "summary": SUMMARIES}),
    HOSTILE,
)


@PROFILE
@given(shards=st.lists(st.one_of(SHARDS.map(json.dumps), st.text(max_size=20)), min_size=1, max_size=3))
def test_merge_of_hostile_shards(tmp_path_factory, shards):
    folder = tmp_path_factory.mktemp("shards")
    paths = []
    for index, text in enumerate(shards):
        (path := folder / f"shard-{index}.json").write_text(text)
        paths.append(str(path))
    code, out, err = run(["merge", *paths])
    if code == 2:  # a shard that is no fleet output is refused in one line and nothing is merged
        assert out == "" and err
    else:  # merged: one document holding the stacks of every shard
        assert isinstance(json.loads(out).get("stacks"), (dict, list))
