"""Statistics of log files and of merged slices: the union of a slice's parts bounds the rows hudi-rs merges
from them, on every real merge-on-read table; log statistics are persisted in the index like footers, read
again when a log file changes, and unknown (never guessed) when a block cannot be decoded."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import sarg
from hive_bridge.formats.logfile import BlockType, HeaderKey
from hive_bridge.pruning.pruner import plan_slices
from hive_bridge.stats.contract import MAX, MAX_EXACT, MIN, MIN_EXACT, NULL_COUNT, stat_name
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.log_stats import log_rows_to_table, read_log_stats, union_stats
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.logfile_writer import encode_block
from tests.conftest import FIXTURE_NAMES

MOR = [n for n in FIXTURE_NAMES if ".mor." in n]
#: the merge-on-read fixtures whose latest slices have log files (the others were compacted or never had any)
MOR_WITH_LOGS = [n for n in ("quickstart_trips_table.mor.avro.v6_trips_8i1u",
                             "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
                             "sample_table.mor.avro.v9_lance_nonhivestyle",
                             "sample_table.mor.parquet.v6_complexkeygen_hivestyle",
                             "sample_table.mor.parquet.v6_nonpartitioned",
                             "sample_table.mor.parquet.v6_nonpartitioned_rollback",
                             "sample_table.mor.parquet.v6_simplekeygen_nonhivestyle") if n in FIXTURE_NAMES]


def test_the_list_of_tables_with_logs_is_complete(fixture_tables: dict[str, Path]) -> None:
    with_logs = sorted(n for n in MOR if any(s.log_files for s in HudiTable.open(fixture_tables[n]).latest_file_slices()))
    assert with_logs == sorted(MOR_WITH_LOGS)
TRIPS_V6 = "quickstart_trips_table.mor.avro.v6_trips_8i1u"
TRIPS_V8 = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
PARQUET_V6 = "sample_table.mor.parquet.v6_nonpartitioned"


# ------------------------------------------------------------------ union
INT64 = pa.int64()


def _parts(rows: list[dict[str, Any]], typ: pa.DataType = INT64) -> pa.Table:
    return pa.table({
        "num_rows": pa.array([r["rows"] for r in rows], pa.int64()),
        stat_name("x", MIN): pa.array([r.get("min") for r in rows], typ),
        stat_name("x", MAX): pa.array([r.get("max") for r in rows], typ),
        stat_name("x", NULL_COUNT): pa.array([r.get("nulls") for r in rows], pa.int64()),
        stat_name("x", MIN_EXACT): pa.array([r.get("exact", True) for r in rows], pa.bool_()),
        stat_name("x", MAX_EXACT): pa.array([r.get("exact", True) for r in rows], pa.bool_()),
    })


def _union(rows: list[dict[str, Any]], groups: list[int], n: int, typ: pa.DataType = INT64
           ) -> list[dict[str, Any]]:
    out = union_stats(_parts(rows, typ), groups, n, [("x", typ)])
    return [{"rows": r["num_rows"], "min": r["x::min"], "max": r["x::max"], "nulls": r["x::null_count"],
             "exact": (r["x::min_exact"], r["x::max_exact"])} for r in out.to_pylist()]


def test_union_widens_to_every_part() -> None:
    got = _union([{"rows": 4, "min": 0, "max": 3, "nulls": 0}, {"rows": 1, "min": 12, "max": 15, "nulls": 0}],
                 [0, 0], 1)
    assert got == [{"rows": 5, "min": 0, "max": 15, "nulls": 0, "exact": (True, True)}]


def test_union_of_several_slices_in_slice_order() -> None:
    got = _union([{"rows": 1, "min": 7, "max": 7, "nulls": 0}, {"rows": 2, "min": 1, "max": 2, "nulls": 1},
                  {"rows": 1, "min": 9, "max": 9, "nulls": 0}], [1, 0, 1], 2)
    assert [(g["min"], g["max"], g["rows"], g["nulls"]) for g in got] == [(1, 2, 2, 1), (7, 9, 2, 0)]


def test_an_unknown_part_makes_the_slice_unknown() -> None:
    got = _union([{"rows": 4, "min": 0, "max": 3, "nulls": 0}, {"rows": None}], [0, 0], 1)
    assert got[0]["rows"] is None and got[0]["min"] is None and got[0]["max"] is None and got[0]["nulls"] is None
    got = _union([{"rows": 4, "min": 0, "max": 3, "nulls": 0}, {"rows": 2, "nulls": 1}], [0, 0], 1)
    assert got[0]["min"] is None and got[0]["max"] is None and got[0]["nulls"] == 1  # a part without bounds


def test_all_null_and_empty_parts_give_no_bound() -> None:
    got = _union([{"rows": 4, "min": 0, "max": 3, "nulls": 0}, {"rows": 2, "nulls": 2}, {"rows": 0, "nulls": 0}],
                 [0, 0, 0], 1)
    assert got[0] == {"rows": 6, "min": 0, "max": 3, "nulls": 2, "exact": (True, True)}
    got = _union([{"rows": 2, "nulls": 2}, {"rows": 3, "nulls": 3}], [0, 0], 1)
    assert got[0]["min"] is None and got[0]["nulls"] == got[0]["rows"] == 5  # all null: IS NULL may say YES


def test_union_exactness_is_the_least_exact_part() -> None:
    got = _union([{"rows": 1, "min": "a", "max": "b", "nulls": 0, "exact": None},
                  {"rows": 1, "min": "c", "max": "d", "nulls": 0, "exact": True}], [0, 0], 1, pa.string())
    assert got[0]["exact"] == (None, None)  # unknown exactness: a string bound is not used
    got = _union([{"rows": 1, "min": 1, "max": 2, "nulls": 0, "exact": False},
                  {"rows": 1, "min": 3, "max": 4, "nulls": 0}], [0, 0], 1)
    assert got[0]["min"] is None and got[0]["max"] is None


def test_every_slice_needs_a_part() -> None:
    with pytest.raises(ValueError):
        union_stats(_parts([{"rows": 1, "min": 1, "max": 1, "nulls": 0}]), [1], 2, [("x", pa.int64())])


# ------------------------------------------------------------------ real tables
def _merged_rows(root: Path, base: str, logs: list[str]) -> pa.Table | None:
    import hudi

    reader = hudi.HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
    try:
        out = reader.read_file_slice_from_paths(base, logs)
    except BaseException as exc:  # hudi-rs panics on some tables (naive timestamps): no oracle there
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None
    batches = out if isinstance(out, list) else [out]
    return pa.Table.from_batches(batches) if batches else None


def _bounds_hold(values: Any, lo: Any, hi: Any, nulls: Any, rows: Any, typ: pa.DataType) -> str | None:
    """None when [lo, hi] bounds the non-null, non-NaN values and the null facts hold; else what failed."""
    if values.type != typ:
        try:
            values = values.cast(typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # not comparable here (e.g. a struct leaf read differently): nothing to check
    n_null = values.null_count
    if nulls is not None:
        if nulls == 0 and n_null:
            return f"null count 0, {n_null} nulls"
        if rows is not None and nulls >= rows and n_null < len(values):
            return "all null claimed, values present"
    present = pc.drop_null(values)
    if pa.types.is_floating(typ):
        present = present.filter(pc.invert(pc.is_nan(present)))
    if len(present) == 0 or lo is None or hi is None:
        return None
    mm = pc.min_max(present)
    if pc.less(mm["min"], pa.scalar(lo, typ)).as_py() or pc.greater(mm["max"], pa.scalar(hi, typ)).as_py():
        return f"values [{mm['min']}, {mm['max']}] outside [{lo}, {hi}]"
    return None


@pytest.mark.parametrize("name", MOR_WITH_LOGS)
def test_slice_union_bounds_the_merged_rows(fixture_tables: dict[str, Path], name: str) -> None:
    """Every slice with log files: its union statistics (base + logs) bound every column of the rows hudi-rs
    merges from it; and each log file's own statistics bound its own records."""
    from hive_bridge.formats.logfile import data_block_table, read_log_file

    root = fixture_tables[name]
    table = HudiTable.open(root)
    index = ColumnStatsIndex(table, persist=False)
    slices = [s for s in table.latest_file_slices() if s.log_files]
    assert slices
    leaves = [(leaf.name, leaf.type) for leaf in index.target_leaves() if "." not in leaf.name]
    base_rows = index.table([s for s in slices if s.base_file is not None]).drop(["has_log_files"])
    log_rows = index.log_table(slices)
    assert log_rows.num_rows == sum(len(s.log_files) for s in slices)
    assert index.last.unreadable_log_files == 0, index.errors
    checked = 0
    # each log file's statistics bound its own records
    for i, lf in enumerate(lf for s in slices for lf in s.log_files):
        contents = read_log_file(lf.full_path)
        tables = [data_block_table(b) for b in contents.blocks
                  if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)]
        assert log_rows.column("num_rows")[i].as_py() == sum(t.num_rows for t in tables)
        for col, typ in leaves:
            parts = [t.column(col) for t in tables if col in t.column_names]
            if not parts:
                continue
            values = pa.chunked_array([c for p in parts for c in p.chunks], parts[0].type)
            row = log_rows.slice(i, 1).to_pylist()[0]
            problem = _bounds_hold(values, row[stat_name(col, MIN)], row[stat_name(col, MAX)],
                                   row[stat_name(col, NULL_COUNT)], row["num_rows"], typ)
            assert problem is None, (lf.path, col, problem)
            checked += 1
    # the union bounds the merged rows
    parts = pa.concat_tables([base_rows, log_rows.cast(base_rows.schema)])
    part_slice = [j for j, s in enumerate(slices) if s.base_file is not None]
    for j, s in enumerate(slices):
        part_slice += [j] * len(s.log_files)
    union = union_stats(parts, part_slice, len(slices), leaves)
    for j, s in enumerate(slices):
        merged = _merged_rows(root, s.base_file.path if s.base_file else "", [lf.path for lf in s.log_files])
        if merged is None:
            continue
        row = union.slice(j, 1).to_pylist()[0]
        if row["num_rows"] is not None:
            assert merged.num_rows <= row["num_rows"]
        for col, typ in leaves:
            if col not in merged.column_names:
                continue
            problem = _bounds_hold(merged.column(col), row[stat_name(col, MIN)], row[stat_name(col, MAX)],
                                   row[stat_name(col, NULL_COUNT)], row["num_rows"], typ)
            assert problem is None, (name, s.file_id, col, problem)
            checked += 1
    assert checked > 0


