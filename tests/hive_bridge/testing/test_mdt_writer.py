"""The test-only metadata table writer: what it writes is read back as Hudi's own MDT is -- available, not
lagging, files equal to the committed files in the folders, column stats equal to the files' real values -- and
hudi-rs lists the same slices through it (the issue's condition for using it on large synthetic tables)."""

from __future__ import annotations

import datetime as dt
import json
import os
import zipfile
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import sarg
from hive_bridge.errors import HudiTableError
from hive_bridge.formats.hfile.reader import HFileReader
from hive_bridge.formats.logfile import BlockType, data_block_table, read_log_file
from hive_bridge.mdt.keys import COLUMN_STATS, FILES, PARTITION_STATS
from hive_bridge.mdt.table import MetadataTable
from hive_bridge.pruning import Pruner
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.mdt_writer import (
    MetadataTableWrite,
    file_group_index,
    metadata_record_schema,
    write_metadata_table,
)
from hive_bridge.testing.writer import HudiWriter, WriteResult
from tests.conftest import SHARED_TABLES
from tests.hive_bridge.oracle import reference_slices

FIXTURE = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
SCHEMA = {"id": "bigint", "name": "string", "qty": "int", "amount": "decimal(12,2)", "day": "date",
          "ts": "timestamp", "flag": "boolean", "note": "string", "part": "string"}


def _data(ids: list[int], tag: str = "n") -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": [f"{tag}{i:05d}" for i in ids],
        "qty": pa.array([i % 97 for i in ids], pa.int32()),
        "value": [i * 0.25 for i in ids],
        "amount": pa.array([Decimal(i) / 4 for i in ids], pa.decimal128(12, 2)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 60) for i in ids], pa.date32()),
        "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=i) for i in ids],
                       pa.timestamp("us", tz="UTC")),
        "flag": [i % 3 == 0 for i in ids],
        "note": [None if i % 4 == 0 else f"note-{i % 7}" for i in ids],
        "part": [f"p{i % 3}" for i in ids],
    })


class Built:
    """A table written by HudiWriter, the committed files its writes report, and its metadata table."""

    def __init__(self, root: Path, writer: HudiWriter, results: list[WriteResult]) -> None:
        self.root = root
        self.writer = writer
        done = [r for r in results if r.completed]
        self.committed = {f for r in done for f in r.files} - {f for r in done for f in r.deleted}
        self.mdt: MetadataTableWrite = write_metadata_table(root)


def _cow(root: Path, partitioned: bool = True) -> Built:
    w = HudiWriter(root, version=8, partition_fields=["part"] if partitioned else [], rows_per_file=12)
    results = [w.insert(_data(list(range(0, 90)))), w.upsert(_data(list(range(10, 30)), "u"))]
    if partitioned:
        results.append(w.insert_overwrite(_data(list(range(300, 330, 3)), "o")))      # replaces partition p0
    results.append(w.insert(_data(list(range(500, 540)), "i"), inflight=True))       # never committed
    return Built(root, w, results)


def _mor(root: Path) -> Built:
    w = HudiWriter(root, version=8, table_type="MERGE_ON_READ", partition_fields=["part"], rows_per_file=15,
                   precombine_field="id")
    results = [w.insert(_data(list(range(0, 90)))), w.upsert(_data(list(range(5, 40, 2)), "u"))]
    results.append(w.delete(pa.table({"id": pa.array([7, 8], pa.int64()), "part": ["p1", "p2"]})))
    results.append(w.compact())
    results.append(w.upsert(_data([1, 2, 3, 200, 201], "v"), block_format="parquet"))
    results.append(w.upsert(_data([4, 5], "x"), inflight=True))
    return Built(root, w, results)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    base = tmp_path_factory.mktemp("mdt_writer")
    return {"cow": _cow(base / "cow"), "cow-nonpartitioned": _cow(base / "flat", partitioned=False),
            "mor": _mor(base / "mor")}


