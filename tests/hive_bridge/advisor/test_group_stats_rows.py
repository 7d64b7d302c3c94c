"""No lost rows through simulated files: statistics computed by ``group_stats`` from the rows of each group,
judged by the vectorized evaluator, never skip a group holding a row that makes the filter TRUE (rowmodel's
Spark semantics: NULL unknown, NaN = NaN above every number, -0.0 = 0.0), for every column kind and filter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.expression import translate
from hive_bridge.pruning.vectorized import prune
from hive_bridge.stats.groups import group_stats
from tests.hive_bridge.rowmodel import (
    KINDS,
    RandomFile,
    arrow_column,
    modes,
    random_file,
    random_sarg,
    row_truth,
    schema_for,
)


@st.composite
def grouped_rows(draw: Any) -> tuple[list[str], sarg.SearchArgument, list[RandomFile], str]:
    columns = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=3, unique=True))
    files = [f for f in draw(st.lists(random_file(columns, False), min_size=1, max_size=4)) if f.rows]
    return columns, draw(random_sarg(columns)), files, draw(st.sampled_from(["UTC", "America/New_York"]))


@settings(max_examples=150, deadline=None)
@given(grouped_rows())
def test_a_group_with_a_matching_row_is_kept(case: tuple[list[str], sarg.SearchArgument, list[RandomFile], str]
                                             ) -> None:
    columns, s, files, tz = case
    if not files:
        return
    rows = [r for f in files for r in f.rows]
    data = pa.table({c: arrow_column(KINDS[c], [r[c] for r in rows]) for c in columns})
    groups = np.concatenate([np.full(len(f.rows), i) for i, f in enumerate(files)])
    stats = group_stats(data, groups, len(files))
    keep = prune(translate(s, schema_for(columns)), stats, session_tz=tz).keep.to_pylist()
    for i, f in enumerate(files):
        matches = any(row_truth(s, KINDS, row, mode).can_true for row in f.rows for mode in modes(tz))
        if matches:
            assert keep[i], f"group {i} holds a matching row and was skipped\nsarg: {s}\nrows: {f.rows}"
