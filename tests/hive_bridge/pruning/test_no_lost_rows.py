"""The rule that outranks all others: pruning never loses a row.

Random files (nulls, NaN, -0.0, empty files, all-null and absent columns, long and non-ASCII strings, decimals of
other scales, nanosecond and UTC-adjusted timestamps), their true statistics (sometimes less informative:
unknown null counts, missing or truncated bounds), and random SearchArguments built as Hive builds them. Whenever
a row can make the filter true (Spark semantics, under every reading of mixed types), the file must be kept;
stronger, every outcome some row produces must be in the file's TruthValue. The same with statistics read
from real parquet footers. The scalar and vectorized evaluators must agree on every file.
"""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.expression import translate
from hive_bridge.pruning.scalar import evaluate
from hive_bridge.pruning.vectorized import StatsTable, prune
from hive_bridge.stats.contract import ColumnStats, FileStats, stats_table
from sarg import TruthValue
from tests.hive_bridge.rowmodel import (
    KINDS,
    RandomFile,
    arrow_column,
    modes,
    random_file,
    random_leaf,
    random_sarg,
    row_truth,
    schema_for,
    true_stats,
)

EXAMPLES = max(settings().max_examples, 2000)
FOOTER_EXAMPLES = max(settings().max_examples // 4, 500)
ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]


def _outcomes(s: sarg.SearchArgument, f: RandomFile, session_tz: str) -> set[str]:
    out: set[str] = set()
    for row in f.rows:
        for mode in modes(session_tz):
            tv = row_truth(s, KINDS, row, mode)
            out.update(o for o, flag in zip("TFN", tv.value, strict=True) if flag)
    return out


def _check(s: sarg.SearchArgument, f: RandomFile, columns: list[str], session_tz: str) -> TruthValue:
    expr = translate(s, schema_for(columns))
    verdict = evaluate(expr, f.stats, session_tz)
    outcomes = _outcomes(s, f, session_tz)
    context = f"\nsarg: {s}\nexpr: {expr}\nrows: {f.rows}\n{verdict.explain()}"
    if "T" in outcomes:
        assert verdict.keep, "a file with a matching row was skipped" + context
    if f.rows:
        got = {o for o, flag in zip("TFN", verdict.truth.value, strict=True) if flag}
        assert outcomes <= got, f"outcomes {outcomes} not within {verdict.truth}" + context
    return verdict.truth


COLUMN_SETS = st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=3, unique=True)


@st.composite
def scenario(draw: Any, allow_damage: bool = True) -> tuple[list[str], sarg.SearchArgument, list[RandomFile], str]:
    columns = draw(COLUMN_SETS)
    s = draw(random_sarg(columns))
    files = draw(st.lists(random_file(columns, allow_damage), min_size=1, max_size=4))
    tz = draw(st.sampled_from(ZONES))
    return columns, s, files, tz


@settings(max_examples=EXAMPLES)
@given(scenario())
def test_no_file_with_a_matching_row_is_skipped(case: tuple[list[str], sarg.SearchArgument, list[RandomFile], str]
                                                ) -> None:
    columns, s, files, tz = case
    truths = [_check(s, f, columns, tz) for f in files]
    # the vectorized evaluator gives the same TruthValue for every file of the table
    table = stats_table([f.stats for f in files], {c: KINDS[c].arrow_type for c in columns})
    expr = translate(s, schema_for(columns))
    result = prune(expr, table, tz)
    assert result.truth_values() == truths, f"\nsarg: {s}\nexpr: {expr}"
    scalar = [evaluate(expr, f.stats, tz) for f in files]
    assert result.keep.to_pylist() == [v.keep for v in scalar]
    assert result.unknown.to_pylist() == [v.kept_because_unknown for v in scalar]
    ranked = prune(expr, StatsTable(table, rank_strings=True), tz)
    assert ranked.truth_values() == truths
    assert ranked.unknown.to_pylist() == result.unknown.to_pylist()