def _slices(table: HudiTable) -> list[tuple[Any, ...]]:
    return sorted((s.partition_path, s.file_id, s.base_instant, s.base_file.path if s.base_file else None,
                   s.base_file.size if s.base_file else None, tuple((lf.path, lf.size) for lf in s.log_files))
                  for s in table.latest_file_slices())


@pytest.mark.parametrize("name", ["cow", "cow-nonpartitioned", "mor"])
def test_read_back_as_hudi_s_own(tables: dict[str, Built], name: str) -> None:
    built = tables[name]
    table = HudiTable.open(built.root)
    assert table.properties.raw["hoodie.table.metadata.partitions"] == "column_stats,files"
    mdt = MetadataTable.open(table)
    status = mdt.status
    assert status.available and status.partitions == (COLUMN_STATS, FILES), status.problems
    assert status.lagging_instants == () and status.problems == ()
    assert status.synced_up_to == max(i.timestamp for i in table.timeline.completed)
    # files(): every committed file, exactly (sizes as in the folders); uncommitted and rolled-back files absent
    listed = {}
    partitions = mdt.all_partitions()
    assert partitions == sorted({f.rpartition("/")[0] for f in built.committed})
    for p in partitions:
        for fname, size in (mdt.files(p) or {}).items():
            rel = f"{p}/{fname}" if p else fname
            listed[rel] = size
    assert set(listed) == built.committed
    assert all(os.path.getsize(built.root / rel) == size for rel, size in listed.items())
    # the listing from the MDT's files partition: the folders' slices, file for file
    auto = HudiTable.open(built.root, listing="auto")
    assert auto.listing_source == "mdt", auto.listing_problems
    assert _slices(auto) == _slices(table)
    # hudi-rs lists through the metadata table (the table is version 8 with a files partition): same slices
    ours = sorted((s.partition_path, s.file_id, s.base_file.path if s.base_file else "",
                   tuple(sorted(lf.name for lf in s.log_files))) for s in table.latest_file_slices())
    theirs = sorted((p, f, b, logs) for p, f, _c, b, _size, logs in reference_slices(built.root))
    assert ours == theirs


def _real_values(path: Path, is_log: bool) -> pa.Table:
    if not is_log:
        return pq.read_table(path)
    blocks = [data_block_table(b) for b in read_log_file(str(path)).blocks
              if b.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA)]
    return pa.concat_tables(blocks, promote_options="permissive") if blocks else pa.table({})


def _plain(value: Any, typ: pa.DataType) -> Any:
    """A real value as the MDT entry gives it (timestamps as int micros)."""
    if value is None:
        return None
    if pa.types.is_timestamp(typ):
        return pa.scalar(value, typ).cast(pa.int64()).as_py()
    return value


@pytest.mark.parametrize("name", ["cow", "mor"])
def test_column_stats_are_the_files_real_statistics(tables: dict[str, Built], name: str) -> None:
    built = tables[name]
    table = HudiTable.open(built.root)
    entries = MetadataTable.open(table).column_stats()
    assert len(entries) == built.mdt.column_stats_records > 0
    by_file: dict[tuple[str, str], dict[str, Any]] = {}
    for e in entries:
        assert e.partition is not None and e.file_name is not None
        by_file.setdefault((e.partition, e.file_name), {})[e.column] = e
    expected_files = {tuple(f.rpartition("/")[::2]) for f in built.committed}
    assert set(by_file) == expected_files                 # base and log files alike
    assert all(set(cols) == set(built.mdt.columns) for cols in by_file.values())
    checked = 0
    for (partition, fname), cols in sorted(by_file.items()):
        is_log = fname.startswith(".")
        data = _real_values(built.root / partition / fname, is_log)
        for column, e in cols.items():
            assert e.value_count == data.num_rows, (fname, column)
            if data.num_rows == 0:                        # a delete-only log: no bounds, as the fixture's
                assert e.min is None and e.max is None and e.null_count == 0
                continue
            values = data.column(column)
            assert e.null_count == values.null_count, (fname, column)
            present = pc.drop_null(values)
            if len(present) == 0:
                assert e.min is None and e.max is None
                continue
            mm = pc.min_max(present)
            assert (e.min, e.max) == (_plain(mm["min"].as_py(), values.type), _plain(mm["max"].as_py(), values.type)), \
                (fname, column, e)
            assert e.is_tight_bound is False and not e.is_deleted
            if not is_log:
                assert e.total_size is not None and e.total_size > 0
            checked += 1
    assert checked > 100


