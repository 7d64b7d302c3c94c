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
from dataclasses import dataclass, field, replace

import sarg
from hive_bridge.errors import HiveBridgeError, HudiTableError
from hive_bridge.hive.incremental import IncrementalPull, consume_commit, incremental_pull, pulled_instants
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.pruning.pruner import (
    READ_OPTIMIZED,
    SNAPSHOT,
    ListStatusResult,
    check_query_type,
)
from hive_bridge.pruning.snapshot import TableSnapshot, default_cache
from hive_bridge.storage.core import StorageError
from hive_bridge.table.table import HudiTable
from sarg.schema import split_type_list

# Hive's JobConf keys (ql/.../TableScanDesc, ConvertAstToSearchArg, serdeConstants, FileInputFormat).
FILTER_EXPR_SERIALIZED = "hive.io.filter.expr.serialized"
FILTER_TEXT = "hive.io.filter.text"
SARG_PUSHDOWN = "sarg.pushdown"
COLUMNS = "columns"
COLUMNS_TYPES = "columns.types"
INPUT_DIR = "mapreduce.input.fileinputformat.inputdir"
LOCATION = "location"
SESSION_TIME_ZONE = "hive.local.time.zone"

class HandlerError(HiveBridgeError):
    """The storage handler or input format cannot do what was asked (no table, unreadable filter...)."""


class JobConf(dict[str, str]):
    """Hive's JobConf as a plain string map."""

    def schema(self) -> dict[str, str]:
        """Column name -> Hive type from ``columns`` / ``columns.types`` (empty if absent)."""
        names = [n for n in self.get(COLUMNS, "").split(",") if n]
        types = split_type_list(self.get(COLUMNS_TYPES, ""))
        if names and types and len(names) != len(types):
            raise HandlerError(f"{COLUMNS} has {len(names)} names but {COLUMNS_TYPES} has {len(types)} types")
        return dict(zip(names, types, strict=False))


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
        from hive_bridge.filters.expression import Constant, translate

        schema = JobConf(job_conf).schema()
        if isinstance(predicate, sarg.SearchArgument):
            parsed, text = predicate, str(predicate)
        else:
            try:
                parsed = sarg.read_filter(predicate, schema or None)
            except sarg.SargError as exc:
                raise HandlerError(f"cannot read the predicate: {exc}") from None
            text = predicate
        # what Hive gets back is a SearchArgument, which holds no prefix conditions: judged without them
        expression = translate(replace(parsed, prefixes=()), schema or None)
        if isinstance(expression, Constant) and expression.value is sarg.TruthValue.YES_NO_NULL:
            return None
        return DecomposedPredicate(pushed_predicate=str(parsed), pushed_predicate_object=parsed,
                                   residual_predicate=text)


