"""A test-only writer of Hudi 1.0's metadata table (MDT) for a data table written by :class:`HudiWriter` (table
version 8), for tests and benchmarks of the code that reads it.

It writes what Hudi 1.0 writes when the metadata table is **initialised on an existing table**
(``HoodieBackedTableMetadataWriter.initializeFromFilesystem``): the data table's partition folders are listed,
every file of a completed data instant is recorded, and each MDT partition is bootstrapped by one
``BULK_INSERT`` deltacommit of its own, at the MDT-only instants ``00000000000000000`` (``files``, always first),
``00000000000000001`` (``column_stats``), ... (``SOLO_COMMIT_TIMESTAMP`` plus an offset, whatever the data
timeline holds), completed after the data table's last completed instant (so the bootstrap covers every one of
them: nothing lags). The fixture ``quickstart_trips_table.mor.avro.v8_trips_8i3u1d`` shows the same instants
(its MDT was initialised on an empty table, then mirrored the data commits with log files; an MDT initialised on
a table that already has commits has only the bootstrap deltacommits). Per MDT partition:

- file groups ``files-0000-0`` (one, as Hudi) and ``col-stats-000N-0`` (two by default, Hudi's
  ``hoodie.metadata.index.column.stats.file.group.count``); a record goes to the group Hudi's
  ``mapRecordKeyToFileGroupIndex`` (Java ``String.hashCode``) picks;
- per file group an empty log file ``.<fileId>_<instant>.log.1_0-0-0`` holding one DELETE block without keys
  (``initializeFileGroups``; byte for byte the fixture's) and one base HFile ``<fileId>_<token>_<instant>.hfile``
  (``bulkCommit``) written with :func:`hive_bridge.testing.hfile_writer.write_hfile` as HBase's writer lays it out
  (version 3.3, GZ, CRC32C checksums by default), its file info carrying the Avro schema of the values
  (``HoodieMetadataRecord`` with Hudi's meta fields, as in the fixture's base files), ``minRecordKey`` /
  ``maxRecordKey``; values are Avro-encoded ``HoodieMetadataRecord`` (the ``key`` field blank, as Hudi stores it);
- the MDT timeline (layout 2): ``<instant>.deltacommit.requested`` / ``.inflight`` and
  ``<instant>_<completion>.deltacommit`` (Avro ``HoodieCommitMetadata``: the HFiles' write stats, the record
  schema in ``extraMetadata``), the MDT's ``hoodie.properties`` as the fixture's, ``.hoodie_partition_metadata``
  in every MDT partition;
- the data table's ``hoodie.properties`` gets ``hoodie.table.metadata.partitions`` (and, for column stats, the
  index definition ``.hoodie/.index_defs/index.json`` Hudi writes, ``hoodie.table.index.defs.path``).

Records:

- ``files``: ``__all_partitions__`` (type 1) lists the partitions (``.`` for a non-partitioned table); one record
  per partition (type 2) maps the name of every file of a completed data instant -- base and log files, the
  latest slices' and older ones -- to its size. Files of pending (or unknown) instants are left out, as Hudi's
  listing leaves out files of pending instants.
- ``column_stats``: one record per (file, column) for base parquet files (read from the parquet footer, as
  Hudi's ``ParquetUtils.readColumnStatsFromMetadata``: row-group statistics merged, ``valueCount`` the column
  chunks' value counts, ``totalSize`` / ``totalUncompressedSize`` their sizes) and, with ``log_files=True``, for
  log files (from their data blocks' records; ``totalSize`` 0; a log without data records gets ``valueCount`` 0
  and no bounds, as in the fixture). Bounds are wrapped as Hudi 1.0 (V1 column stats, no ``valueType``) wraps
  the Java values its parquet reader gives: INT32 -> IntWrapper, INT64 -> LongWrapper (timestamps and times
  included: the raw value in the column's own unit), FLOAT / DOUBLE, BOOLEAN, UTF8 -> StringWrapper, other
  binaries -> BytesWrapper, DATE -> DateWrapper (days), DECIMAL -> DecimalWrapper (decimal(30,15)).
  ``isTightBound`` is false, as the fixture's. Columns (Hudi's ``getColumnsToIndex``): ``_hoodie_commit_time``,
  ``_hoodie_partition_path``, ``_hoodie_record_key`` when the table has meta fields, then the first 32 data
  columns of a supported type (no record, array or map; decimals that fit decimal(30,15)), or
  ``column_stats_columns``.

Not written: partition stats, bloom filters, record and secondary indexes, the HFiles' ``bloomFilter`` meta
block (no reader of this project uses it), and mirrored deltacommits with log files (what an MDT enabled from
the table's first commit holds).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.hfile import ChecksumType, Codec
from hive_bridge.formats.logfile import BlockType, HeaderKey, LogFormatError, data_block_table, read_log_file
from hive_bridge.layout.fsview import parse_base_file_name, parse_log_file_name
from hive_bridge.layout.properties import HOODIE_DIR, PROPERTIES_FILE, TableProperties
from hive_bridge.layout.timeline import Timeline
from hive_bridge.mdt.table import (
    ALL_PARTITIONS_KEY,
    COLUMN_STATS,
    FILES,
    NON_PARTITIONED_NAME,
    SOLO_COMMIT_TIMESTAMP,
    TYPE_ALL_PARTITIONS,
    TYPE_COLUMN_STATS,
    TYPE_FILES,
    column_index_id,
    file_index_id,
    partition_index_id,
)
from hive_bridge.stats.index import _read_metadata  # one pread + thrift decode: 2x pq.read_metadata
from hive_bridge.testing.hfile_writer import write_hfile
from hive_bridge.testing.instants import atomic_write, avro_record, commit_avro_schema, plus_one_ms
from hive_bridge.testing.logfile_writer import delete_block_content, encode_block
from hive_bridge.testing.table_files import PARTITION_METADATA

__all__ = [
    "FILE_ID_PREFIXES",
    "MetadataTableWrite",
    "file_group_index",
    "metadata_record_schema",
    "write_metadata_table",
]

#: MDT partitions this writer writes, in the order Hudi initialises them (files first)
SUPPORTED_PARTITIONS = (FILES, COLUMN_STATS)
#: file id prefix of each MDT partition (``MetadataPartitionType.getFileIdPrefix``)
FILE_ID_PREFIXES = {FILES: "files-", COLUMN_STATS: "col-stats-"}
#: Hudi 1.0's default file group counts
DEFAULT_FILE_GROUPS = {FILES: 1, COLUMN_STATS: 2}
#: ``HoodieTableMetadataUtil.META_COLS_TO_ALWAYS_INDEX`` (in the order Hudi records them: a TreeMap)
META_COLUMNS_TO_INDEX = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
_ALL_META = frozenset({"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                       "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_operation"})
#: ``hoodie.metadata.index.column.stats.max.columns.to.index``
MAX_COLUMNS_TO_INDEX = 32
#: ``HoodieLogFormat.DEFAULT_WRITE_TOKEN``
DEFAULT_WRITE_TOKEN = "0-0-0"
#: HBase's writer (Hudi 1.0's MDT files: version 3.3, 16 KiB checksum chunks); Hudi's HFile block size
HFILE_MINOR_VERSION = 3
HFILE_BLOCK_SIZE = 1024 * 1024
_AVRO_NS = "org.apache.hudi.avro.model"
_DECIMAL_MAX_PRECISION, _DECIMAL_MAX_SCALE = 30, 15
_INDEX_DEFS = ".hoodie/.index_defs/index.json"

# ============================================================================================== the schema

_JSTR: dict[str, Any] = {"type": "string", "avro.java.string": "String"}
_WRAPPERS: tuple[tuple[str, Any], ...] = (
    ("BooleanWrapper", "boolean"), ("IntWrapper", "int"), ("LongWrapper", "long"), ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"), ("BytesWrapper", "bytes"), ("StringWrapper", _JSTR), ("DateWrapper", "int"),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}), ("TimestampMicrosWrapper", "long"),
    ("LocalDateWrapper", "int"),
)


def metadata_record_schema(meta_fields: bool = True) -> dict[str, Any]:
    """``HoodieMetadataRecord`` as Hudi 1.0 (table version 8) writes it: with Hudi's five meta fields first (the
    schema in the file info of the fixture's base HFiles), or without them (the commit metadata's schema)."""
    def nullable(t: Any, default: bool = True) -> dict[str, Any]:
        return {"type": ["null", t], **({"default": None} if default else {})}

    long_ = nullable("long")
    fields: list[dict[str, Any]] = []
    if meta_fields:
        fields += [{"name": n, "type": ["null", "string"], "doc": "", "default": None}
                   for n in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                             "_hoodie_partition_path", "_hoodie_file_name")]
    fields += [
        {"name": "key", "type": _JSTR},
        {"name": "type", "type": "int"},
        {"name": "filesystemMetadata", "type": ["null", {
            "type": "map", "avro.java.string": "String", "values": {
                "type": "record", "name": "HoodieMetadataFileInfo", "fields": [
                    {"name": "size", "type": "long"}, {"name": "isDeleted", "type": "boolean"}]}}]},
        {"name": "BloomFilterMetadata", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieMetadataBloomFilter", "fields": [
                {"name": "type", "type": _JSTR}, {"name": "timestamp", "type": _JSTR},
                {"name": "bloomFilter", "type": "bytes"}, {"name": "isDeleted", "type": "boolean"}]}]},
        {"name": "ColumnStatsMetadata", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieMetadataColumnStats", "fields": [
                {"name": "fileName", **nullable(_JSTR)},
                {"name": "columnName", **nullable(_JSTR)},
                {"name": "minValue", "default": None, "type": ["null", *[
                    {"type": "record", "name": n, "fields": [{"name": "value", "type": t}]} for n, t in _WRAPPERS]]},
                {"name": "maxValue", "default": None, "type": ["null", *[n for n, _ in _WRAPPERS]]},
                {"name": "valueCount", **long_}, {"name": "nullCount", **long_},
                {"name": "totalSize", **long_}, {"name": "totalUncompressedSize", **long_},
                {"name": "isDeleted", "type": "boolean"},
                {"name": "isTightBound", "type": "boolean", "default": False}]}]},
        {"name": "recordIndexMetadata", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieRecordIndexInfo", "fields": [
                {"name": "partitionName", **nullable(_JSTR)}, {"name": "fileIdHighBits", **long_},
                {"name": "fileIdLowBits", **long_}, {"name": "fileIndex", **nullable("int")},
                {"name": "fileId", **nullable(_JSTR)}, {"name": "instantTime", **long_},
                {"name": "fileIdEncoding", "type": "int", "default": 0}, {"name": "position", **long_}]}]},
        {"name": "SecondaryIndexMetadata", "default": None, "type": ["null", {
            "type": "record", "name": "HoodieSecondaryIndexInfo", "fields": [
                {"name": "isDeleted", "type": "boolean"}]}]},
    ]
    return {"type": "record", "name": "HoodieMetadataRecord", "namespace": _AVRO_NS, "fields": fields}


_RECORD_SCHEMA = metadata_record_schema(True)
_RECORD_SCHEMA_JSON = json.dumps(_RECORD_SCHEMA, separators=(",", ":"))
_COMMIT_SCHEMA_JSON = json.dumps(metadata_record_schema(False), separators=(",", ":"))
_PARSED = fastavro.parse_schema(_RECORD_SCHEMA)

# ============================================================================================== helpers


def file_group_index(record_key: str, num_file_groups: int) -> int:
    """``HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex``: Java's ``String.hashCode`` (UTF-16 code
    units, int overflow), then ``Math.abs(Math.abs(h) % n)``."""
    return _group_of_hash(_java_hash(record_key), num_file_groups)


def _file_id(partition: str, index: int) -> str:
    return f"{FILE_ID_PREFIXES[partition]}{index:04d}-0"


def _identifier(partition: str) -> str:
    return NON_PARTITIONED_NAME if partition in ("", NON_PARTITIONED_NAME) else partition


def _now_after(stamp: str) -> str:
    now = datetime.now(UTC)
    s = now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"
    return s if s > stamp else plus_one_ms(stamp)


def _properties_text(props: Mapping[str, str], header: str) -> bytes:
    lines = [header]
    for key in sorted(props):
        value = props[key].replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
        lines.append(f"{key}={value}")
    return ("\n".join(lines) + "\n").encode("latin-1")


def _saved_on() -> str:
    return "#Properties saved on " + datetime.now(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")


# ============================================================================================== listing


@dataclass(frozen=True)
class _DataFile:
    partition: str              # "" for a non-partitioned table
    name: str
    size: int
    is_log: bool

    @property
    def full_path(self) -> str:
        return self.name if not self.partition else f"{self.partition}/{self.name}"


def _list_data_files(root: Path, completed: frozenset[str]) -> dict[str, list[_DataFile]]:
    """Partition -> files of completed instants, as Hudi's ``listAllPartitionsFromFilesystem`` finds them:
    folders holding a ``.hoodie_partition_metadata`` (never under a hidden folder such as ``.hoodie``)."""
    out: dict[str, list[_DataFile]] = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if PARTITION_METADATA not in names:
            continue
        rel = os.path.relpath(directory, root)
        partition = "" if rel == "." else rel.replace(os.sep, "/")
        files: list[_DataFile] = []
        with os.scandir(directory) as entries:
            for e in entries:
                if not e.is_file(follow_symlinks=False):
                    continue
                log = parse_log_file_name(e.name) if e.name.startswith(".") else None
                base = None if log is not None else parse_base_file_name(e.name)
                instant = log[1] if log is not None else base[2] if base is not None else None
                if instant is None or instant not in completed:
                    continue
                files.append(_DataFile(partition, e.name, e.stat(follow_symlinks=False).st_size, log is not None))
        out[partition] = sorted(files, key=lambda f: f.name)
    return out


# ============================================================================================== columns


def _nonnull(avro_type: Any) -> Any:
    if isinstance(avro_type, list):
        rest = [t for t in avro_type if t != "null"]
        return rest[0] if len(rest) == 1 else avro_type
    return avro_type


def _supported(avro_type: Any) -> bool:
    """``isColumnTypeSupported`` for Hudi's Avro record type: no record, array or map; decimals must fit the
    wrapper's decimal(30,15)."""
    t = _nonnull(avro_type)
    if isinstance(t, list):
        return False
    if isinstance(t, dict):
        if t.get("logicalType") == "decimal":
            p, s = int(t.get("precision", 0)), int(t.get("scale", 0))
            return p + (_DECIMAL_MAX_SCALE - s) <= _DECIMAL_MAX_PRECISION and s <= _DECIMAL_MAX_SCALE
        return t.get("type") not in ("record", "array", "map")
    return t not in ("record", "array", "map")


