"""Hive's storage-handler contract for Hudi, emulated: HiveStorageHandler + HiveStoragePredicateHandler,
and the input format's listStatus that prunes the FileSystemView's latest file slices.

Hive hands the handler a JobConf (a string map with Hive's keys) and a filter; ``decompose_predicate`` says what
the input format can use (the pushed SearchArgument) and what Hive must still apply to rows (the residual: all
of it, since statistics prune whole files, never rows). ``HoodieParquetInputFormat.list_status`` then lists the
latest base files, drops those whose partition values prove no row can match, then those whose column
statistics prove it, and keeps everything else — counting every file kept only because something was unknown.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

import sarg
from hive_bridge.errors import HiveBridgeError
from hive_bridge.table import FileSlice, HudiTable, HudiTableError
from hive_bridge.table.stats import ColumnStatsIndex

# Hive's JobConf keys (ql/.../TableScanDesc, ConvertAstToSearchArg, serdeConstants, FileInputFormat).
FILTER_EXPR_SERIALIZED = "hive.io.filter.expr.serialized"
FILTER_TEXT = "hive.io.filter.text"
SARG_PUSHDOWN = "sarg.pushdown"
COLUMNS = "columns"
COLUMNS_TYPES = "columns.types"
INPUT_DIR = "mapreduce.input.fileinputformat.inputdir"
LOCATION = "location"
SESSION_TIME_ZONE = "hive.local.time.zone"

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


class HandlerError(HiveBridgeError):
    """The storage handler or input format cannot do what was asked (no table, unreadable filter...)."""


class JobConf(dict[str, str]):
    """Hive's JobConf as a plain string map."""

    def schema(self) -> dict[str, str]:
        """Column name -> Hive type from ``columns`` / ``columns.types`` (empty if absent)."""
        names = [n for n in self.get(COLUMNS, "").split(",") if n]
        types = split_hive_types(self.get(COLUMNS_TYPES, ""))
        if names and types and len(names) != len(types):
            raise HandlerError(f"{COLUMNS} has {len(names)} names but {COLUMNS_TYPES} has {len(types)} types")
        return dict(zip(names, types, strict=False))


def split_hive_types(text: str) -> list[str]:
    """Split Hive's ``columns.types`` (``:``-separated, or ``,``) without breaking ``decimal(10,2)`` or
    ``struct<a:int,b:string>``."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch in ":," and depth == 0:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if current or out:
        out.append("".join(current).strip())
    return [t for t in out if t]


@dataclass(frozen=True)
class TableDesc:
    """What Hive knows of a table: location, columns (name, Hive type), partition keys, parameters."""

    name: str
    location: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[tuple[str, str], ...] = ()
    parameters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DecomposedPredicate:
    """Hive's DecomposedPredicate: what the input format uses, and what Hive re-applies to every row."""

    pushed_predicate: str
    pushed_predicate_object: sarg.SearchArgument
    residual_predicate: str


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


def read_job_filter(job_conf: Mapping[str, str], schema: Mapping[str, str] | None = None
                    ) -> sarg.SearchArgument | None:
    """The filter a JobConf carries: ``sarg.pushdown`` (SearchArgument text in any printed form; real Hive
    puts Kryo there, which is not readable outside the JVM) or ``hive.io.filter.text`` (HiveQL)."""
    for key in (SARG_PUSHDOWN, FILTER_TEXT):
        text = job_conf.get(key)
        if not text:
            continue
        try:
            return sarg.read_filter(text, dict(schema) if schema else None)
        except sarg.SargError as exc:
            raise HandlerError(f"{key}: {exc}") from None
    return None