@settings(max_examples=EXAMPLES * 2 // 5)
@given(scenario(allow_damage=False))
def test_no_lost_rows_with_exact_statistics(
        case: tuple[list[str], sarg.SearchArgument, list[RandomFile], str]) -> None:
    columns, s, files, tz = case
    for f in files:
        _check(s, f, columns, tz)


def footer_stats(data: bytes, columns: list[str]) -> FileStats:
    """Statistics as the index reads them from a parquet footer: row groups combined."""
    meta = pq.ParquetFile(io.BytesIO(data)).metadata
    out: dict[str, ColumnStats] = {}
    for ci in range(meta.num_columns):
        name = meta.schema.column(ci).path
        lo: Any = None
        hi: Any = None
        nulls: int | None = 0
        known = True
        for rg in range(meta.num_row_groups):
            chunk = meta.row_group(rg).column(ci)
            s = chunk.statistics
            if s is None or not s.has_null_count:
                nulls = None
            elif nulls is not None:
                nulls += s.null_count
            if s is None or not s.has_min_max:
                if chunk.num_values > (s.null_count if s is not None and s.has_null_count else 0):
                    known = False  # values without bounds (all NaN): bounds unknown
                continue
            raw = chunk.physical_type in ("INT32", "INT64") and (
                pa.types.is_timestamp(KINDS[name].arrow_type) or pa.types.is_date32(KINDS[name].arrow_type))
            a, b = (s.min_raw, s.max_raw) if raw else (s.min, s.max)
            if isinstance(a, bytes):
                a, b = a.decode(), b.decode()
            lo = a if lo is None or a < lo else lo
            hi = b if hi is None or b > hi else hi
        if not known:
            lo = hi = None
        out[name] = ColumnStats(lo, hi, nulls, True, True)
    return FileStats(meta.num_rows, out, {c: KINDS[c].arrow_type for c in columns})


@settings(max_examples=FOOTER_EXAMPLES)
@given(scenario(allow_damage=False), st.integers(1, 3))
def test_no_lost_rows_with_parquet_footer_statistics(
        case: tuple[list[str], sarg.SearchArgument, list[RandomFile], str], row_group_size: int) -> None:
    columns, s, files, tz = case
    for f in files:
        table = pa.table({c: arrow_column(KINDS[c], [r[c] for r in f.rows]) for c in columns})
        sink = io.BytesIO()
        pq.write_table(table, sink, row_group_size=row_group_size)
        stats = footer_stats(sink.getvalue(), columns)
        _check(s, RandomFile(f.rows, stats), columns, tz)
        result = prune(translate(s, schema_for(columns)), stats_table([stats]), tz)
        assert result.truth_values() == [evaluate(translate(s, schema_for(columns)), stats, tz).truth]


# -- float parts holding no number -------------------------------------------------------------------------

@st.composite
def no_number_leaf(draw: Any) -> tuple[sarg.SearchArgument, RandomFile]:
    """A float or double column holding only NaN and nulls (or nothing), its exact statistics (NaN and null
    counts known, no bound), and one leaf on it (any operator and literal, NaN among them), or its NOT."""
    name = draw(st.sampled_from(["f", "g"]))
    kind = KINDS[name]
    values = draw(st.permutations([float("nan")] * draw(st.integers(0, 3)) + [None] * draw(st.integers(0, 2))))
    f = RandomFile([{name: v} for v in values], FileStats(len(values), {name: true_stats(kind, values)},
                                                             {name: kind.arrow_type}))
    b = sarg.builder()
    negate = draw(st.booleans())
    if negate:
        b.start_not()
    random_leaf(draw, b, name, kind, null_values=False)
    if negate:
        b.end()
    return b.build(), f


@settings(max_examples=max(settings().max_examples, 600))
@given(no_number_leaf())
def test_a_part_holding_no_number_is_judged_exactly(case: tuple[sarg.SearchArgument, RandomFile]) -> None:
    """Such a part's rows are known exactly from its statistics (NaN rows and NULL rows), so every leaf's
    TruthValue and its NOT's are exactly the outcomes its rows produce (Spark SQL: NaN = NaN, above every number;
    NULL unknown): ``x < 5`` is NO (NO_NULL with nulls) and ``NOT x < 5`` YES."""
    s, f = case
    columns = list(f.stats.columns)
    expr = translate(s, schema_for(columns))
    verdict = evaluate(expr, f.stats)
    outcomes = _outcomes(s, f, "UTC")
    got = {o for o, flag in zip("TFN", verdict.truth.value, strict=True) if flag}
    context = f"\nsarg: {s}\nrows: {f.rows}\n{verdict.explain()}"
    if f.rows:
        assert got == outcomes, f"outcomes {outcomes}, verdict {verdict.truth}" + context
        assert not verdict.kept_because_unknown, context
    else:
        assert verdict.truth is TruthValue.NO
    table = stats_table([f.stats], {c: KINDS[c].arrow_type for c in columns})
    assert prune(expr, table).truth_values() == [verdict.truth], context
