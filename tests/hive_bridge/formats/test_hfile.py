"""HFiles of the metadata table: every MDT base file and log HFILE_DATA block of the real fixtures reads, in key
order, with working point and prefix lookups; its values decode to the records Hudi wrote (checked against the
data files themselves and against hudi-rs); damage always raises HFileError; synthetic files cover what the
fixtures do not (several blocks, multi-level indexes, checksums, codec NONE)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import struct
import uuid
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.hfile import (
    BLOCK_HEADER_SIZE,
    TRAILER_MAGIC,
    TRAILER_SIZE,
    ChecksumType,
    Codec,
    HFileError,
    HFileReader,
    crc32c,
    trailer_problem,
)
from hive_bridge.formats.hfile.reader import decode_metadata_values
from hive_bridge.formats.logfile import BlockType, HeaderKey, read_log_file
from hive_bridge.layout.properties import parse_java_properties
from hive_bridge.testing.hfile_writer import write_hfile

#: fixtures with a metadata table -> its MDT partitions (folders holding base HFiles or log files)
_CFRS = {"column_stats", "files", "record_index"}
_CFPR = _CFRS | {"partition_stats"}
_TXN_IDX = {"secondary_index_merchant_idx", "secondary_index_txn_date_idx"}
MDT_TABLES: dict[str, set[str]] = {
    "quickstart_trips_table.mor.avro.v8_trips_8i3u1d": _CFPR | {"secondary_index_rider_idx"},
    "sample_table.cow.v9_lance_nonpartitioned": _CFRS,
    "sample_table.cow.v9_timebasedkeygen_epochmillis": _CFPR,
    "sample_table.cow.v9_timebasedkeygen_nonhivestyle": _CFPR,
    "sample_table.cow.v9_txns_simple_meta": _CFPR | _TXN_IDX,
    "sample_table.cow.v9_txns_simple_overwrite": _CFPR,
    "sample_table.mor.avro.v9_lance_nonhivestyle": _CFPR,
    "sample_table.mor.avro.v9_nonpartitioned_rollback": _CFRS,
    "sample_table.mor.avro.v9_txns_nonpart_meta": _CFRS | _TXN_IDX,
    "sample_table.mor.avro.v9_txns_simple_meta": _CFPR | _TXN_IDX,
    "sample_table.mor.avro.v9_txns_simple_overwrite": _CFPR,
}
#: MDT partition (folder prefix) -> HoodieMetadataRecord types its records may have
RECORD_TYPES = {"files": {1, 2}, "column_stats": {3}, "bloom_filters": {4}, "record_index": {5},
                "partition_stats": {6}, "secondary_index_": {7}}
ALL_PARTITIONS = b"__all_partitions__"
META_COLUMNS = {"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
                "_hoodie_file_name"}


@dataclass
class MdtHFile:
    """One HFile of a fixture's metadata table: a base file, or the content of one log block."""

    table: str
    table_dir: Path
    partition: str
    path: Path
    block_offset: int | None          # None for a base file
    reader: HFileReader
    schema: str                       # the values' writer schema (file info, or the log block header)
    header_schema: str | None         # log blocks: the SCHEMA header
    entries: list[tuple[bytes, bytes]]
    records: list[dict[str, Any]]

    @property
    def where(self) -> str:
        return f"{self.table}: {self.path.name}" + (f"@{self.block_offset}" if self.block_offset is not None else "")


def _mdt_dir(table_dir: Path) -> Path:
    return table_dir / ".hoodie" / "metadata"


def _partition_type_set(partition: str) -> set[int]:
    for prefix, types in RECORD_TYPES.items():
        if partition == prefix or (prefix.endswith("_") and partition.startswith(prefix)):
            return types
    raise AssertionError(f"unexpected MDT partition {partition}")


@pytest.fixture(scope="module")
def mdt_hfiles(fixture_tables: dict[str, Path]) -> list[MdtHFile]:
    out: list[MdtHFile] = []
    for name, table_dir in sorted(fixture_tables.items()):
        mdt = _mdt_dir(table_dir)
        if not mdt.is_dir():
            continue
        for part in sorted(os.listdir(mdt)):
            if part.startswith(".") or not (mdt / part).is_dir():
                continue
            for fname in sorted(os.listdir(mdt / part)):
                path = mdt / part / fname
                found: list[tuple[int | None, HFileReader, str | None]] = []
                if fname.endswith(".hfile"):
                    found.append((None, HFileReader.open(path), None))
                elif ".log." in fname:
                    for block in read_log_file(path).blocks:
                        if block.block_type == BlockType.HFILE_DATA:
                            found.append((block.offset, HFileReader(block.content, f"{path}@{block.offset}"),
                                          block.header.get(HeaderKey.SCHEMA)))
                for offset, reader, header_schema in found:
                    schema = reader.avro_schema or header_schema
                    assert schema, f"{path}: no schema for the values"
                    entries = list(reader.entries())
                    records = decode_metadata_values([v for _, v in entries], schema)
                    out.append(MdtHFile(name, table_dir, part, path, offset, reader, schema, header_schema,
                                        entries, records))
    return out


