"""Spark event log files, decompressed as a stream of lines.

Spark names a compressed event log by its codec (``.zstd``, ``.lz4``, ``.snappy``, ``.lzf``; ``.inprogress`` may
follow while the application runs). Each codec is Spark's own stream format, not the command-line tools':

- zstd: standard zstd frames (``zstandard``'s stream reader, frames read one after another);
- lz4: lz4-java's *block stream*: ``LZ4Block`` magic, a token byte, int32 LE compressed and raw lengths, an int32
  checksum, then the block (raw or LZ4-compressed); an empty block ends a stream and another may follow;
- snappy: snappy-java's stream: a 16-byte header (``\\x82SNAPPY\\x00``, version, compatible version), then
  [int32 BE length][raw snappy block]...;
- lzf: compress-lzf chunks starting ``ZV`` (type 0 stored, 1 compressed).

Nothing is read whole: chunks are decompressed as lines are asked for. The expanded size is capped
(:data:`MAX_RATIO` times the file's size, at least :data:`MIN_CAP` bytes) so that a decompression bomb ends
with a :class:`LogReadError` saying so; a line longer than ``max_line`` bytes is skipped (not held in memory) and
reported as such by the reader of the lines.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import BinaryIO

from hive_bridge.errors import HiveBridgeError

CODECS = ("zstd", "lz4", "snappy", "lzf")
#: an expanded stream may be this many times larger than its file before it is taken for a decompression bomb
MAX_RATIO = 400
#: ... but never capped below this many bytes
MIN_CAP = 64 << 20
#: lines longer than this are skipped
MAX_LINE = 64 << 20
_CHUNK = 1 << 20


class LogReadError(HiveBridgeError):
    """A log file that cannot be read (on), with the file and where in it."""


class LongLine:
    """Stands for a line longer than the limit (its bytes were skipped)."""

    def __init__(self, length: int) -> None:
        self.length = length


def codec_of(path: str) -> str | None:
    """The codec a Spark event log file's name says (None: plain text)."""
    name = os.path.basename(path)
    if name.endswith(".inprogress"):
        name = name[: -len(".inprogress")]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    return ext if ext in CODECS else None


def _read_exact(fh: BinaryIO, n: int, path: str, what: str) -> bytes:
    data = fh.read(n)
    if len(data) != n:
        raise LogReadError(f"{path}: truncated {what} (the stream ends inside a block)")
    return data


def _zstd_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    dobj = dctx.decompressobj()
    started = False
    while True:
        data = fh.read(_CHUNK)
        if not data:
            break
        while data:
            started = True
            try:
                out = dobj.decompress(data)
            except zstandard.ZstdError as exc:
                raise LogReadError(f"{path}: not a readable zstd stream ({exc})") from None
            if out:
                yield out
            if dobj.eof:  # a frame ended: another may follow in the same file
                data = dobj.unused_data
                dobj = dctx.decompressobj()
                started = False
            else:
                data = b""
    if started and not dobj.eof:
        raise LogReadError(f"{path}: truncated zstd stream (the file ends inside a frame)")


_LZ4_MAGIC = b"LZ4Block"


def _lz4_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
    import cramjam

    while True:
        magic = fh.read(len(_LZ4_MAGIC))
        if not magic:
            return
        if magic != _LZ4_MAGIC:
            raise LogReadError(f"{path}: not an lz4-java block stream (no LZ4Block magic at a block start)")
        token, clen, rlen, _check = struct.unpack("<Biii", _read_exact(fh, 13, path, "lz4 block header"))
        method = token & 0xF0
        if clen < 0 or rlen < 0 or clen > (64 << 20) or rlen > (64 << 20):
            raise LogReadError(f"{path}: damaged lz4 block header (lengths {clen}, {rlen})")
        data = _read_exact(fh, clen, path, "lz4 block")
        if rlen == 0:
            continue                  # the end mark of one stream (another may follow)
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


def _snappy_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
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
        if n < 0 or n > (64 << 20):
            raise LogReadError(f"{path}: damaged snappy block length {n}")
        data = _read_exact(fh, n, path, "snappy block")
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
        else:
            for k in range(length):
                out.append(out[start + k])
    if len(out) != size:
        raise ValueError(f"expanded to {len(out)} bytes, the header says {size}")
    return bytes(out)


def _lzf_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
    while True:
        head = fh.read(2)
        if not head:
            return
        if head != b"ZV":
            raise LogReadError(f"{path}: not an lzf stream (no ZV at a chunk start)")
        kind = _read_exact(fh, 1, path, "lzf chunk header")[0]
        if kind == 0:
            (n,) = struct.unpack(">H", _read_exact(fh, 2, path, "lzf chunk header"))
            yield _read_exact(fh, n, path, "lzf chunk")
        elif kind == 1:
            clen, rlen = struct.unpack(">HH", _read_exact(fh, 4, path, "lzf chunk header"))
            try:
                yield lzf_decompress(_read_exact(fh, clen, path, "lzf chunk"), rlen)
            except ValueError as exc:
                raise LogReadError(f"{path}: damaged lzf chunk ({exc})") from None
        else:
            raise LogReadError(f"{path}: unknown lzf chunk type {kind}")


def _plain_chunks(fh: BinaryIO, path: str) -> Iterator[bytes]:
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            return
        yield chunk


_READERS = {"zstd": _zstd_chunks, "lz4": _lz4_chunks, "snappy": _snappy_chunks, "lzf": _lzf_chunks}


def decompressed_chunks(path: str, codec: str | None = None, cap: int | None = None) -> Iterator[bytes]:
    """The bytes of one (possibly compressed) log file, chunk by chunk; ``codec`` from the name when None."""
    codec = codec if codec is not None else codec_of(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise LogReadError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        if codec is None:
            yield from _plain_chunks(fh, path)
            return
        if cap is None:
            cap = max(MIN_CAP, MAX_RATIO * os.fstat(fh.fileno()).st_size)
        total = 0
        try:
            for chunk in _READERS[codec](fh, path):
                total += len(chunk)
                if total > cap:
                    raise LogReadError(f"{path}: expands beyond {cap} bytes (over {MAX_RATIO} times its size): "
                                       "taken for a decompression bomb, read no further")
                yield chunk
        except OSError as exc:
            raise LogReadError(f"{path}: cannot read: {exc.strerror}") from None


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
