"""The HFile (version 3) format as Hudi's metadata table uses it: constants, block headers, codecs,
checksums, protobuf fields, Hadoop varints, and the parsing of index and file info blocks.

The metadata table (MDT, ``<table>/.hoodie/metadata/``) stores its base files as HFiles, and its log files carry
HFILE_DATA blocks whose content is a whole HFile. Both writers Hudi has used produce the same layout; the real
tables show both (checked against every MDT file of the shared fixtures):

- HBase's writer (Hudi 0.x and 1.0 through shaded HBase): version 3.3, CRC32C block checksums;
- Hudi's own ``HFileWriterImpl`` (hudi-io): version 3.0, no block checksums (type NULL), index keys without the
  trailing KeyValue fields.

Layout, all integers big-endian::

    data blocks        "DATABLK*"   key-value entries, sorted by row key, no row twice
    (index blocks)     "IDXLEAF2" / "IDXINTE2"   lower levels of a multi-level data index (HBase only)
    meta blocks        "METABLKc"   e.g. Hudi's ``bloomFilter``
    load-on-open:      "IDXROOT2"   root data index, then "IDXROOT2" meta index, then "FILEINF2" file info
    trailer            the last 4096 bytes: b'TRABLK"$', a length-delimited ``TrailerProto``, zero padding, and
                       an int32 version (first byte minor, last three bytes major)

Every block starts with a 33-byte header: magic (8), on-disk size without header (4, checksums included),
uncompressed size without header (4), previous block offset (8), checksum type (1: 0 NULL, 1 CRC32, 2 CRC32C),
bytes per checksum (4), on-disk data size with header (4). The payload (compressed with the trailer's codec:
Hudi reads and writes only NONE and GZ) follows, then one 4-byte checksum per ``bytes per checksum`` bytes of
header + payload.

A data entry is ``int32 key length, int32 value length, key, value`` then, when the file info's
``KEY_VALUE_VERSION`` is 1, an MVCC timestamp as a Hadoop VLong (one zero byte in Hudi's files), and, when the
file info has ``hfile.MAX_TAGS_LEN``, a tags block (int16 length + bytes) before it. The key is an HBase
KeyValue key: int16 row length, row (the UTF-8 record key), int8 family length, family, qualifier, int64
timestamp, int8 type; Hudi always writes no family or qualifier, the latest timestamp (Long.MAX_VALUE) and
Put (4), and this reader insists on that. The row is what this module calls the key.

Index entries are ``int64 offset, int32 on-disk size with header`` and, in a root block, a Hadoop VInt key
length and the key; in leaf and intermediate blocks the keys are delimited by a secondary offset array. A data
index key is a KeyValue key (or just ``int16 row length + row`` from Hudi's writer); HBase may shorten it to a
"fake" key that sorts after the previous block's last row and no later than the block's first row, so lookups
take the last block whose index row is <= the key.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from crc32c import crc32c as _crc32c

from hive_bridge.errors import HudiTableError

TRAILER_SIZE = 4096
BLOCK_HEADER_SIZE = 33
TRAILER_MAGIC = b'TRABLK"$'
VERSION_SIZE = 4

MAGIC_DATA = b"DATABLK*"
MAGIC_META = b"METABLKc"
MAGIC_ROOT_INDEX = b"IDXROOT2"
MAGIC_LEAF_INDEX = b"IDXLEAF2"
MAGIC_INTERMEDIATE_INDEX = b"IDXINTE2"
MAGIC_FILE_INFO = b"FILEINF2"
BLOOM_META_MAGICS = frozenset({b"BLMFMET2", b"DFBLMET2"})   # HBase's own bloom metadata (load-on-open tail)
PBUF_MAGIC = b"PBUF"

KEY_TYPE_PUT = 4
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
MIN_KEY_LENGTH = 2 + 1 + 8 + 1            # row length, family length, timestamp, type (empty row and family)

FI_LAST_KEY = b"hfile.LASTKEY"
FI_KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
FI_MAX_MEMSTORE_TS = b"MAX_MEMSTORE_TS_KEY"
FI_MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
FI_SCHEMA = b"schema"

# Comparators whose order is plain unsigned byte order of the row (all a Hudi MDT file can carry).
ROW_ORDER_COMPARATORS = frozenset({
    "org.apache.hudi.io.storage.HoodieHBaseKVComparator",
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
    "org.apache.hadoop.hbase.CellComparator$CellComparatorImpl",
    "org.apache.hadoop.hbase.KeyValue$KVComparator",
    "org.apache.hadoop.hbase.KeyValue$KeyComparator",
    "org.apache.hadoop.hbase.KeyValue$RawBytesComparator",
})

#: a block header: magic, on-disk size, uncompressed size, previous block offset, checksum type, bytes per
#: checksum, on-disk data size with header
BLOCK_HEADER = struct.Struct(">8siiqBii")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_QI = struct.Struct(">qi")


class HFileError(HudiTableError):
    """An HFile (or a value in it) cannot be read; the message names the file, the byte offset and why."""


class Codec(IntEnum):
    """``Compression.Algorithm`` ordinals, as stored in the trailer."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


