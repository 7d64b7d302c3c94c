"""Spark's own query path, pruned: ``hudi-hive`` tables as Spark's parquet file source whose file index asks this
module, per scan, which files of the table's state (the latest, or as of ``as.of.instant``) the scan's filters
may match.

Spark hands a file source's filters to its ``FileIndex.listFiles(partitionFilters, dataFilters)`` once per scan
per execution, on the driver. The JVM side (``java/``: ``io.hivebridge.spark.HudiHiveFileIndex`` inside a
``HadoopFsRelation`` with Spark's ``ParquetFileFormat``) translates them to Spark's data source filters and calls
:class:`PythonPlanner` through py4j's callback server; the answer is the kept files grouped by partition. The
planner pins the :class:`~hive_bridge.pruning.snapshot.TableSnapshot` a relation was loaded at, so every scan of
one DataFrame reads one table state until ``FileIndex.refresh()`` (``REFRESH TABLE``, ``refreshByPath`` of a
cached DataFrame). Partition filters are evaluated exactly in Java over each partition's values; data filters
prune by statistics here and Spark applies them to rows. Merge-on-read slices with log files are merged by
hudi-rs into parquet files cached by slice identity (:mod:`hive_bridge.spark.merged_cache`; a relation read as of
an instant merges up to it, the instant part of the identity), which Spark's parquet reader then reads. See
``docs/spark.md`` and ``docs/time-travel.md``.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

import sarg
from hive_bridge import config
from hive_bridge.errors import HudiTableError
from hive_bridge.layout.asof import merge_bound
from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION, FileSlice
from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT, ListStatusResult, check_query_type
from hive_bridge.pruning.snapshot import TableSnapshot, default_cache
from hive_bridge.spark import protocol
from hive_bridge.spark.callbacks import answer_folder, require_authentication, spool
from hive_bridge.spark.datasource import INCREMENTAL, PYTHON_SOURCE
from hive_bridge.spark.filters import (
    AndFilter,
    AsDouble,
    OrFilter,
    filter_classes,
    filter_text,
    spark_filters_to_sarg,
)
from hive_bridge.spark.hadoop import can_open, session_hadoop_conf, session_storage, spark_storage
from hive_bridge.spark.jar import JVM_PACKAGE, is_classic, load_jar
from hive_bridge.spark.merge import read_by_hudi_rs
from hive_bridge.spark.merge_job import configure as configure_merges
from hive_bridge.spark.merge_job import drop_stale, merged_files
from hive_bridge.spark.merged_cache import CACHE as MERGED_CACHE
from hive_bridge.spark.options import (
    AS_OF_OPTION,
    QUERY_TYPE_OPTION,
    STORAGE_OPTION_PREFIX,
    storage_options_of,
)
from hive_bridge.spark.reads import HiveRead, list_files, read_hudi
from hive_bridge.spark.reports import record_scan
from hive_bridge.spark.sessions import CACHE_PRUNING, SparkReadError, guard_parquet_pushdown, spark_schema
from hive_bridge.storage.core import StorageError, split_uri, without_userinfo
from hive_bridge.table.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: HiveRead.route of a read through the file index
ROUTE_INDEX = "spark parquet file source, files chosen per scan by the hudi-hive file index"
#: the session conf giving the planner's timeout (milliseconds) for one scan
TIMEOUT_CONF = "spark.hive_bridge.planner.timeoutMs"
#: the read option (or session conf ``spark.hive_bridge.onPlannerError``) that, set to ``readAll``, reads every
#: latest file when the planner fails instead of failing the query
ON_ERROR_OPTION = "hive_bridge.onPlannerError"
# how many loaded relations keep their pinned table state: HIVE_BRIDGE_PINS (the oldest are released; a scan of a
# released one fails with a message saying to read the table again)
#: answers a pinned relation remembers, by the scan's filters (its table state is fixed until refresh, so the same
#: filters keep the same files: a query run again skips translating and pruning)
PLANS_PER_PIN = 32
#: a relation's latest scans whose merged-slice files are never evicted from the cache (Spark may still be reading
#: them; a file of an older scan that was evicted is merged again by the next scan that keeps its slice)
SCANS_IN_USE = 8


@dataclass(frozen=True)
class _Planned:
    """One remembered answer: the filter, the pruning result, and, when every kept file is a base file Spark
    reads as it is, the answer's text and kept paths (a merged slice's file is looked up again each scan: the
    merged-slice cache may have evicted it)."""

    filt: sarg.SearchArgument | None
    result: ListStatusResult
    text: str | None = None
    kept: tuple[str, ...] = ()


@dataclass
class Pin:
    """One loaded relation: its table, the snapshot it reads, how it reads it."""

    path: str
    #: Spark's options (``storage.*`` ones among them: never shown)
    options: dict[str, str] = field(repr=False)
    snapshot: TableSnapshot
    query_type: str
    time_zone: str
    path_cols: list[str]
    read_all_on_error: bool
    #: the storage options the Python side reads the table with (derived from the session's Hadoop settings,
    #: explicit ``storage.*`` options winning; never shown)
    storage_options: dict[str, str] = field(default_factory=dict, repr=False)
    #: what the last scans kept (for tests and reports): the kept file paths of the latest scan
    last_kept: list[str] = field(default_factory=list)
    scans: int = 0
    #: seconds the planner spent on the latest scan (translating, pruning, merging kept merge-on-read slices)
    last_plan_seconds: float = 0.0
    #: the scans' answers by filters (JSON text as the JVM sends it), the most recent last; emptied by refresh
    planned: OrderedDict[str, _Planned] = field(default_factory=OrderedDict)
    #: the table's column types for filters (computed at the first scan)
    types: dict[str, sarg.Type] | None = None
    #: the merged-slice files of the latest scans (:data:`SCANS_IN_USE`), the newest last
    merged_in_use: deque[list[str]] = field(default_factory=lambda: deque(maxlen=SCANS_IN_USE))
    #: the relation's data schema as Arrow (what merged slices are written in)
    arrow_schema: pa.Schema | None = None

    @property
    def merge_bound(self) -> str | None:
        """The instant time merges of this relation's slices read log blocks up to: the as-of instant of a state
        read by time travel (part of the merged slices' keys), None for the latest state."""
        as_of = self.snapshot.as_of
        return None if as_of is None else merge_bound(as_of.instant)


def _listing_of(options: Mapping[str, str]) -> str:
    return "auto" if str(options.get("hoodie.metadata.enable", "false")).lower() == "true" else "folders"


def _snapshot(path: str, options: Mapping[str, str], storage_options: Mapping[str, str]) -> TableSnapshot:
    """The table's snapshot a relation reads: its latest state, or with option ``as.of.instant`` its state as of
    then (time travel: the slices of that state, pruned by statistics valid for it; merge-on-read slices are
    merged up to the instant, :meth:`Pin.merge_bound`). An instant that cannot be read exactly (unknown, pending,
    cleaned, archived, in the future) is a :class:`~hive_bridge.layout.asof.TimeTravelError` naming it."""
    snap = default_cache().get(path, listing=_listing_of(options), storage_options=storage_options or None)
    as_of = options.get(AS_OF_OPTION)
    if as_of is None:
        return snap
    return TableSnapshot.of(snap.table, snap.index, as_of=as_of, where=f"option {AS_OF_OPTION}")


def _spark_storage(path: str, options: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """(the table's URI as Spark reads it, the storage options the planner reads it with): the driver's session
    is asked whether its Hadoop file systems open the table's scheme (``s3://`` read as ``s3a://``) and what its
    S3A settings are (:mod:`hive_bridge.spark.hadoop`); explicit ``storage.*`` options win."""
    return session_storage(path, storage_options_of(options))


def _without_userinfo(path: str, options: dict[str, str]) -> tuple[str, dict[str, str]]:
    """The table's URI without user info (``s3a://KEY:SECRET@bucket/t``: ``s3a://bucket/t``), what it said
    added to the options as ``storage.*`` options (unless they give credentials): the URI becomes the relation's
    root, which Spark shows in plans, logs and event logs."""
    scheme = split_uri(path)[0]
    try:
        bare, found = without_userinfo(scheme, path, storage_options_of(options))
    except StorageError as exc:
        raise SparkReadError(f"hudi-hive {exc}") from None
    return bare, {**options, **{f"{STORAGE_OPTION_PREFIX}{k}": v for k, v in found.items()}}


def _uri(path: str) -> str:
    """A file's location as Hadoop's Path reads it (a local absolute path gets the file: scheme)."""
    return path if "://" in path or path.startswith("file:") else "file:" + path


#: answers longer than this (characters) go through a file: py4j's callback moves a long string slowly (a 100,000-file
#: answer, ~15 MB, took seconds), a file takes milliseconds
SPOOL_CHARS = 1 << 16


def _spooled(answer: str) -> str:
    """The answer, or ``FILE<TAB><path>`` of a file of this process's private answer folder holding it (the JVM reads
    it from there only, and deletes it); inline when it cannot be written there."""
    if len(answer) <= SPOOL_CHARS:
        return answer
    path = spool(answer)
    return answer if path is None else protocol.spooled(path)


class PythonPlanner:
    """The object the JVM file index calls (a ``java.util.function.Function<String, String>``). Thread-safe:
    Spark plans scans on several threads at once."""

    class Java:
        implements: ClassVar[list[str]] = ["java.util.function.Function"]

    def __init__(self) -> None:
        self._pins: OrderedDict[str, Pin] = OrderedDict()
        self._lock = threading.Lock()
        #: the table state whose stale merged-slice files were last deleted, by table path
        self._cleaned: dict[str, TableSnapshot] = {}
        self._ids = itertools.count(1)

    # -- the JVM's requests ---------------------------------------------------------------------------------
    def apply(self, text: str) -> str:
        """One request of the JVM (:mod:`hive_bridge.spark.protocol`), answered."""
        request = protocol.read_request(text)
        try:
            if request.verb == protocol.OPEN:
                return self._open(request.options())
            if request.verb == protocol.PLAN:
                return _spooled(self._plan(request.pin, request.body or "[]", request.statement))
            if request.verb == protocol.REFRESH:
                self.refresh(request.pin)
                return protocol.OK
            raise SparkReadError(f"unknown request {request.verb!r}")
        except Exception as exc:  # every failure goes back as a message (never a py4j traceback)
            message = str(exc) if isinstance(exc, SparkReadError) else f"{type(exc).__name__}: {exc}"
            return protocol.error(message or type(exc).__name__)

    def _open(self, options: dict[str, str]) -> str:
        tz = options.pop(protocol.TIME_ZONE_OPTION, None) or "UTC"
        pin, data, partitions = self.open(options["path"], options, tz)
        size = sum(s.base_file.size for s in self._pins[pin].snapshot.slices if s.base_file is not None)
        return protocol.Opened(pin, _uri(self._pins[pin].path), data.json(), partitions.json(), size).answer()

    # -- the Python side's own calls -----------------------------------------------------------------------
    def open(self, path: str, options: Mapping[str, str], time_zone: str) -> tuple[str, Any, Any]:
        """Pin the table's current state for a new relation: (pin id, data schema, partition schema)."""
        path = str(path).removeprefix("file://").removeprefix("file:")
        options = {k.lower(): v for k, v in options.items()}  # Spark's options are case-insensitive
        asked = options.get(QUERY_TYPE_OPTION) or options.get("querytype") or SNAPSHOT
        if asked.strip().lower() == INCREMENTAL:
            # a file index hands Spark whole files: the rows of the range (kept by _hoodie_commit_time) cannot be
            # told apart there
            raise SparkReadError(f"hudi-hive {path}: {QUERY_TYPE_OPTION}=incremental is not read by the hudi-hive "
                                 "file index (it lists whole files, and an incremental query keeps only the rows "
                                 "of its commits): use hive_bridge.spark.read_table(spark, ..., "
                                 f"query_type='incremental', begin_instant=...), read_hudi(..., begin_instant=...) "
                                 f"or the Python data source ({PYTHON_SOURCE})")
        try:
            query_type = check_query_type(asked)
        except ValueError as exc:
            raise SparkReadError(f"hudi-hive {path}: {exc}") from None
        path, options = _without_userinfo(path, options)
        path, storage = _spark_storage(path, options)   # says what is missing when Spark cannot open it
        try:
            snap = _snapshot(path, options, storage)
        except (HudiTableError, StorageError) as exc:
            raise SparkReadError(f"hudi-hive {path}: {exc}") from None
        table = snap.table
        data, partitions, path_cols = relation_schemas(table)
        on_error = options.get(ON_ERROR_OPTION.lower(), "fail").strip().lower() == "readall"
        pin_id = f"{next(self._ids)}"
        pin = Pin(path, options, snap, query_type, time_zone, path_cols, on_error, storage)
        with self._lock:
            self._pins[pin_id] = pin
            while len(self._pins) > config.settings().pins:
                self._pins.popitem(last=False)
        self._drop_stale(pin)
        return pin_id, data, partitions

    def _drop_stale(self, pin: Pin) -> None:
        """Delete, in the background, the table's merged-slice files of slices that its state pinned now no longer
        has (once per table state; a file a scan may still read stays). Only a relation of the latest state does:
        the files of an earlier state (time travel) are not the latest state's, which a newer relation reads."""
        snap = pin.snapshot
        if pin.query_type == READ_OPTIMIZED or snap.as_of is not None:
            return
        with self._lock:
            if self._cleaned.get(pin.path) is snap:
                return
            self._cleaned[pin.path] = snap
        if not snap.table.properties.is_mor:
            return
        schema = data_arrow_schema(snap.table, pin.path_cols)
        live = [(s, schema) for s in snap.slices
                if s.base_file is None or read_by_hudi_rs(s.base_file.path, bool(s.log_files))]
        threading.Thread(target=drop_stale, args=(snap.table, live), daemon=True,
                         name="hive-bridge-merged-cleanup").start()

    def pin(self, pin_id: str) -> Pin:
        with self._lock:
            found = self._pins.get(pin_id)
            if found is not None:
                self._pins.move_to_end(pin_id)
        if found is None:
            raise SparkReadError(f"hudi-hive relation {pin_id}: its table state was released (more than {config.settings().pins} "
                                 "relations loaded since); read the table again")
        return found

    def refresh(self, pin_id: str) -> None:
        """The relation reads the table's current state from now on."""
        pin = self.pin(pin_id)
        _, storage = _spark_storage(pin.path, pin.options)   # the session's settings now (rotated credentials)
        try:
            snap = _snapshot(pin.path, pin.options, storage)
        except (HudiTableError, StorageError) as exc:
            raise SparkReadError(f"hudi-hive {pin.path}: {exc}") from None
        with self._lock:
            pin.storage_options = storage
            pin.snapshot = snap
            pin.planned = OrderedDict()
            pin.types = None
            pin.arrow_schema = None
        self._drop_stale(pin)

    def kept(self, pin_id: str, filters: list[dict[str, Any]]) -> tuple[Pin, ListStatusResult]:
        """What one scan's filters (JSON, as the JVM sends them) may match."""
        pin = self.pin(pin_id)
        planned = self._planned(pin, json.dumps(filters), filters)
        return pin, planned.result

    def release_all(self) -> int:
        """Release every pinned table state (a scan of a relation loaded before fails, saying to read the table
        again); how many were released."""
        with self._lock:
            n = len(self._pins)
            self._pins.clear()
            self._cleaned.clear()
        return n

    def _planned(self, pin: Pin, key: str, filters: list[dict[str, Any]] | None,
                 statement: str | None = None) -> _Planned:
        """The answer to the filters ``key`` (JSON text; ``filters`` parsed, or None to parse it): remembered per
        pin, planned on the pinned snapshot when not. Every scan is reported (:func:`record_scan`), with the
        ``statement`` it belongs to when the JVM named one."""
        with self._lock:
            planned = pin.planned.get(key)
            if planned is not None:
                pin.planned.move_to_end(key)
        if planned is None:
            planned = _Planned(*self._prune(pin, json.loads(key) if filters is None else filters))
            self._remember(pin, key, planned)
        filt, result, snap = planned.filt, planned.result, pin.snapshot
        record_scan({"path": pin.path, "filter": filter_text(filt), "pruning": True, "why_not": None,
                     "files_total": result.files_total, "files_read": result.files_kept,
                     "query_type": result.query_type, "listing_source": snap.table.listing_source,
                     "storage": snap.table.storage.scheme or "local", "route": ROUTE_INDEX,
                     "slices_read": len(result.slices), "sarg": None if filt is None else str(filt),
                     "bytes_total": result.bytes_total, "bytes_read": result.bytes_kept,
                     **({"float_proofs": result.float_proofs.figures()} if result.float_proofs is not None else {}),
                     "statement_id": statement})
        return planned

    def _remember(self, pin: Pin, key: str, planned: _Planned) -> None:
        with self._lock:
            pin.planned[key] = planned
            pin.planned.move_to_end(key)
            while len(pin.planned) > PLANS_PER_PIN:
                pin.planned.popitem(last=False)

    @staticmethod
    def _prune(pin: Pin, filters: list[dict[str, Any]]) -> tuple[sarg.SearchArgument | None, ListStatusResult]:
        snap = pin.snapshot
        filt = None
        try:
            if pin.types is None:
                pin.types = sarg_types(snap.table)
            filt = filters_to_sarg(filters, snap.table, pin.time_zone, types=pin.types)
            result = snap.plan(filt, session_time_zone=pin.time_zone, query_type=pin.query_type)
        except Exception as exc:
            if not pin.read_all_on_error:
                shown = str(filt) if filt is not None else json.dumps(filters)
                raise SparkReadError(f"hudi-hive {pin.path}: planning the filter {shown} failed: "
                                     f"{type(exc).__name__}: {exc}") from None
            result = snap.plan(None, session_time_zone=pin.time_zone, query_type=pin.query_type)
        return filt, result

    def _plan(self, pin_id: str, key: str, statement: str | None = None) -> str:
        started = time.perf_counter()
        pin = self.pin(pin_id)
        planned = self._planned(pin, key, None, statement)  # a failure names the table and the filter (_prune)
        if planned.text is not None:  # every kept file a base file: the same answer as the first time
            self._scanned(pin, list(planned.kept), started)
            return planned.text
        try:
            return self._answer(pin, key, planned, started)
        except Exception as exc:  # merging a kept slice, a file gone: named with the table and the filter
            shown = filter_text(planned.filt) or key
            raise SparkReadError(f"hudi-hive {pin.path}: the files the filter {shown} keeps could not be given "
                                 f"to Spark: {type(exc).__name__}: {exc}") from None

    def _answer(self, pin: Pin, key: str, planned: _Planned, started: float) -> str:
        """The answer's text: the kept files by partition (a merged slice's file merged now if not cached)."""
        slices = planned.result.slices
        lines = [protocol.OK]
        kept: list[str] = []
        merged = False
        merged_files: list[str] = []
        with self._lock:  # in use from now on: a merge of this scan may evict, never this scan's files
            pin.merged_in_use.append(merged_files)
        merged_now = self._merged(pin, slices, merged_files)
        by_partition: dict[str, list[FileSlice]] = {}
        for s in slices:
            by_partition.setdefault(s.partition_path if pin.path_cols else "", []).append(s)
        for group in by_partition.values():
            values = group[0].partition_values
            cells = [None if (v := values.get(col)) == HIVE_DEFAULT_PARTITION else v for col in pin.path_cols]
            lines.append(protocol.partition_line(cells))
            for s in group:
                path, size, mtime, from_cache = self._file_of(pin, s, merged_now)
                if path is None:
                    continue
                merged = merged or from_cache
                kept.append(path)
                lines.append(protocol.file_line(protocol.file_uri(path), size, mtime))
        text = "\n".join(lines)
        if not merged:
            self._remember(pin, key, _Planned(planned.filt, planned.result, text, tuple(kept)))
        self._scanned(pin, kept, started)
        return text

    def _scanned(self, pin: Pin, kept: list[str], started: float) -> None:
        with self._lock:
            pin.last_kept = kept
            pin.scans += 1
            pin.last_plan_seconds = time.perf_counter() - started

    def merged_in_use(self) -> set[str]:
        """The merged-slice files the kept relations' latest scans read (never evicted from the cache)."""
        with self._lock:
            return {f for pin in self._pins.values() for scan in pin.merged_in_use for f in scan}

    @staticmethod
    def _merged(pin: Pin, slices: list[FileSlice], hold: list[str]) -> dict[tuple[str, str], tuple[str, int, int]]:
        """The merged files of the kept slices hudi-rs reads (merged now, in the driver or by a Spark job, when
        the merged-slice store has none: :mod:`hive_bridge.spark.merge_job`)."""
        logs_read = pin.query_type != READ_OPTIMIZED
        todo = []
        for s in slices:
            logs = s.log_files if logs_read else ()
            if (s.base_file is None and logs) or (s.base_file is not None
                                                  and read_by_hudi_rs(s.base_file.path, bool(logs))):
                todo.append(s._replace(log_files=tuple(logs)))
        if not todo:
            return {}
        if pin.arrow_schema is None:
            pin.arrow_schema = data_arrow_schema(pin.snapshot.table, pin.path_cols)
        return merged_files(pin.snapshot.table, todo, pin.arrow_schema, hold, pin.merge_bound)

    @staticmethod
    def _file_of(pin: Pin, s: FileSlice, merged: Mapping[tuple[str, str], tuple[str, int, int]]
                 ) -> tuple[str | None, int, int, bool]:
        """The file Spark's parquet reader reads for one kept slice: the base file, or the slice merged by
        hudi-rs (logs, or a base file of another format) into the merged-slice store (the last item: True)."""
        base = s.base_file
        logs = s.log_files if pin.query_type != READ_OPTIMIZED else ()
        if base is not None and not read_by_hudi_rs(base.path, bool(logs)):
            return base.full_path, base.size, int(base.mtime * 1000), False
        if base is None and not logs:
            return None, 0, 0, False
        path, size, mtime = merged[(s.partition_path, s.file_id)]
        return path, size, mtime, True


def data_arrow_schema(table: HudiTable, path_cols: list[str]) -> pa.Schema:
    full = table.arrow_schema()
    return pa.schema([f for f in full if f.name not in path_cols])


def relation_schemas(table: HudiTable) -> tuple[Any, Any, list[str]]:
    """(data schema, partition schema, partition columns): only the partition fields absent from the files are
    partition columns (a partition path that is not the column's value, e.g. a time-based key generator's
    ``2024/01/15/10``, must never replace the value the file holds)."""
    from pyspark.sql.types import StructType

    file_cols = set(table.file_schema().names)
    path_cols = [f for f in table.properties.partition_fields if f not in file_cols]
    full = spark_schema(table.arrow_schema())
    data = StructType([f for f in full.fields if f.name not in path_cols])
    partitions = StructType([full[c] for c in path_cols])
    return data, partitions, path_cols


# -- Spark's filters, as the JVM sends them, to a SearchArgument ------------------------------------------------

def _attribute(name: str) -> tuple[str, ...]:
    """Spark's quoted attribute name (``a.b``, `` `a.b`.c ``) as its parts."""
    parts: list[str] = []
    cur: list[str] = []
    i, quoted = 0, False
    while i < len(name):
        c = name[i]
        if c == "`":
            if quoted and i + 1 < len(name) and name[i + 1] == "`":
                cur.append("`")
                i += 1
            else:
                quoted = not quoted
        elif c == "." and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return tuple(parts)


def _value(v: Any, time_zone: str) -> Any:
    import datetime as dt
    from decimal import Decimal
    from zoneinfo import ZoneInfo

    if v is None:
        return None
    t, raw = v["t"], v["v"]
    if t in ("bool", "int", "str"):
        return raw
    if t == "float":
        return float(raw)
    if t == "dec":
        return Decimal(raw)
    if t == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=int(raw))
    if t == "ts":  # an instant: the wall clock in the session time zone (SearchArgument timestamps are)
        instant = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=int(raw))
        return instant.astimezone(ZoneInfo(time_zone)).replace(tzinfo=None)
    if t == "ntz":
        return dt.datetime.fromisoformat(raw)
    raise ValueError(f"a literal of type {t}")


