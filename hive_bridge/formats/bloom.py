"""Hudi's bloom filters over record keys, and the Hadoop hashes they use.

Hudi writes a bloom filter of every base file's record keys into the parquet footer
(``org.apache.hudi.bloomfilter`` with ``hoodie_bloom_filter_type_code``) and into the metadata table's
``bloom_filters`` partition. This module reads its serialized form and answers ``might_contain``; it knows
nothing of tables. Hashes: Hadoop's ``MurmurHash`` and ``JenkinsHash`` as Hudi calls them (Java int arithmetic).
"""

from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import NamedTuple

from hive_bridge.errors import HudiTableError

__all__ = ["HASH_JENKINS", "HASH_MURMUR", "BloomFilter", "BloomFilterError", "hadoop_jenkins_hash",
           "hadoop_murmur_hash"]


class BloomFilterError(HudiTableError):
    """A serialized bloom filter does not decode; the message says where and why."""



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
            raise BloomFilterError(f"bloom filter ({type_code}) has no bit vector")

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
                raise BloomFilterError(f"{reader.what}: impossible row count {count}")
            rows = [reader.bit_vector() for _ in range(count)]
            if any((r.nb_hash, r.hash_type, r.vector_size) != head for r in rows):
                raise BloomFilterError(f"{reader.what}: a row's hash settings differ from the filter's")
        else:
            raise BloomFilterError(f"unknown bloom filter type code {type_code!r} (known: SIMPLE, DYNAMIC_V0)")
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
                raise BloomFilterError("bloom filter text is not base64")
        else:
            text = bytes(value)
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            if isinstance(value, str):
                raise BloomFilterError("bloom filter text is not base64") from None
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
            raise BloomFilterError(f"{self.what}: cut off at byte {self.pos} ({len(self.data)} bytes, "
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
            raise BloomFilterError(f"{self.what}: unsupported filter version {version}")
        vector_size = self.i32()
        if hash_type not in _HASHES:
            raise BloomFilterError(f"{self.what}: unknown hash type {hash_type} (0 Jenkins, 1 Murmur)")
        if nb_hash <= 0 or vector_size <= 0:
            raise BloomFilterError(f"{self.what}: {nb_hash} hashes over {vector_size} bits")
        return nb_hash, hash_type, vector_size

    def bit_vector(self) -> _BitVector:
        nb_hash, hash_type, vector_size = self.header()
        return _BitVector(nb_hash, hash_type, vector_size, self._take((vector_size + 7) // 8))

    def done(self) -> None:
        if self.pos != len(self.data):
            raise BloomFilterError(f"{self.what}: {len(self.data) - self.pos} bytes after the filter")


# ================================================================================================ records

