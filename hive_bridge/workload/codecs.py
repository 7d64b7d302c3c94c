"""Log files (Spark event logs and text logs), decompressed as a stream of lines, memory bounded.

Spark names a compressed event log by its codec (``.zstd``, ``.lz4``, ``.snappy``, ``.lzf``; ``.inprogress`` may
follow while the application runs); a log may also be gzip'd (``.gz``). The codec is told by the file's first
bytes where they say it (gzip, zstd, lz4-java, snappy-java and lzf magic), else by its name. Each codec is
Spark's own stream format, not the command-line tools':

- zstd: standard zstd frames, one after another;
- lz4: lz4-java's *block stream*: ``LZ4Block`` magic, a token byte, int32 LE compressed and raw lengths, an int32
  checksum, then the block (raw or LZ4-compressed); an empty block ends a stream and another may follow;
- snappy: snappy-java's stream: a 16-byte header (``\\x82SNAPPY\\x00``, version, compatible version), then
  [int32 BE length][raw snappy block]...;
- lzf: compress-lzf chunks starting ``ZV`` (type 0 stored, 1 compressed);
- gzip: gzip members, one after another (``zlib``).

Nothing is read whole, and nothing is expanded whole either: zstd and gzip are expanded a bounded piece at a
time, an lz4 or snappy block's stated size is checked before it is expanded. The expanded size is capped as it
grows (:data:`MAX_RATIO` times the compressed size, at least :data:`MIN_CAP` bytes) so that a decompression bomb
ends with a :class:`LogReadError` saying so, after at most the cap was expanded; a line longer than ``max_line``
bytes is skipped (not held in memory) and reported as such by the reader of the lines. Only regular files are
opened: a FIFO or a device (``/dev/zero``) would block or never end, and is refused with a
:class:`LogReadError` before it is opened.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from hive_bridge.errors import HiveBridgeError

CODECS = ("zstd", "lz4", "snappy", "lzf", "gzip")
_EXTENSIONS = {"zstd": "zstd", "zst": "zstd", "lz4": "lz4", "snappy": "snappy", "lzf": "lzf", "gz": "gzip"}
#: an expanded stream may be this many times larger than its compressed bytes before it is taken for a
#: decompression bomb
MAX_RATIO = 400
#: ... but never capped below this many bytes
MIN_CAP = 64 << 20
#: lines longer than this are skipped (an event log line holds a whole plan: it may be long)
MAX_LINE = 64 << 20
#: the largest block an lz4-java or snappy-java stream may say it expands to
MAX_BLOCK = 64 << 20
_CHUNK = 1 << 20
#: zstd input is fed this many bytes at a time: a zstd block expands to at most 128 KiB from a few bytes, so one
#: piece expands to at most ~16 MiB however the stream was made
_ZSTD_STEP = 512


class LogReadError(HiveBridgeError):
    """A log file that cannot be read (on), with the file and where in it."""


class LongLine:
    """Stands for a line longer than the limit (its bytes were skipped)."""

    def __init__(self, length: int) -> None:
        self.length = length


def codec_of(path: str) -> str | None:
    """The codec a log file's name says (None: plain text)."""
    name = os.path.basename(path)
    if name.endswith(".inprogress"):
        name = name[: -len(".inprogress")]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    return _EXTENSIONS.get(ext)


def codec_of_bytes(head: bytes) -> str | None:
    """The codec a stream's first bytes say (None: none of them)."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    if head.startswith(_LZ4_MAGIC):
        return "lz4"
    if head.startswith(_SNAPPY_MAGIC):
        return "snappy"
    if head[:2] == b"ZV" and head[2:3] in (b"\x00", b"\x01"):
        return "lzf"
    return None


def check_regular(path: str) -> int:
    """The size of the regular file ``path``; a :class:`LogReadError` when it is missing, unreadable, or not a
    regular file (a FIFO, a socket or a device: reading it would block or never end)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise LogReadError(f"{path}: cannot read: {exc.strerror}") from None
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    what = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode)
            else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a file")
    raise LogReadError(f"{path}: not a regular file ({what}): not read (pipe it to standard input, '-', to read it)")


