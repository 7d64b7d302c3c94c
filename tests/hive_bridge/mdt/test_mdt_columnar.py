"""The metadata table's column statistics decoded column by column equal the record-by-record path's rows, on
every fixture table with a metadata table and on generated ones (every column type the index handles); the
column decoder equals fastavro on random records and refuses malformed ones; decoded sources are cached by the
identity of their file."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.formats.avro_columns import AvroColumnsError, decode_values
from hive_bridge.mdt import colstats
from hive_bridge.mdt.colstats import read_column_stats
from hive_bridge.mdt.keys import COLUMN_STATS
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.mdt_rows import index_entries, mdt_rows, mdt_rows_columnar
from hive_bridge.stats.rows import leaf_pairs
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import write_metadata_table
from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.stats.test_mdt_stats import MDT_TABLES


def entry_keys(table: HudiTable) -> list[tuple[str, str, int, str, str, bool]]:
    out = []
    for s in table.latest_file_slices():
        if s.base_file is not None:
            bf = s.base_file
            out.append((bf.path, s.partition_path, bf.size, s.base_instant, bf.path.rpartition("/")[2], False))
        for lf in s.log_files:
            out.append((lf.path, s.partition_path, lf.size, lf.instant, lf.name, True))
    return out


def _both(root: Path) -> list[tuple[pa.Table, pa.Table, list[bool], list[bool]]]:
    """(columnar rows, record rows, columnar found, record found) for appendable logs False and True."""
    table = HudiTable.open(root)
    mdt = table.metadata_table()
    assert COLUMN_STATS in mdt.status.partitions, mdt.status
    index = ColumnStatsIndex(table, persist=False)
    leaves = leaf_pairs(index.target_leaves())
    names = [name for name, _ in leaves]
    keys = entry_keys(table)
    columnar = read_column_stats(mdt, names)
    records = index_entries(mdt.column_stats(names))
    out = []
    for appendable in (False, True):
        a, fa = mdt_rows_columnar(keys, columnar, leaves, appendable)
        b, fb = mdt_rows(keys, records, leaves, appendable)
        out.append((a, b, fa, fb))
    return out


def _assert_same(a: pa.Table, b: pa.Table, fa: list[bool], fb: list[bool]) -> None:
    assert fa == fb
    assert a.schema == b.schema
    for name in a.column_names:
        assert a.column(name).to_pylist() == b.column(name).to_pylist(), name


@pytest.mark.parametrize("name", MDT_TABLES)
def test_fixture_tables_same_rows_as_the_record_path(fixture_tables: dict[str, Path], name: str) -> None:
    colstats.clear_cache()
    results = _both(fixture_tables[name])
    for a, b, fa, fb in results:
        _assert_same(a, b, fa, fb)
    assert any(results[0][2]), "the metadata table described no file"


SCHEMA = {"id": "bigint", "small": "int", "name": "string", "raw": "binary", "value": "double", "flag": "boolean",
          "amount": "decimal(14,2)", "day": "date", "ts": "timestamp", "part": "string"}


def _rows(ids: list[int], tag: str) -> pa.Table:
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "small": pa.array([None if i % 7 == 0 else i % 1000 - 500 for i in ids], pa.int32()),
        "name": pa.array([None if i % 5 == 0 else f"{tag}-{i:06d}-é" for i in ids], pa.string()),
        "raw": pa.array([bytes([i % 256, 0, 255]) for i in ids], pa.binary()),
        "value": pa.array([float("nan") if i % 11 == 0 else i * -0.5 for i in ids], pa.float64()),
        "flag": pa.array([i % 2 == 0 for i in ids], pa.bool_()),
        "amount": pa.array([Decimal(i) / 100 - 3 for i in ids], pa.decimal128(14, 2)),
        "day": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i) for i in ids], pa.date32()),
        "ts": pa.array([base + dt.timedelta(seconds=i * 37, microseconds=i) for i in ids],
                       pa.timestamp("us", tz="UTC")),
        "part": pa.array([f"p{i % 3}" for i in ids], pa.string()),
    })


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("mdt_columnar")
    cow = base / "cow"
    w = HudiWriter(cow, version=8, partition_fields=["part"], rows_per_file=9)
    w.insert(_rows(list(range(0, 120)), "a"))
    w.upsert(_rows(list(range(10, 40)), "b"))
    write_metadata_table(cow)
    mor = base / "mor"
    w = HudiWriter(mor, version=8, table_type="MERGE_ON_READ", partition_fields=["part"], rows_per_file=11,
                   precombine_field="id")
    w.insert(_rows(list(range(0, 90)), "a"))
    w.upsert(_rows(list(range(5, 40, 2)), "u"))
    w.upsert(_rows([1, 2, 3, 200], "v"), block_format="parquet")
    write_metadata_table(mor, log_files=True)
    return {"cow": cow, "mor": mor}


@pytest.mark.parametrize("name", ["cow", "mor"])
def test_generated_tables_same_rows_as_the_record_path(generated: dict[str, Path], name: str) -> None:
    colstats.clear_cache()
    results = _both(generated[name])
    for a, b, fa, fb in results:
        _assert_same(a, b, fa, fb)
    a = results[0][0]
    assert a.num_rows > 0
    # every column type got usable bounds somewhere (floats never: see mdt_stats)
    for column in ("id", "small", "name", "raw", "flag", "amount", "day", "ts"):
        assert a.column(f"{column}::min").null_count < a.num_rows, column
    assert a.column("value::min").null_count == a.num_rows


def test_the_index_takes_the_columnar_path_and_caches_it(generated: dict[str, Path]) -> None:
    colstats.clear_cache()
    root = generated["cow"]
    rows = []
    for _ in range(2):
        table = HudiTable.open(root)
        index = ColumnStatsIndex(table, persist=False, source="mdt")
        rows.append(index.table())
        assert index.metadata_entry_table() is not None
        assert index.last.files_from_mdt == len(table.latest_file_slices())
    assert rows[0].equals(rows[1])
    cached = len(colstats._cache)
    assert cached >= 1
    # a third query decodes nothing new: the cache holds the same sources
    table = HudiTable.open(root)
    ColumnStatsIndex(table, persist=False, source="mdt").table()
    assert len(colstats._cache) == cached
    reference = ColumnStatsIndex(HudiTable.open(root), persist=False, source="mdt")
    reference.mdt_decoder = "records"
    assert reference.table().equals(rows[0])


# ------------------------------------------------------------------------------------------ the decoder

_WRAPPERS = ["IntW", "LongW", "StrW", "DblW", "BoolW", "BytesW", "FltW"]
DECODER_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "Rec", "namespace": "t", "fields": [
        {"name": "key", "type": "string"},
        {"name": "n", "type": ["null", "long"]},
        {"name": "i", "type": "int"},
        {"name": "flag", "type": "boolean"},
        {"name": "inner", "type": ["null", {"type": "record", "name": "Inner", "fields": [
            {"name": "name", "type": ["null", "string"]},
            {"name": "bound", "type": ["null",
                                       {"type": "record", "name": "IntW", "fields": [{"name": "value", "type": "int"}]},
                                       {"type": "record", "name": "LongW", "fields": [{"name": "value", "type": "long"}]},
                                       {"type": "record", "name": "StrW", "fields": [{"name": "value", "type": "string"}]},
                                       {"type": "record", "name": "DblW", "fields": [{"name": "value", "type": "double"}]},
                                       {"type": "record", "name": "BoolW", "fields": [{"name": "value", "type": "boolean"}]},
                                       {"type": "record", "name": "BytesW", "fields": [{"name": "value", "type": "bytes"}]},
                                       {"type": "record", "name": "FltW", "fields": [{"name": "value", "type": "float"}]},
                                       ]},
            {"name": "other", "type": ["null", "t.IntW"]},
        ]}]},
        {"name": "fx", "type": {"type": "fixed", "name": "F3", "size": 3}},
        {"name": "tail", "type": "double"},
    ]}

_value = {
    "IntW": st.integers(-2**31, 2**31 - 1), "LongW": st.integers(-2**63, 2**63 - 1),
    "StrW": st.text(max_size=20), "DblW": st.floats(allow_nan=False, width=64), "BoolW": st.booleans(),
    "BytesW": st.binary(max_size=20), "FltW": st.floats(allow_nan=False, width=32),
}
_bound = st.one_of(st.none(), *[st.tuples(st.just(w), _value[w]) for w in _WRAPPERS])
_record = st.fixed_dictionaries({
    "key": st.text(max_size=30), "n": st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)),
    "i": st.integers(-2**31, 2**31 - 1), "flag": st.booleans(),
    "inner": st.one_of(st.none(), st.fixed_dictionaries({
        "name": st.one_of(st.none(), st.text(max_size=10)), "bound": _bound,
        "other": st.one_of(st.none(), st.integers(-5, 5))})),
    "fx": st.binary(min_size=3, max_size=3), "tail": st.floats(allow_nan=False),
})


def _encode(rec: dict[str, Any]) -> bytes:
    schema = fastavro.parse_schema(DECODER_SCHEMA)
    datum = dict(rec)
    if rec["inner"] is not None:
        inner = dict(rec["inner"])
        b = inner["bound"]
        inner["bound"] = None if b is None else (f"t.{b[0]}", {"value": b[1]})
        inner["other"] = None if inner["other"] is None else ("t.IntW", {"value": inner["other"]})
        datum["inner"] = inner
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schema, datum)
    return buf.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_record, min_size=1, max_size=25))
def test_decoder_equals_fastavro(records: list[dict[str, Any]]) -> None:
    import json

    values = [_encode(r) for r in records]
    d = decode_values(values, json.dumps(DECODER_SCHEMA))
    n = len(records)
    assert d.binary(("key",), True).to_pylist() == [r["key"] for r in records]
    vals, ok = d.full(("n", "long"), np.int64, 0)
    assert [int(v) if o else None for v, o in zip(vals, ok, strict=True)] == [r["n"] for r in records]
    assert d.full(("i",), np.int64, 0)[0].tolist() == [r["i"] for r in records]
    assert d.full(("flag",), np.int64, 0)[0].astype(bool).tolist() == [r["flag"] for r in records]
    assert d.binary(("fx",), False).to_pylist() == [r["fx"] for r in records]
    assert d.full(("tail",), np.float64, 0)[0].tolist() == [r["tail"] for r in records]
    inner = ("inner", "Inner")
    names = d.binary((*inner, "name", "string"), True).to_pylist()
    assert names == [None if r["inner"] is None else r["inner"]["name"] for r in records]
    branch = d.branches.get((*inner, "bound"), np.full(n, -1))
    for j, r in enumerate(records):
        b = None if r["inner"] is None else r["inner"]["bound"]
        if r["inner"] is None:
            assert branch[j] == -1
            continue
        if b is None:
            assert branch[j] == 0
            continue
        wrapper, expected = b
        assert branch[j] == _WRAPPERS.index(wrapper) + 1
        path = (*inner, "bound", wrapper, "value")
        if wrapper in ("StrW", "BytesW"):
            got = d.binary(path, wrapper == "StrW").to_pylist()[j]
        else:
            got = d.full(path, np.float64 if wrapper in ("DblW", "FltW") else np.int64, 0)[0][j]
            got = bool(got) if wrapper == "BoolW" else got
        assert got == expected


@settings(max_examples=60, deadline=None)
@given(_record, st.data())
def test_decoder_refuses_damaged_values(record: dict[str, Any], data: st.DataObject) -> None:
    import json

    good = _encode(record)
    cut = data.draw(st.integers(0, len(good) - 1))
    damaged = good[:cut] if data.draw(st.booleans()) else good + b"\x00"
    with pytest.raises(AvroColumnsError):
        decode_values([damaged], json.dumps(DECODER_SCHEMA))


def test_a_map_value_is_left_to_the_record_path() -> None:
    import json

    schema = {"type": "record", "name": "M", "fields": [{"name": "m", "type": ["null", {"type": "map",
                                                                                        "values": "long"}]}]}
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), {"m": {"a": 1}})
    with pytest.raises(AvroColumnsError, match="map"):
        decode_values([buf.getvalue()], json.dumps(schema))
    empty = io.BytesIO()
    fastavro.schemaless_writer(empty, fastavro.parse_schema(schema), {"m": None})
    assert decode_values([empty.getvalue()], json.dumps(schema)).branches[("m",)].tolist() == [0]




# ------------------------------------------------------------------------------------------ merging log blocks


def _append_column_stats_blocks(root: Path) -> dict[str, str]:
    """Append to the first column_stats file group's log: an HFILE_DATA block re-writing some keys (an untight
    wider range with counts to add, a tight replacement, a tombstone, a brand-new key copied from another file
    group's record under a new file name) and a DELETE block of one key. Returns what happened to which key."""
    import copy

    from hive_bridge.formats.hfile.reader import HFileReader
    from hive_bridge.formats.logfile import BlockType, HeaderKey
    from hive_bridge.mdt.keys import column_stats_key
    from hive_bridge.testing.hfile_writer import write_hfile
    from hive_bridge.testing.logfile_writer import delete_block_content, encode_block

    cs = root / ".hoodie" / "metadata" / COLUMN_STATS
    base = sorted(cs.glob("col-stats-0000-0_*.hfile"))[0]
    log = sorted(cs.glob(".col-stats-0000-0_*.log.*"))[0]
    reader = HFileReader.open(str(base))
    schema_json = reader.avro_schema
    assert schema_json is not None
    parsed = fastavro.parse_schema(__import__("json").loads(schema_json))
    entries = list(reader.entries())

    def decode(v: bytes) -> dict[str, Any]:
        return fastavro.schemaless_reader(io.BytesIO(v), parsed, None, return_record_name=True,
                                          return_record_name_override=True)

    def encode(rec: dict[str, Any]) -> bytes:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, rec)
        return buf.getvalue()

    by_column: dict[str, list[tuple[bytes, dict[str, Any]]]] = {}
    for k, v in entries:
        rec = decode(v)
        by_column.setdefault(rec["ColumnStatsMetadata"]["columnName"], []).append((k, rec))
    ids = by_column["id"]
    names = by_column["name"]
    fate: dict[str, str] = {}
    new: dict[bytes, bytes] = {}
    # untight, wider: min/max widen, counts add
    k, rec = ids[0]
    r = copy.deepcopy(rec)
    s = r["ColumnStatsMetadata"]
    s["minValue"] = (s["minValue"][0], {"value": s["minValue"][1]["value"] - 1000})
    s["maxValue"] = (s["maxValue"][0], {"value": s["maxValue"][1]["value"] - 1})   # narrower: kept wider
    s["isTightBound"] = False
    new[k] = encode(r)
    fate[k.decode()] = "widened"
    # tight replacement of a string column's entry
    k, rec = names[0]
    r = copy.deepcopy(rec)
    s = r["ColumnStatsMetadata"]
    s["minValue"] = (s["minValue"][0], {"value": "zzz-a"}) if s["minValue"] else None
    s["maxValue"] = (s["maxValue"][0], {"value": "zzz-b"}) if s["maxValue"] else None
    s["isTightBound"] = True
    new[k] = encode(r)
    fate[k.decode()] = "replaced"
    # tombstone
    k, rec = ids[1]
    r = copy.deepcopy(rec)
    r["ColumnStatsMetadata"]["isDeleted"] = True
    new[k] = encode(r)
    fate[k.decode()] = "deleted"
    # a new key: a copy of an entry under another file name in the same partition
    k, rec = ids[2]
    r = copy.deepcopy(rec)
    s = r["ColumnStatsMetadata"]
    s["fileName"] = "0000aaaa-0000-0000-0000-000000000000-0_0-0-0_20990101000000000.parquet"
    newkey = column_stats_key("id", _partition_of(root, rec), s["fileName"]).encode()
    new[newkey] = encode(r)
    fate[newkey.decode()] = "added"
    # a DELETE block removes another key
    gone = ids[3][0].decode()
    fate[gone] = "delete block"
    instant = "00000000000000001"
    hfile = write_hfile(sorted(new.items()))
    block = encode_block(BlockType.HFILE_DATA, {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json},
                         hfile)
    delete = encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant},
                          delete_block_content([(gone, "", None)]))
    with open(log, "ab") as f:
        f.write(block)
        f.write(delete)
    return fate