def _to_pyspark(f: dict[str, Any], time_zone: str, positive: bool = True) -> Any:
    """One JSON filter as pyspark's data source filter classes (And/Or as :class:`AndFilter`/:class:`OrFilter`);
    None for what is not understood (it keeps every file). Where the filter is not negated (``positive``), an AND
    with a side not understood is its other side (a weaker filter: it keeps more files); under a NOT it is
    unknown as a whole."""
    ds = filter_classes()
    op = f["op"]
    if op in ("and", "or"):
        left, right = _to_pyspark(f["l"], time_zone, positive), _to_pyspark(f["r"], time_zone, positive)
        if left is None or right is None:
            return (left if right is None else right) if op == "and" and positive else None
        return OrFilter(left, right) if op == "or" else AndFilter(left, right)
    if op == "not":
        child = _to_pyspark(f["c"], time_zone, not positive)
        return None if child is None else ds.Not(child)
    if "a" not in f:  # a filter the JVM side did not know
        return None
    attr = _attribute(f["a"])
    if f.get("cast") == "double":  # cast(column as double) op double literal(s): judged as doubles
        inner = _to_pyspark({k: v for k, v in f.items() if k != "cast"}, time_zone, positive)
        return None if inner is None else AsDouble(inner)
    try:
        if op == "isnull":
            return ds.IsNull(attr)
        if op == "notnull":
            return ds.IsNotNull(attr)
        if op == "in":
            return ds.In(attr, tuple(_value(v, time_zone) for v in f["v"]))
        if op == "startswith":
            prefix = _value(f["v"], time_zone)
            return ds.StringStartsWith(attr, prefix) if isinstance(prefix, str) else None
        classes = {"eq": ds.EqualTo, "nse": ds.EqualNullSafe, "lt": ds.LessThan, "le": ds.LessThanOrEqual,
                   "gt": ds.GreaterThan, "ge": ds.GreaterThanOrEqual}
        cls = classes.get(op)
        if cls is None:  # EndsWith/Contains and unknown shapes: unknown
            return None
        value = _value(f["v"], time_zone)
        if value is None:
            return None
        return cls(attr, value)
    except ValueError:
        return None


