"""Hudi's bloom filter over record keys, written as Hudi's writer puts it into a base parquet file's footer (for
tests of the code that reads it: :class:`hive_bridge.formats.bloom.BloomFilter`).

``SIMPLE`` filters (Hadoop's ``BloomFilter`` with Murmur hashing, what ``hoodie.bloom.index.filter.type=SIMPLE``
writes): ``int32 -1`` (version), ``int32 nbHash``, ``int8 hashType`` (1 = Murmur), ``int32 vectorSize``, then the
bit vector, base64-encoded. Sized as Hudi's ``SimpleBloomFilter`` sizes it from the expected number of entries and
the false positive rate: ``vectorSize = ceil(-n ln p / ln(2)^2)``, ``nbHash = ceil(vectorSize / n * ln 2)``. The
footer entries beside it: ``hoodie_bloom_filter_type_code`` and the file's least and greatest record keys
(``hoodie_min_record_key`` / ``hoodie_max_record_key``), as ``HoodieAvroWriteSupport`` writes them.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Iterable

from hive_bridge.formats.bloom import HASH_MURMUR, BloomFilter

__all__ = ["BLOOM_FOOTER_KEY", "footer_entries", "simple_bloom_filter"]

BLOOM_FOOTER_KEY = "org.apache.hudi.bloomfilter"


def _header(nb_hash: int, vector_size: int) -> bytes:
    return struct.pack(">iibi", -1, nb_hash, HASH_MURMUR, vector_size)


def simple_bloom_filter(keys: Iterable[str], num_entries: int = 1000, fpp: float = 1e-6) -> str:
    """The base64 text of a SIMPLE filter holding ``keys`` (an empty key is not added: Hudi's hash refuses it)."""
    vector_size = math.ceil(-num_entries * math.log(fpp) / (math.log(2) ** 2))
    nb_hash = max(1, math.ceil(vector_size / num_entries * math.log(2)))
    empty = _header(nb_hash, vector_size) + bytes((vector_size + 7) // 8)
    probe = BloomFilter.from_serialized(empty, "SIMPLE")    # the reader's hashing, positions of each key
    bits = bytearray((vector_size + 7) // 8)
    for key in keys:
        if key:
            for p in probe.positions(key):
                bits[p >> 3] |= 1 << (p & 7)
    return base64.b64encode(_header(nb_hash, vector_size) + bytes(bits)).decode("ascii")


def footer_entries(keys: list[str]) -> dict[str, str]:
    """The footer key-value entries Hudi writes for a base file holding ``keys``."""
    if not keys:
        return {}
    return {BLOOM_FOOTER_KEY: simple_bloom_filter(keys, max(1000, len(keys))),
            "hoodie_bloom_filter_type_code": "SIMPLE",
            "hoodie_min_record_key": min(keys), "hoodie_max_record_key": max(keys)}