class ChecksumType(IntEnum):
    """HBase ``ChecksumType`` codes in a block header."""

    NULL = 0
    CRC32 = 1
    CRC32C = 2


# ---------------------------------------------------------------------------------------------- checksums


def crc32c(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC-32C (Castagnoli), the checksum HBase writes by default (the `crc32c` package: hardware or C, GB/s)."""
    return int(_crc32c(data, crc))

def block_checksum(kind: int, data: bytes | memoryview) -> int:
    return crc32c(data) if kind == ChecksumType.CRC32C else zlib.crc32(data) & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------- protobuf


class ParseError(Exception):
    """Something does not parse: where (a byte offset in the file) and what. Raised inside the package only:
    :class:`~hive_bridge.formats.hfile.reader.HFileReader` turns it into an :class:`HFileError` naming the file."""

    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset
        self.what = what


def pb_varint(buf: bytes | memoryview, pos: int, end: int, base: int) -> tuple[int, int]:
    """A protobuf varint at ``pos`` (``base`` = the file offset of ``buf[0]``, for messages)."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise ParseError(base + start, "protobuf varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ParseError(base + start, "protobuf varint longer than 10 bytes")


def pb_fields(buf: bytes | memoryview, pos: int, end: int, base: int) -> list[tuple[int, int, Any]]:
    """The fields of one protobuf message: (field number, offset, value: int or bytes)."""
    fields: list[tuple[int, int, Any]] = []
    while pos < end:
        at = pos
        tag, pos = pb_varint(buf, pos, end, base)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ParseError(base + at, "protobuf field number 0")
        value: Any
        if wire == 0:
            value, pos = pb_varint(buf, pos, end, base)
        elif wire == 2:
            n, pos = pb_varint(buf, pos, end, base)
            if n > end - pos:
                raise ParseError(base + at, f"protobuf field {number} of {n} bytes runs past the end of its message")
            value = bytes(buf[pos:pos + n])
            pos += n
        elif wire == 1 or wire == 5:
            n = 8 if wire == 1 else 4
            if n > end - pos:
                raise ParseError(base + at, f"protobuf field {number} runs past the end of its message")
            value = int.from_bytes(buf[pos:pos + n], "little")
            pos += n
        else:
            raise ParseError(base + at, f"protobuf wire type {wire} (field {number}) is not valid here")
        fields.append((number, at, value))
    return fields


def read_vlong(buf: bytes | memoryview, pos: int, end: int, base: int) -> tuple[int, int]:
    """Hadoop ``WritableUtils.readVLong`` at ``pos``: (value, position after it)."""
    if pos >= end:
        raise ParseError(base + pos, "variable-length integer runs past the end of its block")
    first = buf[pos]
    if first >= 128:
        first -= 256
    if first >= -112:
        return first, pos + 1
    size = -119 - first if first < -120 else -111 - first      # bytes including the first
    if pos + size > end:
        raise ParseError(base + pos, "variable-length integer runs past the end of its block")
    value = int.from_bytes(buf[pos + 1:pos + size], "big")
    return (~value if first < -120 else value), pos + size



# ---------------------------------------------------------------------------------------------- blocks


@dataclass(frozen=True, slots=True)
class IndexEntry:
    offset: int
    size: int            # on-disk size with header
    key: bytes           # data index: the row (record key) of the index key; meta index: the block's name


def gunzip(payload: bytes | memoryview, expected: int) -> bytes:
    """Decompress one or more concatenated gzip members to exactly ``expected`` bytes (ValueError if not)."""
    out = bytearray()
    rest = bytes(payload)
    while True:
        d = zlib.decompressobj(31)
        try:
            out += d.decompress(rest, expected + 1 - len(out))
        except zlib.error as exc:
            raise ValueError(f"gzip data is corrupt ({exc})") from None
        if len(out) > expected:
            raise ValueError(f"gzip data inflates to more than the {expected} bytes the header says")
        if not d.eof:
            raise ValueError("gzip data ends early (truncated)")
        rest = d.unused_data
        if not rest:
            break
    if len(out) != expected:
        raise ValueError(f"gzip data inflates to {len(out)} bytes, the header says {expected}")
    return bytes(out)


def row_of_key(key: bytes | memoryview, at: int) -> bytes:
    """The row of a KeyValue key (or of a bare ``int16 length + row`` index key)."""
    if len(key) < 2:
        raise ParseError(at, f"key of {len(key)} bytes has no row length")
    rowlen = _I16.unpack_from(key, 0)[0]
    if rowlen < 0 or 2 + rowlen > len(key):
        raise ParseError(at, f"key row length {rowlen} does not fit in its {len(key)}-byte key")
    return bytes(key[2:2 + rowlen])


#: files up to this size are read whole (one request); larger ones in ranges: the tail (trailer and, usually, the

def codec_name(code: int) -> str:
    try:
        return Codec(code).name
    except ValueError:
        return f"#{code} (unknown)"



# ---------------------------------------------------------------------------------------------- index and file info


def parse_root_index(payload: bytes, offset: int, count: int, *, data_index: bool,
                     multi_level: bool) -> list[IndexEntry]:
    """The ``count`` entries of a root index block (the data index's when ``data_index``: keys become rows;
    the meta index's otherwise: keys are block names) at file offset ``offset``."""
    base = offset + BLOCK_HEADER_SIZE
    entries: list[IndexEntry] = []
    pos = 0
    end = len(payload)
    for i in range(count):
        if pos + 12 > end:
            raise ParseError(base + pos, f"index entry {i} of {count} runs past the end of its block")
        block_offset, size = _QI.unpack_from(payload, pos)
        key_len, pos = read_vlong(payload, pos + 12, end, base)
        if key_len < 0 or key_len > end - pos:
            raise ParseError(base + pos, f"index entry {i} key of {key_len} bytes runs past the end of its block")
        key = payload[pos:pos + key_len]
        entries.append(IndexEntry(block_offset, size, row_of_key(key, base + pos) if data_index else key))
        pos += key_len
    rest = end - pos
    if rest and not (multi_level and rest == 16):        # mid-key metadata: int64, int32, int32
        raise ParseError(base + pos, f"{rest} bytes after the {count} entries of the index block (count wrong "
                               "or block damaged)")
    return entries



def parse_nonroot_index(payload: bytes, offset: int, parent_key: bytes) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index block at file offset ``offset`` (keys delimited by a
    secondary offset array), indexed by its parent under ``parent_key``."""
    base = offset + BLOCK_HEADER_SIZE
    end = len(payload)
    if end < 4:
        raise ParseError(base, "index block too short for its entry count")
    count = _I32.unpack_from(payload, 0)[0]
    if count <= 0 or 4 + 4 * (count + 1) > end:
        raise ParseError(base, f"index block entry count {count} does not fit in its {end} bytes")
    secondary = struct.unpack_from(f">{count + 1}i", payload, 4)
    entries_start = 4 + 4 * (count + 1)
    if secondary[0] != 0 or secondary[-1] != end - entries_start:
        raise ParseError(base + 4, "index block entry offsets do not span its entries")
    entries: list[IndexEntry] = []
    for i in range(count):
        a, b = entries_start + secondary[i], entries_start + secondary[i + 1]
        if b - a < 12:
            raise ParseError(base + 4 + 4 * i, f"index entry {i} is {b - a} bytes, too short")
        block_offset, size = _QI.unpack_from(payload, a)
        entries.append(IndexEntry(block_offset, size, row_of_key(payload[a + 12:b], base + a + 12)))
    if entries[0].key < parent_key:
        raise ParseError(base, "index block's first key sorts before the key its parent indexes it by")
    return entries



def parse_file_info(payload: bytes, offset: int) -> dict[bytes, bytes]:
    """The key-value pairs of the file info block at file offset ``offset`` (``PBUF`` + a ``FileInfoProto``)."""
    base = offset + BLOCK_HEADER_SIZE
    if payload[:4] != PBUF_MAGIC:
        raise ParseError(base, f"file info starts with {payload[:4]!r}, not {PBUF_MAGIC!r}")
    n, pos = pb_varint(payload, 4, len(payload), base)
    if pos + n != len(payload):
        raise ParseError(base + 4, f"file info protobuf of {n} bytes does not fill its {len(payload)}-byte block")
    info: dict[bytes, bytes] = {}
    for number, at, value in pb_fields(payload, pos, pos + n, base):
        if number != 1:
            continue
        if not isinstance(value, bytes):
            raise ParseError(base + at, "file info entry is not a message")
        pair = {f: v for f, _, v in pb_fields(value, 0, len(value), base + at)}
        k, v = pair.get(1), pair.get(2)
        if not isinstance(k, bytes) or not isinstance(v, bytes):
            raise ParseError(base + at, "file info entry lacks its key or value")
        if k in info:
            raise ParseError(base + at, f"file info key {k!r} appears twice")
        info[k] = v
    return info

