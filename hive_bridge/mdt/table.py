"""Hudi's metadata table (MDT): its latest state, trusted only as far as the data table's timeline allows.

``<table>/.hoodie/metadata/`` is itself a merge-on-read Hudi table (base files are HFiles, log files carry
HFILE_DATA and DELETE blocks, payload ``HoodieMetadataPayload``) with one folder per *MDT partition*: ``files``,
``column_stats``, ``partition_stats``, ``bloom_filters``, ``record_index``, ``secondary_index_<name>``, ...

    mdt = MetadataTable.open(HudiTable.open(path))      # never raises for a missing or damaged MDT
    mdt.status                 # MetadataStatus: available, ready partitions, synced_up_to, lagging_instants
    mdt.files("city=chennai")  # {file name: size}: every committed file of a data partition the MDT knows
    mdt.column_stats(["fare"]) # ColumnStatsEntry per (file, column): typed min/max, counts
    mdt.record_index(["k1"])   # record key -> RecordLocation(partition, file_id, instant, instant_millis)
    mdt.secondary_index("secondary_index_rider_idx", ["rider-A"])   # value -> record keys
    BloomFilter.from_parquet_metadata(pq.read_metadata(f).metadata).might_contain(key)

What is read (checked against every MDT of the shared fixture tables, Hudi 1.0 / table version 8 and Hudi 1.1 /
version 9, and against apache/hudi ``HoodieBackedTableMetadata``, ``HoodieMetadataPayload``,
``MetadataPartitionType``, ``HoodieTableMetadataUtil``):

- **Ready partitions** are the data table's ``hoodie.table.metadata.partitions`` minus
  ``...partitions.inflight``; a partition still being built is never read.
- **Slices.** Per MDT file group the latest base HFile of a completed MDT instant (a compaction completes as a
  ``commit``) plus its log files. Timeline layout 2 (v8+): a log file belongs to the slice when its deltacommit is
  completed on the MDT timeline and *completed* after the base file's instant (a deltacommit requested before a
  compaction but completed after it belongs to the new slice: ``v8_trips_8i3u1d`` has one); logs are merged in
  completion order (Hudi sorts them by the instant in the name; the two agree unless MDT writes overlapped, and
  then completion order is the order the records were written). Layout 1 (v6): logs named after the base
  instant, in name order.
- **Trust.** Every log block's INSTANT_TIME must be an MDT instant completed on the MDT timeline, not rolled
  back, and (Hudi's ``getValidInstantTimestamps``): an MDT-only instant (initialisation and index bootstrap
  deltacommits, ``00000000000000xxx``), an instant completed on the data timeline (any action: commits, cleans,
  rollbacks, indexing), the MDT's own rollback/restore, or one older than the data's active timeline
  (archived). A deltacommit whose data instant is pending, or unknown to a data timeline that should show it,
  is ignored (the MDT commits before the data table does). Rollback command blocks drop the target instant's
  blocks. Blocks of a log compaction (``COMPACTED_BLOCK_TIMES``) are not read: the partition is unavailable.
- **Lag.** ``lagging_instants`` are completed data instants of the actions the MDT mirrors (commit, deltacommit,
  replacecommit, clean, rollback, restore) the MDT has no trusted completed instant for, and that are not
  covered by its bootstrap (completed before the files partition's initialisation completed) or by MDT
  compactions whose deltacommits were archived. Their files are not in ``files()``; the caller must list them.
- **Damage.** On open: the MDT's properties and timeline; each ready partition's folder; each file an MDT
  instant's commit metadata says it wrote to the current slices (present, not shorter than recorded); each base
  HFile's trailer magic. A partition that fails is left out of ``status.partitions`` with a problem naming the
  file; an MDT that cannot be read at all is ``available=False``. Content is decoded when queried; a file that
  then turns out unreadable (HFile damage, corrupt log region, undecodable value) makes its partition unavailable
  (``status`` updated) and the query raises :class:`MetadataTableError`: never a partial answer. ``verify()``
  reads everything at once. The ``partition_stats`` of a LANCE table are not used: the Hudi that wrote the
  fixtures aggregated them from log files only (Lance base files have no statistics), so they do not bound the
  partitions' rows (seen on ``v9_lance_nonhivestyle``; Hudi later disabled them for LANCE). Its ``column_stats``
  are kept: they simply have no entry for a Lance base file, which a pruner must treat as unknown.
- **Merging** (``HoodieMetadataPayload.preCombine``): base HFile, then log blocks in order; files records merge
  their file maps (a tombstone removes an earlier entry, sizes take the max); column and partition stats keep a
  newer tombstone or tight bound, else widen min/max and sum the counts; record index, secondary index and
  bloom filter records: newer wins. DELETE blocks remove the key; records whose ``isDeleted`` is true are
  tombstones and are dropped.

Facts behind the keys (verified on the fixtures): column stats key = base64(XXH64(column)) +
base64(XXH64(partition)) + base64(MD5(file name)) with XXH64's seed the Java *int* 0xdabadaba sign-extended to a
long (0xFFFFFFFFDABADABA, not 0xdabadaba); a non-partitioned table's partition is ``"."``; partition stats key =
column + partition parts; secondary index key = escape(value) + "$" + escape(record key) (``\\``, ``$`` and NUL
escaped with ``\\``, a NULL value is a lone NUL); record index file id = UUID(fileIdHighBits, fileIdLowBits) +
"-" + fileIndex (encoding 0) or the raw ``fileId`` (encoding 1); the record index's ``instantTime`` is epoch
millis of the instant read in the *writer's* time zone (the v9 fixtures were written in UTC-6), so the instant
string is rebuilt with the offset that maps the record's millis onto the data timeline.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import struct
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import fastavro

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.hfile.reader import HFileError, HFileReader
from hive_bridge.formats.logfile import (
    BlockType,
    HeaderKey,
    LogBlock,
    LogFormatError,
    delete_block_keys,
    read_log_file,
)
from hive_bridge.layout.fsview import parse_base_file_name, parse_log_file_name
from hive_bridge.layout.properties import PROPERTIES_FILE, TableProperties
from hive_bridge.layout.timeline import Instant, Timeline
from hive_bridge.mdt.files import FileInfos, decode_files_record, files_plan

if TYPE_CHECKING:
    from hive_bridge.table.table import HudiTable

__all__ = [
    "ALL_PARTITIONS_KEY",
    "BloomFilter",
    "ColumnStatsEntry",
    "MetadataStatus",
    "MetadataTable",
    "MetadataTableError",
    "RecordLocation",
    "bloom_filter_key",
    "column_index_id",
    "column_stats_key",
    "file_index_id",
    "hadoop_jenkins_hash",
    "hadoop_murmur_hash",
    "partition_index_id",
    "partition_stats_key",
    "secondary_index_key",
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
_MDT_WRITE_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})
_TRAILER_MAGIC = b'TRABLK"$'
_TRAILER_SIZE = 4096
#: HFiles (base files, log blocks) kept open between queries: point lookups then decode one data block each
_READER_CACHE = 64
#: decoded files partitions by the identity of their slices (see MetadataTable.records), a few tables' worth
#: (records by key, file sizes by record key: filled in as files() asks for them)
_FILES_CACHE: OrderedDict[tuple[Any, ...], tuple[dict[str, dict[str, Any]], dict[str, dict[str, int]]]] = \
    OrderedDict()
_FILES_CACHE_ENTRIES = 8


class MetadataTableError(HudiTableError):
    """The metadata table (or the partition a query needs) is not available, or turned out unreadable."""


# ================================================================================================ hashing

_M32 = 0xFFFFFFFF
_M64 = 0xFFFFFFFFFFFFFFFF


def _signed32(v: int) -> int:
    v &= _M32
    return v - 0x100000000 if v & 0x80000000 else v


def _sbyte(b: int) -> int:
    """A Java (signed) byte, as an int."""
    return b - 256 if b > 127 else b


_MURMUR_M = 0x5BD1E995


@lru_cache(maxsize=4096)
def _murmur_prepared(data: bytes) -> tuple[tuple[int, ...], int, int]:
    """The seed-independent part of Hadoop's MurmurHash (2.0) of ``data``: the mixed 4-byte words, the XOR of
    the tail bytes (sign-extended, as Java's ``(int) data[i] << n`` does) and the number of tail bytes."""
    n = len(data)
    n4 = n >> 2
    words = struct.unpack_from(f"<{n4}I", data) if n4 else ()
    mixed = []
    for k in words:
        k = (k * _MURMUR_M) & _M32
        k ^= k >> 24
        mixed.append((k * _MURMUR_M) & _M32)
    left = n & 3
    tail = 0
    if left >= 3:
        tail ^= (_sbyte(data[n - 3]) << 16) & _M32
    if left >= 2:
        tail ^= (_sbyte(data[n - 2]) << 8) & _M32
    if left >= 1:
        tail ^= _sbyte(data[n - 1]) & _M32
    return tuple(mixed), tail, left


def hadoop_murmur_hash(data: bytes, seed: int) -> int:
    """Hadoop's (and Hudi's) ``MurmurHash.hash(data, length, seed)``: MurmurHash 2.0, 32 bits, signed result."""
    mixed, tail, left = _murmur_prepared(bytes(data))
    m = _MURMUR_M
    h = (seed ^ len(data)) & _M32
    for k in mixed:
        h = ((h * m) & _M32) ^ k
    if left:
        h = ((h ^ tail) * m) & _M32
    h ^= h >> 13
    h = (h * m) & _M32
    h ^= h >> 15
    return _signed32(h)


def _rot32(v: int, r: int) -> int:
    v &= _M32
    return ((v << r) | (v >> (32 - r))) & _M32


def hadoop_jenkins_hash(data: bytes, seed: int) -> int:
    """Hadoop's (and Hudi's) ``JenkinsHash.hash(data, length, initval)`` (lookup3 ``hashlittle``), signed."""
    key = bytes(data)
    length = len(key)
    a = b = c = (0xDEADBEEF + length + seed) & _M32
    off = 0
    while length > 12:
        a = (a + int.from_bytes(key[off:off + 4], "little")) & _M32
        b = (b + int.from_bytes(key[off + 4:off + 8], "little")) & _M32
        c = (c + int.from_bytes(key[off + 8:off + 12], "little")) & _M32
        a = (a - c) & _M32
        a ^= _rot32(c, 4)
        c = (c + b) & _M32
        b = (b - a) & _M32
        b ^= _rot32(a, 6)
        a = (a + c) & _M32
        c = (c - b) & _M32
        c ^= _rot32(b, 8)
        b = (b + a) & _M32
        a = (a - c) & _M32
        a ^= _rot32(c, 16)
        c = (c + b) & _M32
        b = (b - a) & _M32
        b ^= _rot32(a, 19)
        a = (a + c) & _M32
        c = (c - b) & _M32
        c ^= _rot32(b, 4)
        b = (b + a) & _M32
        off += 12
        length -= 12
    if length == 0:
        return _signed32(c)
    rest = key[off:off + length] + bytes(12 - length)
    a = (a + int.from_bytes(rest[0:4], "little")) & _M32
    if length > 4:
        b = (b + int.from_bytes(rest[4:8], "little")) & _M32
    if length > 8:
        c = (c + int.from_bytes(rest[8:12], "little")) & _M32
    c ^= b
    c = (c - _rot32(b, 14)) & _M32
    a ^= c
    a = (a - _rot32(c, 11)) & _M32
    b ^= a
    b = (b - _rot32(a, 25)) & _M32
    c ^= b
    c = (c - _rot32(b, 16)) & _M32
    a ^= c
    a = (a - _rot32(c, 4)) & _M32
    b ^= a
    b = (b - _rot32(a, 14)) & _M32
    c ^= b
    c = (c - _rot32(b, 24)) & _M32
    return _signed32(c)


_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5


def _rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _xx_round(acc: int, lane: int) -> int:
    acc = (acc + lane * _P2) & _M64
    return (_rotl64(acc, 31) * _P1) & _M64


def xxhash64(data: bytes, seed: int) -> int:
    """XXH64 of ``data`` (``seed`` taken modulo 2**64), as an unsigned 64-bit int."""
    seed &= _M64
    n = len(data)
    p = 0
    if n >= 32:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed, (seed - _P1) & _M64
        while p + 32 <= n:
            a, b, c, d = struct.unpack_from("<QQQQ", data, p)
            v1, v2, v3, v4 = _xx_round(v1, a), _xx_round(v2, b), _xx_round(v3, c), _xx_round(v4, d)
            p += 32
        h = (_rotl64(v1, 1) + _rotl64(v2, 7) + _rotl64(v3, 12) + _rotl64(v4, 18)) & _M64
        for v in (v1, v2, v3, v4):
            h ^= _xx_round(0, v)
            h = (h * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while p + 8 <= n:
        (k,) = struct.unpack_from("<Q", data, p)
        h ^= _xx_round(0, k)
        h = (_rotl64(h, 27) * _P1 + _P4) & _M64
        p += 8
    if p + 4 <= n:
        (k,) = struct.unpack_from("<I", data, p)
        h ^= (k * _P1) & _M64
        h = (_rotl64(h, 23) * _P2 + _P3) & _M64
        p += 4
    while p < n:
        h ^= (data[p] * _P5) & _M64
        h = (_rotl64(h, 11) * _P1) & _M64
        p += 1
    h ^= h >> 33
    h = (h * _P2) & _M64
    h ^= h >> 29
    h = (h * _P3) & _M64
    h ^= h >> 32
    return h


#: HashID's seed: ``private static final int HASH_SEED = 0xdabadaba`` passed to lz4-java's
#: ``XXHash64.hash(..., long seed)``, so sign-extended
_ID_SEED = 0xFFFFFFFFDABADABA


def _hash_id(text: str) -> str:
    return base64.b64encode(xxhash64(text.encode("utf-8"), _ID_SEED).to_bytes(8, "big")).decode("ascii")


def _partition_identifier(partition: str) -> str:
    return NON_PARTITIONED_NAME if partition in ("", NON_PARTITIONED_NAME) else partition


def column_index_id(column: str) -> str:
    """``ColumnIndexID(column).asBase64EncodedString()``: 12 characters."""
    return _hash_id(column)


def partition_index_id(partition: str) -> str:
    """``PartitionIndexID(partition identifier)``: 12 characters (``""`` is hashed as ``"."``)."""
    return _hash_id(_partition_identifier(partition))


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
_SI_SEPARATOR = "$"
_SI_NULL = "\x00"


def _si_escape(value: str | None) -> str:
    if value is None:
        return _SI_NULL
    out = []
    for ch in value:
        if ch in (_SI_ESCAPE, _SI_SEPARATOR, _SI_NULL):
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
    return _si_escape(secondary_value) + _SI_SEPARATOR + _si_escape(record_key)


def split_secondary_index_key(key: str) -> tuple[str | None, str | None]:
    """(secondary value, record key) of a secondary index key (the first unescaped ``$`` separates them)."""
    escaped = False
    for i, ch in enumerate(key):
        if ch == _SI_ESCAPE and not escaped:
            escaped = True
        elif ch == _SI_SEPARATOR and not escaped:
            return _si_unescape(key[:i]), _si_unescape(key[i + 1:])
        else:
            escaped = False
    raise MetadataTableError(f"secondary index key {key!r} has no unescaped '$' separator")


def _secondary_value_text(value: Any) -> str | None:
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


class _BitVector(NamedTuple):
    nb_hash: int
    hash_type: int
    vector_size: int
    bits: bytes


HASH_JENKINS = 0
HASH_MURMUR = 1
_HASHES: dict[int, Callable[[bytes, int], int]] = {HASH_JENKINS: hadoop_jenkins_hash, HASH_MURMUR: hadoop_murmur_hash}


class BloomFilter:
    """Hudi's serialized bloom filter over record keys: ``SIMPLE`` (Hadoop's BloomFilter) or ``DYNAMIC_V0``
    (``HoodieDynamicBoundedBloomFilter``: a matrix of such filters; a key is in it if any row has it).

    Serialized form (base64 text; in the MDT the UTF-8 bytes of that text): ``int32 version`` (-1; a positive
    number is an old, unversioned header whose value is the hash count and whose hash is Jenkins), ``int32
    nbHash``, ``int8 hashType`` (0 Jenkins, 1 Murmur), ``int32 vectorSize``, then for SIMPLE the bit vector
    (``ceil(vectorSize / 8)`` bytes, bit i at byte i/8, mask 1 << i%8); for DYNAMIC_V0 ``int32 nr, int32
    currentNbRecord, int32 rows`` and each row as a SIMPLE filter. A key's positions: ``h = hash(utf8(key), h)``
    starting from 0, ``nbHash`` times, each position ``abs(h % vectorSize)`` with Java's int arithmetic.
    """

    def __init__(self, type_code: str, rows: Iterable[_BitVector]) -> None:
        self.type_code = type_code
        self.rows: tuple[_BitVector, ...] = tuple(_BitVector(*r) for r in rows)
        if not self.rows:
            raise MetadataTableError(f"bloom filter ({type_code}) has no bit vector")

    @classmethod
    def from_serialized(cls, text_or_bytes: str | bytes, type_code: str) -> BloomFilter:
        """The filter Hudi serialized (``BloomFilter.serializeToString()``: base64 text, or its UTF-8 bytes as the
        MDT stores it; raw serialized bytes are accepted too), of type code ``SIMPLE`` or ``DYNAMIC_V0``."""
        code = (type_code or "").strip().upper()
        raw = cls._decode(text_or_bytes)
        reader = _Reader(raw, f"bloom filter ({code or 'no type code'})")
        if code == "SIMPLE":
            rows = [reader.bit_vector()]
        elif code.startswith("DYNAMIC"):
            head = reader.header()
            reader.i32()                    # nr: keys per row
            reader.i32()                    # currentNbRecord
            count = reader.i32()
            if not 1 <= count <= 1 << 16:
                raise MetadataTableError(f"{reader.what}: impossible row count {count}")
            rows = [reader.bit_vector() for _ in range(count)]
            if any((r.nb_hash, r.hash_type, r.vector_size) != head for r in rows):
                raise MetadataTableError(f"{reader.what}: a row's hash settings differ from the filter's")
        else:
            raise MetadataTableError(f"unknown bloom filter type code {type_code!r} (known: SIMPLE, DYNAMIC_V0)")
        reader.done()
        return cls(code, rows)

    @classmethod
    def from_parquet_metadata(cls, metadata: Mapping[bytes, bytes] | Mapping[str, str] | None) -> BloomFilter | None:
        """The filter in a Hudi base parquet file's key-value metadata (``org.apache.hudi.bloomfilter`` and
        ``hoodie_bloom_filter_type_code``; a filter without type code is SIMPLE, as in Hudi), None if absent."""
        if not metadata:
            return None
        norm = {(k.decode("utf-8", "replace") if isinstance(k, bytes) else k): v for k, v in metadata.items()}
        serialized = norm.get("org.apache.hudi.bloomfilter")
        if serialized is None:
            return None
        code = norm.get("hoodie_bloom_filter_type_code") or "SIMPLE"
        if isinstance(code, bytes):
            code = code.decode("utf-8", "replace")
        return cls.from_serialized(serialized, code)

    @staticmethod
    def _decode(value: str | bytes) -> bytes:
        if isinstance(value, str):
            text = value.encode("ascii", "strict") if value.isascii() else b""
            if not text:
                raise MetadataTableError("bloom filter text is not base64")
        else:
            text = bytes(value)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            if isinstance(value, str):
                raise MetadataTableError("bloom filter text is not base64") from None
            return text                     # raw serialized bytes

    @property
    def num_hashes(self) -> int:
        return self.rows[0].nb_hash

    @property
    def vector_size(self) -> int:
        return self.rows[0].vector_size

    @property
    def hash_type(self) -> int:
        return self.rows[0].hash_type

    def positions(self, key: str) -> list[int]:
        """The bit positions of ``key`` (the same in every row)."""
        data = key.encode("utf-8")
        hash_fn = _HASHES[self.hash_type]
        size = self.vector_size
        out = []
        h = 0
        for _ in range(self.num_hashes):
            h = hash_fn(data, h)
            out.append(abs(h) % size)      # Java: Math.abs(h % size); same value for every int h
        return out

    def might_contain(self, key: str) -> bool:
        """False only if ``key`` was never added (no false negatives); an empty key is always True (Hudi's hash
        refuses it)."""
        if not key:
            return True
        pos = self.positions(key)
        for row in self.rows:
            bits = row.bits
            if all(bits[p >> 3] & (1 << (p & 7)) for p in pos):
                return True
        return False

    def __repr__(self) -> str:
        return (f"BloomFilter({self.type_code}, rows={len(self.rows)}, hashes={self.num_hashes}, "
                f"bits={self.vector_size}, hash={'murmur' if self.hash_type == HASH_MURMUR else 'jenkins'})")


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise MetadataTableError(f"{self.what}: cut off at byte {self.pos} ({len(self.data)} bytes, "
                                     f"{n} more needed)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def i32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def header(self) -> tuple[int, int, int]:
        version = self.i32()
        if version > 0:
            nb_hash, hash_type = version, HASH_JENKINS
        elif version == -1:
            nb_hash = self.i32()
            hash_type = struct.unpack(">b", self._take(1))[0]
        else:
            raise MetadataTableError(f"{self.what}: unsupported filter version {version}")
        vector_size = self.i32()
        if hash_type not in _HASHES:
            raise MetadataTableError(f"{self.what}: unknown hash type {hash_type} (0 Jenkins, 1 Murmur)")
        if nb_hash <= 0 or vector_size <= 0:
            raise MetadataTableError(f"{self.what}: {nb_hash} hashes over {vector_size} bits")
        return nb_hash, hash_type, vector_size

    def bit_vector(self) -> _BitVector:
        nb_hash, hash_type, vector_size = self.header()
        return _BitVector(nb_hash, hash_type, vector_size, self._take((vector_size + 7) // 8))

    def done(self) -> None:
        if self.pos != len(self.data):
            raise MetadataTableError(f"{self.what}: {len(self.data) - self.pos} bytes after the filter")


# ================================================================================================ records


@dataclass(frozen=True)
class MetadataStatus:
    """What the MDT can be trusted for.

    ``available``: the MDT was found and its timeline read, and at least one ready partition is usable.
    ``partitions``: ready partitions (``hoodie.table.metadata.partitions``, never the inflight ones) that are
    usable. ``synced_up_to``: the latest data instant the MDT has a trusted completed instant for.
    ``lagging_instants``: completed data instants the MDT does not cover (their files must be listed by the
    caller). ``problems``: what was unreadable and why."""

    available: bool
    partitions: tuple[str, ...]
    synced_up_to: str | None
    lagging_instants: tuple[str, ...]
    problems: tuple[str, ...]


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


class _Slice(NamedTuple):
    file_id: str
    base: str | None            # full path of the base HFile
    base_instant: str | None
    logs: tuple[str, ...]       # full paths, in merge order


class _Unreadable(Exception):
    """A partition's file cannot be read (internal; becomes a problem + MetadataTableError)."""


_DELETED = object()

# V2 column stats value types (org.apache.hudi.metadata.stats.ValueType ordinals)
_VALUE_TYPES = (
    "V1", "NULL", "BOOLEAN", "INT", "LONG", "FLOAT", "DOUBLE", "STRING", "BYTES", "FIXED", "DECIMAL", "UUID",
    "DATE", "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "TIMESTAMP_NANOS",
    "LOCAL_TIMESTAMP_MILLIS", "LOCAL_TIMESTAMP_MICROS", "LOCAL_TIMESTAMP_NANOS",
)
# V1 (no valueType): the type is the wrapper record's
_WRAPPER_TYPES = {
    "BooleanWrapper": "BOOLEAN", "IntWrapper": "INT", "LongWrapper": "LONG", "FloatWrapper": "FLOAT",
    "DoubleWrapper": "DOUBLE", "BytesWrapper": "BYTES", "StringWrapper": "STRING", "DateWrapper": "DATE",
    "DecimalWrapper": "DECIMAL", "TimeMicrosWrapper": "TIME_MICROS", "TimestampMicrosWrapper": "TIMESTAMP_MICROS",
    "LocalDateWrapper": "DATE", "ArrayWrapper": "ARRAY",
}
_EPOCH_DATE = date(1970, 1, 1)


def _decimal(unscaled: bytes, scale: int) -> Decimal:
    sign, digits, _ = Decimal(int.from_bytes(unscaled, "big", signed=True)).as_tuple()
    return Decimal((sign, digits, -scale))


def _micros_of_time(t: time) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond


def _value_type(stats: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(ValueType name, additionalInfo) of a V2 stats record, (None, None) for V1."""
    info = stats.get("valueType")
    if isinstance(info, tuple):
        info = info[1]
    if not isinstance(info, dict):
        return None, None
    ordinal = info.get("typeOrdinal")
    name = _VALUE_TYPES[ordinal] if isinstance(ordinal, int) and 0 <= ordinal < len(_VALUE_TYPES) else None
    if name is None:
        raise MetadataTableError(f"column stats value type ordinal {ordinal!r} is unknown")
    return (None if name == "V1" else name), info.get("additionalInfo")


def _unwrap(wrapped: Any, vtype: str | None, info: str | None, upper: bool) -> tuple[Any, str | None]:
    """A min/max wrapper record as a Python value, and the value's type name."""
    if wrapped is None:
        return None, vtype
    if not (isinstance(wrapped, tuple) and len(wrapped) == 2 and isinstance(wrapped[1], dict)):
        raise MetadataTableError(f"column stats bound {wrapped!r} is not a wrapper record")
    wrapper = str(wrapped[0]).rsplit(".", 1)[-1]
    value = wrapped[1].get("value")
    if vtype is None:                       # V1: the wrapper says what it is
        vt = _WRAPPER_TYPES.get(wrapper)
        if vt is None:
            raise MetadataTableError(f"column stats bound of unknown wrapper {wrapper!r}")
        if value is None:
            return None, vt
        if vt == "DATE" and isinstance(value, int):
            return _EPOCH_DATE + timedelta(days=value), vt
        if vt == "DECIMAL" and isinstance(value, bytes | bytearray):
            return _decimal(bytes(value), 15), vt
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
        return _decimal(bytes(value), scale), vtype
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


def _decode_values(pairs: Iterable[tuple[bytes, bytes]], schema_json: str,
                   where: str, files: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(record key, record) of HFile entries: the value in the writer schema, unions of several records as
    (record name, record) tuples (the wrapper of a min/max tells its type), single-record unions plain.
    ``files``: records of the files partition, read without an object per file where they have the usual shape
    (:mod:`hive_bridge.mdt.files`), by fastavro otherwise."""
    try:
        schema = _parsed_schema(schema_json)
    except MetadataTableError as exc:
        raise _Unreadable(f"{where}: {exc}") from None
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
                raise _Unreadable(f"{where}: the value of key {key[:80]!r} does not decode "
                                  f"({type(exc).__name__}: {exc})") from None
            if buf.tell() != len(value) or not isinstance(read, dict):
                raise _Unreadable(f"{where}: the value of key {key[:80]!r} is not one metadata record")
            rec = read
        try:
            skey = key.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Unreadable(f"{where}: the value of key {key[:80]!r} does not decode "
                              f"({type(exc).__name__}: {exc})") from None
        rec["key"] = skey                   # Hudi blanks the field in HFiles: the HFile key is the record key
        out.append((skey, rec))
    return out


def _stats_of(rec: Mapping[str, Any]) -> dict[str, Any] | None:
    stats = rec.get("ColumnStatsMetadata")
    if isinstance(stats, tuple):
        stats = stats[1]
    return stats if isinstance(stats, dict) else None


def _nested(rec: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = rec.get(name)
    if isinstance(value, tuple):
        value = value[1]
    return value if isinstance(value, dict) else None


def _is_tombstone(rec: Mapping[str, Any]) -> bool:
    """``HoodieMetadataPayload.isDeletedRecord`` of a decoded record (files records never are)."""
    kind = rec.get("type")
    if kind in (TYPE_COLUMN_STATS, TYPE_PARTITION_STATS):
        stats = _stats_of(rec)
        return bool(stats and stats.get("isDeleted"))
    if kind == TYPE_BLOOM_FILTER:
        bloom = _nested(rec, "BloomFilterMetadata")
        return bool(bloom and bloom.get("isDeleted"))
    if kind == TYPE_SECONDARY_INDEX:
        si = _nested(rec, "SecondaryIndexMetadata")
        return bool(si and si.get("isDeleted"))
    return False


def _sum(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a + b


def _combine(older: dict[str, Any] | None, newer: dict[str, Any]) -> dict[str, Any]:
    """``HoodieMetadataPayload.preCombine(older)`` for two records of the same key."""
    if older is None or _is_tombstone(newer) or _is_tombstone(older) or older.get("type") != newer.get("type"):
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
        old_s, new_s = _stats_of(older), _stats_of(newer)
        if old_s is None or new_s is None or new_s.get("isTightBound"):
            return newer
        merged = dict(new_s)
        vtype, info = _value_type(new_s)
        for field, pick in (("minValue", min), ("maxValue", max)):
            candidates = [w for w in (old_s.get(field), new_s.get(field)) if w is not None]
            if len(candidates) == 2:
                a = _unwrap(candidates[0], vtype, info, field == "maxValue")[0]
                b = _unwrap(candidates[1], vtype, info, field == "maxValue")[0]
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


class MetadataTable:
    """The metadata table of one Hudi table, read-only: ``MetadataTable.open(hudi_table)``."""

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self._storage = table.storage
        #: the metadata table's folder: `location` (a local path or a URI), `path` (a local table's)
        self.location = self._storage.join(table.base_path, ".hoodie", "metadata")
        self.path = Path(self.location)
        self.status = MetadataStatus(False, (), None, (), ())
        self._problems: list[str] = []
        self._slices: dict[str, list[_Slice]] = {}
        self._trusted: frozenset[str] = frozenset()
        self._cache: dict[str, dict[str, dict[str, Any]]] = {}
        self._partition_names: dict[str, str] | None = None
        self._millis_offset: int | None = None
        self._offset_inferred = False
        self._data_instant_times: list[str] = []
        self._sizes: dict[str, int] = {}
        #: data partition key -> file name -> size, from the files partition (shared with its process cache)
        self._file_sizes: dict[str, dict[str, int]] = {}
        self._completion: dict[str, str] = {}
        self._mdt_done: dict[str, Instant] = {}
        self._layout2 = True
        self._readers: OrderedDict[tuple[str, int], HFileReader] = OrderedDict()
        self._slice_blocks: dict[_Slice, list[tuple[str, LogBlock]]] = {}
        self._dropped: set[str] = set()

    # ------------------------------------------------------------------------------------------ opening

    @classmethod
    def open(cls, table: HudiTable) -> MetadataTable:
        """Read what the MDT can be trusted for. Never raises for a missing or damaged MDT: ``status`` says."""
        mdt = cls(table)
        try:
            mdt._open()
        except Exception as exc:  # never raises: anything unexpected is a damaged MDT too
            what = str(exc) if isinstance(exc, HudiTableError | OSError) else f"{type(exc).__name__}: {exc}"
            mdt._problems.append(f"{mdt.location}: metadata table not readable: {what}")
            mdt._slices = {}
            mdt._set_status(available=False)
        return mdt

    def _set_status(self, *, available: bool | None = None, synced: str | None = None,
                    lagging: tuple[str, ...] | None = None) -> None:
        old = self.status
        partitions = tuple(sorted(self._slices))
        self.status = MetadataStatus(
            available=(old.available if available is None else available) and bool(partitions),
            partitions=partitions,
            synced_up_to=old.synced_up_to if synced is None else synced,
            lagging_instants=old.lagging_instants if lagging is None else lagging,
            problems=tuple(self._problems),
        )

    def _open(self) -> None:
        props = self.table.properties
        ready = props.metadata_partitions
        if not self._storage.is_file(self._storage.join(self.location, ".hoodie", PROPERTIES_FILE)):
            why = "no metadata table" if not ready else \
                f"hoodie.table.metadata.partitions lists {', '.join(ready)} but there is no {PROPERTIES_FILE}"
            self._problems.append(f"{self.location}: {why}")
            self._set_status(available=False)
            return
        if not ready:
            self._problems.append(f"{self.location}: no ready metadata partition (hoodie.table.metadata.partitions "
                                  "is empty: the metadata table is disabled or being rebuilt)")
            self._set_status(available=False)
            return
        mprops = TableProperties.load(self.location, self._storage)
        if mprops.base_file_format != "HFILE" or not mprops.is_mor:
            raise MetadataTableError(f"{self.location}: not a metadata table ({mprops.table_type}, "
                                     f"{mprops.base_file_format} base files)")
        self._mprops = mprops
        mtl = self._mtl = Timeline.load(mprops)
        dtl = self.table.timeline
        self._layout2 = mprops.timeline_layout_version >= 2
        mdt_rolled_back = mtl.rolled_back_timestamps if any(
            i.action in ("rollback", "restore") for i in mtl.completed) else frozenset()
        mdt_done = self._mdt_done = {i.timestamp: i for i in mtl.completed if i.timestamp not in mdt_rolled_back}
        self._completion = {ts: (i.completion_time or ts) for ts, i in mdt_done.items()}
        data_completed = {i.timestamp for i in dtl.completed}
        data_pending = {i.timestamp for i in dtl.pending}
        data_earliest = dtl.instants[0].timestamp if dtl.instants else None
        self._data_instant_times = [i.timestamp for i in dtl.instants]

        def data_allows(ts: str, action: str) -> bool:
            if ts.startswith(SOLO_COMMIT_TIMESTAMP) or ts in data_completed:
                return True
            if len(ts) > 17 and ts[:17] in data_completed:          # 0.x initialisation: <instant><3 digits>
                return True
            if ts in data_pending:
                return False
            if action in ("rollback", "restore"):
                return True                                         # the MDT's own rollbacks are valid
            return data_earliest is not None and ts[:17] < data_earliest   # archived on the data timeline

        self._trusted = frozenset(ts for ts, i in mdt_done.items() if data_allows(ts, i.action))
        self._lag(mdt_done)
        for name in ready:
            try:
                self._slices[name] = self._list_partition(name)
            except _Unreadable as why:
                self._problems.append(f"metadata partition {name!r} unavailable: {why}")
                self._dropped.add(name)
        self._verify_written_files(mdt_done)
        if props.base_file_format == "LANCE" and self._slices.pop(PARTITION_STATS, None) is not None:
            self._dropped.add(PARTITION_STATS)
            # Hudi before 1.2 aggregated partition stats of Lance tables from log files only (Lance base files
            # have no column statistics): those ranges do not bound the partitions' rows (seen on the fixtures)
            self._problems.append(f"metadata partition {PARTITION_STATS!r} not used: the table's base files are "
                                  "LANCE, which have no column statistics, so its ranges cover log files only")
        self._set_status(available=True)

    def _lag(self, mdt_done: Mapping[str, Instant]) -> None:
        dtl = self.table.timeline
        solo = [i for ts, i in mdt_done.items() if ts.startswith(SOLO_COMMIT_TIMESTAMP)]
        bootstrap_done = min((i.completion_time for i in solo if i.completion_time), default=None)
        init_prefixes = [ts[:17] for ts, i in mdt_done.items() if len(ts) > 17 and i.action == "deltacommit"
                         and not ts.startswith(SOLO_COMMIT_TIMESTAMP)]     # 0.x: <instant>010 and so on
        bootstrap_upto = min(init_prefixes, default=None)
        mirrored = [ts for ts, i in mdt_done.items()
                    if not ts.startswith(SOLO_COMMIT_TIMESTAMP) and len(ts) <= 17 and i.action != "commit"]
        earliest_mirrored = min(mirrored, default=None)
        compacted = any(i.action == "commit" for i in mdt_done.values()) and self._mdt_has_archive()
        covered: list[str] = []
        lagging: list[str] = []
        for inst in dtl.completed:
            if inst.action not in MIRRORED_ACTIONS:
                continue
            ts = inst.timestamp
            ok = ts in self._trusted
            if not ok and bootstrap_done is not None and inst.completion_time is not None:
                ok = inst.completion_time <= bootstrap_done       # listed by the bootstrap
            if not ok and bootstrap_upto is not None:
                ok = ts <= bootstrap_upto
            if not ok and compacted and earliest_mirrored is not None:
                ok = ts < earliest_mirrored                         # compacted, then archived in the MDT
            (covered if ok else lagging).append(ts)
        self.status = replace(self.status, synced_up_to=max(covered, default=None), lagging_instants=tuple(lagging))

    def _mdt_has_archive(self) -> bool:
        """Whether the MDT archived instants (then older data instants may have no MDT instant left)."""
        raw = self._mprops.raw
        join = self._storage.join
        if self._layout2:
            folder = join(self._mprops.timeline_location, raw.get("hoodie.timeline.history.path") or "history")
        else:
            folder = join(self.location, ".hoodie", raw.get("hoodie.archivelog.folder") or "archived")
        return self._storage.has_files(folder)

    # ------------------------------------------------------------------------------------------ slices

    def _list_partition(self, name: str) -> list[_Slice]:
        folder = self._storage.join(self.location, name)
        try:
            entries = [(e.name, e.size) for e in self._storage.list_dir(folder) if not e.is_dir and e.size is not None]
        except FileNotFoundError:
            raise _Unreadable(f"{folder}: ready metadata partition {name!r} has no folder") from None
        except OSError as exc:
            raise _Unreadable(f"{folder}: cannot list: {exc.strerror or exc}") from None
        completed_writes = {ts for ts, i in self._mdt_done.items() if i.action in _MDT_WRITE_ACTIONS}
        bases: dict[str, list[tuple[str, str]]] = {}
        logs: dict[str, list[tuple[str, int, str, str]]] = {}
        for fname, size in entries:
            self._sizes[f"{name}/{fname}"] = size
            if fname.startswith("."):
                parsed = parse_log_file_name(fname)
                if parsed is not None:
                    fid, ts, ver, tok = parsed
                    logs.setdefault(fid, []).append((ts, ver, tok, fname))
                continue
            pb = parse_base_file_name(fname, ".hfile")
            if pb is not None:
                fid, _tok, ts = pb
                if ts in completed_writes:
                    bases.setdefault(fid, []).append((ts, fname))
        out: list[_Slice] = []
        for fid in sorted(bases.keys() | logs.keys()):
            base = max(bases.get(fid, ()), default=None)
            base_ts = base[0] if base else None
            chosen: list[tuple[tuple[str, ...], str]] = []
            for ts, ver, tok, fname in logs.get(fid, ()):
                if self._layout2:
                    done = self._completion.get(ts)
                    if done is None or (base_ts is not None and done < base_ts):
                        continue
                    order: tuple[str, ...] = (done, ts, f"{ver:09d}", tok)
                else:
                    if base_ts is not None and ts < base_ts:
                        continue
                    order = (ts, f"{ver:09d}", tok)
                chosen.append((order, fname))
            chosen.sort()
            if base is None and not chosen:
                continue
            out.append(_Slice(fid, f"{folder}/{base[1]}" if base else None, base_ts,
                              tuple(f"{folder}/{f}" for _, f in chosen)))
        for sl in out:
            if sl.base is not None:
                self._check_trailer(sl.base)
        return out

    def _check_trailer(self, path: str) -> None:
        try:
            tail, size = self._storage.read_tail(path, _TRAILER_SIZE)
        except OSError as exc:
            raise _Unreadable(f"{path}: cannot read: {exc.strerror or exc}") from None
        if size < _TRAILER_SIZE:
            raise _Unreadable(f"{path}: HFile of {size} bytes is shorter than its trailer (truncated)")
        magic = tail[:len(_TRAILER_MAGIC)]
        if magic != _TRAILER_MAGIC:
            raise _Unreadable(f"{path}: no HFile trailer at the end of the file (truncated or damaged)")

    def _verify_written_files(self, mdt_done: Mapping[str, Instant]) -> None:
        """Every file a trusted MDT instant (or a compaction) wrote to a current slice is there, not shorter."""
        slice_of: dict[tuple[str, str], _Slice] = {}
        for name, slices in self._slices.items():
            for one in slices:
                slice_of[(name, one.file_id)] = one
        bad: dict[str, str] = {}
        for ts, inst in mdt_done.items():
            if ts not in self._trusted and inst.action != "commit":
                continue
            try:
                meta = self._mtl.read_metadata(inst)
            except HudiTableError as exc:
                raise MetadataTableError(f"cannot check the files of metadata instant {ts}: {exc}") from None
            stats = meta.get("partitionToWriteStats") or {}
            if not isinstance(stats, dict):
                raise MetadataTableError(f"{self._mtl.instant_location(inst)}: partitionToWriteStats is not a map")
            for partition, writes in stats.items():
                if partition not in self._slices or partition in bad:
                    continue
                for w in writes or ():
                    if not isinstance(w, dict) or not isinstance(w.get("path"), str):
                        continue
                    rel = w["path"]
                    fname = rel.rsplit("/", 1)[-1]
                    parsed_log = parse_log_file_name(fname)
                    parsed_base = None if parsed_log else parse_base_file_name(fname, ".hfile")
                    if parsed_log is None and parsed_base is None:
                        continue
                    fid = parsed_log[0] if parsed_log is not None else parsed_base[0]  # type: ignore[index]
                    sl = slice_of.get((partition, fid))
                    full = f"{self.location}/{partition}/{fname}"
                    if sl is not None and (full == sl.base or full in sl.logs):
                        recorded = w.get("fileSizeInBytes")
                        actual = self._sizes.get(f"{partition}/{fname}", -1)
                        if isinstance(recorded, int) and 0 <= actual < recorded:
                            bad[partition] = (f"{full}: {actual} bytes, but metadata instant {ts} wrote "
                                              f"{recorded}: truncated")
                        continue
                    if sl is not None and sl.base_instant is not None:
                        # not in the current slice: fine if a newer base file superseded it (and it was cleaned)
                        if parsed_base is not None:
                            position = parsed_base[2]
                        else:
                            assert parsed_log is not None
                            position = self._completion.get(parsed_log[1], parsed_log[1]) if self._layout2 \
                                else parsed_log[1]
                        if position < sl.base_instant:
                            continue
                    bad[partition] = f"{full}: missing, but metadata instant {ts} wrote it"
        for partition, why in sorted(bad.items()):
            self._problems.append(f"metadata partition {partition!r} unavailable: {why}")
            self._slices.pop(partition, None)
            self._dropped.add(partition)

    # ------------------------------------------------------------------------------------------ reading

    def _require(self, partition: str) -> list[_Slice]:
        slices = self._slices.get(partition)
        if slices is None:
            why = "unavailable (see status.problems)" if partition in self._dropped else "not ready"
            known = ", ".join(self.status.partitions) or "none"
            raise MetadataTableError(f"{self.location}: metadata partition {partition!r} is {why} (usable: {known})")
        return slices

    def _fail(self, partition: str, why: str) -> MetadataTableError:
        self._problems.append(f"metadata partition {partition!r} unavailable: {why}")
        self._slices.pop(partition, None)
        self._dropped.add(partition)
        self._cache.pop(partition, None)
        self._set_status()
        return MetadataTableError(f"{self.location}: metadata partition {partition!r} became unavailable: {why}")

    def records(self, partition: str, keys: Iterable[str] | None = None,
                prefixes: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """The merged latest records of one MDT partition (all, or those with one of ``keys`` / a key starting
        with one of ``prefixes``: point lookups through the HFiles' indexes), by record key. Records are decoded
        Avro dicts (``key`` filled in; unions of several records, e.g. min/max wrappers, as ``(record name,
        record)`` tuples). Tombstones are dropped. Raises :class:`MetadataTableError` if the partition is not
        usable, or turns out unreadable (then the partition is dropped from ``status``)."""
        slices = self._require(partition)
        want = None if keys is None else set(keys)
        pre = None if prefixes is None else list(prefixes)
        cached = self._cache.get(partition)
        if cached is None and partition == FILES:
            # the files partition is read whole (one record per data partition) and kept in the process by the
            # identity of its slices: a second table open lists from it without decoding it again
            identity = self._slice_identity(partition)
            hit = _FILES_CACHE.get(identity)
            if hit is None:
                _FILES_CACHE[identity] = hit = (self._read_slices(partition, slices, None, None), {})
                while len(_FILES_CACHE) > _FILES_CACHE_ENTRIES:
                    _FILES_CACHE.popitem(last=False)
            else:
                _FILES_CACHE.move_to_end(identity)
            self._cache[partition] = cached = hit[0]
            self._file_sizes = hit[1]
        if cached is not None:
            if want is None and pre is None:
                return dict(cached)
            if pre is None and want is not None:
                return {k: cached[k] for k in want if k in cached}
            return {k: v for k, v in cached.items() if _selected(k, want, pre)}
        out = self._read_slices(partition, slices, want, pre)
        if want is None and pre is None:
            self._cache[partition] = out
            return dict(out)
        return out

    def _read_slices(self, partition: str, slices: list[_Slice], want: set[str] | None,
                     pre: list[str] | None) -> dict[str, dict[str, Any]]:
        """The merged records of a partition's slices; an unreadable one drops the partition and raises."""
        out: dict[str, dict[str, Any]] = {}
        try:
            for sl in slices:
                out.update(self._read_slice(sl, want, pre, partition == FILES))
        except _Unreadable as why:
            raise self._fail(partition, str(why)) from None
        except (HudiTableError, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise self._fail(partition, f"{type(exc).__name__}: {exc}") from None
        return out

    def file_size(self, path: str) -> int:
        """The listed size of one of the metadata table's files (-1 when it was not listed)."""
        prefix = f"{self.location}/"
        rel = path[len(prefix):] if path.startswith(prefix) else path
        return self._sizes.get(rel, -1)

    def _slice_identity(self, partition: str) -> tuple[Any, ...]:
        """What a full read of ``partition`` depends on: its slices' files and their listed sizes."""
        return (self.location, partition, tuple(
            (sl.base, self.file_size(sl.base) if sl.base else -1,
             tuple((p, self.file_size(p)) for p in sl.logs)) for sl in self._require(partition)),
            self._trusted)

    def _reader(self, key: tuple[str, int], make: Callable[[], HFileReader]) -> HFileReader:
        reader = self._readers.get(key)
        if reader is None:
            reader = make()
            self._readers[key] = reader
            if len(self._readers) > _READER_CACHE:
                self._readers.popitem(last=False)
        else:
            self._readers.move_to_end(key)
        return reader

    def _read_slice(self, sl: _Slice, want: set[str] | None, pre: list[str] | None,
                    files: bool = False) -> dict[str, dict[str, Any]]:
        merged: dict[str, Any] = {}
        if sl.base is not None:
            base = sl.base
            try:
                reader = self._reader((base, -1), lambda: HFileReader.open(base, storage=self._storage))
                schema = reader.avro_schema
                if schema is None:
                    raise _Unreadable(f"{base}: HFile has no Avro schema in its file info")
                for key, rec in _decode_values(_select(reader, want, pre), schema, base, files):
                    merged[key] = rec
            except HFileError as exc:
                raise _Unreadable(str(exc)) from None
        for path, block in self._blocks(sl):
            where = f"{path}: byte {block.offset}"
            if block.block_type == BlockType.DELETE:
                for key in deleted_keys(block, where, want, pre):
                    merged[key] = _DELETED
                continue
            try:
                reader = self._reader((path, block.offset), partial(HFileReader, block.content,
                                                                    f"{where} (HFILE_DATA block)"))
                schema = block.header.get(HeaderKey.SCHEMA) or reader.avro_schema
                if schema is None:
                    raise _Unreadable(f"{where}: HFILE_DATA block without a schema")
                decoded = _decode_values(_select(reader, want, pre), schema, where, files)
            except HFileError as exc:
                raise _Unreadable(str(exc)) from None
            for key, rec in decoded:
                old = merged.get(key)
                merged[key] = _combine(None if old is _DELETED else old, rec)
        return {k: v for k, v in merged.items() if v is not _DELETED and not _is_tombstone(v)}

    def _blocks(self, sl: _Slice) -> list[tuple[str, LogBlock]]:
        """The trusted data and delete blocks of a slice's logs, in order, rollbacks applied (cached)."""
        cached = self._slice_blocks.get(sl)
        if cached is not None:
            return cached
        blocks: list[tuple[str, LogBlock]] = []
        for path in sl.logs:
            try:
                contents = read_log_file(path, storage=self._storage)
            except LogFormatError as exc:
                raise _Unreadable(str(exc)) from None
            if contents.problems:
                raise _Unreadable("; ".join(contents.problems))
            for block in contents.blocks:
                where = f"{path}: byte {block.offset}"
                instant = block.instant
                if instant is None:
                    raise _Unreadable(f"{where}: log block without an instant time")
                if instant not in self._trusted:
                    continue
                if HeaderKey.COMPACTED_BLOCK_TIMES in block.header:
                    raise _Unreadable(f"{where}: log-compacted block (COMPACTED_BLOCK_TIMES) is not supported")
                if block.block_type == BlockType.COMMAND:
                    if block.is_rollback:
                        target = block.target_instant
                        blocks = [(p, b) for p, b in blocks if b.instant != target]
                    continue
                if block.block_type in (BlockType.HFILE_DATA, BlockType.DELETE):
                    blocks.append((path, block))
                    continue
                try:
                    kind = BlockType(block.block_type).name
                except ValueError:
                    kind = f"type {block.block_type}"
                raise _Unreadable(f"{where}: {kind} block in a metadata log file")
        self._slice_blocks[sl] = blocks
        return blocks

    def verify(self) -> MetadataStatus:
        """Read every usable partition fully now (what queries would read lazily); partitions that do not read
        are dropped from ``status`` with a problem. Returns the new status."""
        for partition in list(self._slices):
            try:
                self.records(partition)
            except MetadataTableError:
                pass
        return self.status

    # ------------------------------------------------------------------------------------------ files

    def all_partitions(self) -> list[str]:
        """The data partitions the files partition lists (``__all_partitions__``); a non-partitioned table's
        ``"."`` is returned as ``""`` (the partition path :class:`HudiTable` uses)."""
        rec = self.records(FILES, keys=[ALL_PARTITIONS_KEY]).get(ALL_PARTITIONS_KEY)
        if rec is None:
            return []
        names = [n for n, info in (rec.get("filesystemMetadata") or {}).items() if not info.get("isDeleted")]
        return sorted("" if n == NON_PARTITIONED_NAME else n for n in names)

    def files(self, partition: str) -> dict[str, int] | None:
        """File name -> size of every committed file (base and log, not only the latest slices) the MDT lists
        for one data partition (``""`` or ``"."`` for a non-partitioned table), deletions applied. None when
        unknown: no record for the partition, or the files partition is not usable. Files of
        ``status.lagging_instants`` are missing from it."""
        key = _partition_identifier(partition)
        try:
            rec = self.records(FILES, keys=[key]).get(key)
        except MetadataTableError:
            return None
        if rec is None or rec.get("type") != TYPE_FILES:
            return None
        sizes = self._file_sizes.get(key)
        if sizes is None:
            # computed once per record of a cached files partition: shared by every open of the same one
            infos = rec.get("filesystemMetadata") or {}
            if isinstance(infos, FileInfos):
                sizes = self._file_sizes[key] = infos.live_sizes()
            else:
                sizes = self._file_sizes[key] = {name: int(info.get("size") or 0) for name, info in infos.items()
                                                 if not info.get("isDeleted")}
        return dict(sizes)

    # ------------------------------------------------------------------------------------------ stats

    def _partition_name_of(self, pid: str) -> str | None:
        if self._partition_names is None:
            names: dict[str, str] = {partition_index_id(NON_PARTITIONED_NAME): ""}
            try:
                for p in self.all_partitions():
                    names[partition_index_id(p)] = p
            except MetadataTableError:
                pass
            self._partition_names = names
        return self._partition_names.get(pid)

    def _stats_entries(self, partition: str, columns: Iterable[str] | None) -> list[ColumnStatsEntry]:
        prefixes = None if columns is None else [column_index_id(c) for c in columns]
        if prefixes is not None and not prefixes:
            return []
        recs = self.records(partition, prefixes=prefixes)
        out = []
        for key, rec in sorted(recs.items()):
            stats = _stats_of(rec)
            if stats is None:
                raise self._fail(partition, f"record {key!r} has no ColumnStatsMetadata")
            try:
                vtype, info = _value_type(stats)
                lo, t_lo = _unwrap(stats.get("minValue"), vtype, info, False)
                hi, t_hi = _unwrap(stats.get("maxValue"), vtype, info, True)
            except MetadataTableError as exc:
                raise self._fail(partition, f"record {key!r}: {exc}") from None
            if partition == PARTITION_STATS:
                part: str | None = stats.get("fileName")
                part = "" if part == NON_PARTITIONED_NAME else part
                file_name = None
            else:
                part = self._partition_name_of(key[12:24])
                file_name = stats.get("fileName")
            out.append(ColumnStatsEntry(
                partition=part, file_name=file_name, column=stats.get("columnName") or "",
                min=lo, max=hi, null_count=stats.get("nullCount"), value_count=stats.get("valueCount"),
                total_size=stats.get("totalSize"), is_deleted=bool(stats.get("isDeleted")),
                is_tight_bound=stats.get("isTightBound"), value_type=vtype or t_lo or t_hi,
            ))
        return out

    def column_stats(self, columns: Iterable[str] | None = None) -> list[ColumnStatsEntry]:
        """Per-file column statistics (base and log files alike), of ``columns`` (point lookups by the key's
        column prefix) or of every column."""
        return self._stats_entries(COLUMN_STATS, columns)

    def partition_stats(self, columns: Iterable[str] | None = None) -> list[ColumnStatsEntry]:
        """Per-partition column statistics (``file_name`` None)."""
        return self._stats_entries(PARTITION_STATS, columns)

    # ------------------------------------------------------------------------------------------ indexes

    def record_index(self, keys: Iterable[str]) -> dict[str, RecordLocation]:
        """Record key -> location, for the keys the record index has (absent keys are left out)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        recs = self.records(RECORD_INDEX, keys=wanted)
        out: dict[str, RecordLocation] = {}
        for key, rec in recs.items():
            info = _nested(rec, "recordIndexMetadata")
            if info is None:
                raise self._fail(RECORD_INDEX, f"record {key!r} has no recordIndexMetadata")
            if info.get("fileIdEncoding", 0) == 1:
                file_id = str(info.get("fileId") or "")
            else:
                hi, lo = info.get("fileIdHighBits"), info.get("fileIdLowBits")
                if not isinstance(hi, int) or not isinstance(lo, int):
                    raise self._fail(RECORD_INDEX, f"record {key!r} has no file id bits")
                file_id = str(uuid.UUID(int=((hi & _M64) << 64) | (lo & _M64)))
                index = info.get("fileIndex")
                if index is not None and index != -1:
                    file_id += f"-{index}"
            millis = info.get("instantTime")
            out[key] = RecordLocation(str(info.get("partitionName") or ""), file_id,
                                      self._instant_of_millis(millis) if isinstance(millis, int) else None,
                                      millis if isinstance(millis, int) else None)
        return out

    def _instant_of_millis(self, millis: int) -> str | None:
        """The instant string of a record index ``instantTime`` (epoch millis of the instant as read in the
        writer JVM's time zone): formatted with the offset that maps such millis onto data timeline instants."""
        if not self._offset_inferred:
            self._millis_offset = self._infer_offset(millis)
            self._offset_inferred = True
        offset = self._millis_offset
        if offset is None:
            return None
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis + offset)
        return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"

    def _infer_offset(self, millis: int) -> int | None:
        step = 15 * 60 * 1000
        for ts in reversed(self._data_instant_times):
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
        tz = (self.table.properties.raw.get("hoodie.table.timeline.timezone") or "").strip().upper()
        return 0 if tz == "UTC" else None

    def _secondary_partition(self, index_name: str) -> str:
        return index_name if index_name.startswith(SECONDARY_INDEX_PREFIX) else SECONDARY_INDEX_PREFIX + index_name

    def secondary_index(self, index_name: str, values: Iterable[Any]) -> dict[str | None, set[str]]:
        """Secondary value -> record keys, for the values the index has (absent values are left out).
        ``index_name``: ``secondary_index_rider_idx`` or ``rider_idx``. Values are matched as Hudi stored them
        (strings; a date column's values are days since the epoch, which a ``date`` is converted to)."""
        partition = self._secondary_partition(index_name)
        texts = list(dict.fromkeys(_secondary_value_text(v) for v in values))
        if not texts:
            return {}
        recs = self.records(partition, prefixes=[_si_escape(t) + _SI_SEPARATOR for t in texts])
        out: dict[str | None, set[str]] = {}
        for key in recs:
            value, record_key = split_secondary_index_key(key)
            if record_key is not None:
                out.setdefault(value, set()).add(record_key)
        return out

    def bloom_filter(self, partition: str, file_name: str) -> BloomFilter | None:
        """The bloom filter of one base file (``partition`` ``""`` for a non-partitioned table) from the
        ``bloom_filters`` partition; None when unknown: the partition is not usable, has no entry for the file,
        or the entry does not parse (then the partition is dropped from ``status`` with a problem)."""
        key = bloom_filter_key(partition, file_name)
        try:
            rec = self.records(BLOOM_FILTERS, keys=[key]).get(key)
        except MetadataTableError:
            return None
        info = None if rec is None else _nested(rec, "BloomFilterMetadata")
        if info is None:
            return None
        try:
            return BloomFilter.from_serialized(info.get("bloomFilter") or b"", str(info.get("type") or ""))
        except MetadataTableError as exc:
            self._fail(BLOOM_FILTERS, f"record {key!r}: {exc}")
            return None

    def __repr__(self) -> str:
        s = self.status
        return (f"MetadataTable({self.location!r}, available={s.available}, partitions={list(s.partitions)}, "
                f"synced_up_to={s.synced_up_to!r}, lagging={list(s.lagging_instants)})")


def deleted_keys(block: LogBlock, where: str, want: set[str] | None, pre: list[str] | None) -> set[str]:
    """The selected record keys a metadata log file's DELETE block removes (raises _Unreadable)."""
    try:
        deleted = delete_block_keys(block, where)
    except LogFormatError as exc:
        raise _Unreadable(str(exc)) from None
    return {key for key, _ in deleted if _selected(key, want, pre)}


def _selected(key: str, want: set[str] | None, pre: list[str] | None) -> bool:
    if want is None and pre is None:
        return True
    if want is not None and key in want:
        return True
    return pre is not None and any(key.startswith(p) for p in pre)


def _select(reader: HFileReader, want: set[str] | None, pre: list[str] | None) -> list[tuple[bytes, bytes]]:
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
