"""Hudi's metadata table, read on every real table that has one and checked against the tables themselves:
the files partition against the folders and hudi-rs, column statistics against the values of the files they
describe, the record and secondary indexes against the merged rows, bloom filters bit for bit; then trust
(uncommitted and lagging MDT instants) and damage on copies."""

from __future__ import annotations

import json
import os
import random
import shutil
import string
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hive_bridge.errors import MetadataTableError
from hive_bridge.formats.bloom import BloomFilter, BloomFilterError, hadoop_jenkins_hash, hadoop_murmur_hash
from hive_bridge.formats.hfile.reader import HFileReader
from hive_bridge.formats.logfile import BlockType, data_block_table, delete_block_keys, read_log_file
from hive_bridge.layout.fsview import parse_base_file_name, parse_log_file_name
from hive_bridge.mdt.keys import (
    MIRRORED_ACTIONS,
    column_index_id,
    column_stats_key,
    partition_index_id,
    partition_stats_key,
    secondary_index_key,
    split_secondary_index_key,
    xxhash64,
)
from hive_bridge.mdt.records import ColumnStatsEntry
from hive_bridge.mdt.table import MetadataTable
from hive_bridge.table.table import HudiTable
from tests.conftest import FIXTURE_NAMES, SHARED_TABLES

TRIPS_V8 = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
OVERWRITE_V9 = "sample_table.cow.v9_txns_simple_overwrite"
NONPART_V9 = "sample_table.mor.avro.v9_txns_nonpart_meta"


def _has_mdt(name: str) -> bool:
    import zipfile

    with zipfile.ZipFile(SHARED_TABLES / f"{name}.zip") as zf:
        return any(n.endswith(".hoodie/metadata/.hoodie/hoodie.properties") and not n.startswith("__MACOSX/")
                   for n in zf.namelist())


MDT_TABLES = [n for n in FIXTURE_NAMES if _has_mdt(n)]
NO_MDT_TABLES = [n for n in FIXTURE_NAMES if n not in MDT_TABLES]


@pytest.fixture(scope="module")
def opened(fixture_tables: dict[str, Path]) -> Callable[[str], tuple[HudiTable, MetadataTable]]:
    cache_: dict[str, tuple[HudiTable, MetadataTable]] = {}

    def get(name: str) -> tuple[HudiTable, MetadataTable]:
        if name not in cache_:
            table = HudiTable.open(fixture_tables[name])
            cache_[name] = (table, MetadataTable.open(table))
        return cache_[name]

    return get


@cache
def _merged_rows(path: str) -> pa.Table:
    """hudi-rs's snapshot read of the table (merged rows, meta columns included)."""
    import hudi

    return pa.Table.from_batches(hudi.HudiTable(path).read())


def _ready(table: HudiTable) -> list[str]:
    raw = table.properties.raw
    inflight = set((raw.get("hoodie.table.metadata.partitions.inflight") or "").split(","))
    return sorted(p for p in (raw.get("hoodie.table.metadata.partitions") or "").split(",") if p and p not in inflight)


def test_the_fixtures_have_metadata_tables() -> None:
    if not FIXTURE_NAMES:
        pytest.skip("shared Hudi tables not found")
    assert TRIPS_V8 in MDT_TABLES and len(MDT_TABLES) >= 10


# ================================================================================== status and files


@pytest.mark.parametrize("name", MDT_TABLES)
def test_status_of_every_metadata_table(name: str, opened: Any) -> None:
    table, mdt = opened(name)
    status = mdt.status
    assert status.available
    if table.base_file_format == "LANCE" and "partition_stats" in _ready(table):
        # Hudi aggregated them from log files only: not a bound of the partitions' rows, so not used
        assert list(status.partitions) == [p for p in _ready(table) if p != "partition_stats"]
        assert len(status.problems) == 1 and "LANCE" in status.problems[0]
    else:
        assert list(status.partitions) == _ready(table) and status.problems == ()
    assert status.lagging_instants == ()
    mirrored = [i.timestamp for i in table.timeline.completed if i.action in MIRRORED_ACTIONS]
    assert status.synced_up_to == max(mirrored)
    assert mdt.verify() == status                          # every partition reads whole


@pytest.mark.parametrize("name", MDT_TABLES)
def test_files_partition_is_the_folder_listing_of_committed_files(name: str, opened: Any) -> None:
    table, mdt = opened(name)
    done = {i.timestamp for i in table.timeline.completed}
    ext = table.properties.base_file_extension
    partitions = mdt.all_partitions()
    assert partitions == table.partition_paths()
    slices = table.latest_file_slices()
    for partition in partitions:
        folder = Path(table.base_path, partition)
        on_disk = {}
        for entry in os.scandir(folder):
            log = parse_log_file_name(entry.name)
            base = parse_base_file_name(entry.name, ext)
            instant = log[1] if log else base[2] if base else None
            if instant is not None and instant in done:
                on_disk[entry.name] = entry.stat().st_size
        listed = mdt.files(partition)
        assert listed == on_disk, partition
        # the latest slices are among the committed files, with their sizes (the MDT keeps older slices too)
        for s in slices:
            if s.partition_path != partition:
                continue
            if s.base_file is not None:
                assert listed[s.base_file.name] == s.base_file.size
            for lf in s.log_files:
                assert listed[lf.name] == lf.size
    if partitions == [""]:
        assert mdt.files(".") == mdt.files("")          # Hudi's key for a non-partitioned table is "."
    assert mdt.files("no-such-partition") is None