def records_by_key(records: list[Any]) -> dict[str, Any]:
    from hive_bridge.mdt.keys import column_stats_key

    return {column_stats_key(e.column, e.partition or ".", e.file_name): e for e in records}


def _partition_of(root: Path, rec: dict[str, Any]) -> str:
    name = rec["ColumnStatsMetadata"]["fileName"]
    found = [p for p in root.rglob(name) if ".hoodie" not in p.parts]
    assert found, name
    rel = found[0].parent.relative_to(root).as_posix()
    return "." if rel == "." else rel


def test_log_blocks_merge_as_the_record_path_merges(tmp_path: Path) -> None:
    root = tmp_path / "t"
    w = HudiWriter(root, version=8, partition_fields=["part"], rows_per_file=9)
    w.insert(_rows(list(range(0, 150)), "a"))
    write_metadata_table(root, file_groups={COLUMN_STATS: 1})
    fate = _append_column_stats_blocks(root)
    colstats.clear_cache()
    table = HudiTable.open(root)
    mdt = table.metadata_table()
    assert COLUMN_STATS in mdt.status.partitions, mdt.status.problems
    names = [n for n, _ in leaf_pairs(ColumnStatsIndex(table, persist=False).target_leaves())]
    columnar = read_column_stats(mdt, names)
    records = mdt.column_stats(names)
    keys = set(columnar.column("key").to_pylist())
    for key, what in fate.items():
        assert (key in keys) == (what in ("widened", "replaced", "added")), (key, what)
    assert columnar.num_rows == len(records)
    by_key = {r["key"]: r for r in columnar.to_pylist()}
    widened = next(k for k, v in fate.items() if v == "widened")
    original = next(r for k, r in records_by_key(records).items() if k == widened)
    assert by_key[widened]["lo_int"] == original.min
    for a, b, fa, fb in _both(root):
        _assert_same(a, b, fa, fb)


