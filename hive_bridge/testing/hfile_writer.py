"""HFiles for tests, built the way HBase's writer (Hudi 0.x and 1.0) and Hudi's own ``HFileWriterImpl`` lay them
out: :func:`write_hfile` writes multi-block, multi-level files with every checksum type and the codecs NONE and
GZ, which :class:`hive_bridge.formats.hfile.HFileReader` reads. The layout is described in
:mod:`hive_bridge.formats.hfile.blocks`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from itertools import pairwise

from hive_bridge.formats.hfile.blocks import (
    BLOCK_HEADER,
    BLOCK_HEADER_SIZE,
    FI_KEY_VALUE_VERSION,
    FI_LAST_KEY,
    FI_MAX_MEMSTORE_TS,
    FI_MAX_TAGS_LEN,
    MAGIC_DATA,
    MAGIC_FILE_INFO,
    MAGIC_INTERMEDIATE_INDEX,
    MAGIC_LEAF_INDEX,
    MAGIC_META,
    MAGIC_ROOT_INDEX,
    PBUF_MAGIC,
    TRAILER_MAGIC,
    TRAILER_SIZE,
    VERSION_SIZE,
    ChecksumType,
    Codec,
    block_checksum,
)
from hive_bridge.formats.hfile.cells import KEY_TAIL

__all__ = ["pb_field", "pb_varint_bytes", "write_hfile", "write_vlong"]

_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_II = struct.Struct(">ii")
_QI = struct.Struct(">qi")


def pb_varint_bytes(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def pb_field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return pb_varint_bytes(number << 3) + pb_varint_bytes(value)
    return pb_varint_bytes(number << 3 | 2) + pb_varint_bytes(len(value)) + value



def write_vlong(value: int) -> bytes:
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



def _kv_key(row: bytes) -> bytes:
    """The KeyValue key Hudi writes: row, empty family and qualifier, latest timestamp, Put."""
    return _I16.pack(len(row)) + row + KEY_TAIL


def _block_bytes(magic: bytes, payload: bytes, prev: int, codec: Codec, checksum: ChecksumType,
                 bytes_per_checksum: int) -> bytes:
    if codec == Codec.GZ:
        c = zlib.compressobj(6, zlib.DEFLATED, 31)
        data = c.compress(payload) + c.flush()
    else:
        data = payload
    data_size = BLOCK_HEADER_SIZE + len(data)
    n_ck = -(-data_size // bytes_per_checksum)         # Hudi's writer reserves (zeroed) room even for NULL
    header = BLOCK_HEADER.pack(magic, len(data) + 4 * n_ck, len(payload), prev, checksum, bytes_per_checksum,
                          data_size)
    block = header + data
    if checksum == ChecksumType.NULL:
        return block + bytes(4 * n_ck)
    return block + b"".join(_U32.pack(block_checksum(checksum, block[i:i + bytes_per_checksum]))
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
        buf += write_vlong(0)
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
    root = b"".join(_QI.pack(o, s) + write_vlong(len(k)) + k for o, s, k in level)
    if index_levels > 1:
        root += _I64.pack(level[0][0] if level else 0) + _I32.pack(0) + _I32.pack(0)   # mid-key metadata
    root_block = _block_bytes(MAGIC_ROOT_INDEX, root, -1, codec, checksum, bytes_per_checksum)
    out.extend(root_block)
    meta = b"".join(_QI.pack(o, s) + write_vlong(len(k)) + k for o, s, k in meta_index)
    out.extend(_block_bytes(MAGIC_ROOT_INDEX, meta, -1, codec, checksum, bytes_per_checksum))
    info: dict[bytes, bytes] = {FI_KEY_VALUE_VERSION: _I32.pack(1), FI_MAX_MEMSTORE_TS: _I64.pack(0)}
    if pairs:
        info[FI_LAST_KEY] = _kv_key(pairs[-1][0])
    if tags:
        info[FI_MAX_TAGS_LEN] = _I32.pack(0)
    info.update(file_info or {})
    proto = b"".join(pb_field(1, pb_field(1, k) + pb_field(2, v)) for k, v in info.items())
    file_info_offset = len(out)
    out.extend(_block_bytes(MAGIC_FILE_INFO, PBUF_MAGIC + pb_varint_bytes(len(proto)) + proto, -1, codec,
                            checksum, bytes_per_checksum))
    trailer = b"".join([
        pb_field(1, file_info_offset), pb_field(2, load_on_open), pb_field(3, len(root)),
        pb_field(5, len(level)), pb_field(6, len(meta_index)), pb_field(7, len(pairs)),
        pb_field(8, index_levels), pb_field(9, first_data % (1 << 64)), pb_field(10, last_data % (1 << 64)),
        pb_field(11, comparator.encode()), pb_field(12, int(codec)),
    ])
    body = TRAILER_MAGIC + pb_varint_bytes(len(trailer)) + trailer
    out.extend(body + bytes(TRAILER_SIZE - VERSION_SIZE - len(body)) + bytes([minor_version]) + b"\x00\x00\x03")
    return bytes(out)
