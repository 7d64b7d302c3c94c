"""Planning state kept in the process between queries of the same table.

A user queries one table many times: a notebook re-runs cells, a dashboard refreshes, the ``hudi-hive`` data
source plans every scan of a DataFrame. Each planning used to open the table, list every partition, look up every
file's statistics and prepare them for the evaluator again. A :class:`TableSnapshot` keeps all of that (the
opened table, its latest file slices, the statistics index in memory and one prepared :class:`Pruner` per query
type) for as long as the table's timeline does not change:

- **unchanged** -- the timeline folder lists the same instant files (names, sizes, modification times) and
  ``hoodie.properties`` is the same: the query re-uses the snapshot; planning costs one listing of the timeline
  folder plus the evaluation itself;
- **changed** (a commit, rollback, replacecommit, clean, compaction, a property change) -- the table is opened
  again and listed again; the statistics index follows it (:meth:`ColumnStatsIndex.follow`): files already
  seen keep their statistics, only the files of the new instants are read.

The state is never stale: every query compares the timeline first, and the timeline is read *before* the table is
opened again, so a commit landing meanwhile makes the next query open it again rather than be missed.
``tests/hive_bridge/pruning/test_snapshot.py`` writes commits, rollbacks, replacecommits, deletes and a compaction
between queries and compares every planning with one from a fresh open.

Snapshots are shared by threads (two queries at once): a snapshot is never modified once made, apart from
pruners prepared on first use (under a lock).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

import pyarrow as pa

import sarg
from hive_bridge import config
from hive_bridge.layout.asof import AsOf
from hive_bridge.layout.fsview import FileSlice, gc_paused, get_partition_path
from hive_bridge.pruning.pruner import (
    SNAPSHOT,
    ListStatusResult,
    Pruner,
    check_query_type,
    filter_columns,
    plan_slices,
)
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable

__all__ = ["SnapshotCache", "TableSnapshot", "default_cache", "timeline_state"]


def _collector_paused() -> AbstractContextManager[None]:
    """No cyclic garbage collection while a snapshot is built or followed. A process holding a 1,000,000-file
    snapshot has millions of long-lived tuples; building the next one allocates enough to trigger full
    collections that scan them all, each taking longer than the rest of the work (measured: 1.0 s of a 1.6 s
    re-planning). On exit what was built goes straight to the oldest generation (``gc_paused(to_oldest=True)``):
    a snapshot's objects live as long as it does, and the young collection that would otherwise scan them all
    right after the pause (30 ms a query at 100,000 files) is skipped; cyclic garbage among them is collected
    by the next full collection."""
    return gc_paused(to_oldest=True)


def timeline_state(table: HudiTable) -> tuple[Any, ...]:
    """What the table's state is a function of: the files of ``.hoodie/`` and of the timeline folder (names,
    sizes, modification times). One listing (two for table version 8+)."""
    storage = table.storage
    props = table.properties
    hoodie = storage.join(table.base_path, ".hoodie")
    folders = [hoodie]
    timeline = props.timeline_location
    if timeline.rstrip("/") != hoodie.rstrip("/"):
        folders.append(timeline)
    out: list[Any] = []
    for folder in folders:
        try:
            entries = storage.list_dir(folder)
        except FileNotFoundError:
            out.append((folder, None))
            continue
        out.append((folder, tuple(sorted((e.name, e.size, e.mtime) for e in entries if not e.is_dir))))
    return tuple(out)


_WRITES = frozenset({"commit", "deltacommit", "replacecommit"})
#: pending actions that do not change any latest slice until they complete (or are rolled back)
_QUIET_PENDING = frozenset({"commit", "deltacommit", "replacecommit", "clean", "rollback"})


def touched_partitions(old: HudiTable, new: HudiTable) -> set[str] | None:
    """The partitions whose files or slices may differ between two openings of a table: those the instants
    completed in between wrote, replaced, cleaned or rolled back, from their commit metadata. None when that
    cannot be told (a changed ``hoodie.properties``, an instant no longer there, archival, a pending compaction
    appearing or going, an action or metadata not understood): then everything is listed again."""
    if old.properties.raw != new.properties.raw:
        return None
    old_done = {(i.timestamp, i.action) for i in old.timeline.completed}
    if not old_done <= {(i.timestamp, i.action) for i in new.timeline.completed}:
        return None
    ow, nw = old.timeline.completed_writes, new.timeline.completed_writes
    if ow and (not nw or nw[0].timestamp != ow[0].timestamp):
        return None                             # archival moved the start of the active timeline
    old_pending = {(i.timestamp, i.action) for i in old.timeline.pending}
    new_pending = {(i.timestamp, i.action) for i in new.timeline.pending}
    for _, action in old_pending ^ new_pending:
        if action not in _QUIET_PENDING:
            return None                         # e.g. a compaction scheduled: logs change slices before it runs
    touched: set[str] = set()
    for inst in new.timeline.completed:
        if (inst.timestamp, inst.action) in old_done:
            continue
        try:
            meta = new.timeline.read_metadata(inst)
        except Exception:  # unreadable or not understood: list everything
            return None
        if inst.action in _WRITES:
            stats = meta.get("partitionToWriteStats")
            replaced = meta.get("partitionToReplaceFileIds") or {}
            if not isinstance(stats, dict) or not isinstance(replaced, dict):
                return None
            touched |= set(stats) | set(replaced)
        elif inst.action in ("clean", "rollback"):
            parts = meta.get("partitionMetadata")
            if not isinstance(parts, dict):
                return None
            touched |= set(parts)
        else:
            return None
    return {str(p).strip("/") for p in touched}


#: :attr:`TableSnapshot.origin` of a snapshot made for one query
ONE_QUERY = "one query"


def _row_offsets(partitions: Iterable[str], slices: Mapping[str, list[FileSlice]]) -> dict[str, int]:
    """Where each partition's rows start in a statistics table of ``partitions``' slices, in sorted order."""
    out: dict[str, int] = {}
    at = 0
    for p in sorted(partitions):
        out[p] = at
        at += len(slices.get(p, ()))
    return out


@dataclass
class TableSnapshot:
    """One table at one timeline state, prepared for planning."""

    table: HudiTable
    index: ColumnStatsIndex
    state: tuple[Any, ...]
    slices: list[FileSlice]
    #: how this snapshot was made: "opened" (first query) or "followed" (opened again after new instants;
    #: statistics carried over); a snapshot re-used because the timeline had not changed is the same object;
    #: ``ONE_QUERY`` when made for one query (:meth:`of`)
    origin: str = "opened"
    #: the partitions listed again when this snapshot followed new instants (None: everything was listed)
    touched: set[str] | None = None
    #: the slices of each partition (None: derived from ``slices`` when a follow first needs it)
    _by_partition: dict[str, list[FileSlice]] | None = None
    #: from the snapshot this one followed: per query type, its pruner's statistics and its slices by partition
    _previous: dict[str, tuple[pa.Table, dict[str, list[FileSlice]]]] = field(default_factory=dict)
    #: statistics rows taken over from the previous snapshot's pruners (not looked up again)
    reused_rows: int = 0
    _pruners: dict[str, Pruner] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: the earlier state this snapshot is (time travel, :meth:`of` with ``as_of``); None: the latest state
    as_of: AsOf | None = None
    #: whether the slices are the latest state's (False: time travel, or an incremental pull's files, which
    #: may be older slices: only statistics of the files themselves count)
    latest_state: bool = True

    @property
    def by_partition(self) -> dict[str, list[FileSlice]]:
        """The slices of each partition (``slices`` is sorted by partition: one grouping pass)."""
        if self._by_partition is None:
            grouped = {p: list(group) for p, group in groupby(self.slices, key=get_partition_path)}
            if sum(map(len, grouped.values())) != len(self.slices):   # not grouped after all: collect each
                grouped = {}
                for sl in self.slices:
                    grouped.setdefault(sl.partition_path, []).append(sl)
            self._by_partition = grouped
        return self._by_partition

    def pruner(self, query_type: str = SNAPSHOT) -> Pruner:
        """The prepared pruner of one query type (made on first use)."""
        qt = check_query_type(query_type)
        with self._lock:
            pruner = self._pruners.get(qt)
            if pruner is None:
                with _collector_paused():
                    pruner = self._pruners[qt] = self._make_pruner(qt)
                self._previous.pop(qt, None)
            return pruner

    def _make_pruner(self, qt: str) -> Pruner:
        previous = self._previous.get(qt)
        # the previous snapshot had no log file (see _get): only the touched partitions may have some now
        if previous is None or self.touched is None or any(
                s.log_files for p in self.touched for s in self.by_partition.get(p, ())):
            return Pruner(self.table, self.index, self.slices, qt)
        # the statistics rows of the partitions no new instant touched are the previous snapshot's; only the
        # touched partitions' slices are looked up (and their new files read)
        old_stats, old_parts = previous
        starts = _row_offsets(old_parts, old_parts)
        if sum(map(len, old_parts.values())) != old_stats.num_rows:
            return Pruner(self.table, self.index, self.slices, qt)
        touched_slices = [s for p in sorted(self.touched) for s in self.by_partition.get(p, ())]
        fresh = self.index.table(touched_slices)
        if not fresh.schema.equals(old_stats.schema):
            # the columns changed (a column added or retyped by the new instants): nothing to re-use as it is
            return Pruner(self.table, self.index, self.slices, qt)
        counters = self.index.last
        fresh_at = _row_offsets(self.touched, self.by_partition)
        pieces = []
        reused = 0
        for p in sorted(self.by_partition):
            n = len(self.by_partition[p])
            if p in self.touched:
                pieces.append(fresh.slice(fresh_at[p], n))
            else:
                pieces.append(old_stats.slice(starts[p], n))
                reused += n
        # left in chunks: the evaluator combines only the columns a filter reads
        stats = pa.concat_tables(pieces) if pieces else old_stats.slice(0, 0)
        counters = dataclasses.replace(counters, files_from_index=counters.files_from_index + reused)
        self.reused_rows += reused
        return Pruner(self.table, self.index, self.slices, qt, stats=stats, counters=counters, no_log_files=True)

    @classmethod
    def of(cls, table: HudiTable, index: ColumnStatsIndex, slices: list[FileSlice] | None = None, *,
           as_of: str | AsOf | None = None, where: str = "", latest_state: bool = True) -> TableSnapshot:
        """A snapshot made for one query (the command line's explain, a catalog read): not cached, and planned
        without preparing statistics for later queries (see :meth:`plan`). ``slices``: the table's latest file
        slices unless given (a partition selection). ``as_of``: the table's state as of an instant or time
        (time travel, :meth:`HudiTable.time_travel`; a state that cannot be read exactly raises
        :class:`~hive_bridge.layout.asof.TimeTravelError`; ``where`` names the value's origin in its errors),
        planned with the statistics of the files read only; ``latest_state=False``: ``slices`` are not (all) the
        latest state's (an incremental pull's files), planned so too."""
        if as_of is not None:
            if slices is not None:
                raise ValueError("give slices or as_of, not both (the state as of an instant has its own slices)")
            checked, state = table.time_travel(as_of, where=where)
            return cls(table, index, (), state, ONE_QUERY, as_of=checked, latest_state=False)
        return cls(table, index, (), table.latest_file_slices() if slices is None else list(slices), ONE_QUERY,
                   latest_state=latest_state)

    def plan(self, filt: sarg.SearchArgument | None, *, schema: Mapping[str, str] | None = None,
             session_time_zone: str = "UTC", explain: bool = False, query_type: str = SNAPSHOT,
             slices: list[FileSlice] | None = None) -> ListStatusResult:
        """The slices ``filt`` may match: partition values, the metadata table's partition statistics, column
        statistics and key indexes, with Hive's three-valued logic (anything unknown keeps the slice).

        ``schema``: the filter's column types when they are not the table's (a Hive job's); ``explain``: a verdict
        and reason per slice; ``query_type``: ``snapshot`` or ``read_optimized``; ``slices``: plan a subset of
        this snapshot's slices (a Hive job's partition folders) instead of all.

        A snapshot serves many queries: its prepared statistics are kept, and a later filter on other columns
        has theirs read then (:meth:`ColumnStatsIndex.want`). A snapshot made for one query (:meth:`of`), or a
        subset, reads only the statistics of the slices that the partition statistics leave."""
        if slices is not None or self.origin == ONE_QUERY:
            result = plan_slices(self.table, self.index, self.slices if slices is None else slices, filt,
                                 schema=schema, session_time_zone=session_time_zone, explain=explain,
                                 query_type=query_type, latest_state=self.latest_state)
            result.as_of = None if self.as_of is None else self.as_of.instant
            return result
        self.index.want(filter_columns(self.table, filt))
        return self.pruner(query_type).run(filt, schema=schema, session_time_zone=session_time_zone,
                                           explain=explain)


@dataclass
class _Stats:
    opened: int = 0
    reused: int = 0
    followed: int = 0
    #: partitions listed again by follows that did not list everything
    relisted_partitions: int = 0


class SnapshotCache:
    """Table snapshots by table location and options, the most recently used ``max_tables`` kept."""

    def __init__(self, max_tables: int = 8) -> None:
        self.max_tables = max_tables
        self._entries: OrderedDict[tuple[Any, ...], TableSnapshot] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[tuple[Any, ...], threading.Lock] = {}
        self.stats = _Stats()

    def get(self, path: str, *, listing: str = "folders", stats_source: str = "auto", persist: bool = True,
            storage_options: Mapping[str, str] | None = None) -> TableSnapshot:
        """The table's current snapshot: the cached one when its timeline has not changed, else a new one
        (statistics carried over from the cached one)."""
        with _collector_paused():
            return self._get(path, listing, stats_source, persist, storage_options)

    def _get(self, path: str, listing: str, stats_source: str, persist: bool,
             storage_options: Mapping[str, str] | None) -> TableSnapshot:
        key = (str(path), listing, stats_source, persist, tuple(sorted((storage_options or {}).items())))
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:                          # one opening per table at a time; other tables go on
            with self._lock:
                hit = self._entries.get(key)
            if hit is not None:
                state = timeline_state(hit.table)
                if state == hit.state:
                    with self._lock:
                        self._entries.move_to_end(key)
                        self.stats.reused += 1
                    return hit
                table = HudiTable.open(path, listing=listing, storage=hit.table.storage)
                origin = "followed"
                touched = None
                if listing == "folders" and table.listing_source == "folders":
                    touched = touched_partitions(hit.table, table)
                if touched is not None:
                    # before anything asks the new table for its slices (its schema does): list only what the
                    # new instants wrote
                    table._fsview.relist(hit.table._fsview, touched)
                    by_partition = {p: sl for p, sl in hit.by_partition.items() if p not in touched}
                    by_partition.update({p: sl for p, sl in table._fsview.slices_of(touched).items() if sl})
                    slices = [s for p in sorted(by_partition) for s in by_partition[p]]
                    table._latest = slices
                    table.follow_schema(hit.table, [s for p in touched for s in by_partition.get(p, ())])
                index = hit.index.follow(table)
                if touched is not None:
                    snap = TableSnapshot(table, index, state, slices, origin, touched, by_partition,
                                         {qt: (pr.stats_all, hit.by_partition) for qt, pr in hit._pruners.items()
                                          if not pr.has_logs.any() and len(pr.slices) == len(hit.slices)
                                          and pr.current})
                    return self._store(key, snap)
            else:
                # the state is read before the table is opened (a first, lazy open only says where the timeline
                # is): an instant completing meanwhile is then a change the next query sees, never missed
                probe = HudiTable.open(path, storage_options=storage_options)
                state = timeline_state(probe)
                table = HudiTable.open(path, listing=listing, storage=probe.storage)
                index = ColumnStatsIndex(table, persist=persist, source=stats_source)
                origin = "opened"
            snap = TableSnapshot(table, index, state, table.latest_file_slices(), origin)
            return self._store(key, snap)

    def _store(self, key: tuple[Any, ...], snap: TableSnapshot) -> TableSnapshot:
        with self._lock:
            self._entries[key] = snap
            self._entries.move_to_end(key)
            if snap.origin == "followed":
                self.stats.followed += 1
                if snap.touched is not None:
                    self.stats.relisted_partitions += len(snap.touched)
            else:
                self.stats.opened += 1
            while len(self._entries) > self.max_tables:
                old, _ = self._entries.popitem(last=False)
                self._key_locks.pop(old, None)
        return snap

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._key_locks.clear()


_default: SnapshotCache | None = None
_default_lock = threading.Lock()


def default_cache() -> SnapshotCache:
    """The process's snapshot cache (used by ``read_hudi``, the ``hudi-hive`` data source and the handler): the
    ``HIVE_BRIDGE_SNAPSHOTS`` (default 4, :mod:`hive_bridge.config`) most recently used tables."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SnapshotCache(max_tables=config.settings().snapshots)
        return _default


def _clear_default() -> None:
    with _default_lock:
        if _default is not None:
            _default.clear()


config.register_cache("pruning.snapshot: table snapshots", _clear_default)