class _Budget:
    """How much one stream may expand to: :data:`MAX_RATIO` times its compressed bytes (the file's size, or for a
    stream of unknown size what was consumed so far), at least :data:`MIN_CAP`; or a fixed cap."""

    def __init__(self, path: str, fh: _Counting, size: int | None, cap: int | None) -> None:
        self.path, self.fh, self.size, self.cap = path, fh, size, cap
        self.total = 0

    def limit(self) -> int:
        if self.cap is not None:
            return self.cap
        return max(MIN_CAP, MAX_RATIO * (self.size if self.size is not None else self.fh.consumed))

    def check(self, more: int) -> None:
        """Raise before (or right after) the stream expands beyond its cap."""
        if self.total + more > self.limit():
            limit = self.limit()
            raise LogReadError(f"{self.path}: expands beyond {limit} bytes ({limit >> 20} MiB, over {MAX_RATIO} "
                               "times its compressed size): taken for a decompression bomb, read no further")
        self.total += more


class _Counting:
    """A binary stream counting the bytes read from it."""

    def __init__(self, raw: BinaryIO, head: bytes = b"") -> None:
        self.raw, self.head, self.consumed = raw, head, 0

    def read(self, n: int) -> bytes:
        if self.head:
            data, self.head = self.head[:n], self.head[n:]
            if len(data) < n:
                data += self.raw.read(n - len(data))
        else:
            data = self.raw.read(n)
        self.consumed += len(data)
        return data


def _read_exact(fh: _Counting, n: int, path: str, what: str) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise LogReadError(f"{path}: truncated {what} (the stream ends inside a block)")
    return data


def _zstd_chunks(fh: _Counting, path: str, budget: _Budget) -> Iterator[bytes]:
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    dobj = dctx.decompressobj()
    started = False
    ready: list[bytes] = []  # pieces expanded, handed on together once they make a chunk
    size = 0
    while True:
        data = fh.read(_CHUNK)
        if not data:
            break
        pos = 0
        while pos < len(data):
            started = True
            piece = data[pos:pos + _ZSTD_STEP]
            pos += len(piece)
            try:
                out = dobj.decompress(piece)
            except zstandard.ZstdError as exc:
                raise LogReadError(f"{path}: not a readable zstd stream ({exc})") from None
            if out:
                budget.check(len(out))
                ready.append(out)
                size += len(out)
                if size >= _CHUNK:
                    yield b"".join(ready)
                    ready, size = [], 0
            if dobj.eof:  # a frame ended: another may follow in the same file
                rest = dobj.unused_data
                dobj = dctx.decompressobj()
                started = False
                data, pos = rest + data[pos:], 0
    if ready:
        yield b"".join(ready)
    if started and not dobj.eof:
        raise LogReadError(f"{path}: truncated zstd stream (the file ends inside a frame)")


def _gzip_chunks(fh: _Counting, path: str, budget: _Budget) -> Iterator[bytes]:
    dobj = zlib.decompressobj(wbits=31)
    started = False
    while True:
        data = fh.read(_CHUNK)
        if not data:
            break
        while data:
            started = True
            try:
                out = dobj.decompress(data, _CHUNK)
            except zlib.error as exc:
                raise LogReadError(f"{path}: not a readable gzip stream ({exc})") from None
            if out:
                budget.check(len(out))
                yield out
            if dobj.eof:  # a member ended: another may follow (concatenated gzip files)
                data = dobj.unused_data
                dobj = zlib.decompressobj(wbits=31)
                started = False
            else:
                data = dobj.unconsumed_tail
    if started and not dobj.eof:
        raise LogReadError(f"{path}: truncated gzip stream (the file ends inside a member)")


_LZ4_MAGIC = b"LZ4Block"