class HudiStorageHandler:
    """The Python counterpart of Hudi's Hive storage handler (HiveStorageHandler + HiveStoragePredicateHandler)."""

    INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
    OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
    SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    HANDLER_CLASS = "org.apache.hudi.hadoop.hive.HoodieStorageHandler"

    def __init__(self, session_time_zone: str = "UTC") -> None:
        self.session_time_zone = session_time_zone

    def get_input_format_class(self) -> str:
        return self.INPUT_FORMAT

    def get_output_format_class(self) -> str:
        return self.OUTPUT_FORMAT

    def get_serde_class(self) -> str:
        return self.SERDE

    def get_meta_hook(self) -> HudiMetaHook:
        return HudiMetaHook()

    def configure_table_job_properties(self, table: TableDesc, job_properties: MutableMapping[str, str]) -> None:
        """Put the table's location and schema into the job's properties, as Hive does for a table scan."""
        job_properties[LOCATION] = table.location
        job_properties[INPUT_DIR] = table.location
        cols = list(table.columns) + list(table.partition_keys)
        job_properties[COLUMNS] = ",".join(name for name, _ in cols)
        job_properties[COLUMNS_TYPES] = ":".join(typ for _, typ in cols)

    configure_input_job_properties = configure_table_job_properties

    def decompose_predicate(self, job_conf: Mapping[str, str], predicate: str | sarg.SearchArgument
                            ) -> DecomposedPredicate | None:
        """Split a filter into what the input format prunes with and what Hive applies to rows.

        Returns None when nothing can be pushed (the filter translates to "unknown" as a whole). The residual is
        always the whole filter: file pruning is inexact, so every row must still be filtered.
        """
        from hive_bridge.expression import Constant, translate

        schema = JobConf(job_conf).schema()
        if isinstance(predicate, sarg.SearchArgument):
            parsed, text = predicate, str(predicate)
        else:
            try:
                parsed = sarg.read_filter(predicate, schema or None)
            except sarg.SargError as exc:
                raise HandlerError(f"cannot read the predicate: {exc}") from None
            text = predicate
        expression = translate(parsed, schema or None)
        if isinstance(expression, Constant) and expression.value is sarg.TruthValue.YES_NO_NULL:
            return None
        return DecomposedPredicate(pushed_predicate=str(parsed), pushed_predicate_object=parsed,
                                   residual_predicate=text)


class HudiMetaHook:
    """Hive's HiveMetaHook for Hudi tables: a table must point at a Hudi table folder; dropping never deletes."""

    def pre_create_table(self, table: TableDesc) -> None:
        try:
            HudiTable.open(table.location.removeprefix("file:"))
        except HudiTableError as exc:
            raise HandlerError(f"table {table.name}: {exc}") from None

    def commit_create_table(self, table: TableDesc) -> None:
        """Nothing to do: the Hudi table already exists."""

    def rollback_create_table(self, table: TableDesc) -> None:
        """Nothing to undo."""

    def pre_drop_table(self, table: TableDesc) -> None:
        """External data: dropping the Hive table keeps the Hudi files."""

    def commit_drop_table(self, table: TableDesc, delete_data: bool) -> None:
        """Never deletes the Hudi table's files."""

    def rollback_drop_table(self, table: TableDesc) -> None:
        """Nothing to undo."""


class HoodieParquetInputFormat:
    """listStatus over a Hudi table: the latest base files, pruned by partition values, then by statistics."""

    def __init__(self, session_time_zone: str = "UTC", use_index: bool = True) -> None:
        self.session_time_zone = session_time_zone
        self.use_index = use_index
        self._tables: dict[str, tuple[HudiTable, ColumnStatsIndex]] = {}

    def _open(self, location: str) -> tuple[HudiTable, ColumnStatsIndex]:
        root = location.removeprefix("file:")
        cached = self._tables.get(root)
        if cached is None:
            try:
                table = HudiTable.open(root)
            except HudiTableError as exc:
                raise HandlerError(str(exc)) from None
            cached = self._tables[root] = (table, ColumnStatsIndex(table, persist=self.use_index))
        return cached

    def list_status(self, job_conf: Mapping[str, str], *, explain: bool = False,
                    filter_override: sarg.SearchArgument | None = None) -> ListStatusResult:
        """The input files for a job: ``mapreduce.input.fileinputformat.inputdir`` (the table root, or
        comma-separated partition folders of one table) and the filter in ``sarg.pushdown`` /
        ``hive.io.filter.text``."""
        dirs = [d for d in job_conf.get(INPUT_DIR, job_conf.get(LOCATION, "")).split(",") if d]
        if not dirs:
            raise HandlerError(f"no input: set {INPUT_DIR} to the Hudi table's location")
        table, index = self._open(_find_root(dirs[0]))
        schema = JobConf(job_conf).schema()
        filt = filter_override if filter_override is not None else read_job_filter(job_conf, schema)
        slices = _slices_under(table, dirs)
        return prune_slices(table, index, slices, filt, schema or None, self.session_time_zone, explain)