def _hudi_rs_slices(path: Path) -> set[tuple[str, str, int]]:
    import hudi

    out: set[tuple[str, str, int]] = set()
    for s in hudi.HudiTable(str(path)).get_file_slices():
        if s.base_file_name:
            out.add((s.partition_path, s.base_file_name, s.base_file_size))
        for n, size in zip(s.log_file_names, s.log_file_sizes, strict=True):
            out.add((s.partition_path, n, size))
    return out


@pytest.mark.parametrize("name", [TRIPS_V8, NONPART_V9, "sample_table.cow.v9_txns_simple_meta",
                                  "sample_table.mor.avro.v9_lance_nonhivestyle"])
def test_files_partition_agrees_with_hudi_rs_in_both_listing_modes(name: str, opened: Any,
                                                                   fixture_copy: Callable[[str], Path]) -> None:
    table, mdt = opened(name)
    # hudi-rs lists through the files partition whenever hoodie.properties lists it (its read options do not
    # turn that off), so its storage listing is had on a copy whose hoodie.properties lists no MDT partition
    through_mdt = _hudi_rs_slices(Path(table.base_path))
    copy = fixture_copy(name)
    props = copy / ".hoodie" / "hoodie.properties"
    lines = [ln for ln in props.read_text(encoding="latin-1").splitlines()
             if not ln.startswith("hoodie.table.metadata.partitions")]
    props.write_text("\n".join(lines) + "\n", encoding="latin-1")
    shutil.rmtree(copy / ".hoodie" / "metadata")
    by_listing = _hudi_rs_slices(copy)
    assert through_mdt == by_listing
    for partition, file_name, size in through_mdt:
        assert mdt.files(partition)[file_name] == size      # type: ignore[index]


# ================================================================================== column statistics