class HudiMetaHook:
    """Hive's HiveMetaHook for Hudi tables: a table must point at a Hudi table folder; dropping never deletes."""

    def pre_create_table(self, table: TableDesc) -> None:
        try:
            HudiTable.open(table.location.removeprefix("file:"))
        except (HudiTableError, StorageError) as exc:
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
    """listStatus over a Hudi table: the latest file slices, pruned by partition values, then by statistics.

    As Hudi's own class, this is the read-optimized input format (Hive sync's ``<t>_ro`` table of a
    merge-on-read table): base files only, log files ignored, judged by base file statistics.
    :class:`HoodieParquetRealtimeInputFormat` is the snapshot one (``<t>`` / ``<t>_rt``)."""

    QUERY_TYPE = READ_OPTIMIZED

    def __init__(self, session_time_zone: str = "UTC", use_index: bool = True,
                 query_type: str | None = None) -> None:
        self.session_time_zone = session_time_zone
        self.use_index = use_index
        self.query_type = check_query_type(query_type or self.QUERY_TYPE)

    def _open(self, location: str) -> TableSnapshot:
        """The table's current snapshot (the process's cache: re-used while its timeline is unchanged, followed
        when an instant completed since the last query: never a stale listing)."""
        root = location.removeprefix("file:")
        try:
            return default_cache().get(root, persist=self.use_index)
        except (HudiTableError, StorageError) as exc:
            raise HandlerError(str(exc)) from None

    def list_status(self, job_conf: Mapping[str, str], *, explain: bool = False,
                    filter_override: sarg.SearchArgument | None = None) -> ListStatusResult:
        """The input files for a job: ``mapreduce.input.fileinputformat.inputdir`` (the table root, or
        comma-separated partition folders of one table) and the filter in ``sarg.pushdown`` /
        ``hive.io.filter.text``."""
        dirs = [d for d in job_conf.get(INPUT_DIR, job_conf.get(LOCATION, "")).split(",") if d]
        if not dirs:
            raise HandlerError(f"no input: set {INPUT_DIR} to the Hudi table's location")
        snap = self._open(_find_root(dirs[0]))
        schema = JobConf(job_conf).schema()
        filt = filter_override if filter_override is not None else read_job_filter(job_conf, schema)
        pull = incremental_pull(job_conf, snap.table)
        if pull is not None:
            return self._list_incremental(snap, pull, dirs, filt, schema, explain)
        as_of = consume_commit(job_conf, snap.table)
        if as_of is not None:
            key, value = as_of
            try:
                snap = TableSnapshot.of(snap.table, snap.index, as_of=value, where=key)
            except HudiTableError as exc:
                raise HandlerError(f"{key}: {exc}") from None
        slices = _slices_under(snap.table, dirs, snap.slices)
        return snap.plan(filt, schema=schema or None, session_time_zone=self.session_time_zone, explain=explain,
                         query_type=self.query_type, slices=None if len(slices) == len(snap.slices) else slices)


    def _list_incremental(self, snap: TableSnapshot, pull: IncrementalPull, dirs: list[str],
                          filt: sarg.SearchArgument | None, schema: Mapping[str, str], explain: bool
                          ) -> ListStatusResult:
        """An incremental pull (:mod:`hive_bridge.hive.incremental`): the base files Hudi's input format lists
        for it under ``dirs``, then pruned by the filter with those files' own statistics."""
        table = snap.table
        if self.query_type != READ_OPTIMIZED and table.properties.is_mor:
            raise HandlerError(f"{table.base_path}: hoodie.{pull.name}.consume.mode=INCREMENTAL on the realtime "
                               "input format (a merge-on-read snapshot query) is not emulated; the read-optimized "
                               "input format (Hive sync's <table>_ro) lists base files incrementally")
        rels = [_relative(table, d) for d in dirs]
        wanted = {p for p in table.partition_paths() if _under(p, rels)}
        files = [s for s in table.base_files_written_by(pulled_instants(table.timeline, pull))
                 if s.partition_path in wanted]
        return TableSnapshot.of(table, snap.index, files, latest_state=False).plan(
            filt, schema=schema or None, session_time_zone=self.session_time_zone, explain=explain,
            query_type=READ_OPTIMIZED)


def _under(partition: str, rels: list[str]) -> bool:
    return any(r == "" or partition == r.rstrip("/") or partition.startswith(r.rstrip("/") + "/") for r in rels)


class HoodieParquetRealtimeInputFormat(HoodieParquetInputFormat):
    """listStatus of a snapshot (realtime) query: file slices with their log files, each judged by the union of
    its base file's and log files' statistics (a log-only file group by its logs)."""

    QUERY_TYPE = SNAPSHOT


