"""The ``hudi-hive`` Python data source: every latest slice read in Spark's Python workers (pyarrow, hudi-rs for
merge-on-read), never pruned by the filters Spark pushes (no released Spark keeps a read plan per scan). Spark
Connect and object storage use it; classic PySpark reads ``hudi-hive`` through the JVM file index
(:mod:`hive_bridge.spark.file_index`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.asof import merge_bound, query_instant
from hive_bridge.layout.incremental import BEGIN_OPTION, END_OPTION, FALLBACK_OPTION, IncrementalRange
from hive_bridge.pruning.pruner import SNAPSHOT, check_query_type
from hive_bridge.pruning.snapshot import TableSnapshot, default_cache
from hive_bridge.spark.merge import conform, hudi_reader, merge_with_hudi, read_by_hudi_rs
from hive_bridge.spark.options import (
    AS_OF_OPTION,
    QUERY_TYPE_OPTION,
    ROUTE_WORKERS,
    SLICES_OPTION,
    storage_options_of,
)
from hive_bridge.spark.reports import record_scan
from hive_bridge.spark.sessions import (
    CACHE_PRUNING,
    SparkReadError,
    check_workers,
    guard_parquet_pushdown,
    spark_schema,
)
from hive_bridge.storage.core import Storage, is_local_uri
from hive_bridge.table.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

try:  # the data source classes need pyspark at import time
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
except ImportError:  # pragma: no cover - pyspark is a dependency
    DataSource = object  # type: ignore[assignment,misc]
    DataSourceReader = object  # type: ignore[assignment,misc]
    InputPartition = object  # type: ignore[assignment,misc]


class _FilesPartition(InputPartition):
    def __init__(self, files: list[tuple[str, tuple[str, ...], dict[str, str]]],
                 incremental: IncrementalRange | None = None) -> None:
        super().__init__(files)
        self.files = files
        #: an incremental query's range: rows kept by their commit time, merges bounded by its state
        self.incremental = incremental


#: option ``hoodie.datasource.query.type`` of an incremental query (Hudi's ``QUERY_TYPE_INCREMENTAL_OPT_VAL``)
INCREMENTAL = "incremental"
_COMMIT_TIME = "_hoodie_commit_time"


def rows_in_range(table: pa.Table, rng: IncrementalRange, where: str) -> pa.Table:
    """The rows of ``table`` an incremental query's range keeps (:meth:`IncrementalRange.row_filter`, in Arrow)."""
    import pyarrow.compute as pc

    if _COMMIT_TIME not in table.column_names:
        raise SparkReadError(f"{where}: an incremental query needs the meta field {_COMMIT_TIME}, which the "
                             "table's files do not have (hoodie.populate.meta.fields=false)")
    ct = pc.cast(table.column(_COMMIT_TIME), pa.string())
    between = pc.and_(pc.greater(ct, rng.begin), pc.less_equal(ct, rng.end))
    if not rng.by_completion:
        return table.filter(between)
    mask = pc.is_in(ct, value_set=pa.array(list(rng.commits), pa.string()))
    if rng.full_scan and rng.active_from:
        mask = pc.or_(mask, pc.and_(pc.greater(ct, rng.begin), pc.less(ct, rng.active_from)))
    return table.filter(mask)


# Why the Python data source never prunes with the filters Spark pushes to it.
#
# Spark 4.1 - 4.3's PythonScanBuilder stores the read plan a filter-pushdown pass produces (the pickled reader and
# its partitions) on the relation's PythonDataSourceV2 object, which every scan of that relation shares (one
# DataFrame queried again, a temp view, a self-join, two threads); PythonBatch takes whatever plan is stored there
# when the scan runs, and a scan with no pushable filter (an OR, no filter at all) never asks Python for a plan
# of its own. A plan pruned with one scan's filters would then be read by another scan: rows lost. Spark 4.0
# pushes no filter to Python data sources at all. So every scan reads every latest slice, and Spark applies the
# filters to rows. Pruned reads per scan are the JVM file index's (classic PySpark, hive_bridge.spark.file_index);
# `read_hudi` / `read_table` prune on every Spark version (they plan on the driver, one DataFrame per filter).

_WHY_NOT = ("this Spark shares one read plan among all scans of a DataFrame (PythonScanBuilder keeps no "
            "readInfo of its own), so a plan pruned for one query could be read by another; use read_hudi() or "
            "`hive-bridge read` for pruned reads")


def utc_arrow_schema(schema: Any) -> pa.Schema:
    """A Spark schema as Arrow, TimestampType as UTC-adjusted timestamps (what Spark's TimestampType is): pyspark
    4.2+ take ``timezone="UTC"``, 4.0 and 4.1 ``timestamp_utc=True``."""
    import inspect

    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:
        return to_arrow_schema(schema, timezone="UTC")
    older: Any = to_arrow_schema
    return older(schema, timestamp_utc=True)


