"""Column-statistics index: values checked against the data itself, persistence, staleness, damage."""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hive_bridge.formats import parquet_footer
from hive_bridge.formats.parquet_footer import read_footer_stats
from hive_bridge.stats import index as stats_mod
from hive_bridge.stats import rows as stats_rows
from hive_bridge.stats import segments
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.rows import KEY_FIELDS
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter
from tests.conftest import FIXTURE_NAMES

INSTANT = "20240101000000000"


def _leaf(table: pa.Table, dotted: str) -> pa.Array:
    parts = dotted.split(".")
    arr: Any = table.column(parts[0]).combine_chunks()
    for p in parts[1:]:
        arr = pc.struct_field(arr, p)
    return arr


def _leaf_names(stats: pa.Table) -> list[str]:
    return [c[: -len("::min")] for c in stats.column_names if c.endswith("::min")]


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_statistics_match_the_data(fixture_copy: Callable[[str], Path], name: str) -> None:
    path = fixture_copy(name)
    table = HudiTable.open(path)
    slices = table.latest_file_slices()
    stats = ColumnStatsIndex(table, source="footers").load()  # the footers themselves (test_mdt_stats: the MDT)
    assert stats.num_rows == len(slices)
    assert stats.column_names[:6] == ["path", "partition", "file_size", "instant", "num_rows", "has_log_files"]
    leaves = _leaf_names(stats)
    assert not any(n.startswith(("arrayField", "mapField")) for n in leaves)
    if not table.base_files_are_parquet:  # e.g. LANCE: no footers, every statistic unknown (test_base_formats)
        assert leaves and stats.num_rows
        unknown = ["num_rows", *(c for c in stats.column_names if "::" in c)]
        assert all(stats.column(c).null_count == stats.num_rows for c in unknown)
        return
    for row, s in zip(stats.to_pylist(), slices, strict=True):
        assert s.base_file is not None
        assert (row["path"], row["partition"], row["file_size"], row["instant"], row["has_log_files"]) == (
            s.base_file.path, s.partition_path, s.base_file.size, s.base_instant, s.has_log_files)
        data = pq.read_table(s.base_file.full_path)
        assert row["num_rows"] == data.num_rows
        for leaf in leaves:
            values = _leaf(data, leaf)
            assert row[f"{leaf}::null_count"] == values.null_count, leaf
            lo, hi = row[f"{leaf}::min"], row[f"{leaf}::max"]
            if values.type != stats.schema.field(f"{leaf}::min").type:
                # a column whose type changed between commits (v9_timebasedkeygen_epochmillis: ts_millis is a
                # bigint in older files, a string in the newest): this file's bounds do not compare in the
                # table's type, so they are unknown
                assert lo is None and hi is None, (leaf, values.type)
                continue
            if values.null_count == len(values):
                assert lo is None and hi is None
                continue
            mm = pc.min_max(values).as_py()
            assert lo is not None and hi is not None, leaf
            assert (lo, hi) == (mm["min"], mm["max"]), leaf
            exact = row[f"{leaf}::min_exact"]
            # the fixtures come from parquet-mr, which may truncate byte-array bounds when configured to
            # Hudi's writer is parquet-mr: its footer bounds are exact (and equal the data's true min/max above)
            assert exact is True
            assert row[f"{leaf}::max_exact"] is exact


def test_layout_and_types(fixture_copy: Callable[[str], Path]) -> None:
    stats = ColumnStatsIndex(HudiTable.open(fixture_copy("sample_table.cow.v6_nonpartitioned"))).load()
    schema = stats.schema
    for f in KEY_FIELDS:
        assert schema.field(f.name).type == f.type
    assert schema.field("has_log_files").type == pa.bool_()
    expected = {
        "id": pa.int32(), "name": pa.string(), "isActive": pa.bool_(), "longField": pa.int64(),
        "floatField": pa.float32(), "doubleField": pa.float64(), "decimalField": pa.decimal128(10, 5),
        "dateField": pa.date32(), "timestampField": pa.timestamp("us", tz="UTC"), "binaryField": pa.binary(),
        "structField.field1": pa.string(), "structField.child_struct.child_field2": pa.bool_(),
    }
    for col, typ in expected.items():
        assert schema.field(f"{col}::min").type == typ
        assert schema.field(f"{col}::max").type == typ
        assert schema.field(f"{col}::null_count").type == pa.int64()
        assert schema.field(f"{col}::min_exact").type == pa.bool_()
        assert schema.field(f"{col}::max_exact").type == pa.bool_()
    row = stats.to_pylist()[0]
    assert row["decimalField::min"] == Decimal("11111.22222")
    assert row["dateField::max"] == dt.date(2023, 4, 4)
    assert row["timestampField::min"] == dt.datetime(2023, 4, 1, 17, 1, tzinfo=dt.UTC)


