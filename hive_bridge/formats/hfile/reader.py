"""The HFile reader: :class:`HFileReader` opens an HFile (whole, or in byte ranges when large) and answers
entries, point lookups and prefix reads.

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

:meth:`HFileReader.open` reads a file through the :class:`~hive_bridge.storage.core.Storage` its caller hands it
(a file on object storage); without one, the path must be a local file. The format is described in
:mod:`hive_bridge.formats.hfile.blocks`; the decoding of the metadata table's values
(:func:`decode_metadata_values`) is here for now.
"""

from __future__ import annotations

import io
import json
import os
import struct
import threading
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import fastavro

from hive_bridge.formats.hfile.blocks import (
    BLOCK_HEADER,
    BLOCK_HEADER_SIZE,
    BLOOM_META_MAGICS,
    FI_KEY_VALUE_VERSION,
    FI_LAST_KEY,
    FI_MAX_TAGS_LEN,
    FI_SCHEMA,
    KEY_TYPE_PUT,
    LATEST_TIMESTAMP,
    MAGIC_DATA,
    MAGIC_FILE_INFO,
    MAGIC_INTERMEDIATE_INDEX,
    MAGIC_LEAF_INDEX,
    MAGIC_META,
    MAGIC_ROOT_INDEX,
    MIN_KEY_LENGTH,
    TRAILER_SIZE,
    ChecksumType,
    Codec,
    HFileError,
    IndexEntry,
    ParseError,
    block_checksum,
    codec_name,
    gunzip,
    parse_file_info,
    parse_nonroot_index,
    parse_root_index,
    read_vlong,
    row_of_key,
)
from hive_bridge.formats.hfile.cells import Cells, Offsets, bisect_keys, fast_cells, offsets_of, prefix_upper
from hive_bridge.formats.hfile.trailer import HFileTrailer, parse_trailer
from hive_bridge.storage.core import Storage, is_local_uri

__all__ = ["Cells", "HFileError", "HFileReader", "decode_metadata_values"]

_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_II = struct.Struct(">ii")
_BLOCK_CACHE_SIZE = 32

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads that read data blocks ahead of :meth:`HFileReader.prefix_cells` (one process-wide pool)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="hfile-read")
        return _POOL



#: whole load-on-open section), then the data blocks a lookup needs
_WHOLE_FILE_MAX = 4 * 1024 * 1024
_TAIL_READ = 256 * 1024


