"""Hypothesis strategies for YAML readers: plain data as PyYAML's safe dumper writes it, in every layout."""

from __future__ import annotations

import yaml
from hypothesis import strategies as st

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.dates(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)

#: One to three documents of plain data, in block, flow or mixed style, with or without ``---``.
dumped_yaml = st.builds(
    lambda values, flow, explicit_start: yaml.safe_dump_all(
        values, default_flow_style=flow, explicit_start=explicit_start, allow_unicode=True
    ),
    st.lists(json_values, min_size=1, max_size=3),
    st.sampled_from([None, True, False]),
    st.booleans(),
)
