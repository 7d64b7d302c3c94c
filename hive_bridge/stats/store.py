"""Where a table's index segments are kept, and how they are read, written and deleted there: the table's own
folder (`.hoodie/.hive_bridge/column_stats/`), or for a table on object storage that folder in the bucket and a
local cache folder (:mod:`hive_bridge.stats.segments`).

Every segment is verified before any of its values is used (:func:`hive_bridge.stats.segments.load_segment`);
one that fails is deleted and noted in :attr:`SegmentStore.discarded`, and the files it described are then
missing from the index, so their statistics are read again from their sources. Writers of a local folder take
its lock (:class:`~hive_bridge.stats.integrity.FolderLock`) and take in what other writers added first
(:meth:`SegmentStore.added_since`); see :mod:`hive_bridge.stats.integrity`.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

import pyarrow as pa

from hive_bridge.stats.integrity import (
    LOCK_NAME,
    TMP_PREFIX,
    Discarded,
    FolderLock,
    SegmentRejected,
    drop_duplicate_rows,
    remove_leftovers,
)
from hive_bridge.stats.segments import (
    INDEX_PARTS,
    SEGMENT_PREFIX,
    SEGMENT_SUFFIX,
    RemoteIndexFolder,
    read_segment,
    write_segment,
)
from hive_bridge.table.table import HudiTable

#: a segment as the index holds it: (name, rows)
Segment = tuple[str, pa.Table]


class SegmentStore:
    """The index segments of one table (see the module's docstring)."""

    def __init__(self, table: HudiTable) -> None:
        #: a table on object storage: its index folder there; `directory` is then the local cache folder used
        #: when the bucket is not writable
        self.remote = None if table.storage.is_local else RemoteIndexFolder(table.storage, table.base_path)
        self.directory = self.remote.cache_dir if self.remote is not None \
            else Path(table.base_path).joinpath(*INDEX_PARTS)
        #: segments discarded by this store (damaged, failing a check, or without a checksum), in order
        self.discarded: list[Discarded] = []
        #: rows dropped on load because a newer segment holds the same file key (two writers at once)
        self.duplicate_rows = 0

    def local_paths(self) -> list[Path]:
        """The segments in the local folder, by name (creation order)."""
        try:
            return sorted(p for p in self.directory.iterdir()
                          if p.name.startswith(SEGMENT_PREFIX) and p.name.endswith(SEGMENT_SUFFIX))
        except OSError:
            return []

    def read_all(self, list_paths: Callable[[], list[Path]]) -> tuple[list[Segment], int]:
        """Every verified segment (the bucket's, then the local folder's ``list_paths()``), oldest first, rows of a
        file key held by a newer segment too left out; and how many segments were discarded."""
        before = len(self.discarded)
        out: list[Segment] = []
        if self.remote is not None:
            remote = self.remote
            for name, _size in remote.segments():
                try:
                    seg = self._read(partial(remote.read, name), remote.where(name), partial(remote.delete, name))
                except FileNotFoundError:
                    continue
                if seg is not None:
                    out.append((name, seg))
        done: set[str] = set()
        paths = list_paths()
        for _ in range(3):      # listed again when a segment vanished: another writer compacted meanwhile
            vanished = False
            for path in paths:
                if path.name in done:
                    continue
                done.add(path.name)
                try:
                    seg = self._read(partial(read_segment, path), str(path), partial(_unlink, path))
                except FileNotFoundError:
                    vanished = True
                    continue
                if seg is not None:
                    out.append((path.name, seg))
            if not vanished:
                break
            paths = list_paths()
        out.sort(key=lambda s: s[0])
        self._remove_leftovers_if_idle()
        out, self.duplicate_rows = drop_duplicate_rows(out)
        return out, len(self.discarded) - before

    def _read(self, read: Callable[[], pa.Table], where: str, delete: Callable[[], None]) -> pa.Table | None:
        """One segment, or None when it must not be used (noted in `discarded`; deleted when it is damaged, kept
        when it could not be read at all). FileNotFoundError passes (the caller lists again)."""
        try:
            return read()
        except FileNotFoundError:
            raise
        except SegmentRejected as exc:
            self.discarded.append(Discarded(where, exc.reason))
            delete()
        except (OSError, pa.ArrowException) as exc:
            self.discarded.append(Discarded(where, f"could not be read ({exc}): not used"))
        return None

    def _remove_leftovers_if_idle(self) -> None:
        """Temporary files of killed writers, removed when no writer holds the lock (none is writing one)."""
        try:
            with os.scandir(self.directory) as entries:
                if not any(e.name.startswith(TMP_PREFIX) for e in entries):
                    return
        except OSError:
            return
        with FolderLock(self.directory, wait=0) as held:
            if held:
                remove_leftovers(self.directory)

    @contextlib.contextmanager
    def writing(self) -> Iterator[bool]:
        """Held around writing and compacting: the local folder's lock (False when another writer kept it longer
        than ``LOCK_WAIT``: then write nothing); temporary files of killed writers are removed once it is held.
        A table on object storage takes no lock (each PUT is atomic)."""
        if self.remote is not None:
            yield True
            return
        with FolderLock(self.directory) as held:
            if held:
                remove_leftovers(self.directory)
            yield held

    def added_since(self, known: set[str]) -> tuple[list[Segment], set[str]]:
        """With the lock held (local folder only): the verified segments other writers added that are not in
        ``known``, oldest first, and the names of ``known`` no longer in the folder (compacted by another)."""
        if self.remote is not None:
            return [], set()
        on_disk = {p.name: p for p in self.local_paths()}
        added: list[Segment] = []
        for name in sorted(set(on_disk) - known):
            path = on_disk[name]
            try:
                seg = self._read(partial(read_segment, path), str(path), partial(_unlink, path))
            except FileNotFoundError:
                continue
            if seg is not None:
                added.append((name, seg))
        return added, known - set(on_disk)

    def write(self, table: pa.Table) -> str | None:
        """Write one sealed segment atomically (a temporary file renamed into place; on object storage one PUT
        into the table, else — a bucket that refuses writes — the local cache folder); its name, or None when the
        folder is not writable."""
        # names sort in creation order (to the nanosecond; older names without them sort first within their
        # second), which makes the newest row of a path the one found first
        ns = time.time_ns()
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(ns // 10**9))
        name = f"{SEGMENT_PREFIX}{stamp}.{ns % 10**9:09d}-{uuid.uuid4().hex[:12]}{SEGMENT_SUFFIX}"
        if self.remote is not None and self.remote.write(name, table):
            return name
        tmp = self.directory / f".tmp-{name}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            write_segment(table, tmp)
            os.replace(tmp, self.directory / name)
            return name
        except OSError:
            _unlink(tmp)
            return None

    def delete(self, name: str) -> None:
        if self.remote is not None and name in self.remote.names:
            self.remote.delete(name)
        else:
            _unlink(self.directory / name)

    def clear(self) -> None:
        """Delete every segment (and leftover temporary file; the lock file stays: another writer may hold it)."""
        if self.remote is not None:
            for name, _ in self.remote.segments():
                self.remote.delete(name)
        if not self.directory.is_dir():
            return
        with FolderLock(self.directory) as _held:
            for p in self.directory.iterdir():
                if p.name != LOCK_NAME:
                    _unlink(p)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


__all__ = ["Segment", "SegmentStore"]