def _lz4_chunks(fh: _Counting, path: str, budget: _Budget) -> Iterator[bytes]:
    import cramjam

    while True:
        magic = fh.read(len(_LZ4_MAGIC))
        if not magic:
            return
        if magic != _LZ4_MAGIC:
            raise LogReadError(f"{path}: not an lz4-java block stream (no LZ4Block magic at a block start)")
        token, clen, rlen, _check = struct.unpack("<Biii", _read_exact(fh, 13, path, "lz4 block header"))
        method = token & 0xF0
        if clen < 0 or rlen < 0 or clen > MAX_BLOCK or rlen > MAX_BLOCK:
            raise LogReadError(f"{path}: damaged lz4 block header (lengths {clen}, {rlen})")
        data = _read_exact(fh, clen, path, "lz4 block")
        if rlen == 0:
            continue                  # the end mark of one stream (another may follow)
        budget.check(rlen)            # before the block is expanded
        if method == 0x10:
            yield data
        elif method == 0x20:
            try:
                yield bytes(cramjam.lz4.decompress_block(data, output_len=rlen))
            except Exception as exc:  # cramjam raises its own DecompressionError
                raise LogReadError(f"{path}: damaged lz4 block ({exc})") from None
        else:
            raise LogReadError(f"{path}: unknown lz4 block method {method:#x}")


_SNAPPY_MAGIC = b"\x82SNAPPY\x00"


def _snappy_length(block: bytes) -> int:
    """The expanded length a raw snappy block starts with (a little-endian base-128 varint); -1 if damaged."""
    n = shift = 0
    for byte in block[:5]:
        n |= (byte & 0x7F) << shift
        if byte < 0x80:
            return n
        shift += 7
    return -1


def _snappy_chunks(fh: _Counting, path: str, budget: _Budget) -> Iterator[bytes]:
    import cramjam

    head = fh.read(16)
    if not head:
        return
    if head[:8] != _SNAPPY_MAGIC:
        raise LogReadError(f"{path}: not a snappy-java stream (no \\x82SNAPPY header)")
    while True:
        size = fh.read(4)
        if not size:
            return
        if len(size) < 4:
            raise LogReadError(f"{path}: truncated snappy block length")
        if size == _SNAPPY_MAGIC[:4]:  # a concatenated stream's header
            fh.read(12)
            continue
        (n,) = struct.unpack(">i", size)
        if n < 0 or n > MAX_BLOCK:
            raise LogReadError(f"{path}: damaged snappy block length {n}")
        data = _read_exact(fh, n, path, "snappy block")
        expanded = _snappy_length(data)
        if expanded < 0 or expanded > MAX_BLOCK:
            raise LogReadError(f"{path}: damaged snappy block (it says it expands to {expanded} bytes)")
        budget.check(expanded)        # before the block is expanded
        try:
            yield bytes(cramjam.snappy.decompress_raw(data))
        except Exception as exc:
            raise LogReadError(f"{path}: damaged snappy block ({exc})") from None