def _values(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """Values as the MDT's statistics give them: timestamps and times as int microseconds."""
    typ = column.type
    if pa.types.is_timestamp(typ) or pa.types.is_time(typ):
        factor = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": 1}[typ.unit]
        ints = pc.cast(column, pa.int64()).to_pylist()
        return [None if v is None else (v // 1000 if typ.unit == "ns" else v * factor) for v in ints]
    return column.to_pylist()


def _check_bounds(entry: ColumnStatsEntry, values: list[Any], where: str) -> None:
    present = [v for v in values if v is not None]
    if entry.null_count is not None:
        assert entry.null_count == len(values) - len(present), where
    if entry.value_count is not None:
        assert entry.value_count == len(values), where
    if not present:
        assert entry.min is None and entry.max is None, where
        return
    assert entry.min is not None and entry.max is not None, where
    assert all(entry.min <= v <= entry.max for v in present), (where, entry.min, entry.max, min(present),
                                                              max(present))


def _typed(entry: ColumnStatsEntry) -> None:
    """min/max come unwrapped as Python values of the column's type."""
    kinds = {"STRING": str, "LONG": int, "INT": int, "DOUBLE": float, "FLOAT": float, "BOOLEAN": bool,
             "DATE": date, "DECIMAL": Decimal, "TIMESTAMP_MICROS": int, "BYTES": bytes}
    for v in (entry.min, entry.max):
        if v is not None and entry.value_type in kinds:
            assert isinstance(v, kinds[entry.value_type]), entry


@pytest.mark.parametrize("name", MDT_TABLES)
def test_column_stats_bound_the_files_they_describe(name: str, opened: Any) -> None:
    table, mdt = opened(name)
    if "column_stats" not in mdt.status.partitions:
        pytest.skip("no column_stats partition")
    entries = mdt.column_stats()
    if not entries:                                         # Lance base files have no column statistics
        assert table.base_file_format == "LANCE" and not table.properties.is_mor
        return
    checked_base = checked_log = 0
    logs: dict[str, Any] = {}
    for e in entries:
        _typed(e)
        assert e.partition is not None and e.file_name is not None and not e.is_deleted
        path = Path(table.base_path, e.partition, e.file_name)
        assert e.file_name in mdt.files(e.partition)       # type: ignore[operator]
        if not path.exists():
            continue                                        # cleaned: the MDT removed it (no such entry here)
        where = f"{e.file_name}:{e.column}"
        if e.file_name.endswith(".parquet"):
            pf = pq.ParquetFile(path)
            if e.column not in pf.schema_arrow.names:
                continue
            _check_bounds(e, _values(pf.read(columns=[e.column]).column(0)), where)
            checked_base += 1
        elif e.file_name.startswith("."):
            if e.file_name not in logs:
                blocks = read_log_file(path).blocks
                data = [data_block_table(b) for b in blocks if b.block_type in (BlockType.AVRO_DATA,
                                                                                BlockType.PARQUET_DATA)]
                logs[e.file_name] = pa.concat_tables(data, promote_options="default") if data else None
            rows = logs[e.file_name]
            if rows is None:
                # a log holding no data block (only deletes): no values, no bounds
                assert e.value_count == 0 and e.min is None and e.max is None, where
            elif e.column in rows.column_names:
                _check_bounds(e, _values(rows.column(e.column)), where)
            checked_log += 1
    assert checked_base or checked_log
    # the keys are column + partition + file hashes: the column's prefix finds exactly its entries
    column = entries[0].column
    assert mdt.column_stats([column]) == [e for e in entries if e.column == column]
    assert mdt.column_stats([]) == [] and mdt.column_stats(["no such column"]) == []


def test_value_count_zero_log_entries_are_delete_only_logs(opened: Any) -> None:
    """In v8_trips_8i3u1d two log files have entries with valueCount 0 and no min/max: each log holds a single
    DELETE block (the table's delete, then the delete of an update's row) and no record at all, so the entry
    says "no values here", not "unknown"."""
    table, mdt = opened(TRIPS_V8)
    empty = {(e.partition, e.file_name) for e in mdt.column_stats() if e.value_count == 0}
    assert len(empty) == 2
    for partition, file_name in empty:
        for e in mdt.column_stats():
            if e.file_name == file_name:
                assert (e.value_count, e.null_count, e.min, e.max) == (0, 0, None, None)
        blocks = read_log_file(Path(table.base_path, partition, file_name)).blocks   # type: ignore[arg-type]
        assert [b.block_type for b in blocks] == [BlockType.DELETE]
        (key, _), = delete_block_keys(blocks[0])
        assert key not in set(_merged_rows(table.base_path).column("_hoodie_record_key").to_pylist())
        assert mdt.record_index([key]) == {}               # deleted: gone from the record index too


@pytest.mark.parametrize("name", MDT_TABLES)
def test_partition_stats_bound_the_merged_rows(name: str, opened: Any) -> None:
    table, mdt = opened(name)
    if "partition_stats" not in mdt.status.partitions:
        pytest.skip("no partition_stats partition")
    rows = _merged_rows(table.base_path)
    stats = mdt.partition_stats()
    assert stats
    for e in stats:
        _typed(e)
        assert e.file_name is None and e.partition in mdt.all_partitions()
        if e.column not in rows.column_names or e.column in table.properties.partition_fields:
            continue                                        # hudi-rs gives partition columns from the path
        mine = rows.filter(pc.equal(rows.column("_hoodie_partition_path"), e.partition))
        present = [v for v in _values(mine.column(e.column)) if v is not None]
        if present:
            assert e.min <= min(present) and max(present) <= e.max, (e, min(present), max(present))
    assert mdt.partition_stats([stats[0].column]) == [e for e in stats if e.column == stats[0].column]


# ================================================================================== record and secondary index


@pytest.mark.parametrize("name", MDT_TABLES)
def test_record_index_maps_every_key_to_its_file_group(name: str, opened: Any) -> None:
    table, mdt = opened(name)
    if "record_index" not in mdt.status.partitions:
        pytest.skip("no record_index partition")
    rows = _merged_rows(table.base_path)
    keys = rows.column("_hoodie_record_key").to_pylist()
    groups = {(s.partition_path, s.file_id): s for s in table.latest_file_slices()}
    found = mdt.record_index([*keys, "no-such-key"])
    assert set(found) == set(keys)                          # a missing key returns nothing
    assert set(mdt.records("record_index")) == set(keys)    # and no deleted key is left in the index
    instants = {i.timestamp for i in table.timeline.instants}
    holders: dict[str, set[tuple[str, str]]] = {}
    for key, partition, file_name in zip(keys, rows.column("_hoodie_partition_path").to_pylist(),
                                         rows.column("_hoodie_file_name").to_pylist(), strict=True):
        # a base file row names its file, a log record its file group id
        holders.setdefault(key, set()).add((partition, file_name.split("_", 1)[0]))
    for key, where in holders.items():
        loc = found[key]
        assert (loc.partition, loc.file_id) in groups       # a live file group ...
        assert (loc.partition, loc.file_id) in where        # ... one holding the key's row
        assert loc.instant in instants                       # rebuilt in the writer's time zone
    # (Spark SQL's INSERT INTO an existing key writes a duplicate into a new file group, as in the timebasedkeygen
    # and rollback tables: the index points to the newest of them)
    assert mdt.record_index([]) == {}


@pytest.mark.parametrize("name", MDT_TABLES)
def test_secondary_indexes_map_values_to_the_merged_rows_keys(name: str, opened: Any) -> None:
    table, mdt = opened(name)
    indexes = [p for p in mdt.status.partitions if p.startswith("secondary_index_")]
    if not indexes:
        pytest.skip("no secondary index")
    defs = json.loads(Path(table.base_path, ".hoodie", ".index_defs", "index.json").read_text())
    rows = _merged_rows(table.base_path)
    keys = rows.column("_hoodie_record_key").to_pylist()
    for index in indexes:
        column = defs["indexDefinitions"][index]["sourceFields"][0]
        values = rows.column(column).to_pylist()
        expected: dict[Any, set[str]] = {}
        for value, key in zip(values, keys, strict=True):
            text = None if value is None else str((value - date(1970, 1, 1)).days) if isinstance(value, date) \
                else str(value)
            expected.setdefault(text, set()).add(key)
        assert mdt.secondary_index(index, [*values, "no such value"]) == expected
        short = index.removeprefix("secondary_index_")
        one = next(v for v in values if v is not None)
        assert mdt.secondary_index(short, [one]) == {k: v for k, v in expected.items()
                                                     if k == mdt_text(one)}
        pairs = {split_secondary_index_key(k) for k in mdt.records(index)}
        assert pairs == {(t, k) for t, ks in expected.items() for k in ks}


def mdt_text(value: Any) -> str:
    return str((value - date(1970, 1, 1)).days) if isinstance(value, date) else str(value)


def test_secondary_index_keys_escape_separator_backslash_and_null() -> None:
    for value, key in [("a$b", "k\\1"), (None, "k$"), ("\x00", "x"), ("", ""), ("rider-A", "uuid")]:
        joined = secondary_index_key(value, key)
        assert split_secondary_index_key(joined) == (value, key)
    assert secondary_index_key("a$b", "k") == "a\\$b$k"
    assert secondary_index_key(None, "k") == "\x00$k"
    with pytest.raises(MetadataTableError):
        split_secondary_index_key("no separator")


# ================================================================================== keys and hashes


@pytest.mark.parametrize("name", [TRIPS_V8, NONPART_V9])
def test_column_and_partition_stats_keys_are_recomputed_exactly(name: str, opened: Any) -> None:
    _, mdt = opened(name)
    for key, rec in mdt.records("column_stats").items():
        stats = rec["ColumnStatsMetadata"]
        partition = next(p for p in mdt.all_partitions() if key[12:24] == partition_index_id(p))
        assert key == column_stats_key(stats["columnName"], partition, stats["fileName"])
    if "partition_stats" in mdt.status.partitions:
        for key, rec in mdt.records("partition_stats").items():
            stats = rec["ColumnStatsMetadata"]
            assert key == partition_stats_key(stats["columnName"], stats["fileName"])


def test_hash_ids_use_the_sign_extended_seed() -> None:
    # HashID passes the Java int 0xdabadaba to XXH64's long seed: 0xFFFFFFFFDABADABA, not 0xdabadaba
    assert column_index_id("driver") == "AjpJ7N1gBZc="          # the key prefix of v8_trips_8i3u1d
    assert partition_index_id("") == partition_index_id(".") == "FXThHwelITM="
    assert xxhash64(b"", 0) == 0xEF46DB3751D8E999 and xxhash64(b"a", 0) == 0xD24EC4F1A98C6E5B
    assert xxhash64(b"", 2654435761) == 0xAC75FDA2929B17EF
    long_input = bytes(range(100))
    assert xxhash64(long_input, 0) != xxhash64(long_input, 1)


def test_jenkins_hash_is_lookup3() -> None:
    mask = 0xFFFFFFFF
    assert hadoop_jenkins_hash(b"", 0) & mask == 0xDEADBEEF
    assert hadoop_jenkins_hash(b"", 0xDEADBEEF) & mask == 0xBD5B7DDE
    assert hadoop_jenkins_hash(b"Four score and seven years ago", 0) & mask == 0x17770551
    assert hadoop_jenkins_hash(b"Four score and seven years ago", 1) & mask == 0xCD628161


def test_murmur_hash_sign_extends_tail_bytes_as_java_does() -> None:
    assert hadoop_murmur_hash(b"", 0) == 0
    # a tail byte >= 0x80 is sign-extended by Java's (int) cast: differs from the unsigned C MurmurHash2
    assert hadoop_murmur_hash(b"\x80", 0) != hadoop_murmur_hash(b"\x7f", 0)
    assert -(2**31) <= hadoop_murmur_hash("é".encode(), 7) < 2**31


# ================================================================================== bloom filters


def test_bloom_filters_of_base_files_are_bit_exact(fixture_tables: dict[str, Path]) -> None:
    """Every base parquet file's footer filter (DYNAMIC_V0, Murmur, as Hudi writes): every record key tests
    positive, the set bits are exactly the positions of the file's keys, and absent keys mostly test negative."""
    rng = random.Random(7)
    files = false_positives = absent = 0
    for name in FIXTURE_NAMES:
        for path in sorted(fixture_tables[name].rglob("*.parquet")):
            meta = pq.read_metadata(path)
            bloom = BloomFilter.from_parquet_metadata(meta.metadata)
            if bloom is None:
                continue
            files += 1
            keys = pq.read_table(path, columns=["_hoodie_record_key"]).column(0).to_pylist()
            positions: set[int] = set()
            for key in keys:
                assert bloom.might_contain(key), (path, key)
                positions.update(bloom.positions(key))
            assert int.from_bytes(bloom.rows[0].bits, "little").bit_count() == len(positions), path
            for _ in range(10):
                absent += 1
                false_positives += bloom.might_contain("".join(rng.choices(string.ascii_letters, k=16)))
    assert files >= 100
    assert false_positives <= absent // 100


def test_simple_and_unversioned_bloom_filters_round_trip() -> None:
    import base64
    import struct

    def serialized(version_header: bytes, size: int, keys: list[str], hash_type: int) -> bytes:
        probe = BloomFilter("SIMPLE", [(4, hash_type, size, bytes((size + 7) // 8))])  # type: ignore[list-item]
        bits = bytearray((size + 7) // 8)
        for key in keys:
            for p in probe.positions(key):
                bits[p >> 3] |= 1 << (p & 7)
        return version_header + struct.pack(">i", size) + bytes(bits)

    keys = [f"key-{i}" for i in range(50)]
    for hash_type in (0, 1):
        raw = serialized(struct.pack(">iib", -1, 4, hash_type), 4096, keys, hash_type)
        bloom = BloomFilter.from_serialized(base64.b64encode(raw).decode(), "SIMPLE")
        assert bloom.hash_type == hash_type and all(bloom.might_contain(k) for k in keys)
        assert BloomFilter.from_serialized(base64.b64encode(raw), "SIMPLE").rows == bloom.rows   # MDT bytes
    old = serialized(struct.pack(">i", 4), 4096, keys, 0)       # unversioned: the count, Jenkins
    assert BloomFilter.from_serialized(base64.b64encode(old).decode(), "SIMPLE").hash_type == 0
    with pytest.raises(BloomFilterError, match="cut off"):
        BloomFilter.from_serialized(base64.b64encode(old[:-1]).decode(), "SIMPLE")
    with pytest.raises(BloomFilterError):
        BloomFilter.from_serialized(base64.b64encode(old).decode(), "BOGUS")
    assert BloomFilter.from_parquet_metadata({}) is None


def test_no_fixture_has_a_bloom_filters_partition(opened: Any) -> None:
    _, mdt = opened(TRIPS_V8)
    assert "bloom_filters" not in mdt.status.partitions
    assert mdt.bloom_filter("city=chennai", "x.parquet") is None


# ================================================================================== trust and damage


def _mdt_instant_files(copy: Path, instant: str) -> list[Path]:
    return sorted((copy / ".hoodie" / "metadata" / ".hoodie" / "timeline").glob(f"{instant}*"))


def test_an_uncommitted_mdt_deltacommit_is_ignored_and_its_data_instant_lags(
        fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    late_log = ".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210130911.log.1_0-1139-3316"
    completed = [p for p in _mdt_instant_files(copy, "20251220210130911") if "_" in p.name]
    assert len(completed) == 1
    completed[0].unlink()
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert mdt.status.available and mdt.status.problems == ()
    assert mdt.status.lagging_instants == ("20251220210130911",)
    assert mdt.status.synced_up_to == "20251220210129235"
    assert late_log not in mdt.files("city=sao_paulo")  # type: ignore[operator]
    assert all(e.file_name != late_log for e in mdt.column_stats())


def test_a_data_instant_still_pending_hides_its_completed_mdt_deltacommit(
        fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    (done,) = (copy / ".hoodie" / "timeline").glob("20251220210130911_*.deltacommit")
    done.unlink()                                           # the data commit did not complete
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert mdt.status.lagging_instants == ()                # not completed: nothing to cover
    assert mdt.status.synced_up_to == "20251220210129235"
    files = mdt.files("city=sao_paulo")
    assert files is not None and not any("20251220210130911" in f for f in files)


def test_a_data_instant_the_mdt_lacks_is_lagging(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(OVERWRITE_V9)
    table = HudiTable.open(copy)
    last = table.timeline.completed_writes[-1]
    for p in _mdt_instant_files(copy, last.timestamp):
        p.unlink()                                          # the MDT never heard of the last commit
    mdt = MetadataTable.open(table)
    assert mdt.status.available and mdt.status.lagging_instants == (last.timestamp,)
    assert mdt.status.synced_up_to is not None and mdt.status.synced_up_to < last.timestamp
    new_files = {s.base_file.name for s in table.latest_file_slices() if s.base_instant == last.timestamp
                 and s.base_file is not None}
    assert new_files
    listed = set().union(*(mdt.files(p) or {} for p in mdt.all_partitions()))
    assert not new_files & listed                           # the caller must list the lagging instant's files


def test_a_truncated_mdt_hfile_makes_its_partition_unavailable(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    (hfile,) = (copy / ".hoodie" / "metadata" / "column_stats").glob("col-stats-0000-0_*_20251220210130942.hfile")
    data = hfile.read_bytes()
    hfile.write_bytes(data[: len(data) // 2])
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert mdt.status.available
    assert "column_stats" not in mdt.status.partitions and "files" in mdt.status.partitions
    assert any(hfile.name in p and "truncated" in p for p in mdt.status.problems)
    with pytest.raises(MetadataTableError, match="column_stats"):
        mdt.column_stats()
    assert mdt.files("city=chennai")                        # the other partitions still answer


def test_a_missing_mdt_log_file_makes_its_partition_unavailable(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    (log,) = (copy / ".hoodie" / "metadata" / "files").glob(".files-0000-0_20251220210130911.log.*")
    log.unlink()
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert "files" not in mdt.status.partitions
    assert any(log.name in p and "missing" in p for p in mdt.status.problems)
    assert mdt.files("city=sao_paulo") is None              # unknown, never a listing without that log
    with pytest.raises(MetadataTableError):
        mdt.all_partitions()
    assert mdt.column_stats(["fare"])                       # other partitions are fine


def test_damage_found_when_reading_makes_the_partition_unavailable(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    # the log of the deltacommit completed after the compaction: part of the current slice
    (log,) = (copy / ".hoodie" / "metadata" / "files").glob(".files-0000-0_20251220210130911.log.*")
    saved = log.read_bytes()
    for start in (300, len(saved) - 3000):                  # the block header's schema, the HFile content
        data = bytearray(saved)
        data[start:start + 40] = b"#" * 40                   # same size: only reading finds it
        log.write_bytes(bytes(data))
        mdt = MetadataTable.open(HudiTable.open(copy))
        assert "files" in mdt.status.partitions and mdt.status.problems == ()
        with pytest.raises(MetadataTableError, match="files"):
            mdt.all_partitions()
        assert "files" not in mdt.status.partitions
        assert any(log.name in p for p in mdt.status.problems)
        assert mdt.files("city=chennai") is None
        log.write_bytes(saved)


def test_a_damaged_mdt_timeline_or_properties_is_unavailable(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    (copy / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").write_text("garbage\n")
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert not mdt.status.available and mdt.status.partitions == () and mdt.status.problems
    with pytest.raises(MetadataTableError):
        mdt.column_stats()
    assert mdt.files("city=chennai") is None


def test_an_unreadable_mdt_commit_file_makes_the_mdt_unavailable(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    (done,) = (copy / ".hoodie" / "metadata" / ".hoodie" / "timeline").glob("20251220210127080_*.deltacommit")
    done.write_bytes(b"Obj\x01 damaged")
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert not mdt.status.available and any("20251220210127080" in p for p in mdt.status.problems)


@pytest.mark.parametrize("name", NO_MDT_TABLES[:4])
def test_a_table_without_metadata_table(name: str, fixture_tables: dict[str, Path]) -> None:
    mdt = MetadataTable.open(HudiTable.open(fixture_tables[name]))
    assert not mdt.status.available and mdt.status.partitions == () and mdt.status.lagging_instants == ()
    assert mdt.status.problems and "no metadata table" in mdt.status.problems[0]


def test_partitions_listed_but_mdt_folder_gone(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(NONPART_V9)
    shutil.rmtree(copy / ".hoodie" / "metadata")
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert not mdt.status.available and "hoodie.table.metadata.partitions lists" in mdt.status.problems[0]


def test_inflight_partitions_are_never_read(fixture_copy: Callable[[str], Path]) -> None:
    copy = fixture_copy(TRIPS_V8)
    props = copy / ".hoodie" / "hoodie.properties"
    text = props.read_text(encoding="latin-1").replace("hoodie.table.metadata.partitions.inflight=",
                                                       "hoodie.table.metadata.partitions.inflight=record_index")
    props.write_text(text, encoding="latin-1")
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert "record_index" not in mdt.status.partitions and mdt.status.available
    with pytest.raises(MetadataTableError, match="not ready"):
        mdt.record_index(["x"])


def test_hfile_values_carry_the_writer_schema_with_meta_fields(opened: Any) -> None:
    table, mdt = opened(TRIPS_V8)
    (hfile,) = Path(table.base_path, ".hoodie", "metadata", "files").glob("files-*_20251220210130942.hfile")
    reader = HFileReader.open(hfile)
    fields = [f["name"] for f in json.loads(reader.avro_schema or "{}")["fields"]]
    assert fields[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                          "_hoodie_partition_path", "_hoodie_file_name"]
    rec = mdt.records("files", keys=["__all_partitions__"])["__all_partitions__"]
    assert rec["key"] == "__all_partitions__" and rec["type"] == 1


@pytest.mark.parametrize("name", [TRIPS_V8, NONPART_V9, "sample_table.mor.avro.v9_txns_simple_meta"])
def test_point_lookups_agree_with_the_full_merge(name: str, fixture_tables: dict[str, Path]) -> None:
    table = HudiTable.open(fixture_tables[name])
    looked_up = MetadataTable.open(table)                   # no full read cached: lookups go through the HFiles
    full_reader = MetadataTable.open(table)
    for partition in looked_up.status.partitions:
        full = full_reader.records(partition)
        sample = [*sorted(full)[::3], "absent-key"]
        assert looked_up.records(partition, keys=sample) == {k: full[k] for k in sample if k in full}
        prefixes = sorted({k[:5] for k in sample})
        assert looked_up.records(partition, prefixes=prefixes) == \
            {k: v for k, v in full.items() if any(k.startswith(p) for p in prefixes)}


def test_a_rollback_command_block_drops_the_target_instants_blocks(fixture_copy: Callable[[str], Path]) -> None:
    from hive_bridge.testing.logfile_writer import rollback_block

    copy = fixture_copy(TRIPS_V8)
    (log,) = (copy / ".hoodie" / "metadata" / "files").glob(".files-0000-0_20251220210130911.log.*")
    with log.open("ab") as fh:                              # a rollback, by the same (trusted) instant
        fh.write(rollback_block("20251220210130911", "20251220210130911"))
    mdt = MetadataTable.open(HudiTable.open(copy))
    files = mdt.files("city=sao_paulo")
    assert files is not None and not any("20251220210130911" in f for f in files)
    assert len(files) == 3


def _files_rec(entries: dict[str, tuple[int, bool]]) -> dict[str, Any]:
    return {"key": "p", "type": 2,
            "filesystemMetadata": {n: {"size": s, "isDeleted": d} for n, (s, d) in entries.items()}}


def _stats_rec(lo: int | None, hi: int | None, count: int, *, tight: bool = False,
               deleted: bool = False) -> dict[str, Any]:
    def wrap(v: int | None) -> Any:
        return None if v is None else ("org.apache.hudi.avro.model.LongWrapper", {"value": v})

    return {"key": "k", "type": 3, "ColumnStatsMetadata": {
        "fileName": "f", "columnName": "c", "minValue": wrap(lo), "maxValue": wrap(hi), "valueCount": count,
        "nullCount": 0, "totalSize": 1, "totalUncompressedSize": 1, "isDeleted": deleted, "isTightBound": tight}}


def test_records_combine_as_hoodie_metadata_payload() -> None:
    from hive_bridge.mdt.records import combine_records, is_tombstone

    merged = combine_records(_files_rec({"a": (10, False), "b": (5, False)}),
                      _files_rec({"a": (0, True), "b": (7, False), "c": (0, True)}))
    # a tombstone cancels an earlier file and is dropped; sizes take the max; a tombstone without an earlier
    # entry is kept (it may meet the file in an older part of the merge)
    assert merged["filesystemMetadata"] == {"b": {"size": 7, "isDeleted": False},
                                            "c": {"size": 0, "isDeleted": True}}
    widened = combine_records(_stats_rec(5, 9, 2), _stats_rec(1, 6, 3))["ColumnStatsMetadata"]
    assert (widened["minValue"][1]["value"], widened["maxValue"][1]["value"], widened["valueCount"]) == (1, 9, 5)
    tight = combine_records(_stats_rec(5, 9, 2), _stats_rec(6, 7, 1, tight=True))["ColumnStatsMetadata"]
    assert (tight["minValue"][1]["value"], tight["maxValue"][1]["value"], tight["valueCount"]) == (6, 7, 1)
    none_side = combine_records(_stats_rec(None, None, 0), _stats_rec(3, 4, 1))["ColumnStatsMetadata"]
    assert (none_side["minValue"][1]["value"], none_side["maxValue"][1]["value"]) == (3, 4)
    gone = combine_records(_stats_rec(5, 9, 2), _stats_rec(None, None, 0, deleted=True))
    assert is_tombstone(gone)
    back = combine_records(gone, _stats_rec(1, 2, 1))
    assert not is_tombstone(back) and back["ColumnStatsMetadata"]["valueCount"] == 1
    ri_old = {"key": "k", "type": 5, "recordIndexMetadata": {"partitionName": "a"}}
    ri_new = {"key": "k", "type": 5, "recordIndexMetadata": {"partitionName": "b"}}
    assert combine_records(ri_old, ri_new) is ri_new


def test_lance_partition_stats_do_not_bound_the_rows_so_they_are_not_used(
        fixture_copy: Callable[[str], Path], fixture_tables: dict[str, Path]) -> None:
    name = "sample_table.mor.avro.v9_lance_nonhivestyle"
    assert "partition_stats" not in MetadataTable.open(HudiTable.open(fixture_tables[name])).status.partitions
    # on a copy that claims parquet base files, the partition stats are read: they cover the log files only
    copy = fixture_copy(name)
    props = copy / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text(encoding="latin-1").replace("hoodie.table.base.file.format=LANCE",
                                                                 "hoodie.table.base.file.format=PARQUET"),
                     encoding="latin-1")
    mdt = MetadataTable.open(HudiTable.open(copy))
    rows = _merged_rows(str(fixture_tables[name]))
    escaping = 0
    for e in mdt.partition_stats(["event_type"]):
        mine = rows.filter(pc.equal(rows.column("_hoodie_partition_path"), e.partition))
        values = [v for v in mine.column("event_type").to_pylist() if v is not None]
        escaping += any(not (e.min <= v <= e.max) for v in values)
    assert escaping


@pytest.mark.parametrize("name", MDT_TABLES)
def test_mdt_slices_are_the_file_system_views_slices(name: str, opened: Any) -> None:
    """The MDT read as a table whose partitions are its folders (what hudi-rs does, giving it a partition field)
    by the data table's FileSystemView: the same latest slices (the view orders logs by instant, the MDT by
    completion; on the fixtures they agree)."""
    import dataclasses

    from hive_bridge.layout.fsview import FileSystemView

    _, mdt = opened(name)
    props = dataclasses.replace(mdt.mdt_properties, partition_fields=["partition"])
    view = FileSystemView(props, mdt.mdt_timeline)
    expected = {(s.partition_path, s.file_id, s.base_file.name if s.base_file else None,
                 tuple(lf.name for lf in s.log_files))
                for s in view.latest_file_slices() if s.partition_path in mdt.status.partitions}
    got = {(partition, s.file_id, s.base and Path(s.base).name, tuple(Path(p).name for p in s.logs))
           for partition, slices in mdt._slices.items() for s in slices}
    assert got == expected


def test_bloom_filters_partition_serves_the_files_filter(fixture_copy: Callable[[str], Path]) -> None:
    """No fixture has a bloom_filters partition: one is added to a copy, written as Hudi writes it (the value's
    ``bloomFilter`` is the UTF-8 bytes of the serialized base64 text, keyed by partition + file hash), in a base
    HFile of the MDT's completed compaction."""
    import io

    import fastavro

    from hive_bridge.mdt.keys import bloom_filter_key
    from hive_bridge.testing.hfile_writer import write_hfile

    copy = fixture_copy(TRIPS_V8)
    mdt_dir = copy / ".hoodie" / "metadata"
    (files_hfile,) = (mdt_dir / "files").glob("files-*_20251220210130942.hfile")
    schema_json = HFileReader.open(files_hfile).avro_schema or ""
    parsed = fastavro.parse_schema(json.loads(schema_json))
    base = next((copy / "city=chennai").glob("*.parquet"))
    serialized = pq.read_metadata(base).metadata[b"org.apache.hudi.bloomfilter"]
    entries = []
    for partition, name, deleted in [("city=chennai", base.name, False), ("city=chennai", "gone.parquet", True)]:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, {
            "key": "", "type": 4,
            "BloomFilterMetadata": {"type": "DYNAMIC_V0", "timestamp": "20251220210130942",
                                    "bloomFilter": serialized, "isDeleted": deleted}})
        entries.append((bloom_filter_key(partition, name).encode(), buf.getvalue()))
    (mdt_dir / "bloom_filters").mkdir()
    (mdt_dir / "bloom_filters" / "bloom-filters-0000-0_0-1-1_20251220210130942.hfile").write_bytes(
        write_hfile(sorted(entries), file_info={b"schema": schema_json.encode()}))
    props = copy / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text(encoding="latin-1").replace(
        "hoodie.table.metadata.partitions=", "hoodie.table.metadata.partitions=bloom_filters,"), encoding="latin-1")
    mdt = MetadataTable.open(HudiTable.open(copy))
    assert "bloom_filters" in mdt.status.partitions
    bloom = mdt.bloom_filter("city=chennai", base.name)
    assert bloom is not None and bloom.type_code == "DYNAMIC_V0"
    for key in pq.read_table(base, columns=["_hoodie_record_key"]).column(0).to_pylist():
        assert bloom.might_contain(key)
    assert mdt.bloom_filter("city=chennai", "gone.parquet") is None        # a tombstone
    assert mdt.bloom_filter("city=sao_paulo", base.name) is None           # keyed by partition too
