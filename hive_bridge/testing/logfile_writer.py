"""Encoders of Hudi log blocks, for tests: blocks laid out as Hudi's ``HoodieLogFormatWriter`` writes them
(Avro, parquet, delete and rollback command blocks), which :func:`hive_bridge.formats.logfile.read_log_file`
reads. The layout is described in :mod:`hive_bridge.formats.logfile`.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge.formats.logfile import (
    DATA_BLOCK_VERSION,
    DELETE_RECORD_LIST_SCHEMA,
    LOG_FORMAT_VERSION,
    MAGIC,
    ROLLBACK_COMMAND,
    BlockType,
    HeaderKey,
)

__all__ = [
    "avro_block_content",
    "delete_block_content",
    "encode_block",
    "parquet_block_content",
    "rollback_block",
]

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_II = struct.Struct(">ii")
#: the namespace of Hudi's Avro models (the ordering-value wrappers of a delete block)
_NS = str(DELETE_RECORD_LIST_SCHEMA["namespace"])
_DELETE_PARSED = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)


def encode_block(block_type: BlockType | int, header: Mapping[HeaderKey, str] | Mapping[int, str],
                 content: bytes, footer: Mapping[HeaderKey, str] | Mapping[int, str] | None = None,
                 format_version: int = LOG_FORMAT_VERSION) -> bytes:
    """One complete block, laid out as Hudi's ``HoodieLogFormatWriter`` writes it (version-1 layout; another
    ``format_version`` only changes the number written, for tests of unreadable versions)."""
    head = _metadata_bytes(header)
    foot = _metadata_bytes(footer or {})
    length = 4 + 4 + len(head) + 8 + len(content) + len(foot) + 8
    return b"".join((
        MAGIC, _I64.pack(length), _II.pack(format_version, int(block_type)), head,
        _I64.pack(len(content)), content, foot, _I64.pack(length + 6),
    ))


def _metadata_bytes(meta: Mapping[Any, str]) -> bytes:
    parts = [_I32.pack(len(meta))]
    for key, value in meta.items():
        raw = value.encode("utf-8")
        parts.append(_II.pack(int(key), len(raw)))
        parts.append(raw)
    return b"".join(parts)


def avro_block_content(records: Iterable[Mapping[str, Any]], schema: Mapping[str, Any]) -> bytes:
    """Content of an AVRO_DATA block: the records (as fastavro writes them: datetimes, Decimals, dates for
    logical types) in ``schema``, which is the Avro schema dict to put, as JSON, in the SCHEMA header."""
    parsed = fastavro.parse_schema(dict(schema))
    parts: list[bytes] = []
    buf = io.BytesIO()
    count = 0
    for rec in records:
        buf.seek(0)
        buf.truncate()
        fastavro.schemaless_writer(buf, parsed, rec)
        raw = buf.getvalue()
        parts.append(_I32.pack(len(raw)))
        parts.append(raw)
        count += 1
    return _II.pack(DATA_BLOCK_VERSION, count) + b"".join(parts)


def parquet_block_content(table: pa.Table) -> bytes:
    """Content of a PARQUET_DATA block: ``table`` as one parquet file."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


_INT32 = range(-(2**31), 2**31)


def delete_block_content(keys: Iterable[tuple[str, str, Any]]) -> bytes:
    """Content of a DELETE block (version 3) for (record key, partition path, ordering value) triples.

    The ordering value is wrapped as Hudi does: None -> no value (natural order), bool -> BooleanWrapper,
    int -> IntWrapper when every int of the block fits 32 bits (what Spark SQL's DELETE writes, 0) else
    LongWrapper, float -> DoubleWrapper, str -> StringWrapper, bytes -> BytesWrapper, Decimal ->
    DecimalWrapper. A pair ``(wrapper_name, value)`` such as ``("LongWrapper", 5)`` picks the wrapper.
    """
    triples = list(keys)
    ints = [o for _, _, o in triples if isinstance(o, int) and not isinstance(o, bool)]
    int_wrapper = "IntWrapper" if all(o in _INT32 for o in ints) else "LongWrapper"
    items = []
    for key, partition, ordering in triples:
        items.append({"recordKey": key, "partitionPath": partition,
                      "orderingVal": _wrap_ordering(ordering, int_wrapper)})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _DELETE_PARSED, {"deleteRecordList": items})
    raw = buf.getvalue()
    return _II.pack(DATA_BLOCK_VERSION, len(raw)) + raw


def _wrap_ordering(value: Any, int_wrapper: str) -> Any:
    if value is None:
        return None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        name = value[0] if "." in value[0] else f"{_NS}.{value[0]}"
        return (name, {"value": value[1]})
    if isinstance(value, bool):
        name = "BooleanWrapper"
    elif isinstance(value, int):
        name = int_wrapper
    elif isinstance(value, float):
        name = "DoubleWrapper"
    elif isinstance(value, str):
        name = "StringWrapper"
    elif isinstance(value, bytes):
        name = "BytesWrapper"
    elif isinstance(value, Decimal):
        name = "DecimalWrapper"
    else:
        raise TypeError(f"no Hudi ordering wrapper for {type(value).__name__} {value!r}")
    return (f"{_NS}.{name}", {"value": value})


def rollback_block(instant: str, target_instant: str) -> bytes:
    """A complete COMMAND block, written at ``instant``, rolling back the blocks of ``target_instant``."""
    # header entries in the order of the rollback block Hudi 0.x wrote in the v6 fixture (a Java HashMap's)
    return encode_block(BlockType.COMMAND, {
        HeaderKey.INSTANT_TIME: instant,
        HeaderKey.COMMAND_BLOCK_TYPE: ROLLBACK_COMMAND,
        HeaderKey.TARGET_INSTANT_TIME: target_instant,
    }, b"")