def test_mor_slices_with_logs_are_flagged(fixture_copy: Callable[[str], Path]) -> None:
    table = HudiTable.open(fixture_copy("quickstart_trips_table.mor.avro.v6_trips_8i1u"))
    stats = ColumnStatsIndex(table).load()
    flags = dict(zip(stats.column("partition").to_pylist(), stats.column("has_log_files").to_pylist(), strict=True))
    assert flags == {"city=chennai": False, "city=san_francisco": True, "city=sao_paulo": False}


def test_partition_columns_only_in_paths_have_no_statistics(tmp_path: Path) -> None:
    path = _crafted(tmp_path, {"a": pa.table({"id": [1, 2]})},
                    extra_props="hoodie.table.partition.fields=region\n"
                                "hoodie.datasource.write.drop.partition.columns=true\n", partition="region=eu")
    table = HudiTable.open(path)
    assert table.arrow_schema().field("region").type == pa.string()
    assert "region" not in table.file_schema().names
    stats = ColumnStatsIndex(table).load()
    assert "region::min" not in stats.column_names and "id::min" in stats.column_names
    assert stats.column("partition").to_pylist() == ["region=eu"]


# --------------------------------------------------------- crafted parquet
def _crafted(
    tmp_path: Path, files: dict[str, pa.Table], *, write_kwargs: dict[str, dict[str, Any]] | None = None,
    extra_props: str = "", instants: dict[str, str] | None = None, partition: str = "",
) -> Path:
    """A v6 table whose base files are exactly the given parquet files (one file group each)."""
    path = tmp_path / "crafted"
    hoodie = path / ".hoodie"
    hoodie.mkdir(parents=True, exist_ok=True)
    (hoodie / "hoodie.properties").write_text(
        "hoodie.table.name=crafted\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\n"
        "hoodie.table.recordkey.fields=id\n" + extra_props)
    for ts in sorted(set((instants or {}).values()) | {INSTANT}):
        (hoodie / f"{ts}.commit").write_text(json.dumps({"partitionToWriteStats": {}}))
    directory = path / partition if partition else path
    directory.mkdir(parents=True, exist_ok=True)
    for fid, data in files.items():
        ts = (instants or {}).get(fid, INSTANT)
        pq.write_table(data, directory / f"{fid}-0_0-0-0_{ts}.parquet", **(write_kwargs or {}).get(fid, {}))
    return path


def _row(stats: pa.Table, fid: str) -> dict[str, Any]:
    for row in stats.to_pylist():
        if row["path"].rsplit("/", 1)[-1].startswith(f"{fid}-0_"):
            return row
    raise AssertionError(fid)


def test_row_groups_are_combined(tmp_path: Path) -> None:
    data = pa.table({"v": pa.array([5, 3, None, None, 9, 7], pa.int64()), "s": ["m", "c", None, None, "x", "d"]})
    path = _crafted(tmp_path, {"a": data}, write_kwargs={"a": {"row_group_size": 2}})
    assert pq.read_metadata(next(path.glob("*.parquet"))).num_row_groups == 3
    row = _row(ColumnStatsIndex(HudiTable.open(path)).load(), "a")
    # the middle row group is all null: it has no bounds, the others give min of mins and max of maxes
    assert (row["v::min"], row["v::max"], row["v::null_count"]) == (3, 9, 2)
    assert (row["s::min"], row["s::max"], row["s::null_count"]) == ("c", "x", 2)
    assert row["num_rows"] == 6 and row["v::min_exact"] is True


def test_missing_statistics_are_unknown(tmp_path: Path) -> None:
    data = pa.table({"a": [1, 2, 3], "b": [4, 5, 6]})
    path = _crafted(tmp_path, {"x": data}, write_kwargs={"x": {"write_statistics": ["a"]}})
    row = _row(ColumnStatsIndex(HudiTable.open(path)).load(), "x")
    assert (row["a::min"], row["a::max"], row["a::null_count"]) == (1, 3, 0)
    # never 0 for an unknown null count
    assert (row["b::min"], row["b::max"], row["b::null_count"], row["b::min_exact"]) == (None, None, None, None)


def test_one_row_group_without_statistics_makes_the_file_unknown(tmp_path: Path) -> None:
    path = tmp_path / "two.parquet"
    schema = pa.schema([("a", pa.int64())])
    with pq.ParquetWriter(path, schema) as w:
        w.write_table(pa.table({"a": [1, 2]}, schema=schema))
    md = pq.read_metadata(path)
    assert md.num_row_groups == 1
    stats = read_footer_stats(str(path))
    assert stats.values["a"][:3] == (1, 2, 0)
    fake = _FakeMeta([[_FakeStats(1, 2, 0)], [None]], rows=[2, 2])
    combined = parquet_footer.footer_stats_of(fake, pa.schema([("a", pa.int64())]))  # type: ignore[arg-type]
    assert combined.values["a"] == (None, None, None, None, None)