def sarg_types(table: HudiTable) -> dict[str, sarg.Type]:
    """The table's columns' SearchArgument types (columns with no such type left out)."""
    from hive_bridge.filters.typemap import table_sarg_schema
    from sarg.schema import type_of

    types: dict[str, sarg.Type] = {}
    for name, hive_type in table_sarg_schema(table).items():
        ct = type_of(hive_type)
        if ct.sarg_type is not None:
            types[name] = ct.sarg_type
    return types


def filters_to_sarg(filters: list[dict[str, Any]], table: HudiTable, time_zone: str = "UTC",
                    types: dict[str, sarg.Type] | None = None) -> sarg.SearchArgument | None:
    """The scan's filters (conjuncts) as one SearchArgument; what is not understood keeps files. ``types``:
    :func:`sarg_types` of ``table`` when the caller has them already."""
    if types is None:
        types = sarg_types(table)
    converted = [c for c in (_to_pyspark(f, time_zone) for f in filters) if c is not None]
    filt, _ = spark_filters_to_sarg(converted, types)
    return filt


# -- attaching to a session --------------------------------------------------------------------------------------

_PLANNER = PythonPlanner()
MERGED_CACHE.set_in_use(_PLANNER.merged_in_use)
_ATTACHED: set[str] = set()
_ATTACH_LOCK = threading.Lock()