# ------------------------------------------------------------------------- columns read when first needed

LAZY_FILTERS = [
    ("id", "leaf-(BETWEEN id 20 30)"),
    ("name", "leaf-(LESS_THAN name a-000015)"),
    ("amount", "(not leaf-(LESS_THAN_EQUALS amount 0.5))"),
    ("day", "leaf-(LESS_THAN_EQUALS day 2020-01-20)"),
    ("ts", "leaf-(LESS_THAN ts 2024-01-01T00:10:00)"),
    ("small", "(not leaf-(IS_NULL small))"),
    ("id", "(or leaf-(EQUALS id 3) leaf-(EQUALS id 77))"),
]


def _kept_files(result: Any) -> list[tuple[str, str]]:
    return sorted((s.partition_path, s.file_id) for s in result.slices)


@pytest.mark.parametrize("name", ["cow", "mor"])
@pytest.mark.parametrize("query_type", ["snapshot", "read_optimized"])
def test_a_lazy_index_reads_each_column_when_a_filter_first_needs_it(generated: dict[str, Path], name: str,
                                                                    query_type: str) -> None:
    """An index told which columns the first query filters on decodes only those columns' metadata-table
    entries; a later filter on another column has that column's entries read into the same rows, and every
    filter keeps exactly what an index that read every column keeps (base files and log files)."""
    from hive_bridge.pruning.pruner import Pruner

    colstats.clear_cache()
    root = generated[name]
    eager_table = HudiTable.open(root)
    eager_index = ColumnStatsIndex(eager_table, persist=False, source="mdt")
    eager = Pruner(eager_table, eager_index, eager_table.latest_file_slices(), query_type)
    assert eager_index.mdt_columns_read == frozenset(leaf.name for leaf in eager_index.target_leaves())
    table = HudiTable.open(root)
    index = ColumnStatsIndex(table, persist=False, source="mdt")
    index.want({"id"})
    lazy = Pruner(table, index, table.latest_file_slices(), query_type)
    assert index.mdt_columns_read == frozenset({"id"})
    assert lazy.stats_all.column("name::min").null_count == lazy.stats_all.num_rows
    read = {"id"}
    pruned_somewhere = 0
    for column, text in LAZY_FILTERS:
        filt = sarg.parse(text, SCHEMA)
        got = lazy.run(filt)
        want = eager.run(filt)
        read.add(column)
        assert index.mdt_columns_read == frozenset(read), text
        assert _kept_files(got) == _kept_files(want), text
        assert got.kept_unknown == want.kept_unknown, text
        pruned_somewhere += len(got.slices) < got.files_total
    assert pruned_somewhere >= 4
    assert lazy.stats_sources == eager.stats_sources
    assert lazy.stats_sources.get("metadata table", 0) > 0
    # the rows now hold the columns read, as the eager index's do
    for column in read:
        assert lazy.stats_all.column(f"{column}::min").to_pylist() == \
            eager.stats_all.column(f"{column}::min").to_pylist(), column