class _FakeStats:
    def __init__(self, lo: Any, hi: Any, nulls: int | None, has_min_max: bool = True) -> None:
        self.min = self.min_raw = lo
        self.max = self.max_raw = hi
        self.null_count = nulls if nulls is not None else 0
        self.has_null_count = nulls is not None
        self.has_min_max = has_min_max


class _FakeColumnMeta:
    def __init__(self, stats: _FakeStats | None) -> None:
        self.statistics = stats


class _FakeRowGroup:
    def __init__(self, stats: list[_FakeStats | None], rows: int) -> None:
        self._stats = stats
        self.num_rows = rows

    def column(self, i: int) -> _FakeColumnMeta:
        return _FakeColumnMeta(self._stats[i])


class _FakeLogical:
    def __init__(self, kind: str) -> None:
        self.type = kind

    def to_json(self) -> str:
        return "{}"


class _FakeSchemaColumn:
    def __init__(self, name: str, physical: str) -> None:
        self.path = name
        self.physical_type = physical
        self.max_repetition_level = 0
        self.logical_type = _FakeLogical("NONE")


class _FakeSchema:
    def __init__(self, cols: list[_FakeSchemaColumn]) -> None:
        self._cols = cols

    def column(self, i: int) -> _FakeSchemaColumn:
        return self._cols[i]


class _FakeMeta:
    """Just enough of pyarrow's FileMetaData to feed statistics a real writer would not produce."""

    def __init__(self, groups: list[list[_FakeStats | None]], rows: list[int], physical: str = "INT64") -> None:
        self._groups = [_FakeRowGroup(g, r) for g, r in zip(groups, rows, strict=True)]
        self.num_row_groups = len(groups)
        self.num_rows = sum(rows)
        self.num_columns = len(groups[0])
        self.schema = _FakeSchema([_FakeSchemaColumn("a", physical)])
        self.created_by = "fake writer"

    def row_group(self, i: int) -> _FakeRowGroup:
        return self._groups[i]


def test_nan_bounds_are_unknown() -> None:
    schema = pa.schema([("a", pa.float64())])
    nan_min = _FakeMeta([[_FakeStats(math.nan, 3.0, 0)]], rows=[3], physical="DOUBLE")
    assert parquet_footer.footer_stats_of(nan_min, schema).values["a"] == (None, None, 0, None, None)  # type: ignore[arg-type]
    nan_max = _FakeMeta([[_FakeStats(1.0, 2.0, 0)], [_FakeStats(0.5, math.nan, 1)]], rows=[2, 2], physical="DOUBLE")
    assert parquet_footer.footer_stats_of(nan_max, schema).values["a"] == (None, None, 1, None, None)  # type: ignore[arg-type]
    fine = _FakeMeta([[_FakeStats(1.0, 2.0, 0)], [_FakeStats(-0.5, 1.5, 1)]], rows=[2, 2], physical="DOUBLE")
    assert parquet_footer.footer_stats_of(fine, schema).values["a"] == (-0.5, 2.0, 1, True, True)  # type: ignore[arg-type]


def test_real_nan_values_do_not_hide_rows(tmp_path: Path) -> None:
    # parquet writers leave NaN out of min/max; the bounds still cover every non-NaN value
    data = pa.table({"f": pa.array([1.5, math.nan, -2.0], pa.float64()), "g": pa.array([math.nan] * 3)})
    row = _row(ColumnStatsIndex(HudiTable.open(_crafted(tmp_path, {"a": data}))).load(), "a")
    assert (row["f::min"], row["f::max"]) == (-2.0, 1.5)
    assert row["g::min"] is None or math.isnan(row["g::min"]) is False


def test_int96_timestamps_are_unknown(tmp_path: Path) -> None:
    ts = pa.array([dt.datetime(2024, 1, 1), None], pa.timestamp("ns"))
    path = _crafted(tmp_path, {"a": pa.table({"t": ts, "i": [1, 2]})},
                    write_kwargs={"a": {"use_deprecated_int96_timestamps": True}})
    md = pq.read_metadata(next(path.glob("*.parquet")))
    assert md.schema.column(0).physical_type == "INT96"
    row = _row(ColumnStatsIndex(HudiTable.open(path)).load(), "a")
    assert (row["t::min"], row["t::max"], row["t::min_exact"]) == (None, None, None)
    written = md.row_group(0).column(0).statistics
    assert row["t::null_count"] == (None if written is None or not written.has_null_count else 1)
    assert row["i::max"] == 2