def test_log_statistics_are_persisted_and_reused(fixture_copy: Callable[[str], Path]) -> None:
    root = fixture_copy(TRIPS_V8)
    table = HudiTable.open(root)
    slices = [s for s in table.latest_file_slices() if s.log_files]
    n = sum(len(s.log_files) for s in slices)
    first = ColumnStatsIndex(table, source="footers")  # this table has a metadata table: read the logs here
    first.table()
    rows = first.log_table(slices)
    assert first.last.log_files_read == n and first.last.log_files_from_index == 0
    again = ColumnStatsIndex(HudiTable.open(root), source="footers")
    assert again.log_table(slices).equals(rows)
    assert again.last.log_files_read == 0 and again.last.log_files_from_index == n
    # base-file statistics and log statistics share the segments: a full table load still finds its footers
    again.table()
    assert again.last.files_from_footers == 0


def test_a_grown_log_file_is_read_again(fixture_copy: Callable[[str], Path]) -> None:
    """A log file appended to since it was indexed (table version 6 appends to log files) is a new key: its
    statistics are read again, and cover the appended block."""
    from hive_bridge.formats.logfile import read_log_file
    from hive_bridge.testing.logfile_writer import avro_block_content

    root = fixture_copy(TRIPS_V6)
    table = HudiTable.open(root)
    (s,) = [s for s in table.latest_file_slices() if s.log_files]
    lf = s.log_files[0]
    ColumnStatsIndex(table).log_table([s])
    block = next(b for b in read_log_file(lf.full_path).blocks if b.block_type == BlockType.AVRO_DATA)
    import json

    schema = json.loads(block.header[HeaderKey.SCHEMA])
    from hive_bridge.formats.logfile import data_block_table

    record = data_block_table(block).to_pylist()[0]
    record = {**record, "fare": 9999.5}
    for k, v in list(record.items()):  # fastavro wants the logical values back as it reads them
        if hasattr(v, "tzinfo") and v.tzinfo is None:
            record[k] = v
    content = avro_block_content([record], schema)
    with open(lf.full_path, "ab") as fh:
        fh.write(encode_block(BlockType.AVRO_DATA, dict(block.header), content))
    grown = HudiTable.open(root)
    (s2,) = [x for x in grown.latest_file_slices() if x.log_files]
    index = ColumnStatsIndex(grown)
    rows = index.log_table([s2])
    assert index.last.log_files_read == 1
    assert rows.column(stat_name("fare", MAX))[0].as_py() == 9999.5
    listing = plan_slices(grown, ColumnStatsIndex(grown), grown.latest_file_slices(),
                           sarg.read_filter("fare = 9999.5", None))
    assert s2.file_id in {x.file_id for x in listing.slices}