def columns_to_index(props: TableProperties, schema_json: str | None,
                     explicit: Sequence[str] | None = None) -> list[str]:
    """Hudi 1.0's ``getColumnsToIndex``: the always-indexed meta columns (tables with meta fields), then the
    explicit list, or the first 32 supported data columns of the writer schema."""
    fields: list[dict[str, Any]] = []
    if schema_json:
        try:
            fields = list(json.loads(schema_json).get("fields") or [])
        except (ValueError, AttributeError):
            fields = []
    types = {f.get("name"): f.get("type") for f in fields if isinstance(f, dict)}
    out = list(META_COLUMNS_TO_INDEX) if props.populate_meta_fields else []
    if explicit is not None:
        out += [c for c in explicit if c not in META_COLUMNS_TO_INDEX and (c not in types or _supported(types[c]))]
    else:
        data = [n for n, t in types.items() if isinstance(n, str) and n not in _ALL_META and _supported(t)]
        out += data[:MAX_COLUMNS_TO_INDEX]
    return list(dict.fromkeys(out))


# ============================================================================================== statistics

_Wrapped = tuple[str, dict[str, Any]] | None


def _wrap(value: Any, wrapper: str) -> _Wrapped:
    return None if value is None else (f"{_AVRO_NS}.{wrapper}", {"value": value})