def _footers_and_mdt(root: Path) -> tuple[HudiTable, ColumnStatsIndex, ColumnStatsIndex]:
    table = HudiTable.open(root, listing="auto")
    assert table.listing_source == "mdt"
    return table, ColumnStatsIndex(table, persist=False, source="mdt"), \
        ColumnStatsIndex(HudiTable.open(root), persist=False, source="footers")


@pytest.mark.parametrize("name", ["cow", "cow-nonpartitioned", "mor"])
def test_the_index_takes_every_file_from_the_mdt(tables: dict[str, Built], name: str) -> None:
    table, mdt_index, footer_index = _footers_and_mdt(tables[name].root)
    indexed = set(tables[name].mdt.columns)
    slices = table.latest_file_slices()
    based = [s for s in slices if s.base_file is not None]
    from_mdt, from_footers = mdt_index.table(based), footer_index.table(based)
    assert mdt_index.last.files_from_mdt == len(based) and mdt_index.last.files_from_footers == 0
    assert mdt_index.last.files_without_mdt_entry == 0 and not mdt_index.mdt_problems
    assert footer_index.last.files_from_footers == len(based)
    # the same statistics as the footers, except what the MDT path never trusts (float bounds) and exactness
    floats = {f.name.split("::")[0] for f in from_mdt.schema if pa.types.is_floating(f.type)}
    for col in from_mdt.column_names:
        base, _, stat = col.partition("::")
        if stat in ("min_exact", "max_exact") or (base in floats and stat in ("min", "max")):
            continue
        if stat and base not in indexed:                  # not indexed (Hudi skips _hoodie_commit_seqno ...)
            assert from_mdt.column(col).null_count == len(based), col
            continue
        ours, theirs = from_mdt.column(col).to_pylist(), from_footers.column(col).to_pylist()
        if stat == "null_count" and pa.types.is_string(from_mdt.schema.field(f"{base}::min").type):
            # by design: a string column "all null" in the MDT may be apache/hudi#18755, so its count is unknown
            rows = from_footers.column("num_rows").to_pylist()
            ours = [t if o is None and t == n else o for o, t, n in zip(ours, theirs, rows, strict=True)]
        assert ours == theirs, col
    logs = sum(len(s.log_files) for s in slices)
    if logs:
        mdt_logs, block_logs = mdt_index.log_table(slices), footer_index.log_table(slices)
        # a log whose entries say it holds no value (a delete-only log) is read from its blocks, never trusted
        assert mdt_index.last.log_files_from_mdt + mdt_index.last.files_without_mdt_entry == logs
        assert mdt_index.last.log_files_from_mdt > 0
        known = pc.is_valid(mdt_logs.column("num_rows"))
        for col in ("num_rows", "id::min", "id::max", "name::min", "name::max", "note::null_count"):
            assert mdt_logs.column(col).filter(known).equals(block_logs.column(col).filter(known)), col


FILTERS = [
    "leaf-(EQUALS id 37)",
    "(and leaf-(LESS_THAN qty 5) (not leaf-(IS_NULL note)))",
    "leaf-(BETWEEN amount 2.00 9.50)",
    "(not leaf-(LESS_THAN_EQUALS ts 2024-01-03 12:00:00))",
    "(or leaf-(EQUALS name n00042) leaf-(IN day 2024-02-01 2024-02-02))",
]