def test_fixture_inventory(mdt_hfiles: list[MdtHFile], fixture_tables: dict[str, Path]) -> None:
    """Which fixtures have an MDT and with which partitions, and the facts about their HFiles this reader
    relies on: HFile v3 from both writers (HBase 3.3 with CRC32C, Hudi's own 3.0 without checksums), codec GZ,
    a one-level index, one data block at most, and the file info keys each writer puts."""
    folders = {name: {p.name for p in _mdt_dir(d).iterdir() if p.is_dir() and not p.name.startswith(".")}
               for name, d in fixture_tables.items() if _mdt_dir(d).is_dir()}
    assert folders == MDT_TABLES
    seen: dict[str, set[str]] = defaultdict(set)
    for f in mdt_hfiles:
        seen[f.table].add(f.partition)
    # lance_nonpartitioned's column_stats holds only the (empty) DELETE blocks of its initialisation
    assert dict(seen) == {**MDT_TABLES, "sample_table.cow.v9_lance_nonpartitioned": {"files", "record_index"}}
    for name, parts in MDT_TABLES.items():   # exactly the partitions the data table declares ready
        props = (fixture_tables[name] / ".hoodie" / "hoodie.properties").read_text()
        declared = next(line.split("=", 1)[1] for line in props.splitlines()
                        if line.startswith("hoodie.table.metadata.partitions="))
        assert set(declared.split(",")) == parts, name
    base = [f for f in mdt_hfiles if f.block_offset is None]
    logs = [f for f in mdt_hfiles if f.block_offset is not None]
    assert len(base) == 116 and len(logs) == 380
    assert sum(len(f.entries) for f in mdt_hfiles) == 3615
    versions = Counter((f.reader.trailer.major_version, f.reader.trailer.minor_version) for f in mdt_hfiles)
    assert versions == {(3, 0): 437, (3, 3): 59}
    assert {f.reader.trailer.codec for f in mdt_hfiles} == {Codec.GZ}
    assert {f.reader.trailer.num_data_index_levels for f in mdt_hfiles} == {1}
    assert {f.reader.data_block_count for f in mdt_hfiles} == {0, 1}
    assert {f.reader.trailer.comparator for f in mdt_hfiles} == {"org.apache.hudi.io.storage.HoodieHBaseKVComparator"}
    # base files carry Hudi's bloom filter of their keys in a meta block, log blocks do not
    assert {tuple(f.reader.meta_block_names) for f in base} == {(b"bloomFilter",)}
    assert {tuple(f.reader.meta_block_names) for f in logs} == {()}
    common = {b"KEY_VALUE_VERSION", b"MAX_MEMSTORE_TS_KEY", b"hfile.AVG_KEY_LEN", b"hfile.AVG_VALUE_LEN",
              b"hfile.CREATE_TIME_TS", b"schema"}
    bloom = {b"bloomFilterTypeCode", b"minRecordKey", b"maxRecordKey"}
    for f in mdt_hfiles:
        keys = set(f.reader.file_info)
        has_last = {b"hfile.LASTKEY"} if b"hfile.LASTKEY" in keys else set()
        assert keys == common | has_last | (bloom if f.block_offset is None else set()), f.where
        assert f.reader.file_info[b"KEY_VALUE_VERSION"] == b"\x00\x00\x00\x01"
        assert f.reader.file_info[b"MAX_MEMSTORE_TS_KEY"] == bytes(8)
        if f.entries:
            assert has_last, f.where
        if f.block_offset is None and f.entries:
            assert f.reader.file_info[b"minRecordKey"] == f.entries[0][0], f.where
            assert f.reader.file_info[b"maxRecordKey"] == f.entries[-1][0], f.where
    # HBase's writer (3.3) checksums every block with CRC32C; Hudi's (3.0) writes none
    for f in mdt_hfiles[:40]:
        data = bytes(f.reader._data)
        ck_type = data[24]
        assert ck_type == (ChecksumType.CRC32C if f.reader.trailer.minor_version == 3 else ChecksumType.NULL)


def _check_lookups(reader: HFileReader, entries: list[tuple[bytes, bytes]], where: str) -> None:
    keys = [k for k, _ in entries]
    assert keys == sorted(set(keys)), f"{where}: keys not sorted and unique"
    assert reader.num_entries == len(entries), where
    for k, v in entries:
        assert reader.get(k) == v, f"{where}: get({k!r})"
    absent: list[bytes] = [b"", b"\xff" * 3]
    if keys:
        absent += [keys[0][:-1], keys[-1] + b"\x00", keys[-1] + b"\xff"]
        absent += [a + b"\x00" for a, b in pairwise(keys) if a + b"\x00" != b]
        absent += [b[:-1] + bytes([b[-1] - 1]) + b"\xff" for b in keys if b and b[-1] > 0]
    for k in absent:
        if k not in keys:
            assert reader.get(k) is None, f"{where}: get({k!r}) should miss"
    prefixes = {b"", b"\xff", b"zzzz-none"} | {k[:n] for k in keys[:50] for n in (1, 3, 12, len(k))}
    for p in prefixes:
        assert list(reader.prefix(p)) == [(k, v) for k, v in entries if k.startswith(p)], f"{where}: prefix {p!r}"


