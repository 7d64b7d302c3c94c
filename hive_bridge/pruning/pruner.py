"""The pruner: a set of latest file slices judged against filters, the way the input format's listStatus
prunes the FileSystemView — partition values first, then column statistics, vectorized.

The result (:class:`ListStatusResult`) lists the slices kept, as Hadoop ``FileStatus``es of their base files,
with the counts users see: dropped by partition, dropped by statistics, kept only because something was unknown,
kept because of log files; with ``explain``, one :class:`FileVerdict` per slice with its reason.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import sarg
from hive_bridge import config
from hive_bridge.filters.expression import HudiExpression, Predicate, translate
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION, FileSlice
from hive_bridge.pruning import float_proofs as fp
from hive_bridge.pruning.float_verdicts import ProofContext, any_part, prove_base_files, prove_merged_slices
from hive_bridge.pruning.key_index import IndexAnswer, KeyIndexes
from hive_bridge.pruning.partition_pruning import PartitionStatsStage, PartitionVerdicts
from hive_bridge.pruning.vectorized import PruneResult, StatsTable, TruthColumn, prune
from hive_bridge.stats.contract import (
    BOUND_STATS,
    MAX,
    MAX_EXACT,
    MIN,
    MIN_EXACT,
    NAN_COUNT,
    NULL_COUNT,
    has_nan_count,
    resolve_column,
    stat_name,
)
from hive_bridge.stats.index import ColumnStatsIndex, IndexCounters
from hive_bridge.stats.log_stats import union_stats
from hive_bridge.stats.rows import leaf_pairs
from hive_bridge.table.table import HudiTable
from sarg.schema import find_column


@dataclass(frozen=True)
class FileStatus:
    """One input file, as Hadoop's FileStatus: full path, length in bytes, modification time (ms)."""

    path: str
    length: int
    modification_time: int


@dataclass(frozen=True)
class FileVerdict:
    """Why one file was kept or dropped."""

    path: str
    partition: str
    kept: bool
    stage: str  # "partition", "partition statistics", "statistics", "no-filter"
    truth: sarg.TruthValue | None
    unknown: bool
    reason: str = ""
    #: a merged slice's parts (base file, log files) judged alone: (kind and path, TruthValue)
    parts: tuple[tuple[str, str], ...] = ()
    #: where the statistics came from: "metadata table", "parquet footer", "log blocks", "hive-bridge index"...
    sources: tuple[str, ...] = ()


@dataclass
class ListStatusResult:
    """The files listStatus returns, and the counts users see."""

    files: list[FileStatus]
    slices: list[FileSlice]
    files_total: int = 0
    bytes_total: int = 0
    dropped_by_partition: int = 0
    #: slices of partitions the metadata table's partition statistics prove hold no match (their files'
    #: statistics never looked at), how many partitions those are, and why partition statistics were not used
    dropped_by_partition_stats: int = 0
    partitions_dropped_by_stats: int = 0
    partition_stats_note: str = ""
    dropped_by_statistics: int = 0
    kept_unknown: int = 0
    #: kept slices with log files (read merged)
    kept_log_files: int = 0
    #: log files of the slices judged, and how many of them have unknown statistics
    log_files_total: int = 0
    log_files_unknown: int = 0
    query_type: str = "snapshot"
    #: Hudi indexes that answered equality leaves ("record index", "bloom filters", ...)
    index_sources: list[str] = field(default_factory=list)
    #: where the listing came from ("folders" or "mdt") and how many files' statistics came from each source
    listing_source: str = "folders"
    stats_sources: dict[str, int] = field(default_factory=dict)
    sarg: sarg.SearchArgument | None = None
    verdicts: list[FileVerdict] = field(default_factory=list)
    #: columns the filter names that the table's schema does not have (:func:`unknown_columns`): their conditions
    #: are unknown, so they keep every file
    unknown_columns: list[str] = field(default_factory=list)
    #: the instant time of the state planned (time travel), None for the latest state
    as_of: str | None = None
    #: an incremental query's (begin, end] instants (its rows: _hoodie_commit_time in that range)
    commit_range: tuple[str, str] | None = None
    #: a filter on float/double columns: the facts read to prove files free of NaN (None: no such column)
    float_proofs: fp.ProofReport | None = None

    @property
    def files_kept(self) -> int:
        return len(self.files)

    def figures(self) -> dict[str, Any]:
        """The listing's figures as JSON values, the one form explain, replay and the workload report print
        (docs/replay.md lists them)."""
        return {
            "files_total": self.files_total, "files_kept": self.files_kept, "bytes_total": self.bytes_total,
            "bytes_kept": self.bytes_kept, "kept_unknown": self.kept_unknown,
            "dropped_by_partition": self.dropped_by_partition,
            "dropped_by_partition_stats": self.dropped_by_partition_stats,
            "partitions_dropped_by_stats": self.partitions_dropped_by_stats,
            "dropped_by_statistics": self.dropped_by_statistics, "kept_log_files": self.kept_log_files,
            "query_type": self.query_type, "log_files_total": self.log_files_total,
            "log_files_unknown": self.log_files_unknown, "listing_source": self.listing_source,
            "stats_sources": self.stats_sources, "index_sources": self.index_sources,
            "unknown_columns": self.unknown_columns,
            **({"as_of": self.as_of} if self.as_of is not None else {}),
            **({"begin_instant": self.commit_range[0], "end_instant": self.commit_range[1]}
               if self.commit_range is not None else {}),
            **({"float_proofs": self.float_proofs.figures()} if self.float_proofs is not None else {}),
        }

    @property
    def bytes_kept(self) -> int:
        return sum(f.length for f in self.files)