@pytest.mark.parametrize("name", ["cow", "mor"])
def test_pruning_from_the_mdt_keeps_what_the_footers_keep(tables: dict[str, Built], name: str) -> None:
    table, mdt_index, footer_index = _footers_and_mdt(tables[name].root)
    slices = table.latest_file_slices()
    by_mdt = Pruner(table, mdt_index, slices, key_indexes=False)
    by_footers = Pruner(HudiTable.open(tables[name].root), footer_index, slices, key_indexes=False)
    pruned = 0
    for text in FILTERS:
        s = sarg.parse(text, SCHEMA)
        a, b = by_mdt.run(s), by_footers.run(s)
        assert sorted(x.file_id for x in a.slices) == sorted(x.file_id for x in b.slices), text
        pruned += a.files_total - a.files_kept
    assert pruned > 0


def test_a_commit_after_the_mdt_lags_and_hudi_rs_lists_through_it(tmp_path: Path) -> None:
    built = _cow(tmp_path / "t")
    extra = built.writer.insert(_data(list(range(900, 930)), "late"))
    table = HudiTable.open(built.root)
    status = MetadataTable.open(table).status
    assert status.available and status.lagging_instants == (extra.instant,)
    auto = HudiTable.open(built.root, listing="auto")
    assert auto.listing_source == "folders" and "lags" in auto.listing_problems[0]
    # hudi-rs trusts the files partition blindly: it misses the new commit's slices, so the slices it listed in
    # the other tests came from what this writer wrote
    theirs = {(p, f) for p, f, *_ in reference_slices(built.root)}
    ours = {(s.partition_path, s.file_id) for s in table.latest_file_slices()}
    assert theirs < ours and len(ours - theirs) == len(extra.files)
    # a metadata table written again covers it
    write_metadata_table(built.root, overwrite=True)
    assert MetadataTable.open(HudiTable.open(built.root)).status.lagging_instants == ()
    assert {(p, f) for p, f, *_ in reference_slices(built.root)} == ours


def test_options_and_refusals(tmp_path: Path) -> None:
    built = _cow(tmp_path / "t")
    with pytest.raises(HudiTableError, match="exists"):
        write_metadata_table(built.root)
    out = write_metadata_table(built.root, partitions=[FILES], overwrite=True)
    assert out.partitions == (FILES,) and out.column_stats_records == 0
    table = HudiTable.open(built.root)
    assert table.properties.raw["hoodie.table.metadata.partitions"] == "files"
    assert MetadataTable.open(table).status.partitions == (FILES,)
    out = write_metadata_table(built.root, column_stats_columns=["id", "name"], file_groups={COLUMN_STATS: 3},
                               overwrite=True)
    assert out.columns == ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "id", "name")
    assert len([h for h in out.hfiles if h.startswith(COLUMN_STATS)]) == 3
    defs = json.loads((built.root / ".hoodie" / ".index_defs" / "index.json").read_text())
    assert defs["indexDefinitions"][COLUMN_STATS]["sourceFields"] == list(out.columns)
    stats = MetadataTable.open(HudiTable.open(built.root)).column_stats(["id"])
    assert {e.column for e in stats} == {"id"} and len(stats) == len(built.committed)
    HudiWriter(tmp_path / "v6", version=6).insert(_data([1]))
    with pytest.raises(HudiTableError, match="version 8"):
        write_metadata_table(tmp_path / "v6")
    with pytest.raises(HudiTableError, match="bloom_filters"):
        write_metadata_table(built.root, partitions=["bloom_filters"], overwrite=True)
    with pytest.raises(HudiTableError, match="column_stats too"):
        write_metadata_table(built.root, partitions=[FILES, PARTITION_STATS], overwrite=True)


def test_file_group_index_is_java_string_hash() -> None:
    # String.hashCode: "a" 97, "polygenelubricants" Integer.MIN_VALUE (Math.abs stays negative)
    assert file_group_index("a", 2) == 1 and file_group_index("a", 10) == 7
    assert file_group_index("polygenelubricants", 7) == 2          # Java: Math.abs(MIN_VALUE % 7) = 2
    assert file_group_index("\U0001f600", 1000) == (0xD83D * 31 + 0xDE00) % 1000      # UTF-16 code units


# ---------------------------------------------------------------------------------------------- the fixture