def test_timestamp_units_and_time_zones(tmp_path: Path) -> None:
    when = [dt.datetime(2024, 5, 1, 12, 0, 0, 123000), dt.datetime(2024, 5, 2)]
    data = pa.table({
        "ms_utc": pa.array(when, pa.timestamp("ms", tz="UTC")),
        "us_local": pa.array(when, pa.timestamp("us")),
        "ns_utc": pa.array(when, pa.timestamp("ns", tz="UTC")),
        "d": pa.array([dt.date(2024, 1, 3), dt.date(2023, 12, 31)]),
        "dec": pa.array([Decimal("1.50"), Decimal("-7.25")], pa.decimal128(9, 2)),
        "i8": pa.array([3, -4], pa.int8()),
        "u": pa.array([1, 2**63 + 5], pa.uint64()),
    })
    stats = ColumnStatsIndex(HudiTable.open(_crafted(tmp_path, {"a": data}))).load()
    assert stats.schema.field("ms_utc::min").type == pa.timestamp("ms", tz="UTC")
    assert stats.schema.field("us_local::min").type == pa.timestamp("us")
    assert stats.schema.field("ns_utc::max").type == pa.timestamp("ns", tz="UTC")
    assert stats.schema.field("dec::min").type == pa.decimal128(9, 2)
    assert stats.schema.field("i8::min").type == pa.int8()
    row = stats.to_pylist()[0]
    assert row["ms_utc::min"] == when[0].replace(tzinfo=dt.UTC)
    assert row["us_local::max"] == when[1]
    assert (row["d::min"], row["d::max"]) == (dt.date(2023, 12, 31), dt.date(2024, 1, 3))
    assert (row["dec::min"], row["dec::max"]) == (Decimal("-7.25"), Decimal("1.50"))
    assert (row["i8::min"], row["i8::max"]) == (-4, 3)
    assert (row["u::min"], row["u::max"]) == (1, 2**63 + 5)


def test_all_null_column(tmp_path: Path) -> None:
    data = pa.table({"id": [1, 2, 3], "n": pa.array([None, None, None], pa.int32())})
    row = _row(ColumnStatsIndex(HudiTable.open(_crafted(tmp_path, {"a": data}))).load(), "a")
    assert (row["n::min"], row["n::max"], row["n::null_count"]) == (None, None, 3)


def test_schema_evolution(tmp_path: Path) -> None:
    old = pa.table({"id": pa.array([1, 2], pa.int32()), "x": pa.array([10, 20], pa.int32())})
    new = pa.table({"id": pa.array([3, 4], pa.int64()), "x": pa.array([5, 6], pa.int32()),
                    "added": ["p", "q"]})
    later = "20240102000000000"
    path = _crafted(tmp_path, {"old": old, "new": new}, instants={"new": later})
    stats = ColumnStatsIndex(HudiTable.open(path)).load()
    assert stats.schema.field("id::min").type == pa.int64()
    o, n = _row(stats, "old"), _row(stats, "new")
    # a column missing from a file is all null there
    assert (o["added::min"], o["added::max"], o["added::null_count"]) == (None, None, 2)
    assert (n["added::min"], n["added::max"], n["added::null_count"]) == ("p", "q", 0)
    # int32 bounds of the older file, cast to the table's int64
    assert (o["id::min"], o["id::max"]) == (1, 2) and (n["id::min"], n["id::max"]) == (3, 4)
    # and the same from the persisted index
    again = ColumnStatsIndex(HudiTable.open(path))
    assert again.load().equals(stats) and again.last.files_from_footers == 0


def test_incompatible_type_change_is_unknown(tmp_path: Path) -> None:
    old = pa.table({"id": [1], "c": ["not a number"]})
    new = pa.table({"id": [2], "c": pa.array([5], pa.int64())})
    path = _crafted(tmp_path, {"old": old, "new": new}, instants={"new": "20240102000000000"})
    stats = ColumnStatsIndex(HudiTable.open(path)).load()
    o = _row(stats, "old")
    assert (o["c::min"], o["c::max"], o["c::null_count"]) == (None, None, 0)
    assert _row(stats, "new")["c::max"] == 5


# -------------------------------------------------------- persisted index
def _writer_table(tmp_path: Path, n: int = 40, rows_per_file: int = 2) -> HudiWriter:
    w = HudiWriter(tmp_path / "t", partition_fields=["part"], rows_per_file=rows_per_file)
    w.insert(pa.table({"id": pa.array(range(n), pa.int64()), "part": [i % 4 for i in range(n)],
                       "name": [f"n{i:04d}" for i in range(n)]}))
    return w


def _segments(path: Path) -> list[Path]:
    return sorted((path / ".hoodie" / ".hive_bridge" / "column_stats").glob("seg-*.arrow"))


