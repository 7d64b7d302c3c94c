"""Hudi merge-on-read log files: a reader that never trusts a damaged byte.

A log file (``.<fileId>_<instant>.log.<version>_<writeToken>``) is a sequence of blocks. Every block of log
format version 1 (the only one Hudi has written since 0.x) is laid out big-endian as::

    magic        6 bytes   b"#HUDI#"
    length       int64     bytes after this field, up to and including the trailing length
    version      int32     log format version (1)
    type         int32     BlockType ordinal
    header       int32 n, then n x (int32 key ordinal, int32 byte length, UTF-8 value)
    content_len  int64
    content      content_len bytes
    footer       as the header (Hudi writes it empty)
    trailing     int64     total bytes of the block from the magic up to (not including) this field,
                           i.e. length + 6; Hudi's reader checks it to detect a partly written block

Content by block type (the first int32 of Avro and delete content is the *block* version, 3 today):

- AVRO_DATA: int32 block version, int32 record count, then per record an int32 length and the record's
  Avro binary encoding in the writer schema of the SCHEMA header.
- PARQUET_DATA: a whole parquet file (magic ``PAR1`` at both ends), nothing else.
- DELETE: int32 block version; version 3: int32 length, then one Avro datum of ``HoodieDeleteRecordList``
  (record key, partition path, ordering value wrapped in a union of one-field records). Versions 1-2 held a
  Kryo-serialised ``HoodieKey[]``, which this module does not read.
- COMMAND: empty; header COMMAND_BLOCK_TYPE "0" is a rollback of the blocks whose INSTANT_TIME is the
  header's TARGET_INSTANT_TIME.
- HFILE_DATA (metadata table), CDC_DATA: not decoded here.

:func:`read_log_file` walks the blocks the way Hudi's ``HoodieLogFileReader`` does: a block is accepted only
when its length fits in the file, its trailing length agrees and every field inside it ends exactly where the
trailing length begins; anything else starts a corrupt region that ends at the next magic that begins a good
block (or at the end of the file). It never raises for bad content. One difference from Hudi: a well-formed
block followed by garbage is kept (Hudi's reader also demands that the next six bytes be a magic or the end of
the file, and so discards the last good block of a file with a garbage tail); keeping it can only widen what a
caller believes the slice may hold.

The encoders tests write log files with are in :mod:`hive_bridge.testing.logfile_writer`.
"""

from __future__ import annotations

import io
import json
import os
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import IntEnum
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.avro_schema import avro_to_arrow_schema
from hive_bridge.storage.core import Storage, is_local_uri

__all__ = [
    "DATA_BLOCK_VERSION",
    "DELETE_RECORD_LIST_SCHEMA",
    "LOG_FORMAT_VERSION",
    "MAGIC",
    "ROLLBACK_COMMAND",
    "BlockType",
    "HeaderKey",
    "LogBlock",
    "LogFileContents",
    "LogFormatError",
    "avro_block_records",
    "data_block_table",
    "delete_block_keys",
    "delete_block_records",
    "read_log_file",
]

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
DATA_BLOCK_VERSION = 3          # HoodieLogBlock.version: Avro data and delete block content
ROLLBACK_COMMAND = "0"          # HoodieCommandBlockTypeEnum.ROLLBACK_BLOCK.ordinal()

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_II = struct.Struct(">ii")
_MIN_V1_LENGTH = 4 + 4 + 4 + 8 + 4 + 8   # version, type, empty header, content length, empty footer, trailing


class LogFormatError(HudiTableError):
    """A log file, or a block of one, cannot be read; the message names the file, the byte offset and why."""


