"""The records of the test metadata-table writer (:mod:`hive_bridge.testing.mdt_writer`): the Avro schema of
Hudi 1.0's ``HoodieMetadataRecord``, the records and their Avro encoding (fastavro, and a hand encoding of the
column stats records, most of an MDT's records), the value wrappers of column stats bounds, and Java's
``String.hashCode`` by which Hudi maps a record key to its file group.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from typing import Any

import fastavro

from hive_bridge.errors import HudiTableError
from hive_bridge.mdt.keys import TYPE_COLUMN_STATS

__all__ = [
    "AVRO_NS",
    "COMMIT_SCHEMA_JSON",
    "DECIMAL_MAX_PRECISION",
    "DECIMAL_MAX_SCALE",
    "RECORD_SCHEMA",
    "RECORD_SCHEMA_JSON",
    "Wrapped",
    "avro_bytes_of",
    "avro_long",
    "encode_record",
    "group_of_hash",
    "java_hash",
    "merge_stats",
    "metadata_record",
    "metadata_record_schema",
    "prefix_hash",
    "stats_value",
    "wrap",
]

AVRO_NS = "org.apache.hudi.avro.model"
DECIMAL_MAX_PRECISION, DECIMAL_MAX_SCALE = 30, 15

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
    return {"type": "record", "name": "HoodieMetadataRecord", "namespace": AVRO_NS, "fields": fields}


RECORD_SCHEMA = metadata_record_schema(True)
RECORD_SCHEMA_JSON = json.dumps(RECORD_SCHEMA, separators=(",", ":"))
COMMIT_SCHEMA_JSON = json.dumps(metadata_record_schema(False), separators=(",", ":"))
_PARSED = fastavro.parse_schema(RECORD_SCHEMA)


# ============================================================================================== statistics

Wrapped = tuple[str, dict[str, Any]] | None


def wrap(value: Any, wrapper: str) -> Wrapped:
    return None if value is None else (f"{AVRO_NS}.{wrapper}", {"value": value})



# ============================================================================================== records


def encode_record(record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _PARSED, record)
    return buf.getvalue()


def avro_long(n: int) -> bytes:
    """Avro's zigzag varint of a long."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def avro_bytes_of(data: bytes) -> bytes:
    return avro_long(len(data)) + data


_BRANCH = {f"{AVRO_NS}.{name}": i + 1 for i, (name, _) in enumerate(_WRAPPERS)}
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


def _decimal_bytes(value: Decimal) -> bytes:
    """The unscaled value at scale 15 as big-endian two's complement, minimal length (``BigInteger``)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0")
    shift = exponent + DECIMAL_MAX_SCALE          # exact integer arithmetic (Decimal's context rounds at 28)
    unscaled = int(unscaled * 10**shift) if shift >= 0 else int(unscaled // 10**-shift)
    if sign:
        unscaled = -unscaled
    length = (unscaled.bit_length() + 8) // 8
    return unscaled.to_bytes(length, "big", signed=True)


def _wrapped_bytes(wrapped: Wrapped) -> bytes:
    if wrapped is None:
        return b"\x00"
    name, record = wrapped
    branch = _BRANCH[name]
    value = record["value"]
    head = avro_long(branch)
    if branch == 1:                                              # boolean
        return head + (b"\x01" if value else b"\x00")
    if branch in (2, 3, 8, 11, 12):                              # int, long, date, timestamp, local date
        return head + avro_long(int(value))
    if branch == 4:
        return head + _FLOAT.pack(value)
    if branch == 5:
        return head + _DOUBLE.pack(value)
    if branch == 6:
        return head + avro_bytes_of(bytes(value))
    if branch == 7:
        return head + avro_bytes_of(value.encode("utf-8"))
    if branch == 9:
        return head + avro_bytes_of(_decimal_bytes(value))
    raise HudiTableError(f"no hand encoding for {name}")        # time-micros: never written here


def _opt_long(value: int | None) -> bytes:
    return b"\x00" if value is None else b"\x02" + avro_long(value)


def stats_value(hfile_name_bytes: bytes, stats: Mapping[str, Any], rtype: int = TYPE_COLUMN_STATS) -> bytes:
    """The Avro bytes of a column stats ``HoodieMetadataRecord`` (what :func:`encode_record` gives, ~10x faster:
    column stats are most of an MDT's records); ``rtype`` 6 for a partition stats record."""
    return b"".join((
        b"\x00\x00\x00\x00\x02", hfile_name_bytes,        # meta fields: null x4, _hoodie_file_name
        b"\x00", avro_long(rtype),                            # key "", type
        b"\x00\x00\x02",                                     # no files, no bloom filter; the stats:
        b"\x02", avro_bytes_of(stats["fileName"].encode("utf-8")),
        b"\x02", avro_bytes_of(stats["columnName"].encode("utf-8")),
        _wrapped_bytes(stats["minValue"]), _wrapped_bytes(stats["maxValue"]),
        _opt_long(stats["valueCount"]), _opt_long(stats["nullCount"]), _opt_long(stats["totalSize"]),
        _opt_long(stats["totalUncompressedSize"]),
        b"\x01" if stats["isDeleted"] else b"\x00", b"\x01" if stats["isTightBound"] else b"\x00",
        b"\x00\x00",                                         # no record index, no secondary index
    ))


def merge_stats(stats: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One partition's statistics of a column from its files' (``HoodieColumnRangeMetadata.merge``): the least
    min, the greatest max (absent bounds ignored), counts and sizes summed (None when any is unknown)."""
    def side(field: str, pick: Any) -> Wrapped:
        present = [st[field] for st in stats if st.get(field) is not None]
        return pick(present, key=lambda w: w[1]["value"]) if present else None

    def total(field: str) -> int | None:
        values: list[Any] = [st.get(field) for st in stats]
        return None if None in values else int(sum(values))

    return {"minValue": side("minValue", min), "maxValue": side("maxValue", max),
            **{f: total(f) for f in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize")}}


def java_hash(text: str, h: int = 0) -> int:
    """``String.hashCode`` continued from ``h`` (unsigned 32 bits)."""
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h


@lru_cache(maxsize=4096)
def prefix_hash(prefix: str) -> int:
    return java_hash(prefix)


def group_of_hash(h: int, num_file_groups: int) -> int:
    if h >= 0x80000000:
        h -= 0x100000000
    a = h if h == -0x80000000 else abs(h)
    rem = a % num_file_groups if a >= 0 else -((-a) % num_file_groups)
    return abs(rem)


def metadata_record(hfile_name: str, rtype: int, files: dict[str, dict[str, Any]] | None = None,
                    stats: dict[str, Any] | None = None, *, record_index: dict[str, Any] | None = None,
                    secondary: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"_hoodie_commit_time": None, "_hoodie_commit_seqno": None, "_hoodie_record_key": None,
            "_hoodie_partition_path": None, "_hoodie_file_name": hfile_name, "key": "", "type": rtype,
            "filesystemMetadata": files, "BloomFilterMetadata": None, "ColumnStatsMetadata": stats,
            "recordIndexMetadata": record_index, "SecondaryIndexMetadata": secondary}