@pytest.fixture(scope="module")
def fixture_mdt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = SHARED_TABLES / f"{FIXTURE}.zip"
    if not src.is_file():
        pytest.skip(f"{src} not found")
    dest = tmp_path_factory.mktemp("fixture")
    with zipfile.ZipFile(src) as zf:
        zf.extractall(dest, members=[m for m in zf.namelist() if "/.hoodie/metadata/" in m and "__MACOSX" not in m])
    (mdt,) = dest.glob("*/.hoodie/metadata")
    return mdt


def _no_docs(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _no_docs(v) for k, v in schema.items() if k != "doc"}
    if isinstance(schema, list):
        return [_no_docs(x) for x in schema]
    return schema


def _walk(root: Path) -> Iterator[Path]:
    return (p for p in root.rglob("*") if p.is_file())


def test_it_writes_what_hudi_1_0_wrote_in_the_fixture(fixture_mdt: Path, tables: dict[str, Built]) -> None:
    ours = tables["cow"].mdt.path
    # the record schema of base HFiles (with meta fields) and of commit metadata (without), docs aside
    (theirs_hfile,) = fixture_mdt.glob("column_stats/col-stats-0000-0_*_20251220210130942.hfile")
    assert _no_docs(json.loads(HFileReader.open(theirs_hfile).avro_schema or "")) == \
        _no_docs(metadata_record_schema(True))
    with open(next(fixture_mdt.glob(".hoodie/timeline/00000000000000000_*.deltacommit")), "rb") as fh:
        commit: Any = next(iter(fastavro.reader(fh)))
    assert _no_docs(json.loads(commit["extraMetadata"]["schema"])) == _no_docs(metadata_record_schema(False))
    assert commit["operationType"] == "BULK_INSERT"
    # initializeFileGroups' empty log file, byte for byte
    assert (ours / "files" / ".files-0000-0_00000000000000000.log.1_0-0-0").read_bytes() == \
        (fixture_mdt / "files" / ".files-0000-0_00000000000000000.log.1_0-0-0").read_bytes()
    # the MDT's hoodie.properties (the checksum aside) and its partitions' metadata
    def keys(path: Path) -> dict[str, str]:
        return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and line[0] != "#")
    theirs_props, ours_props = keys(fixture_mdt / ".hoodie" / "hoodie.properties"), keys(ours / ".hoodie" / "hoodie.properties")
    theirs_props.pop("hoodie.table.checksum")
    assert set(theirs_props) == set(ours_props)
    assert {k: v for k, v in theirs_props.items() if k != "hoodie.table.name"} == \
        {k: v for k, v in ours_props.items() if k != "hoodie.table.name"}
    # Hudi's record -> file group mapping: every key of the fixture's column stats base files is in its group
    for g, path in enumerate(sorted(fixture_mdt.glob("column_stats/col-stats-000*-0_*.hfile"))):
        reader = HFileReader.open(path)
        keys_ = [k.decode() for k, _ in reader.entries()]
        assert keys_ and all(file_group_index(k, 2) == int(path.name[10:14]) for k in keys_), g
    # layout: the same folders and kinds of files
    def shape(root: Path) -> set[str]:
        return {str(p.relative_to(root).parent) for p in _walk(root) if "secondary" not in str(p) and
                "record_index" not in str(p) and "partition_stats" not in str(p)}
    assert shape(ours) <= shape(fixture_mdt) | {"."}


# ---------------------------------------------------------------------------------------------- timestamps


def test_a_millisecond_timestamp_column_loses_no_file(tmp_path: Path) -> None:
    root = tmp_path / "t"
    ids = list(range(40))
    HudiWriter(root, version=8, rows_per_file=10).insert(pa.table({
        "id": pa.array(ids, pa.int64()),
        "tms": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in ids], pa.timestamp("ms")),
    }))
    write_metadata_table(root)
    table = HudiTable.open(root)
    s = sarg.parse("(not leaf-(LESS_THAN_EQUALS tms 2024-01-02 00:00:00))", {"id": "bigint", "tms": "timestamp"})
    footers = Pruner(table, ColumnStatsIndex(table, persist=False, source="footers"), table.latest_file_slices())
    mdt = Pruner(table, ColumnStatsIndex(table, persist=False, source="mdt"), table.latest_file_slices())
    assert footers.run(s).files_kept == 2
    assert mdt.run(s).files_kept >= 2            # today: 0 (the bounds read as 1970-01-20): rows lost


