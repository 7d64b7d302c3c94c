"""Inputs that would exhaust memory or never end: each is reported by name with what was wrong, and the next input
is still read. Every case runs `hive-bridge replay` in a child process whose address space is limited
(``RLIMIT_AS``, 1 GiB: well under what any of these inputs expands to) and which is killed if it does not end."""

from __future__ import annotations

import gzip
import os
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import cramjam
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from hive_bridge.workload.codecs import lzf_decompress
from tests.hive_bridge.workload.conftest import SHARED, json_lines

ROOT = Path(__file__).resolve().parents[3]
LIMIT = 1 << 30
#: a real event log of one application and one scan: the input read after each bad one
NEXT = SHARED / "spark-eventlogs" / "codecs" / "zstd" / "evlog" / "local-1795748411957.zstd"
START = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.8"}\n'
MIB = 1 << 20


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def replay_limited(*argv: str, timeout: int = 300) -> tuple[int, str, str]:
    """``hive-bridge replay ARGV`` in a child limited to :data:`LIMIT` bytes of address space."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "hive_bridge", "replay", *argv], env=env, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=_limited, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr


def _no_crash(err: str) -> None:
    assert "Traceback" not in err and "MemoryError" not in err, err[-3000:]


def _next_read(summary: dict[str, Any]) -> None:
    """The input after the bad one was read whole: its one scan is counted (no table for it here)."""
    (count,) = [c for c in summary["inputs_read"] if c["input"] == str(NEXT)]
    assert count["lines"] > 0 and count["filter_lines"] == 1 and "unreadable" not in count
    assert summary["scans"] == 1


# ------------------------------------------------------------------------------------------------ bombs
def _zstd(path: Path) -> int:
    """5 GiB of one event log line, in one frame (the file: about 160 KiB)."""
    spaces = b" " * (64 * MIB)
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=3).stream_writer(fh) as w:
        w.write(START)
        for _ in range(80):
            w.write(spaces)
    return 80 * 64 * MIB


def _gzip(path: Path) -> int:
    """2 GiB: 32 gzip members of 64 MiB (the file: about 2 MiB)."""
    member = gzip.compress(b" " * (64 * MIB), compresslevel=9)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(START))
        for _ in range(32):
            fh.write(member)
    return 32 * 64 * MIB


def _lz4(path: Path) -> int:
    """1.02 GiB in lz4-java blocks of 8 MiB (LZ4's own ratio tops out near 255: the file is about 4 MiB)."""
    def block(raw: bytes) -> bytes:
        packed = bytes(cramjam.lz4.compress_block(raw, store_size=False))
        return b"LZ4Block" + struct.pack("<Biii", 0x20 | 10, len(packed), len(raw), 0) + packed

    spaces = block(b" " * (8 * MIB))
    with open(path, "wb") as fh:
        fh.write(block(START))
        for _ in range(130):
            fh.write(spaces)
    return 130 * 8 * MIB


def _snappy(path: Path) -> int:
    """1.02 GiB in snappy-java blocks of 4 MiB (snappy's ratio tops out near 21: the file is about 48 MiB)."""
    def block(raw: bytes) -> bytes:
        packed = bytes(cramjam.snappy.compress_raw(raw))
        return struct.pack(">i", len(packed)) + packed

    spaces = block(b" " * (4 * MIB))
    with open(path, "wb") as fh:
        fh.write(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + block(START))
        for _ in range(260):
            fh.write(spaces)
    return 260 * 4 * MIB


def _lzf(path: Path) -> int:
    """1 GiB in lzf chunks of 65,473 spaces: one literal, then back references of 264 bytes at distance 1
    (LZF's ratio tops out near 88: the file is about 12 MiB)."""
    payload, n = b"\x00 ", 1
    while n + 264 <= 0xFFFF:
        payload += bytes([7 << 5, 255, 0])
        n += 264
    chunk = b"ZV\x01" + struct.pack(">HH", len(payload), n) + payload
    count = (1 << 30) // n + 1
    with open(path, "wb") as fh:
        fh.write(b"ZV\x00" + struct.pack(">H", len(START)) + START)
        for _ in range(count):
            fh.write(chunk)
    return count * n


BOMBS = {"zstd": _zstd, "gz": _gzip, "lz4": _lz4, "snappy": _snappy, "lzf": _lzf}


@pytest.mark.parametrize("codec", sorted(BOMBS))
def test_bomb_in_every_codec_is_reported_and_the_next_log_read(codec: str, tmp_path: Path) -> None:
    """Beyond 400 times its compressed size (zstd, gzip: a real bomb) the stream is read no further; lz4,
    snappy and lzf cannot expand that much, so they are read through, a bounded piece at a time, and the
    one line that never ends is skipped. Either way: where and what, and the next log is read."""
    bomb = tmp_path / f"local-1700000000000.{codec}"
    expanded = BOMBS[codec](bomb)
    assert expanded > LIMIT
    code, out, err = replay_limited("--json", str(bomb), str(NEXT))
    _no_crash(err)
    assert code == 1
    assert json_lines(out)[0] == []          # no table for the next log: nothing planned
    summary = json_lines(out)[1]
    if codec in ("zstd", "gz"):
        assert f"error: {bomb}:" in err and "taken for a decompression bomb, read no further" in err
        (count,) = [c for c in summary["inputs_read"] if c["input"] == str(bomb)]
        assert "decompression bomb" in count["unreadable"]
    else:
        assert f"error: {bomb}:2: a line of {expanded} bytes, over the limit" in err
    _next_read(summary)


# ------------------------------------------------------------------------------------------------ text inputs
def _table(path: Path) -> Path:
    import pyarrow as pa

    from hive_bridge.testing.writer import HudiWriter

    HudiWriter(path, rows_per_file=10).insert(pa.table({"id": pa.array(range(40), pa.int64())}))
    return path


def test_two_hundred_megabyte_line_is_skipped_and_reading_goes_on(tmp_path: Path) -> None:
    """A text log's line over 8 MiB is skipped (never held) and reported with its file and line; the lines
    after it and the next input are read."""
    table = _table(tmp_path / "t")
    log = tmp_path / "hive.log"
    with open(log, "wb") as fh:
        fh.write(b"2024-01-01 10:00:00 INFO x: ORC pushdown predicate: leaf-(EQUALS id 5)\n")
        block = b"x" * MIB
        for _ in range(200):
            fh.write(block)
        fh.write(b"\n2024-01-01 10:00:01 INFO x: ORC pushdown predicate: leaf-(LESS_THAN id 3)\n")
    filters = tmp_path / "filters.txt"
    filters.write_text("id > 30\n")
    code, out, err = replay_limited("--table", str(table), "--json", str(log), str(filters))
    _no_crash(err)
    assert code == 1
    assert f"error: {log}:2: a line of {200 * MIB} bytes, over the limit of 8388608 bytes: skipped" in err
    rows, summary = json_lines(out)
    assert summary["filter_lines"] == 3 and summary["failed_lines"] == 1
    assert [r["filter"] for r in rows] == ["leaf-(EQUALS id 5)", "leaf-(LESS_THAN id 3)", "id > 30"]
    assert "2 inputs, 4 lines read: 3 holding filters, 1 failed, 0 not filters" in err


@pytest.mark.parametrize("workload", [False, True])
def test_dev_zero_and_a_fifo_are_not_read_and_the_next_input_is(tmp_path: Path, workload: bool) -> None:
    """A device and a FIFO with no writer (opening it would block for ever): not a regular file, not read;
    the file of filters after them is. The child is killed after 120 s if it hangs (it must not)."""
    table = _table(tmp_path / "t")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    filters = tmp_path / "filters.txt"
    filters.write_text("id = 5\n")
    extra = ["--html", str(tmp_path / "r.html")] if workload else []
    code, out, err = replay_limited("--table", str(table), "--json", *extra, "/dev/zero", str(fifo), str(filters),
                                    timeout=120)
    _no_crash(err)
    assert code == 1
    assert "error: /dev/zero: not a regular file (a device): not read" in err
    assert f"error: {fifo}: not a regular file (a FIFO (named pipe)): not read" in err
    rows, summary = json_lines(out)   # both replays end with the summary object
    assert summary["inputs_unreadable"] == 2 and summary["filter_lines"] == 1
    assert [r["filter"] for r in rows] == ["id = 5"]


# ------------------------------------------------------------------------------------------------ lzf
def _lzf_reference(data: bytes, size: int) -> bytes:
    """LZF decoding byte by byte, as liblzf does it."""
    out = bytearray()
    i = 0
    while i < len(data):
        ctrl = data[i]
        i += 1
        if ctrl < 32:
            out += data[i:i + ctrl + 1]
            i += ctrl + 1
            continue
        length = ctrl >> 5
        if length == 7:
            length += data[i]
            i += 1
        back = ((ctrl & 0x1F) << 8) + data[i] + 1
        i += 1
        for _ in range(length + 2):
            out.append(out[-back])
    assert len(out) == size
    return bytes(out)


@st.composite
def _lzf_streams(draw: st.DrawFn) -> tuple[bytes, int]:
    data = bytearray()
    size = 0
    for _ in range(draw(st.integers(1, 12))):
        if size == 0 or draw(st.booleans()):
            lit = draw(st.binary(min_size=1, max_size=32))
            data += bytes([len(lit) - 1]) + lit
            size += len(lit)
        else:
            back = draw(st.integers(1, min(size, 8191)))
            length = draw(st.integers(3, 264))
            code = length - 2
            if code < 7:
                data += bytes([(code << 5) | ((back - 1) >> 8), (back - 1) & 0xFF])
            else:
                data += bytes([(7 << 5) | ((back - 1) >> 8), code - 7, (back - 1) & 0xFF])
            size += length
    return bytes(data), size


@settings(max_examples=300, deadline=None)
@given(_lzf_streams())
def test_lzf_overlapping_copies_match_byte_by_byte_decoding(stream: tuple[bytes, int]) -> None:
    data, size = stream
    assert lzf_decompress(data, size) == _lzf_reference(data, size)


def test_gzip_truncated_and_damaged(tmp_path: Path) -> None:
    from hive_bridge.workload.codecs import LogReadError, decompressed_chunks

    whole = gzip.compress(START * 1000)
    cut = tmp_path / "cut.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(LogReadError, match="truncated gzip stream"):
        list(decompressed_chunks(str(cut)))
    bad = tmp_path / "bad.gz"
    bad.write_bytes(whole[:10] + b"\xff" * 40)
    with pytest.raises(LogReadError, match="not a readable gzip stream"):
        list(decompressed_chunks(str(bad)))
    ok = tmp_path / "ok.log"       # told by its first bytes, not by its name
    ok.write_bytes(whole + gzip.compress(b"second member\n"))
    assert b"".join(decompressed_chunks(str(ok))) == zlib.decompress(whole, wbits=31) + b"second member\n"