def input_format_for(input_format_class: str | None, table_name: str = "", session_time_zone: str = "UTC",
                     use_index: bool = True) -> HoodieParquetInputFormat:
    """The emulated input format for a metastore table: the realtime one for
    ``HoodieParquetRealtimeInputFormat`` (or a ``_rt`` table), the read-optimized one for
    ``HoodieParquetInputFormat`` (or a ``_ro`` table); snapshot when nothing says."""
    cls = input_format_class or ""
    if cls.endswith("RealtimeInputFormat") or table_name.endswith("_rt"):
        return HoodieParquetRealtimeInputFormat(session_time_zone, use_index)
    if cls.endswith("HoodieParquetInputFormat") or table_name.endswith("_ro"):
        return HoodieParquetInputFormat(session_time_zone, use_index)
    return HoodieParquetRealtimeInputFormat(session_time_zone, use_index)


def _find_root(path: str) -> str:
    """The Hudi table root at or above a partition folder (a local path, ``file:``, or an object-storage URI:
    one HEAD request per level looked at)."""
    from pathlib import Path

    from hive_bridge.storage.core import Storage, StorageError, is_local_uri

    if is_local_uri(path):
        p = Path(path.removeprefix("file:")).absolute()
        for candidate in (p, *p.parents):
            if (candidate / ".hoodie" / "hoodie.properties").is_file():
                return str(candidate)
    else:
        try:
            storage = Storage.for_uri(path)
        except (StorageError, HudiTableError, OSError) as exc:
            raise HandlerError(f"{path}: {exc}") from None
        location = path.rstrip("/")
        scheme_end = location.index("://") + 3 if "://" in location else 0
        while True:
            if storage.is_file(storage.join(location, ".hoodie", "hoodie.properties")):
                return location
            parent = location.rpartition("/")[0]
            if len(parent) <= scheme_end or "/" not in parent[scheme_end:]:
                break                           # at the bucket (or host): no table above it
            location = parent
    raise HandlerError(f"{path}: not inside a Hudi table (no .hoodie/hoodie.properties at or above it)")


def _relative(table: HudiTable, location: str) -> str:
    """A folder's path relative to the table root ("" for the root itself)."""
    from pathlib import Path

    from hive_bridge.storage.core import is_local_uri

    base = str(table.base_path)
    if is_local_uri(location) and is_local_uri(base):
        rel = Path(location.removeprefix("file:")).absolute().relative_to(Path(base).absolute()).as_posix()
        return "" if rel == "." else rel
    loc, root = location.rstrip("/"), base.rstrip("/")
    if loc == root:
        return ""
    if not loc.startswith(root + "/"):
        raise HandlerError(f"{location}: not under the table {base}")
    return loc[len(root) + 1:]


def _slices_under(table: HudiTable, dirs: list[str], slices: list[FileSlice] | None = None) -> list[FileSlice]:
    """The slices (the latest unless given) under the job's input folders."""
    slices = table.latest_file_slices() if slices is None else slices
    wanted: list[str] = []
    for d in dirs:
        rel = _relative(table, d)
        if rel == "":
            return slices
        wanted.append(rel.rstrip("/"))
    return [s for s in slices if any(s.partition_path == w or s.partition_path.startswith(w + "/")
                                     for w in wanted)]


def table_desc(table: HudiTable, name: str | None = None) -> TableDesc:
    from hive_bridge.filters.typemap import arrow_to_sarg_hive_type

    schema = table.arrow_schema()
    parts = set(table.properties.partition_fields)
    cols = tuple((f.name, arrow_to_sarg_hive_type(f.type)) for f in schema if f.name not in parts)
    keys = tuple((f.name, arrow_to_sarg_hive_type(f.type)) for f in schema if f.name in parts)
    return TableDesc(name or table.name, str(table.base_path), cols, keys,
                     {"storage_handler": HudiStorageHandler.HANDLER_CLASS})


def job_conf_for(table: HudiTable, filter_text: str | None = None) -> JobConf:
    """A JobConf as Hive would prepare it for a scan of ``table`` with a filter (SARG or HiveQL text)."""
    conf = JobConf()
    HudiStorageHandler().configure_table_job_properties(table_desc(table), conf)
    if filter_text:

        conf[SARG_PUSHDOWN if sarg.looks_like_sarg(filter_text) else FILTER_TEXT] = filter_text
    return conf
