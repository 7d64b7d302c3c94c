"""A persisted column-statistics index: one row per latest base file, read from parquet footers once.

The index lives inside the table (`.hoodie/.hive_bridge/column_stats/seg-*.arrow`, Arrow IPC files with lz4
buffers: loading 100,000 rows takes milliseconds, where parquet needs a decoding pass). Every row is keyed by
the base file's path, size and instant; a row whose key does not match a current latest base file is never
used. New commits only cost the footers of their new files. Every segment is verified (a checksum of all its
bytes, Arrow's full validation, value checks) before any value is used; one that fails is discarded, counted
(`corrupt_segments`, :attr:`ColumnStatsIndex.discarded`) and its files read again from their sources
(:mod:`hive_bridge.stats.integrity`). A read-only table folder makes the index work in memory only. Base files
that are not parquet (tables with `hoodie.table.base.file.format` ORC, HFILE or LANCE) have no footer to read:
their rows are all unknown (`num_rows` included), never looked up in the index and never stored.

The statistics table (`ColumnStatsIndex.table()`) is the contract with the vectorized evaluator:

- `path` string (base file path relative to the table root), `partition` string, `file_size` int64,
  `instant` string, `num_rows` int64 (null = unknown), `has_log_files` bool;
- per data column `c` (top-level, or dotted struct leaves such as `structField.field1`; lists/maps skipped):
  `c::min`, `c::max` typed as the column's Arrow type (null = unknown), `c::null_count` int64
  (null = unknown), `c::min_exact`, `c::max_exact` bool (null = unknown), and for a float/double column
  `c::nan_count` int64 (null = unknown: from the footer's thrift, or counted with ``HIVE_BRIDGE_COUNT_NANS``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.errors import HudiTableError, MetadataTableError
from hive_bridge.formats.parquet_footer import StatsLeaf, stat_leaves
from hive_bridge.layout.fsview import (
    FileSlice,
    LogFile,
    get_base_file,
    get_base_instant,
    get_instant,
    get_log_files,
    get_partition_path,
    get_path,
    get_size,
)
from hive_bridge.mdt.colstats import ENTRY_SCHEMA, Unsupported, read_column_stats
from hive_bridge.mdt.keys import COLUMN_STATS
from hive_bridge.stats.entries import (
    FILE_KEY_COLUMNS,
    IndexState,
    after_added,
    entry_keys,
    layout,
    lookup_rows,
    mdt_keys_of,
    with_leaves,
)
from hive_bridge.stats.integrity import Discarded, clear_inverted_bounds, discard_notices
from hive_bridge.stats.log_stats import LogStats, log_rows_to_table
from hive_bridge.stats.mdt_rows import file_keys_table, index_entries, mdt_rows, mdt_rows_columnar
from hive_bridge.stats.reader import LocalStatsReader, ReadRows, StatsReader, checked
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION, KEY_FIELDS, leaf_pairs, stats_schema
from hive_bridge.stats.segments import INDEX_PARTS, MAX_SEGMENTS, conform_segment, union_leaves
from hive_bridge.stats.store import SegmentStore
from hive_bridge.table.table import HudiTable

INDEX_DIR = INDEX_PARTS
#: where the statistics of files the index lacks come from (see ColumnStatsIndex)
STATS_SOURCES = ("auto", "mdt", "footers")
#: base files with this name extension have parquet footers; every other base file has unknown statistics
PARQUET_SUFFIX = ".parquet"



@dataclass(frozen=True)
class IndexCounters:
    """What an index call did: files whose statistics came from the persisted index vs from footers."""

    files_from_index: int = 0
    files_from_footers: int = 0
    unreadable_footers: int = 0
    segments_read: int = 0
    segments_written: int = 0
    #: segments discarded on load: damaged, failing a check, or without a checksum (their files read again)
    corrupt_segments: int = 0
    persisted: bool = True
    #: base files of a format without footer statistics (not parquet): unknown statistics, never read or stored
    files_without_statistics: int = 0
    #: merge-on-read log files whose statistics came from the index / were read from their blocks
    log_files_from_index: int = 0
    log_files_read: int = 0
    #: log files whose statistics are unknown (unreadable, a block this reader cannot decode, changed while read)
    unreadable_log_files: int = 0
    #: base / log files whose statistics came from the metadata table's column_stats partition
    files_from_mdt: int = 0
    log_files_from_mdt: int = 0
    #: files left unknown because the source was "mdt" and the metadata table has no entry for them
    files_without_mdt_entry: int = 0

    def __add__(self, other: IndexCounters) -> IndexCounters:
        return IndexCounters(
            self.files_from_index + other.files_from_index,
            self.files_from_footers + other.files_from_footers,
            self.unreadable_footers + other.unreadable_footers,
            self.segments_read + other.segments_read,
            self.segments_written + other.segments_written,
            self.corrupt_segments + other.corrupt_segments,
            self.persisted and other.persisted,
            self.files_without_statistics + other.files_without_statistics,
            self.log_files_from_index + other.log_files_from_index,
            self.log_files_read + other.log_files_read,
            self.unreadable_log_files + other.unreadable_log_files,
            self.files_from_mdt + other.files_from_mdt,
            self.log_files_from_mdt + other.log_files_from_mdt,
            self.files_without_mdt_entry + other.files_without_mdt_entry,
        )

    @property
    def files_read_from_sources(self) -> int:
        """Base and log files whose statistics were read from footers, log blocks or the metadata table."""
        return self.files_from_footers + self.files_from_mdt + self.log_files_read + self.log_files_from_mdt




class ColumnStatsIndex:
    """Per-file column statistics of a Hudi table's latest base files, persisted inside the table."""

    def __init__(self, table: HudiTable, *, max_workers: int | None = None, persist: bool = True,
                 source: str = "auto", mdt_columns: Iterable[str] | None = None,
                 reader: StatsReader | None = None) -> None:
        """``source``: where statistics of files the index lacks come from — ``footers`` (parquet footers and
        log blocks, read here), ``mdt`` (the metadata table's column_stats partition only; files it has no entry
        for stay unknown), ``auto`` (the metadata table where it has an entry, footers and log blocks for the
        rest; the default). ``mdt_columns``: read these columns' entries from the metadata table first (a
        filter's columns: decoding every column's entries of a large table costs seconds), the others' when
        :meth:`complete` is asked for them (as after :meth:`want`). ``reader``: who reads the footers and log
        files the index lacks (a ``hive_bridge.stats.reader.StatsReader``); default ``None``: this process,
        on ``max_workers`` threads; ``hive_bridge.spark.index_build.SparkStatsReader(spark)``: Spark executors. The
        rows stored are the same whoever reads them."""
        if source not in STATS_SOURCES:
            raise HudiTableError(f"unknown statistics source {source!r}: use {', '.join(STATS_SOURCES)}")
        self.source = source
        self.mdt_columns = None if mdt_columns is None else set(mdt_columns)
        self._read_sources: dict[str, str] = {}
        #: paths whose statistics came from the metadata table, as arrays (100,000 rows a read): put into
        #: `read_sources` when it is first looked at, not on the planning's path
        self._pending_sources: list[pa.Array | pa.ChunkedArray] = []
        #: the metadata table's column statistics read so far, by the columns read (record path / columnar)
        self._mdt_entries: dict[tuple[str, ...], dict[tuple[str, str], dict[str, Any]]] = {}
        self._mdt_tables: dict[tuple[str, ...], pa.Table | None] = {}
        #: the columns every row made from the metadata table holds (None: no row made yet); the others' bounds
        #: are unknown in those rows until :meth:`complete` reads them
        self._mdt_leaves: set[str] | None = None
        #: read the wanted columns only, the rest on demand (``mdt_columns`` given, or :meth:`want` called before
        #: the first read)
        self._lazy = mdt_columns is not None
        self._wanted: set[str] = set(self.mdt_columns or ())
        #: one reader or writer of the in-memory rows at a time (queries of several threads, lazy columns)
        self._lock = threading.RLock()
        #: incremented whenever rows already made change (:meth:`complete`): statistics tables made before
        #: are stale (they know less, never something wrong)
        self.version = 0
        #: "columns" (decode the metadata table's column statistics column by column, the record path where
        #: that cannot decide) or "records" (record by record: the reference the columnar path is tested against)
        self.mdt_decoder = "columns"
        self.mdt_problems: list[str] = []
        self.hudi_table = table
        # object storage: footers are network round trips, so many more reads in flight than cores
        self.max_workers = max_workers or (min(8, (os.cpu_count() or 2) * 2) if table.storage.is_local else 32)
        self.reader = reader
        #: the persisted segments (a table on object storage: its index folder there, and `directory` is the
        #: local cache folder used when the bucket is not writable)
        self.segments = SegmentStore(table)
        self.directory: Path = self.segments.directory
        self._persist = persist
        self._state: IndexState | None = None
        self._target: list[StatsLeaf] | None = None
        self.counters = IndexCounters(persisted=persist)
        self.last = IndexCounters(persisted=persist)
        self.errors: list[str] = []

    # --------------------------------------------------------------- public
    def follow(self, table: HudiTable) -> ColumnStatsIndex:
        """An index of the same table at a newer state (``table``: opened again after new instants), with the
        same options, starting from this one's statistics in memory when the schema's leaves are the same:
        only the files it has not seen yet are read (the persisted segments are not read again). This index is
        left as it is (a query still using it is not disturbed)."""
        new = ColumnStatsIndex(table, max_workers=self.max_workers, persist=self._persist, source=self.source,
                               mdt_columns=self.mdt_columns, reader=self.reader)
        new.mdt_decoder = self.mdt_decoder
        new._lazy, new._wanted = self._lazy, set(self._wanted)
        old = self._state
        if old is not None and new.target_leaves() == self.target_leaves():
            with self._lock:
                new._state = IndexState(raw_segments=list(old.raw_segments), entries=old.entries, paths=old.paths,
                                    sizes=old.sizes, instants=old.instants, built=old.built,
                                    built_for=old.built_for)
                new._mdt_leaves = None if self._mdt_leaves is None else set(self._mdt_leaves)
        return new

    @property
    def discarded(self) -> list[Discarded]:
        """The segments discarded on load (never used for a verdict), with why."""
        return self.segments.discarded

    def discard_notices(self) -> list[str]:
        """Lines telling a user which segments were discarded and how many files' statistics were read again."""
        return discard_notices(self.discarded, self.counters.files_read_from_sources)

    @property
    def uses_metadata_table(self) -> bool:
        """Whether statistics may come from the metadata table (its column and partition statistics): not when
        the index is told to read footers only (``source="footers"``)."""
        return self.source != "footers"

    @property
    def read_sources(self) -> dict[str, str]:
        """Where the statistics of files read by this object came from (path -> "metadata table", "parquet
        footer", "log blocks", "none ..."); a path not in it came from the persisted index."""
        while self._pending_sources:
            self._read_sources.update(dict.fromkeys(self._pending_sources.pop(0).to_pylist(), "metadata table"))
        return self._read_sources

    @property
    def mdt_columns_read(self) -> frozenset[str] | None:
        """The columns whose metadata-table entries the rows made from it hold (None: no such row yet)."""
        with self._lock:
            return None if self._mdt_leaves is None else frozenset(self._mdt_leaves)

    def want(self, columns: Iterable[str] | None) -> None:
        """The columns a query is about to filter on. Called before the metadata table's column statistics are
        first read, it makes that read lazy: only these columns' entries are decoded (or the first column's,
        when none of them has statistics), the other columns' when a filter first needs them
        (:meth:`complete`). Decoding one column's entries of a 100,000-file table costs about half a second;
        a table has dozens of columns. Rows made so are kept in memory, not persisted (they are partial)."""
        with self._lock:
            if self._mdt_leaves is None:
                self._lazy = True
                self._wanted |= set(columns or ())

    def complete(self, columns: Iterable[str]) -> bool:
        """Read the metadata table's entries of ``columns`` for the rows made from it without them (a lazy first
        read: :meth:`want`) and put them in those rows. A file without an entry for a column, or whose entry
        counts a different number of values than its row, keeps that column unknown. True when rows changed
        (:attr:`version` is then incremented)."""
        wanted = set(columns)
        with self._lock:
            state = self._state
            if state is None or self._mdt_leaves is None:
                return False
            leaves = [leaf for leaf in self.target_leaves() if leaf.name in wanted and leaf.name not in
                      self._mdt_leaves]
            if not leaves:
                return False
            names = [leaf.name for leaf in leaves]
            self._mdt_leaves |= set(names)              # tried once, whatever the outcome
            changed = False
            for k, (segment, rows) in enumerate(state.raw_segments):
                if segment != "<mdt>" or not rows.num_rows:
                    continue
                fresh, _ = self._mdt_rows_of(mdt_keys_of(rows), names)
                if fresh is None or not fresh.num_rows:
                    continue
                state.raw_segments[k] = (segment, with_leaves(rows, fresh, names))
                changed = True
            if changed:
                state.entries = None                    # rows changed in place: rebuilt whole
                state.built = 0
                self._rebuild_entries(state)
                self.version += 1
            return changed

    def load(self) -> pa.Table:
        """Statistics of the latest base files: from the index, plus footers of files it lacks (then saved)."""
        return self.table()

    def refresh(self) -> pa.Table:
        """Re-read the table's timeline and listing (new commits), then update the index incrementally."""
        self.hudi_table = self.hudi_table.reload()
        self._state = None
        self._target = None
        return self.table()

    def table(self, slices: Iterable[FileSlice] | None = None, *, count: bool = True) -> pa.Table:
        """The statistics table for `slices` (default: the latest file slices), one row per slice, in order.
        ``count=False``: `last` and `counters` are left as they are (the same slices looked up again)."""
        slice_list = list(self.hudi_table.latest_file_slices() if slices is None else slices)
        # no gc_paused() here: pyarrow's FileMetaData <-> ParquetSchema reference cycle keeps every footer read
        # alive until a collection runs
        with self._lock:
            return self._table(slice_list, count)

    def _table(self, slice_list: list[FileSlice], count: bool = True) -> pa.Table:
        state, last = self._ensure_loaded(IndexCounters(persisted=self._persist))
        target = self.target_leaves()
        n = len(slice_list)
        # a log-only file group has no statistics and is always kept (has_log_files); it is keyed by its
        # first log file. FileSlice and BaseFile are NamedTuples: the attrgetter maps run at C speed.
        bases = list(map(get_base_file, slice_list))
        all_base = None not in bases
        firsts = bases if all_base else [s.base_file or s.log_files[0] for s in slice_list]
        path_arr = pa.array(list(map(get_path, firsts)), pa.string())
        size_arr = pa.array(list(map(get_size, firsts)), pa.int64())
        instant_arr = pa.array(list(map(get_base_instant, slice_list)), pa.string())
        partition_arr = pa.array(list(map(get_partition_path, slice_list)), pa.string())
        has_logs = pa.array(list(map(bool, map(get_log_files, slice_list))), pa.bool_())
        base_count = n if all_base else n - bases.count(None)
        is_base = None if all_base else pa.array([b is not None for b in bases], pa.bool_())
        # only parquet base files have footer statistics: files of other formats (ORC, HFILE, LANCE) are never
        # read, never looked up in the index (a row under their key is not trusted) and never stored: every
        # statistic of theirs is unknown, num_rows included, so nothing treats them as empty
        parquet = pc.ends_with(path_arr, PARQUET_SUFFIX)
        if is_base is not None:
            parquet = pc.and_(parquet, is_base)
        other_format = base_count - parquet.true_count
        is_readable = parquet if parquet.false_count else None
        positions = lookup_rows(state, path_arr, size_arr, instant_arr)
        missing_idx = pa.array([], pa.int64())
        if positions.null_count:
            missing_mask = pc.is_null(positions) if is_readable is None \
                else pc.and_(pc.is_null(positions), is_readable)
            missing_idx = pc.indices_nonzero(missing_mask)
        n_missing = len(missing_idx)
        if n_missing and pc.count_distinct(pc.take(path_arr, missing_idx)).as_py() != n_missing:
            # a base file listed twice (never by a sound listing): each (path, size, instant) read once
            seen: set[tuple[str, int, str]] = set()
            unique_rows = []
            for i in missing_idx.to_pylist():
                s = slice_list[i]
                bf = s.base_file
                assert bf is not None
                k = (bf.path, bf.size, s.base_instant)
                if k not in seen:
                    seen.add(k)
                    unique_rows.append(i)
            missing_idx = pa.array(unique_rows, pa.int64())
        from_mdt = without_entry = 0
        if len(missing_idx) and self.uses_metadata_table:
            mpaths = pc.take(path_arr, missing_idx)
            keys = pa.table({
                "path": mpaths, "partition": pc.take(partition_arr, missing_idx),
                "size": pc.take(size_arr, missing_idx), "instant": pc.take(instant_arr, missing_idx),
                "is_log": pa.array(np.zeros(len(missing_idx), dtype=bool)),
            })
            before = layout(state)
            found = self._add_from_mdt(state, keys, target)
            found_mask = np.asarray(found, dtype=bool)
            from_mdt = int(np.count_nonzero(found_mask))
            found_idx = pc.filter(missing_idx, pa.array(found_mask))
            missing_idx = pc.filter(missing_idx, pa.array(~found_mask))
            if self.source == "mdt" and len(missing_idx):
                without_entry = len(missing_idx)
                self._add_unknown(state, [(slice_list[i].base_file.path, slice_list[i].partition_path,
                                           slice_list[i].base_file.size, slice_list[i].base_instant)
                                          for i in missing_idx.to_pylist()], target)
                missing_idx = pa.array([], pa.int64())
            if from_mdt and not without_entry:
                positions = after_added(state, positions, found_idx, path_arr, size_arr, instant_arr, before)
            elif from_mdt or without_entry:     # rows were added: look the files up again
                positions = lookup_rows(state, path_arr, size_arr, instant_arr)
        missing: list[tuple[str, str, int, str, str]] = []
        for i in missing_idx.to_pylist():
            s = slice_list[i]
            bf = s.base_file
            assert bf is not None
            missing.append((bf.path, s.partition_path, bf.size, s.base_instant, bf.full_path))
        if missing:
            last = self._add_from_footers(state, missing, target, last)
            positions = lookup_rows(state, path_arr, size_arr, instant_arr)
        if is_readable is not None:
            positions = pc.if_else(is_readable, positions, pa.nulls(n, pa.int32()))
        assert state.entries is not None
        # the key columns come from the listing: only row counts and statistics are taken from the index
        entries = state.entries.select(range(len(KEY_FIELDS) - 1, state.entries.num_columns))
        if n == entries.num_rows and positions.null_count == 0 and n and np.array_equal(
            positions.to_numpy(), np.arange(n, dtype=np.int32)
        ):
            taken = entries  # the index already holds exactly these files in this order
        else:
            taken = entries.take(positions)
        columns = [
            path_arr,
            partition_arr,
            size_arr,
            instant_arr,
            taken.column(0),  # num_rows
            has_logs,
        ]
        columns += taken.columns[1:]
        result = pa.Table.from_arrays(columns, schema=stats_schema(target, with_has_log_files=True))
        last = IndexCounters(
            files_from_index=base_count - other_format - n_missing,
            files_from_footers=n_missing - from_mdt - without_entry,
            files_from_mdt=from_mdt,
            files_without_mdt_entry=without_entry,
            unreadable_footers=last.unreadable_footers,
            segments_read=last.segments_read,
            segments_written=last.segments_written,
            corrupt_segments=last.corrupt_segments,
            persisted=last.persisted,
            files_without_statistics=other_format,
        )
        if count:
            self.last = last
            self.counters = self.counters + last
        return result

    def log_table(self, slices: Iterable[FileSlice], *, count: bool = True) -> pa.Table:
        """The statistics of every log file of `slices` (slice order, each slice's logs in order), one row each,
        in the index's layout (without has_log_files): from the index, or read from the log files' blocks (in
        parallel) and persisted like footers. Unknown statistics (nulls) for a log file that cannot be read."""
        with self._lock:
            return self._log_table(slices, count)

    def _log_table(self, slices: Iterable[FileSlice], count: bool) -> pa.Table:
        state, last = self._ensure_loaded(IndexCounters(persisted=self._persist))
        target = self.target_leaves()
        logs = [(lf, s.partition_path) for s in slices for lf in s.log_files]
        n = len(logs)
        path_arr = pa.array([lf.path for lf, _ in logs], pa.string())
        size_arr = pa.array([lf.size for lf, _ in logs], pa.int64())
        instant_arr = pa.array([lf.instant for lf, _ in logs], pa.string())
        positions = lookup_rows(state, path_arr, size_arr, instant_arr) if n else pa.array([], pa.int32())
        missing_rows = pc.indices_nonzero(pc.is_null(positions)).to_pylist() if positions.null_count else []
        from_mdt = without_entry = 0
        if missing_rows:
            seen: set[str] = set()
            missing = []
            for i in missing_rows:
                lf, partition = logs[i]
                if lf.path not in seen:
                    seen.add(lf.path)
                    missing.append((lf, partition))
            if self.uses_metadata_table:
                found = self._add_from_mdt(state, [(lf.path, p, lf.size, lf.instant, lf.name, True)
                                                   for lf, p in missing], target)
                from_mdt = sum(found)
                missing = [m for m, f in zip(missing, found, strict=True) if not f]
                if self.source == "mdt" and missing:
                    without_entry = len(missing)
                    self._add_unknown(state, [(lf.path, p, lf.size, lf.instant) for lf, p in missing], target)
                    missing = []
            if missing:
                last = self._add_from_logs(state, missing, target, last)
            positions = lookup_rows(state, path_arr, size_arr, instant_arr)
        assert state.entries is not None
        taken = state.entries.take(positions)
        columns = [path_arr, pa.array([p for _, p in logs], pa.string()), size_arr, instant_arr]
        columns += taken.columns[len(KEY_FIELDS) - 1:]
        result = pa.Table.from_arrays(columns, schema=stats_schema(target, with_has_log_files=False))
        last = dataclasses.replace(last, log_files_from_index=n - len(missing_rows),
                                   log_files_read=len(missing_rows) - from_mdt - without_entry,
                                   log_files_from_mdt=from_mdt, files_without_mdt_entry=without_entry)
        if count:
            self.last = self.last + last
            self.counters = self.counters + last
        return result

    def metadata_entries(self, columns: Sequence[str] | None = None) -> dict[tuple[str, str], dict[str, Any]]:
        """The metadata table's column statistics of ``columns`` (default: those the next read takes) by
        (partition, file name), read once (empty when the table has no usable column_stats partition; why is in
        `mdt_problems`)."""
        names = tuple(self._mdt_first_leaves() if columns is None else columns)
        if names not in self._mdt_entries:
            entries: dict[tuple[str, str], dict[str, Any]] = {}
            if COLUMN_STATS in self.hudi_table.properties.metadata_partitions:
                mdt = self.hudi_table.metadata_table()
                self._note_mdt_problems(mdt.status.problems)
                if COLUMN_STATS in mdt.status.partitions:
                    try:
                        entries = index_entries(mdt.column_stats(list(names))) if names else {}
                    except MetadataTableError as exc:
                        if str(exc) not in self.mdt_problems:
                            self.mdt_problems.append(str(exc))
            self._mdt_entries[names] = entries
        return self._mdt_entries[names]

    def _note_mdt_problems(self, problems: Iterable[str]) -> None:
        for p in problems:
            if p not in self.mdt_problems:
                self.mdt_problems.append(p)

    def metadata_entry_table(self, columns: Sequence[str] | None = None,
                             partitions: Iterable[str] | None = None) -> pa.Table | None:
        """The metadata table's column statistics of ``columns`` (default: those the next read takes) decoded
        column by column (``hive_bridge.mdt.colstats.ENTRY_SCHEMA``), read once; None when that path cannot decide (then
        :meth:`metadata_entries` reads them record by record). ``partitions``: only the entries of these data
        partitions' files are looked up (None: every partition's)."""
        names = tuple(self._mdt_first_leaves() if columns is None else columns)
        parts = None if partitions is None else tuple(sorted(set(partitions)))
        key = names if parts is None else (*names, "\0", *parts)
        if key not in self._mdt_tables:
            table: pa.Table | None = ENTRY_SCHEMA.empty_table()
            if COLUMN_STATS in self.hudi_table.properties.metadata_partitions:
                mdt = self.hudi_table.metadata_table()
                self._note_mdt_problems(mdt.status.problems)
                if COLUMN_STATS in mdt.status.partitions:
                    try:
                        table = read_column_stats(mdt, list(names), parts) if names else table
                    except Unsupported:
                        table = None
                    except MetadataTableError:
                        table = None            # the record path reports it (and the partition is dropped)
            self._mdt_tables[key] = table
        return self._mdt_tables[key]

    def _mdt_first_leaves(self) -> list[str]:
        """The columns a read of the metadata table takes: those the rows made from it hold; before any, every
        column (or, after :meth:`want` / with ``mdt_columns``, the wanted ones, else the first)."""
        names = [leaf.name for leaf in self.target_leaves()]
        if self._mdt_leaves is not None:
            return [n for n in names if n in self._mdt_leaves]
        if not self._lazy:
            return names
        return [n for n in names if n in self._wanted] or names[:1]

    def _partitions_to_read(self, key_table: pa.Table) -> list[str] | None:
        """The data partitions whose metadata-table entries the files of ``key_table`` need: None (every
        partition's, one key prefix per column) when they lie in every partition the metadata table lists,
        else those partitions (one key prefix per column and partition: the entries of the other partitions'
        files are never looked up, e.g. of partitions that partition statistics pruned)."""
        parts = pc.unique(key_table.column("partition")).to_pylist()
        try:
            known = len(self.hudi_table.metadata_table().partition_ids()) - 1   # minus the non-partitioned id
        except Exception:  # no metadata table to ask: read every partition's entries
            return None
        return None if len(parts) >= known else [p.strip("/") for p in parts if p is not None]

    def _mdt_rows_of(self, key_table: pa.Table, names: list[str]) -> tuple[pa.Table | None, list[bool]]:
        """Rows (every column of the index; those not in ``names`` unknown) for the files of ``key_table`` the
        metadata table's entries of ``names`` describe, and which those are; (None, all False) when it has no
        entry at all."""
        leaves = leaf_pairs(self.target_leaves())
        appendable = self.hudi_table.properties.version < 8
        columnar = self.metadata_entry_table(names, self._partitions_to_read(key_table)) \
            if self.mdt_decoder == "columns" else None
        if columnar is not None:
            if not columnar.num_rows:
                self.metadata_entries(names)    # only to report why there is nothing (no partition, damage)
                return None, [False] * key_table.num_rows
            return mdt_rows_columnar(key_table, columnar, leaves, appendable_logs=appendable)
        entries = self.metadata_entries(names)
        if not entries:
            return None, [False] * key_table.num_rows
        if "name" not in key_table.column_names:
            key_table = key_table.append_column("name", pc.replace_substring_regex(key_table.column("path"),
                                                                                   "^.*/", ""))
        tuples = list(zip(*(key_table.column(c).to_pylist() for c in FILE_KEY_COLUMNS), strict=True))
        return mdt_rows(tuples, entries, leaves, appendable_logs=appendable)

    def _add_from_mdt(self, state: IndexState, keys: pa.Table | list[tuple[str, str, int, str, str, bool]],
                      target: list[StatsLeaf]) -> list[bool]:
        """Rows from the metadata table for the files it describes (persisted in the index when every column
        was read, in memory otherwise); which of `keys` ((path, partition, size, instant, file name, is a log
        file) tuples, or a table of those columns) it described."""
        key_table = keys if isinstance(keys, pa.Table) else file_keys_table(keys)
        with self._lock:
            names = self._mdt_first_leaves()
            rows, found = self._mdt_rows_of(key_table, names)
            if self._mdt_leaves is None:
                self._mdt_leaves = set(names)
            if rows is None:
                return found
            self._pending_sources.append(rows.column("path"))
            if rows.num_rows:
                if len(names) == len(target) and self._persist:
                    # every column's entries: persisted like footers, so the next query does not decode the
                    # metadata table again (rows of a column-restricted read stay in memory: they are partial)
                    self._store(state, rows.replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION}),
                                pa.array([True] * rows.num_rows), IndexCounters(persisted=self._persist))
                else:
                    state.raw_segments.append(("<mdt>", rows))
                    self._rebuild_entries(state)
            return found

    def _add_unknown(self, state: IndexState, keys: list[tuple[str, str, int, str]], target: list[StatsLeaf]) -> None:
        """Rows of unknown statistics (in memory only) for files no source describes."""
        rows = log_rows_to_table(keys, [LogStats(None, error="no statistics")] * len(keys), leaf_pairs(target))
        for k in keys:
            self.read_sources[k[0]] = "none (no metadata table entry)"
        state.raw_segments.append(("<unknown>", rows))
        self._rebuild_entries(state)

    def _add_from_logs(self, state: IndexState, missing: list[tuple[LogFile, str]], target: list[StatsLeaf],
                       last: IndexCounters) -> IndexCounters:
        files = [(lf.path, partition, lf.size, lf.instant, lf.full_path) for lf, partition in missing]
        # the reading step: log blocks read by the reader (sizes checked against the listing), rows built
        reader = self.reader or LocalStatsReader(self.max_workers, self.hudi_table.storage)
        read = checked(reader.read_logs(files, leaf_pairs(target)), files, "log files")
        out, unreadable = self._store_read(state, read, [f[0] for f in files], "log blocks", last)
        return dataclasses.replace(out, unreadable_log_files=unreadable)

    def target_leaves(self) -> list[StatsLeaf]:
        """The statistics columns: leaves of the table schema, without partition columns only in paths."""
        if self._target is None:
            table = self.hudi_table
            schema = table.arrow_schema()
            path_only = set(table.properties.partition_fields) - set(table.file_schema().names)
            self._target = [leaf for leaf in stat_leaves(schema) if leaf.name not in path_only]
        return self._target

    def clear(self) -> None:
        """Delete the persisted index (it is rebuilt on the next load)."""
        self.segments.clear()
        self._state = None

    # ------------------------------------------------------------ internals
    def _segment_paths(self) -> list[Path]:
        return self.segments.local_paths()

    def _ensure_loaded(self, last: IndexCounters) -> tuple[IndexState, IndexCounters]:
        if self._state is not None:
            return self._state, last
        state = IndexState()
        # verified segments only: a damaged one is discarded, and its files are then read again like new ones
        state.raw_segments, corrupt = self.segments.read_all(self._segment_paths)
        for d in self.discarded[len(self.discarded) - corrupt:]:
            self.errors.append(f"{d.where}: ignored damaged index segment ({d.reason})")
        self._rebuild_entries(state)
        self._state = state
        return state, IndexCounters(
            segments_read=len(state.raw_segments), corrupt_segments=corrupt, persisted=last.persisted
        )

    def _rebuild_entries(self, state: IndexState) -> None:
        target = self.target_leaves()
        if state.entries is not None and state.built_for == target and 0 < state.built <= len(state.raw_segments):
            # segments were only appended since: put them in front of what is built (1,000,000 rows are not
            # concatenated again for 100 new ones)
            added = [conform_segment(seg, target) for _, seg in reversed(state.raw_segments[state.built:])]
            if added:
                head = pa.concat_tables(added).combine_chunks() if len(added) > 1 else added[0].combine_chunks()
                state.entries = pa.concat_tables([head, state.entries.cast(head.schema)])
                state.paths = pa.concat_arrays([head.column("path").combine_chunks(), state.paths])
                state.sizes = pa.concat_arrays([head.column("file_size").combine_chunks(), state.sizes])
                state.instants = pa.concat_arrays([head.column("instant").combine_chunks(), state.instants])
            state.built = len(state.raw_segments)
            return
        # newest segment first: a path indexed twice (a file rewritten under its name, read again) is found at
        # its newest row first (`lookup_rows` takes the first row of a path)
        parts = [conform_segment(seg, target) for _, seg in reversed(state.raw_segments)]
        if parts:
            entries = pa.concat_tables(parts)
        else:
            entries = stats_schema(target, with_has_log_files=False).empty_table()
        state.entries = entries.combine_chunks()
        state.paths = state.entries.column("path").combine_chunks()
        state.sizes = state.entries.column("file_size").combine_chunks()
        state.instants = state.entries.column("instant").combine_chunks()
        state.built = len(state.raw_segments)
        state.built_for = target
        state.rebuilds += 1

    def _add_from_footers(
        self, state: IndexState, missing: list[tuple[str, str, int, str, str]], target: list[StatsLeaf],
        last: IndexCounters,
    ) -> IndexCounters:
        # the reading step: footers read by the reader (sizes checked against the listing), rows built
        reader = self.reader or LocalStatsReader(self.max_workers, self.hudi_table.storage)
        read = checked(reader.read_footers(missing, target), missing, "parquet footers")
        out, unreadable = self._store_read(state, read, [m[0] for m in missing], "parquet footer", last)
        return dataclasses.replace(out, unreadable_footers=unreadable)

    def _store_read(self, state: IndexState, read: ReadRows, paths: list[str], source: str,
                    last: IndexCounters) -> tuple[IndexCounters, int]:
        """Rows a reader read (footers or log files): errors noted, sources recorded, stored; and how many of
        the files could not be read."""
        self.errors += [e for e in read.errors if e is not None]
        for path in paths:
            self.read_sources[path] = source
        good_mask = pa.array([e is None for e in read.errors], pa.bool_())
        return self._store(state, read.rows, good_mask, last), good_mask.false_count

    def _store(self, state: IndexState, new: pa.Table, good_mask: pa.Array, last: IndexCounters) -> IndexCounters:
        """Add freshly read rows to the index: the good ones persisted (one new segment, written under the
        folder's lock without the files another writer persisted meanwhile), the others kept in memory only (so
        they are retried next time). Bounds that prove nothing (a min above its max) are made unknown first."""
        written = 0
        persisted = last.persisted
        discarded = len(self.discarded)
        new = clear_inverted_bounds(new)
        bad = good_mask.false_count
        good = new.filter(good_mask) if bad else new
        with self.segments.writing() if self._persist and good.num_rows else contextlib.nullcontext(False) as held:
            name: str | None = None
            if held:
                good = self._take_in_others(state, good)
                name = self._write_segment(good) if good.num_rows else ""
                persisted = persisted and name is not None  # None: a read-only table folder
            elif self._persist and good.num_rows:
                persisted = False
                self.errors.append(f"{self.directory}: another writer kept the index locked; {good.num_rows} "
                                   f"files' statistics kept in memory only")
            if name:
                written = 1
                state.raw_segments.append((name, good))
            elif name is None:
                state.raw_segments.append(("<memory>", good))
            if bad:
                state.raw_segments.append(("<unreadable>", new.filter(pc.invert(good_mask))))
            self._rebuild_entries(state)
            if held and persisted and self._persist:
                written += self._maybe_compact(state)
        corrupt = len(self.discarded) - discarded
        for d in self.discarded[discarded:]:
            self.errors.append(f"{d.where}: ignored damaged index segment ({d.reason})")
        return IndexCounters(
            segments_read=last.segments_read, segments_written=written,
            corrupt_segments=last.corrupt_segments + corrupt, persisted=persisted,
        )

    def _take_in_others(self, state: IndexState, rows: pa.Table) -> pa.Table:
        """With the folder's lock held: the segments other writers added since this index was loaded join it (a
        segment they compacted away stays in memory, no longer this writer's to compact), and ``rows`` without
        the files those segments hold (so two writers do not persist the same files twice)."""
        known = {n for n, _ in state.raw_segments if not n.startswith("<")}
        added, gone = self.segments.added_since(known)
        if gone:
            state.raw_segments = [("<compacted>", seg) if n in gone else (n, seg) for n, seg in state.raw_segments]
        if not added:
            return rows
        state.raw_segments += added
        theirs = pa.chunked_array([entry_keys(seg.column("path"), seg.column("file_size"), seg.column("instant"))
                                   for _, seg in added], pa.string())
        mine = entry_keys(rows.column("path"), rows.column("file_size"), rows.column("instant"))
        return rows.filter(pc.invert(pc.is_in(mine, value_set=theirs.combine_chunks())))

    def _write_segment(self, table: pa.Table) -> str | None:
        """Write one segment (see SegmentStore.write); None when the table folder is not writable (the index
        then keeps what it reads in memory)."""
        name = self.segments.write(table)
        if name is None:
            self._persist = False
        return name

    def _maybe_compact(self, state: IndexState) -> int:
        persisted = [(n, s) for n, s in state.raw_segments if not n.startswith("<")]
        slices = self.hudi_table.latest_file_slices()
        total = sum(s.num_rows for _, s in persisted)
        if len(persisted) <= MAX_SEGMENTS and total <= max(2 * len(slices), 1000):
            return 0                            # (log files only raise the limit: not counted)
        logs = [lf for s in slices for lf in s.log_files]
        if len(persisted) <= MAX_SEGMENTS and total <= max(2 * (len(slices) + len(logs)), 1000):
            return 0
        # keep one row per current latest base file (in the listing's order: then loads find the index in
        # their own order and need not re-order it), then one per current log file
        files = [bf for bf in map(get_base_file, slices) if bf is not None]
        current = entry_keys(pa.array(list(map(get_path, files)) + [lf.path for lf in logs], pa.string()),
                        pa.array(list(map(get_size, files)) + [lf.size for lf in logs], pa.int64()),
                        pa.array(list(map(get_instant, files)) + [lf.instant for lf in logs], pa.string()))
        # keep every column any segment has (not only today's table schema): a segment without a column
        # means its files lack it, so dropping columns here would later read as "all null"
        leaves = union_leaves([seg for _, seg in persisted], self.target_leaves())
        merged = pa.concat_tables([conform_segment(seg, leaves) for _, seg in persisted])
        keys = entry_keys(merged.column("path"), merged.column("file_size"), merged.column("instant"))
        rows = pc.drop_null(pc.index_in(current, value_set=keys))  # a key's first row
        merged = merged.take(rows).replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})
        name = self._write_segment(merged)
        if name is None:
            return 0
        for old, _ in persisted:
            self.segments.delete(old)
        state.raw_segments = [(name, merged)] + [(n, s) for n, s in state.raw_segments if n.startswith("<")]
        state.built = 0                         # not an append: build everything again
        self._rebuild_entries(state)
        return 1