def partition_value_stats(table: HudiTable, slices: list[FileSlice], num_rows: pa.Array | None,
                    stats: pa.Table | None = None) -> pa.Table:
    """A statistics table of the partition columns.

    A partition column stored in the data files is judged by the files' own statistics of it: the path holds
    what the key generator made of the value (a timestamp-based key generator writes ``2024/01/01`` for a
    timestamp, a simple one may write a date as a day number), which must never be mistaken for the value.
    A column that lives only in the path (dropped from the files) is the path value, as Hive reads it:
    min = max = that value, typed by the table schema (unknown when it does not convert).
    """
    schema = table.arrow_schema()
    in_files = set(table.file_schema().names)
    columns: dict[str, pa.Array] = {}
    n = len(slices)
    for name in table.properties.partition_fields:
        if name in in_files:
            if stats is not None and all(stat_name(name, k) in stats.column_names for k in BOUND_STATS):
                for k in (*BOUND_STATS, NAN_COUNT):
                    if stat_name(name, k) in stats.column_names:
                        columns[stat_name(name, k)] = stats.column(stat_name(name, k))
            continue
        idx = schema.get_field_index(name)
        typ = schema.field(idx).type if idx >= 0 else pa.string()
        raw = [s.partition_values.get(name) for s in slices]
        values: list[Any] = []
        null_counts: list[int | None] = []
        for i, value in enumerate(raw):
            rows = None if num_rows is None else num_rows[i].as_py()
            if value is None:
                values.append(None)
                null_counts.append(None)
            elif value == HIVE_DEFAULT_PARTITION:
                values.append(None)
                null_counts.append(rows)
            else:
                values.append(value)
                null_counts.append(0)
        try:
            typed = pa.array(values, pa.string()).cast(typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            typed = _cast_each(values, typ)
            null_counts = [0 if v is not None else c if raw[i] == HIVE_DEFAULT_PARTITION else None
                           for i, (v, c) in enumerate(zip(typed.to_pylist(), null_counts, strict=True))]
        columns[stat_name(name, MIN)] = typed
        columns[stat_name(name, MAX)] = typed
        columns[stat_name(name, NULL_COUNT)] = pa.array(null_counts, pa.int64())
        columns[stat_name(name, MIN_EXACT)] = pa.array([True] * n)
        columns[stat_name(name, MAX_EXACT)] = pa.array([True] * n)
        if has_nan_count(typ):
            columns[stat_name(name, NAN_COUNT)] = pa.nulls(n, pa.int64())   # a path value's NaN: unknown
    return pa.table(columns) if columns else pa.table({"_": pa.nulls(n)}).drop(["_"])


def _cast_each(values: list[Any], typ: pa.DataType) -> pa.Array:
    out = []
    for v in values:
        try:
            out.append(pa.array([v], pa.string()).cast(typ)[0].as_py() if v is not None else None)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            out.append(None)
    return pa.array(out, typ)


#: a snapshot (realtime) query reads base files merged with their log files; a read-optimized query reads base
#: files only (Hive sync's ``<t>_ro``, HoodieParquetInputFormat)
SNAPSHOT, READ_OPTIMIZED = "snapshot", "read_optimized"
QUERY_TYPES = (SNAPSHOT, READ_OPTIMIZED)


def check_query_type(query_type: str) -> str:
    """The query type, normalized (``realtime``/``rt`` = snapshot, ``ro`` = read_optimized); ValueError else."""
    q = query_type.strip().lower().replace("-", "_")
    q = {"rt": SNAPSHOT, "realtime": SNAPSHOT, "ro": READ_OPTIMIZED}.get(q, q)
    if q not in QUERY_TYPES:
        raise ValueError(f"unknown query type {query_type!r}: use {' or '.join(QUERY_TYPES)}")
    return q


def read_optimized_view(slices: list[FileSlice]) -> list[FileSlice]:
    """The slices a read-optimized query reads: base files only (log files ignored, log-only groups absent)."""
    return [s if not s.log_files else s._replace(log_files=()) for s in slices if s.base_file is not None]


def filter_columns(table: HudiTable, filt: sarg.SearchArgument | None) -> set[str] | None:
    """The statistics columns a filter reads, its prefix conditions' included (for a one-shot query's ``ColumnStatsIndex(mdt_columns=...)``);
    None when there is no filter."""
    if filt is None:
        return None
    types = {name: pa.null() for name in table.arrow_schema().names}
    out: set[str] = set()
    for column in [leaf.column for leaf in filt.leaves] + [p.column for p in filt.prefixes]:
        name = resolve_column(types, column)
        out.add(name if name is not None else column)
        out.add(column)
    return out


def unknown_columns(filt: sarg.SearchArgument | None, schema: Mapping[str, str]) -> list[str]:
    """The columns ``filt`` names that ``schema`` (a table's SearchArgument schema) does not have, by sarg's one
    rule for names (:func:`sarg.schema.find_column`): those its text named when it was read (HiveQL: their
    conditions were left unknown then), and its leaves' and prefix conditions' columns that are neither a column
    of ``schema`` nor a field of one (``s.a`` of a struct column ``s``); each once, in order of first use."""
    if filt is None:
        return []
    named = [*filt.unknown_columns, *(leaf.column for leaf in filt.leaves), *(p.column for p in filt.prefixes)]
    return list(dict.fromkeys(c for c in named if find_column(schema, c) is None
                              and find_column(schema, c.split(".")[0]) is None))


def unknown_column_note(column: str) -> str:
    """What a column of :func:`unknown_columns` means for pruning, as explain and replay say it."""
    return f"column {column} is not in the table's schema: its conditions are unknown, files kept"


def plan_slices(table: HudiTable, index: ColumnStatsIndex, slices: list[FileSlice],
                filt: sarg.SearchArgument | None, *, schema: Mapping[str, str] | None = None,
                session_time_zone: str = "UTC", explain: bool = False,
                query_type: str = SNAPSHOT, partition_stats: bool = True,
                latest_state: bool = True) -> ListStatusResult:
    """One query's planning of ``slices`` (what :meth:`hive_bridge.pruning.snapshot.TableSnapshot.plan` runs for
    a snapshot made for one query or a subset of a snapshot's slices; call that, not this). Keep the slices a
    filter may match: partition values first, then the metadata table's partition statistics
    (``partition_stats``: the slices of a partition they drop are never looked up in ``index``), then column
    statistics (vectorized). An index told to read footers only (``source="footers"``) gets no statistics of
    the metadata table: no partition statistics either. ``latest_state=False``: ``slices`` are an earlier state
    (time travel): only statistics of the very files read count (their footers, their metadata-table column
    statistics, their bloom filters); the metadata table's partition statistics and record / secondary indexes
    describe the latest state and are not used."""
    if not latest_state:
        partition_stats = False
    columns = filter_columns(table, filt)
    index.want(columns)
    query_type = check_query_type(query_type)
    if query_type == READ_OPTIMIZED:
        slices = read_optimized_view(slices)
    verdicts = None
    if filt is not None and partition_stats and index.uses_metadata_table and slices:
        expression = translate(filt, dict(schema) if schema else table_sarg_schema(table))
        verdicts = PartitionStatsStage(table, slices, partition_value_stats).judge(expression, columns,
                                                                                 session_time_zone)
    if verdicts is None or not verdicts.slices_dropped:
        result = Pruner(table, index, slices, query_type, partition_stats=False, latest_state=latest_state).run(
            filt, schema=schema, session_time_zone=session_time_zone, explain=explain)
        if verdicts is not None:
            result.partition_stats_note = verdicts.not_used
        return result
    survivors = [s for s, d in zip(slices, verdicts.dropped.tolist(), strict=True) if not d]
    result = Pruner(table, index, survivors, query_type, partition_stats=False, latest_state=latest_state).run(
        filt, schema=schema, session_time_zone=session_time_zone, explain=explain)
    return _with_partition_drops(result, slices, verdicts, explain)


def _with_partition_drops(result: ListStatusResult, slices: list[FileSlice], verdicts: PartitionVerdicts,
                          explain: bool) -> ListStatusResult:
    """``result`` (of the slices partition statistics kept) with the slices they dropped counted in."""
    dropped = [s for s, d in zip(slices, verdicts.dropped.tolist(), strict=True) if d]
    result.files_total += len(dropped)
    result.bytes_total += sum(s.base_file.size for s in dropped if s.base_file is not None)
    result.log_files_total += sum(len(s.log_files) for s in dropped)
    result.dropped_by_partition_stats += len(dropped)
    result.partitions_dropped_by_stats = len(verdicts.partitions_dropped)
    result.partition_stats_note = verdicts.not_used
    if explain:
        by_slice = iter(result.verdicts)
        merged: list[FileVerdict] = []
        for s, d in zip(slices, verdicts.dropped.tolist(), strict=True):
            if not d:
                merged.append(next(by_slice))
                continue
            path = s.base_file.path if s.base_file is not None else f"{s.partition_path}/{s.file_id} (log only)"
            reason = verdicts.reason(s.partition_path)
            merged.append(FileVerdict(path, s.partition_path, False, "partition statistics",
                                      verdicts.truth(s.partition_path), False, reason, (),
                                      ("metadata table partition_stats",)))
        result.verdicts = merged
    return result


_get_log_files = operator.attrgetter("log_files")
_get_base_file = operator.attrgetter("base_file")


@dataclass
class _Group:
    """Slices judged together: their positions among all slices, stage-1 (partition values only) and stage-2
    (partition values + column statistics) tables."""

    slices: list[FileSlice]
    positions: Sequence[int]        # a range for the group of all slices (no 1,000,000 int objects)
    partition: StatsTable
    full: StatsTable
    #: merged slices only: every part (base file, log files) as its own row with the partition values, which
    #: slice each part belongs to, the parts' names for explain, and whether merging keeps whole records
    parts_stats: StatsTable | None = None
    part_slice: list[int] = field(default_factory=list)
    part_names: list[str] = field(default_factory=list)
    whole_record: bool = False

    @property
    def position_array(self) -> np.ndarray:
        cached: np.ndarray | None = self.__dict__.get("_position_array")
        if cached is None:
            p = self.positions
            cached = np.arange(p.start, p.stop, p.step, dtype=np.int64) if isinstance(p, range) \
                else np.asarray(p, dtype=np.int64)
            self.__dict__["_position_array"] = cached
        return cached


class Pruner:
    """The statistics of a set of file slices, prepared once, judged against any number of filters.

    A slice's rows are its base file's rows merged with its log files. A slice without log files is judged by
    its partition values, then by its base file's statistics (an empty base file holds no row). A slice with log
    files (a snapshot query) has parts: its base file and every log file, each with statistics
    (`hive_bridge.stats.log_stats`). When the table's merge keeps whole records (overwrite-with-latest,
    event-time or commit-time ordering: `TableProperties.whole_record_merge`), every merged row is one record of
    one part, so the slice is kept when any part alone may hold a match (as Hudi's own data skipping does). When
    a merge may combine fields of several records, the slice is judged by the union of its parts' ranges, which
    bounds any such row. Either way deletes only remove rows, a log file whose statistics are unknown keeps its
    slice, and a log-only file group is judged by its logs. A read-optimized query reads base files only: log
    files are ignored and log-only groups absent."""

    def __init__(self, table: HudiTable, index: ColumnStatsIndex, slices: list[FileSlice],
                 query_type: str = SNAPSHOT, key_indexes: bool = True, stats: pa.Table | None = None,
                 counters: IndexCounters | None = None, no_log_files: bool = False,
                 partition_stats: bool = True, latest_state: bool = True) -> None:
        """``key_indexes``: let Hudi's record index, secondary indexes and bloom filters answer equality on
        keys and indexed columns (:mod:`hive_bridge.pruning.key_index`). ``stats``: the statistics of the
        slices with a base file, in order, when they are already known (``index.table(...)`` of them: a
        snapshot that followed new instants reuses the rows of the partitions they did not touch), with the
        ``counters`` that describe them; ``no_log_files``: the caller knows that every slice is a base file
        alone (the slices are then not looked at one by one); ``partition_stats``: let the metadata table's
        partition statistics drop whole partitions (:mod:`hive_bridge.pruning.partition_pruning`; their
        slices' statistics are read here all the same: :func:`plan_slices` does not read them); never with an
        index told to read footers only (``source="footers"``: no statistics of the metadata table)."""
        self.table = table
        self.use_key_indexes = key_indexes
        self.latest_state = latest_state
        self.use_partition_stats = partition_stats and index.uses_metadata_table
        self._partition_stage: PartitionStatsStage | None = None
        self._key_indexes: KeyIndexes | None = None
        #: base files whose float columns' facts were read or remembered (path -> columns), for explain
        self.proven: dict[str, list[str]] = {}
        self.query_type = check_query_type(query_type)
        if self.query_type == READ_OPTIMIZED:
            slices = read_optimized_view(slices)
        self.slices = slices
        self.sarg_schema = table_sarg_schema(table)
        self.index = index
        n = len(slices)
        if no_log_files:
            self.has_logs = np.zeros(n, dtype=bool)
            self.log_files = 0
            all_based = True
        else:
            # one pass over the slices each (C-level maps: tables have 1,000,000s of slices)
            log_counts = np.fromiter(map(len, map(_get_log_files, slices)), dtype=np.int64, count=n)
            self.has_logs = log_counts > 0
            self.log_files = int(log_counts.sum())
            bases = list(map(_get_base_file, slices))
            all_based = None not in bases
        self._based = slices if all_based else [s for s in slices if s.base_file is not None]
        self._lock = threading.Lock()
        # the index's version the statistics were taken at: a later version knows more (columns read lazily
        # from the metadata table, see ColumnStatsIndex.complete)
        self._version = index.version
        # one call: the index's counters describe the whole planning
        self._prepare(index.table(self._based) if stats is None else stats, count=True)
        self.index_counters = index.last if counters is None else counters

    def _prepare(self, stats_all: pa.Table, count: bool) -> None:
        slices = self.slices
        n = len(slices)
        groups: list[_Group] = []
        self.stats_all = stats_all
        self.bytes_total = int(pc.sum(stats_all.column("file_size")).as_py() or 0) if stats_all.num_rows else 0
        if not self.has_logs.any():
            if n:
                groups.append(self._group(slices, range(n), stats_all))
        else:
            plain_pos = np.flatnonzero(~self.has_logs).tolist()
            merged_pos = np.flatnonzero(self.has_logs).tolist()
            row_of = {id(s): j for j, s in enumerate(self._based)}
            if plain_pos:
                plain = [slices[i] for i in plain_pos]
                stats = stats_all.take(pa.array([row_of[id(s)] for s in plain], pa.int64()))
                groups.append(self._group(plain, plain_pos, stats))
            merged = [slices[i] for i in merged_pos]
            groups.append(self._merged_group(merged, merged_pos, stats_all, row_of, count))
        self.groups = groups

    @property
    def current(self) -> bool:
        """Whether the statistics hold all the index knows (no column read into it since they were made)."""
        return self._version == self.index.version

    def _current_groups(self, filt: sarg.SearchArgument | None) -> list[_Group]:
        """The groups to judge ``filt`` with: when the index read statistics it lacked for the filter's columns
        (or another query had it read some) since they were made, made again from it first."""
        index = self.index
        if filt is not None:
            index.complete(filter_columns(self.table, filt) or ())
        if index.version != self._version:
            with self._lock:
                version = index.version
                if version != self._version:
                    self._prepare(index.table(self._based, count=False), count=False)
                    self._version = version
        return self.groups

    def _group(self, group: list[FileSlice], positions: Sequence[int], stats: pa.Table) -> _Group:
        part = partition_value_stats(self.table, group, stats.column("num_rows"), stats)
        base_cols = stats.select([c for c in ("path", "partition", "file_size", "instant", "num_rows",
                                              "has_log_files") if c in stats.column_names])
        # stage 1 sees partition values only; stage 2 the column statistics with the partition values
        return _Group(group, positions, StatsTable(_concat(base_cols, part)), StatsTable(_concat(stats, part)))

    def _merged_group(self, merged: list[FileSlice], positions: list[int], stats_all: pa.Table,
                      row_of: dict[int, int], count: bool = True) -> _Group:
        index = self.index
        leaves = leaf_pairs(index.target_leaves())
        log_rows = index.log_table(merged, count=count)
        base_take = [row_of[id(s)] for s in merged if s.base_file is not None]
        base_rows = stats_all.take(pa.array(base_take, pa.int64())).drop(["has_log_files"])
        parts = pa.concat_tables([base_rows, log_rows.cast(base_rows.schema)]) if base_rows.num_rows \
            else log_rows
        part_slice = [j for j, s in enumerate(merged) if s.base_file is not None]
        part_names = [f"base {s.base_file.path}" for s in merged if s.base_file is not None]
        for j, s in enumerate(merged):
            part_slice += [j] * len(s.log_files)
            part_names += [f"log {lf.path}" for lf in s.log_files]
        union = union_stats(parts, part_slice, len(merged), leaves)
        firsts = [s.base_file or s.log_files[0] for s in merged]
        keys = pa.table({
            "path": pa.array([f.path for f in firsts], pa.string()),
            "partition": pa.array([s.partition_path for s in merged], pa.string()),
            "file_size": pa.array([(s.base_file.size if s.base_file else 0) + sum(lf.size for lf in s.log_files)
                                   for s in merged], pa.int64()),
            "instant": pa.array([s.base_instant for s in merged], pa.string()),
            # the union row bounds the merged rows: judged like any file, never kept for having logs
            "has_log_files": pa.array([False] * len(merged), pa.bool_()),
        })
        stats = _concat(keys, union)
        group = self._group(merged, positions, stats)
        with_flag = parts.append_column("has_log_files", pa.array([False] * parts.num_rows, pa.bool_()))
        part_slices = [merged[j] for j in part_slice]
        group.parts_stats = StatsTable(_concat(with_flag, partition_value_stats(
            self.table, part_slices, with_flag.column("num_rows"), with_flag)))
        group.part_slice, group.part_names = part_slice, part_names
        group.whole_record = self.table.properties.whole_record_merge
        return group

    def run(self, filt: sarg.SearchArgument | None, *, schema: Mapping[str, str] | None = None,
            session_time_zone: str = "UTC", explain: bool = False) -> ListStatusResult:
        """Judge the slices against a filter. Verdicts stay arrays until the end: slice and file objects are made
        for the kept slices only, and reasons only with ``explain``."""
        slices = self.slices
        n = len(slices)
        result = ListStatusResult(files=[], slices=[], sarg=filt, query_type=self.query_type,
                                  unknown_columns=unknown_columns(filt, schema or self.sarg_schema))
        result.files_total = n
        result.bytes_total = self.bytes_total
        result.log_files_total = self.log_files
        result.log_files_unknown = self.index_counters.unreadable_log_files
        result.listing_source = getattr(self.table, "listing_source", "folders")
        result.stats_sources = self.stats_sources
        keep = np.ones(n, dtype=bool)
        unknown = np.zeros(n, dtype=bool)
        # explain only: per-slice stage, TruthValue, reason and parts
        stages: list[str] = ["no-filter"] * n if explain else []
        truths: list[sarg.TruthValue | None] = [None] * n if explain else []
        reasons: list[str] = [""] * n if explain else []
        parts: list[tuple[tuple[str, str], ...]] = [()] * n if explain else []
        if filt is not None:
            expression = translate(filt, dict(schema) if schema else self.sarg_schema)
            if self.use_key_indexes:
                # the record keys the filter fixes on a complex-key table, for the key indexes to answer
                expression = self._key_index().with_derived_keys(expression)
            groups = self._current_groups(filt)
            pstats = None
            if self.use_partition_stats:
                if self._partition_stage is None:
                    self._partition_stage = PartitionStatsStage(self.table, slices, partition_value_stats)
                pstats = self._partition_stage.judge(expression, filter_columns(self.table, filt), session_time_zone)
                result.partition_stats_note = pstats.not_used
                result.partitions_dropped_by_stats = len(pstats.partitions_dropped)
            ps_keep = ~pstats.dropped if pstats is not None else np.ones(n, dtype=bool)
            answers = self._index_answers(expression, session_time_zone, ps_keep)
            result.index_sources = sorted({a.source for a in answers.values()})
            # float columns stored in the files (a partition column only in the paths has nothing to read)
            stored = {leaf.name for leaf in self.index.target_leaves()}
            floats = [c for c in fp.float_columns(self.sarg_types, filter_columns(self.table, filt)) if c in stored]
            proofs = None
            if floats and config.settings().float_proofs > 0:
                proofs = ProofContext(self.table, self.index.max_workers, self._lock, self.proven)
                result.float_proofs = proofs.report
            for g in groups:
                positions = g.position_array
                masks = {(leaf.column, leaf.literals): pa.array(a.mask[positions]) for leaf, a in answers.items()}
                part_masks: dict[Any, pa.Array] = {}
                if g.parts_stats is not None:
                    part_positions = positions[np.asarray(g.part_slice, dtype=np.int64)]
                    part_masks = {(leaf.column, leaf.literals): pa.array(a.mask[part_positions])
                                  for leaf, a in answers.items()}
                first = prune(expression, g.partition, session_tz=session_time_zone)
                second = prune(expression, g.full.answering(masks), session_tz=session_time_zone)
                keep1 = first.keep.to_numpy(zero_copy_only=False)
                if proofs is not None and g.parts_stats is None:
                    second = prove_base_files(proofs, g, expression, masks, keep1 & ps_keep[positions], second,
                                              session_time_zone, floats)
                elif proofs is not None:
                    second = prove_merged_slices(proofs, g, expression, masks, part_masks, keep1 & ps_keep[positions],
                                                 second, session_time_zone, floats)
                keep2 = second.keep.to_numpy(zero_copy_only=False)
                unknown2 = second.unknown.to_numpy(zero_copy_only=False)
                truth2: TruthColumn = second.truth
                alone = None
                if g.parts_stats is not None and (g.whole_record or explain):
                    alone = prune(expression, g.parts_stats.answering(part_masks), session_tz=session_time_zone)
                    if g.whole_record:
                        keep2, unknown2, truth2 = any_part(alone, g.part_slice, len(g.slices))
                keep_ps = ps_keep[positions]
                kept = keep1 & keep_ps & keep2
                keep[positions] = kept
                unknown[positions] = kept & unknown2
                result.dropped_by_partition += int(np.count_nonzero(~keep1))
                result.dropped_by_partition_stats += int(np.count_nonzero(keep1 & ~keep_ps))
                result.dropped_by_statistics += int(np.count_nonzero(keep1 & keep_ps & ~keep2))
                result.kept_unknown += int(np.count_nonzero(kept & unknown2))
                if explain:
                    for j, i in enumerate(g.positions):
                        if not keep1[j]:
                            stages[i], truths[i] = "partition", first.truth[j]
                            reasons[i] = first.reason(j)
                        elif not keep_ps[j] and pstats is not None:
                            part = slices[i].partition_path
                            stages[i], truths[i] = "partition statistics", pstats.truth(part)
                            reasons[i] = pstats.reason(part)
                        else:
                            stages[i], truths[i] = "statistics", truth2[j]
                            reasons[i] = second.reason(j)
                            if answers:
                                # which index answered each of its leaves, and the verdict with its answers
                                said = [f"{leaf}: " + (f"not excluded by {a.source}" if a.mask[i] else
                                                       f"{a.source}: no row of this file group has it")
                                        for leaf, a in answers.items()]
                                stages[i] = "statistics + " + ", ".join(sorted({a.source for a in answers.values()}))
                                reasons[i] = (f"root is {truth2[j].name} with the indexes' answers: "
                                              + "; ".join(said) + f"; statistics alone: {reasons[i]}")
                    if alone is not None:
                        self._explain_parts(g, alone, keep.tolist(), parts, reasons)
        kept_idx = np.flatnonzero(keep)
        result.kept_log_files = int(np.count_nonzero(self.has_logs[kept_idx]))
        result.slices = [slices[i] for i in kept_idx.tolist()]
        result.files = [FileStatus(s.base_file.full_path, s.base_file.size, int(s.base_file.mtime * 1000))
                        for s in result.slices if s.base_file is not None]
        if explain:
            for i, s in enumerate(slices):
                path = s.base_file.path if s.base_file is not None else f"{s.partition_path}/{s.file_id} (log only)"
                files = ([s.base_file.path] if s.base_file is not None else []) + [lf.path for lf in s.log_files]
                sources = tuple(dict.fromkeys(self.source_of(f) for f in files))
                sources += tuple(self._proven_source(s, f) for f in files if f in self.proven)
                result.verdicts.append(FileVerdict(path, s.partition_path, bool(keep[i]), stages[i], truths[i],
                                                   bool(unknown[i]), reasons[i], parts[i], sources))
        return result

    @property
    def sarg_types(self) -> dict[str, pa.DataType]:
        """The statistics columns' arrow types (every group's full table has them all)."""
        return dict(self.groups[0].full.types) if self.groups else {}

    def _proven_source(self, s: FileSlice, path: str) -> str:
        """A file of a slice whose float facts were read, as explain names it among the slice's sources."""
        what = "the file" if not s.log_files else "the base file" if s.base_file is not None and \
            path == s.base_file.path else f"log file {path.rsplit('/', 1)[-1]}"
        return f"float facts read from {what} ({', '.join(dict.fromkeys(self.proven[path]))})"

    def source_of(self, path: str) -> str:
        """Where a file's statistics came from (for explain)."""
        if self.table.properties.base_files_are_parquet or ".log." in path:
            return self.index.read_sources.get(path, "hive-bridge index")
        return f"none ({self.table.base_file_format} file)"

    @property
    def stats_sources(self) -> dict[str, int]:
        c = self.index_counters
        out = {"metadata table": c.files_from_mdt + c.log_files_from_mdt,
               "parquet footers": c.files_from_footers, "log blocks": c.log_files_read,
               "hive-bridge index": c.files_from_index + c.log_files_from_index,
               "none": c.files_without_statistics + c.files_without_mdt_entry}
        return {k: v for k, v in out.items() if v}

    def _key_index(self) -> KeyIndexes:
        """The table's key indexes for these slices (opened on first use)."""
        if self._key_indexes is None:
            self._key_indexes = KeyIndexes.open(self.table, self.slices, latest_state=self.latest_state)
        return self._key_indexes

    def _index_answers(self, expression: HudiExpression, session_time_zone: str = "UTC",
                       partition_keep: np.ndarray | None = None) -> dict[Predicate, IndexAnswer]:
        """Masks from Hudi's key indexes for the expression's equality leaves (opened on first use). Bloom
        filters are read only for the slices the statistics alone (and the partition statistics,
        ``partition_keep``) keep: the others are dropped anyway."""
        if not self.use_key_indexes:
            return {}
        if not self._key_index().may_answer(expression):
            return {}
        candidates = np.zeros(len(self.slices), dtype=bool)
        for g in self.groups:
            first = prune(expression, g.partition, session_tz=session_time_zone)
            second = prune(expression, g.full, session_tz=session_time_zone)
            kept = first.keep.to_numpy(zero_copy_only=False) & second.keep.to_numpy(zero_copy_only=False)
            if g.parts_stats is not None:
                kept[:] = True                  # merged slices: judged by their parts later, keep them all in
            candidates[g.position_array[kept]] = True
        if partition_keep is not None:
            candidates &= partition_keep
        return self._key_index().masks(expression, candidates)

    def _explain_parts(self, g: _Group, alone: PruneResult, keep: list[bool], parts: list[tuple[tuple[str, str], ...]],
                       reasons: list[str]) -> None:
        """Each part of a merged slice judged alone (for explain): which parts could hold a matching row."""
        per_slice: dict[int, list[tuple[str, str]]] = {}
        keeps = alone.keep.to_pylist()
        for k, j in enumerate(g.part_slice):
            per_slice.setdefault(j, []).append((g.part_names[k], alone.truth[k].name
                                                + ("" if keeps[k] else " (no match)")))
        how = ("whole-record merge: each merged row is one part's record, so the slice is kept when a part may "
               "match" if g.whole_record else
               "fields of several records may be merged into one row: judged by the union of the parts' ranges")
        for j, i in enumerate(g.positions):
            found = per_slice.get(j, [])
            parts[i] = tuple(found)
            keepers = [name for name, verdict in found if not verdict.endswith("(no match)")]
            if keep[i]:
                why = (f"kept by {', '.join(keepers)}" if keepers else
                       "kept by the union of its parts' ranges (no part alone may match)")
            else:
                why = "no part may match"
            detail = "" if g.whole_record else f"; union: {reasons[i]}"
            reasons[i] = f"merged slice of {len(found)} parts ({how}), {why}{detail}"


def _concat(left: pa.Table, right: pa.Table) -> pa.Table:
    out = left
    for name in right.column_names:
        if name in out.column_names:
            out = out.drop([name])
        out = out.append_column(name, right.column(name))
    return out

