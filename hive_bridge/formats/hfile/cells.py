"""Cells of HFile data blocks as arrays: :class:`Cells` (entries over one byte buffer, no object per entry) and
the vectorised finding of a data block's cells when it is laid out as Hudi writes it (no tags, a one-byte MVCC
timestamp, the same key tail everywhere), checked with array operations; anything else is left to the
reader's careful walk.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from hive_bridge.formats.hfile.blocks import KEY_TYPE_PUT, LATEST_TIMESTAMP, MIN_KEY_LENGTH

__all__ = ["KEY_TAIL", "Cells", "Offsets", "bisect_keys", "fast_cells", "offsets_of", "prefix_upper"]

_I64 = struct.Struct(">q")
_II = struct.Struct(">ii")


def prefix_upper(prefix: bytes) -> bytes | None:
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
Offsets = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]

#: rows longer than this are compared in Python when checking a block's key order (the vectorised check pads
#: every row of the block to the longest)
_MAX_VECTOR_ROW = 256


#: how every key Hudi writes ends: empty family, the latest timestamp, Put
KEY_TAIL = b"\x00" + _I64.pack(LATEST_TIMESTAMP) + bytes([KEY_TYPE_PUT])


def fast_cells(payload: bytes) -> Offsets | None:
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
    if (buf[fam_at] != 0).any() or (buf[kend - 1] != KEY_TYPE_PUT).any():
        return None
    if (_be(buf, fam_at + 1, 8) != LATEST_TIMESTAMP).any():
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
            if payload[pos] >= 128 or klen < MIN_KEY_LENGTH or vlen < 0:
                return None
            pos += 1
    except (struct.error, IndexError):
        return None
    if pos != end or not offsets:
        return None
    return np.asarray(offsets, dtype=np.int64)


def _cells_by_key_tail(payload: bytes, buf: np.ndarray) -> np.ndarray | None:
    """Where each cell starts, without a walk, for a block whose keys all have the first cell's length (the
    metadata table's keys: fixed-length ids): every key ends with :data:`KEY_TAIL`, so the cells start
    ``key length + 8`` bytes before each place it ends. Accepted only when those starts are exactly the ones the
    walk would visit (the first at 0, each at the end of the one before: its lengths and a one-byte MVCC
    timestamp; the last ending the block): a value that happens to hold the tail, or keys of other lengths,
    give other starts, and then None (the walk decides)."""
    end = len(payload)
    if end < 8:
        return None
    klen, _ = _II.unpack_from(payload, 0)
    if klen < MIN_KEY_LENGTH or klen + 9 > end:
        return None
    # a key's last byte: the Put type, at cell start + 8 + klen - 1
    cand = np.flatnonzero(buf[klen + 7:] == KEY_TYPE_PUT) + (klen + 7)
    tail = _be(buf, cand - 8, 8)
    cand = cand[(tail == LATEST_TIMESTAMP) & (buf[cand - 9] == 0)]
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


def bisect_keys(payload: bytes, starts: np.ndarray, ends: np.ndarray, key: bytes, lo: int) -> int:
    """``bisect_left`` of ``key`` in the rows ``payload[starts[i]:ends[i]]`` (sorted), from ``lo``."""
    hi = len(starts)
    while lo < hi:
        mid = (lo + hi) // 2
        if payload[int(starts[mid]):int(ends[mid])] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def offsets_of(keys: list[bytes], values: list[bytes]) -> tuple[bytes, Offsets]:
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
    def join(cls, parts: Sequence[tuple[bytes | np.ndarray, Offsets]]) -> Cells:
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

