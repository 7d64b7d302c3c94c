"""Integrity of the persisted statistics index: what makes a damaged, altered or half-written segment harmless.

**Checksum.** Every segment is sealed: the Arrow IPC file is followed by a 32-byte trailer, the XXH3-128 digest
of every byte before it, the length of those bytes and a magic tag (:func:`seal`). The digest covers the whole
IPC file — schema, the format mark in its metadata, record batches and the IPC footer with its block offsets —
so a flip anywhere in the file, in the digest or in the length is a mismatch, and a file cut short or written
by an earlier version (no trailer) is not verified either. A trailer rather than a field of the schema's
metadata (which would have to exclude itself and leave the IPC footer uncovered), a sidecar file (two files are
not replaced atomically together) or the file name (lost when a segment is copied or renamed). The digest is
checked before any byte is parsed (:func:`unseal`); then the table must pass Arrow's full validation and the
value checks (:func:`check_values`: bounds not inverted, counts within ``[0, num_rows]``, sizes not negative).

A digest that is not keyed proves the bytes are the ones a writer of this format wrote, not who wrote them:
it detects damage (disk, copy, a truncated upload, a tool that edits the file), not a forger who recomputes
it. What a row can do is bounded anyway: it is used only for the file whose path, size and instant it names.

**One writer per folder.** Writing a segment and compacting happen under an advisory lock on
``<index folder>/.lock`` (:class:`FolderLock`, ``fcntl.flock``); the writer first takes in the segments others
wrote since it loaded and stores only the rows they lack, so two concurrent builds do not persist the same files
twice. Readers take no lock: a segment appears by a rename, whole. Temporary files of a killed writer
(``.tmp-seg-*``) are never read (their names are not segment names) and are removed by the next writer that
holds the lock (:func:`remove_leftovers`). A table on object storage has no lock: each PUT is atomic, and rows
of one file in two segments (two writers at once) are kept once on load (:func:`drop_duplicate_rows`) and
once by the next compaction.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from hive_bridge.errors import HudiTableError
from hive_bridge.stats.contract import MAX, MAX_EXACT, MIN, MIN_EXACT, split_stat_name, stat_name
from hive_bridge.stats.entries import entry_keys

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory lock (writes stay atomic renames)
    fcntl = None  # type: ignore[assignment]

#: the trailer's last 8 bytes
SEAL_MAGIC = b"HBSEG1\x00\n"
#: digest (16 bytes) + length of the sealed bytes (8, little-endian) + magic (8)
SEAL_SIZE = 32
_ARROW_MAGIC = b"ARROW1"
LOCK_NAME = ".lock"
TMP_PREFIX = ".tmp-seg-"
#: how long a writer waits for another writer's lock before keeping its rows in memory (seconds)
LOCK_WAIT = 60.0


class SegmentRejected(HudiTableError):
    """A segment that must not be used: ``where`` it is and ``reason`` (``failed its checksum``, ...)."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"index segment {where} {reason}")
        self.where = where
        self.reason = reason


@dataclass(frozen=True)
class Discarded:
    """A segment discarded on load (deleted; its files' statistics read again from their sources)."""

    where: str
    reason: str


def _digest(data: pa.Buffer | bytes | memoryview) -> bytes:
    return bytes(xxhash.xxh3_128_digest(data))


def seal(ipc: bytes) -> bytes:
    """An Arrow IPC file's bytes followed by the trailer that verifies them."""
    return ipc + _digest(ipc) + len(ipc).to_bytes(8, "little") + SEAL_MAGIC


def unseal(data: pa.Buffer, where: str) -> pa.Buffer:
    """The IPC file inside a sealed segment (a slice: nothing copied); raises SegmentRejected unless the trailer is
    there and the digest and length match every byte before it."""
    size = data.size
    if size < SEAL_SIZE or data.slice(size - 8).to_pybytes() != SEAL_MAGIC:
        tail = data.slice(max(size - len(_ARROW_MAGIC), 0)).to_pybytes()
        if tail == _ARROW_MAGIC:
            raise SegmentRejected(where, "has no checksum (written by an earlier version): not trusted")
        raise SegmentRejected(where, "failed its checksum (no checksum trailer: cut short or overwritten)")
    trailer = data.slice(size - SEAL_SIZE).to_pybytes()
    body = data.slice(0, size - SEAL_SIZE)
    length = int.from_bytes(trailer[16:24], "little")
    if length != body.size:
        raise SegmentRejected(where, f"failed its checksum (length {body.size}, the trailer says {length})")
    if _digest(body) != trailer[:16]:
        raise SegmentRejected(where, "failed its checksum")
    return body


def check_values(segment: pa.Table, where: str) -> None:
    """Arrow's full validation (offsets, UTF-8, lengths) and the values a writer of the index never writes: a
    file's ``min`` above its ``max``, a negative row count or file size. Raises SegmentRejected.
    (``hive_bridge.stats.segments.validate_segment`` checks the layout and each count against ``num_rows``.)"""
    try:
        segment.validate(full=True)
    except (pa.ArrowException, ValueError) as exc:
        raise SegmentRejected(where, f"failed Arrow validation: {exc}") from None
    names = segment.column_names
    present = set(names)
    for column in ("num_rows", "file_size"):
        if column in present and pc.any(pc.less(segment.column(column), 0)).as_py():
            raise SegmentRejected(where, f"failed its checks: {column} below 0")
    for name in names:
        leaf, stat = split_stat_name(name)
        hi = stat_name(leaf, MAX)
        if stat != MIN or hi not in present:
            continue
        try:
            inverted = pc.any(pc.greater(segment.column(name), segment.column(hi))).as_py()
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue                            # a type without an order: nothing to compare
        if inverted:
            raise SegmentRejected(where, f"failed its checks: {leaf}::min above {leaf}::max")