def test_an_undecodable_block_makes_the_log_unknown_and_keeps_the_slice(fixture_copy: Callable[[str], Path]) -> None:
    """An HFile data block in a data table's log (this reader has no HFile decoder) or a data block whose
    payload does not decode: the log file's statistics are unknown, counted, and its slice is kept."""
    root = fixture_copy(PARQUET_V6)
    table = HudiTable.open(root)
    (s,) = [s for s in table.latest_file_slices() if s.log_files]
    lf = s.log_files[0]
    with open(lf.full_path, "ab") as fh:
        fh.write(encode_block(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: lf.instant}, b"\x00" * 64))
    leaves = [(leaf.name, leaf.type) for leaf in ColumnStatsIndex(table).target_leaves()]
    st = read_log_stats(lf.full_path, leaves)
    assert st.error is not None and "cannot read" in st.error
    grown = HudiTable.open(root)
    index = ColumnStatsIndex(grown)
    listing = plan_slices(grown, index, grown.latest_file_slices(), sarg.read_filter("id = -12345", None),
                           explain=True)
    assert listing.log_files_unknown == 1
    kept = {x.file_id for x in listing.slices}
    assert s.file_id in kept
    verdict = next(v for v in listing.verdicts if s.file_id in v.path)
    assert verdict.unknown and listing.kept_unknown >= 1
    # unknown rows are not persisted: a new index reads the log again
    again = ColumnStatsIndex(HudiTable.open(root))
    again.log_table([x for x in grown.latest_file_slices() if x.log_files])
    assert again.last.log_files_read == 1 and again.last.unreadable_log_files == 1