def test_two_pruners_of_one_lazy_index_see_what_either_read(generated: dict[str, Path]) -> None:
    """A snapshot's two query types share one index: a column read for one is used by the other's next query
    (its statistics are made again from the index), which then prunes by it."""
    from hive_bridge.pruning.pruner import Pruner

    colstats.clear_cache()
    table = HudiTable.open(generated["mor"])
    index = ColumnStatsIndex(table, persist=False, source="mdt")
    index.want({"id"})
    ro = Pruner(table, index, table.latest_file_slices(), "read_optimized")
    snap = Pruner(table, index, table.latest_file_slices(), "snapshot")
    filt = sarg.parse("leaf-(LESS_THAN name a-000015)", SCHEMA)
    before = ro.stats_all.column("name::min").null_count
    snap.run(filt)
    assert "name" in (index.mdt_columns_read or ())
    assert ro.stats_all.column("name::min").null_count == before      # not made again until it is used
    got = ro.run(filt)
    assert ro.stats_all.column("name::min").null_count < before
    eager_index = ColumnStatsIndex(HudiTable.open(generated["mor"]), persist=False, source="mdt")
    want = Pruner(eager_index.hudi_table, eager_index, eager_index.hudi_table.latest_file_slices(),
                  "read_optimized").run(filt)
    assert _kept_files(got) == _kept_files(want)
    assert len(got.slices) < got.files_total


