"""The metadata table's names and keys: its partitions, record types, and how Hudi forms each record key.

Facts behind the keys (verified on the fixtures): column stats key = base64(XXH64(column)) +
base64(XXH64(partition)) + base64(MD5(file name)) with XXH64's seed the Java *int* 0xdabadaba sign-extended to a
long (0xFFFFFFFFDABADABA, not 0xdabadaba); a non-partitioned table's partition is ``"."``; partition stats key =
column + partition parts; secondary index key = escape(value) + "$" + escape(record key) (``\\``, ``$`` and NUL
escaped with ``\\``, a NULL value is a lone NUL).
"""

from __future__ import annotations

import base64
import hashlib
from datetime import date, datetime
from typing import Any

import xxhash

from hive_bridge.errors import MetadataTableError

__all__ = [
    "ALL_PARTITIONS_KEY",
    "BLOOM_FILTERS",
    "COLUMN_STATS",
    "FILES",
    "MIRRORED_ACTIONS",
    "NON_PARTITIONED_NAME",
    "PARTITION_STATS",
    "RECORD_INDEX",
    "SECONDARY_INDEX_PREFIX",
    "SECONDARY_INDEX_SEPARATOR",
    "SOLO_COMMIT_TIMESTAMP",
    "TYPE_ALL_PARTITIONS",
    "TYPE_BLOOM_FILTER",
    "TYPE_COLUMN_STATS",
    "TYPE_FILES",
    "TYPE_PARTITION_STATS",
    "TYPE_RECORD_INDEX",
    "TYPE_SECONDARY_INDEX",
    "bloom_filter_key",
    "column_index_id",
    "column_stats_key",
    "escape_secondary_value",
    "file_index_id",
    "partition_identifier",
    "partition_index_id",
    "partition_stats_key",
    "secondary_index_key",
    "secondary_value_text",
    "split_secondary_index_key",
    "xxhash64",
]

# MDT partitions (folders) and record types (HoodieMetadataPayload / MetadataPartitionType)
FILES = "files"
COLUMN_STATS = "column_stats"
PARTITION_STATS = "partition_stats"
BLOOM_FILTERS = "bloom_filters"
RECORD_INDEX = "record_index"
SECONDARY_INDEX_PREFIX = "secondary_index_"
ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_NAME = "."
TYPE_ALL_PARTITIONS, TYPE_FILES, TYPE_COLUMN_STATS, TYPE_BLOOM_FILTER = 1, 2, 3, 4
TYPE_RECORD_INDEX, TYPE_PARTITION_STATS, TYPE_SECONDARY_INDEX = 5, 6, 7
#: prefix of the MDT-only instants (initialisation of a partition, index bootstrap): 14 zeros + a 3-digit offset
SOLO_COMMIT_TIMESTAMP = "00000000000000"
#: data table actions that the MDT mirrors with an instant of the same time
MIRRORED_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit", "clean", "rollback", "restore"})

_M64 = 0xFFFFFFFFFFFFFFFF


def xxhash64(data: bytes, seed: int) -> int:
    """XXH64 of ``data`` (``seed`` taken modulo 2**64, as Java passes a sign-extended int), unsigned."""
    return int(xxhash.xxh64_intdigest(data, seed & _M64))


_ID_SEED = 0xFFFFFFFFDABADABA


def _hash_id(text: str) -> str:
    return base64.b64encode(xxhash64(text.encode("utf-8"), _ID_SEED).to_bytes(8, "big")).decode("ascii")


def partition_identifier(partition: str) -> str:
    return NON_PARTITIONED_NAME if partition in ("", NON_PARTITIONED_NAME) else partition


def column_index_id(column: str) -> str:
    """``ColumnIndexID(column).asBase64EncodedString()``: 12 characters."""
    return _hash_id(column)


def partition_index_id(partition: str) -> str:
    """``PartitionIndexID(partition identifier)``: 12 characters (``""`` is hashed as ``"."``)."""
    return _hash_id(partition_identifier(partition))


def file_index_id(file_name: str) -> str:
    """``FileIndexID(file name)``: base64 of the name's MD5, 24 characters."""
    return base64.b64encode(hashlib.md5(file_name.encode("utf-8")).digest()).decode("ascii")


def column_stats_key(column: str, partition: str, file_name: str) -> str:
    return column_index_id(column) + partition_index_id(partition) + file_index_id(file_name)


def partition_stats_key(column: str, partition: str) -> str:
    return column_index_id(column) + partition_index_id(partition)


def bloom_filter_key(partition: str, file_name: str) -> str:
    return partition_index_id(partition) + file_index_id(file_name)


_SI_ESCAPE = "\\"
SECONDARY_INDEX_SEPARATOR = "$"
_SI_NULL = "\x00"


def escape_secondary_value(value: str | None) -> str:
    if value is None:
        return _SI_NULL
    out = []
    for ch in value:
        if ch in (_SI_ESCAPE, SECONDARY_INDEX_SEPARATOR, _SI_NULL):
            out.append(_SI_ESCAPE)
        out.append(ch)
    return "".join(out)


def _si_unescape(text: str) -> str | None:
    if text == _SI_NULL:
        return None
    out = []
    escaped = False
    for ch in text:
        if escaped:
            out.append(ch)
            escaped = False
        elif ch == _SI_ESCAPE:
            escaped = True
        else:
            out.append(ch)
    return "".join(out)


def secondary_index_key(secondary_value: str | None, record_key: str) -> str:
    """``SecondaryIndexKeyUtils.constructSecondaryIndexKey``: escaped value, ``$``, escaped record key."""
    return escape_secondary_value(secondary_value) + SECONDARY_INDEX_SEPARATOR + escape_secondary_value(record_key)


def split_secondary_index_key(key: str) -> tuple[str | None, str | None]:
    """(secondary value, record key) of a secondary index key (the first unescaped ``$`` separates them)."""
    escaped = False
    for i, ch in enumerate(key):
        if ch == _SI_ESCAPE and not escaped:
            escaped = True
        elif ch == SECONDARY_INDEX_SEPARATOR and not escaped:
            return _si_unescape(key[:i]), _si_unescape(key[i + 1:])
        else:
            escaped = False
    raise MetadataTableError(f"secondary index key {key!r} has no unescaped '$' separator")


def secondary_value_text(value: Any) -> str | None:
    """How Hudi writes a secondary value into the key: ``String.valueOf`` of the Avro value (a DATE column's
    days since the epoch, a boolean as ``true``/``false``); None stays NULL."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        raise MetadataTableError("pass a timestamp secondary value as the string Hudi stored (epoch micros)")
    if isinstance(value, date):
        return str((value - date(1970, 1, 1)).days)
    return str(value)


# ================================================================================================ bloom