def test_the_hand_encoding_of_column_stats_is_fastavro_s() -> None:
    from hive_bridge.testing.mdt_records import (
        avro_bytes_of,
        encode_record,
        metadata_record,
        stats_value,
        wrap,
    )

    bounds: list[tuple[Any, str]] = [
        (True, "BooleanWrapper"), (False, "BooleanWrapper"), (-5, "IntWrapper"), (2**31 - 1, "IntWrapper"),
        (-(2**63), "LongWrapper"), (123456789012, "LongWrapper"), (1.5, "FloatWrapper"), (-0.0, "DoubleWrapper"),
        (1e300, "DoubleWrapper"), (b"\x00\xff", "BytesWrapper"), ("", "StringWrapper"), ("żółw 🐢", "StringWrapper"),
        (19737, "DateWrapper"), (Decimal("0"), "DecimalWrapper"), (Decimal("-1.25"), "DecimalWrapper"),
        (Decimal("123456789012345.123456789012345"), "DecimalWrapper"), (Decimal("-0.000000000000001"), "DecimalWrapper"),
        (None, "LongWrapper"),
    ]
    for value, wrapper in bounds:
        for counts in ((3, 1, 100, 200), (None, None, None, None), (0, 0, 0, 0)):
            stats = {"fileName": "f_1-2-3_20240101000000000.parquet", "columnName": "c", "minValue": wrap(value, wrapper),
                     "maxValue": wrap(value, wrapper), "valueCount": counts[0], "nullCount": counts[1],
                     "totalSize": counts[2], "totalUncompressedSize": counts[3], "isDeleted": False,
                     "isTightBound": False}
            name = "col-stats-0000-0_0-0-0_00000000000000001.hfile"
            assert stats_value(avro_bytes_of(name.encode()), stats) == encode_record(metadata_record(name, 3, stats=stats)), \
                (value, wrapper, counts)


def test_hudi_rs_decodes_every_record_as_we_do(tables: dict[str, Built], tmp_path: Path) -> None:
    """An independent reader of the HFiles and their Avro values: hudi-rs's file group reader (on a copy whose
    commit metadata schema has its named types inlined: hudi-rs 0.5 cannot convert references to Arrow)."""
    import shutil

    hudi = pytest.importorskip("hudi")
    from hive_bridge.formats.hfile.reader import decode_metadata_values
    from tests.hive_bridge.formats.test_hfile import _inline_named_types, _plain

    src = tables["mor"].mdt.path
    mdt = tmp_path / "t" / ".hoodie" / "metadata"                # hudi-rs tells an MDT by this path ending
    shutil.copytree(src, mdt)
    for instant in (mdt / ".hoodie" / "timeline").glob("*.deltacommit"):
        with open(instant, "rb") as fh:
            avro = fastavro.reader(fh)
            writer_schema, commits = avro.writer_schema, list(avro)
        for commit in commits:
            assert isinstance(commit, dict)
            commit["extraMetadata"]["schema"] = json.dumps(_inline_named_types(json.loads(commit["extraMetadata"]["schema"])))
        with open(instant, "wb") as fh:
            fastavro.writer(fh, writer_schema, commits)
    reader = hudi.HudiTableBuilder.from_base_uri(str(mdt)).build().create_file_group_reader_with_options()
    compared = 0
    for rel in tables["mor"].mdt.hfiles:
        rows = reader.read_file_slice_from_paths(rel, []).to_pylist()
        ours = HFileReader.open(src / rel)
        entries = list(ours.entries())
        records = decode_metadata_values([v for _, v in entries], ours.avro_schema or "")
        assert [_plain(r) for r in rows] == [_plain({**rec, "key": k.decode()}) for (k, _), rec in
                                             zip(entries, records, strict=True)], rel
        compared += len(rows)
    assert compared == tables["mor"].mdt.column_stats_records + 1 + len(tables["mor"].mdt.data_partitions)