class _RangeFile:
    """A file read in byte ranges when first sliced, the ranges kept: sliced like the bytes of the whole file
    (a slice is a memoryview of the range holding it). A range that cannot be read, or reads short (a file
    shorter than its listed size), raises :class:`ParseError` at its first byte."""

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
                raise ParseError(start, f"cannot read bytes {start}-{stop - 1}: {exc}") from None
            if len(data) != stop - start:
                raise ParseError(start, f"reading bytes {start}-{stop - 1} gave {len(data)} bytes: the file is shorter "
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
        CRC32C of HBase-written blocks; gzip's own CRC32 and every structural check still apply."""
        self.name = name or "<hfile>"
        self._verify_checksums = verify_checksums
        self._data: memoryview | _RangeFile = data if isinstance(data, _RangeFile) else memoryview(bytes(data))
        self._blocks: OrderedDict[int, tuple[list[bytes], list[bytes]]] = OrderedDict()
        try:
            self._open()
        except ParseError as bad:
            raise self._error(bad) from None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, verify_checksums: bool = True,
             storage: Storage | None = None) -> HFileReader:
        """Open the file at ``path``, read through ``storage`` (the table's: a file on object storage); without
        one, ``path`` is a local file. Files up to a few MB are read whole, larger ones in ranges."""
        spath = os.fspath(path)
        try:
            if storage is None:
                if not is_local_uri(spath):
                    raise HFileError(f"{spath}: an HFile on object storage is read through its table's Storage "
                                     "(none given)")
                storage = Storage.local(os.path.dirname(spath) or ".")
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
        except ParseError as bad:
            raise HFileError(f"{spath}: byte {bad.offset}: {bad.what}") from None
        return cls(data, spath, verify_checksums=verify_checksums)

    # -------------------------------------------------------------------------------------- public API

    file_info: Mapping[bytes, bytes]
    num_entries: int
    trailer: HFileTrailer

    @property
    def avro_schema(self) -> str | None:
        """The Avro writer schema of the values (file info ``schema``), if the file has one."""
        raw = self.file_info.get(FI_SCHEMA)
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
        except ParseError as bad:
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
            except ParseError as bad:
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
                f"codec={codec_name(self._trailer.codec)}, entries={self.num_entries}, "
                f"data_blocks={len(self._data_index)}, index_levels={self._trailer.num_data_index_levels})")

    @property
    def data_block_count(self) -> int:
        return len(self._data_index)

    # -------------------------------------------------------------------------------------- opening

    def _error(self, bad: ParseError) -> HFileError:
        return HFileError(f"{self.name}: byte {bad.offset}: {bad.what}")

    def _open(self) -> None:
        data = self._data
        tr = self._trailer = self.trailer = parse_trailer(data[max(len(data) - TRAILER_SIZE, 0):], len(data))
        trailer_start = len(data) - TRAILER_SIZE
        base = trailer_start
        if tr.codec not in (Codec.NONE, Codec.GZ):
            raise ParseError(base, f"compression codec {codec_name(tr.codec)} is not supported (only NONE and GZ, "
                             "the ones Hudi reads)")
        if not 0 <= tr.load_on_open_offset < trailer_start:
            raise ParseError(base, f"load-on-open offset {tr.load_on_open_offset} is outside the file's "
                             f"{trailer_start} bytes before the trailer")
        if tr.num_data_index_levels < 1 or tr.num_data_index_levels > 8:
            raise ParseError(base, f"{tr.num_data_index_levels} data index levels")
        # load-on-open: root data index, meta index, file info, then optionally HBase bloom metadata
        pos = tr.load_on_open_offset
        if isinstance(data, _RangeFile):
            data.fetch(pos, trailer_start)      # in the tail already read, unless the section is large
        _, root, size = self._read_block(pos, (MAGIC_ROOT_INDEX,), trailer_start)
        root_entries = parse_root_index(root, pos, tr.data_index_count, data_index=True,
                                              multi_level=tr.num_data_index_levels > 1)
        pos += size
        _, meta, size = self._read_block(pos, (MAGIC_ROOT_INDEX,), trailer_start)
        meta_entries = parse_root_index(meta, pos, tr.meta_index_count, data_index=False, multi_level=False)
        pos += size
        if pos != tr.file_info_offset:
            raise ParseError(base, f"trailer says the file info is at byte {tr.file_info_offset}, the blocks before it "
                             f"end at byte {pos}")
        _, info, size = self._read_block(pos, (MAGIC_FILE_INFO,), trailer_start)
        self.file_info = MappingProxyType(parse_file_info(info, pos))
        pos += size
        while pos < trailer_start:
            _, _, size = self._read_block(pos, BLOOM_META_MAGICS, trailer_start)
            pos += size
        # the data index, walked down to the data blocks
        entries = root_entries
        for level in range(tr.num_data_index_levels - 1, 0, -1):
            magic = MAGIC_LEAF_INDEX if level == 1 else MAGIC_INTERMEDIATE_INDEX
            lower: list[IndexEntry] = []
            for e in entries:
                _, payload, _ = self._read_block(e.offset, (magic,), tr.load_on_open_offset, e.size)
                lower.extend(parse_nonroot_index(payload, e.offset, e.key))
            entries = lower
        self._check_data_index(entries)
        self._data_index = entries
        self._index_rows = [e.key for e in entries]
        meta_index: dict[bytes, IndexEntry] = {}
        for e in meta_entries:
            if e.key in meta_index:
                raise ParseError(tr.load_on_open_offset, f"meta block {e.key!r} is indexed twice")
            if not 0 <= e.offset < tr.load_on_open_offset:
                raise ParseError(tr.load_on_open_offset, f"meta block {e.key!r} at byte {e.offset} is outside the "
                                                   "data section")
            meta_index[e.key] = e
        self._meta_index = meta_index
        self.num_entries = tr.entry_count
        if (tr.entry_count == 0) != (not entries):
            raise ParseError(base, f"the trailer says {tr.entry_count} entries but the index has {len(entries)} "
                             "data blocks")
        # entry format, from the file info
        kv_version = self.file_info.get(FI_KEY_VALUE_VERSION)
        if kv_version is not None and len(kv_version) != 4:
            raise ParseError(tr.file_info_offset, "file info KEY_VALUE_VERSION is not an int32")
        self._has_mvcc = kv_version is not None and _I32.unpack(kv_version)[0] == 1
        self._has_tags = FI_MAX_TAGS_LEN in self.file_info
        last_key = self.file_info.get(FI_LAST_KEY)
        # Hudi's writer stores an empty last key in a file without entries; HBase's stores none
        self._last_row = row_of_key(last_key, tr.file_info_offset) if last_key else None
        if self._last_row is not None and not entries:
            raise ParseError(tr.file_info_offset, "file info has a last key but the file has no data blocks")
        if self._last_row is not None and self._index_rows and self._last_row < self._index_rows[-1]:
            raise ParseError(tr.file_info_offset, "file info last key sorts before the last data block")

    def _check_data_index(self, entries: list[IndexEntry]) -> None:
        tr = self._trailer
        prev_end = 0
        for i, e in enumerate(entries):
            if e.offset < prev_end or e.size < BLOCK_HEADER_SIZE or e.offset + e.size > tr.load_on_open_offset:
                raise ParseError(tr.load_on_open_offset, f"data block {i} at byte {e.offset} ({e.size} bytes) overlaps "
                                                   "another block or lies outside the data section")
            if i and e.key <= entries[i - 1].key:
                raise ParseError(tr.load_on_open_offset, f"data index keys are out of order at block {i}")
            prev_end = e.offset + e.size
        if entries:
            if tr.first_data_block_offset != entries[0].offset:
                raise ParseError(len(self._data) - TRAILER_SIZE,
                           f"trailer says the first data block is at byte {tr.first_data_block_offset}, the index "
                           f"says {entries[0].offset}")
            if tr.last_data_block_offset != entries[-1].offset:
                raise ParseError(len(self._data) - TRAILER_SIZE,
                           f"trailer says the last data block is at byte {tr.last_data_block_offset}, the index "
                           f"says {entries[-1].offset}")

    def _read_block(self, offset: int, magics: Sequence[bytes] | frozenset[bytes], limit: int,
                    expected_size: int | None = None) -> tuple[bytes, bytes, int]:
        """Check and decompress the block at ``offset`` (which must end by ``limit``): (magic, payload, size)."""
        data = self._data
        if offset < 0 or offset + BLOCK_HEADER_SIZE > limit:
            raise ParseError(max(offset, 0), f"block header at byte {offset} runs past byte {limit}, the end of its "
                                       "section (truncated file or bad offset)")
        if isinstance(data, _RangeFile) and expected_size is not None and expected_size > 0:
            data.fetch(offset, min(offset + expected_size, limit))      # the whole block: one request
        magic, on_disk, uncompressed, _prev, ck_type, bytes_per_ck, data_size = BLOCK_HEADER.unpack_from(
            data[offset:offset + BLOCK_HEADER_SIZE])
        if magic not in magics:
            want = " or ".join(repr(m) for m in sorted(magics))
            raise ParseError(offset, f"block magic is {magic!r}, expected {want}")
        end = offset + BLOCK_HEADER_SIZE + on_disk
        if on_disk < 0 or end > limit:
            raise ParseError(offset + 8, f"{magic.decode('latin-1')} block of {on_disk} bytes after its header runs "
                                   f"past byte {limit}, the end of its section (truncated file or bad size)")
        if expected_size is not None and expected_size != BLOCK_HEADER_SIZE + on_disk:
            raise ParseError(offset + 8, f"the index says this block is {expected_size} bytes, its header says "
                                   f"{BLOCK_HEADER_SIZE + on_disk}")
        if uncompressed < 0:
            raise ParseError(offset + 12, f"uncompressed size {uncompressed} is negative")
        if ck_type not in (ChecksumType.NULL, ChecksumType.CRC32, ChecksumType.CRC32C):
            raise ParseError(offset + 24, f"checksum type {ck_type} is unknown (0 NULL, 1 CRC32, 2 CRC32C)")
        if data_size < BLOCK_HEADER_SIZE:
            raise ParseError(offset + 29, f"on-disk data size {data_size} is smaller than the block header")
        # One 4-byte checksum per bytes_per_ck bytes of header + data. Hudi's own writer (checksum type NULL)
        # still reserves that room and fills it with zeros; HBase's NULL type reserves none.
        checksum_bytes = 4 * -(-data_size // bytes_per_ck) if bytes_per_ck > 0 else -1
        have = BLOCK_HEADER_SIZE + on_disk - data_size
        if ck_type == ChecksumType.NULL and have == 0:
            checksum_bytes = 0
        if have != checksum_bytes:
            raise ParseError(offset + 29, f"on-disk data size {data_size} with header, and {bytes_per_ck} bytes per "
                                    f"checksum, do not add up to the block's {BLOCK_HEADER_SIZE + on_disk} bytes")
        if ck_type == ChecksumType.NULL:
            room = bytes(data[offset + data_size:offset + data_size + checksum_bytes])
            if room.count(0) != len(room):
                raise ParseError(offset + data_size, "the unused checksum room of an unchecksummed block is not zero")
        elif self._verify_checksums:
            ck_at = offset + data_size
            for chunk, start in enumerate(range(offset, offset + data_size, bytes_per_ck)):
                stop = min(start + bytes_per_ck, offset + data_size)
                stored = _U32.unpack_from(data[ck_at + 4 * chunk:ck_at + 4 * chunk + 4])[0]
                if block_checksum(ck_type, data[start:stop]) != stored:
                    raise ParseError(start, f"{ChecksumType(ck_type).name} checksum mismatch in bytes {start}-{stop - 1} "
                                      f"of the {magic.decode('latin-1')} block at byte {offset}")
        payload = data[offset + BLOCK_HEADER_SIZE:offset + data_size]
        if self._trailer.codec == Codec.NONE:
            if len(payload) != uncompressed:
                raise ParseError(offset + 12, f"uncompressed block holds {len(payload)} bytes, its header says "
                                        f"{uncompressed}")
            content = bytes(payload)
        else:
            try:
                content = gunzip(payload, uncompressed)
            except ValueError as exc:
                raise ParseError(offset + BLOCK_HEADER_SIZE, f"{magic.decode('latin-1')} block at byte {offset}: "
                                                       f"{exc}") from None
        return magic, content, BLOCK_HEADER_SIZE + on_disk

    # -------------------------------------------------------------------------------------- data blocks

    def _block(self, i: int) -> tuple[list[bytes], list[bytes]]:
        cached = self._blocks.get(i)
        if cached is not None:
            self._blocks.move_to_end(i)
            return cached
        try:
            decoded = self._decode_block(i)
        except ParseError as bad:
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

    def _fast_block(self, i: int, payload: bytes) -> Offsets | None:
        """The cells of data block ``i`` as offsets when the block is laid out as Hudi writes it and agrees with
        the index (its first key no earlier than its index key, its last key before the next block's and, in
        the last block, equal to the file info's last key); None otherwise (the careful walk decides)."""
        if not self._has_mvcc or self._has_tags:
            return None
        fast = fast_cells(payload)
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
        upper = prefix_upper(prefix) if prefix else None
        stop = len(index_rows) if upper is None else max(bisect_left(index_rows, upper), start + 1)
        parts: list[tuple[bytes, Offsets]] = []
        try:
            for i, payload in self._payloads(range(start, stop)):
                fast = self._fast_block(i, payload)
                if fast is None:
                    keys, values = self._decode_cells(i, self._data_index[i], payload)
                    payload, fast = offsets_of(keys, values)
                ks, ke, vs, ve = fast
                j = bisect_keys(payload, ks, ke, prefix, 0) if i == start and prefix else 0
                k = len(ks) if upper is None else bisect_keys(payload, ks, ke, upper, j)
                if k > j:
                    parts.append((payload, (ks[j:k], ke[j:k], vs[j:k], ve[j:k])))
                if k < len(ks):
                    break
        except ParseError as bad:
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
                raise ParseError(base + pos, "entry header runs past the end of its data block")
            klen, vlen = _II.unpack_from(payload, pos)
            kstart = pos + 8
            kend = kstart + klen
            if klen < MIN_KEY_LENGTH or vlen < 0 or kend + vlen > end:
                raise ParseError(base + pos, f"entry with a {klen}-byte key and a {vlen}-byte value does not fit in "
                                       "its data block")
            rowlen = _I16.unpack_from(payload, kstart)[0]
            fam_at = kstart + 2 + rowlen
            # Hudi's keys (both writers): row, empty family and qualifier, the latest timestamp, Put
            if rowlen < 0 or fam_at + 10 != kend:
                raise ParseError(base + kstart, f"key of {klen} bytes with row length {rowlen} is not a Hudi key "
                                          "(row, no family or qualifier, timestamp, type)")
            if payload[fam_at] != 0 or _I64.unpack_from(payload, fam_at + 1)[0] != LATEST_TIMESTAMP:
                raise ParseError(base + fam_at, "key has a column family or a timestamp other than 'latest'")
            if payload[kend - 1] != KEY_TYPE_PUT:
                raise ParseError(base + kend - 1, f"key type {payload[kend - 1]} is not Put (4)")
            row = payload[kstart + 2:fam_at]
            if keys and row <= prev:
                raise ParseError(base + kstart, f"key {row!r} does not sort after the previous key {prev!r}")
            keys.append(row)
            values.append(payload[kend:kend + vlen])
            prev = row
            pos = kend + vlen
            if has_tags:
                if pos + 2 > end:
                    raise ParseError(base + pos, "tags length runs past the end of its data block")
                tlen = _U16.unpack_from(payload, pos)[0]
                pos += 2 + tlen
                if pos > end:
                    raise ParseError(base + pos, "tags run past the end of their data block")
            if has_mvcc:
                mvcc, pos = read_vlong(payload, pos, end, base)
                if mvcc < 0:
                    raise ParseError(base + pos, f"MVCC timestamp {mvcc} is negative")
        if not keys:
            raise ParseError(base, "data block holds no entries")
        if keys[0] < e.key:
            raise ParseError(base, f"first key {keys[0]!r} sorts before the index key {e.key!r} of its block")
        if i + 1 < len(self._data_index) and keys[-1] >= self._data_index[i + 1].key:
            raise ParseError(base, f"last key {keys[-1]!r} does not sort before the index key of the next block")
        if i + 1 == len(self._data_index) and self._last_row is not None and keys[-1] != self._last_row:
            raise ParseError(base, f"last key {keys[-1]!r} of the last block is not the file info last key "
                             f"{self._last_row!r}")
        return keys, values




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

