"""HFile (version 3) reader for Hudi's metadata table, and decoding of its ``HoodieMetadataRecord`` values.

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

:class:`HFileReader` never trusts a byte: sizes, offsets, counts and checksums are cross-checked, and anything
that does not add up raises :class:`HFileError` naming the file, the byte offset and what is wrong, never a
library exception and never a partial answer. What cannot be detected (tested byte by byte on real files):
fields no reader uses -- the trailer's minor version, uncompressed-index-size and total-uncompressed-bytes (and
first/last data block offsets of a file without entries), each block's previous-block offset and, without a
checksum, its bytes-per-checksum, each gzip header's MTIME/XFL/OS/FTEXT, and deflate bits that inflate to the
same bytes: changing them changes no answer. A changed byte inside a block with neither a checksum nor
compression (codec NONE, checksum NULL; no real MDT file) reads differently without error. Everything else is
caught: by the CRC32C of HBase-written blocks, the CRC32 and size of every gzip payload, the zero checksum room
of Hudi-written blocks, the zero trailer padding, and cross-checked sizes, offsets, counts and key order (the
entry count and the last key only when a scan reaches the end).

:func:`write_hfile` builds HFiles the way the two writers do (for tests: multi-block, multi-level, every
checksum type, codecs NONE and GZ).
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import zlib
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from itertools import pairwise
from types import MappingProxyType
from typing import Any

import fastavro
import numpy as np

from hive_bridge.errors import HudiTableError
from hive_bridge.storage.core import Storage, storage_for

__all__ = [
    "BLOCK_HEADER_SIZE",
    "TRAILER_SIZE",
    "Cells",
    "ChecksumType",
    "Codec",
    "HFileError",
    "HFileReader",
    "HFileTrailer",
    "crc32c",
    "decode_metadata_values",
    "write_hfile",
]

TRAILER_SIZE = 4096
BLOCK_HEADER_SIZE = 33
_TRAILER_MAGIC = b'TRABLK"$'
_VERSION_SIZE = 4

MAGIC_DATA = b"DATABLK*"
MAGIC_META = b"METABLKc"
MAGIC_ROOT_INDEX = b"IDXROOT2"
MAGIC_LEAF_INDEX = b"IDXLEAF2"
MAGIC_INTERMEDIATE_INDEX = b"IDXINTE2"
MAGIC_FILE_INFO = b"FILEINF2"
_BLOOM_META_MAGICS = frozenset({b"BLMFMET2", b"DFBLMET2"})   # HBase's own bloom metadata (load-on-open tail)
_PBUF_MAGIC = b"PBUF"

_KEY_TYPE_PUT = 4
_LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
_MIN_KEY_LENGTH = 2 + 1 + 8 + 1            # row length, family length, timestamp, type (empty row and family)

_FI_LAST_KEY = b"hfile.LASTKEY"
_FI_KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
_FI_MAX_MEMSTORE_TS = b"MAX_MEMSTORE_TS_KEY"
_FI_MAX_TAGS_LEN = b"hfile.MAX_TAGS_LEN"
_FI_SCHEMA = b"schema"

# Comparators whose order is plain unsigned byte order of the row (all a Hudi MDT file can carry).
_ROW_ORDER_COMPARATORS = frozenset({
    "org.apache.hudi.io.storage.HoodieHBaseKVComparator",
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
    "org.apache.hadoop.hbase.CellComparator$CellComparatorImpl",
    "org.apache.hadoop.hbase.KeyValue$KVComparator",
    "org.apache.hadoop.hbase.KeyValue$KeyComparator",
    "org.apache.hadoop.hbase.KeyValue$RawBytesComparator",
})

_BLOCK_CACHE_SIZE = 32

_HEADER = struct.Struct(">8siiqBii")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_II = struct.Struct(">ii")
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


# ---------------------------------------------------------------------------------------------- CRC32C


def _crc32c_table() -> tuple[int, ...]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes | memoryview, crc: int = 0) -> int:
    """CRC-32C (Castagnoli), the checksum HBase writes by default: the `crc32c` package (hardware or C, GB/s),
    else pure Python (about 8 MB/s)."""
    if _fast_crc32c is not None:
        return int(_fast_crc32c(bytes(data), crc))
    table = _CRC32C_TABLE
    crc ^= 0xFFFFFFFF
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


_fast_crc32c: Callable[..., int] | None
try:  # a C/hardware CRC-32C: verifying the metadata table's checksums in Python costs seconds per 100 MB
    from crc32c import crc32c as _fast_crc32c
except ImportError:  # pragma: no cover - a declared dependency
    _fast_crc32c = None


def _checksum(kind: int, data: bytes | memoryview) -> int:
    return crc32c(data) if kind == ChecksumType.CRC32C else zlib.crc32(data) & 0xFFFFFFFF


# ---------------------------------------------------------------------------------------------- protobuf


class _Bad(Exception):
    """Something does not parse: where (a byte offset in the file) and what (internal)."""

    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset
        self.what = what


def _varint(buf: bytes | memoryview, pos: int, end: int, base: int) -> tuple[int, int]:
    """A protobuf varint at ``pos`` (``base`` = the file offset of ``buf[0]``, for messages)."""
    result = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise _Bad(base + start, "protobuf varint runs past the end of its message")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise _Bad(base + start, "protobuf varint longer than 10 bytes")


def _pb_fields(buf: bytes | memoryview, pos: int, end: int, base: int) -> list[tuple[int, int, Any]]:
    """The fields of one protobuf message: (field number, offset, value: int or bytes)."""
    fields: list[tuple[int, int, Any]] = []
    while pos < end:
        at = pos
        tag, pos = _varint(buf, pos, end, base)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise _Bad(base + at, "protobuf field number 0")
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos, end, base)
        elif wire == 2:
            n, pos = _varint(buf, pos, end, base)
            if n > end - pos:
                raise _Bad(base + at, f"protobuf field {number} of {n} bytes runs past the end of its message")
            value = bytes(buf[pos:pos + n])
            pos += n
        elif wire == 1 or wire == 5:
            n = 8 if wire == 1 else 4
            if n > end - pos:
                raise _Bad(base + at, f"protobuf field {number} runs past the end of its message")
            value = int.from_bytes(buf[pos:pos + n], "little")
            pos += n
        else:
            raise _Bad(base + at, f"protobuf wire type {wire} (field {number}) is not valid here")
        fields.append((number, at, value))
    return fields


def _pb_varint_bytes(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _pb_field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _pb_varint_bytes(number << 3) + _pb_varint_bytes(value)
    return _pb_varint_bytes(number << 3 | 2) + _pb_varint_bytes(len(value)) + value


# ---------------------------------------------------------------------------------------------- Hadoop VInt


def _prefix_upper(prefix: bytes) -> bytes | None:
    """The smallest byte string greater than every string starting with ``prefix`` (None: there is none)."""
    p = prefix.rstrip(b"\xff")
    if not p:
        return None
    return p[:-1] + bytes([p[-1] + 1])


def _be(buf: Any, offsets: Any, width: int) -> Any:
    """Big-endian signed integers of ``width`` bytes at ``offsets`` of a uint8 array."""
    idx = offsets[:, None] + np.arange(width, dtype=np.int64)[None, :]
    raw = np.ascontiguousarray(buf[idx])
    return raw.view(f">i{width}").reshape(-1).astype(np.int64)


#: a block's cells as offsets into its payload: (row starts, row ends, value starts, value ends), int64 arrays
_Offsets = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: rows longer than this are compared in Python when checking a block's key order (the vectorised check pads
#: every row of the block to the longest)
_MAX_VECTOR_ROW = 256


#: how every key Hudi writes ends: empty family, the latest timestamp, Put
_KEY_TAIL = b"\x00" + _I64.pack(_LATEST_TIMESTAMP) + bytes([_KEY_TYPE_PUT])


def _fast_cells(payload: bytes) -> _Offsets | None:
    """The cells of a data block laid out as Hudi writes them (no tags, an MVCC timestamp of 0..127), found
    with the least work per cell and checked with array operations (key layout, rows strictly increasing);
    None when anything differs (the careful walk then decodes the block or says what is wrong where)."""
    if not payload:
        return None
    buf = np.frombuffer(payload, dtype=np.uint8)
    offs = _cells_by_key_tail(payload, buf)
    if offs is None:
        offs = _cells_walked(payload)
    if offs is None:
        return None
    klen_a = _be(buf, offs, 4)
    vlen_a = _be(buf, offs + 4, 4)
    rowlen = _be(buf, offs + 8, 2)
    kend = offs + 8 + klen_a
    fam_at = offs + 10 + rowlen
    if (rowlen < 0).any() or ((fam_at + 10) != kend).any():
        return None
    if (buf[fam_at] != 0).any() or (buf[kend - 1] != _KEY_TYPE_PUT).any():
        return None
    if (_be(buf, fam_at + 1, 8) != _LATEST_TIMESTAMP).any():
        return None
    row_starts = offs + 10
    if not _rows_increasing(payload, buf, row_starts, rowlen):
        return None
    return row_starts, fam_at, kend, kend + vlen_a


def _cells_walked(payload: bytes) -> np.ndarray | None:
    """Where each cell starts, walking the cells one by one (each cell's lengths say where the next starts)."""
    offsets: list[int] = []
    append = offsets.append
    unpack = _II.unpack_from
    pos = 0
    end = len(payload)
    try:
        while pos < end:
            klen, vlen = unpack(payload, pos)
            append(pos)
            pos += 8 + klen + vlen
            if payload[pos] >= 128 or klen < _MIN_KEY_LENGTH or vlen < 0:
                return None
            pos += 1
    except (struct.error, IndexError):
        return None
    if pos != end or not offsets:
        return None
    return np.asarray(offsets, dtype=np.int64)


def _cells_by_key_tail(payload: bytes, buf: np.ndarray) -> np.ndarray | None:
    """Where each cell starts, without a walk, for a block whose keys all have the first cell's length (the
    metadata table's keys: fixed-length ids): every key ends with :data:`_KEY_TAIL`, so the cells start
    ``key length + 8`` bytes before each place it ends. Accepted only when those starts are exactly the ones the
    walk would visit (the first at 0, each at the end of the one before: its lengths and a one-byte MVCC
    timestamp; the last ending the block): a value that happens to hold the tail, or keys of other lengths,
    give other starts, and then None (the walk decides)."""
    end = len(payload)
    if end < 8:
        return None
    klen, _ = _II.unpack_from(payload, 0)
    if klen < _MIN_KEY_LENGTH or klen + 9 > end:
        return None
    # a key's last byte: the Put type, at cell start + 8 + klen - 1
    cand = np.flatnonzero(buf[klen + 7:] == _KEY_TYPE_PUT) + (klen + 7)
    tail = _be(buf, cand - 8, 8)
    cand = cand[(tail == _LATEST_TIMESTAMP) & (buf[cand - 9] == 0)]
    starts: np.ndarray = cand - (klen + 7)
    if not len(starts) or starts[0] != 0:
        return None
    if (_be(buf, starts, 4) != klen).any():
        return None
    vlen = _be(buf, starts + 4, 4)
    mvcc_at = starts + 8 + klen + vlen
    if (vlen < 0).any() or int(mvcc_at[-1]) + 1 != end:
        return None
    if (buf[np.minimum(mvcc_at, end - 1)] >= 128).any():
        return None
    if not np.array_equal(starts[1:], mvcc_at[:-1] + 1):
        return None
    return starts


def _rows_increasing(payload: bytes, buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether the rows (``payload[starts[i]:starts[i] + lengths[i]]``) are in strictly increasing unsigned byte
    order: all pairs at once, at the first byte where each pair differs (rows of different lengths padded with
    -1: a row that is a prefix of the next sorts first)."""
    n = len(starts)
    if n < 2:
        return True
    width = int(lengths.max())
    if width > _MAX_VECTOR_ROW:
        rows = [payload[a:a + b] for a, b in zip(starts.tolist(), lengths.tolist(), strict=True)]
        return all(a < b for a, b in pairwise(rows))
    col = np.arange(width, dtype=np.int64)
    idx = starts[:, None] + col[None, :]
    if int(lengths.min()) == width:
        mat: np.ndarray = buf[idx]
    else:
        np.minimum(idx, len(buf) - 1, out=idx)
        mat = np.where(col[None, :] < lengths[:, None], buf[idx].astype(np.int16), np.int16(-1))
    a, b = mat[:-1], mat[1:]
    differ = a != b
    if not differ.any(axis=1).all():
        return False                                   # a row twice
    first = differ.argmax(axis=1)
    r = np.arange(n - 1)
    return bool((b[r, first] > a[r, first]).all())


def _bisect_keys(payload: bytes, starts: np.ndarray, ends: np.ndarray, key: bytes, lo: int) -> int:
    """``bisect_left`` of ``key`` in the rows ``payload[starts[i]:ends[i]]`` (sorted), from ``lo``."""
    hi = len(starts)
    while lo < hi:
        mid = (lo + hi) // 2
        if payload[int(starts[mid]):int(ends[mid])] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _offsets_of(keys: list[bytes], values: list[bytes]) -> tuple[bytes, _Offsets]:
    """Cells decoded the careful way, laid out as (payload, offsets): each row followed by its value."""
    parts: list[bytes] = []
    for k, v in zip(keys, values, strict=True):
        parts += (k, v)
    lengths = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    return b"".join(parts), (starts[0::2], ends[0::2], starts[1::2], ends[1::2])


@dataclass(frozen=True)
class Cells:
    """Entries as arrays over one byte buffer (no object per entry): row i is
    ``buffer[key_starts[i]:key_ends[i]]``, its value ``buffer[value_starts[i]:value_ends[i]]``."""

    buffer: np.ndarray                     # uint8
    key_starts: np.ndarray                 # int64, like the other three
    key_ends: np.ndarray
    value_starts: np.ndarray
    value_ends: np.ndarray

    def __len__(self) -> int:
        return len(self.key_starts)

    @classmethod
    def empty(cls) -> Cells:
        z = np.zeros(0, dtype=np.int64)
        return cls(np.zeros(0, dtype=np.uint8), z, z, z, z)

    @classmethod
    def join(cls, parts: Sequence[tuple[bytes | np.ndarray, _Offsets]]) -> Cells:
        """One :class:`Cells` of several (buffer, offsets) parts, in order."""
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            buf, offs = parts[0]
            return cls(np.frombuffer(buf, dtype=np.uint8) if isinstance(buf, bytes) else buf, *offs)
        bufs = [np.frombuffer(b, dtype=np.uint8) if isinstance(b, bytes) else b for b, _ in parts]
        shifts = np.cumsum([0] + [len(b) for b in bufs[:-1]])
        cols = [np.concatenate([offs[c] + shift for (_, offs), shift in zip(parts, shifts.tolist(), strict=True)])
                for c in range(4)]
        return cls(np.concatenate(bufs), *cols)

    def keys(self) -> list[bytes]:
        data = self.buffer.tobytes()
        return [data[a:b] for a, b in zip(self.key_starts.tolist(), self.key_ends.tolist(), strict=True)]

    def values(self) -> list[bytes]:
        data = self.buffer.tobytes()
        return [data[a:b] for a, b in zip(self.value_starts.tolist(), self.value_ends.tolist(), strict=True)]


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads that read data blocks ahead of :meth:`HFileReader.prefix_cells` (one process-wide pool)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="hfile-read")
        return _POOL


def _read_vlong(buf: bytes | memoryview, pos: int, end: int, base: int) -> tuple[int, int]:
    """Hadoop ``WritableUtils.readVLong`` at ``pos``: (value, position after it)."""
    if pos >= end:
        raise _Bad(base + pos, "variable-length integer runs past the end of its block")
    first = buf[pos]
    if first >= 128:
        first -= 256
    if first >= -112:
        return first, pos + 1
    size = -119 - first if first < -120 else -111 - first      # bytes including the first
    if pos + size > end:
        raise _Bad(base + pos, "variable-length integer runs past the end of its block")
    value = int.from_bytes(buf[pos + 1:pos + size], "big")
    return (~value if first < -120 else value), pos + size


def _write_vlong(value: int) -> bytes:
    """Hadoop ``WritableUtils.writeVLong``."""
    if -112 <= value <= 127:
        return struct.pack(">b", value)
    length = -112
    if value < 0:
        value = ~value
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    n = -(length + 120) if length < -120 else -(length + 112)
    return struct.pack(">b", length) + value.to_bytes(n, "big")


# ---------------------------------------------------------------------------------------------- trailer


@dataclass(frozen=True, slots=True)
class HFileTrailer:
    """The fixed trailer (``TrailerProto`` plus the version), as stored; offsets -1 where unset."""

    major_version: int
    minor_version: int
    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    codec: int


_TRAILER_FIELDS = {
    1: "file_info_offset", 2: "load_on_open_offset", 3: "uncompressed_data_index_size",
    4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count", 7: "entry_count",
    8: "num_data_index_levels", 9: "first_data_block_offset", 10: "last_data_block_offset",
    11: "comparator", 12: "codec", 13: "encryption_key",
}


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _parse_trailer(data: memoryview | _RangeFile) -> HFileTrailer:
    size = len(data)
    if size < TRAILER_SIZE:
        raise _Bad(0, f"file of {size} bytes is shorter than the {TRAILER_SIZE}-byte HFile trailer "
                      "(truncated, or not an HFile)")
    base = size - TRAILER_SIZE
    t = data[base:]
    if bytes(t[:8]) != _TRAILER_MAGIC:
        raise _Bad(base, f"trailer magic is {bytes(t[:8])!r}, not {_TRAILER_MAGIC!r} (truncated, or not an HFile)")
    minor = t[TRAILER_SIZE - 4]
    major = int.from_bytes(t[TRAILER_SIZE - 3:], "big")
    if major != 3:
        raise _Bad(size - 4, f"HFile version {major}.{minor} is not supported (only major version 3)")
    end = TRAILER_SIZE - _VERSION_SIZE
    n, pos = _varint(t, 8, end, base)
    if n > end - pos:
        raise _Bad(base + 8, f"trailer protobuf of {n} bytes does not fit in the trailer")
    fields = _pb_fields(t, pos, pos + n, base)
    padding = bytes(t[pos + n:end])
    if padding.count(0) != len(padding):
        first = next(i for i, b in enumerate(padding) if b)
        raise _Bad(base + pos + n + first, "trailer padding is not zero")
    values: dict[str, Any] = {}
    for number, at, value in fields:
        name = _TRAILER_FIELDS.get(number)
        if name is None:
            continue
        if name in values:
            raise _Bad(base + at, f"trailer field {name} appears twice")
        if (name == "comparator") != isinstance(value, bytes) and name != "encryption_key":
            raise _Bad(base + at, f"trailer field {name} has the wrong protobuf type")
        values[name] = value
    if values.get("encryption_key"):
        raise _Bad(base, "encrypted HFiles are not supported")
    for required in ("file_info_offset", "load_on_open_offset", "entry_count"):
        if required not in values:
            raise _Bad(base, f"trailer has no {required}")
    try:
        comparator = values.get("comparator", b"").decode("utf-8")
    except UnicodeDecodeError:
        raise _Bad(base, "trailer comparator class name is not UTF-8") from None
    if comparator and comparator not in _ROW_ORDER_COMPARATORS:
        raise _Bad(base, f"comparator {comparator!r} is not one whose key order this reader knows")
    return HFileTrailer(
        major_version=major,
        minor_version=minor,
        file_info_offset=_signed64(values["file_info_offset"]),
        load_on_open_offset=_signed64(values["load_on_open_offset"]),
        uncompressed_data_index_size=values.get("uncompressed_data_index_size", 0),
        total_uncompressed_bytes=values.get("total_uncompressed_bytes", 0),
        data_index_count=values.get("data_index_count", 0),
        meta_index_count=values.get("meta_index_count", 0),
        entry_count=values["entry_count"],
        num_data_index_levels=values.get("num_data_index_levels", 1),
        first_data_block_offset=_signed64(values.get("first_data_block_offset", (1 << 64) - 1)),
        last_data_block_offset=_signed64(values.get("last_data_block_offset", (1 << 64) - 1)),
        comparator=comparator,
        codec=values.get("codec", Codec.NONE),
    )


# ---------------------------------------------------------------------------------------------- blocks


@dataclass(frozen=True, slots=True)
class _IndexEntry:
    offset: int
    size: int            # on-disk size with header
    key: bytes           # data index: the row (record key) of the index key; meta index: the block's name


def _gunzip(payload: bytes | memoryview, expected: int) -> bytes:
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


def _row_of_key(key: bytes | memoryview, at: int) -> bytes:
    """The row of a KeyValue key (or of a bare ``int16 length + row`` index key)."""
    if len(key) < 2:
        raise _Bad(at, f"key of {len(key)} bytes has no row length")
    rowlen = _I16.unpack_from(key, 0)[0]
    if rowlen < 0 or 2 + rowlen > len(key):
        raise _Bad(at, f"key row length {rowlen} does not fit in its {len(key)}-byte key")
    return bytes(key[2:2 + rowlen])


#: files up to this size are read whole (one request); larger ones in ranges: the tail (trailer and, usually, the
#: whole load-on-open section), then the data blocks a lookup needs
_WHOLE_FILE_MAX = 4 * 1024 * 1024
_TAIL_READ = 256 * 1024


class _RangeFile:
    """A file read in byte ranges when first sliced, the ranges kept: sliced like the bytes of the whole file
    (a slice is a memoryview of the range holding it). A range that cannot be read, or reads short (a file
    shorter than its listed size), raises :class:`_Bad` at its first byte."""

    def __init__(self, size: int, read: Callable[[int, int], bytes]) -> None:
        self._size = size
        self._read = read
        self._chunks: list[tuple[int, bytes]] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._size

    def fetch(self, start: int, stop: int) -> memoryview:
        """Bytes ``start``..``stop`` (clipped to the file), read with one request unless already held."""
        start, stop = max(0, start), min(self._size, stop)
        if stop <= start:
            return memoryview(b"")
        with self._lock:
            for at, chunk in self._chunks:
                if at <= start and stop <= at + len(chunk):
                    return memoryview(chunk)[start - at:stop - at]
            try:
                data = self._read(start, stop - start)
            except OSError as exc:
                raise _Bad(start, f"cannot read bytes {start}-{stop - 1}: {exc}") from None
            if len(data) != stop - start:
                raise _Bad(start, f"reading bytes {start}-{stop - 1} gave {len(data)} bytes: the file is shorter "
                                  f"than its {self._size} bytes (truncated while read?)")
            self._chunks.append((start, data))
            return memoryview(data)

    def __getitem__(self, key: slice | int) -> Any:
        if isinstance(key, slice):
            start, stop, step = key.indices(self._size)
            if step != 1:
                raise ValueError("only contiguous slices")
            return self.fetch(start, stop)
        i = key + self._size if key < 0 else key
        if not 0 <= i < self._size:
            raise IndexError(key)
        return self.fetch(i, i + 1)[0]


class HFileReader:
    """An HFile held in memory: trailer, index and file info parsed on open, data blocks decoded when read.

    Keys are rows (the MDT record key's UTF-8 bytes), in unsigned byte order; values are the raw cell values.
    """

    def __init__(self, data: bytes | memoryview | _RangeFile, name: str = "", *,
                 verify_checksums: bool = True) -> None:
        """Parse the trailer and the load-on-open section of ``data`` (the whole file); data blocks are read,
        checked and decoded when a lookup or scan first needs them. ``verify_checksums=False`` skips the
        CRC32C of HBase-written blocks (pure Python, about 8 MB/s) for very large files; gzip's own CRC32 and
        every structural check still apply."""
        self.name = name or "<hfile>"
        self._verify_checksums = verify_checksums
        self._data: memoryview | _RangeFile = data if isinstance(data, _RangeFile) else memoryview(bytes(data))
        self._blocks: OrderedDict[int, tuple[list[bytes], list[bytes]]] = OrderedDict()
        try:
            self._open()
        except _Bad as bad:
            raise self._error(bad) from None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, verify_checksums: bool = True,
             storage: Storage | None = None) -> HFileReader:
        """Read the whole file at ``path`` (through ``storage`` when given: a file on object storage) and open
        it."""
        spath = os.fspath(path)
        try:
            if storage is None:
                storage = storage_for(spath) or Storage.local(os.path.dirname(spath) or ".")
            size, read = storage.ranges(spath)
            if size <= _WHOLE_FILE_MAX:
                data: bytes | _RangeFile = read(0, size)
            else:
                # a large file (the column statistics of 100,000 files: 30 MB) is read in ranges: its tail,
                # then only the data blocks a lookup needs
                data = _RangeFile(size, read)
                data.fetch(size - _TAIL_READ, size)
        except OSError as exc:
            raise HFileError(f"{spath}: cannot read HFile: {exc.strerror or exc}") from None
        except _Bad as bad:
            raise HFileError(f"{spath}: byte {bad.offset}: {bad.what}") from None
        return cls(data, spath, verify_checksums=verify_checksums)

    # -------------------------------------------------------------------------------------- public API

    file_info: Mapping[bytes, bytes]
    num_entries: int
    trailer: HFileTrailer

    @property
    def avro_schema(self) -> str | None:
        """The Avro writer schema of the values (file info ``schema``), if the file has one."""
        raw = self.file_info.get(_FI_SCHEMA)
        if raw is None:
            return None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise HFileError(f"{self.name}: file info 'schema' is not UTF-8") from None

    @property
    def meta_block_names(self) -> list[bytes]:
        return list(self._meta_index)

    def meta_block(self, name: bytes) -> bytes | None:
        """The (decompressed) content of the meta block ``name`` (Hudi's ``bloomFilter``), or None."""
        entry = self._meta_index.get(name)
        if entry is None:
            return None
        try:
            return self._read_block(entry.offset, (MAGIC_META,), self._trailer.load_on_open_offset, entry.size)[1]
        except _Bad as bad:
            raise self._error(bad) from None

    def entries(self) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) in key order; raises :class:`HFileError` (possibly after some pairs) if the
        file turns out to be damaged, including when the count or last key disagrees with the trailer."""
        count = 0
        last: bytes | None = None
        self._fetch_blocks(range(len(self._data_index)))
        for i in range(len(self._data_index)):
            keys, values = self._block(i)
            count += len(keys)
            yield from zip(keys, values, strict=True)
            last = keys[-1]
        if count != self.num_entries:
            raise HFileError(f"{self.name}: byte {len(self._data) - TRAILER_SIZE}: the trailer says "
                             f"{self.num_entries} entries, the data blocks hold {count}")
        if self._last_row is not None and last != self._last_row:
            raise HFileError(f"{self.name}: byte {self._trailer.file_info_offset}: file info last key "
                             f"{self._last_row!r} is not the last key of the data {last!r}")

    def prefetch(self, keys: Iterable[bytes]) -> None:
        """Read ahead, in as few requests as blocks allow, the data blocks where ``keys`` would be (a file read
        in ranges; nothing otherwise): many :meth:`get` calls then make no request each."""
        if not isinstance(self._data, _RangeFile) or not self._index_rows:
            return
        wanted = sorted({max(bisect_right(self._index_rows, k) - 1, 0) for k in keys})
        run: list[int] = []
        for i in wanted:
            if run and i - run[-1] > 4:          # blocks close together: one request, the gap read too
                self._fetch_blocks(range(run[0], run[-1] + 1))
                run = []
            run.append(i)
        if run:
            self._fetch_blocks(range(run[0], run[-1] + 1))

    def _fetch_blocks(self, blocks: range) -> None:
        """The bytes of data blocks ``blocks`` (contiguous), in one request (a file read in ranges)."""
        if isinstance(self._data, _RangeFile) and len(blocks):
            index = self._data_index
            try:
                self._data.fetch(index[blocks[0]].offset, index[blocks[-1]].offset + index[blocks[-1]].size)
            except _Bad as bad:
                raise self._error(bad) from None

    def get(self, key: bytes) -> bytes | None:
        """The value of ``key``, found through the block index (one data block decoded), or None."""
        i = bisect_right(self._index_rows, key) - 1
        if i < 0:
            return None
        keys, values = self._block(i)
        j = bisect_left(keys, key)
        if j < len(keys) and keys[j] == key:
            return values[j]
        return None

    def prefix(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order (seeks through the index)."""
        if not prefix:
            yield from self.entries()
            return
        start = max(bisect_right(self._index_rows, prefix) - 1, 0)
        for i in range(start, len(self._data_index)):
            keys, values = self._block(i)
            j = bisect_left(keys, prefix) if i == start else 0
            while j < len(keys):
                k = keys[j]
                if not k.startswith(prefix):
                    return
                yield k, values[j]
                j += 1

    def __len__(self) -> int:
        return self.num_entries

    def __repr__(self) -> str:
        return (f"HFileReader({self.name!r}, version={self._trailer.major_version}.{self._trailer.minor_version}, "
                f"codec={_codec_name(self._trailer.codec)}, entries={self.num_entries}, "
                f"data_blocks={len(self._data_index)}, index_levels={self._trailer.num_data_index_levels})")

    @property
    def data_block_count(self) -> int:
        return len(self._data_index)

    # -------------------------------------------------------------------------------------- opening

    def _error(self, bad: _Bad) -> HFileError:
        return HFileError(f"{self.name}: byte {bad.offset}: {bad.what}")

    def _open(self) -> None:
        data = self._data
        tr = self._trailer = self.trailer = _parse_trailer(data)
        trailer_start = len(data) - TRAILER_SIZE
        base = trailer_start
        if tr.codec not in (Codec.NONE, Codec.GZ):
            raise _Bad(base, f"compression codec {_codec_name(tr.codec)} is not supported (only NONE and GZ, "
                             "the ones Hudi reads)")
        if not 0 <= tr.load_on_open_offset < trailer_start:
            raise _Bad(base, f"load-on-open offset {tr.load_on_open_offset} is outside the file's "
                             f"{trailer_start} bytes before the trailer")
        if tr.num_data_index_levels < 1 or tr.num_data_index_levels > 8:
            raise _Bad(base, f"{tr.num_data_index_levels} data index levels")
        # load-on-open: root data index, meta index, file info, then optionally HBase bloom metadata
        pos = tr.load_on_open_offset
        if isinstance(data, _RangeFile):
            data.fetch(pos, trailer_start)      # in the tail already read, unless the section is large
        _, root, size = self._read_block(pos, (MAGIC_ROOT_INDEX,), trailer_start)
        root_entries = self._parse_root_index(root, pos, tr.data_index_count, data_index=True,
                                              multi_level=tr.num_data_index_levels > 1)
        pos += size
        _, meta, size = self._read_block(pos, (MAGIC_ROOT_INDEX,), trailer_start)
        meta_entries = self._parse_root_index(meta, pos, tr.meta_index_count, data_index=False, multi_level=False)
        pos += size
        if pos != tr.file_info_offset:
            raise _Bad(base, f"trailer says the file info is at byte {tr.file_info_offset}, the blocks before it "
                             f"end at byte {pos}")
        _, info, size = self._read_block(pos, (MAGIC_FILE_INFO,), trailer_start)
        self.file_info = MappingProxyType(self._parse_file_info(info, pos))
        pos += size
        while pos < trailer_start:
            _, _, size = self._read_block(pos, _BLOOM_META_MAGICS, trailer_start)
            pos += size
        # the data index, walked down to the data blocks
        entries = root_entries
        for level in range(tr.num_data_index_levels - 1, 0, -1):
            magic = MAGIC_LEAF_INDEX if level == 1 else MAGIC_INTERMEDIATE_INDEX
            lower: list[_IndexEntry] = []
            for e in entries:
                _, payload, _ = self._read_block(e.offset, (magic,), tr.load_on_open_offset, e.size)
                lower.extend(self._parse_nonroot_index(payload, e.offset, e.key))
            entries = lower
        self._check_data_index(entries)
        self._data_index = entries
        self._index_rows = [e.key for e in entries]
        meta_index: dict[bytes, _IndexEntry] = {}
        for e in meta_entries:
            if e.key in meta_index:
                raise _Bad(tr.load_on_open_offset, f"meta block {e.key!r} is indexed twice")
            if not 0 <= e.offset < tr.load_on_open_offset:
                raise _Bad(tr.load_on_open_offset, f"meta block {e.key!r} at byte {e.offset} is outside the "
                                                   "data section")
            meta_index[e.key] = e
        self._meta_index = meta_index
        self.num_entries = tr.entry_count
        if (tr.entry_count == 0) != (not entries):
            raise _Bad(base, f"the trailer says {tr.entry_count} entries but the index has {len(entries)} "
                             "data blocks")
        # entry format, from the file info
        kv_version = self.file_info.get(_FI_KEY_VALUE_VERSION)
        if kv_version is not None and len(kv_version) != 4:
            raise _Bad(tr.file_info_offset, "file info KEY_VALUE_VERSION is not an int32")
        self._has_mvcc = kv_version is not None and _I32.unpack(kv_version)[0] == 1
        self._has_tags = _FI_MAX_TAGS_LEN in self.file_info
        last_key = self.file_info.get(_FI_LAST_KEY)
        # Hudi's writer stores an empty last key in a file without entries; HBase's stores none
        self._last_row = _row_of_key(last_key, tr.file_info_offset) if last_key else None
        if self._last_row is not None and not entries:
            raise _Bad(tr.file_info_offset, "file info has a last key but the file has no data blocks")
        if self._last_row is not None and self._index_rows and self._last_row < self._index_rows[-1]:
            raise _Bad(tr.file_info_offset, "file info last key sorts before the last data block")

    def _check_data_index(self, entries: list[_IndexEntry]) -> None:
        tr = self._trailer
        prev_end = 0
        for i, e in enumerate(entries):
            if e.offset < prev_end or e.size < BLOCK_HEADER_SIZE or e.offset + e.size > tr.load_on_open_offset:
                raise _Bad(tr.load_on_open_offset, f"data block {i} at byte {e.offset} ({e.size} bytes) overlaps "
                                                   "another block or lies outside the data section")
            if i and e.key <= entries[i - 1].key:
                raise _Bad(tr.load_on_open_offset, f"data index keys are out of order at block {i}")
            prev_end = e.offset + e.size
        if entries:
            if tr.first_data_block_offset != entries[0].offset:
                raise _Bad(len(self._data) - TRAILER_SIZE,
                           f"trailer says the first data block is at byte {tr.first_data_block_offset}, the index "
                           f"says {entries[0].offset}")
            if tr.last_data_block_offset != entries[-1].offset:
                raise _Bad(len(self._data) - TRAILER_SIZE,
                           f"trailer says the last data block is at byte {tr.last_data_block_offset}, the index "
                           f"says {entries[-1].offset}")

    def _read_block(self, offset: int, magics: Sequence[bytes] | frozenset[bytes], limit: int,
                    expected_size: int | None = None) -> tuple[bytes, bytes, int]:
        """Check and decompress the block at ``offset`` (which must end by ``limit``): (magic, payload, size)."""
        data = self._data
        if offset < 0 or offset + BLOCK_HEADER_SIZE > limit:
            raise _Bad(max(offset, 0), f"block header at byte {offset} runs past byte {limit}, the end of its "
                                       "section (truncated file or bad offset)")
        if isinstance(data, _RangeFile) and expected_size is not None and expected_size > 0:
            data.fetch(offset, min(offset + expected_size, limit))      # the whole block: one request
        magic, on_disk, uncompressed, _prev, ck_type, bytes_per_ck, data_size = _HEADER.unpack_from(
            data[offset:offset + BLOCK_HEADER_SIZE])
        if magic not in magics:
            want = " or ".join(repr(m) for m in sorted(magics))
            raise _Bad(offset, f"block magic is {magic!r}, expected {want}")
        end = offset + BLOCK_HEADER_SIZE + on_disk
        if on_disk < 0 or end > limit:
            raise _Bad(offset + 8, f"{magic.decode('latin-1')} block of {on_disk} bytes after its header runs "
                                   f"past byte {limit}, the end of its section (truncated file or bad size)")
        if expected_size is not None and expected_size != BLOCK_HEADER_SIZE + on_disk:
            raise _Bad(offset + 8, f"the index says this block is {expected_size} bytes, its header says "
                                   f"{BLOCK_HEADER_SIZE + on_disk}")
        if uncompressed < 0:
            raise _Bad(offset + 12, f"uncompressed size {uncompressed} is negative")
        if ck_type not in (ChecksumType.NULL, ChecksumType.CRC32, ChecksumType.CRC32C):
            raise _Bad(offset + 24, f"checksum type {ck_type} is unknown (0 NULL, 1 CRC32, 2 CRC32C)")
        if data_size < BLOCK_HEADER_SIZE:
            raise _Bad(offset + 29, f"on-disk data size {data_size} is smaller than the block header")
        # One 4-byte checksum per bytes_per_ck bytes of header + data. Hudi's own writer (checksum type NULL)
        # still reserves that room and fills it with zeros; HBase's NULL type reserves none.
        checksum_bytes = 4 * -(-data_size // bytes_per_ck) if bytes_per_ck > 0 else -1
        have = BLOCK_HEADER_SIZE + on_disk - data_size
        if ck_type == ChecksumType.NULL and have == 0:
            checksum_bytes = 0
        if have != checksum_bytes:
            raise _Bad(offset + 29, f"on-disk data size {data_size} with header, and {bytes_per_ck} bytes per "
                                    f"checksum, do not add up to the block's {BLOCK_HEADER_SIZE + on_disk} bytes")
        if ck_type == ChecksumType.NULL:
            room = bytes(data[offset + data_size:offset + data_size + checksum_bytes])
            if room.count(0) != len(room):
                raise _Bad(offset + data_size, "the unused checksum room of an unchecksummed block is not zero")
        elif self._verify_checksums:
            ck_at = offset + data_size
            for chunk, start in enumerate(range(offset, offset + data_size, bytes_per_ck)):
                stop = min(start + bytes_per_ck, offset + data_size)
                stored = _U32.unpack_from(data[ck_at + 4 * chunk:ck_at + 4 * chunk + 4])[0]
                if _checksum(ck_type, data[start:stop]) != stored:
                    raise _Bad(start, f"{ChecksumType(ck_type).name} checksum mismatch in bytes {start}-{stop - 1} "
                                      f"of the {magic.decode('latin-1')} block at byte {offset}")
        payload = data[offset + BLOCK_HEADER_SIZE:offset + data_size]
        if self._trailer.codec == Codec.NONE:
            if len(payload) != uncompressed:
                raise _Bad(offset + 12, f"uncompressed block holds {len(payload)} bytes, its header says "
                                        f"{uncompressed}")
            content = bytes(payload)
        else:
            try:
                content = _gunzip(payload, uncompressed)
            except ValueError as exc:
                raise _Bad(offset + BLOCK_HEADER_SIZE, f"{magic.decode('latin-1')} block at byte {offset}: "
                                                       f"{exc}") from None
        return magic, content, BLOCK_HEADER_SIZE + on_disk

    def _parse_root_index(self, payload: bytes, offset: int, count: int, *, data_index: bool,
                          multi_level: bool) -> list[_IndexEntry]:
        base = offset + BLOCK_HEADER_SIZE
        entries: list[_IndexEntry] = []
        pos = 0
        end = len(payload)
        for i in range(count):
            if pos + 12 > end:
                raise _Bad(base + pos, f"index entry {i} of {count} runs past the end of its block")
            block_offset, size = _QI.unpack_from(payload, pos)
            key_len, pos = _read_vlong(payload, pos + 12, end, base)
            if key_len < 0 or key_len > end - pos:
                raise _Bad(base + pos, f"index entry {i} key of {key_len} bytes runs past the end of its block")
            key = payload[pos:pos + key_len]
            entries.append(_IndexEntry(block_offset, size, _row_of_key(key, base + pos) if data_index else key))
            pos += key_len
        rest = end - pos
        if rest and not (multi_level and rest == 16):        # mid-key metadata: int64, int32, int32
            raise _Bad(base + pos, f"{rest} bytes after the {count} entries of the index block (count wrong "
                                   "or block damaged)")
        return entries

    def _parse_nonroot_index(self, payload: bytes, offset: int, parent_key: bytes) -> list[_IndexEntry]:
        base = offset + BLOCK_HEADER_SIZE
        end = len(payload)
        if end < 4:
            raise _Bad(base, "index block too short for its entry count")
        count = _I32.unpack_from(payload, 0)[0]
        if count <= 0 or 4 + 4 * (count + 1) > end:
            raise _Bad(base, f"index block entry count {count} does not fit in its {end} bytes")
        secondary = struct.unpack_from(f">{count + 1}i", payload, 4)
        entries_start = 4 + 4 * (count + 1)
        if secondary[0] != 0 or secondary[-1] != end - entries_start:
            raise _Bad(base + 4, "index block entry offsets do not span its entries")
        entries: list[_IndexEntry] = []
        for i in range(count):
            a, b = entries_start + secondary[i], entries_start + secondary[i + 1]
            if b - a < 12:
                raise _Bad(base + 4 + 4 * i, f"index entry {i} is {b - a} bytes, too short")
            block_offset, size = _QI.unpack_from(payload, a)
            entries.append(_IndexEntry(block_offset, size, _row_of_key(payload[a + 12:b], base + a + 12)))
        if entries[0].key < parent_key:
            raise _Bad(base, "index block's first key sorts before the key its parent indexes it by")
        return entries

    def _parse_file_info(self, payload: bytes, offset: int) -> dict[bytes, bytes]:
        base = offset + BLOCK_HEADER_SIZE
        if payload[:4] != _PBUF_MAGIC:
            raise _Bad(base, f"file info starts with {payload[:4]!r}, not {_PBUF_MAGIC!r}")
        n, pos = _varint(payload, 4, len(payload), base)
        if pos + n != len(payload):
            raise _Bad(base + 4, f"file info protobuf of {n} bytes does not fill its {len(payload)}-byte block")
        info: dict[bytes, bytes] = {}
        for number, at, value in _pb_fields(payload, pos, pos + n, base):
            if number != 1:
                continue
            if not isinstance(value, bytes):
                raise _Bad(base + at, "file info entry is not a message")
            pair = {f: v for f, _, v in _pb_fields(value, 0, len(value), base + at)}
            k, v = pair.get(1), pair.get(2)
            if not isinstance(k, bytes) or not isinstance(v, bytes):
                raise _Bad(base + at, "file info entry lacks its key or value")
            if k in info:
                raise _Bad(base + at, f"file info key {k!r} appears twice")
            info[k] = v
        return info

    # -------------------------------------------------------------------------------------- data blocks

    def _block(self, i: int) -> tuple[list[bytes], list[bytes]]:
        cached = self._blocks.get(i)
        if cached is not None:
            self._blocks.move_to_end(i)
            return cached
        try:
            decoded = self._decode_block(i)
        except _Bad as bad:
            raise self._error(bad) from None
        self._blocks[i] = decoded
        if len(self._blocks) > _BLOCK_CACHE_SIZE:
            self._blocks.popitem(last=False)
        return decoded

    def _decode_block(self, i: int) -> tuple[list[bytes], list[bytes]]:
        e = self._data_index[i]
        _, payload, _ = self._read_block(e.offset, (MAGIC_DATA,), self._trailer.load_on_open_offset, e.size)
        fast = self._fast_block(i, payload)
        if fast is not None:
            ks, ke, vs, ve = (a.tolist() for a in fast)
            return ([payload[a:b] for a, b in zip(ks, ke, strict=True)],
                    [payload[a:b] for a, b in zip(vs, ve, strict=True)])
        return self._decode_cells(i, e, payload)

    def _fast_block(self, i: int, payload: bytes) -> _Offsets | None:
        """The cells of data block ``i`` as offsets when the block is laid out as Hudi writes it and agrees with
        the index (its first key no earlier than its index key, its last key before the next block's and, in
        the last block, equal to the file info's last key); None otherwise (the careful walk decides)."""
        if not self._has_mvcc or self._has_tags:
            return None
        fast = _fast_cells(payload)
        if fast is None:
            return None
        ks, ke = fast[0], fast[1]
        first = payload[int(ks[0]):int(ke[0])]
        last = payload[int(ks[-1]):int(ke[-1])]
        index = self._data_index
        if first < index[i].key:
            return None
        if i + 1 < len(index) and last >= index[i + 1].key:
            return None
        if i + 1 == len(index) and self._last_row is not None and last != self._last_row:
            return None
        return fast

    def _payloads(self, blocks: range) -> Iterator[tuple[int, bytes]]:
        """The decompressed payloads of data blocks ``blocks``, in order; with more than one block, read and
        inflated ahead on a small thread pool (zlib releases the GIL: inflating overlaps the caller's work on
        the previous block)."""
        limit = self._trailer.load_on_open_offset
        index = self._data_index

        def read(i: int) -> bytes:
            e = index[i]
            return self._read_block(e.offset, (MAGIC_DATA,), limit, e.size)[1]

        self._fetch_blocks(blocks)              # the blocks' bytes: one request
        if len(blocks) < 2 or self._trailer.codec == Codec.NONE:
            for i in blocks:
                yield i, read(i)
            return
        futures = [_pool().submit(read, i) for i in blocks]
        try:
            for i, fut in zip(blocks, futures, strict=True):
                yield i, fut.result()
        finally:
            for fut in futures:
                fut.cancel()

    def prefix_cells(self, prefix: bytes) -> Cells:
        """:meth:`prefix` as :class:`Cells` (no object per entry: for reads of many entries). Raises
        :class:`HFileError` as the other lookups do."""
        index_rows = self._index_rows
        if not index_rows:
            return Cells.empty()
        start = max(bisect_right(index_rows, prefix) - 1, 0) if prefix else 0
        upper = _prefix_upper(prefix) if prefix else None
        stop = len(index_rows) if upper is None else max(bisect_left(index_rows, upper), start + 1)
        parts: list[tuple[bytes, _Offsets]] = []
        try:
            for i, payload in self._payloads(range(start, stop)):
                fast = self._fast_block(i, payload)
                if fast is None:
                    keys, values = self._decode_cells(i, self._data_index[i], payload)
                    payload, fast = _offsets_of(keys, values)
                ks, ke, vs, ve = fast
                j = _bisect_keys(payload, ks, ke, prefix, 0) if i == start and prefix else 0
                k = len(ks) if upper is None else _bisect_keys(payload, ks, ke, upper, j)
                if k > j:
                    parts.append((payload, (ks[j:k], ke[j:k], vs[j:k], ve[j:k])))
                if k < len(ks):
                    break
        except _Bad as bad:
            raise self._error(bad) from None
        return Cells.join(parts)

    def _decode_cells(self, i: int, e: Any, payload: bytes) -> tuple[list[bytes], list[bytes]]:
        base = e.offset + BLOCK_HEADER_SIZE
        keys: list[bytes] = []
        values: list[bytes] = []
        pos = 0
        end = len(payload)
        has_tags, has_mvcc = self._has_tags, self._has_mvcc
        prev = b""
        while pos < end:
            if pos + 8 > end:
                raise _Bad(base + pos, "entry header runs past the end of its data block")
            klen, vlen = _II.unpack_from(payload, pos)
            kstart = pos + 8
            kend = kstart + klen
            if klen < _MIN_KEY_LENGTH or vlen < 0 or kend + vlen > end:
                raise _Bad(base + pos, f"entry with a {klen}-byte key and a {vlen}-byte value does not fit in "
                                       "its data block")
            rowlen = _I16.unpack_from(payload, kstart)[0]
            fam_at = kstart + 2 + rowlen
            # Hudi's keys (both writers): row, empty family and qualifier, the latest timestamp, Put
            if rowlen < 0 or fam_at + 10 != kend:
                raise _Bad(base + kstart, f"key of {klen} bytes with row length {rowlen} is not a Hudi key "
                                          "(row, no family or qualifier, timestamp, type)")
            if payload[fam_at] != 0 or _I64.unpack_from(payload, fam_at + 1)[0] != _LATEST_TIMESTAMP:
                raise _Bad(base + fam_at, "key has a column family or a timestamp other than 'latest'")
            if payload[kend - 1] != _KEY_TYPE_PUT:
                raise _Bad(base + kend - 1, f"key type {payload[kend - 1]} is not Put (4)")
            row = payload[kstart + 2:fam_at]
            if keys and row <= prev:
                raise _Bad(base + kstart, f"key {row!r} does not sort after the previous key {prev!r}")
            keys.append(row)
            values.append(payload[kend:kend + vlen])
            prev = row
            pos = kend + vlen
            if has_tags:
                if pos + 2 > end:
                    raise _Bad(base + pos, "tags length runs past the end of its data block")
                tlen = _U16.unpack_from(payload, pos)[0]
                pos += 2 + tlen
                if pos > end:
                    raise _Bad(base + pos, "tags run past the end of their data block")
            if has_mvcc:
                mvcc, pos = _read_vlong(payload, pos, end, base)
                if mvcc < 0:
                    raise _Bad(base + pos, f"MVCC timestamp {mvcc} is negative")
        if not keys:
            raise _Bad(base, "data block holds no entries")
        if keys[0] < e.key:
            raise _Bad(base, f"first key {keys[0]!r} sorts before the index key {e.key!r} of its block")
        if i + 1 < len(self._data_index) and keys[-1] >= self._data_index[i + 1].key:
            raise _Bad(base, f"last key {keys[-1]!r} does not sort before the index key of the next block")
        if i + 1 == len(self._data_index) and self._last_row is not None and keys[-1] != self._last_row:
            raise _Bad(base, f"last key {keys[-1]!r} of the last block is not the file info last key "
                             f"{self._last_row!r}")
        return keys, values


def _codec_name(code: int) -> str:
    try:
        return Codec(code).name
    except ValueError:
        return f"#{code} (unknown)"


# ---------------------------------------------------------------------------------------------- values


@lru_cache(maxsize=64)
def _parsed_schema(schema_json: str) -> Any:
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except Exception as exc:  # json / fastavro schema errors of many types
        raise HFileError(f"the Avro schema of the HFile values does not parse: {exc}") from None


def decode_metadata_values(values: Iterable[bytes], schema_json: str, *,
                           wrapper_names: bool = False) -> list[dict[str, Any]]:
    """Decode ``HoodieMetadataRecord`` Avro values with their writer schema (parsed once per schema text).

    Each value must be exactly one record: a value that does not decode, or has bytes left over, raises
    :class:`HFileError`. The dicts are as fastavro gives them: a union branch that is a record comes back as a
    plain dict, so ``minValue`` is ``{"value": 19737}`` whether the writer used ``IntWrapper`` or
    ``DateWrapper``. With ``wrapper_names`` a union of several records (the column-stats min/max) gives
    ``(full record name, dict)`` instead, e.g. ``("org.apache.hudi.avro.model.DateWrapper", {"value": 19737})``;
    unions of null and one record stay plain. Hudi blanks the record's ``key`` field in HFiles (the HFile key
    is the record key).
    """
    schema = _parsed_schema(schema_json)
    out: list[dict[str, Any]] = []
    for i, value in enumerate(values):
        buf = io.BytesIO(value)
        try:
            record = fastavro.schemaless_reader(buf, schema, None, return_record_name=wrapper_names,
                                                return_record_name_override=wrapper_names)
        except Exception as exc:  # fastavro raises EOFError, ValueError, IndexError, UnicodeDecodeError, ...
            raise HFileError(f"value {i} ({len(value)} bytes) is not a record of the schema: "
                             f"{type(exc).__name__}: {exc}") from None
        if buf.tell() != len(value):
            raise HFileError(f"value {i} ({len(value)} bytes) has {len(value) - buf.tell()} bytes after its record")
        if not isinstance(record, dict):
            raise HFileError(f"value {i} is not an Avro record")
        out.append(record)
    return out


# ---------------------------------------------------------------------------------------------- writing


def _kv_key(row: bytes) -> bytes:
    """The KeyValue key Hudi writes: row, empty family and qualifier, latest timestamp, Put."""
    return _I16.pack(len(row)) + row + b"\x00" + _I64.pack(_LATEST_TIMESTAMP) + bytes([_KEY_TYPE_PUT])


def _block_bytes(magic: bytes, payload: bytes, prev: int, codec: Codec, checksum: ChecksumType,
                 bytes_per_checksum: int) -> bytes:
    if codec == Codec.GZ:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        data = c.compress(payload) + c.flush()
    else:
        data = payload
    data_size = BLOCK_HEADER_SIZE + len(data)
    n_ck = -(-data_size // bytes_per_checksum)         # Hudi's writer reserves (zeroed) room even for NULL
    header = _HEADER.pack(magic, len(data) + 4 * n_ck, len(payload), prev, checksum, bytes_per_checksum,
                          data_size)
    block = header + data
    if checksum == ChecksumType.NULL:
        return block + bytes(4 * n_ck)
    return block + b"".join(_U32.pack(_checksum(checksum, block[i:i + bytes_per_checksum]))
                            for i in range(0, data_size, bytes_per_checksum))


def write_hfile(entries: Iterable[tuple[bytes, bytes]], *, file_info: Mapping[bytes, bytes] | None = None,
                codec: Codec = Codec.GZ, checksum: ChecksumType = ChecksumType.NULL,
                bytes_per_checksum: int = 16384, block_size: int = 65536, index_levels: int = 1,
                index_fanout: int = 128, minor_version: int = 0, tags: bool = False,
                meta_blocks: Mapping[bytes, bytes] | None = None,
                comparator: str = "org.apache.hudi.io.storage.HoodieHBaseKVComparator") -> bytes:
    """An HFile of ``entries`` (sorted, unique keys), laid out as HBase and Hudi write them.

    ``block_size`` is the uncompressed payload size at which a data block is closed; ``index_levels`` > 1
    writes leaf (and intermediate) index blocks of at most ``index_fanout`` entries, as HBase does for large
    files; ``tags`` writes HFile v3 cell tags (empty); the file info gets ``KEY_VALUE_VERSION`` = 1,
    ``MAX_MEMSTORE_TS_KEY`` = 0 and ``hfile.LASTKEY`` as Hudi's writer puts them, plus ``file_info``.
    """
    out = bytearray()
    pairs = list(entries)
    for (a, _), (b, _) in pairwise(pairs):
        if not a < b:
            raise ValueError(f"keys must be sorted and unique: {a!r} then {b!r}")
    # data blocks
    index: list[tuple[int, int, bytes]] = []            # offset, size, KeyValue key
    prev_data = -1
    buf = bytearray()
    first_key = b""

    def flush_data() -> None:
        nonlocal prev_data, buf
        block = _block_bytes(MAGIC_DATA, bytes(buf), prev_data, codec, checksum, bytes_per_checksum)
        index.append((len(out), len(block), first_key))
        prev_data = len(out)
        out.extend(block)
        buf = bytearray()

    for row, value in pairs:
        if not buf:
            first_key = _kv_key(row)
        key = _kv_key(row)
        buf += _II.pack(len(key), len(value)) + key + value
        if tags:
            buf += _U16.pack(0)
        buf += _write_vlong(0)
        if len(buf) >= block_size:
            flush_data()
    if buf:
        flush_data()
    first_data = index[0][0] if index else -1
    last_data = index[-1][0] if index else -1
    # lower index levels
    level = index
    for depth in range(index_levels - 1, 0, -1):
        magic = MAGIC_LEAF_INDEX if depth == index_levels - 1 else MAGIC_INTERMEDIATE_INDEX
        upper: list[tuple[int, int, bytes]] = []
        for start in range(0, len(level), index_fanout):
            chunk = level[start:start + index_fanout]
            body = b"".join(_QI.pack(o, s) + k for o, s, k in chunk)
            offsets = [0]
            for _, _, k in chunk:
                offsets.append(offsets[-1] + 12 + len(k))
            payload = _I32.pack(len(chunk)) + struct.pack(f">{len(offsets)}i", *offsets) + body
            block = _block_bytes(magic, payload, -1, codec, checksum, bytes_per_checksum)
            upper.append((len(out), len(block), chunk[0][2]))
            out.extend(block)
        level = upper
    # meta blocks
    meta_index: list[tuple[int, int, bytes]] = []
    for name in sorted(meta_blocks or {}):
        block = _block_bytes(MAGIC_META, (meta_blocks or {})[name], -1, codec, checksum, bytes_per_checksum)
        meta_index.append((len(out), len(block), name))
        out.extend(block)
    # load-on-open
    load_on_open = len(out)
    root = b"".join(_QI.pack(o, s) + _write_vlong(len(k)) + k for o, s, k in level)
    if index_levels > 1:
        root += _I64.pack(level[0][0] if level else 0) + _I32.pack(0) + _I32.pack(0)   # mid-key metadata
    root_block = _block_bytes(MAGIC_ROOT_INDEX, root, -1, codec, checksum, bytes_per_checksum)
    out.extend(root_block)
    meta = b"".join(_QI.pack(o, s) + _write_vlong(len(k)) + k for o, s, k in meta_index)
    out.extend(_block_bytes(MAGIC_ROOT_INDEX, meta, -1, codec, checksum, bytes_per_checksum))
    info: dict[bytes, bytes] = {_FI_KEY_VALUE_VERSION: _I32.pack(1), _FI_MAX_MEMSTORE_TS: _I64.pack(0)}
    if pairs:
        info[_FI_LAST_KEY] = _kv_key(pairs[-1][0])
    if tags:
        info[_FI_MAX_TAGS_LEN] = _I32.pack(0)
    info.update(file_info or {})
    proto = b"".join(_pb_field(1, _pb_field(1, k) + _pb_field(2, v)) for k, v in info.items())
    file_info_offset = len(out)
    out.extend(_block_bytes(MAGIC_FILE_INFO, _PBUF_MAGIC + _pb_varint_bytes(len(proto)) + proto, -1, codec,
                            checksum, bytes_per_checksum))
    trailer = b"".join([
        _pb_field(1, file_info_offset), _pb_field(2, load_on_open), _pb_field(3, len(root)),
        _pb_field(5, len(level)), _pb_field(6, len(meta_index)), _pb_field(7, len(pairs)),
        _pb_field(8, index_levels), _pb_field(9, first_data % (1 << 64)), _pb_field(10, last_data % (1 << 64)),
        _pb_field(11, comparator.encode()), _pb_field(12, int(codec)),
    ])
    body = _TRAILER_MAGIC + _pb_varint_bytes(len(trailer)) + trailer
    out.extend(body + bytes(TRAILER_SIZE - _VERSION_SIZE - len(body)) + bytes([minor_version]) + b"\x00\x00\x03")
    return bytes(out)