class BlockType(IntEnum):
    """``HoodieLogBlock.HoodieLogBlockType`` ordinals."""

    COMMAND = 0
    DELETE = 1
    CORRUPTED = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """``HoodieLogBlock.HeaderMetadataType`` ordinals (the keys of block headers)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


@dataclass(frozen=True, slots=True)
class LogBlock:
    """One well-formed block of a log file (its content undecoded)."""

    offset: int                  # byte offset of the block's magic
    length: int                  # total bytes of the block, magic and trailing length included
    format_version: int
    block_type: int              # a BlockType value, or an int this module does not know
    header: Mapping[int, str]
    footer: Mapping[int, str]
    content: bytes

    @property
    def instant(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def is_rollback(self) -> bool:
        return (self.block_type == BlockType.COMMAND
                and self.header.get(HeaderKey.COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND)

    def __repr__(self) -> str:
        kind = BlockType(self.block_type).name if self.block_type in _KNOWN_TYPES else str(self.block_type)
        return (f"LogBlock(offset={self.offset}, length={self.length}, type={kind}, instant={self.instant!r}, "
                f"header_keys={sorted(self.header)}, content={len(self.content)} bytes)")


_KNOWN_TYPES = frozenset(int(t) for t in BlockType)


@dataclass(frozen=True, slots=True)
class LogFileContents:
    """Every good block of a log file, and what could not be read."""

    path: str
    size: int
    blocks: tuple[LogBlock, ...]
    corrupt_regions: int         # byte ranges skipped: a bad block up to the next good one, or a bad tail
    readable_end: int            # offset after the last good block (0 if there is none)
    problems: tuple[str, ...]    # "<path>: byte <offset>: <what>", one per corrupt region


# ---------------------------------------------------------------------------------------------- reading


class _Bad(Exception):
    """A block that does not parse: where and why (internal)."""

    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset
        self.what = what


def read_log_file(path: str | os.PathLike[str], data: bytes | None = None, *,
                  storage: Storage | None = None) -> LogFileContents:
    """Read the blocks of one log file (``data`` if given, else the file's bytes, read once through ``storage``,
    the table's: a file on object storage; without one, ``path`` is a local file).

    Never raises for bad content: a truncated, corrupt or foreign region is skipped up to the next magic that
    starts a good block, counted in ``corrupt_regions`` and described in ``problems``. Raises
    :class:`LogFormatError` only when the file cannot be read at all.
    """
    spath = os.fspath(path)
    if data is None:
        try:
            data = _read_whole(spath, storage)
        except OSError as exc:
            raise LogFormatError(f"{spath}: cannot read log file: {exc.strerror or exc}") from None
    else:
        data = bytes(data)
    size = len(data)
    blocks: list[LogBlock] = []
    problems: list[str] = []
    readable_end = 0
    bad_start = -1
    bad_what = ""
    pos = 0
    while pos < size:
        if data.startswith(MAGIC, pos):
            try:
                block = _parse_block(data, pos, size)
            except _Bad as bad:
                what = bad.what if bad.offset == pos else f"block at byte {pos}: {bad.what} (byte {bad.offset})"
            else:
                if bad_start >= 0:
                    problems.append(f"{spath}: byte {bad_start}: {bad_what}; "
                                    f"skipped {pos - bad_start} bytes to the next block at byte {pos}")
                    bad_start = -1
                blocks.append(block)
                pos += block.length
                readable_end = pos
                continue
        else:
            what = f"no block magic {MAGIC.decode()!r} (found {data[pos:pos + 6]!r})"
        if bad_start < 0:
            bad_start, bad_what = pos, what
        nxt = data.find(MAGIC, pos + 1)
        pos = size if nxt < 0 else nxt
    if bad_start >= 0:
        problems.append(f"{spath}: byte {bad_start}: {bad_what}; "
                        f"{size - bad_start} bytes up to the end of the file unreadable")
    return LogFileContents(spath, size, tuple(blocks), len(problems), readable_end, tuple(problems))


def _read_whole(path: str, storage: Storage | None) -> bytes:
    """The bytes of a log file: through ``storage``, else from the local file system (a URI without its Storage
    is refused). Raises OSError."""
    if storage is not None:
        return storage.read_bytes(path)
    if not is_local_uri(path):
        raise LogFormatError(f"{path}: a log file on object storage is read through its table's Storage (none "
                             "given)")
    with open(path, "rb") as fh:
        return fh.read()


def _parse_block(data: bytes, pos: int, size: int) -> LogBlock:
    if pos + 14 > size:
        raise _Bad(pos, f"block cut off after {size - pos} bytes (no complete length field)")
    (length,) = _I64.unpack_from(data, pos + 6)
    end = pos + 14 + length
    if length < 8:
        raise _Bad(pos, f"impossible block length {length}")
    if end > size:
        raise _Bad(pos, f"block length {length} runs past the end of the file ({end - size} bytes missing)")
    (trailing,) = _I64.unpack_from(data, end - 8)
    if trailing != length + 6:
        raise _Bad(pos, f"block length {length} does not match its trailing length {trailing} "
                        f"(expected {length + 6}): partly written or damaged")
    if length < _MIN_V1_LENGTH:
        raise _Bad(pos, f"block length {length} too short for a block")
    version, block_type = _II.unpack_from(data, pos + 14)
    if version != LOG_FORMAT_VERSION:
        raise _Bad(pos, f"log format version {version} not readable (only {LOG_FORMAT_VERSION})")
    limit = end - 8
    header, p = _parse_metadata(data, pos + 22, limit, "header")
    if p + 8 > limit:
        raise _Bad(p, "content length field runs past the block's end")
    (content_len,) = _I64.unpack_from(data, p)
    p += 8
    if content_len < 0 or p + content_len > limit:
        raise _Bad(p - 8, f"content length {content_len} runs past the block's end")
    content = data[p:p + content_len]
    p += content_len
    footer, p = _parse_metadata(data, p, limit, "footer")
    if p != limit:
        raise _Bad(p, f"{limit - p} unexplained bytes before the trailing length")
    return LogBlock(pos, end - pos, version, block_type, header, footer, content)


def _parse_metadata(data: bytes, p: int, limit: int, what: str) -> tuple[dict[int, str], int]:
    if p + 4 > limit:
        raise _Bad(p, f"{what} entry count runs past the block's end")
    (count,) = _I32.unpack_from(data, p)
    p += 4
    if count < 0 or count > (limit - p) // 8:
        raise _Bad(p - 4, f"impossible {what} entry count {count}")
    out: dict[int, str] = {}
    for _ in range(count):
        if p + 8 > limit:
            raise _Bad(p, f"{what} entry runs past the block's end")
        key, n = _II.unpack_from(data, p)
        p += 8
        if n < 0 or p + n > limit:
            raise _Bad(p - 8, f"{what} value length {n} runs past the block's end")
        try:
            out[key] = data[p:p + n].decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad(p, f"{what} value of key {key} is not UTF-8") from None
        p += n
    return out, p


# ---------------------------------------------------------------------------------------------- decoding


def _where(block: LogBlock, path: str) -> str:
    return f"{path or '<log file>'}: byte {block.offset}"


def data_block_table(block: LogBlock, path: str = "") -> pa.Table:
    """The records of an Avro or parquet data block as an Arrow table.

    Avro blocks are decoded in the writer schema of their SCHEMA header and returned with the schema
    :func:`hive_bridge.formats.avro_schema.avro_to_arrow_schema` gives for it (timestamps, dates and decimals
    as their true values). Parquet blocks are read as the parquet file they are. Anything else (HFile, CDC,
    commands, deletes, unknown types) or any decode failure raises :class:`LogFormatError`.
    """
    if block.block_type == BlockType.AVRO_DATA:
        return _avro_table(block, path)
    if block.block_type == BlockType.PARQUET_DATA:
        try:
            # one thread: faster for a block's small file, and pyarrow 26's thread pool can abort the
            # interpreter at exit after many small reads
            return pq.ParquetFile(pa.BufferReader(block.content)).read(use_threads=False)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise LogFormatError(f"{_where(block, path)}: parquet data block does not read: {exc}") from None
    name = BlockType(block.block_type).name if block.block_type in _KNOWN_TYPES else f"type {block.block_type}"
    raise LogFormatError(f"{_where(block, path)}: {name} block not readable as data records")


def avro_block_records(block: LogBlock, path: str, parsed_schema: Any) -> list[Any]:
    """The records of an Avro data block's content (version, count, then each record framed by its length),
    decoded with ``parsed_schema`` (fastavro's parsed form of the block's SCHEMA header); a frame or record that
    does not fit is a :class:`LogFormatError` naming the block and the record."""
    where = _where(block, path)
    content = block.content
    if len(content) < 8:
        raise LogFormatError(f"{where}: Avro data block content too short ({len(content)} bytes)")
    version, count = _II.unpack_from(content, 0)
    if not 1 <= version <= DATA_BLOCK_VERSION:
        raise LogFormatError(f"{where}: Avro data block version {version} not readable")
    if count < 0 or count > (len(content) - 8) // 4:
        raise LogFormatError(f"{where}: impossible record count {count}")
    fo = io.BytesIO(content)
    p = 8
    records: list[Any] = []
    reader = fastavro.schemaless_reader
    try:
        for i in range(count):
            if p + 4 > len(content):
                raise LogFormatError(f"{where}: record {i} of {count} cut off")
            (n,) = _I32.unpack_from(content, p)
            p += 4
            if n < 0 or p + n > len(content):
                raise LogFormatError(f"{where}: record {i} length {n} runs past the block's content")
            fo.seek(p)
            records.append(reader(fo, parsed_schema, None))
            if fo.tell() != p + n:
                raise LogFormatError(f"{where}: record {i} decodes to {fo.tell() - p} bytes, "
                                     f"its frame says {n}: not written in the header's schema")
            p += n
    except LogFormatError:
        raise
    except Exception as exc:  # fastavro raises many types (EOFError, ValueError, UnicodeDecodeError, ...)
        raise LogFormatError(f"{where}: record {len(records)} does not decode "
                             f"({type(exc).__name__}: {exc})") from None
    if p != len(content):
        raise LogFormatError(f"{where}: {len(content) - p} bytes after the last of {count} records")
    return records


def _avro_table(block: LogBlock, path: str) -> pa.Table:
    where = _where(block, path)
    schema_json = block.header.get(HeaderKey.SCHEMA)
    if schema_json is None:
        raise LogFormatError(f"{where}: Avro data block has no SCHEMA header")
    try:
        decoder = _avro_decoder(schema_json)
    except Exception as exc:  # JSON, fastavro's parser and the Arrow mapping each raise their own types
        raise LogFormatError(f"{where}: Avro data block schema not usable: {exc}") from None
    records = avro_block_records(block, path, decoder.parsed)
    try:
        for rec in records:
            for name, fix in decoder.fixers:
                value = rec[name]
                if value is not None:
                    rec[name] = fix(value)
        rows = pa.array(records, type=decoder.row_type)
        return pa.Table.from_batches([pa.RecordBatch.from_struct_array(rows)], schema=decoder.arrow_schema)
    except (pa.ArrowException, ValueError, TypeError, ArithmeticError) as exc:
        raise LogFormatError(f"{where}: records do not convert to Arrow: {exc}") from None


@dataclass(frozen=True)
class _AvroDecoder:
    parsed: Any                                              # fastavro schema, logical types stripped
    arrow_schema: pa.Schema
    row_type: pa.StructType                                  # the Arrow schema as one struct
    fixers: tuple[tuple[str, Callable[[Any], Any]], ...]     # top-level fields whose raw values need fixing


@lru_cache(maxsize=128)
def _avro_decoder(schema_json: str) -> _AvroDecoder:
    """Per writer schema, once: the schema fastavro decodes with (logical types removed, so values come back
    raw: epoch counts, unscaled decimal bytes), the Arrow schema (avro_to_arrow_schema's, for the schema with
    its named-type references inlined), and the fields whose raw values Arrow does not take as they are."""
    schema = json.loads(schema_json.replace("\\:", ":"))
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise HudiTableError("schema is not an Avro record")
    parsed = fastavro.parse_schema(_strip_logical(schema))
    expanded: Any = fastavro.schema.expand_schema(schema)
    arrow_schema = avro_to_arrow_schema(json.dumps(expanded))
    fixers = []
    for field in expanded["fields"]:
        fix = _fixer(field["type"])
        if fix is not None:
            fixers.append((field["name"], fix))
    return _AvroDecoder(parsed, arrow_schema, pa.struct(list(arrow_schema)), tuple(fixers))


def _strip_logical(t: Any) -> Any:
    if isinstance(t, list):
        return [_strip_logical(x) for x in t]
    if isinstance(t, dict):
        out = {k: v for k, v in t.items() if k != "logicalType"}
        for key in ("type", "items", "values"):
            if key in out and not isinstance(out[key], str):
                out[key] = _strip_logical(out[key])
        if "fields" in out:
            out["fields"] = [{**f, "type": _strip_logical(f["type"])} for f in out["fields"]]
        return out
    return t


def _fixer(t: Any) -> Callable[[Any], Any] | None:
    """For an (inlined) Avro type: a function turning a raw decoded non-null value into what ``pa.array``
    takes for its Arrow type, or None when the raw value already is (everything but decimals, at any depth)."""
    if isinstance(t, list):
        branches = [x for x in t if x != "null"]
        return _fixer(branches[0]) if len(branches) == 1 else None
    if not isinstance(t, dict):
        return None
    kind = t.get("type")
    if t.get("logicalType") == "decimal" and kind in ("bytes", "fixed"):
        scale = int(t.get("scale", 0))

        def decimal(raw: bytes) -> Decimal:
            sign, digits, _ = Decimal(int.from_bytes(raw, "big", signed=True)).as_tuple()
            return Decimal((sign, digits, -scale))

        return decimal
    if kind in ("record", "error"):
        subs: list[tuple[str, Callable[[Any], Any]]] = []
        for fld in t.get("fields", []):
            sub = _fixer(fld["type"])
            if sub is not None:
                subs.append((fld["name"], sub))
        if not subs:
            return None

        def record(value: dict[str, Any]) -> dict[str, Any]:
            out = dict(value)
            for n, f in subs:
                if out.get(n) is not None:
                    out[n] = f(out[n])
            return out

        return record
    if kind == "array":
        item = _fixer(t.get("items"))
        if item is None:
            return None
        return lambda value: [None if v is None else item(v) for v in value]
    if kind == "map":
        val = _fixer(t.get("values"))
        if val is None:
            return None
        return lambda value: {k: (None if v is None else val(v)) for k, v in value.items()}
    if isinstance(kind, dict | list):
        return _fixer(kind)
    return None


# The Avro schema of a version-3 delete block's content (HoodieDeleteRecordList.avsc, Hudi 0.11+ / 1.x).
_NS = "org.apache.hudi.avro.model"


def _wrapper(name: str, value_type: Any) -> dict[str, Any]:
    return {"type": "record", "name": name, "namespace": _NS, "fields": [{"name": "value", "type": value_type}]}


_ORDERING_WRAPPERS: list[Any] = [
    "null",
    _wrapper("BooleanWrapper", "boolean"),
    _wrapper("IntWrapper", "int"),
    _wrapper("LongWrapper", "long"),
    _wrapper("FloatWrapper", "float"),
    _wrapper("DoubleWrapper", "double"),
    _wrapper("BytesWrapper", "bytes"),
    _wrapper("StringWrapper", "string"),
    _wrapper("DateWrapper", "int"),
    _wrapper("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    _wrapper("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    _wrapper("TimestampMicrosWrapper", "long"),
    _wrapper("ArrayWrapper", ["null", {"type": "array", "items": [
        "null", *(f"{_NS}.{n}" for n in (
            "BooleanWrapper", "IntWrapper", "LongWrapper", "FloatWrapper", "DoubleWrapper", "BytesWrapper",
            "StringWrapper", "DateWrapper", "DecimalWrapper", "TimeMicrosWrapper", "TimestampMicrosWrapper")),
        _wrapper("LocalDateWrapper", "int"),
    ]}]),
]
_ORDERING_WRAPPERS[-1]["fields"][0]["default"] = None

DELETE_RECORD_LIST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "HoodieDeleteRecordList",
    "namespace": _NS,
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record",
        "name": "HoodieDeleteRecord",
        "namespace": _NS,
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": _ORDERING_WRAPPERS, "default": None},
        ],
    }}}],
}
_DELETE_PARSED = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)


def delete_block_keys(block: LogBlock, path: str = "") -> list[tuple[str, str]]:
    """The (record key, partition path) pairs a DELETE block removes (a partition path of None reads as "").

    Reads block version 3 (an Avro ``HoodieDeleteRecordList``); the Kryo-serialised keys of versions 1-2 and
    anything that does not decode raise :class:`LogFormatError`.
    """
    return [(key, partition) for key, partition, _ in delete_block_records(block, path)]


def _unwrap(wrapped: Any) -> Any:
    """A wrapper decoded with its record name (``(name, {"value": v})``) -> v; None stays None."""
    if wrapped is None:
        return None
    value = wrapped[1]["value"] if isinstance(wrapped, tuple) else wrapped["value"]
    if isinstance(value, tuple):        # the ArrayWrapper's nullable array
        value = value[1]
    return [_unwrap(v) for v in value] if isinstance(value, list) else value


def _ordering_value(wrapped: Any) -> Any:
    if wrapped is None:
        return None
    name = wrapped[0] if isinstance(wrapped, tuple) else ""
    value = _unwrap(wrapped)
    if name.endswith(".IntWrapper") and value == 0:
        return None                     # Hudi's default ordering value: natural (commit-time) order
    return value


def delete_block_records(block: LogBlock, path: str = "") -> list[tuple[str, str, Any]]:
    """The (record key, partition path, ordering value) of each record a DELETE block removes, as
    :func:`delete_block_keys` reads them. The ordering value is the wrapped value (a list for an array of
    ordering fields), None when the delete carries none or Hudi's default, an ``IntWrapper`` 0 (what Hudi's own
    deletes carry: natural order, the delete wins as by commit time, whatever the record's ordering value)."""
    where = _where(block, path)
    if block.block_type != BlockType.DELETE:
        raise LogFormatError(f"{where}: not a delete block (type {block.block_type})")
    content = block.content
    if len(content) < 4:
        raise LogFormatError(f"{where}: delete block content too short ({len(content)} bytes)")
    (version,) = _I32.unpack_from(content, 0)
    if version != DATA_BLOCK_VERSION:
        kind = "Kryo-serialised (Hudi < 0.11) " if version in (1, 2) else ""
        raise LogFormatError(f"{where}: {kind}delete block version {version} not readable")
    if len(content) < 8:
        raise LogFormatError(f"{where}: delete block content too short ({len(content)} bytes)")
    (n,) = _I32.unpack_from(content, 4)
    if n < 0 or 8 + n != len(content):
        raise LogFormatError(f"{where}: delete list length {n} does not match the content ({len(content) - 8})")
    fo = io.BytesIO(content)
    fo.seek(8)
    try:
        # the wrappers' names kept: an IntWrapper 0 is Hudi's default ordering value, a LongWrapper 0 is not
        datum: Any = fastavro.schemaless_reader(fo, _DELETE_PARSED, None, return_record_name=True)
    except Exception as exc:  # fastavro raises many types
        raise LogFormatError(f"{where}: delete list does not decode ({type(exc).__name__}: {exc})") from None
    if fo.tell() != len(content):
        raise LogFormatError(f"{where}: delete list decodes to {fo.tell() - 8} bytes, its frame says {n}")
    out: list[tuple[str, str, Any]] = []
    for i, rec in enumerate(datum["deleteRecordList"]):
        key = rec["recordKey"]
        if key is None:
            raise LogFormatError(f"{where}: delete record {i} has no record key")
        out.append((key, rec["partitionPath"] or "", _ordering_value(rec["orderingVal"])))
    return out
