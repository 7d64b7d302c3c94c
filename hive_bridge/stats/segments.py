"""Segments of the persisted statistics index: Arrow IPC files sealed with a checksum of every byte
(:mod:`hive_bridge.stats.integrity`), written, read, verified and normalized to the leaves a query needs; kept inside the table, or (for a table on object storage) in a local cache folder
mirrored to the table's own `.hoodie/.hive_bridge/` folder.

A local table keeps its index in its own folder (`.hoodie/.hive_bridge/column_stats/`). A table on object storage
keeps it in the same place inside the table when the bucket lets us write (one PUT per segment: an object appears
whole or not at all, so no temporary name is needed); when it does not (read-only buckets are normal), the
segments go to a local cache folder, ``<cache>/index/<hash of the table URI>/column_stats/``
(:func:`~hive_bridge.storage.core.cache_root`). Both places are read on load: every row is keyed by its file's
path, size and instant, so rows from either place are used only for the very file they describe.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.parquet_footer import StatsLeaf
from hive_bridge.layout.properties import HOODIE_DIR
from hive_bridge.stats.contract import (
    BOUND_STATS,
    MAX,
    MAX_EXACT,
    MIN,
    MIN_EXACT,
    NAN_COUNT,
    NULL_COUNT,
    SEP,
    STAT_SUFFIXES,
    has_nan_count,
    split_stat_name,
    stat_kinds,
    stat_name,
)
from hive_bridge.stats.integrity import SegmentRejected, check_values, seal, unseal
from hive_bridge.stats.rows import (
    FORMAT_KEY,
    FORMAT_VERSION,
    KEY_FIELDS,
    READABLE_FORMATS,
    order_preserving_cast,
    stats_schema,
)
from hive_bridge.storage.core import Storage, cache_root

#: rewrite all segments into one when there are more than this many
MAX_SEGMENTS = 16
INDEX_PARTS = (HOODIE_DIR, ".hive_bridge", "column_stats")
SEGMENT_PREFIX = "seg-"
SEGMENT_SUFFIX = ".arrow"


def write_segment(table: pa.Table, path: Path) -> None:
    """Write one index segment (sealed Arrow IPC file, lz4-compressed buffers) to a local file."""
    with open(path, "wb") as sink:
        sink.write(segment_bytes(table))


def read_segment(path: Path) -> pa.Table:
    """Read one local index segment, verified (:func:`load_segment`); raises SegmentRejected when it must not be
    used, FileNotFoundError when it is gone (compacted away by another writer)."""
    with pa.memory_map(str(path), "r") as source:
        return load_segment(source.read_buffer(), str(path))


def load_segment(data: pa.Buffer, where: str) -> pa.Table:
    """An index segment from its bytes, used only when every check passes, in this order: the checksum of every
    byte (before anything is parsed), the Arrow IPC file, Arrow's full validation, the layout
    (:func:`validate_segment`) and the values (no bound above its max, no count out of range). Raises
    SegmentRejected (a HudiTableError) saying which failed; no pyarrow error escapes."""
    body = unseal(data, where)
    try:
        segment = pa.ipc.open_file(pa.BufferReader(body)).read_all()
    except (pa.ArrowException, ValueError, OSError, IndexError) as exc:
        raise SegmentRejected(where, f"is not a readable Arrow IPC file: {exc}") from None
    check_values(segment, where)
    try:
        validate_segment(segment, where)
    except SegmentRejected:
        raise
    except HudiTableError as exc:
        raise SegmentRejected(where, f"failed its checks: {str(exc).removeprefix(where + ': ')}") from None
    except (pa.ArrowException, ValueError, TypeError, KeyError) as exc:
        raise SegmentRejected(where, f"failed its checks: {exc}") from None
    return segment

# --------------------------------------------------------------- segments
def conform_segment(segment: pa.Table, target: Sequence[StatsLeaf]) -> pa.Table:
    """A persisted segment with exactly the key columns and `target`'s statistics columns.

    A column the segment lacks was absent from every file of that segment (segments carry the union of
    their files' columns), so its null count is the row count; a type that cannot be cast is unknown.
    """
    n = segment.num_rows
    cols: list[pa.Array | pa.ChunkedArray] = [segment.column(f.name) for f in KEY_FIELDS]
    names = set(segment.column_names)
    num_rows = segment.column("num_rows")
    for leaf in target:
        mn, mx = stat_name(leaf.name, MIN), stat_name(leaf.name, MAX)
        if mn in names:
            lo, hi = segment.column(mn), segment.column(mx)
            lo_exact, hi_exact = segment.column(stat_name(leaf.name, MIN_EXACT)), segment.column(stat_name(leaf.name, MAX_EXACT))
            if lo.type != leaf.type:
                try:
                    if not order_preserving_cast(lo.type, leaf.type):
                        raise pa.ArrowInvalid(f"{lo.type} bounds are not {leaf.type} bounds")
                    lo = pc.cast(lo, leaf.type, safe=True)
                    hi = pc.cast(hi, leaf.type, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                    lo = hi = pa.nulls(n, leaf.type)
                    lo_exact = hi_exact = pa.nulls(n, pa.bool_())
            cols += [lo, hi, segment.column(stat_name(leaf.name, NULL_COUNT)), lo_exact, hi_exact]
            if has_nan_count(leaf.type):
                own = segment.schema.field(mn).type
                nan = stat_name(leaf.name, NAN_COUNT)
                if nan in names:
                    cols.append(segment.column(nan))
                elif pa.types.is_integer(own) or pa.types.is_decimal(own):
                    cols.append(pa.array(np.zeros(n, dtype=np.int64)))  # values of such a type are never NaN
                else:
                    cols.append(pa.nulls(n, pa.int64()))   # a segment of format 2: unknown
        else:
            cols += [pa.nulls(n, leaf.type), pa.nulls(n, leaf.type), num_rows,
                     pa.nulls(n, pa.bool_()), pa.nulls(n, pa.bool_())]
            if has_nan_count(leaf.type):  # absent from the files: no NaN (unknown where the file was unreadable)
                cols.append(pc.if_else(pc.is_valid(num_rows), 0, pa.scalar(None, pa.int64())))
    return pa.Table.from_arrays(cols, schema=stats_schema(target, with_has_log_files=False))


def union_leaves(segments: Sequence[pa.Table], target: Sequence[StatsLeaf]) -> list[StatsLeaf]:
    """Target leaves first (their types win), then every other leaf any segment has (first type seen)."""
    out = list(target)
    seen = {leaf.name for leaf in target}
    for seg in segments:
        for f in seg.schema:
            name, stat = split_stat_name(f.name)
            if stat == MIN:
                if name not in seen:
                    seen.add(name)
                    out.append(StatsLeaf(name, f.type))
    return out


def validate_segment(segment: pa.Table, where: str) -> None:
    """Raise HudiTableError unless `segment` looks like an index segment this code wrote."""
    meta = segment.schema.metadata or {}
    version = meta.get(FORMAT_KEY)
    if version not in READABLE_FORMATS:
        raise HudiTableError(f"{where}: not a column-statistics segment of format "
                             f"{' or '.join(v.decode() for v in READABLE_FORMATS)}")
    for f in KEY_FIELDS:
        idx = segment.schema.get_field_index(f.name)
        if idx < 0 or segment.schema.field(idx).type != f.type:
            raise HudiTableError(f"{where}: column {f.name} missing or of the wrong type")
    for f in KEY_FIELDS[:4]:
        if segment.column(f.name).null_count:
            raise HudiTableError(f"{where}: column {f.name} has nulls")
    by_leaf: dict[str, set[str]] = {}
    for name in segment.column_names:
        if SEP in name:  # any statistics-looking name: an unknown kind is refused, not ignored
            leaf, _, kind = name.rpartition(SEP)
            if kind not in STAT_SUFFIXES:
                raise HudiTableError(f"{where}: unknown statistics column {name}")
            by_leaf.setdefault(leaf, set()).add(kind)
    rows = segment.column("num_rows")
    for leaf, kinds in by_leaf.items():
        if MIN not in kinds:
            raise HudiTableError(f"{where}: statistics of {leaf} are incomplete")
        own = segment.schema.field(stat_name(leaf, MIN)).type
        expected = BOUND_STATS if version != FORMAT_VERSION else stat_kinds(own)
        if kinds != set(expected):
            raise HudiTableError(f"{where}: statistics of {leaf} are incomplete")
        for kind, typ in ((NULL_COUNT, pa.int64()), (MIN_EXACT, pa.bool_()), (MAX_EXACT, pa.bool_()),
                          (NAN_COUNT, pa.int64())):
            if kind in kinds and segment.schema.field(stat_name(leaf, kind)).type != typ:
                raise HudiTableError(f"{where}: {leaf}::{kind} has the wrong type")
        for kind in (NULL_COUNT, NAN_COUNT):
            if kind not in kinds:
                continue
            counts = segment.column(stat_name(leaf, kind))
            bad = pc.any(pc.or_(pc.less(counts, 0), pc.greater(counts, rows))).as_py()
            if bad:
                raise HudiTableError(f"{where}: {leaf}::{kind} outside [0, num_rows]")


def local_cache_folder(storage: Storage) -> Path:
    """The local folder holding the index of a table on object storage whose bucket is not writable."""
    return cache_root().joinpath("index", storage.cache_key(), "column_stats")


def write_segment_to(sink: pa.NativeFile, table: pa.Table) -> None:
    """The index segment format: an Arrow IPC file with lz4-compressed buffers."""
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)


def segment_bytes(table: pa.Table) -> bytes:
    """One index segment as bytes: the Arrow IPC file sealed with its checksum
    (:mod:`hive_bridge.stats.integrity`); for object storage one PUT."""
    sink = pa.BufferOutputStream()
    write_segment_to(sink, table)
    return seal(sink.getvalue().to_pybytes())


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
        """One segment, read whole (one GET) and verified (:func:`load_segment`)."""
        location = f"{self.location}/{name}"
        table = load_segment(pa.py_buffer(self.storage.read_bytes(location)), location)
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


__all__ = ["RemoteIndexFolder", "load_segment", "local_cache_folder", "read_segment", "segment_bytes", "write_segment",
           "write_segment_to"]
