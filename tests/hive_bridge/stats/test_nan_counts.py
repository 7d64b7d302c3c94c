"""NaN counts of float and double columns: read from the footer's thrift (``Statistics.nan_count``), counted in
the values when the index reads a file whose footer does not give them, carried by every builder of statistics
rows (footers, log blocks, slices, segments of both formats), and used by the pruner (a file known free of NaN
prunes an ordered comparison like an integer column; a file with one NaN is kept)."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from thrift.protocol.TCompactProtocol import TCompactProtocol
from thrift.transport.TTransport import TMemoryBuffer

import sarg
from hive_bridge.formats import parquet_thrift
from hive_bridge.formats.parquet_footer import read_footer_stats, writer_may_write_nan_counts
from hive_bridge.formats.parquet_thrift import FooterThriftError, chunk_statistics, nan_counts
from hive_bridge.pruning import Pruner
from hive_bridge.stats import segments
from hive_bridge.stats.contract import NAN_COUNT
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.log_stats import union_stats
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.parquet_nan import (
    chunk_nan_counts,
    footer_bytes,
    give_base_files_nan_counts,
    with_nan_counts,
)
from hive_bridge.testing.writer import HudiWriter

NAN = float("nan")


def _parquet(table: pa.Table, row_group_size: int | None = None) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=row_group_size)
    return sink.getvalue()


def _fixture_parquet_files(fixture_tables: dict[str, Path]) -> list[Path]:
    return sorted(p for root in fixture_tables.values() for p in root.rglob("*.parquet")
                  if ".hoodie" not in p.parts)


# ------------------------------------------------------------------------------------------ the thrift reader
def test_thrift_reader_equals_pyarrow_on_every_fixture_file(fixture_tables: dict[str, Path]) -> None:
    files = _fixture_parquet_files(fixture_tables)
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        chunks = chunk_statistics(footer_bytes(data), str(path))
        md = pq.read_metadata(path)
        assert len(chunks) == md.num_row_groups, path
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            assert len(chunks[g]) == rg.num_columns, path
            for c in range(rg.num_columns):
                mine, st = chunks[g][c], rg.column(c).statistics
                assert mine.path == rg.column(c).path_in_schema
                assert mine.null_count == (st.null_count if st is not None and st.has_null_count else None), path
                if st is not None and st.has_min_max:
                    assert mine.has_min_max, (path, c)
                assert mine.nan_count is None  # written by parquet-mr 1.12/1.13: no NaN counts


def test_nan_count_read_from_a_footer_that_has_it() -> None:
    table = pa.table({"d": [1.0, NAN, None, NAN, -0.0, 2.0], "i": list(range(6)),
                      "f": pa.array([NAN, 1.5, 2.5, 3.5, 4.5, 5.5], pa.float32()),
                      "s": pa.array([{"x": v} for v in [0.0, 1.0, NAN, 3.0, 4.0, 5.0]])})
    data = with_nan_counts(_parquet(table, row_group_size=4))
    assert pq.read_table(pa.BufferReader(data)).num_rows == 6   # the file still reads
    chunks = chunk_statistics(footer_bytes(data))
    assert [[c.nan_count for c in rg] for rg in chunks] == [[2, None, 1, 1], [0, None, 0, 0]]
    assert [c.path for c in chunks[0]] == ["d", "i", "f", "s.x"]
    assert nan_counts(footer_bytes(data), [0, 2, 3, 1], [4, 2]) == [2, 1, 1, None]
    # one chunk without a count makes the file's unknown
    partial = with_nan_counts(_parquet(table, row_group_size=4), lambda g, c: None if g == 1 else 0)
    assert nan_counts(footer_bytes(partial), [0, 2], [4, 2]) == [None, None]


def test_the_python_decoder_reads_what_the_c_decoder_reads() -> None:
    data = with_nan_counts(_parquet(pa.table({"d": [1.0, NAN, 3.0]}), row_group_size=2))
    md = parquet_thrift._FileMetaData()
    md.read(TCompactProtocol(TMemoryBuffer(footer_bytes(data))))
    counts = [[c.meta_data.statistics.nan_count for c in rg.columns] for rg in md.row_groups]
    assert counts == [[c.nan_count for c in rg] for rg in chunk_statistics(footer_bytes(data))] == [[1], [0]]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "wrong_groups"])
def test_damaged_footer_is_a_clear_error(damage: str) -> None:
    footer = footer_bytes(with_nan_counts(_parquet(pa.table({"d": [1.0, NAN]}))))
    bad = {"truncated": footer[: len(footer) // 2], "garbage": b"\xff" * 40, "empty": b"",
           "wrong_groups": footer}[damage]
    with pytest.raises(FooterThriftError, match=r"some/file\.parquet: "):
        if damage == "wrong_groups":
            nan_counts(bad, [0], [2, 2], "some/file.parquet")
        else:
            nan_counts(bad, [0], [2], "some/file.parquet")


# ------------------------------------------------------------------------------------------------ footers
def test_footer_stats_take_the_footer_count_and_count_the_rest(tmp_path: Path) -> None:
    table = pa.table({"d": [1.0, NAN, 3.0], "e": [1.0, 2.0, 3.0], "n": pa.array([None, None, None], pa.float64())})
    with_counts = tmp_path / "with.parquet"
    with_counts.write_bytes(with_nan_counts(_parquet(table)))
    without = tmp_path / "without.parquet"
    without.write_bytes(_parquet(table))
    assert read_footer_stats(str(with_counts)).nans == [1, 0, 0]
    assert read_footer_stats(str(without)).nans == [None, None, 0]          # all null: no NaN
    assert read_footer_stats(str(without), count_nans=True).nans == [1, 0, 0]
    # the footer's count wins over the values (it is what the writer says; here deliberately wrong)
    lying = tmp_path / "lying.parquet"
    lying.write_bytes(with_nan_counts(_parquet(table), lambda g, c: 2))
    assert read_footer_stats(str(lying), count_nans=True).nans == [2, 2, 0]
    assert read_footer_stats(str(tmp_path / "absent.parquet")).nans is None
    # a writer known never to write NaN counts: its footer's thrift is not decoded for them
    pyarrow_named = tmp_path / "pyarrow.parquet"
    pyarrow_named.write_bytes(with_nan_counts(_parquet(table), created_by="parquet-cpp-arrow version 26.0.1"))
    assert read_footer_stats(str(pyarrow_named)).nans == [None, None, 0]


@pytest.mark.parametrize("created_by,may", [
    ("parquet-mr version 1.13.1 (build db41831)", False), ("parquet-mr version 1.12.3", False),
    ("parquet-mr version 1.18.0 (build 9694db6)", True), ("parquet-mr version 2.0.0", True),
    ("parquet-cpp-arrow version 26.0.1", False), ("parquet-cpp-arrow version 27.0.0", True),
    ("DuckDB version v1.5.0", True), ("parquet-rs version 57.0.0", True), (None, True), ("", True),
])
def test_which_writers_may_write_nan_counts(created_by: str | None, may: bool) -> None:
    assert writer_may_write_nan_counts(created_by) is may


# --------------------------------------------------------------------------------------------- the index
def _table_with(root: Path, amounts: list[float | None], rows_per_file: int, nan_footers: bool = False) -> HudiTable:
    writer = HudiWriter(root, record_key_fields=("id",), rows_per_file=rows_per_file)
    writer.insert(pa.table({"id": pa.array(range(len(amounts)), pa.int64()),
                            "amount": pa.array(amounts, pa.float64()),
                            "ratio": pa.array([None if a is None else a / 2 for a in amounts], pa.float32())}))
    if nan_footers:
        give_base_files_nan_counts(root)
    return HudiTable.open(root)


def _files_kept(table: HudiTable, text: str, **kw: object) -> int:
    index = ColumnStatsIndex(table, **kw)  # type: ignore[arg-type]
    result = Pruner(table, index, table.latest_file_slices()).run(
        sarg.read_filter(text, {"id": "bigint", "amount": "double", "ratio": "float"}))
    return result.files_kept


def test_not_less_equal_keeps_only_the_files_holding_a_match(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    amounts: list[float | None] = [float(i * 1000) for i in range(200)]
    amounts[37] = NAN        # one NaN in the file of rows 30..39
    amounts[12] = None
    monkeypatch.setenv("HIVE_BRIDGE_COUNT_NANS", "true")
    table = _table_with(tmp_path / "t", amounts, rows_per_file=10)
    text = "NOT amount <= 180000.0"     # matches rows 181..199 (two files) and the NaN (a third)
    assert _files_kept(table, text) == 3
    stats = ColumnStatsIndex(table).table()
    assert sorted(stats.column("amount::nan_count").to_pylist()) == [0] * 19 + [1]
    assert sorted(stats.column("ratio::nan_count").to_pylist()) == [0] * 19 + [1]
    # without NaN counts (the setting off, the default) and without float proofs: every file may hold NaN, none
    # is skipped
    monkeypatch.delenv("HIVE_BRIDGE_COUNT_NANS")
    monkeypatch.setenv("HIVE_BRIDGE_FLOAT_PROOFS", "0")
    table2 = _table_with(tmp_path / "t2", amounts, rows_per_file=10)
    assert _files_kept(table2, text) == 20
    assert set(ColumnStatsIndex(table2).table().column("amount::nan_count").to_pylist()) == {None}
    # with float proofs (the default): the files a NaN-free amount would skip get their amount column read (one
    # of them holds the NaN), and the same 3 files are kept as with counts; the index itself is left as it was
    monkeypatch.delenv("HIVE_BRIDGE_FLOAT_PROOFS")
    assert _files_kept(table2, text) == 3
    assert set(ColumnStatsIndex(table2).table().column("amount::nan_count").to_pylist()) == {None}
    # footers that carry the counts: no value is read, the same verdicts
    table3 = _table_with(tmp_path / "t3", amounts, rows_per_file=10, nan_footers=True)
    assert _files_kept(table3, text) == 3


@pytest.mark.parametrize("text,kept_files", [
    ("leaf-(EQUALS amount NaN)", 1),
    ("amount = CAST('NaN' AS DOUBLE)", 1),
    ("leaf-(IN amount 3000.0 NaN)", 2),
    ("amount IN (CAST('NaN' AS DOUBLE), 3000.0)", 2),
    ("(not leaf-(EQUALS amount NaN))", 10),
    ("amount <> CAST('NaN' AS DOUBLE)", 10),
    ("ratio > 40000.0", 2),
    ("NOT ratio < 0.0", 10),
])
def test_nan_literals(tmp_path: Path, text: str, kept_files: int) -> None:
    amounts: list[float | None] = [float(i * 1000) for i in range(100)]
    amounts[85] = NAN
    table = _table_with(tmp_path / "t", amounts, rows_per_file=10, nan_footers=True)
    assert _files_kept(table, text) == kept_files


def test_segments_of_format_2_are_read_with_nan_counts_unknown(tmp_path: Path) -> None:
    amounts: list[float | None] = [float(i) for i in range(40)]
    table = _table_with(tmp_path / "t", amounts, rows_per_file=10, nan_footers=True)
    index = ColumnStatsIndex(table)
    assert set(index.table().column("amount::nan_count").to_pylist()) == {0}
    folder = index.directory
    [seg_path] = list(folder.glob("seg-*.arrow"))
    seg = segments.read_segment(seg_path)
    assert seg.schema.metadata[FORMAT_KEY] == FORMAT_VERSION == b"3"
    old = seg.drop([c for c in seg.column_names if c.endswith("::" + NAN_COUNT)])
    segments.write_segment(old.replace_schema_metadata({FORMAT_KEY: b"2"}), seg_path)
    again = ColumnStatsIndex(HudiTable.open(table.base_path))
    stats = again.table()
    assert again.last.files_from_index == 4 and again.last.corrupt_segments == 0
    assert set(stats.column("amount::nan_count").to_pylist()) == {None}
    assert stats.column("amount::max").to_pylist() == index.table().column("amount::max").to_pylist()
    # a segment of format 3 without a float column's nan_count, or with one beyond the row count, is refused
    with pytest.raises(Exception, match="incomplete"):
        segments.validate_segment(old.replace_schema_metadata({FORMAT_KEY: b"3"}), "x")
    at = seg.schema.get_field_index("amount::nan_count")
    big = seg.set_column(at, "amount::nan_count", pa.array([11] * seg.num_rows, pa.int64()))
    with pytest.raises(Exception, match="nan_count outside"):
        segments.validate_segment(big, "x")


def test_slice_union_is_unknown_when_a_part_is() -> None:
    parts = pa.table({"num_rows": pa.array([3, 2, 4, 1], pa.int64()),
                      "x::min": pa.array([1.0, 2.0, 0.0, 5.0]), "x::max": pa.array([3.0, 4.0, 1.0, 5.0]),
                      "x::null_count": pa.array([0, 0, 0, 0], pa.int64()),
                      "x::min_exact": pa.array([True] * 4), "x::max_exact": pa.array([True] * 4),
                      "x::nan_count": pa.array([0, 1, 0, None], pa.int64())})
    union = union_stats(parts, [0, 0, 1, 1], 2, [("x", pa.float64())])
    assert union.column("x::nan_count").to_pylist() == [1, None]


def _parts_of(values: list[list[float | None]]) -> pa.Table:
    """One part per list of values, with its exact statistics (bounds of the numbers, null and NaN counts)."""
    numbers = [[v for v in vs if v is not None and v == v] for vs in values]
    return pa.table({"num_rows": pa.array([len(vs) for vs in values], pa.int64()),
                     "x::min": pa.array([min(n) if n else None for n in numbers], pa.float64()),
                     "x::max": pa.array([max(n) if n else None for n in numbers], pa.float64()),
                     "x::null_count": pa.array([sum(v is None for v in vs) for vs in values], pa.int64()),
                     "x::min_exact": pa.array([bool(n) for n in numbers]),
                     "x::max_exact": pa.array([bool(n) for n in numbers]),
                     "x::nan_count": pa.array([sum(v is not None and v != v for v in vs) for vs in values],
                                              pa.int64())})


def test_slice_union_of_parts_holding_no_number() -> None:
    from hive_bridge.filters.expression import translate
    from hive_bridge.pruning.vectorized import prune

    slices = [[[NAN, NAN], [1.0, 2.0]],     # no number + bounded: the bounded part's bounds, its NaN
              [[NAN, None], [NAN]],         # no number in any part: no bound, no number
              [[None], [NAN, 5.0]]]         # all null + bounded with NaN
    parts = _parts_of([vs for sl in slices for vs in sl])
    union = union_stats(parts, [0, 0, 1, 1, 2, 2], 3, [("x", pa.float64())])
    assert union.column("x::min").to_pylist() == [1.0, None, 5.0]
    assert union.column("x::max").to_pylist() == [2.0, None, 5.0]
    assert union.column("x::nan_count").to_pylist() == [2, 2, 1]
    schema = {"x": "double"}
    for text, kept in [("x < 1.5", [True, False, False]), ("x < 0", [False, False, False]),
                       ("NOT x < 0", [True, True, True]), ("x > 100", [True, True, True]),
                       ("x = 5", [False, False, True]), ("x BETWEEN 0 AND 1", [True, False, False])]:
        got = prune(translate(sarg.read_filter(text, schema), schema), union).keep.to_pylist()
        assert got == kept, text
    # a part whose counts exceed its rows (contradictory): the slice's NaN count is unknown, never "no number"
    bad = parts.set_column(parts.column_names.index("x::nan_count"), "x::nan_count",
                           pa.array([3, 0, 1, 1, 0, 1], pa.int64()))
    assert union_stats(bad, [0, 0, 1, 1, 2, 2], 3, [("x", pa.float64())]).column("x::nan_count").to_pylist() \
        == [None, 2, 1]


def test_merge_on_read_slice_with_a_nan_in_its_log_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_COUNT_NANS", "true")   # the base files' counts (their footers have none)
    root = tmp_path / "mor"
    writer = HudiWriter(root, table_type="MERGE_ON_READ", record_key_fields=("id",), precombine_field="ord",
                        rows_per_file=10)
    ids = list(range(30))
    writer.insert(pa.table({"id": pa.array(ids, pa.int64()), "amount": pa.array([float(i) for i in ids]),
                            "ord": pa.array([1] * 30, pa.int64())}))
    writer.upsert(pa.table({"id": pa.array([3], pa.int64()), "amount": pa.array([NAN]),
                            "ord": pa.array([2], pa.int64())}))
    table = HudiTable.open(root)
    schema = {"id": "bigint", "amount": "double", "ord": "bigint"}
    result = Pruner(table, ColumnStatsIndex(table), table.latest_file_slices()).run(
        sarg.read_filter("NOT amount <= 25.0", schema))
    # the slice of rows 0..9 has the NaN in its log, the one of 20..29 matches 26..29; the other is dropped
    assert result.files_total == 3
    kept_ids = sorted(i for s in result.slices
                      for i in pq.read_table(s.base_file.full_path, columns=["id"]).column("id").to_pylist())
    assert kept_ids == [*range(10), *range(20, 30)]
    logs = ColumnStatsIndex(table).log_table(table.latest_file_slices())
    assert sorted(v for v in logs.column("amount::nan_count").to_pylist() if v is not None) == [1]


def test_chunk_counts_helper_counts_nested_and_float32() -> None:
    data = _parquet(pa.table({"s": pa.array([{"x": NAN}, {"x": 1.0}]),
                              "f": pa.array([NAN, NAN], pa.float32())}))
    assert chunk_nan_counts(data) == {(0, 0): 1, (0, 1): 2}


def test_spark_filters_with_nan_literals(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, Not

    from hive_bridge.spark.filters import spark_filters_to_sarg

    amounts: list[float | None] = [float(i * 1000) for i in range(100)]
    amounts[85] = NAN
    table = _table_with(tmp_path / "t", amounts, rows_per_file=10, nan_footers=True)
    types = {"id": sarg.Type.LONG, "amount": sarg.Type.FLOAT, "ratio": sarg.Type.FLOAT}
    cases = [([EqualTo(("amount",), NAN)], 1), ([In(("amount",), (NAN, 3000.0))], 2),
             ([Not(EqualTo(("amount",), NAN))], 10), ([GreaterThan(("amount",), 90500.0)], 2)]
    for filters, kept in cases:
        s, rejected = spark_filters_to_sarg(filters, types)
        assert s is not None and not rejected, filters
        result = Pruner(table, ColumnStatsIndex(table), table.latest_file_slices()).run(s)
        assert result.files_kept == kept, (filters, str(s))