def _parquet_wrapper(col: Any) -> str | None:
    """The wrapper Hudi 1.0 puts a parquet column's min/max in (``convertToNativeJavaType`` then
    ``wrapValueIntoAvro``), None when it cannot."""
    physical = col.physical_type
    logical = col.logical_type.type
    if logical == "DECIMAL":
        return "DecimalWrapper"
    if logical == "DATE":
        return "DateWrapper"
    if physical in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
        return "StringWrapper" if logical == "STRING" else "BytesWrapper"
    return {"BOOLEAN": "BooleanWrapper", "INT32": "IntWrapper", "INT64": "LongWrapper", "FLOAT": "FloatWrapper",
            "DOUBLE": "DoubleWrapper"}.get(physical)


def _parquet_value(stats: Any, upper: bool, wrapper: str) -> Any:
    raw = stats.max_raw if upper else stats.min_raw
    if wrapper == "DecimalWrapper":
        value = stats.max if upper else stats.min
        return value if isinstance(value, Decimal) else None
    if wrapper == "StringWrapper":
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if wrapper == "BytesWrapper":
        return raw.encode("utf-8") if isinstance(raw, str) else bytes(raw) if raw is not None else None
    return raw


def _base_file_stats(path: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Column name -> ColumnStatsMetadata fields of one parquet file, as ``readColumnStatsFromMetadata``."""
    md = _read_metadata(path)[0]
    by_name: dict[str, int] = {}
    for i in range(md.num_columns):
        col = md.schema.column(i)
        if col.max_repetition_level == 0 and col.path in columns and "." not in col.path:
            by_name[col.path] = i
    out: dict[str, dict[str, Any]] = {}
    groups = [md.row_group(g) for g in range(md.num_row_groups)]
    for name, i in by_name.items():
        wrapper = _parquet_wrapper(md.schema.column(i))
        if wrapper is None:
            continue
        lo: Any = None
        hi: Any = None
        nulls = values = size = usize = 0
        for rg in groups:
            chunk = rg.column(i)
            values += chunk.num_values
            size += chunk.total_compressed_size
            usize += chunk.total_uncompressed_size
            st = chunk.statistics
            if st is None:
                continue
            nulls += st.null_count or 0
            if st.has_min_max:
                a, b = _parquet_value(st, False, wrapper), _parquet_value(st, True, wrapper)
                # HoodieColumnRangeMetadata.merge: a null side takes the other's
                lo = a if lo is None else lo if a is None else min(lo, a)
                hi = b if hi is None else hi if b is None else max(hi, b)
        out[name] = {"minValue": _wrap(lo, wrapper), "maxValue": _wrap(hi, wrapper), "valueCount": values,
                     "nullCount": nulls, "totalSize": size, "totalUncompressedSize": usize}
    return out


def _arrow_wrapper(typ: pa.DataType) -> str | None:
    t = pa.types
    if t.is_boolean(typ):
        return "BooleanWrapper"
    if t.is_decimal(typ):
        return "DecimalWrapper"
    if t.is_date(typ):
        return "DateWrapper"
    if t.is_string(typ) or t.is_large_string(typ):
        return "StringWrapper"
    if t.is_binary(typ) or t.is_large_binary(typ) or t.is_fixed_size_binary(typ):
        return "BytesWrapper"
    if t.is_float32(typ):
        return "FloatWrapper"
    if t.is_float64(typ):
        return "DoubleWrapper"
    if t.is_integer(typ):
        return "IntWrapper" if typ.bit_width <= 32 else "LongWrapper"
    if t.is_timestamp(typ) or t.is_time64(typ):
        return "LongWrapper"
    if t.is_time32(typ):
        return "IntWrapper"
    return None


def _log_file_stats(path: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Column stats of a log file's data records (Hudi's ``getLogFileColumnRangeMetadata``: no merging, every
    record of every data block); a log without data records gets ``valueCount`` 0 and no bounds."""
    contents = read_log_file(path)
    tables = []
    for block in contents.blocks:
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            tables.append(data_block_table(block, path))
    data = pa.concat_tables(tables, promote_options="permissive") if tables else None
    out: dict[str, dict[str, Any]] = {}
    for name in columns:
        if data is None or data.num_rows == 0:
            out[name] = {"minValue": None, "maxValue": None, "valueCount": 0, "nullCount": 0, "totalSize": 0,
                         "totalUncompressedSize": 0}
            continue
        if name not in data.column_names:
            out[name] = {"minValue": None, "maxValue": None, "valueCount": data.num_rows,
                         "nullCount": data.num_rows, "totalSize": 0, "totalUncompressedSize": 0}
            continue
        column = data.column(name)
        wrapper = _arrow_wrapper(column.type)
        if wrapper is None:
            continue
        lo = hi = None
        present = pc.drop_null(column)
        if len(present):
            if pa.types.is_timestamp(column.type) or pa.types.is_time(column.type):
                present = present.cast(pa.int64() if pa.types.is_timestamp(column.type)
                                       or pa.types.is_time64(column.type) else pa.int32())
            elif pa.types.is_date(column.type):
                present = present.cast(pa.int32())
            elif pa.types.is_floating(column.type) and pc.any(pc.is_nan(present)).as_py():
                # Java's Double.compareTo sorts NaN above every number
                finite = pc.filter(present, pc.invert(pc.is_nan(present)))
                mm = pc.min_max(finite) if len(finite) else None
                lo = mm["min"].as_py() if mm is not None else float("nan")
                hi = float("nan")
            if lo is None and hi is None:
                mm = pc.min_max(present)
                lo, hi = mm["min"].as_py(), mm["max"].as_py()
        out[name] = {"minValue": _wrap(lo, wrapper), "maxValue": _wrap(hi, wrapper), "valueCount": data.num_rows,
                     "nullCount": column.null_count, "totalSize": 0, "totalUncompressedSize": 0}
    return out


def _file_stats(f: tuple[str, bool], columns: Sequence[str]) -> dict[str, dict[str, Any]] | None:
    path, is_log = f
    try:
        return _log_file_stats(path, columns) if is_log else _base_file_stats(path, columns)
    except (OSError, LogFormatError, pa.ArrowException, HudiTableError):
        return None     # Hudi logs the failure and writes no entry for the file


# ============================================================================================== records


def _encode(record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _PARSED, record)
    return buf.getvalue()


def _varint(n: int) -> bytes:
    """Avro's zigzag varint of a long."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def _avro_bytes_of(data: bytes) -> bytes:
    return _varint(len(data)) + data


_BRANCH = {f"{_AVRO_NS}.{name}": i + 1 for i, (name, _) in enumerate(_WRAPPERS)}
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


def _decimal_bytes(value: Decimal) -> bytes:
    """The unscaled value at scale 15 as big-endian two's complement, minimal length (``BigInteger``)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + _DECIMAL_MAX_SCALE          # exact integer arithmetic (Decimal's context rounds at 28)
    unscaled = int(unscaled * 10**shift) if shift >= 0 else int(unscaled // 10**-shift)
    if sign:
        unscaled = -unscaled
    length = (unscaled.bit_length() + 8) // 8
    return unscaled.to_bytes(length, "big", signed=True)


def _wrapped_bytes(wrapped: _Wrapped) -> bytes:
    if wrapped is None:
        return b"\x00"
    name, record = wrapped
    branch = _BRANCH[name]
    value = record["value"]
    head = _varint(branch)
    if branch == 1:                                              # boolean
        return head + (b"\x01" if value else b"\x00")
    if branch in (2, 3, 8, 11, 12):                              # int, long, date, timestamp, local date
        return head + _varint(int(value))
    if branch == 4:
        return head + _FLOAT.pack(value)
    if branch == 5:
        return head + _DOUBLE.pack(value)
    if branch == 6:
        return head + _avro_bytes_of(bytes(value))
    if branch == 7:
        return head + _avro_bytes_of(value.encode("utf-8"))
    if branch == 9:
        return head + _avro_bytes_of(_decimal_bytes(value))
    raise HudiTableError(f"no hand encoding for {name}")        # time-micros: never written here


def _opt_long(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x02" + _varint(value)


def _stats_value(hfile_name_bytes: bytes, stats: Mapping[str, Any]) -> bytes:
    """The Avro bytes of a column stats ``HoodieMetadataRecord`` (what :func:`_encode` gives, ~10x faster:
    column stats are most of an MDT's records)."""
    return b"".join((
        b"\x00\x00\x00\x00\x02", hfile_name_bytes,        # meta fields: null x4, _hoodie_file_name
        b"\x00", _varint(TYPE_COLUMN_STATS),                # key "", type
        b"\x00\x00\x02",                                     # no files, no bloom filter; the stats:
        b"\x02", _avro_bytes_of(stats["fileName"].encode("utf-8")),
        b"\x02", _avro_bytes_of(stats["columnName"].encode("utf-8")),
        _wrapped_bytes(stats["minValue"]), _wrapped_bytes(stats["maxValue"]),
        _opt_long(stats["valueCount"]), _opt_long(stats["nullCount"]), _opt_long(stats["totalSize"]),
        _opt_long(stats["totalUncompressedSize"]),
        b"\x01" if stats["isDeleted"] else b"\x00", b"\x01" if stats["isTightBound"] else b"\x00",
        b"\x00\x00",                                         # no record index, no secondary index
    ))


def _java_hash(text: str, h: int = 0) -> int:
    """``String.hashCode`` continued from ``h`` (unsigned 32 bits)."""
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


@lru_cache(maxsize=4096)
def _prefix_hash(prefix: str) -> int:
    return _java_hash(prefix)


def _group_of_hash(h: int, num_file_groups: int) -> int:
    if h >= 0x80000000:
        h -= 0x100000000
    a = h if h == -0x80000000 else abs(h)
    rem = a % num_file_groups if a >= 0 else -((-a) % num_file_groups)
    return abs(rem)


def _record(hfile_name: str, rtype: int, files: dict[str, dict[str, Any]] | None = None,
            stats: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
            "_hoodie_partition_path": None, "_hoodie_file_name": hfile_name, "key": "", "type": rtype,
            "filesystemMetadata": files, "BloomFilterMetadata": None, "ColumnStatsMetadata": stats,
            "recordIndexMetadata": None, "SecondaryIndexMetadata": None}


@dataclass(frozen=True)
class MetadataTableWrite:
    """What :func:`write_metadata_table` wrote: the MDT folder, its partitions and their instants (partition ->
    instant), the HFiles (relative to the MDT folder), the data partitions and files listed, the indexed columns
    and the number of column stats records."""

    path: Path
    partitions: tuple[str, ...]
    instants: dict[str, str]
    hfiles: tuple[str, ...]
    data_partitions: tuple[str, ...]
    data_files: int
    columns: tuple[str, ...]
    column_stats_records: int
    files_without_stats: tuple[str, ...]


def write_metadata_table(
    data_table_root: str | os.PathLike[str],
    *,
    partitions: Iterable[str] = (FILES, COLUMN_STATS),
    column_stats_columns: Sequence[str] | None = None,
    file_groups: Mapping[str, int] | None = None,
    log_files: bool = True,
    codec: Codec = Codec.GZ,
    checksum: ChecksumType = ChecksumType.CRC32C,
    block_size: int = HFILE_BLOCK_SIZE,
    workers: int | None = None,
    overwrite: bool = False,
) -> MetadataTableWrite:
    """Write the metadata table Hudi 1.0 initialises on the (version 8) table at ``data_table_root`` (see the
    module docstring). ``partitions``: MDT partitions to write (``files`` is always written); ``file_groups``:
    MDT partition -> number of file groups (default files 1, column_stats 2); ``log_files``: column stats for
    log files too; ``codec`` / ``checksum`` / ``block_size``: the HFiles' layout; ``overwrite``: replace an
    existing metadata table (else it is an error)."""
    root = Path(data_table_root).absolute()
    props = TableProperties.load(root)
    if props.version < 8 or props.timeline_layout_version < 2:
        raise HudiTableError(f"{root}: the MDT writer writes Hudi 1.0's metadata table for table version 8 "
                             f"(this table is version {props.version})")
    if not props.base_files_are_parquet:
        raise HudiTableError(f"{root}: the MDT writer indexes parquet base files only")
    wanted = list(dict.fromkeys([FILES, *partitions]))
    unknown = [p for p in wanted if p not in SUPPORTED_PARTITIONS]
    if unknown:
        raise HudiTableError(f"the MDT writer writes {', '.join(SUPPORTED_PARTITIONS)}, not {', '.join(unknown)}")
    groups = {**DEFAULT_FILE_GROUPS, **(file_groups or {})}
    if any(groups[p] < 1 for p in wanted):
        raise HudiTableError(f"file group counts must be positive: {groups}")
    if FILES in (file_groups or {}) and groups[FILES] != 1:
        raise HudiTableError("the files partition has exactly one file group in Hudi (readers expect one)")
    mdt = root / HOODIE_DIR / "metadata"
    if mdt.exists():
        if not overwrite:
            raise HudiTableError(f"{mdt}: a metadata table exists (pass overwrite=True to replace it)")
        shutil.rmtree(mdt)

    timeline = Timeline.load(props)
    completed = frozenset(i.timestamp for i in timeline.completed)
    last_completion = max((i.completion_time or i.timestamp for i in timeline.completed), default="0")
    listing = _list_data_files(root, completed)
    data_files = sum(len(v) for v in listing.values())
    columns = columns_to_index(props, timeline.latest_schema_json(), column_stats_columns) \
        if COLUMN_STATS in wanted else []

    # ---------------------------------------------------------------- the MDT's own table and folders
    hoodie = mdt / HOODIE_DIR
    tl = hoodie / "timeline"
    for d in (tl / "history", hoodie / ".aux" / ".bootstrap" / ".partitions", hoodie / ".aux" / ".bootstrap" /
              ".fileids", hoodie / ".schema", hoodie / ".temp", hoodie / ".heartbeat"):
        d.mkdir(parents=True, exist_ok=True)
    mprops = {
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.table.initial.version": "8", "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
        "hoodie.table.type": "MERGE_ON_READ", "hoodie.archivelog.folder": "history",
        "hoodie.timeline.layout.version": "2", "hoodie.timeline.history.path": "history",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        "hoodie.table.recordkey.fields": "key", "hoodie.table.name": f"{props.name}_metadata",
        "hoodie.timeline.path": "timeline", "hoodie.populate.meta.fields": "false",
        "hoodie.table.base.file.format": "HFILE", "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.table.version": "8",
    }
    atomic_write(hoodie / PROPERTIES_FILE, _properties_text(mprops, _saved_on()))

    # ---------------------------------------------------------------- records per MDT partition
    stats_of: dict[tuple[str, str], dict[str, dict[str, Any]] | None] = {}
    if COLUMN_STATS in wanted and columns:
        todo = [f for fs in listing.values() for f in fs if log_files or not f.is_log]
        paths = [(str(root / f.full_path), f.is_log) for f in todo]
        n_workers = workers or min(8, (os.cpu_count() or 2) * 2)
        if len(paths) > 1 and n_workers > 1:
            with ThreadPoolExecutor(max_workers=n_workers) as pool:
                results = list(pool.map(lambda p: _file_stats(p, columns), paths, chunksize=64))
        else:
            results = [_file_stats(p, columns) for p in paths]
        stats_of = {(f.partition, f.name): r for f, r in zip(todo, results, strict=True)}

    instants: dict[str, str] = {}
    hfiles: list[str] = []
    completion = last_completion
    stats_records = 0
    for offset, partition in enumerate(wanted):
        instant = f"{SOLO_COMMIT_TIMESTAMP}{offset:03d}"
        instants[partition] = instant
        atomic_write(tl / f"{instant}.deltacommit.requested", b"")
        atomic_write(tl / f"{instant}.deltacommit.inflight", b"")
        folder = mdt / partition
        folder.mkdir()
        atomic_write(folder / PARTITION_METADATA,
                      (f"#partition metadata\n#{datetime.now(UTC).strftime('%a %b %d %H:%M:%S UTC %Y')}\n"
                       f"commitTime={instant}\npartitionDepth=1\n").encode("latin-1"))
        n = groups[partition]
        names = [f"{_file_id(partition, g)}_{g}-0-{g}_{instant}.hfile" for g in range(n)]
        # (key, value) per file group
        entries: list[list[tuple[bytes, bytes]]] = [[] for _ in range(n)]

        def add(key: str, rtype: int, files: dict[str, dict[str, Any]] | None = None,
                stats: dict[str, Any] | None = None, _n: int = n, _names: list[str] = names,
                _entries: list[list[tuple[bytes, bytes]]] = entries) -> None:
            g = file_group_index(key, _n) if _n > 1 else 0
            _entries[g].append((key.encode("utf-8"), _encode(_record(_names[g], rtype, files, stats))))

        if partition == FILES:
            add(ALL_PARTITIONS_KEY, TYPE_ALL_PARTITIONS,
                files={_identifier(p): {"size": 0, "isDeleted": False} for p in listing})
            for p, fs in listing.items():
                add(_identifier(p), TYPE_FILES, files={f.name: {"size": f.size, "isDeleted": False} for f in fs})
        else:
            # key = column id (12) + partition id (12) + file id (24): hashed part by part (the Java hash of a
            # concatenation continues from its prefix's), the ids computed once each
            names_bytes = [_avro_bytes_of(nm.encode("utf-8")) for nm in names]
            col_ids = {c: column_index_id(c) for c in columns}
            part_ids: dict[str, str] = {}
            for (p, name), per_column in stats_of.items():
                if per_column is None:
                    continue
                pid = part_ids.get(p)
                if pid is None:
                    pid = part_ids[p] = partition_index_id(p)
                fid_part = file_index_id(name)
                for column in columns:
                    st = per_column.get(column)
                    if st is None:
                        continue
                    prefix = col_ids[column] + pid
                    key = prefix + fid_part
                    g = _group_of_hash(_java_hash(fid_part, _prefix_hash(prefix)), n) if n > 1 else 0
                    record = {"fileName": name, "columnName": column, **st, "isDeleted": False,
                              "isTightBound": False}
                    entries[g].append((key.encode("utf-8"), _stats_value(names_bytes[g], record)))
                    stats_records += 1
        write_stats: list[dict[str, Any]] = []
        for g in range(n):
            fid = _file_id(partition, g)
            log = encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant}, delete_block_content([]))
            with open(folder / f".{fid}_{instant}.log.1_{DEFAULT_WRITE_TOKEN}", "wb") as fh:
                fh.write(log)
            pairs = sorted(entries[g])
            info = {b"schema": _RECORD_SCHEMA_JSON.encode("utf-8")}
            if pairs:
                info[b"minRecordKey"] = pairs[0][0]
                info[b"maxRecordKey"] = pairs[-1][0]
            data = write_hfile(pairs, file_info=info, codec=codec, checksum=checksum, block_size=block_size,
                               minor_version=HFILE_MINOR_VERSION)
            with open(folder / names[g], "wb") as fh:
                fh.write(data)
            hfiles.append(f"{partition}/{names[g]}")
            write_stats.append(_write_stat(partition, fid, names[g], len(pairs), len(data)))
        completion = _now_after(completion)
        meta = {"partitionToWriteStats": {partition: write_stats}, "compacted": False,
                "extraMetadata": {"schema": _COMMIT_SCHEMA_JSON}, "version": None, "operationType": "BULK_INSERT"}
        atomic_write(tl / f"{instant}_{completion}.deltacommit", avro_record(commit_avro_schema(False), meta))

    _update_data_properties(root, wanted, columns)
    missing = tuple(sorted(f"{p}/{n}" if p else n for (p, n), s in stats_of.items() if s is None))
    return MetadataTableWrite(mdt, tuple(wanted), instants, tuple(hfiles), tuple(sorted(listing)), data_files,
                              tuple(columns), stats_records, missing)