def test_persisted_then_incremental(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    first = ColumnStatsIndex(w.table())
    built = first.load()
    assert (first.last.files_from_footers, first.last.files_from_index, first.last.segments_written) == (20, 0, 1)
    assert len(_segments(w.base_path)) == 1
    second = ColumnStatsIndex(w.table())
    assert second.load().equals(built)
    assert (second.last.files_from_footers, second.last.files_from_index) == (0, 20)
    # an upsert rewrites 2 file groups (ids 0 and 5 live in different files) and inserts 1 new group
    w.upsert(pa.table({"id": pa.array([0, 5, 1000], pa.int64()), "part": [0, 1, 2], "name": ["u0", "u5", "new"]}))
    refreshed = second.refresh()
    assert (second.last.files_from_footers, second.last.files_from_index) == (3, 18)
    assert refreshed.num_rows == 21
    assert len(_segments(w.base_path)) == 2
    assert second.counters.files_from_footers == 3 and second.counters.files_from_index == 38
    rebuilt_index = ColumnStatsIndex(w.table())
    rebuilt_index.clear()
    assert rebuilt_index.load().equals(refreshed) and rebuilt_index.last.files_from_footers == 21
    names = dict(zip(refreshed.column("name::min").to_pylist(), refreshed.column("name::max").to_pylist(),
                     strict=True))
    assert names["new"] == "new" and names["n0004"] == "u0"  # the group of ids 0 and 4 after the update


def test_stale_entry_is_never_used(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    table = w.table()
    ColumnStatsIndex(table).load()
    victim = table.latest_file_slices()[0].base_file
    assert victim is not None
    # rewrite the file in place with other content (and so another size)
    pq.write_table(pa.table({"id": pa.array([777, 778, 779], pa.int64()), "part": [0, 0, 0],
                             "name": ["z", "z", "z"]}), victim.full_path)
    index = ColumnStatsIndex(w.table())
    stats = index.load()
    assert index.last.files_from_footers == 1
    row = stats.filter(pc.equal(stats.column("path"), victim.path)).to_pylist()[0]
    assert (row["id::min"], row["id::max"], row["num_rows"]) == (777, 779, 3)


def test_file_rewritten_twice_is_read_once_each_time(tmp_path: Path) -> None:
    """A rewritten file leaves its old row in an older segment: the lookup finds the newest row of a path first,
    so each content is read from its footer once, and a return to an older size is read again, not served from
    the old row's statistics unless they match it."""
    w = _writer_table(tmp_path)
    table = w.table()
    ColumnStatsIndex(table).load()
    victim = table.latest_file_slices()[0].base_file
    assert victim is not None
    original = Path(victim.full_path).read_bytes()
    pq.write_table(pa.table({"id": pa.array([777, 778, 779], pa.int64()), "part": [0, 0, 0],
                             "name": ["z", "z", "z"]}), victim.full_path)
    assert Path(victim.full_path).stat().st_size != len(original)

    def load() -> tuple[int, tuple[object, object, object]]:
        index = ColumnStatsIndex(w.table())
        stats = index.load()
        row = stats.filter(pc.equal(stats.column("path"), victim.path)).to_pylist()[0]
        return index.last.files_from_footers, (row["id::min"], row["id::max"], row["num_rows"])

    assert load() == (1, (777, 779, 3))
    assert load() == (0, (777, 779, 3))  # the newer row is found first: no second read
    Path(victim.full_path).write_bytes(original)
    reads, (lo, hi, _rows) = load()
    assert reads == 1 and (lo, hi) != (777, 779)
    assert load()[0] == 0


def test_corrupt_segment_is_rebuilt(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    good = ColumnStatsIndex(w.table()).load()
    (seg,) = _segments(w.base_path)
    seg.write_bytes(b"ARROW1 this is not an Arrow file ARROW1")
    index = ColumnStatsIndex(w.table())
    assert index.load().equals(good)
    assert (index.last.corrupt_segments, index.last.files_from_footers) == (1, 20)
    assert any("damaged index segment" in e for e in index.errors)
    assert not seg.exists() and len(_segments(w.base_path)) == 1


@pytest.mark.parametrize("tamper", ["metadata", "null_count", "missing_kind", "key_type"])
def test_tampered_segment_is_not_trusted(tmp_path: Path, tamper: str) -> None:
    w = _writer_table(tmp_path)
    good = ColumnStatsIndex(w.table()).load()
    (seg,) = _segments(w.base_path)
    t = segments.read_segment(seg)
    if tamper == "metadata":
        t = t.replace_schema_metadata({})
    elif tamper == "null_count":
        i = t.schema.get_field_index("id::null_count")
        t = t.set_column(i, "id::null_count", pa.array([10**6] * t.num_rows, pa.int64()))
    elif tamper == "missing_kind":
        t = t.drop_columns(["id::max_exact"])
    else:
        i = t.schema.get_field_index("file_size")
        t = t.set_column(i, "file_size", pc.cast(t.column("file_size"), pa.int32()))
    segments.write_segment(t, seg)
    index = ColumnStatsIndex(w.table())
    assert index.load().equals(good)
    assert index.last.corrupt_segments == 1 and index.last.files_from_footers == 20


def test_read_only_table_folder_is_bypassed(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    (w.base_path / ".hoodie" / ".hive_bridge").write_text("a file where the index folder would go")
    index = ColumnStatsIndex(w.table())
    stats = index.load()
    assert stats.num_rows == 20 and index.last.persisted is False and index.last.files_from_footers == 20
    assert index.load().equals(stats) and index.last.files_from_footers == 0  # kept in memory
    again = ColumnStatsIndex(w.table())
    assert again.load().equals(stats) and again.last.files_from_footers == 20


def test_damaged_base_file_gives_unknown_statistics(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    victim = w.table().latest_file_slices()[3].base_file
    assert victim is not None
    Path(victim.full_path).write_bytes(Path(victim.full_path).read_bytes()[:50])
    index = ColumnStatsIndex(w.table())
    stats = index.load()
    row = stats.filter(pc.equal(stats.column("path"), victim.path)).to_pylist()[0]
    assert row["num_rows"] is None and row["id::min"] is None and row["id::null_count"] is None
    assert index.last.unreadable_footers == 1 and any(victim.full_path in e for e in index.errors)
    others = stats.filter(pc.not_equal(stats.column("path"), victim.path))
    assert others.column("num_rows").null_count == 0
    # not persisted: tried again next time
    again = ColumnStatsIndex(w.table())
    again.load()
    assert again.last.files_from_footers == 1 and again.last.unreadable_footers == 1


def test_segments_are_compacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats_mod, "MAX_SEGMENTS", 2)
    w = _writer_table(tmp_path, n=8)
    index = ColumnStatsIndex(w.table())
    index.load()
    for k in range(4):
        w.upsert(pa.table({"id": pa.array([k], pa.int64()), "part": [k % 4], "name": [f"v{k}"]}))
        index.refresh()
        assert len(_segments(w.base_path)) <= 2
    seg_rows = sum(segments.read_segment(p).num_rows for p in _segments(w.base_path))
    live = len(w.table().latest_file_slices())
    fresh = ColumnStatsIndex(w.table())
    assert fresh.load().equals(index.table()) and fresh.last.files_from_footers == 0
    assert seg_rows <= live + 4


def test_compaction_writes_the_listing_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compacted index holds one row per latest base file, in the order the listing gives them (loads then
    find the statistics in their own order), and none of the replaced files' rows."""
    monkeypatch.setattr(stats_mod, "MAX_SEGMENTS", 1)
    w = _writer_table(tmp_path, n=8)
    ColumnStatsIndex(w.table()).load()
    for k in range(3):
        w.upsert(pa.table({"id": pa.array([k * 3], pa.int64()), "part": [k % 4], "name": [f"v{k}"]}))
    index = ColumnStatsIndex(w.table())
    index.load()  # reads the upserts' footers into a second segment: two segments > 1, compacted
    (seg,) = _segments(w.base_path)
    listing = [s.base_file.path for s in w.table().latest_file_slices() if s.base_file is not None]
    assert segments.read_segment(seg).column("path").to_pylist() == listing
    fresh = ColumnStatsIndex(w.table())
    assert fresh.load().equals(index.table()) and fresh.last.files_from_footers == 0


def test_parallel_and_serial_agree(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    serial = ColumnStatsIndex(w.table(), max_workers=1, persist=False).load()
    parallel = ColumnStatsIndex(w.table(), max_workers=4, persist=False).load()
    assert serial.equals(parallel) and serial.num_rows == 20
    assert not _segments(w.base_path)


def test_table_for_given_slices_keeps_their_order(tmp_path: Path) -> None:
    w = _writer_table(tmp_path)
    table = w.table()
    slices = list(reversed(table.latest_file_slices()))[:5]
    stats = ColumnStatsIndex(table).table(slices)
    assert stats.column("path").to_pylist() == [s.base_file.path for s in slices if s.base_file is not None]


def test_thousands_of_small_files(tmp_path: Path) -> None:
    n = 1000
    w = HudiWriter(tmp_path / "many", rows_per_file=1)
    w.insert(pa.table({"id": pa.array(range(n), pa.int64()), "s": [f"{i:05d}" for i in range(n)]}))
    table = w.table()
    slices = table.latest_file_slices()
    assert len(slices) == n
    stats = ColumnStatsIndex(table).load()
    assert stats.column("path").to_pylist() == [s.base_file.path for s in slices if s.base_file is not None]
    assert stats.column("id::min").equals(stats.column("id::max"))
    assert sorted(stats.column("id::min").to_pylist()) == list(range(n))
    assert set(stats.column("num_rows").to_pylist()) == {1}
    mins = stats.column("s::min").to_pylist()
    assert [int(v) for v in mins] == stats.column("id::min").to_pylist()


def test_empty_table(fixture_copy: Callable[[str], Path]) -> None:
    index = ColumnStatsIndex(HudiTable.open(fixture_copy("sample_table.cow.v8_empty")))
    stats = index.load()
    assert stats.num_rows == 0 and "id::min" in stats.column_names
    assert index.last.files_from_footers == 0


def test_fixture_copy_is_private(fixture_copy: Callable[[str], Path], fixture_tables: dict[str, Path]) -> None:
    shared = fixture_tables["sample_table.cow.v6_nonpartitioned"]
    before = _segments(shared)  # other tests may have indexed the shared copy; this one must not add to it
    path = fixture_copy("sample_table.cow.v6_nonpartitioned")
    assert not _segments(path)
    ColumnStatsIndex(HudiTable.open(path)).load()
    assert _segments(path) and _segments(shared) == before
    shutil.rmtree(path)


def test_path_only_partition_column_takes_its_declared_type(tmp_path: Path) -> None:
    create = '{"type"\\:"record","name"\\:"r","fields"\\:[{"name"\\:"id","type"\\:["long","null"]},' \
             '{"name"\\:"region","type"\\:["int","null"]}]}'
    path = _crafted(tmp_path, {"a": pa.table({"id": [1]})}, partition="region=7",
                    extra_props="hoodie.table.partition.fields=region\n"
                                "hoodie.datasource.write.drop.partition.columns=true\n"
                                f"hoodie.table.create.schema={create}\n")
    table = HudiTable.open(path)
    assert table.arrow_schema().field("region").type == pa.int32()
    assert table.latest_file_slices()[0].partition_values == {"region": "7"}
    assert "region::min" not in ColumnStatsIndex(table).load().column_names


def test_string_bounds_never_become_numeric_bounds(tmp_path: Path) -> None:
    # lexicographically "10" < "9": cast to numbers these would claim min 10 > max 9
    old = pa.table({"id": [1, 2], "c": ["10", "9"]})
    new = pa.table({"id": [3], "c": pa.array([5], pa.int64())})
    path = _crafted(tmp_path, {"old": old, "new": new}, instants={"new": "20240102000000000"})
    stats = ColumnStatsIndex(HudiTable.open(path)).load()
    o = _row(stats, "old")
    assert (o["c::min"], o["c::max"], o["c::min_exact"]) == (None, None, None)
    assert o["c::null_count"] == 0


def test_order_preserving_casts() -> None:
    ok = stats_rows.order_preserving_cast
    assert ok(pa.int32(), pa.int64()) and ok(pa.int64(), pa.float64()) and ok(pa.float32(), pa.float64())
    assert ok(pa.decimal128(5, 2), pa.decimal128(10, 2)) and ok(pa.date32(), pa.timestamp("us"))
    assert ok(pa.timestamp("ms", tz="UTC"), pa.timestamp("us", tz="UTC"))
    assert not ok(pa.timestamp("ms"), pa.timestamp("us", tz="UTC"))
    assert not ok(pa.string(), pa.int64()) and not ok(pa.int64(), pa.string())
    assert ok(pa.string(), pa.large_string()) and ok(pa.string(), pa.binary())
    assert not ok(pa.binary(), pa.string()) and not ok(pa.bool_(), pa.int8())


def test_byte_array_exactness_follows_the_writer(tmp_path: Path) -> None:
    # pyarrow writes these files: Arrow's writer never truncates string bounds (it drops long ones)
    data = pa.table({"id": [1, 2], "s": ["b", "a" * 10_000], "short": ["x", "y"], "bin": [b"\x00", b"\xff"]})
    path = _crafted(tmp_path, {"a": data})
    assert pq.read_metadata(next(path.glob("*.parquet"))).created_by.startswith("parquet-cpp-arrow")
    row = _row(ColumnStatsIndex(HudiTable.open(path)).load(), "a")
    assert (row["short::min"], row["short::max"], row["short::min_exact"], row["short::max_exact"]) == (
        "x", "y", True, True)
    assert (row["bin::min"], row["bin::max"], row["bin::min_exact"]) == (b"\x00", b"\xff", True)
    # the 10,000-character value made Arrow drop the bounds: unknown, never a truncated "exact" bound
    assert (row["s::min"], row["s::max"], row["s::min_exact"], row["s::null_count"]) == (None, None, None, 0)
    assert parquet_footer.writer_keeps_exact_bounds("parquet-mr version 1.13.1 (build x)") is True
    assert parquet_footer.writer_keeps_exact_bounds("parquet-rs version 53.0.0") is None
    assert parquet_footer.writer_keeps_exact_bounds(None) is None


def test_compaction_keeps_columns_outside_the_current_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats_mod, "MAX_SEGMENTS", 1)
    # `gone` exists in the first file only; the newest file (which defines the table schema) lacks it
    first = pa.table({"id": [1, 2], "gone": pa.array([7, 9], pa.int64())})
    path = _crafted(tmp_path, {"first": first})
    ColumnStatsIndex(HudiTable.open(path)).load()
    second_ts = "20240102000000000"
    (path / ".hoodie" / f"{second_ts}.commit").write_text(json.dumps({"partitionToWriteStats": {}}))
    pq.write_table(pa.table({"id": [3]}), path / f"second-0_0-0-0_{second_ts}.parquet")
    index = ColumnStatsIndex(HudiTable.open(path))
    index.load()  # two segments > MAX_SEGMENTS: compacted into one
    assert len(_segments(path)) == 1 and index.last.segments_written == 2
    # the column comes back in a newer file: the first file's `gone` statistics must still be its own
    third_ts = "20240103000000000"
    (path / ".hoodie" / f"{third_ts}.commit").write_text(json.dumps({"partitionToWriteStats": {}}))
    pq.write_table(pa.table({"id": [4], "gone": pa.array([1], pa.int64())}), path / f"third-0_0-0-0_{third_ts}.parquet")
    stats = ColumnStatsIndex(HudiTable.open(path)).load()
    row = _row(stats, "first")
    assert (row["gone::min"], row["gone::max"], row["gone::null_count"]) == (7, 9, 0)
    assert _row(stats, "second")["gone::null_count"] == 1


def test_file_rewritten_between_listing_and_indexing_is_unknown_and_not_stored(tmp_path: Path) -> None:
    """The listing keyed a file by its size; if the file read for its footer has another size, its statistics
    describe another file: the file is unknown now (kept by pruning) and nothing is stored under that key."""
    w = _writer_table(tmp_path)
    table = w.table()
    victim = table.latest_file_slices()[0].base_file  # listed (and sized) now
    assert victim is not None
    pq.write_table(pa.table({"id": pa.array([777, 778, 779], pa.int64()), "part": [0, 0, 0],
                             "name": ["z", "z", "z"]}), victim.full_path)
    index = ColumnStatsIndex(table)
    stats = index.load()
    assert any("changed while being indexed" in e for e in index.errors)
    row = stats.filter(pc.equal(stats.column("path"), victim.path)).to_pylist()[0]
    assert (row["id::min"], row["id::max"], row["id::null_count"], row["num_rows"]) == (None, None, None, None)
    again = ColumnStatsIndex(w.table())  # listed afresh: the new size, read from its footer
    row = again.load().filter(pc.equal(stats.column("path"), victim.path)).to_pylist()[0]
    assert (row["id::min"], row["id::max"], row["num_rows"]) == (777, 779, 3)
    assert again.last.files_from_footers == 1


def test_lookup_of_a_few_files_in_a_big_index_equals_the_plain_lookup() -> None:
    """The lookup of a few listed files in a big index (hashing the few, probing with the index's paths) gives
    each file the first index row of its path, used only when size and instant match, as the plain lookup."""
    import random

    from hive_bridge.stats.entries import IndexState, lookup_rows

    rnd = random.Random(3)
    state_paths = [f"p{rnd.randint(0, 400)}/f{rnd.randint(0, 60)}" for _ in range(2000)]  # repeated paths
    state = IndexState(paths=pa.array(state_paths), sizes=pa.array([rnd.randint(0, 2) for _ in state_paths], pa.int64()),
                   instants=pa.array([rnd.choice(["a", "b"]) for _ in state_paths]))
    for k in (1, 5, 30, 200):
        query = rnd.sample(sorted(set(state_paths)), k // 2) + [f"new/{i}" for i in range(k - k // 2)]
        paths = pa.array(query)
        sizes = pa.array([rnd.randint(0, 2) for _ in query], pa.int64())
        instants = pa.array([rnd.choice(["a", "b"]) for _ in query])
        got = lookup_rows(state, paths, sizes, instants).to_pylist()
        want = []
        for p, sz, ins in zip(query, sizes.to_pylist(), instants.to_pylist(), strict=True):
            first = state_paths.index(p) if p in state_paths else None
            ok = first is not None and state.sizes[first].as_py() == sz and state.instants[first].as_py() == ins
            want.append(first if ok else None)
        assert got == want, k
