"""Merge-on-read slices as parquet files Spark's parquet reader can read: hudi-rs merges a kept slice's base file
with its log files (or reads a base file of another format), the rows are conformed to the relation's data schema
and written once to a cache folder, named by the slice's identity (table, file group, base file, every log file
with its size; for a state read by time travel, the instant the merge stops at: :func:`slice_key`): a slice that
gains a log file, or is compacted, is another file, and a slice merged as of an earlier instant is never read for
another instant or for the latest state. Only the slices a scan keeps are merged, so a selective query on a large
table merges a few slices, once.

The cache is bounded (``HIVE_BRIDGE_MERGED_CACHE_MB``, :mod:`hive_bridge.config`): after a merge that takes it
over the bound, the least recently used files are deleted, except the files a scan may still be reading (the
caller's ``in_use``: the file index's recent scans of the relations it keeps). :func:`drop_stale` deletes a
table's files of slices that are no longer in its latest state (files merged as of earlier instants too, unless a
scan may still read them). A deleted file is merged again by the next scan that keeps its slice. The merges and
writes are :mod:`hive_bridge.spark.merge_job`'s (in the driver or by a Spark job; in local mode only: on a
cluster, merged slices go to the session's merged-slice store). One cache folder serves one driver process at a
time (set ``HIVE_BRIDGE_CACHE`` per driver): another process's scans in flight are not known here."""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa

from hive_bridge import config
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.table.table import HudiTable

SUFFIX = ".parquet"


def merged_dir() -> Path:
    return config.settings().cache_root / "merged"


def table_dir(table: HudiTable, root: Path | None = None) -> Path:
    """The folder of one table's merged slices (named by a hash of the table's location)."""
    return (root or merged_dir()) / hashlib.sha256(str(table.base_path).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=64)
def _schema_text(schema: pa.Schema) -> str:
    return str(schema.to_string())


def slice_key(table: HudiTable, s: FileSlice, schema: pa.Schema, as_of: str | None = None) -> str:
    """A merged slice's identity: the table, the file group, the base file (size, mtime), every log file (size),
    the schema it is written in, and ``as_of``, the instant time the merge reads log blocks up to (time travel,
    :func:`hive_bridge.layout.asof.merge_bound`; None: every completed block). A version-6 log file holds the
    blocks of later delta commits too, with the same name and size at any as-of time: a slice merged as of one
    instant is another file than the same slice merged as of another or for the latest state."""
    h = hashlib.sha256()
    base = s.base_file
    parts = [str(table.base_path), s.partition_path, s.file_id, s.base_instant,
             f"{base.path}:{base.size}:{base.mtime}" if base is not None else "-",
             *(f"{lf.path}:{lf.size}" for lf in s.log_files), _schema_text(schema)]
    if as_of is not None:  # the latest state's keys stay what they were
        parts.append(f"as-of:{as_of}")
    h.update("\0".join(parts).encode())
    return h.hexdigest()[:32]


class MergedCache:
    """The merged files of this process's cache folder: their sizes and last use, the bound, eviction."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: path -> (size, last use: time.time()); None until the folder is first scanned
        self._files: dict[str, tuple[int, float]] | None = None
        self._root: Path | None = None
        self._in_use: Callable[[], set[str]] = set

    def set_in_use(self, in_use: Callable[[], set[str]]) -> None:
        """Who says which files scans may still read (never evicted): the file index's planner."""
        self._in_use = in_use

    def _index(self, root: Path) -> dict[str, tuple[int, float]]:
        """The folder's files (scanned once per process and folder; kept up to date by this process)."""
        if self._files is None or self._root != root:
            files: dict[str, tuple[int, float]] = {}
            if root.is_dir():
                for sub in os.scandir(root):
                    # a table's folder, or a file of a cache written before files went in table folders
                    entries = os.scandir(sub.path) if sub.is_dir() else [sub]
                    for entry in entries:
                        if entry.name.endswith(SUFFIX):
                            st = entry.stat()
                            files[entry.path] = (st.st_size, st.st_mtime)
            self._files, self._root = files, root
        return self._files

    def total_bytes(self) -> int:
        with self._lock:
            return sum(size for size, _ in self._index(merged_dir()).values())

    def record(self, path: str, size: int) -> None:
        """A file of the folder was written or used now (by this process or by Spark's executors for it)."""
        with self._lock:
            self._index(merged_dir())[path] = (size, time.time())

    def in_use(self) -> set[str]:
        """The files scans may still read (the caller's ``in_use``)."""
        return set(self._in_use())

    def evict(self, limit_bytes: int | None = None, keep: Iterable[str] = ()) -> list[str]:
        """Delete the least recently used files not in use (nor in ``keep``) until the cache holds at most
        ``limit_bytes`` (the setting by default); the deleted paths."""
        limit = config.settings().merged_cache_bytes if limit_bytes is None else limit_bytes
        root = merged_dir()
        with self._lock:
            files = self._index(root)
            total = sum(size for size, _ in files.values())
            if total <= limit:
                return []
        deleted: list[str] = []
        with self._lock:
            in_use = self._in_use() | set(keep)
            files = self._index(root)
            for path, (size, _) in sorted(files.items(), key=lambda kv: kv[1][1]):
                if total <= limit:
                    break
                if path in in_use:
                    continue
                _unlink(path)
                del files[path]
                total -= size
                deleted.append(path)
        return deleted

    def drop_stale(self, table: HudiTable, live: Iterable[tuple[FileSlice, pa.Schema]]) -> list[str]:
        """Delete ``table``'s merged files that belong to none of the ``live`` slices (the latest state's, with
        the schema each is read in) and that no scan may still read; the deleted paths."""
        root = merged_dir()
        folder = table_dir(table, root)
        if not folder.is_dir():
            return []
        keep = {str(folder / f"{slice_key(table, s, schema)}{SUFFIX}") for s, schema in live}
        deleted: list[str] = []
        with self._lock:
            in_use = self._in_use()
            files = self._index(root)
            for entry in os.scandir(folder):
                if entry.name.endswith(SUFFIX) and entry.path not in keep and entry.path not in in_use:
                    _unlink(entry.path)
                    files.pop(entry.path, None)
                    deleted.append(entry.path)
        return deleted

    def clear(self) -> None:
        """Forget what this process knows of the folder (it is scanned again at next use)."""
        with self._lock:
            self._files = None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


#: the process's merged-slice cache
CACHE = MergedCache()
config.register_cache("spark.merged_cache: merged-slice files known", CACHE.clear)

