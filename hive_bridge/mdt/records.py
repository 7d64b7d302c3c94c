"""The metadata table's records: decoding HFile values and log blocks into records, and merging them.

Merging follows ``HoodieMetadataPayload.preCombine``: base HFile, then log blocks in order; files records merge
their file maps (a tombstone removes an earlier entry, sizes take the max); column and partition stats keep a
newer tombstone or tight bound, else widen min/max and sum the counts; record index, secondary index and bloom
filter records: newer wins. DELETE blocks remove the key; records whose ``isDeleted`` is true are tombstones.
"""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

import fastavro

from hive_bridge.errors import MetadataTableError
from hive_bridge.formats.hfile import HFileReader
from hive_bridge.formats.logfile import LogBlock, LogFormatError, delete_block_keys
from hive_bridge.mdt.files import decode_files_record, files_plan
from hive_bridge.mdt.keys import (
    TYPE_ALL_PARTITIONS,
    TYPE_BLOOM_FILTER,
    TYPE_COLUMN_STATS,
    TYPE_FILES,
    TYPE_PARTITION_STATS,
    TYPE_SECONDARY_INDEX,
)

__all__ = [
    "VALUE_TYPES",
    "WRAPPER_TYPES",
    "ColumnStatsEntry",
    "RecordLocation",
    "Unreadable",
    "combine_records",
    "decimal_of",
    "decode_values",
    "deleted_keys",
    "instant_of_millis",
    "is_tombstone",
    "millis_offset",
    "nested_record",
    "record_file_id",
    "select_entries",
    "selected_key",
    "stats_of",
    "unwrap_bound",
    "value_type_of",
]


class ColumnStatsEntry(NamedTuple):
    """One column's statistics for one file (``column_stats``) or one partition (``partition_stats``: then
    ``file_name`` is None). ``min``/``max`` are Python values (None when absent: no non-null value, or a log
    file without data records); timestamps and times are int microseconds, dates ``date``, decimals ``Decimal``
    with the column's scale. ``partition`` is None when a column_stats entry's partition hash matches none of
    the partitions the files partition lists. Counts None mean unknown, never zero."""

    partition: str | None
    file_name: str | None
    column: str
    min: Any
    max: Any
    null_count: int | None
    value_count: int | None
    total_size: int | None
    is_deleted: bool
    is_tight_bound: bool | None
    value_type: str | None


class RecordLocation(NamedTuple):
    """Where the record index puts a record key: data partition, file group id, and the instant that wrote it
    (None if the writer's time zone cannot be inferred; ``instant_millis`` is what the index stores)."""

    partition: str
    file_id: str
    instant: str | None
    instant_millis: int | None


class Unreadable(Exception):
    """A partition's file cannot be read (internal; becomes a problem + MetadataTableError)."""



# V2 column stats value types (org.apache.hudi.metadata.stats.ValueType ordinals)
VALUE_TYPES = (
    "V1", "NULL", "BOOLEAN", "INT", "LONG", "FLOAT", "DOUBLE", "STRING", "BYTES", "FIXED", "DECIMAL", "UUID",
    "DATE", "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "TIMESTAMP_NANOS",
    "LOCAL_TIMESTAMP_MILLIS", "LOCAL_TIMESTAMP_MICROS", "LOCAL_TIMESTAMP_NANOS",
)
# V1 (no valueType): the type is the wrapper record's
WRAPPER_TYPES = {
    "BooleanWrapper": "BOOLEAN", "IntWrapper": "INT", "LongWrapper": "LONG", "FloatWrapper": "FLOAT",
    "DoubleWrapper": "DOUBLE", "BytesWrapper": "BYTES", "StringWrapper": "STRING", "DateWrapper": "DATE",
    "DecimalWrapper": "DECIMAL", "TimeMicrosWrapper": "TIME_MICROS", "TimestampMicrosWrapper": "TIMESTAMP_MICROS",
    "LocalDateWrapper": "DATE", "ArrayWrapper": "ARRAY",
}
_EPOCH_DATE = date(1970, 1, 1)