@pytest.mark.parametrize("name", ["cow", "mor"])
def test_partition_stats_bound_each_partition_and_prune_as_the_footers_do(tables: dict[str, Built], name: str,
                                                                         tmp_path: Path) -> None:
    """The partition_stats partition (merged from the files' statistics) read back: each record bounds every
    file's statistics of its partition; planning with it keeps what the footers keep, and drops whole
    partitions for a filter only one partition can match."""
    import shutil

    from hive_bridge.pruning.pruner import plan_slices

    root = tmp_path / name
    shutil.copytree(tables[name].root, root)
    write_metadata_table(root, partitions=[FILES, COLUMN_STATS, PARTITION_STATS], overwrite=True)
    table = HudiTable.open(root)
    mdt = table.metadata_table()
    assert PARTITION_STATS in mdt.status.partitions, mdt.status.problems
    by_file = mdt.column_stats(["id", "name"])
    for e in mdt.partition_stats(["id", "name"]):
        files = [f for f in by_file if f.partition == e.partition and f.column == e.column and f.min is not None]
        assert files and e.min == min(f.min for f in files) and e.max == max(f.max for f in files), e
    dropped = 0
    for text in [*FILTERS, "part = 'p1' AND id > 0", "name = 'u00011'"]:
        s = sarg.parse(text, SCHEMA) if text in FILTERS else sarg.read_filter(text, SCHEMA)
        slices = table.latest_file_slices()
        # the merge-on-read table's partitions have log files: a read-optimized query is judged by them
        qt = "read_optimized" if name == "mor" else "snapshot"
        with_ps = plan_slices(table, ColumnStatsIndex(table, persist=False, source="mdt"), slices, s,
                               query_type=qt)
        footers = plan_slices(table, ColumnStatsIndex(table, persist=False, source="footers"), slices, s,
                               partition_stats=False, query_type=qt)
        assert sorted(x.file_id for x in with_ps.slices) == sorted(x.file_id for x in footers.slices), text
        dropped += with_ps.dropped_by_partition_stats
    assert dropped > 0


def test_record_and_secondary_indexes_name_every_record_of_the_latest_slices(tmp_path: Path) -> None:
    """The record index maps every key of the latest slices to its file group and partition; the secondary
    index every value to the keys holding it; a merge-on-read table with log files is refused."""
    from hive_bridge.mdt.keys import RECORD_INDEX

    built = _cow(tmp_path / "t", partitioned=True)
    write_metadata_table(built.root, secondary_indexes={"name_idx": "name"}, overwrite=True)
    table = HudiTable.open(built.root)
    mdt = MetadataTable.open(table)
    assert {RECORD_INDEX, "secondary_index_name_idx"} <= set(mdt.status.partitions), mdt.status.problems
    homes: dict[str, tuple[str, str]] = {}
    names: dict[str, set[str]] = {}
    for s in table.latest_file_slices():
        assert s.base_file is not None
        for r in pq.read_table(s.base_file.full_path, columns=["_hoodie_record_key", "name"]).to_pylist():
            homes[r["_hoodie_record_key"]] = (s.partition_path, s.file_id)
            names.setdefault(r["name"], set()).add(r["_hoodie_record_key"])
    located = mdt.record_index(list(homes))
    assert {k: (loc.partition, loc.file_id) for k, loc in located.items()} == homes
    assert {loc.instant for loc in located.values()} <= {s.base_instant for s in table.latest_file_slices()}
    assert mdt.secondary_index("name_idx", list(names)) == names
    with pytest.raises(HudiTableError, match="log files"):
        write_metadata_table(_mor(tmp_path / "mor").root, secondary_indexes={"name_idx": "name"}, overwrite=True)