def lzf_decompress(data: bytes, size: int) -> bytes:
    """One LZF block (the format of compress-lzf and liblzf)."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            run = ctrl + 1
            if i + run > n:
                raise ValueError("literal run past the block's end")
            out += data[i:i + run]
            i += run
            continue
        length = ctrl >> 5
        back = (ctrl & 0x1F) << 8
        if length == 7:
            if i >= n:
                raise ValueError("length past the block's end")
            length += data[i]
            i += 1
        if i >= n:
            raise ValueError("back reference past the block's end")
        back += data[i] + 1
        i += 1
        length += 2
        start = len(out) - back
        if start < 0:
            raise ValueError("back reference before the block's start")
        if back >= length:
            out += out[start:start + length]
        else:  # an overlapping copy repeats the last ``back`` bytes
            period = out[start:]
            out += (period * (length // back + 1))[:length]
    if len(out) != size:
        raise ValueError(f"expanded to {len(out)} bytes, the header says {size}")
    return bytes(out)


def _lzf_chunks(fh: _Counting, path: str, budget: _Budget) -> Iterator[bytes]:
    while True:
        head = fh.read(2)
        if not head:
            return
        if head != b"ZV":
            raise LogReadError(f"{path}: not an lzf stream (no ZV at a chunk start)")
        kind = _read_exact(fh, 1, path, "lzf chunk header")[0]
        if kind == 0:
            (n,) = struct.unpack(">H", _read_exact(fh, 2, path, "lzf chunk header"))
            budget.check(n)
            yield _read_exact(fh, n, path, "lzf chunk")
        elif kind == 1:
            clen, rlen = struct.unpack(">HH", _read_exact(fh, 4, path, "lzf chunk header"))
            budget.check(rlen)
            try:
                yield lzf_decompress(_read_exact(fh, clen, path, "lzf chunk"), rlen)
            except ValueError as exc:
                raise LogReadError(f"{path}: damaged lzf chunk ({exc})") from None
        else:
            raise LogReadError(f"{path}: unknown lzf chunk type {kind}")


def _plain_chunks(fh: _Counting, path: str, budget: _Budget) -> Iterator[bytes]:
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return
        yield chunk


_READERS = {"zstd": _zstd_chunks, "lz4": _lz4_chunks, "snappy": _snappy_chunks, "lzf": _lzf_chunks,
            "gzip": _gzip_chunks}


def decompressed_chunks(path: str, codec: str | None = None, cap: int | None = None) -> Iterator[bytes]:
    """The bytes of one (possibly compressed) log file, chunk by chunk, ``path`` '-' standard input. The codec is
    ``codec``, else what the first bytes say, else what the name says (none: plain text); ``cap`` (bytes) replaces
    the expansion cap of :data:`MAX_RATIO` times the compressed size."""
    size: int | None = None
    if path == "-":
        raw = getattr(sys.stdin, "buffer", None)
        if raw is None:   # a text stream stands in for standard input (tests, embedding): its text, encoded
            yield from (line.encode("utf-8", "surrogateescape") for line in sys.stdin)
            return
        yield from _chunks_of(raw, path, codec, None, cap)
        return
    size = check_regular(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise LogReadError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        yield from _chunks_of(fh, path, codec, size, cap)


def _chunks_of(raw: BinaryIO, path: str, codec: str | None, size: int | None, cap: int | None) -> Iterator[bytes]:
    try:
        head = raw.read(8)
        fh = _Counting(raw, head)
        codec = codec or codec_of_bytes(head) or codec_of(path)
        budget = _Budget(path, fh, size, cap)
        yield from _READERS.get(codec or "", _plain_chunks)(fh, path, budget)
    except OSError as exc:
        raise LogReadError(f"{path}: cannot read: {exc.strerror or exc}") from None


def lines_of(chunks: Iterator[bytes], max_line: int = MAX_LINE) -> Iterator[bytes | LongLine]:
    """Lines (without their newline) of a stream of chunks; a line longer than ``max_line`` bytes comes as a
    :class:`LongLine` (its bytes dropped as they arrive). A last line without a newline is yielded too."""
    pending: list[bytes] = []
    pending_len = 0
    skipping = False
    for chunk in chunks:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                rest = chunk[start:]
                if skipping:
                    pending_len += len(rest)
                elif pending_len + len(rest) > max_line:
                    skipping = True
                    pending = []
                    pending_len += len(rest)
                elif rest:
                    pending.append(rest)
                    pending_len += len(rest)
                break
            piece = chunk[start:nl]
            if skipping or pending_len + len(piece) > max_line:
                yield LongLine(pending_len + len(piece))
            elif pending:
                pending.append(piece)
                yield b"".join(pending)
            else:
                yield piece
            pending, pending_len, skipping = [], 0, False
            start = nl + 1
    if skipping:
        yield LongLine(pending_len)
    elif pending:
        yield b"".join(pending)
