"""The pruner: a set of latest file slices judged against filters, the way the input format's listStatus
prunes the FileSystemView — partition values first, then column statistics, vectorized.

The result (:class:`ListStatusResult`) lists the slices kept, as Hadoop ``FileStatus``es of their base files,
with the counts users see: dropped by partition, dropped by statistics, kept only because something was unknown,
kept because of log files; with ``explain``, one :class:`FileVerdict` per slice with its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

import sarg
from hive_bridge.expression import translate
from hive_bridge.hive_types import table_sarg_schema
from hive_bridge.pruning.vectorized import StatsTable, prune
from hive_bridge.table import FileSlice, HudiTable
from hive_bridge.table.fsview import HIVE_DEFAULT_PARTITION
from hive_bridge.table.stats import ColumnStatsIndex
from hive_bridge.table.stats_table import (
    BOUND_STATS,
    MAX,
    MAX_EXACT,
    MIN,
    MIN_EXACT,
    NULL_COUNT,
    stat_name,
)


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
    stage: str  # "partition", "statistics", "log-files", "no-base-file", "no-filter"
    truth: sarg.TruthValue | None
    unknown: bool
    reason: str = ""


@dataclass
class ListStatusResult:
    """The files listStatus returns, and the counts users see."""

    files: list[FileStatus]
    slices: list[FileSlice]
    files_total: int = 0
    bytes_total: int = 0
    dropped_by_partition: int = 0
    dropped_by_statistics: int = 0
    kept_unknown: int = 0
    kept_log_files: int = 0
    sarg: sarg.SearchArgument | None = None
    verdicts: list[FileVerdict] = field(default_factory=list)

    @property
    def files_kept(self) -> int:
        return len(self.files)

    @property
    def bytes_kept(self) -> int:
        return sum(f.length for f in self.files)


def partition_stats(table: HudiTable, slices: list[FileSlice], num_rows: pa.Array | None,
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
                for k in BOUND_STATS:
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
    return pa.table(columns) if columns else pa.table({"_": pa.nulls(n)}).drop(["_"])


def _cast_each(values: list[Any], typ: pa.DataType) -> pa.Array:
    out = []
    for v in values:
        try:
            out.append(pa.array([v], pa.string()).cast(typ)[0].as_py() if v is not None else None)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            out.append(None)
    return pa.array(out, typ)


def prune_slices(table: HudiTable, index: ColumnStatsIndex, slices: list[FileSlice],
                 filt: sarg.SearchArgument | None, schema: Mapping[str, str] | None,
                 session_time_zone: str = "UTC", explain: bool = False) -> ListStatusResult:
    """Keep the slices a filter may match: partition values first, then column statistics (vectorized)."""
    return Pruner(table, index, slices).run(filt, schema, session_time_zone, explain)


class Pruner:
    """The statistics of a set of file slices, prepared once, judged against any number of filters.

    A slice's rows are its base file's rows merged with its log files. A slice without log files is judged by
    its partition values, then by its base file's statistics (an empty base file holds no row). A slice with log
    files, or without a base file, is judged only by what holds for every record of its file group whatever the
    logs say: the values of partition columns that live only in the partition path. Nothing about its base file
    alone (statistics, row count, partition columns stored in the file) may drop it: an update may move a value
    out of the base file's range, and a log block may insert rows into a slice whose base file is empty."""

    def __init__(self, table: HudiTable, index: ColumnStatsIndex, slices: list[FileSlice]) -> None:
        self.table = table
        self.slices = slices
        self.plain = [s for s in slices if s.base_file is not None and not s.log_files]
        self.merged = [s for s in slices if s.base_file is None or s.log_files]
        self.sarg_schema = table_sarg_schema(table)
        self._partition: StatsTable | None = None
        self._full: StatsTable | None = None
        self._path_only: StatsTable | None = None
        if self.plain:
            stats = index.table(self.plain)
            part = partition_stats(table, self.plain, stats.column("num_rows"), stats)
            base_cols = stats.select([c for c in ("path", "partition", "file_size", "instant", "num_rows")
                                      if c in stats.column_names])
            # Stage 1 sees partition values only; stage 2 the column statistics with the partition values.
            self._partition = StatsTable(_concat(base_cols, part))
            self._full = StatsTable(_concat(stats, part))
        if self.merged:
            self._path_only = StatsTable(partition_stats(table, self.merged, None, None))

    def run(self, filt: sarg.SearchArgument | None, schema: Mapping[str, str] | None = None,
            session_time_zone: str = "UTC", explain: bool = False) -> ListStatusResult:
        slices = self.slices
        result = ListStatusResult(files=[], slices=[], sarg=filt)
        result.files_total = len(slices)
        result.bytes_total = sum(s.base_file.size for s in slices if s.base_file is not None)
        keep = [True] * len(slices)
        stages = ["no-filter"] * len(slices)
        truths: list[sarg.TruthValue | None] = [None] * len(slices)
        unknown = [False] * len(slices)
        reasons = [""] * len(slices)
        positions = {id(s): i for i, s in enumerate(slices)}
        if filt is not None:
            expression = translate(filt, dict(schema) if schema else self.sarg_schema)
            if self._partition is not None and self._full is not None:
                first = prune(expression, self._partition, session_tz=session_time_zone)
                second = prune(expression, self._full, session_tz=session_time_zone)
                keep1, keep2 = first.keep.to_pylist(), second.keep.to_pylist()
                unknown2 = second.unknown.to_pylist()
                for j, s in enumerate(self.plain):
                    i = positions[id(s)]
                    truths[i] = second.truth[j]
                    if not keep1[j]:
                        keep[i], stages[i] = False, "partition"
                        truths[i] = first.truth[j]
                        result.dropped_by_partition += 1
                    elif not keep2[j]:
                        keep[i], stages[i] = False, "statistics"
                        result.dropped_by_statistics += 1
                    else:
                        stages[i] = "statistics"
                        if unknown2[j]:
                            unknown[i] = True
                            result.kept_unknown += 1
                    if explain:
                        reasons[i] = second.reason(j) if stages[i] != "partition" else first.reason(j)
            if self._path_only is not None:
                by_path = prune(expression, self._path_only, session_tz=session_time_zone)
                keep_path = by_path.keep.to_pylist()
                for j, s in enumerate(self.merged):
                    i = positions[id(s)]
                    if not keep_path[j]:
                        keep[i], stages[i] = False, "partition"
                        truths[i] = by_path.truth[j]
                        result.dropped_by_partition += 1
                        if explain:
                            reasons[i] = "partition path: " + by_path.reason(j)
                    else:
                        stages[i] = "log-files" if s.base_file is not None else "no-base-file"
                        if explain:
                            reasons[i] = ("kept: the slice has log files (its base file's statistics do not bound "
                                          "the merged rows)" if s.base_file is not None else
                                          "kept: a file group of log files only (no statistics)")
        for i, s in enumerate(slices):
            if keep[i] and (s.base_file is None or s.log_files):
                if stages[i] == "no-filter" and s.base_file is None:
                    stages[i] = "no-base-file"
                result.kept_log_files += 1
            if keep[i]:
                result.slices.append(s)
                if s.base_file is not None:
                    result.files.append(FileStatus(s.base_file.full_path, s.base_file.size,
                                                   int(s.base_file.mtime * 1000)))
            if explain:
                path = s.base_file.path if s.base_file is not None else f"{s.partition_path}/{s.file_id} (log only)"
                result.verdicts.append(FileVerdict(path, s.partition_path, keep[i], stages[i], truths[i],
                                                   unknown[i], reasons[i]))
        return result


def _concat(left: pa.Table, right: pa.Table) -> pa.Table:
    out = left
    for name in right.column_names:
        if name in out.column_names:
            out = out.drop([name])
        out = out.append_column(name, right.column(name))
    return out