def planner() -> PythonPlanner:
    """The process's planner (the one the JVM calls)."""
    return _PLANNER


def attach(spark: SparkSession) -> None:
    """Make ``hudi-hive`` the JVM file index's in ``spark``'s driver: build (once) and load the jar into the
    driver's class loader, start py4j's callback server requiring the gateway's secret (or make the running one
    require it: :func:`~hive_bridge.spark.callbacks.require_authentication`), register :func:`planner`."""
    if not is_classic(spark):
        raise SparkReadError("the hudi-hive file index needs a classic SparkSession (Spark Connect has no callback "
                             "path to the Python planner)")
    app = spark.sparkContext.applicationId
    with _ATTACH_LOCK:
        jvm: Any = spark._jvm
        load_jar(jvm)  # every call: the thread's context class loader may have changed since
        # every call (a dictionary look-up once done): the callback server, started here if need be, takes only
        # connections that present the gateway's secret, also when someone else started it since
        require_authentication(spark.sparkContext._gateway)
        configure_merges(spark)  # where merged slices go: refused on a cluster without a shared store
        if app in _ATTACHED:
            return
        timeout = int(spark.conf.get(TIMEOUT_CONF, "300000") or "300000")
        getattr(jvm, JVM_PACKAGE).Planner.register(_PLANNER, timeout, answer_folder())
        guard_parquet_pushdown(spark, (CACHE_PRUNING,))  # parquet pushdown stays: SoundParquetFileFormat
        _ATTACHED.add(app)