def test_a_column_read_later_is_unknown_where_its_entry_disagrees() -> None:
    """Rows made from the metadata table get a later column's bounds only where its entry counts as many
    values as the row: a file without an entry, or with another count, keeps that column unknown."""
    from hive_bridge.stats.entries import with_leaves

    def rows(paths: list[str], counts: list[int], lo: list[int | None]) -> pa.Table:
        return pa.table({"path": paths, "num_rows": pa.array(counts, pa.int64()),
                         "x::min": pa.array(lo, pa.int64()), "x::max": pa.array(lo, pa.int64()),
                         "x::null_count": pa.array([0 if v is not None else None for v in lo], pa.int64()),
                         "x::min_exact": pa.array([True if v is not None else None for v in lo], pa.bool_()),
                         "x::max_exact": pa.array([True if v is not None else None for v in lo], pa.bool_())})

    old = rows(["a", "b", "c", "d"], [10, 10, 10, 10], [None] * 4)
    fresh = rows(["d", "b", "c"], [10, 10, 9], [4, 2, 3])
    out = with_leaves(old, fresh, ["x"])
    assert out.column("x::min").to_pylist() == [None, 2, None, 4]
    assert out.column("x::null_count").to_pylist() == [None, 0, None, 0]
    assert out.column("x::max_exact").to_pylist() == [None, True, None, True]
    assert out.column("num_rows").to_pylist() == [10, 10, 10, 10]