class HudiHiveReader(DataSourceReader):
    """Reads every latest file slice of the table (merged merge-on-read slices included); Spark applies every
    filter to rows (see ``_WHY_NOT``)."""

    def __init__(self, path: str, schema: Any, options: dict[str, str]) -> None:
        self.path = path
        self.schema = schema
        self.options = options

    def is_incremental(self) -> bool:
        """Option ``hoodie.datasource.query.type=incremental`` (or ``queryType``)."""
        value = self.options.get(QUERY_TYPE_OPTION) or self.options.get("queryType") or ""
        return value.strip().lower() == INCREMENTAL

    def query_type(self) -> str:
        """Option ``hoodie.datasource.query.type`` (Hudi's own name) or ``queryType``: snapshot (default),
        read_optimized, or incremental (:meth:`incremental_partitions`)."""
        value = self.options.get(QUERY_TYPE_OPTION) or self.options.get("queryType") or SNAPSHOT
        try:
            return check_query_type(value)
        except ValueError as exc:
            raise SparkReadError(f"hudi-hive: {exc}") from None

    def merge_bound(self) -> str | None:
        """Option ``as.of.instant``: merges skip the log blocks of instants after it (time travel)."""
        as_of = self.options.get(AS_OF_OPTION)
        return None if as_of is None else merge_bound(query_instant(as_of, f"option {AS_OF_OPTION}"))

    def partitions(self) -> Sequence[InputPartition]:
        given = self.options.get(SLICES_OPTION)
        if given is not None:  # read_hudi planned on the driver: read exactly these slices
            import json

            return [_FilesPartition([(b, tuple(logs), values)]) for b, logs, values in json.loads(given)] \
                or [_FilesPartition([])]
        # Hudi's own data source option: hoodie.metadata.enable=true lists from the metadata table
        use_mdt = str(self.options.get("hoodie.metadata.enable", "false")).lower() == "true"
        snap = default_cache().get(self.path, listing="auto" if use_mdt else "folders",
                                   storage_options=storage_options_of(self.options) or None)
        if self.is_incremental():
            return self.incremental_partitions(snap.table)
        as_of = self.options.get(AS_OF_OPTION)
        if as_of is not None:
            try:
                snap = TableSnapshot.of(snap.table, snap.index, as_of=as_of, where=f"option {AS_OF_OPTION}")
            except HudiTableError as exc:
                raise SparkReadError(f"hudi-hive: {exc}") from None
        table = snap.table
        listing = snap.plan(None, session_time_zone=self.options.get("sessionTimeZone", "UTC"),
                            query_type=self.query_type())
        record_scan({"path": self.path, "filter": None, "pruning": False, "why_not": _WHY_NOT,
                      "files_total": listing.files_total, "files_read": listing.files_kept,
                      "query_type": listing.query_type, "listing_source": table.listing_source,
                      "storage": table.storage.scheme or "local", "route": ROUTE_WORKERS,
                      "requests": table.storage.requests.counts(),
                      "slices_read": len(listing.slices)})
        parts = []
        for s in listing.slices:
            base = s.base_file.full_path if s.base_file is not None else ""
            parts.append(_FilesPartition([(base, tuple(lf.full_path for lf in s.log_files),
                                           dict(s.partition_values))]))
        return parts or [_FilesPartition([])]

    def incremental_partitions(self, table: HudiTable) -> Sequence[InputPartition]:
        """An incremental query (options ``hoodie.datasource.read.begin.instanttime``, ``end.instanttime``,
        ``hoodie.datasource.read.incr.fallback.fulltablescan.enable``): the slices the range reads
        (:meth:`HudiTable.incremental`), their rows kept by commit time in the workers."""
        given = self.options.get(FALLBACK_OPTION)       # unset: the table version's default
        fallback = None if given is None else str(given).strip().lower() == "true"
        try:
            rng, slices = table.incremental(self.options.get(BEGIN_OPTION), self.options.get(END_OPTION),
                                            fallback=fallback)
        except HudiTableError as exc:
            raise SparkReadError(f"hudi-hive: {exc}") from None
        record_scan({"path": self.path, "filter": None, "pruning": False, "why_not": _WHY_NOT,
                     "files_total": len(slices), "files_read": len(slices), "query_type": INCREMENTAL,
                     "begin_instant": rng.begin, "end_instant": rng.end, "full_scan": rng.full_scan,
                     "listing_source": table.listing_source, "storage": table.storage.scheme or "local",
                     "route": ROUTE_WORKERS, "slices_read": len(slices)})
        parts = [_FilesPartition([(s.base_file.full_path if s.base_file is not None else "",
                                   tuple(lf.full_path for lf in s.log_files), dict(s.partition_values))], rng)
                 for s in slices]
        return parts or [_FilesPartition([], rng)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        target = utc_arrow_schema(self.schema)
        assert isinstance(partition, _FilesPartition)
        rng = partition.incremental
        bound = merge_bound(rng.state_instant) if rng is not None else self.merge_bound()
        for base, logs, values in partition.files:
            if read_by_hudi_rs(base, bool(logs)):
                rel = os.path.relpath(base, self.path) if base else ""
                batches = merge_with_hudi(hudi_reader(self.path, storage_options_of(self.options), bound), rel,
                                          [os.path.relpath(p, self.path) for p in logs])
                if not batches:
                    continue
                table = pa.Table.from_batches(batches)
            elif is_local_uri(base):
                table = pq.read_table(base)
            else:  # object storage, through pyarrow.fs in this worker (no Hadoop connector needed)
                table = self._read_remote(base)
            if rng is not None:
                table = rows_in_range(table, rng, base or self.path)
            yield from conform(table, target, values).to_batches()

    def _read_remote(self, location: str) -> pa.Table:
        """One parquet base file on object storage; a file gone since the listing is a clear error (never a
        silently missing file's rows)."""
        storage = Storage.for_uri(self.path, storage_options_of(self.options))
        try:
            return pq.read_table(storage.fs_path(location), filesystem=storage.fs)
        except FileNotFoundError:
            raise SparkReadError(f"{location}: the base file is gone (deleted since the table was listed, e.g. "
                                 "by a cleaner): read the table again") from None
        except OSError as exc:
            raise SparkReadError(f"{location}: cannot read: {exc}") from None


#: why the Python data source has no path: a DataFrame read without one, or a catalog table (Spark 4.0 - 4.3 hand a
#: Python data source none of a catalog table's LOCATION or OPTIONS, so its location cannot reach it)
NO_PATH = ("hudi-hive needs a path: spark.read.format('hudi-hive').load(path). A catalog table (CREATE TABLE ... "
           "USING hudi-hive LOCATION ...) read by the Python data source gets no path: Spark hands a Python data "
           "source none of a catalog table's LOCATION or OPTIONS. Read catalog tables through the JVM file index: "
           "hive_bridge.spark.register(spark) on classic PySpark, or `hive-bridge serve --lake DIR` for "
           "beeline/JDBC/spark-sql users")


class HudiHiveDataSource(DataSource):
    """``spark.read.format("hudi-hive").load(path)``: a Hudi table read through the Hive storage handler path."""

    @classmethod
    def name(cls) -> str:
        return "hudi-hive"

    def schema(self) -> Any:
        return spark_schema(HudiTable.open(self._path(), storage_options=storage_options_of(self.options)
                                           or None).arrow_schema())

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise SparkReadError(NO_PATH)
        return str(path).removeprefix("file:")

    def reader(self, schema: Any) -> DataSourceReader:
        return HudiHiveReader(self._path(), schema, dict(self.options))


#: the Python data source's second name: ``hudi-hive`` itself is the JVM file index's on classic PySpark
PYTHON_SOURCE = "hudi-hive-python"


class HudiHivePythonDataSource(HudiHiveDataSource):
    """The same Python data source under a name of its own (:data:`PYTHON_SOURCE`): reachable where ``hudi-hive``
    is the JVM provider (classic PySpark after :func:`register`), for tables Spark's Hadoop file systems cannot
    open (object storage without a connector: read in the Python workers through ``pyarrow.fs``)."""

    @classmethod
    def name(cls) -> str:
        return PYTHON_SOURCE


def register_python_source(spark: SparkSession, check: bool = True) -> None:
    """Register the Python data source with a session under both names (and turn Python filter pushdown on),
    after checking that the session's Python workers can run it (:func:`check_workers`; ``check=False`` where
    that cannot be done from the client: Spark Connect)."""
    if check:
        check_workers(spark)
    # a cached DataFrame of the data source must keep its NaN rows; it reads no parquet through Spark
    guard_parquet_pushdown(spark, (CACHE_PRUNING,))
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    for source in (HudiHiveDataSource, HudiHivePythonDataSource):
        try:
            spark.dataSource.register(source)
        except Exception as exc:
            # pyspark 4.0 refuses to register a name again that it registered itself at start (pyspark_hudi_hive.py
            # gives HudiHiveDataSource as "hudi-hive"): that is this very data source; 4.1+ replace it
            if "DATA_SOURCE_ALREADY_EXISTS" not in str(exc):
                raise