def _find_root(path: str) -> str:
    """The Hudi table root at or above a partition folder."""
    from pathlib import Path

    p = Path(path.removeprefix("file:")).absolute()
    for candidate in (p, *p.parents):
        if (candidate / ".hoodie" / "hoodie.properties").is_file():
            return str(candidate)
    raise HandlerError(f"{path}: not inside a Hudi table (no .hoodie/hoodie.properties at or above it)")


def _slices_under(table: HudiTable, dirs: list[str]) -> list[FileSlice]:
    from pathlib import Path

    slices = table.latest_file_slices()
    root = Path(table.base_path).absolute()
    wanted: list[str] = []
    for d in dirs:
        rel = Path(d.removeprefix("file:")).absolute().relative_to(root).as_posix()
        if rel in ("", "."):
            return slices
        wanted.append(rel.rstrip("/"))
    return [s for s in slices if any(s.partition_path == w or s.partition_path.startswith(w + "/")
                                     for w in wanted)]


_STAT_SUFFIXES = ("min", "max", "null_count", "min_exact", "max_exact")


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
            if stats is not None and all(f"{name}::{k}" in stats.column_names for k in _STAT_SUFFIXES):
                for k in _STAT_SUFFIXES:
                    columns[f"{name}::{k}"] = stats.column(f"{name}::{k}")
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
        columns[f"{name}::min"] = typed
        columns[f"{name}::max"] = typed
        columns[f"{name}::null_count"] = pa.array(null_counts, pa.int64())
        columns[f"{name}::min_exact"] = pa.array([True] * n)
        columns[f"{name}::max_exact"] = pa.array([True] * n)
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
        from hive_bridge.vectorized import StatsTable

        self.table = table
        self.slices = slices
        self.plain = [s for s in slices if s.base_file is not None and not s.log_files]
        self.merged = [s for s in slices if s.base_file is None or s.log_files]
        self.sarg_schema = _table_sarg_schema(table)
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
        from hive_bridge.expression import translate
        from hive_bridge.vectorized import prune

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


def _table_sarg_schema(table: HudiTable) -> dict[str, str]:
    """Hive type names of the table's columns, for typing literals of text filters."""
    from hive_bridge.hive_types import arrow_to_hive

    return {f.name: arrow_to_hive(f.type) for f in table.arrow_schema()}


def table_desc(table: HudiTable, name: str | None = None) -> TableDesc:
    from hive_bridge.hive_types import arrow_to_hive

    schema = table.arrow_schema()
    parts = set(table.properties.partition_fields)
    cols = tuple((f.name, arrow_to_hive(f.type)) for f in schema if f.name not in parts)
    keys = tuple((f.name, arrow_to_hive(f.type)) for f in schema if f.name in parts)
    return TableDesc(name or table.name, str(table.base_path), cols, keys,
                     {"storage_handler": HudiStorageHandler.HANDLER_CLASS})


def job_conf_for(table: HudiTable, filter_text: str | None = None) -> JobConf:
    """A JobConf as Hive would prepare it for a scan of ``table`` with a filter (SARG or HiveQL text)."""
    conf = JobConf()
    HudiStorageHandler().configure_table_job_properties(table_desc(table), conf)
    if filter_text:
        from sarg import hiveql

        conf[SARG_PUSHDOWN if hiveql.looks_like_sarg(filter_text) else FILTER_TEXT] = filter_text
    return conf