def test_a_snapshot_decodes_only_the_columns_its_queries_filter_on(generated: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """The product's path (a process's table snapshot, statistics from the metadata table where it has them):
    the first query decodes its filter's column only, nothing partial is persisted, a query on another column
    decodes that one, and each keeps what an index of every column keeps."""
    import shutil

    from hive_bridge.pruning.pruner import Pruner
    from hive_bridge.pruning.snapshot import SnapshotCache

    colstats.clear_cache()
    root = tmp_path / "t"
    shutil.copytree(generated["cow"], root)
    snap = SnapshotCache().get(str(root), listing="mdt", stats_source="auto", persist=True)
    assert snap.table.listing_source == "mdt"
    fresh = HudiTable.open(root)
    eager = Pruner(fresh, ColumnStatsIndex(fresh, persist=False), fresh.latest_file_slices())   # every column
    for i, (_, text) in enumerate(LAZY_FILTERS[:3]):
        filt = sarg.parse(text, SCHEMA)
        got = snap.plan(filt)
        assert snap.index.mdt_columns_read == frozenset(c for c, _ in LAZY_FILTERS[:i + 1]), text
        want = eager.run(filt)
        assert _kept_files(got) == _kept_files(want), text
        assert got.stats_sources == {"metadata table": got.files_total}, got.stats_sources
    assert snap.index.counters.segments_written == 0
    assert not list((root / ".hoodie" / ".hive_bridge").glob("**/seg-*"))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=120), st.lists(st.tuples(st.integers(0, 130), st.integers(0, 40), st.booleans()),
                                         max_size=25), st.booleans())