def load(spark: SparkSession, path: str, options: Mapping[str, str] | None = None) -> DataFrame:
    """The table at ``path`` as a DataFrame read through the file index (what ``format("hudi-hive").load`` gives
    after :func:`hive_bridge.spark.register`)."""
    attach(spark)
    reader = spark.read.format("hudi-hive")
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    return reader.load(str(path))


def indexed_read(spark: SparkSession, path: str, filt: str | sarg.SearchArgument | None = None, *,
                 query_type: str = SNAPSHOT) -> HiveRead:
    """``read_hudi``'s result through the file index: the DataFrame is Spark's own file source (each later
    ``.where`` prunes too), ``listing`` what the filter alone keeps (for reports); columns in the table's order.
    Tables on storage Spark's Hadoop file systems cannot open are read by :func:`read_hudi`."""
    tz = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    conf = session_hadoop_conf(spark)
    if not can_open(str(path), conf):
        return read_hudi(spark, path, filt, query_type=query_type)
    uri, storage = spark_storage(str(path), {}, conf)
    table, listing, residual = list_files(uri, filt, session_time_zone=tz, query_type=query_type,
                                          storage_options=storage or None)
    df = load(spark, path, {QUERY_TYPE_OPTION: query_type})
    df = df.select(*[f"`{name}`" for name in table.arrow_schema().names])
    if residual:
        df = df.where(residual)
    return HiveRead(df, listing, residual, ROUTE_INDEX)


def pin_of(df: DataFrame) -> Pin | None:
    """The pinned state of the (first) hudi-hive relation a DataFrame reads: its table, snapshot and what its
    latest scan kept."""
    jvm: Any = df.sparkSession._jvm
    ids = str(getattr(jvm, JVM_PACKAGE).Planner.pinsOf(df._jdf.queryExecution().analyzed()))
    return _PLANNER.pin(ids.split(",")[0]) if ids else None