def test_a_truncated_tail_keeps_the_readable_blocks(fixture_copy: Callable[[str], Path]) -> None:
    """A half-written block at the end (a crashed writer) holds no record Hudi reads: the log's statistics are
    those of its complete blocks."""
    root = fixture_copy(TRIPS_V6)
    table = HudiTable.open(root)
    (s,) = [s for s in table.latest_file_slices() if s.log_files]
    lf = s.log_files[0]
    leaves = [(leaf.name, leaf.type) for leaf in ColumnStatsIndex(table).target_leaves()]
    before = read_log_stats(lf.full_path, leaves)
    data = Path(lf.full_path).read_bytes()
    Path(lf.full_path).write_bytes(data + data[: len(data) // 2])  # a second copy of the block, cut in half
    after = read_log_stats(lf.full_path, leaves)
    assert after.error is None and after.corrupt_regions >= 1
    assert after.num_rows == before.num_rows
    assert after.columns["fare"][1].equals(before.columns["fare"][1])


def test_log_rows_of_an_unreadable_log_are_unknown() -> None:
    from hive_bridge.stats.log_stats import LogStats

    t = log_rows_to_table([("p", "", 1, "1")], [LogStats(None, error="boom")], [("x", pa.int64())])
    row = t.to_pylist()[0]
    assert row["num_rows"] is None and row["x::min"] is None and row["x::null_count"] is None