def _inverted(lo: pa.ChunkedArray | pa.Array, hi: pa.ChunkedArray | pa.Array) -> pa.Array | None:
    """Where min > max (False where either is unknown or NaN); None for a type without an order."""
    try:
        out = pc.fill_null(pc.greater(lo, hi), False)
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def clear_inverted_bounds(rows: pa.Table) -> pa.Table:
    """``rows`` (from footers, log blocks or the metadata table) with bounds that prove nothing made unknown: a
    min above its max (a writer's damaged statistics) describes no value, so the file is kept, not judged by
    them. The index never stores such bounds (:func:`check_values` refuses a segment with them)."""
    names = set(rows.column_names)
    for name in rows.column_names:
        leaf, stat = split_stat_name(name)
        hi_name = stat_name(leaf, MAX)
        if stat != MIN or hi_name not in names:
            continue
        bad = _inverted(rows.column(name), rows.column(hi_name))
        if bad is None or not bad.true_count:
            continue
        for kind in (MIN, MAX, MIN_EXACT, MAX_EXACT):
            column = stat_name(leaf, kind)
            if column in names:
                at = rows.schema.get_field_index(column)
                values = rows.column(column)
                rows = rows.set_column(at, rows.schema.field(at),
                                       pc.if_else(bad, pa.scalar(None, values.type), values))
    return rows


def drop_duplicate_rows(segments: Sequence[tuple[str, pa.Table]]) -> tuple[list[tuple[str, pa.Table]], int]:
    """Segments (oldest first) without the rows whose file key (path, size, instant) a newer segment also holds
    (two writers that indexed the same files at once), and how many rows were dropped. One pass over the paths
    when no path is in two segments (the usual case)."""
    out = list(segments)
    if len(out) < 2:
        return out, 0
    paths = pa.chunked_array([c for _, seg in out for c in seg.column("path").chunks], pa.string())
    if pc.count_distinct(paths).as_py() == len(paths):
        return out, 0
    dropped = 0
    seen: pa.Array | None = None
    for k in range(len(out) - 1, -1, -1):
        name, seg = out[k]
        keys = entry_keys(seg.column("path"), seg.column("file_size"), seg.column("instant"))
        if seen is not None:
            dup = pc.is_in(keys, value_set=seen)
            if dup.true_count:
                dropped += dup.true_count
                seg, keys = seg.filter(pc.invert(dup)), keys.filter(pc.invert(dup))
                out[k] = (name, seg)
        seen = keys if seen is None else pa.concat_arrays([seen, keys])
    return out, dropped


class FolderLock:
    """The advisory lock of a local index folder (``flock`` on ``.lock``), held by one writer at a time:
    ``with FolderLock(folder) as held:`` waits up to ``wait`` seconds (``held`` False when another writer kept it
    that long; 0: do not wait). ``held`` is True without locking where there is nothing to lock (no ``fcntl``, a
    folder that cannot be created: the write that follows fails on its own and keeps its rows in memory)."""

    def __init__(self, folder: Path, wait: float = LOCK_WAIT) -> None:
        self.folder = folder
        self.wait = wait
        self._fd: int | None = None

    def __enter__(self) -> bool:
        if fcntl is None:
            return True
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return True
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(0.02)
            except OSError:  # a file system without flock: nothing to lock
                os.close(fd)
                return True

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)       # closing the descriptor releases the lock
            self._fd = None


def remove_leftovers(folder: Path) -> int:
    """Remove the temporary files of writers that were killed before renaming them (``.tmp-seg-*``); call with
    the folder's lock held (every writer writes its temporary file under it, so none is being written). Writers
    of earlier versions took no lock: removing a file one of them is writing makes its rename fail, and it then
    keeps its rows in memory. The number removed."""
    removed = 0
    try:
        names = [p for p in folder.iterdir() if p.name.startswith(TMP_PREFIX)]
    except OSError:
        return 0
    for p in names:
        try:
            p.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def discard_notices(discarded: Sequence[Discarded], reread: int) -> list[str]:
    """What to tell a user about segments discarded on load: one line per segment, and how many files'
    statistics were read again from their sources (footers, log blocks, the metadata table) in its place."""
    rebuilt = f"rebuilt the statistics of {reread} files from their footers, log blocks or the metadata table"
    if len(discarded) == 1:
        return [f"index segment {discarded[0].where} {discarded[0].reason}; discarded, never used for a verdict; "
                f"{rebuilt}"]
    lines = [f"index segment {d.where} {d.reason}; discarded, never used for a verdict" for d in discarded]
    return [*lines, f"{rebuilt} ({len(discarded)} index segments discarded)"] if lines else []


__all__ = ["Discarded", "FolderLock", "SegmentRejected", "check_values", "clear_inverted_bounds", "discard_notices",
           "drop_duplicate_rows", "remove_leftovers", "seal", "unseal"]
