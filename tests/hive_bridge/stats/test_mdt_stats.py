"""Statistics from the metadata table's column_stats partition: every row bounds its file's real values, pruning
with them never drops a slice holding a matching row, and files the metadata table does not describe fall back
to footers (or stay unknown with source="mdt")."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hive_bridge.formats.logfile import BlockType, data_block_table, read_log_file
from hive_bridge.mdt.records import ColumnStatsEntry
from hive_bridge.pruning import Pruner
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.mdt_rows import mdt_rows
from hive_bridge.table.table import HudiTable
from sarg import hiveql
from tests.conftest import FIXTURE_NAMES, SHARED_TABLES

#: the fixture tables with a metadata table holding column statistics (Lance tables: no base-file statistics)
MDT_TABLES = [n for n in (
    "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
    "sample_table.cow.v9_timebasedkeygen_epochmillis",
    "sample_table.cow.v9_timebasedkeygen_nonhivestyle",
    "sample_table.cow.v9_txns_simple_meta",
    "sample_table.cow.v9_txns_simple_overwrite",
    "sample_table.mor.avro.v9_nonpartitioned_rollback",
    "sample_table.mor.avro.v9_txns_nonpart_meta",
    "sample_table.mor.avro.v9_txns_simple_meta",
    "sample_table.mor.avro.v9_txns_simple_overwrite",
) if n in FIXTURE_NAMES]


def _has_mdt(root: Path) -> bool:
    return (root / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").is_file()


def _real(slice_file: Any, is_log: bool) -> pa.Table:
    if not is_log:
        return pq.read_table(slice_file.full_path)
    tables = [data_block_table(b) for b in read_log_file(slice_file.full_path).blocks
              if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)]
    return pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})


@pytest.mark.parametrize("name", MDT_TABLES)
def test_mdt_rows_bound_the_files_real_values(fixture_tables: dict[str, Path], name: str) -> None:
    root = fixture_tables[name]
    assert _has_mdt(root)
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    index = ColumnStatsIndex(table, persist=False, source="mdt")
    base_rows = index.table([s for s in slices if s.base_file is not None])
    log_rows = index.log_table(slices)
    assert index.counters.files_from_mdt + index.counters.log_files_from_mdt > 0, index.mdt_problems
    checked = 0
    files = [(s.base_file, False) for s in slices if s.base_file is not None] + \
        [(lf, True) for s in slices for lf in s.log_files]
    rows = base_rows.drop(["has_log_files"]).to_pylist() + log_rows.to_pylist()
    for (f, is_log), row in zip(files, rows, strict=True):
        assert row["path"] == f.path
        if row["num_rows"] is None:
            continue  # no entry: unknown (never guessed)
        data = _real(f, is_log)
        assert row["num_rows"] == data.num_rows, (f.path, row["num_rows"], data.num_rows)
        for col in data.column_names:
            if f"{col}::min" not in row:
                continue
            values = data.column(col)
            nulls = row[f"{col}::null_count"]
            if nulls is not None:
                assert nulls == values.null_count, (f.path, col)
            lo, hi = row[f"{col}::min"], row[f"{col}::max"]
            if lo is None:
                continue
            typ = base_rows.schema.field(f"{col}::min").type
            present = pc.drop_null(values.cast(typ))
            if len(present):
                mm = pc.min_max(present)
                assert pc.less_equal(pa.scalar(lo, typ), mm["min"]).as_py(), (f.path, col, lo, mm["min"])
                assert pc.greater_equal(pa.scalar(hi, typ), mm["max"]).as_py(), (f.path, col, hi, mm["max"])
                checked += 1
    assert checked > 0


def _entry(column: str, lo: Any, hi: Any, nulls: int | None = 0, values: int | None = 3,
           file_name: str = "f1_0-1-1_1.parquet", value_type: str | None = None) -> ColumnStatsEntry:
    return ColumnStatsEntry("", file_name, column, lo, hi, nulls, values, 10, False, False, value_type)


def test_mapping_distrusts_what_hudi_gets_wrong() -> None:
    keys = [("f1_0-1-1_1.parquet", "", 100, "1", "f1_0-1-1_1.parquet", False)]
    leaves = [("d", pa.float64()), ("s", pa.string()), ("t", pa.timestamp("ms", "UTC")), ("n", pa.int64()),
              ("absent", pa.int64()), ("raw", pa.timestamp("ms", "UTC")), ("other", pa.timestamp("us", "UTC"))]
    by_file = {("", "f1_0-1-1_1.parquet"): {
        "d": _entry("d", 0.0, 0.0),                 # apache/hudi#18754: a NaN made this 0.0..0.0
        "s": _entry("s", None, None, 3, 3),         # apache/hudi#18755: long strings "all null"
        "t": _entry("t", 1_500, 2_500, value_type="TIMESTAMP_MICROS"),  # micros: outward to milliseconds
        "raw": _entry("raw", 1_500, 2_500, value_type="LONG"),  # Hudi 1.0's V1 long: the column's unit (ms)
        "other": _entry("other", 1_500, 2_500, value_type="INT"),  # not a timestamp's type: unknown
        "n": _entry("n", 5, 7, None),               # no null count: unknown
    }}
    rows, found = mdt_rows(keys, by_file, leaves, appendable_logs=False)
    assert found == [True]
    row = rows.to_pylist()[0]
    assert row["num_rows"] == 3
    assert row["d::min"] is None and row["d::max"] is None and row["d::null_count"] == 0
    assert row["s::null_count"] is None
    assert row["t::min"] == dt.datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=dt.UTC)
    assert row["t::max"] == dt.datetime(1970, 1, 1, 0, 0, 0, 3000, tzinfo=dt.UTC)
    assert (row["n::min"], row["n::max"], row["n::null_count"]) == (5, 7, None)
    assert row["raw::min"] == dt.datetime(1970, 1, 1, 0, 0, 1, 500_000, tzinfo=dt.UTC)
    assert row["other::min"] is None and row["other::max"] is None
    assert row["absent::min"] is None and row["absent::null_count"] is None  # not indexed: unknown, not null


def test_log_entries_of_appendable_or_empty_logs_are_not_used() -> None:
    name = ".f1_1.log.1_0-1-1"
    keys = [(name, "", 100, "1", name, True)]
    by_file = {("", name): {"n": _entry("n", 1, 2, file_name=name)}}
    assert mdt_rows(keys, by_file, [("n", pa.int64())], appendable_logs=True)[1] == [False]
    assert mdt_rows(keys, by_file, [("n", pa.int64())], appendable_logs=False)[1] == [True]
    empty = {("", name): {"n": _entry("n", None, None, 0, 0, file_name=name)}}
    assert mdt_rows(keys, empty, [("n", pa.int64())], appendable_logs=False)[1] == [False]


def _literal(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "\\'") + "'"
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"DATE '{value.isoformat()}'"
    return None


def _filters(rows: pa.Table, table: HudiTable, mixed: set[str]) -> list[tuple[str, Callable[[pa.Table], pa.Array]]]:
    """Filters built from values the table really holds, with their row truth (columns whose type differs
    between files, `mixed`, are left out: their row truth needs Spark's casts)."""
    out: list[tuple[str, Callable[[pa.Table], pa.Array]]] = []
    schema = table.arrow_schema()
    for f in schema:
        if f.name in mixed:
            continue
        t = f.type
        if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_date32(t) or pa.types.is_boolean(t)):
            continue
        if f.name not in rows.column_names:
            continue
        values = [v for v in rows.column(f.name).to_pylist() if v is not None]
        if not values:
            continue
        picks = sorted(set(values))
        for v in {picks[0], picks[len(picks) // 2], picks[-1]}:
            lit = _literal(v)
            if lit is None:
                continue
            name = f.name

            def eq(r: pa.Table, name: str = name, v: Any = v) -> pa.Array:
                return pc.equal(r.column(name), pa.scalar(v, r.column(name).type))

            def lt(r: pa.Table, name: str = name, v: Any = v) -> pa.Array:
                return pc.less(r.column(name), pa.scalar(v, r.column(name).type))

            def gt(r: pa.Table, name: str = name, v: Any = v) -> pa.Array:
                return pc.greater(r.column(name), pa.scalar(v, r.column(name).type))

            def ne(r: pa.Table, name: str = name, v: Any = v) -> pa.Array:
                return pc.not_equal(r.column(name), pa.scalar(v, r.column(name).type))

            out += [(f"`{name}` = {lit}", eq), (f"`{name}` < {lit}", lt), (f"`{name}` > {lit}", gt),
                    (f"NOT (`{name}` = {lit})", ne)]
        lo, hi = _literal(picks[0]), _literal(picks[-1])
        if lo is not None and hi is not None and not pa.types.is_boolean(t):
            name = f.name
            a, b = picks[0], picks[len(picks) // 2]

            def between(r: pa.Table, name: str = name, a: Any = a, b: Any = b) -> pa.Array:
                col = r.column(name)
                return pc.and_(pc.greater_equal(col, pa.scalar(a, col.type)), pc.less_equal(col, pa.scalar(b, col.type)))

            def in_(r: pa.Table, name: str = name, a: Any = a, b: Any = picks[-1]) -> pa.Array:
                return pc.is_in(r.column(name), value_set=pa.array([a, b], r.column(name).type))

            def is_null(r: pa.Table, name: str = name) -> pa.Array:
                return pc.is_null(r.column(name))

            out += [(f"`{name}` BETWEEN {_literal(a)} AND {_literal(b)}", between),
                    (f"`{name}` IN ({lo}, {hi})", in_), (f"`{name}` IS NULL", is_null)]
    return out


def _merged(root: Path, s: Any) -> pa.Table | None:
    import hudi

    try:
        reader = hudi.HudiTableBuilder.from_base_uri(str(root)).build().create_file_group_reader_with_options()
        out = reader.read_file_slice_from_paths(s.base_file.path if s.base_file else "",
                                                [lf.path for lf in s.log_files])
    except BaseException as exc:  # hudi-rs panics on some tables
        if isinstance(exc, KeyboardInterrupt):
            raise
        return None
    batches = out if isinstance(out, list) else [out]
    return pa.Table.from_batches(batches) if batches else None


@pytest.mark.parametrize("name", MDT_TABLES)
def test_pruning_with_mdt_statistics_keeps_every_matching_slice(fixture_tables: dict[str, Path], name: str) -> None:
    root = fixture_tables[name]
    table = HudiTable.open(root)
    slices = table.latest_file_slices()
    merged = {s.file_id: _merged(root, s) for s in slices}
    known = [m for m in merged.values() if m is not None and m.num_rows]
    if not known:
        pytest.skip(f"{name}: hudi-rs reads no slice")
    rows = pa.concat_tables(known, promote_options="permissive")
    schema = {f.name: t for f, t in zip(table.arrow_schema(), _hive_types(table), strict=True)}
    dropped = 0
    base_rows = {s.file_id: pq.read_table(s.base_file.full_path) for s in slices
                 if s.base_file is not None and s.base_file.path.endswith(".parquet")}
    types: dict[str, set[str]] = {}
    for m in [*known, *base_rows.values()]:
        for fld in m.schema:
            types.setdefault(fld.name, set()).add(str(fld.type))
    filters = _filters(rows, table, {c for c, ts in types.items() if len(ts) > 1})
    assert filters
    pruners = {(source, qt): Pruner(table, ColumnStatsIndex(table, persist=False, source=source), slices, qt)
               for source in ("mdt", "auto") for qt in ("snapshot", "read_optimized")}
    for text, truth in filters:
        s = hiveql.parse_hiveql(text, schema)
        for (source, qt), pruner in pruners.items():
            listing = pruner.run(s)
            kept = {x.file_id for x in listing.slices}
            rows_of = merged if qt == "snapshot" else base_rows
            for fid, m in rows_of.items():
                if m is not None and m.num_rows and pc.any(pc.fill_null(truth(m), False)).as_py():
                    assert fid in kept, (name, source, qt, text, fid)
            dropped += len(slices) - len(kept)
    assert dropped > 0


def _hive_types(table: HudiTable) -> list[str]:
    from hive_bridge.filters.typemap import table_sarg_schema

    sarg_schema = table_sarg_schema(table)
    return [sarg_schema.get(f.name, "string") for f in table.arrow_schema()]


def test_a_damaged_metadata_table_falls_back_to_footers(fixture_copy: Callable[[str], Path]) -> None:
    """A truncated column_stats HFile: nothing is taken from the metadata table, every file's statistics come
    from its footer, the problem is reported, and pruning is the footers' pruning."""
    name = "sample_table.cow.v9_txns_simple_meta"
    if name not in FIXTURE_NAMES:
        pytest.skip(f"{name} not in {SHARED_TABLES}")
    root = fixture_copy(name)
    good = ColumnStatsIndex(HudiTable.open(root), persist=False)
    good.table()
    assert good.counters.files_from_mdt > 0
    for hfile in (root / ".hoodie" / "metadata" / "column_stats").glob("*.hfile"):
        data = hfile.read_bytes()
        hfile.write_bytes(data[: len(data) // 2])
    table = HudiTable.open(root)
    index = ColumnStatsIndex(table, persist=False)
    stats = index.table()
    assert index.counters.files_from_mdt == 0 and index.counters.files_from_footers == stats.num_rows
    assert index.mdt_problems
    footers = ColumnStatsIndex(table, persist=False, source="footers").table()
    assert stats.drop(["path"]).equals(footers.drop(["path"]))