def test_gathered_byte_ranges_equal_slicing(data: bytes, ranges: list[tuple[int, int, bool]], string: bool) -> None:
    """The byte ranges gathered through Arrow binary views (inline up to 12 bytes, else by offset) are the
    slices of the buffer; nulls where not valid; a range that is not UTF-8 refused for a string array."""
    from hive_bridge.formats.avro_columns import gather_binary

    buf = np.frombuffer(data, dtype=np.uint8)
    spans = [(min(s, len(data)), min(n, len(data) - min(s, len(data))), ok) for s, n, ok in ranges]
    starts = np.array([s for s, _, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n, _ in spans], dtype=np.int64)
    valid = np.array([ok for _, _, ok in spans], dtype=bool)
    want = [data[s:s + n] if ok else None for s, n, ok in spans]
    if string and any(w is not None and not _utf8(w) for w in want):
        with pytest.raises(ValueError, match="not UTF-8"):
            gather_binary(buf, starts, lengths, True, valid)
        return
    got = gather_binary(buf, starts, lengths, string, valid).to_pylist()
    assert [g.encode() if isinstance(g, str) else g for g in got] == want


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_queries_on_different_columns_at_once(generated: dict[str, Path], tmp_path: Path) -> None:
    """Three threads plan filters on different columns through one snapshot of a never-indexed table at the
    same time (each column's entries read by whichever query needs it first): every answer is what an index
    of every column gives."""
    import shutil
    import threading

    from hive_bridge.pruning.pruner import Pruner
    from hive_bridge.pruning.snapshot import SnapshotCache

    colstats.clear_cache()
    root = tmp_path / "t"
    shutil.copytree(generated["mor"], root)
    fresh = HudiTable.open(root)
    filters = [sarg.parse(text, SCHEMA) for _, text in LAZY_FILTERS]
    want = {}
    for qt in ("snapshot", "read_optimized"):
        eager = Pruner(fresh, ColumnStatsIndex(fresh, persist=False), fresh.latest_file_slices(), qt)
        want[qt] = [_kept_files(eager.run(f)) for f in filters]
    cache = SnapshotCache()
    errors: list[BaseException] = []

    def run(offset: int) -> None:
        try:
            for k in range(len(filters)):
                i = (k + offset) % len(filters)
                qt = ("snapshot", "read_optimized")[(k + offset) % 2]
                got = cache.get(str(root), listing="mdt", persist=False).plan(filters[i], query_type=qt)
                assert _kept_files(got) == want[qt][i], (offset, LAZY_FILTERS[i], qt)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(k * 2,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert cache.stats.opened == 1
    snap = cache.get(str(root), listing="mdt", persist=False)
    assert snap.index.mdt_columns_read == frozenset(c for c, _ in LAZY_FILTERS)