def decimal_of(unscaled: bytes, scale: int) -> Decimal:
    sign, digits, _ = Decimal(int.from_bytes(unscaled, "big", signed=True)).as_tuple()
    return Decimal((sign, digits, -scale))


def _micros_of_time(t: time) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond


def value_type_of(stats: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(ValueType name, additionalInfo) of a V2 stats record, (None, None) for V1."""
    info = stats.get("valueType")
    if isinstance(info, tuple):
        info = info[1]
    if not isinstance(info, dict):
        return None, None
    ordinal = info.get("typeOrdinal")
    name = VALUE_TYPES[ordinal] if isinstance(ordinal, int) and 0 <= ordinal < len(VALUE_TYPES) else None
    if name is None:
        raise MetadataTableError(f"column stats value type ordinal {ordinal!r} is unknown")
    return (None if name == "V1" else name), info.get("additionalInfo")


def unwrap_bound(wrapped: Any, vtype: str | None, info: str | None, upper: bool) -> tuple[Any, str | None]:
    """A min/max wrapper record as a Python value, and the value's type name."""
    if wrapped is None:
        return None, vtype
    if not (isinstance(wrapped, tuple) and len(wrapped) == 2 and isinstance(wrapped[1], dict)):
        raise MetadataTableError(f"column stats bound {wrapped!r} is not a wrapper record")
    wrapper = str(wrapped[0]).rsplit(".", 1)[-1]
    value = wrapped[1].get("value")
    if vtype is None:                       # V1: the wrapper says what it is
        vt = WRAPPER_TYPES.get(wrapper)
        if vt is None:
            raise MetadataTableError(f"column stats bound of unknown wrapper {wrapper!r}")
        if value is None:
            return None, vt
        if vt == "DATE" and isinstance(value, int):
            return _EPOCH_DATE + timedelta(days=value), vt
        if vt == "DECIMAL" and isinstance(value, bytes | bytearray):
            return decimal_of(bytes(value), 15), vt
        if vt == "TIME_MICROS" and isinstance(value, time):
            return _micros_of_time(value), vt
        return value, vt
    if value is None:
        return None, vtype
    if vtype == "DECIMAL":
        try:
            scale = int(str(info).split(",")[1])
        except (IndexError, ValueError):
            raise MetadataTableError(f"decimal column stats without precision,scale ({info!r})") from None
        if isinstance(value, Decimal):
            return value, vtype
        return decimal_of(bytes(value), scale), vtype
    if vtype == "DATE":
        return (_EPOCH_DATE + timedelta(days=value) if isinstance(value, int) else value), vtype
    if vtype in ("TIME_MILLIS", "TIMESTAMP_MILLIS", "LOCAL_TIMESTAMP_MILLIS"):
        return int(value) * 1000, vtype
    if vtype in ("TIMESTAMP_NANOS", "LOCAL_TIMESTAMP_NANOS"):
        q, r = divmod(int(value), 1000)
        return (q + 1 if upper and r else q), vtype     # a wider bound, never a narrower one
    if vtype == "TIME_MICROS" and isinstance(value, time):
        return _micros_of_time(value), vtype
    return value, vtype


@lru_cache(maxsize=64)
def _parsed_schema(schema_json: str) -> Any:
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except Exception as exc:  # json and fastavro raise many types
        raise MetadataTableError(f"the Avro schema of the metadata records does not parse: {exc}") from None


def decode_values(pairs: Iterable[tuple[bytes, bytes]], schema_json: str,
                   where: str, files: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(record key, record) of HFile entries: the value in the writer schema, unions of several records as
    (record name, record) tuples (the wrapper of a min/max tells its type), single-record unions plain.
    ``files``: records of the files partition, read without an object per file where they have the usual shape
    (:mod:`hive_bridge.mdt.files`), by fastavro otherwise."""
    try:
        schema = _parsed_schema(schema_json)
    except MetadataTableError as exc:
        raise Unreadable(f"{where}: {exc}") from None
    plan = files_plan(schema_json) if files else None
    out = []
    for key, value in pairs:
        rec = decode_files_record(value, plan) if plan is not None else None
        if rec is None:
            buf = io.BytesIO(value)
            try:
                read: Any = fastavro.schemaless_reader(buf, schema, None, return_record_name=True,
                                                       return_record_name_override=True)
            except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, UnicodeDecodeError, ...
                raise Unreadable(f"{where}: the value of key {key[:80]!r} does not decode "
                                  f"({type(exc).__name__}: {exc})") from None
            if buf.tell() != len(value) or not isinstance(read, dict):
                raise Unreadable(f"{where}: the value of key {key[:80]!r} is not one metadata record")
            rec = read
        try:
            skey = key.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"{where}: the value of key {key[:80]!r} does not decode "
                              f"({type(exc).__name__}: {exc})") from None
        rec["key"] = skey                   # Hudi blanks the field in HFiles: the HFile key is the record key
        out.append((skey, rec))
    return out


def stats_of(rec: Mapping[str, Any]) -> dict[str, Any] | None:
    stats = rec.get("ColumnStatsMetadata")
    if isinstance(stats, tuple):
        stats = stats[1]
    return stats if isinstance(stats, dict) else None


def nested_record(rec: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = rec.get(name)
    if isinstance(value, tuple):
        value = value[1]
    return value if isinstance(value, dict) else None


def is_tombstone(rec: Mapping[str, Any]) -> bool:
    """``HoodieMetadataPayload.isDeletedRecord`` of a decoded record (files records never are)."""
    kind = rec.get("type")
    if kind in (TYPE_COLUMN_STATS, TYPE_PARTITION_STATS):
        stats = stats_of(rec)
        return bool(stats and stats.get("isDeleted"))
    if kind == TYPE_BLOOM_FILTER:
        bloom = nested_record(rec, "BloomFilterMetadata")
        return bool(bloom and bloom.get("isDeleted"))
    if kind == TYPE_SECONDARY_INDEX:
        si = nested_record(rec, "SecondaryIndexMetadata")
        return bool(si and si.get("isDeleted"))
    return False


def _sum(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a + b


def combine_records(older: dict[str, Any] | None, newer: dict[str, Any]) -> dict[str, Any]:
    """``HoodieMetadataPayload.preCombine(older)`` for two records of the same key."""
    if older is None or is_tombstone(newer) or is_tombstone(older) or older.get("type") != newer.get("type"):
        return newer
    kind = newer.get("type")
    if kind in (TYPE_FILES, TYPE_ALL_PARTITIONS):
        files: dict[str, dict[str, Any]] = dict(older.get("filesystemMetadata") or {})
        for name, info in (newer.get("filesystemMetadata") or {}).items():
            old = files.get(name)
            if old is None:
                files[name] = info
            elif info.get("isDeleted"):
                if old.get("isDeleted"):
                    files[name] = info
                else:
                    del files[name]             # the tombstone cancels the entry and is dropped
            else:
                files[name] = {"size": max(info.get("size") or 0, old.get("size") or 0), "isDeleted": False}
        out = dict(newer)
        out["filesystemMetadata"] = files
        return out
    if kind in (TYPE_COLUMN_STATS, TYPE_PARTITION_STATS):
        old_s, new_s = stats_of(older), stats_of(newer)
        if old_s is None or new_s is None or new_s.get("isTightBound"):
            return newer
        merged = dict(new_s)
        vtype, info = value_type_of(new_s)
        for field, pick in (("minValue", min), ("maxValue", max)):
            candidates = [w for w in (old_s.get(field), new_s.get(field)) if w is not None]
            if len(candidates) == 2:
                a = unwrap_bound(candidates[0], vtype, info, field == "maxValue")[0]
                b = unwrap_bound(candidates[1], vtype, info, field == "maxValue")[0]
                try:
                    merged[field] = candidates[0] if pick(a, b) == a and a != b else candidates[1]
                except TypeError:
                    raise MetadataTableError(f"column stats of {new_s.get('columnName')!r} for "
                                             f"{new_s.get('fileName')!r} mix incomparable bounds") from None
            else:
                merged[field] = candidates[0] if candidates else None
        for field in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize"):
            merged[field] = _sum(old_s.get(field), new_s.get(field))
        out = dict(newer)
        out["ColumnStatsMetadata"] = merged
        return out
    return newer                                # bloom filter, record index, secondary index: newer wins


# ================================================================================================ the table


def deleted_keys(block: LogBlock, where: str, want: set[str] | None, pre: list[str] | None) -> set[str]:
    """The selected record keys a metadata log file's DELETE block removes (raises Unreadable)."""
    try:
        deleted = delete_block_keys(block, where)
    except LogFormatError as exc:
        raise Unreadable(str(exc)) from None
    return {key for key, _ in deleted if selected_key(key, want, pre)}


def selected_key(key: str, want: set[str] | None, pre: list[str] | None) -> bool:
    if want is None and pre is None:
        return True
    if want is not None and key in want:
        return True
    return pre is not None and any(key.startswith(p) for p in pre)


def select_entries(reader: HFileReader, want: set[str] | None, pre: list[str] | None) -> list[tuple[bytes, bytes]]:
    """The entries of an HFile with one of the keys or prefixes (point lookups through its index), or all."""
    if want is None and pre is None:
        return list(reader.entries())
    out: dict[bytes, bytes] = {}
    if want and len(want) > 1:
        reader.prefetch(k.encode("utf-8") for k in want)
    for k in sorted(want or ()):
        kb = k.encode("utf-8")
        v = reader.get(kb)
        if v is not None:
            out[kb] = v
    for p in sorted(set(pre or ())):
        for kb, v in reader.prefix(p.encode("utf-8")):
            out[kb] = v
    return sorted(out.items())


_M64 = 0xFFFFFFFFFFFFFFFF


def record_file_id(info: Mapping[str, Any]) -> str | None:
    """The file group id of a record index entry: UUID(fileIdHighBits, fileIdLowBits) + "-" + fileIndex
    (encoding 0) or the raw ``fileId`` (encoding 1); None when the bits are missing."""
    if info.get("fileIdEncoding", 0) == 1:
        return str(info.get("fileId") or "")
    hi, lo = info.get("fileIdHighBits"), info.get("fileIdLowBits")
    if not isinstance(hi, int) or not isinstance(lo, int):
        return None
    file_id = str(uuid.UUID(int=((hi & _M64) << 64) | (lo & _M64)))
    index = info.get("fileIndex")
    if index is not None and index != -1:
        file_id += f"-{index}"
    return file_id


def millis_offset(millis: int, instant_times: Iterable[str], timeline_in_utc: bool) -> int | None:
    """The offset (ms) that maps a record index ``instantTime`` (epoch millis of an instant read in the writer
    JVM's time zone) onto the data timeline's instants: the difference to the latest instant it matches on a
    quarter-hour step within 14 hours; 0 for a timeline kept in UTC; None when it cannot be inferred."""
    step = 15 * 60 * 1000
    for ts in reversed(list(instant_times)):
        if len(ts) != 17 or not ts.isdigit():
            continue
        try:
            moment = datetime.strptime(ts[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        except ValueError:
            continue
        as_utc = int(moment.timestamp()) * 1000 + int(ts[14:])
        diff = as_utc - millis
        if diff % step == 0 and abs(diff) <= 14 * 3600 * 1000:
            return diff
    return 0 if timeline_in_utc else None


def instant_of_millis(millis: int, offset: int) -> str:
    """The instant string (``yyyyMMddHHmmssSSS``) of ``millis`` shifted by ``offset``."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis + offset)
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"