def test_every_base_hfile_reads(mdt_hfiles: list[MdtHFile]) -> None:
    base = [f for f in mdt_hfiles if f.block_offset is None]
    assert base
    for f in base:
        _check_lookups(f.reader, f.entries, f.where)
        # a fresh reader answers lookups without a prior scan (the index, not the cache)
        fresh = HFileReader.open(f.path)
        for k, v in f.entries[:: max(1, len(f.entries) // 7)]:
            assert fresh.get(k) == v


def test_every_log_hfile_block_reads(mdt_hfiles: list[MdtHFile]) -> None:
    logs = [f for f in mdt_hfiles if f.block_offset is not None]
    assert logs
    for f in logs:
        _check_lookups(f.reader, f.entries, f.where)
        # Hudi writes the same writer schema in the block header and in the HFile's file info
        assert f.header_schema == f.reader.avro_schema, f.where


def test_record_types_per_partition(mdt_hfiles: list[MdtHFile]) -> None:
    seen: dict[str, Counter[int]] = defaultdict(Counter)
    for f in mdt_hfiles:
        allowed = _partition_type_set(f.partition)
        for (key, _), rec in zip(f.entries, f.records, strict=True):
            assert rec["type"] in allowed, f"{f.where}: {key!r} has type {rec['type']}"
            assert (rec["type"] == 1) == (key == ALL_PARTITIONS), f"{f.where}: {key!r}"
            # Hudi blanks the record's own key field: the HFile key is the record key
            assert rec["key"] == "", f.where
            seen[f.partition.rstrip("_").split("_idx")[0] if f.partition.startswith("secondary") else
                 f.partition][rec["type"]] += 1
    assert {p: set(c) for p, c in seen.items()} == {
        "files": {1, 2}, "column_stats": {3}, "partition_stats": {6}, "record_index": {5},
        "secondary_index_rider": {7}, "secondary_index_merchant": {7}, "secondary_index_txn_date": {7}}


def _data_files(table_dir: Path) -> dict[str, Path]:
    """Every file of the data table outside .hoodie: name -> path."""
    out: dict[str, Path] = {}
    for root, dirs, files in os.walk(table_dir):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for name in files:
            out[name] = Path(root) / name
    return out


def test_files_partition_lists_the_real_data_files(mdt_hfiles: list[MdtHFile]) -> None:
    """Every file a `files` record names (not deleted) is a real file of that partition with that exact size,
    and every partition `__all_partitions__` names is a real folder."""
    checked: Counter[str] = Counter()
    for f in mdt_hfiles:
        if f.partition != "files":
            continue
        for (key, _), rec in zip(f.entries, f.records, strict=True):
            listing = rec["filesystemMetadata"] or {}
            if key == ALL_PARTITIONS:
                for part, meta in listing.items():
                    assert meta["isDeleted"] is False and meta["size"] == 0
                    assert part == "." or (f.table_dir / part).is_dir(), f"{f.where}: partition {part}"
                continue
            folder = f.table_dir if key == b"." else f.table_dir / key.decode()
            for name, meta in listing.items():
                path = folder / name
                if meta["isDeleted"] or not path.exists():
                    continue
                assert path.stat().st_size == meta["size"], f"{f.where}: {path} size"
                checked[f.table] += 1
    # every fixture's files partition named real files, base and log
    assert set(checked) == set(MDT_TABLES)
    assert sum(checked.values()) == 137


def _arrow_comparable(col: pa.ChunkedArray) -> list[Any]:
    t = col.type
    if pa.types.is_timestamp(t):
        col = pc.cast(col.cast(pa.timestamp("us", tz=t.tz)), pa.int64())
    elif pa.types.is_date32(t):
        col = col.cast(pa.int32())
    return [v for v in col.to_pylist() if v is not None]


def _stat_comparable(wrapped: tuple[str, dict[str, Any]], value_type: dict[str, Any] | None) -> Any:
    name, rec = wrapped
    value = rec["value"]
    if name.endswith(".BytesWrapper") and value_type and value_type["typeOrdinal"] == 10:
        scale = int(value_type["additionalInfo"].split(",")[1])
        return Decimal(int.from_bytes(value, "big", signed=True)).scaleb(-scale)
    if name.endswith(".DecimalWrapper"):
        raise AssertionError("DecimalWrapper not seen in the fixtures: add its conversion")
    return value


def test_column_stats_bound_the_real_values(mdt_hfiles: list[MdtHFile]) -> None:
    """Each column_stats entry names a real data file and column; for base parquet files still present its
    min/max bound the file's values, its valueCount is the row count and its nullCount the real null count."""
    bounded = 0
    files_by_table = {f.table: _data_files(f.table_dir) for f in mdt_hfiles if f.partition == "column_stats"}
    columns_by_table: dict[str, set[str]] = {}
    for f in mdt_hfiles:
        if f.partition == "column_stats" and f.table not in columns_by_table:
            props = parse_java_properties((f.table_dir / ".hoodie" / "hoodie.properties").read_text())
            schema = json.loads(props["hoodie.table.create.schema"])
            columns_by_table[f.table] = {fld["name"] for fld in schema["fields"]} | META_COLUMNS
    for f in mdt_hfiles:
        if f.partition != "column_stats":
            continue
        files = files_by_table[f.table]
        wrapped = decode_metadata_values([v for _, v in f.entries], f.schema, wrapper_names=True)
        for rec in wrapped:
            cs = rec["ColumnStatsMetadata"]
            assert cs["fileName"] in files, f"{f.where}: {cs['fileName']} is not a data file"
            assert cs["columnName"] in columns_by_table[f.table], f"{f.where}: column {cs['columnName']}"
            if not cs["fileName"].endswith(".parquet") or cs["minValue"] is None:
                continue
            table = pq.read_table(files[cs["fileName"]], columns=[cs["columnName"]])
            col = table.column(0)
            real = _arrow_comparable(col)
            assert cs["valueCount"] == table.num_rows, f"{f.where}: {cs}"
            assert cs["nullCount"] == col.null_count, f"{f.where}: {cs}"
            lo = _stat_comparable(cs["minValue"], cs.get("valueType"))
            hi = _stat_comparable(cs["maxValue"], cs.get("valueType"))
            assert lo <= min(real) and max(real) <= hi, f"{f.where}: {cs['columnName']} {lo}..{hi} vs real"
            bounded += 1
    assert bounded >= 500


def test_column_stats_keys_name_their_file(mdt_hfiles: list[MdtHFile]) -> None:
    """A column_stats key ends in base64(MD5(file name)), and its first 12 characters (the column hash) are the
    same for every entry of one column: the prefix a column's stats are found by."""
    import base64
    import hashlib

    column_prefix: dict[tuple[str, str], set[bytes]] = defaultdict(set)
    for f in mdt_hfiles:
        if f.partition != "column_stats":
            continue
        for (key, _), rec in zip(f.entries, f.records, strict=True):
            cs = rec["ColumnStatsMetadata"]
            digest = base64.b64encode(hashlib.md5(cs["fileName"].encode()).digest())
            assert key.endswith(digest) and len(key) == 12 + 12 + 24, f"{f.where}: {key!r}"
            column_prefix[(f.table, cs["columnName"])].add(key[:12])
            stats = list(f.reader.prefix(key[:12]))
            assert (key, f.reader.get(key)) in stats
    assert column_prefix and all(len(p) == 1 for p in column_prefix.values())


def test_record_index_points_at_real_file_groups(mdt_hfiles: list[MdtHFile]) -> None:
    """A record_index entry's file id (UUID from its high/low bits, plus the file index) is a file group of the
    partition it names; a secondary index key is `<value>$<record key>` of a key the record index knows."""
    record_keys: dict[str, set[bytes]] = defaultdict(set)
    checked = 0
    for f in mdt_hfiles:
        if f.partition != "record_index":
            continue
        files = _data_files(f.table_dir)
        groups = {n.lstrip(".").split("_")[0] for n in files}
        for (key, _), rec in zip(f.entries, f.records, strict=True):
            ri = rec["recordIndexMetadata"]
            record_keys[f.table].add(key)
            if ri["fileIdEncoding"] == 0:
                hi, lo = ri["fileIdHighBits"] & (1 << 64) - 1, ri["fileIdLowBits"] & (1 << 64) - 1
                file_id = f"{uuid.UUID(int=hi << 64 | lo)}-{ri['fileIndex']}"
            else:
                file_id = ri["fileId"]
            assert file_id in groups, f"{f.where}: {key!r} -> {file_id}"
            checked += 1
    assert checked >= 100
    for f in mdt_hfiles:
        if f.partition.startswith("secondary_index_"):
            for key, _ in f.entries:
                _, sep, record_key = key.rpartition(b"$")
                assert sep and record_key in record_keys[f.table], f"{f.where}: {key!r}"


# ---------------------------------------------------------------------------------------------- hudi-rs oracle


def _inline_named_types(schema: Any) -> Any:
    """The same Avro schema with every reference to a named type replaced by a renamed copy of its definition
    (binary-compatible; hudi-rs 0.5 cannot convert schemas with references to Arrow)."""
    named: dict[str, Any] = {}
    copies = [0]

    def walk(s: Any, ns: str | None) -> Any:
        if isinstance(s, str):
            full = s if s in named else f"{ns}.{s}" if ns and f"{ns}.{s}" in named else None
            if full is None:
                return s
            copies[0] += 1
            clone = json.loads(json.dumps(named[full]))
            clone["name"] = clone["name"].split(".")[-1] + f"_ref{copies[0]}"
            return define(clone, ns, register=False)
        if isinstance(s, list):
            return [walk(x, ns) for x in s]
        if isinstance(s, dict):
            t = s.get("type")
            if t in ("record", "enum", "fixed"):
                return define(s, ns)
            if t == "array":
                return {**s, "items": walk(s["items"], ns)}
            if t == "map":
                return {**s, "values": walk(s["values"], ns)}
            if isinstance(t, (dict, list)):
                return {**s, "type": walk(t, ns)}
        return s

    def define(s: dict[str, Any], ns: str | None, register: bool = True) -> Any:
        ns2 = s.get("namespace", ns)
        full = s["name"] if "." in s["name"] else f"{ns2}.{s['name']}" if ns2 else s["name"]
        if register:
            named[full] = json.loads(json.dumps(s))
            named.setdefault(s["name"], named[full])
        if s["type"] == "record":
            return {**s, "fields": [{**fld, "type": walk(fld["type"], ns2)} for fld in s["fields"]]}
        return s

    return walk(schema, None)


def _plain(value: Any) -> Any:
    """Arrow's to_pylist gives maps as lists of pairs; fastavro gives dicts."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
        return {k: _plain(v) for k, v in value}
    if isinstance(value, list) and not value:
        return {}
    return value


def test_hudi_rs_reads_the_same_records(fixture_tables: dict[str, Path], mdt_hfiles: list[MdtHFile],
                                        tmp_path: Path) -> None:
    """hudi-rs reads MDT base HFiles (not MDT log files: "Unexpected HFile records in regular table log file")
    once the MDT timeline's schema has no named-type references (its Avro-to-Arrow conversion panics on them):
    on a copy with the commit metadata schema inlined, every record equals ours (key from the HFile key)."""
    hudi = pytest.importorskip("hudi")
    ours = {f.path: f for f in mdt_hfiles if f.block_offset is None}
    compared = Counter[str]()
    for name in MDT_TABLES:
        mdt = tmp_path / name / ".hoodie" / "metadata"       # hudi-rs tells an MDT by this path ending
        shutil.copytree(_mdt_dir(fixture_tables[name]), mdt)
        for instant in glob.glob(str(mdt / ".hoodie" / "timeline" / "*commit")):
            with open(instant, "rb") as fh:
                avro = fastavro.reader(fh)
                writer_schema, commits = avro.writer_schema, list(avro)
            for commit in commits:
                assert isinstance(commit, dict)
                extra = commit.get("extraMetadata") or {}
                if "schema" in extra:
                    extra["schema"] = json.dumps(_inline_named_types(json.loads(extra["schema"])))
            with open(instant, "wb") as fh:
                fastavro.writer(fh, writer_schema, commits)
        try:
            reader = hudi.HudiTableBuilder.from_base_uri(str(mdt)).build().create_file_group_reader_with_options()
        except BaseException as exc:  # hudi-rs panics (PanicException derives from BaseException)
            pytest.fail(f"{name}: hudi-rs cannot open the patched MDT: {type(exc).__name__}: {exc}")
        assert reader.is_metadata_table
        src_mdt = _mdt_dir(fixture_tables[name])
        for path in sorted(src_mdt.glob("*/*.hfile")):
            rel = str(path.relative_to(src_mdt))
            try:
                rows = reader.read_file_slice_from_paths(rel, []).to_pylist()
            except BaseException as exc:
                pytest.fail(f"{name}/{rel}: hudi-rs: {type(exc).__name__}: {exc}")
            mine = ours[path]
            expected = [{**rec, "key": k.decode()} for (k, _), rec in zip(mine.entries, mine.records, strict=True)]
            assert [_plain(r) for r in rows] == [_plain(r) for r in expected], mine.where
            compared[name] += 1
    assert sum(compared.values()) == 116 and set(compared) == set(MDT_TABLES)


# ---------------------------------------------------------------------------------------------- synthetic files


def _pairs(n: int, width: int = 6) -> list[tuple[bytes, bytes]]:
    return [(f"k{i:0{width}d}".encode(), f"value-{i}-".encode() * (i % 5 + 1)) for i in range(n)]


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZ])
@pytest.mark.parametrize("checksum", list(ChecksumType))
@pytest.mark.parametrize("levels", [1, 2, 3])
def test_synthetic_round_trip(codec: Codec, checksum: ChecksumType, levels: int) -> None:
    pairs = [*_pairs(700), (b"k\xff\xfe", b""), (b"l", b"\x00" * 40)]
    data = write_hfile(pairs, codec=codec, checksum=checksum, bytes_per_checksum=97, block_size=300,
                       index_levels=levels, index_fanout=4, file_info={b"schema": b"{}"})
    r = HFileReader(data, "synthetic")
    assert r.data_block_count > 50 and r.trailer.num_data_index_levels == levels
    assert list(r.entries()) == pairs
    assert r.avro_schema == "{}"
    _check_lookups(r, pairs, "synthetic")
    assert [k for k, _ in r.prefix(b"k00012")] == [f"k{i:06d}".encode() for i in range(120, 130)]


def test_synthetic_tags_mvcc_and_meta_blocks() -> None:
    pairs = _pairs(50)
    data = write_hfile(pairs, tags=True, meta_blocks={b"bloomFilter": b"bits" * 100, b"other": b""},
                       block_size=128, minor_version=3)
    r = HFileReader(data)
    assert list(r.entries()) == pairs
    assert r.meta_block(b"bloomFilter") == b"bits" * 100 and r.meta_block(b"other") == b""
    assert r.meta_block(b"missing") is None
    assert r.trailer.minor_version == 3


def test_synthetic_empty_file() -> None:
    r = HFileReader(write_hfile([]))
    assert r.num_entries == 0 and list(r.entries()) == [] and r.get(b"x") is None and list(r.prefix(b"")) == []
    assert r.avro_schema is None


def test_crc32c_known_answer() -> None:
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c(b"") == 0


def _patch_trailer(data: bytes, field: int, value: int) -> bytes:
    """``data`` with trailer field ``field`` (a varint field) replaced, the trailer re-encoded."""
    from hive_bridge.formats.hfile.blocks import pb_fields, pb_varint
    from hive_bridge.testing.hfile_writer import pb_field, pb_varint_bytes

    base = len(data) - TRAILER_SIZE
    t = data[base:]
    n, pos = pb_varint(t, 8, len(t), base)
    fields = pb_fields(t, pos, pos + n, base)
    body = b"".join(pb_field(num, value if num == field else v) for num, _, v in fields)
    trailer = t[:8] + pb_varint_bytes(len(body)) + body
    return data[:base] + trailer + bytes(TRAILER_SIZE - 4 - len(trailer)) + t[-4:]


@pytest.mark.parametrize("codec", [Codec.LZO, Codec.SNAPPY, Codec.LZ4, Codec.BZIP2, Codec.ZSTD, 9])
def test_unsupported_codecs_are_named(codec: int) -> None:
    data = _patch_trailer(write_hfile(_pairs(3)), 12, int(codec))
    with pytest.raises(HFileError, match=f"compression codec {Codec(codec).name if codec != 9 else '#9'}"):
        HFileReader(data, "x.hfile")


def test_versions_and_comparators_other_than_hudis_are_refused() -> None:
    data = write_hfile(_pairs(3))
    v2 = data[:-4] + b"\x03\x00\x00\x02"
    with pytest.raises(HFileError, match=r"version 2\.3 is not supported"):
        HFileReader(v2)
    meta = write_hfile(_pairs(3), comparator="org.apache.hadoop.hbase.CellComparatorImpl$MetaCellComparator")
    with pytest.raises(HFileError, match="MetaCellComparator"):
        HFileReader(meta)


def test_open_errors_are_hfile_errors(tmp_path: Path) -> None:
    with pytest.raises(HFileError, match="cannot read HFile"):
        HFileReader.open(tmp_path / "missing.hfile")
    with pytest.raises(HFileError, match="cannot read HFile"):
        HFileReader.open(tmp_path)
    (tmp_path / "tiny.hfile").write_bytes(b"DATABLK*")
    with pytest.raises(HFileError, match=r"tiny\.hfile: byte 0: file of 8 bytes is shorter than"):
        HFileReader.open(tmp_path / "tiny.hfile")
    assert issubclass(HFileError, HudiTableError)


def test_a_file_on_object_storage_needs_its_storage(tmp_path: Path) -> None:
    """The reader is handed its Storage: a URI without one is refused (no storage looked up by location); a
    local path needs none."""
    with pytest.raises(HFileError, match=r"^s3://bucket/t/f\.hfile: .*Storage \(none given\)"):
        HFileReader.open("s3://bucket/t/f.hfile")
    path = tmp_path / "f.hfile"
    path.write_bytes(write_hfile(_pairs(3)))
    assert list(HFileReader.open(path).entries()) == _pairs(3)


def test_trailer_problem_checks_a_files_tail() -> None:
    data = write_hfile(_pairs(3))
    assert trailer_problem(data[-TRAILER_SIZE:], len(data)) is None
    assert trailer_problem(data[-100:], 100) == "HFile of 100 bytes is shorter than its trailer (truncated)"
    damaged = data[:-TRAILER_SIZE] + b"X" + data[-TRAILER_SIZE + 1:]
    assert trailer_problem(damaged[-TRAILER_SIZE:], len(damaged)) == \
        "no HFile trailer at the end of the file (truncated or damaged)"
    assert TRAILER_MAGIC == b'TRABLK"$'


def test_bad_values_raise_hfile_errors(mdt_hfiles: list[MdtHFile]) -> None:
    f = next(f for f in mdt_hfiles if f.partition == "column_stats" and f.entries)
    value = f.entries[0][1]
    for bad in (value[:-1], value[: len(value) // 2], value + b"\x00", b"\xff" * 40, b""):
        with pytest.raises(HFileError, match="value 0"):
            decode_metadata_values([bad], f.schema)
    with pytest.raises(HFileError, match="schema"):
        decode_metadata_values([value], "{not json")


# ---------------------------------------------------------------------------------------------- damage


def _read_all(data: bytes) -> tuple[Any, ...]:
    """Everything a caller can get out of a file: raises HFileError when damage is detected."""
    r = HFileReader(data, "damaged")
    entries = list(r.entries())
    schema = r.avro_schema
    values = decode_metadata_values([v for _, v in entries], schema) if schema else None
    metas = tuple(r.meta_block(n) for n in r.meta_block_names)
    return entries, values, dict(r.file_info), metas, [r.get(k) for k, _ in entries]


def _blocks(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(offset, on-disk size with header, checksum type) of every block before the trailer."""
    pos = 0
    while pos < len(data) - TRAILER_SIZE:
        _, on_disk, _, _, ck, _, _ = struct.unpack_from(">8siiqBii", data, pos)
        yield pos, BLOCK_HEADER_SIZE + on_disk, ck
        pos += BLOCK_HEADER_SIZE + on_disk


def _harmless_positions(data: bytes, mask: int) -> set[int]:
    """Bytes whose change no reader can notice, and which change nothing it answers: the trailer's minor
    version and its unused size fields (uncompressed index size, total uncompressed bytes) and, in an empty
    file, its first/last data block offsets; each block's previous-block offset, and, without a checksum, its
    bytes-per-checksum; each gzip header's MTIME, XFL, OS and FTEXT flag (see also `_same_deflate`)."""
    from hive_bridge.formats.hfile.blocks import pb_fields, pb_varint

    out: set[int] = set()
    base = len(data) - TRAILER_SIZE
    out.add(len(data) - 4)
    t = data[base:]
    n, pos = pb_varint(t, 8, len(t), base)
    fields = pb_fields(t, pos, pos + n, base)
    empty = dict((num, v) for num, _, v in fields).get(7) == 0
    for i, (num, at, _) in enumerate(fields):
        end = fields[i + 1][1] if i + 1 < len(fields) else pos + n
        if num in (3, 4) or (empty and num in (9, 10)):
            out.update(range(base + at + 1, base + end))
    for offset, _, ck in _blocks(data):
        out.update(range(offset + 16, offset + 24))
        if ck == ChecksumType.NULL:
            out.update(range(offset + 25, offset + 29))
        gz = offset + BLOCK_HEADER_SIZE
        if data[gz:gz + 2] == b"\x1f\x8b":
            out.update(range(gz + 4, gz + 10))
            if mask == 0x01:
                out.add(gz + 3)
    return out


def _same_deflate(data: bytes, pos: int, mask: int) -> bool:
    """Whether ``pos`` lies in the deflate data of a block without a checksum, and the flipped gzip member
    inflates to the very same bytes (deflate has such bits, e.g. padding after its final block)."""
    for offset, _, ck in _blocks(data):
        gz = offset + BLOCK_HEADER_SIZE
        end = offset + struct.unpack_from(">i", data, offset + 29)[0]
        if ck == ChecksumType.NULL and data[gz:gz + 2] == b"\x1f\x8b" and gz + 10 <= pos < end - 8:
            member = bytearray(data[gz:end])
            member[pos - gz] ^= mask
            try:
                return zlib.decompress(bytes(member), 31) == zlib.decompress(data[gz:end], 31)
            except zlib.error:
                return False
    return False


def _flip_positions(data: bytes) -> list[int]:
    """Every byte of each block's header, gzip header and trailer and checksums, every 4th byte of its
    deflate data; the trailer's first 256 bytes and version, every 61st byte of its padding."""
    out: list[int] = []
    for offset, size, _ in _blocks(data):
        data_end = offset + struct.unpack_from(">i", data, offset + 29)[0]
        out += range(offset, offset + BLOCK_HEADER_SIZE + 10)
        out += range(offset + BLOCK_HEADER_SIZE + 10, data_end - 8, 4)
        out += range(data_end - 8, offset + size)
    trailer = len(data) - TRAILER_SIZE
    return out + list(range(trailer, trailer + 256)) + list(range(trailer + 256, len(data) - 4, 61)) + list(
        range(len(data) - 4, len(data)))


@pytest.fixture(scope="module")
def damage_subjects(mdt_hfiles: list[MdtHFile]) -> list[tuple[str, bytes]]:
    """The smallest non-empty base file of each writer, and one log block's HFile."""
    out = []
    for minor in (0, 3):
        f = min((f for f in mdt_hfiles if f.block_offset is None and f.entries
                 and f.reader.trailer.minor_version == minor), key=lambda f: f.path.stat().st_size)
        out.append((f.where, f.path.read_bytes()))
    f = next(f for f in mdt_hfiles if f.block_offset is not None and len(f.entries) > 2)
    out.append((f.where, bytes(f.reader._data)))
    return out


def test_flipped_bytes_raise_or_change_nothing(damage_subjects: list[tuple[str, bytes]]) -> None:
    """Bytes flipped (two masks) all over the file (`_flip_positions`): HFileError, never another exception; the file reads exactly as before only at the positions
    `_harmless_positions` and `_same_deflate` name, because checksums (HBase), gzip CRCs, zero-filled checksum room and padding,
    and cross-checked sizes, offsets and counts catch everything else."""
    for where, data in damage_subjects:
        good = _read_all(data)
        for mask in (0x01, 0x80):
            harmless = _harmless_positions(data, mask)
            unnoticed = []
            for pos in _flip_positions(data):
                damaged = bytearray(data)
                damaged[pos] ^= mask
                try:
                    got = _read_all(bytes(damaged))
                except HFileError:
                    continue
                assert got == good, f"{where}: byte {pos} ^ {mask:#x} changed the answer without an error"
                unnoticed.append(pos)
            unexplained = [p for p in unnoticed if p not in harmless and not _same_deflate(data, p, mask)]
            assert not unexplained, f"{where}: undetected flips at {unexplained}"


def test_truncated_files_raise(damage_subjects: list[tuple[str, bytes]]) -> None:
    for _, data in damage_subjects:
        cuts = sorted({0, 1, 33, len(data) - TRAILER_SIZE, len(data) - 1, len(data) - 4, len(data) - 100}
                      | set(range(0, len(data), max(1, len(data) // 40))))
        for n in cuts:
            for damaged in (data[:n], data[len(data) - n:] if n else b"", data[:n] + bytes(len(data) - n)):
                if damaged == data:
                    continue
                with pytest.raises(HFileError):
                    _read_all(damaged)


def test_damaged_synthetic_blocks_are_caught() -> None:
    """Multi-block files: a block whose checksum fails is refused when read (lazily: other blocks still
    answer), and the error names the file, the byte and the checksum."""
    pairs = _pairs(400)
    data = write_hfile(pairs, checksum=ChecksumType.CRC32C, block_size=256, codec=Codec.NONE)
    r = HFileReader(data, "multi.hfile")
    offsets = [o for o, _, _ in _blocks(data)]
    victim = offsets[3]
    damaged = bytearray(data)
    damaged[victim + BLOCK_HEADER_SIZE + 8 + 19 + 3] ^= 0x10      # a value byte: "value-..." -> "valfe-..."
    d = HFileReader(bytes(damaged), "multi.hfile")
    assert d.get(pairs[0][0]) == pairs[0][1]
    victim_key = r._block(3)[0][0]
    with pytest.raises(HFileError, match=rf"multi\.hfile: byte {victim}: CRC32C checksum mismatch"):
        d.get(victim_key)
    with pytest.raises(HFileError):
        list(d.entries())
    # the checksum is the only thing that notices a changed byte of an uncompressed block
    assert HFileReader(bytes(damaged), verify_checksums=False).get(victim_key) is not None
    assert list(HFileReader(bytes(damaged), verify_checksums=False).entries()) != pairs
    # without checksum or compression a changed value byte cannot be detected: it reads differently
    plain = write_hfile(pairs, checksum=ChecksumType.NULL, block_size=256, codec=Codec.NONE)
    at = plain.index(pairs[0][1])
    changed = bytearray(plain)
    changed[at] ^= 0x01
    assert HFileReader(bytes(changed)).get(pairs[0][0]) != pairs[0][1]


def test_inconsistent_counts_and_orders_are_caught() -> None:
    pairs = _pairs(30)
    good = write_hfile(pairs, block_size=64)
    wrong_count = _patch_trailer(good, 7, 31)
    r = HFileReader(wrong_count)
    assert r.get(pairs[5][0]) == pairs[5][1]           # a lookup cannot know
    with pytest.raises(HFileError, match="trailer says 31 entries, the data blocks hold 30"):
        list(r.entries())
    with pytest.raises(HFileError, match="the index has"):
        HFileReader(_patch_trailer(good, 7, 0))
    unsorted = write_hfile([(b"b", b"1"), (b"c", b"2")], block_size=1 << 20, codec=Codec.NONE)
    swapped = unsorted.replace(b"\x00\x01b\x00", b"\x00\x01d\x00", 1)
    with pytest.raises(HFileError, match=r"does not sort after|last key"):
        list(HFileReader(swapped).entries())
    with pytest.raises(ValueError, match="sorted and unique"):
        write_hfile([(b"b", b""), (b"a", b"")])


def test_gzip_flip_detection_depends_on_what_changed() -> None:
    """Precisely what gzip protects in a block without a block checksum: its CRC32 and size trailer always, the
    deflate data unless the changed bit decodes to the same bytes (deflate has such bits), not the header's
    MTIME/XFL/OS. No flip ever changes an answer silently."""
    pairs = _pairs(20)
    data = write_hfile(pairs, codec=Codec.GZ, checksum=ChecksumType.NULL)
    gz = BLOCK_HEADER_SIZE
    assert data[gz:gz + 2] == b"\x1f\x8b"
    for pos in range(gz + 4, gz + 10):
        changed = bytearray(data)
        changed[pos] ^= 0xFF
        assert list(HFileReader(bytes(changed)).entries()) == pairs
    data_size = struct.unpack_from(">i", data, 29)[0]
    for pos in range(data_size - 8, data_size):
        changed = bytearray(data)
        changed[pos] ^= 0x04
        with pytest.raises(HFileError, match="gzip"):
            list(HFileReader(bytes(changed)).entries())
    raised = 0
    for pos in range(gz + 10, data_size - 8):
        for mask in (0x01, 0x10, 0x80):
            changed = bytearray(data)
            changed[pos] ^= mask
            try:
                assert list(HFileReader(bytes(changed)).entries()) == pairs
            except HFileError:
                raised += 1
    assert raised >= 0.9 * 3 * (data_size - 8 - gz - 10)


def test_hfile_error_messages_name_file_offset_and_problem(damage_subjects: list[tuple[str, bytes]]) -> None:
    data = damage_subjects[0][1]
    bad = bytearray(data)
    bad[len(data) - TRAILER_SIZE] ^= 0xFF
    with pytest.raises(HFileError, match=rf"^f\.hfile: byte {len(data) - TRAILER_SIZE}: trailer magic"):
        HFileReader(bytes(bad), "f.hfile")
    info_offset = HFileReader(data).trailer.file_info_offset
    bad = bytearray(data)
    bad[info_offset] ^= 0xFF
    with pytest.raises(HFileError, match=rf"^f\.hfile: byte {info_offset}: block magic"):
        HFileReader(bytes(bad), "f.hfile")



def test_prefix_cells_equal_the_prefix_scan(mdt_hfiles: list[MdtHFile]) -> None:
    """The block-sliced prefix read as arrays (what the column statistics read uses) returns what the
    entry-by-entry scan returns, for prefixes of every length of the fixtures' keys, absent ones and the empty
    prefix."""
    checked = 0
    for h in mdt_hfiles:
        keys = [k for k, _ in h.entries]
        prefixes = {b"", b"\xff", b"zz"} | {k[:n] for k in keys[:: max(1, len(keys) // 7)] for n in (1, 4, 12, 24)}
        for p in prefixes:
            scanned = list(h.reader.prefix(p))
            cells = h.reader.prefix_cells(p)
            assert list(zip(cells.keys(), cells.values(), strict=True)) == scanned, (h.path, p)
            checked += bool(scanned)
    assert checked > 50


@pytest.mark.parametrize("codec", [Codec.NONE, Codec.GZ])
@pytest.mark.parametrize("tags", [False, True])
def test_prefix_cells_across_blocks_and_ff_bytes(codec: Codec, tags: bool) -> None:
    """Many blocks (read ahead on the pool when compressed), keys of different lengths (one a prefix of the
    next), 0xFF bytes around the prefix's upper bound, and cells with tags (decoded the careful way)."""
    keys = sorted({bytes([a, b]) + bytes([c]) * n for a in (0x41, 0xFE, 0xFF) for b in (0x00, 0x7F, 0xFF)
                   for c in (0, 0xFF) for n in (0, 3)})
    data = write_hfile([(k, k * 20) for k in keys], block_size=64, codec=codec, tags=tags)
    reader = HFileReader(data, "t")
    assert reader.data_block_count > 3
    for p in [b"", b"\x41", b"\xff", b"\xff\xff", b"\xfe\xff", b"\xff\x7f", b"\x41\x00\x00", b"\x42"]:
        cells = reader.prefix_cells(p)
        ks = cells.keys()
        assert ks == [k for k in keys if k.startswith(p)], p
        assert cells.values() == [k * 20 for k in ks]
        assert len(cells) == len(ks)


def test_prefix_cells_report_a_damaged_block_read_ahead() -> None:
    """A block inflated on the read-ahead pool that turns out corrupt raises the reader's error (file, byte,
    what), not the thread's."""
    keys = [f"k{i:05d}".encode() for i in range(400)]
    data = bytearray(write_hfile([(k, k * 8) for k in keys], block_size=512, codec=Codec.GZ))
    reader = HFileReader(bytes(data), "t.hfile")
    third = reader._data_index[2]
    data[third.offset + BLOCK_HEADER_SIZE + 20] ^= 0xFF
    with pytest.raises(HFileError, match=r"^t\.hfile: byte \d+: DATABLK\* block at byte"):
        HFileReader(bytes(data), "t.hfile").prefix_cells(b"k")


def test_block_key_order_checked_by_the_fast_walk() -> None:
    """The vectorised key-order check of the fast cell walk: a block whose rows are out of order or repeated
    (of equal or different lengths) is refused and reported by the careful walk."""
    from hive_bridge.formats.hfile import cells as hfile

    for rows in ([b"b", b"a"], [b"ab", b"ab"], [b"abc", b"ab"], [b"a" * 300, b"a" * 299]):
        good = sorted(set(rows))
        payload = bytearray()
        for r in rows:
            key = struct.pack(">h", len(r)) + r + b"\x00" + struct.pack(">q", 2**63 - 1) + b"\x04"
            payload += struct.pack(">ii", len(key), 1) + key + b"v" + b"\x00"
        assert hfile.fast_cells(bytes(payload)) is None, rows
        payload = bytearray()
        for r in good:
            key = struct.pack(">h", len(r)) + r + b"\x00" + struct.pack(">q", 2**63 - 1) + b"\x04"
            payload += struct.pack(">ii", len(key), 1) + key + b"v" + b"\x00"
        assert hfile.fast_cells(bytes(payload)) is not None, good


def test_cells_found_by_their_key_tails_equal_the_walk() -> None:
    """A block of fixed-length keys has its cells found without a walk (each key ends with the family, latest
    timestamp and Put bytes); a value holding those bytes, or keys of other lengths, make that refuse and the
    walk decide, with the same entries either way."""
    from hive_bridge.formats.hfile import cells as hfile

    tail = hfile.KEY_TAIL
    def block(pairs: list[tuple[bytes, bytes]]) -> bytes:
        out = bytearray()
        for k, v in pairs:
            key = struct.pack(">h", len(k)) + k + tail
            out += struct.pack(">ii", len(key), len(v)) + key + v + b"\x00"
        return bytes(out)

    clean = [(f"key{i:05d}".encode(), b"v" * (i % 13)) for i in range(300)]
    tricky = [(k, v + tail + b"x" if i % 50 == 7 else v) for i, (k, v) in enumerate(clean)]
    mixed = sorted((b"k" * (1 + i % 3) + f"{i:04d}".encode(), b"w") for i in range(60))
    for pairs, by_tail in ((clean, True), (tricky, False), (mixed, False)):
        payload = block(pairs)
        buf = np.frombuffer(payload, dtype=np.uint8)
        walked = hfile._cells_walked(payload)
        assert walked is not None
        found = hfile._cells_by_key_tail(payload, buf)
        assert (found is not None) == by_tail
        if found is not None:
            assert found.tolist() == walked.tolist()
        cells = hfile.fast_cells(payload)
        assert cells is not None
        ks, ke, vs, ve = (a.tolist() for a in cells)
        assert [(payload[a:b], payload[c:d]) for a, b, c, d in zip(ks, ke, vs, ve, strict=True)] == sorted(pairs)
    data = write_hfile(tricky, block_size=1024, codec=Codec.GZ)
    got = HFileReader(data, "t").prefix_cells(b"key")
    assert list(zip(got.keys(), got.values(), strict=True)) == tricky


def test_large_files_read_in_ranges_answer_the_same(mdt_hfiles: list[MdtHFile], tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A file above the whole-read size is read in ranges (its tail, then the blocks a lookup needs): every
    fixture HFile opened so answers entries, lookups and prefix reads as the whole file does; a prefix read of a
    large multi-block file fetches only its blocks; a file shorter than its size is a clear error."""
    from hive_bridge.formats.hfile import reader as hfile
    from hive_bridge.storage.core import Storage

    monkeypatch.setattr(hfile, "_WHOLE_FILE_MAX", 0)
    monkeypatch.setattr(hfile, "_TAIL_READ", 4096 + 64)         # the load-on-open section: a second range
    bases = [h for h in mdt_hfiles if h.block_offset is None]
    assert bases
    for h in bases:
        ranged = HFileReader.open(h.path)
        assert isinstance(ranged._data, hfile._RangeFile)
        assert list(ranged.entries()) == h.entries, h.path
        keys = [k for k, _ in h.entries]
        for k in keys[:: max(1, len(keys) // 5)]:
            assert HFileReader.open(h.path).get(k) == dict(h.entries)[k]
            p = k[:12]
            cells = HFileReader.open(h.path).prefix_cells(p)
            assert list(zip(cells.keys(), cells.values(), strict=True)) == [e for e in h.entries
                                                                            if e[0].startswith(p)]
    # a large file: only the tail and the blocks of the prefix are read
    pairs = [(f"{c}{i:06d}".encode(), bytes(range(256)) * 2) for c in "abcdefgh" for i in range(400)]
    path = tmp_path / "big.hfile"
    path.write_bytes(write_hfile(pairs, block_size=4096, codec=Codec.GZ))
    storage = Storage.local(tmp_path)
    reader = HFileReader.open(path, storage=storage)
    before = storage.requests.counts()
    cells = reader.prefix_cells(b"c")
    assert cells.keys() == [k for k, _ in pairs if k.startswith(b"c")]
    read = sum(len(c) for _, c in reader._data._chunks)     # type: ignore[union-attr]
    assert read < path.stat().st_size / 4, (read, path.stat().st_size)
    assert storage.requests.since(before).get("get") == 1    # the prefix's blocks: one request
    # a whole scan: every data block in one request; many point lookups: one request per run of close blocks
    reader = HFileReader.open(path, storage=storage)
    before = storage.requests.counts()
    assert list(reader.entries()) == pairs
    assert storage.requests.since(before).get("get") == 1
    reader = HFileReader.open(path, storage=storage)
    wanted = [pairs[i][0] for i in (5, 6, 900, 901, 2000)] + [b"zzz"]
    before = storage.requests.counts()
    reader.prefetch(wanted)
    assert [reader.get(k) for k in wanted] == [dict(pairs).get(k) for k in wanted]
    assert storage.requests.since(before).get("get") == 4, storage.requests.since(before)
    # truncated after its tail was read: the blocks read later are short, and that is said
    reader = HFileReader.open(path, storage=storage)
    with open(path, "r+b") as fh:
        fh.truncate(reader._data_index[10].offset + 5)
    with pytest.raises(HFileError, match=r"big\.hfile: byte \d+: .*(shorter|runs past|cannot read)"):
        reader.prefix_cells(b"d")
