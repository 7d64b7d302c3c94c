"""Where the column-statistics index of a table on object storage is kept.

A local table keeps its index in its own folder (`.hoodie/.hive_bridge/column_stats/`, see
:mod:`hive_bridge.stats.index`). A table on object storage keeps it in the same place inside the table when the
bucket lets us write (one PUT per segment: an object appears whole or not at all, so no temporary name is
needed); when it does not (read-only buckets are normal), the segments go to a local cache folder,
``<cache>/index/<hash of the table URI>/column_stats/`` (:func:`~hive_bridge.storage.core.cache_root`). Both
places are read on load: every row is keyed by its file's path, size and instant, so rows from either place
are used only for the very file they describe, whatever instant the table is at.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hive_bridge.layout.properties import HOODIE_DIR
from hive_bridge.storage.core import Storage, cache_root

INDEX_PARTS = (HOODIE_DIR, ".hive_bridge", "column_stats")
SEGMENT_PREFIX = "seg-"
SEGMENT_SUFFIX = ".arrow"


def local_cache_folder(storage: Storage) -> Path:
    """The local folder holding the index of a table on object storage whose bucket is not writable."""
    return cache_root().joinpath("index", storage.cache_key(), "column_stats")


def write_segment_to(sink: pa.NativeFile, table: pa.Table) -> None:
    """The index segment format: an Arrow IPC file with lz4-compressed buffers."""
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)


def segment_bytes(table: pa.Table) -> bytes:
    """One index segment as bytes (for object storage: one PUT)."""
    sink = pa.BufferOutputStream()
    write_segment_to(sink, table)
    return bytes(sink.getvalue().to_pybytes())


class RemoteIndexFolder:
    """The index folder inside a table on object storage: segments listed with one request, read whole with
    one HEAD and one GET each, written with one PUT; `writable` turns False at the first
    refused write (then the caller keeps segments in `cache_dir`)."""

    def __init__(self, storage: Storage, base_path: str) -> None:
        self.storage = storage
        self.location = storage.join(base_path, *INDEX_PARTS)
        self.cache_dir = local_cache_folder(storage)
        self.writable = True
        #: why writing into the table was given up (None while it works)
        self.write_problem: str | None = None
        #: names of the segments held in the table (vs in the local cache folder)
        self.names: set[str] = set()

    def segments(self) -> list[tuple[str, int | None]]:
        """(name, size) of every segment in the table's index folder, by name (creation order)."""
        try:
            entries = self.storage.list_dir(self.location)
        except OSError:
            return []
        return sorted((e.name, e.size) for e in entries
                      if not e.is_dir and e.name.startswith(SEGMENT_PREFIX) and e.name.endswith(SEGMENT_SUFFIX))

    def read(self, name: str) -> pa.Table:
        table = self.storage.read_ipc(f"{self.location}/{name}")
        self.names.add(name)
        return table

    def write(self, name: str, table: pa.Table) -> bool:
        """Write one segment into the table; False (and `writable` off) when the bucket refuses it."""
        if not self.writable:
            return False
        try:
            self.storage.write_bytes(f"{self.location}/{name}", segment_bytes(table))
        except OSError as exc:
            self.writable = False
            self.write_problem = str(exc)
            return False
        self.names.add(name)
        return True

    def delete(self, name: str) -> None:
        try:
            self.storage.delete(f"{self.location}/{name}")
        except OSError:
            pass
        self.names.discard(name)

    def where(self, name: str) -> str:
        return f"{self.location}/{name}"


__all__ = ["RemoteIndexFolder", "local_cache_folder", "segment_bytes", "write_segment_to"]