def _write_stat(partition: str, file_id: str, name: str, records: int, size: int) -> dict[str, Any]:
    return {
        "fileId": file_id, "path": f"{partition}/{name}", "prevCommit": "null", "numWrites": records,
        "numDeletes": 0, "numUpdateWrites": 0, "numInserts": records, "totalWriteBytes": size,
        "totalWriteErrors": 0, "partitionPath": partition, "totalLogRecords": 0, "totalLogFiles": None,
        "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
        "fileSizeInBytes": size, "logVersion": None, "logOffset": None, "baseFile": None, "logFiles": None,
        "prevBaseFile": None, "minEventTime": None, "maxEventTime": None, "totalLogFilesCompacted": 0,
        "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0, "tempPath": None, "numUpdates": 0,
    }


def _update_data_properties(root: Path, partitions: Sequence[str], columns: Sequence[str]) -> None:
    """The data table's hoodie.properties: ready MDT partitions (none inflight) and, with column stats, the
    index definition Hudi 1.0 writes (``updateColumnsToIndexWithColStats``)."""
    path = root / HOODIE_DIR / PROPERTIES_FILE
    raw = dict(TableProperties.load(root).raw)
    raw["hoodie.table.metadata.partitions"] = ",".join(sorted(partitions))
    raw["hoodie.table.metadata.partitions.inflight"] = ""
    if COLUMN_STATS in partitions:
        defs_path = root / _INDEX_DEFS
        defs: dict[str, Any] = {}
        if defs_path.is_file():
            try:
                defs = json.loads(defs_path.read_text())
            except ValueError:
                defs = {}
        defs.setdefault("indexDefinitions", {})[COLUMN_STATS] = {
            "indexName": COLUMN_STATS, "indexType": COLUMN_STATS, "indexFunction": COLUMN_STATS,
            "sourceFields": list(columns), "indexOptions": {}}
        defs_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(defs_path, json.dumps(defs, indent=2).encode("utf-8"))
        raw["hoodie.table.index.defs.path"] = _INDEX_DEFS
    header = "#Updated at " + datetime.now(UTC).isoformat().replace("+00:00", "Z")
    atomic_write(path, _properties_text(raw, header))
