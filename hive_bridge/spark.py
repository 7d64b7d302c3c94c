"""Hive-on-Spark reads of Hudi tables: the input format's surviving files, read by Spark's own parquet reader.

    spark = hive_bridge.spark.session()
    read = hive_bridge.spark.read_hudi(spark, "/data/trips", "(and leaf-(EQUALS city sf) (not leaf-(IS_NULL fare)))")
    read.df.show(); print(read.listing.files_kept, "of", read.listing.files_total, "files read")

The result equals a full read of the latest file slices with the same filter: pruning only drops files whose
statistics prove no row matches, and the whole filter (the residual) is applied to the rows of the files kept.
Merge-on-read slices with log files are read through hudi-rs's file-group reader (base file merged with its logs);
if that cannot be done the read fails with a clear error rather than returning stale rows.

``register(spark)`` adds the ``hudi-hive`` Python data source:
``spark.read.format("hudi-hive").load(path).where("id > 5")`` prunes with the filters Spark pushes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

import sarg
from hive_bridge.errors import HiveBridgeError, HudiTableError
from hive_bridge.hive.handler import HoodieParquetInputFormat
from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION, FileSlice
from hive_bridge.pruning import ListStatusResult, prune_slices
from hive_bridge.pruning.pruner import SNAPSHOT, check_query_type, filter_columns
from hive_bridge.pruning.snapshot import default_cache
from hive_bridge.residual import to_sql
from hive_bridge.stats.index import PARQUET_SUFFIX, ColumnStatsIndex
from hive_bridge.storage.core import Storage, is_local_uri
from hive_bridge.table.table import HudiTable
from sarg.schema import find_column

#: the data source option that chooses the query type, as Hudi's Spark data source names it
QUERY_TYPE_OPTION = "hoodie.datasource.query.type"


if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

try:  # the data source classes need pyspark at import time
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
except ImportError:  # pragma: no cover - pyspark is a dependency
    DataSource = object  # type: ignore[assignment,misc]
    DataSourceReader = object  # type: ignore[assignment,misc]
    InputPartition = object  # type: ignore[assignment,misc]


class SparkReadError(HiveBridgeError):
    """A read that cannot be done correctly (e.g. merge-on-read logs that cannot be merged)."""


# Two of Spark's own optimizations lose rows that Spark SQL says match, because they judge min/max statistics
# that ignore NaN (as the parquet format says they must) as if NaN were not there:
# - parquet filter pushdown: with it on, Spark 4.3 returned no row for `price = 'NaN'` (30 rows hold NaN), 60 of
#   63 rows for `price = 0.0` (three hold -0.0) and 961 of 963 for `price > 100` (NaN is above every number);
# - the in-memory columnar cache's batch pruning: a .cache()d DataFrame returned no row for `v = double('NaN')`.
# hive-bridge turns both off in the sessions it reads with (benchmarks/spark_pushdown_fact.py measures the first;
# tests/hive_bridge/test_spark_usage.py checks reads, cached ones included, against Spark with them off).
PARQUET_PUSHDOWN = "spark.sql.parquet.filterPushdown"
CACHE_PRUNING = "spark.sql.inMemoryColumnarStorage.partitionPruning"
_LOSSY = (PARQUET_PUSHDOWN, CACHE_PRUNING)


def guard_parquet_pushdown(spark: SparkSession) -> bool:
    """Turn off, in ``spark``, Spark's parquet filter pushdown and its cached-batch pruning (both drop NaN and
    -0.0 rows a filter matches). Returns True when one was on (and warns)."""
    changed = [key for key in _LOSSY if (spark.conf.get(key, "true") or "true").strip().lower() != "false"]
    if not changed:
        return False
    for key in changed:
        spark.conf.set(key, "false")
    import warnings

    warnings.warn(f"hive-bridge set {', '.join(k + '=false' for k in changed)} in this SparkSession: Spark's "
                  "statistics-based skipping drops rows holding NaN or -0.0 that a filter matches",
                  RuntimeWarning, stacklevel=3)
    return True


def use_this_interpreter() -> None:
    """Python workers run this interpreter (unless PYSPARK_PYTHON says otherwise): set before the JVM starts,
    which copies the environment."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def session(app: str = "hive-bridge", master: str = "local[2]", **conf: str) -> SparkSession:
    """A SparkSession configured for hive-bridge (workers use this interpreter; UTC; Python filter pushdown)."""
    use_this_interpreter()
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.python.filterPushdown.enabled", "true")
               .config(PARQUET_PUSHDOWN, "false")
               .config(CACHE_PRUNING, "false"))
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema)


@dataclass
class HiveRead:
    """A pruned (or full) read: the DataFrame, what listStatus kept, and the filter applied to rows."""

    df: DataFrame
    listing: ListStatusResult
    residual_sql: str | None
    #: how the rows are read: ROUTE_SPARK (Spark's own parquet reader: local and HDFS tables) or ROUTE_WORKERS
    #: (pyarrow.fs in Spark's Python workers: object storage Spark's Hadoop file systems cannot open here)
    route: str = ""


def _filter_of(table: HudiTable, filt: str | sarg.SearchArgument | None) -> tuple[sarg.SearchArgument | None,
                                                                                   str | None]:
    """(SearchArgument to prune with, Spark SQL to apply to rows)."""
    if filt is None or (isinstance(filt, str) and not filt.strip()):
        return None, None
    from hive_bridge.typemap import table_sarg_schema
    from sarg import hiveql

    schema = table_sarg_schema(table)
    if isinstance(filt, sarg.SearchArgument):
        return filt, to_sql(filt)
    try:
        if sarg.looks_like_sarg(filt):
            parsed = sarg.parse(filt, schema)
            return parsed, to_sql(parsed)
        # Spark applies this text to rows: leaves Hive would box unlike Spark's comparison stay unknown
        parsed = hiveql.parse_hiveql(filt, schema, spark_rows=True)
    except sarg.SargError as exc:
        raise SparkReadError(f"cannot read the filter: {exc}") from None
    return parsed, filt  # HiveQL text: Spark applies the user's own filter to rows


def list_files(path: str, filt: str | sarg.SearchArgument | None = None, *, prune: bool = True,
               session_time_zone: str = "UTC", explain: bool = False,
               query_type: str = SNAPSHOT, listing: str = "folders",
               stats_source: str = "auto",
               storage_options: Mapping[str, str] | None = None) -> tuple[HudiTable, ListStatusResult, str | None]:
    try:
        # the process's snapshot of the table: re-used while its timeline is unchanged (a DataFrame queried
        # again plans in milliseconds), followed when an instant completed (never stale)
        snap = default_cache().get(path, listing=listing, stats_source=stats_source,
                                   storage_options=storage_options)
    except HudiTableError as exc:
        raise SparkReadError(str(exc)) from None
    table = snap.table
    parsed, residual = _filter_of(table, filt)
    try:
        query_type = check_query_type(query_type)
    except ValueError as exc:
        raise SparkReadError(str(exc)) from None
    try:
        result = snap.plan(parsed if prune else None, None, session_time_zone, explain, query_type=query_type)
    except HudiTableError as exc:
        raise SparkReadError(str(exc)) from None
    if not prune:
        result.sarg = parsed
    return table, result, residual


def read_hudi(spark: SparkSession, path: str, filt: str | sarg.SearchArgument | None = None, *,
              prune: bool = True, session_time_zone: str | None = None, query_type: str = SNAPSHOT,
              listing: str = "folders", stats_source: str = "auto",
              storage_options: Mapping[str, str] | None = None) -> HiveRead:
    """Read a Hudi table's latest slices through the storage handler's listStatus, with Spark.

    ``filt``: SearchArgument text (any printed form), a SearchArgument, or HiveQL filter text.
    ``prune=False`` reads every latest file (the reference a pruned read must equal).
    ``query_type``: ``snapshot`` (default: base files merged with their log files, as Hudi's realtime input
    format) or ``read_optimized`` (base files only, as Hive sync's ``<t>_ro`` table).
    ``listing``: ``folders`` (default), ``auto`` or ``mdt`` (the metadata table's files partition where it can
    be trusted); ``stats_source``: ``auto`` (default: the metadata table's column_stats where it has entries,
    footers for the rest), ``mdt`` or ``footers``.
    ``path``: a folder or a URI (``s3://bucket/path``, ``gs://``, ``hdfs://``), ``storage_options`` its
    credentials / endpoint (see :mod:`hive_bridge.storage.core`). Local and HDFS tables are read by Spark's
    parquet reader; a table Spark's Hadoop file systems cannot open (pyspark ships no S3A or GCS connector) is
    read through ``pyarrow.fs`` in Spark's Python workers (the ``hudi-hive`` data source handed the kept
    slices). ``HiveRead.route`` says which.
    """
    tz = session_time_zone or spark.conf.get("spark.sql.session.timeZone") or "UTC"
    table, result, residual = list_files(path, filt, prune=prune, session_time_zone=tz, query_type=query_type,
                                         listing=listing, stats_source=stats_source,
                                         storage_options=storage_options)
    if table.storage.spark_readable:
        df, route = read_slices(spark, table, result.slices), ROUTE_SPARK
    else:
        df, route = read_slices_in_workers(spark, table, result.slices, storage_options), ROUTE_WORKERS
    if residual:
        df = df.where(residual)
    return HiveRead(df, result, residual, route)


#: HiveRead.route values
ROUTE_SPARK = "spark parquet reader"
ROUTE_WORKERS = "pyarrow.fs in Spark's Python workers"
#: the hudi-hive data source's option holding the slices to read (JSON), set by read_slices_in_workers
SLICES_OPTION = "hive_bridge.slices"
#: data source options starting with this are storage options (``storage.endpoint_override``, ...)
STORAGE_OPTION_PREFIX = "storage."


def read_slices_in_workers(spark: SparkSession, table: HudiTable, slices: Sequence[FileSlice],
                           storage_options: Mapping[str, str] | None = None) -> DataFrame:
    """The rows of the given slices read by the ``hudi-hive`` data source in Spark's Python workers through
    ``pyarrow.fs`` (no Hadoop connector needed): each worker opens the table's storage from its URI,
    ``storage_options`` and the environment."""
    import json

    register(spark)
    files = [(s.base_file.full_path if s.base_file is not None else "", [lf.full_path for lf in s.log_files],
              dict(s.partition_values)) for s in slices]
    reader = (spark.read.format("hudi-hive").schema(spark_schema(table.arrow_schema()))
              .option(SLICES_OPTION, json.dumps(files)))
    for key, value in (storage_options or {}).items():
        reader = reader.option(STORAGE_OPTION_PREFIX + key, value)
    return reader.load(str(table.base_path))


def _storage_options_of(options: Mapping[str, str]) -> dict[str, str]:
    """The storage options among a data source's options (``storage.<key>``)."""
    return {k[len(STORAGE_OPTION_PREFIX):]: v for k, v in options.items() if k.startswith(STORAGE_OPTION_PREFIX)}


def read_slices(spark: SparkSession, table: HudiTable, slices: Sequence[FileSlice]) -> DataFrame:
    """The rows of the given latest file slices as one DataFrame, partition columns restored.

    Spark's parquet filter pushdown is turned off in the session (see :func:`guard_parquet_pushdown`): a filter
    applied to this DataFrame must see every row of the files."""
    guard_parquet_pushdown(spark)
    schema = table.arrow_schema()
    sp_schema = spark_schema(schema)
    file_cols = set(table.file_schema().names)
    path_cols = [f for f in table.properties.partition_fields if f not in file_cols]
    plain: list[tuple[FileSlice, str]] = []
    merged: list[FileSlice] = []
    for s in slices:
        if s.base_file is None or _read_by_hudi_rs(s.base_file.path, bool(s.log_files)):
            merged.append(s)
        else:
            plain.append((s, s.base_file.full_path))
    frames: list[DataFrame] = []
    if plain:
        if path_cols:
            by_partition: dict[str, list[tuple[FileSlice, str]]] = {}
            for s, path in plain:
                by_partition.setdefault(s.partition_path, []).append((s, path))
            for group in by_partition.values():
                frames.append(_read_parquet(spark, table, [p for _, p in group], path_cols,
                                            group[0][0].partition_values))
        else:
            frames.append(_read_parquet(spark, table, [p for _, p in plain], [], {}))
    if merged:
        frames.append(_read_merged(spark, table, merged, schema))
    if not frames:
        return spark.createDataFrame([], sp_schema)
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out.select(*[f"`{f.name}`" for f in schema])


def _read_by_hudi_rs(base: str, has_logs: bool) -> bool:
    """Whether a slice is read by hudi-rs's file-group reader rather than a parquet reader: slices with log files
    (merged), log-only file groups (no base), base files of other formats (Lance)."""
    return has_logs or not base.endswith(PARQUET_SUFFIX)


def _read_parquet(spark: SparkSession, table: HudiTable, paths: list[str], path_cols: list[str],
                  values: dict[str, str]) -> DataFrame:
    from pyspark.sql import functions as F

    file_schema = spark_schema(table.file_schema())
    old = spark.conf.get("spark.sql.sources.parallelPartitionDiscovery.threshold")
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(max(32, len(paths) + 1)))
    try:
        df = spark.read.schema(file_schema).parquet(*paths)
    finally:
        spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", old or "32")
    full = table.arrow_schema()
    for col in path_cols:
        value = values.get(col)
        typ = spark_schema(pa.schema([full.field(col)])).fields[0].dataType
        lit = F.lit(None if value in (None, HIVE_DEFAULT_PARTITION) else value)
        df = df.withColumn(col, lit.cast(typ))
    return df


def _read_merged(spark: SparkSession, table: HudiTable, slices: Sequence[FileSlice],
                 schema: pa.Schema) -> DataFrame:
    """Slices Spark's parquet reader cannot take: hudi-rs merges each base file with its log files (and reads
    base files of other formats); refuse if it cannot."""
    import importlib.util

    if importlib.util.find_spec("hudi") is None:
        raise SparkReadError(f"{table.base_path}: {len(slices)} file slices have log files (merge-on-read) or "
                             f"{table.properties.base_file_format} base files, and the `hudi` package that reads "
                             "them is not installed; refusing to return stale or missing rows")
    parts: list[pa.Table] = []
    try:
        reader = _hudi_reader(str(table.base_path))
        for s in slices:
            base = s.base_file.path if s.base_file is not None else ""
            batches = _merge_with_hudi(reader, base, [lf.path for lf in s.log_files])
            if batches:
                parts.append(_conform(pa.Table.from_batches(batches), schema, s.partition_values))
    except Exception as exc:
        raise SparkReadError(f"{table.base_path}: cannot read {len(slices)} file slices with hudi-rs (merge-on-read "
                             f"logs or {table.properties.base_file_format} base files; {type(exc).__name__}: "
                             f"{exc}); refusing to return stale or missing rows") from None
    if not parts:
        return spark.createDataFrame([], spark_schema(schema))
    return spark.createDataFrame(pa.concat_tables(parts))


def read_table(spark: SparkSession, name: str, filt: str | sarg.SearchArgument | None = None, *,
               prune: bool = True, query_type: str | None = None, metastore: Any = None) -> HiveRead:
    """Read a Hudi table by name: from a Hive metastore (``metastore``: its ``thrift://host:port`` URI or a
    :class:`~hive_bridge.hive.MetastoreClient`; ``name`` is ``db.table``, ``default`` when no database is
    given), else from Spark's catalog (or the metastore Spark is connected to). The table is a Hudi table as
    Hudi's Hive sync registers one (Hudi's input formats, or ``spark.sql.sources.provider=hudi``) or as older
    hive-bridge versions did (a ``storage_handler`` parameter naming a Hudi class; read, with a
    ``RuntimeWarning`` saying how to register it again).

    Without a ``query_type``, the table says: ``HoodieParquetInputFormat`` (Hive sync's ``<t>_ro``, and a
    copy-on-write table) is a read-optimized query, ``HoodieParquetRealtimeInputFormat`` (``<t>_rt``, ``<t>``) a
    snapshot query; where the input format says nothing (an old registration, a Spark data source table), a name
    ending in ``_ro`` is read-optimized, else snapshot. Through a metastore, the table's partitions are pruned by
    their metastore values and read from their locations (see
    :meth:`hive_bridge.hive.RegisteredHudiTable.select_slices`) before files are judged by statistics."""
    from hive_bridge.hive import HiveTable, is_hudi, query_type_of, registered_the_old_way

    if metastore is not None:
        return _read_registered(spark, metastore, name, filt, prune=prune, query_type=query_type)
    location, params = _catalog_table(spark, name)
    table = HiveTable(database="", name=name.rpartition(".")[2], location=location, columns=(), partition_keys=(),
                      input_format=params.get(_INPUT_FORMAT) or None, output_format=None, serde=None,
                      table_type=None, parameters={k: v for k, v in params.items() if k != _INPUT_FORMAT})
    provider = params.get("provider", "").lower()
    if not is_hudi(table) and provider != "hudi":
        raise SparkReadError(f"table {name} is not a Hudi table: not stored by the Hudi storage handler "
                             f"(storage_handler={params.get('storage_handler') or 'unset'}), input format "
                             f"{table.input_format or 'unset'}, provider {provider or 'unset'}")
    if registered_the_old_way(table):
        import warnings

        warnings.warn(f"table {name} names storage handler {table.storage_handler}, a class no Hudi release "
                      "ships: Hive and Spark cannot load such a table; hive-bridge reads it from its location "
                      f"{location}. Register it as Hudi's Hive sync does (Hudi's HiveSyncTool, or "
                      f"hive_bridge.hive.MetastoreClient(uri).sync_hudi_table({location!r}, ...))",
                      RuntimeWarning, stacklevel=2)
    return read_hudi(spark, location, filt, prune=prune, query_type=query_type or query_type_of(table))


#: the key _catalog_table gives the table's input format (DESCRIBE's "InputFormat" row) under
_INPUT_FORMAT = "\0input_format"


def _read_registered(spark: SparkSession, metastore: Any, name: str, filt: str | sarg.SearchArgument | None, *,
                     prune: bool, query_type: str | None) -> HiveRead:
    """``read_table`` through a Hive metastore: the metastore's partitions first, then the files' statistics."""
    from hive_bridge.hive import MetastoreClient, MetastoreError

    db, _, table_name = name.rpartition(".")
    try:
        if isinstance(metastore, MetastoreClient):
            ref = metastore.resolve_hudi_table(db or "default", table_name)
        else:
            with MetastoreClient(str(metastore)) as client:
                ref = client.resolve_hudi_table(db or "default", table_name)
        table = HudiTable.open(ref.location)
        parsed, residual = _filter_of(table, filt)
        qt = check_query_type(query_type or ref.query_type)
        tz = spark.conf.get("spark.sql.session.timeZone") or "UTC"
        chosen = ref.select_slices(table, parsed if prune else None, session_time_zone=tz, query_type=qt)
        index = ColumnStatsIndex(table, mdt_columns=filter_columns(table, parsed) if prune else None)
        result = prune_slices(table, index, chosen.slices, parsed if prune else None, None, tz, query_type=qt)
    except (MetastoreError, HudiTableError, ValueError) as exc:
        raise SparkReadError(f"table {name}: {exc}") from None
    if not prune:
        result.sarg = parsed
    result.files_total += chosen.slices_dropped
    result.bytes_total += chosen.bytes_dropped
    result.dropped_by_partition += chosen.slices_dropped
    df = read_slices(spark, table, result.slices)
    if residual:
        df = df.where(residual)
    return HiveRead(df, result, residual)


def _catalog_table(spark: SparkSession, name: str) -> tuple[str, dict[str, str]]:
    try:
        rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    except Exception as exc:
        # A table Hudi's Hive sync registered names its provider, `hudi`: a Spark without Hudi's bundle cannot
        # DESCRIBE it (DATA_SOURCE_NOT_FOUND), but its catalog entry is there to be read
        found = _catalog_entry(spark, name)
        if found is None:
            raise SparkReadError(f"table {name}: {str(exc).splitlines()[0]}") from None
        return found
    info = {str(r[0]).strip(): str(r[1]).strip() for r in rows if r[0]}
    location = info.get("Location", "")
    params: dict[str, str] = {}
    props = info.get("Table Properties", "")
    for item in props.strip("[]").split(", "):
        if "=" in item:
            k, v = item.split("=", 1)
            params[k.strip()] = v.strip()
    if info.get("Provider"):
        params["provider"] = info["Provider"]
    if info.get("InputFormat"):
        params[_INPUT_FORMAT] = info["InputFormat"]
    if not location:
        raise SparkReadError(f"table {name} has no location")
    return location.removeprefix("file:"), params


def _catalog_entry(spark: SparkSession, name: str) -> tuple[str, dict[str, str]] | None:
    """Location and parameters of a table from the session catalog's own entry (no data source resolved), in
    the form :func:`_catalog_table` gives; None when that cannot be read (no such table, no JVM session)."""
    try:
        session: Any = spark._jsparkSession
        jvm: Any = spark._jvm
        ident = session.sessionState().sqlParser().parseTableIdentifier(name)
        entry = session.sessionState().catalog().getTableMetadata(ident)
        convert = jvm.scala.jdk.javaapi.CollectionConverters
        params = {str(k): str(v) for k, v in dict(convert.asJava(entry.properties())).items()}
        location = str(entry.location().toString())
        if entry.provider().isDefined():
            params["provider"] = str(entry.provider().get())
        if entry.storage().inputFormat().isDefined():
            params[_INPUT_FORMAT] = str(entry.storage().inputFormat().get())
    except Exception:  # unreadable means "not found": the caller reports DESCRIBE's own error
        return None
    if not location:
        return None
    return location.removeprefix("file://").removeprefix("file:"), params


# --------------------------------------------------------------------------------------------------------------
# The `hudi-hive` Python data source
# --------------------------------------------------------------------------------------------------------------

def _report_file() -> str:
    import tempfile

    folder = os.environ.get("HIVE_BRIDGE_SCAN_REPORTS") or os.path.join(tempfile.gettempdir(), "hive-bridge")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "scans.jsonl")


def _record_scan(report: dict[str, Any]) -> None:
    """Scans are planned in a Python worker process, not in the driver: reports go through a file on the
    driver's machine (where planning workers run)."""
    import json

    with open(_report_file(), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(report) + "\n")


def last_scan_report(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """Files read / total of the latest `hudi-hive` scan planned on this machine (of the table at ``path`` if
    given): path, filter, pruning (whether pushed filters pruned, and why_not), files_total, files_read,
    slices_read."""
    import json

    try:
        with open(_report_file(), encoding="utf-8") as fh:
            lines = fh.readlines()
    except OSError:
        return None
    want = None if path is None else str(path).removeprefix("file:")
    for line in reversed(lines):
        try:
            report = json.loads(line)
        except ValueError:  # a line another process is still writing
            continue
        if want is None or report.get("path") == want:
            return report  # type: ignore[no-any-return]
    return None


def spark_filters_to_sarg(filters: Sequence[Any], types: dict[str, sarg.Type]) -> tuple[sarg.SearchArgument | None,
                                                                                        list[Any]]:
    """Spark's pushed filters (conjuncts) as one SearchArgument, with Spark's ORC conversion semantics
    (``types``: column name -> SARG type; names are matched by :func:`sarg.schema.find_column`):
    > is NOT <=, >= is NOT <, IsNotNull is NOT IS_NULL, Not(f) is NOT f. Returns the SearchArgument and the
    filters that could not be converted (Spark keeps applying those)."""
    from pyspark.sql import datasource as ds

    builder = sarg.builder()
    rejected: list[Any] = []
    converted = 0
    builder.start_and()

    def column(f: Any) -> str:
        return ".".join(f.attribute)

    def literal(value: Any, t: sarg.Type) -> Any:
        import datetime as dt
        from decimal import Decimal

        if value is None:
            return None
        if t is sarg.Type.LONG and isinstance(value, int) and not isinstance(value, bool):
            return value
        if t is sarg.Type.FLOAT and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if t is sarg.Type.STRING and isinstance(value, str):
            return value
        if t is sarg.Type.BOOLEAN and isinstance(value, bool):
            return value
        if t is sarg.Type.DECIMAL and isinstance(value, (Decimal, int)) and not isinstance(value, bool):
            return Decimal(value)
        if t is sarg.Type.DATE and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if t is sarg.Type.TIMESTAMP and isinstance(value, dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return sarg.Timestamp.from_datetime(value)
        raise ValueError(f"literal {value!r} does not fit {t}")

    def _emit_into(b: sarg.Builder, f: Any) -> bool:
        if isinstance(f, ds.Not):
            probe = sarg.builder()
            if not _emit_into(probe, f.child):
                return False
            b.start_not()
            _emit_into(b, f.child)
            b.end()
            return True
        found = find_column(types, column(f)) if hasattr(f, "attribute") else None
        if found is None:  # not a column of the table, or an ambiguous name: Spark applies it, nothing prunes
            return False
        name, t = found
        try:
            if isinstance(f, ds.EqualTo):
                b.equals(name, t, literal(f.value, t))
            elif isinstance(f, ds.EqualNullSafe):
                b.null_safe_equals(name, t, literal(f.value, t))
            elif isinstance(f, ds.LessThan):
                b.less_than(name, t, literal(f.value, t))
            elif isinstance(f, ds.LessThanOrEqual):
                b.less_than_equals(name, t, literal(f.value, t))
            elif isinstance(f, ds.GreaterThan):
                b.start_not().less_than_equals(name, t, literal(f.value, t)).end()
            elif isinstance(f, ds.GreaterThanOrEqual):
                b.start_not().less_than(name, t, literal(f.value, t)).end()
            elif isinstance(f, ds.In):
                b.in_(name, t, *[literal(v, t) for v in f.value])
            elif isinstance(f, ds.IsNull):
                b.is_null(name, t)
            elif isinstance(f, ds.IsNotNull):
                b.start_not().is_null(name, t).end()
            else:
                return False
        except (ValueError, sarg.SargError):
            return False
        return True

    for f in filters:
        if _emit_into(builder, f):
            converted += 1
        else:
            rejected.append(f)
    if not converted:
        return None, rejected
    builder.end()
    return builder.build(), rejected


class _FilesPartition(InputPartition):
    def __init__(self, files: list[tuple[str, tuple[str, ...], dict[str, str]]]) -> None:
        super().__init__(files)
        self.files = files


# Why the data source prunes only where Spark scopes a read plan to its scan.
#
# Spark 4.3's PythonScanBuilder stores the read plan a filter-pushdown pass produces (the pickled reader and its
# partitions) on the relation's PythonDataSourceV2 object, which every scan of that relation shares (one
# DataFrame queried again, a temp view, a self-join, two threads); PythonBatch takes whatever plan is stored there
# when the scan runs, and a scan with no pushable filter (an OR, no filter at all) never asks Python for a plan
# of its own. A plan pruned with one scan's filters is then read by another scan: rows lost. Newer Spark keeps
# the plan in the scan builder (a `readInfo` field of PythonScanBuilder); only there is "the filters Spark pushed
# for this scan" knowable, so only there do pushed filters prune. Elsewhere every scan reads every latest slice,
# and Spark applies the filters to rows. `read_hudi` / `read_table` prune on every Spark version (they plan on
# the driver, one DataFrame per filter).

_SCOPED: bool | None = None
_WHY_NOT = ("this Spark shares one read plan among all scans of a DataFrame (PythonScanBuilder keeps no "
            "readInfo of its own), so a plan pruned for one query could be read by another; use read_hudi() or "
            "`hive-bridge read` for pruned reads")


def spark_scopes_read_plans() -> bool:
    """Whether the running Spark keeps a Python data source's read plan per scan (then pushed filters may prune).

    Read from the ``PythonScanBuilder`` class in Spark's own jar (the field list of the class file); anything
    that cannot be read answers False: no pruning when it cannot be sure."""
    global _SCOPED
    if _SCOPED is None:
        try:
            _SCOPED = "readInfo" in _class_fields(_spark_sql_jar(), _SCAN_BUILDER)
        except Exception:  # unreadable means unsure, and unsure means no pruning
            _SCOPED = False
    return _SCOPED


_SCAN_BUILDER = "org/apache/spark/sql/execution/datasources/v2/python/PythonScanBuilder.class"


def _spark_sql_jar() -> str:
    import glob

    homes = [os.environ.get("SPARK_HOME", "")]
    try:
        import pyspark

        homes.append(os.path.dirname(pyspark.__file__))
    except ImportError:  # pragma: no cover - pyspark is a dependency
        pass
    for home in homes:
        found = sorted(glob.glob(os.path.join(home, "jars", "spark-sql_*.jar"))) if home else []
        if found:
            return found[-1]
    raise FileNotFoundError("spark-sql jar")


def _class_fields(jar: str, member: str) -> set[str]:
    """Names of the fields a JVM class file declares (constant pool, then the field table)."""
    import struct
    import zipfile

    with zipfile.ZipFile(jar) as zf:
        data = zf.read(member)
    if data[:4] != b"\xca\xfe\xba\xbe":
        raise ValueError(f"{member}: not a class file")
    count = struct.unpack_from(">H", data, 8)[0]
    utf8: dict[int, str] = {}
    pos, index = 10, 1
    sizes = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
    while index < count:
        tag = data[pos]
        if tag == 1:
            length = struct.unpack_from(">H", data, pos + 1)[0]
            utf8[index] = data[pos + 3:pos + 3 + length].decode("utf-8", "replace")
            pos += 3 + length
        else:
            pos += 1 + sizes[tag]
        index += 2 if tag in (5, 6) else 1
    pos += 6  # access flags, this class, super class
    interfaces = struct.unpack_from(">H", data, pos)[0]
    pos += 2 + 2 * interfaces
    fields = struct.unpack_from(">H", data, pos)[0]
    pos += 2
    names: set[str] = set()
    for _ in range(fields):
        _, name_index, _, attributes = struct.unpack_from(">HHHH", data, pos)
        names.add(utf8.get(name_index, ""))
        pos += 8
        for _ in range(attributes):
            pos += 6 + struct.unpack_from(">I", data, pos + 2)[0]
    return names


class HudiHiveReader(DataSourceReader):
    """Reads every latest file slice of the table (merged merge-on-read slices included); Spark applies every
    filter to rows. Used where Spark shares one read plan among scans (see :func:`spark_scopes_read_plans`)."""

    pruning = False

    def __init__(self, path: str, schema: Any, options: dict[str, str]) -> None:
        self.path = path
        self.schema = schema
        self.options = options

    def _pushed(self) -> list[Any]:
        """The filters Spark pushed for this scan: none for this reader."""
        return []

    def query_type(self) -> str:
        """Option ``hoodie.datasource.query.type`` (Hudi's own name) or ``queryType``: snapshot (default) or
        read_optimized."""
        value = self.options.get(QUERY_TYPE_OPTION) or self.options.get("queryType") or SNAPSHOT
        try:
            return check_query_type(value)
        except ValueError as exc:
            raise SparkReadError(f"hudi-hive: {exc}") from None

    def partitions(self) -> Sequence[InputPartition]:
        given = self.options.get(SLICES_OPTION)
        if given is not None:  # read_hudi planned on the driver: read exactly these slices
            import json

            return [_FilesPartition([(b, tuple(logs), values)]) for b, logs, values in json.loads(given)] \
                or [_FilesPartition([])]
        # Hudi's own data source option: hoodie.metadata.enable=true lists from the metadata table
        use_mdt = str(self.options.get("hoodie.metadata.enable", "false")).lower() == "true"
        snap = default_cache().get(self.path, listing="auto" if use_mdt else "folders",
                                   storage_options=_storage_options_of(self.options) or None)
        table = snap.table
        filt = None
        if self.pruning:
            from hive_bridge.typemap import table_sarg_schema
            from sarg.schema import type_of

            types: dict[str, sarg.Type] = {}
            for name, hive_type in table_sarg_schema(table).items():
                ct = type_of(hive_type)
                if ct.sarg_type is not None:
                    types[name] = ct.sarg_type
            filt, _ = spark_filters_to_sarg(self._pushed(), types)
        listing = snap.plan(filt, None, self.options.get("sessionTimeZone", "UTC"), query_type=self.query_type())
        _record_scan({"path": self.path, "filter": str(filt) if filt else None, "pruning": self.pruning,
                      "why_not": None if self.pruning else _WHY_NOT,
                      "files_total": listing.files_total, "files_read": listing.files_kept,
                      "query_type": listing.query_type, "listing_source": table.listing_source,
                      "storage": table.storage.scheme or "local", "route": ROUTE_WORKERS,
                      "requests": table.storage.requests.snapshot(),
                      "slices_read": len(listing.slices)})
        parts = []
        for s in listing.slices:
            base = s.base_file.full_path if s.base_file is not None else ""
            parts.append(_FilesPartition([(base, tuple(lf.full_path for lf in s.log_files),
                                           dict(s.partition_values))]))
        return parts or [_FilesPartition([])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        target = to_arrow_schema(self.schema, timezone="UTC")  # Spark's TimestampType is UTC-adjusted
        assert isinstance(partition, _FilesPartition)
        for base, logs, values in partition.files:
            if _read_by_hudi_rs(base, bool(logs)):
                rel = os.path.relpath(base, self.path) if base else ""
                batches = _merge_with_hudi(_hudi_reader(self.path, _storage_options_of(self.options)), rel,
                                           [os.path.relpath(p, self.path) for p in logs])
                if not batches:
                    continue
                table = pa.Table.from_batches(batches)
            elif is_local_uri(base):
                table = pq.read_table(base)
            else:  # object storage, through pyarrow.fs in this worker (no Hadoop connector needed)
                table = self._read_remote(base)
            yield from _conform(table, target, values).to_batches()

    def _read_remote(self, location: str) -> pa.Table:
        """One parquet base file on object storage; a file gone since the listing is a clear error (never a
        silently missing file's rows)."""
        storage = Storage.for_uri(self.path, _storage_options_of(self.options))
        try:
            return pq.read_table(storage.fs_path(location), filesystem=storage.fs)
        except FileNotFoundError:
            raise SparkReadError(f"{location}: the base file is gone (deleted since the table was listed, e.g. "
                                 "by a cleaner): read the table again") from None
        except OSError as exc:
            raise SparkReadError(f"{location}: cannot read: {exc}") from None


class PruningHudiHiveReader(HudiHiveReader):
    """Prunes with exactly the filters Spark pushed for this scan (only where Spark keeps the read plan per
    scan). Every filter goes back to Spark, which applies it to rows: pruning is by file, never by row."""

    pruning = True

    def __init__(self, path: str, schema: Any, options: dict[str, str]) -> None:
        super().__init__(path, schema, options)
        self.filters: list[Any] = []

    def pushFilters(self, filters: list[Any]) -> Iterator[Any]:
        self.filters = list(filters)
        yield from filters

    def _pushed(self) -> list[Any]:
        return self.filters


def _hudi_reader(root: str, storage_options: Mapping[str, str] | None = None) -> Any:
    """hudi-rs's file-group reader of a table (it merges a base file with its log files); a table on object
    storage gets the same endpoint and credentials as pyarrow (see :func:`hudi_rs_storage_options`)."""
    import hudi

    builder = hudi.HudiTableBuilder.from_base_uri(root)
    if not is_local_uri(root):
        builder = builder.with_storage_options(hudi_rs_storage_options(root, storage_options or {}))
    return builder.build().create_file_group_reader_with_options()


#: hive-bridge's storage options (pyarrow's S3FileSystem names and the AWS ones) -> hudi-rs's (object_store's)
_HUDI_RS_S3_KEYS = {
    "access_key": "aws_access_key_id", "aws_access_key_id": "aws_access_key_id",
    "secret_key": "aws_secret_access_key", "aws_secret_access_key": "aws_secret_access_key",
    "session_token": "aws_session_token", "aws_session_token": "aws_session_token",
    "region": "aws_region", "aws_region": "aws_region",
    "endpoint_override": "aws_endpoint", "endpoint_url": "aws_endpoint",
}
#: the same from the environment, when no option says otherwise
_HUDI_RS_S3_ENV = {
    "AWS_ACCESS_KEY_ID": "aws_access_key_id", "AWS_SECRET_ACCESS_KEY": "aws_secret_access_key",
    "AWS_SESSION_TOKEN": "aws_session_token", "AWS_REGION": "aws_region", "AWS_DEFAULT_REGION": "aws_region",
    "AWS_ENDPOINT_URL_S3": "aws_endpoint", "AWS_ENDPOINT_URL": "aws_endpoint",
}


def hudi_rs_storage_options(root: str, options: Mapping[str, str]) -> dict[str, str]:
    """The storage options hudi-rs needs to read an S3 table the way pyarrow does: endpoint and credentials
    from ``options`` (hive-bridge's) or the environment, ``http`` allowed when the endpoint says so, and no
    instance-metadata lookup when credentials are given."""
    scheme = root.split("://", 1)[0].lower() if "://" in root else ""
    if scheme not in ("s3", "s3a", "s3n"):
        return {}
    out: dict[str, str] = {}
    for env, key in _HUDI_RS_S3_ENV.items():
        found = os.environ.get(env)
        if found and key not in out:
            out[key] = found
    for k, v in options.items():
        mapped = _HUDI_RS_S3_KEYS.get(k)
        if mapped is not None:
            out[mapped] = str(v)
    endpoint = out.get("aws_endpoint")
    if endpoint is not None:
        if "://" not in endpoint:
            endpoint = f"{options.get('scheme') or 'https'}://{endpoint}"
            out["aws_endpoint"] = endpoint
        if endpoint.startswith("http://"):
            out["aws_allow_http"] = "true"
    if "aws_access_key_id" in out:
        out.setdefault("aws_skip_signature", "false")
    return out


def _merge_with_hudi(reader: Any, base: str, logs: list[str]) -> list[pa.RecordBatch]:
    """The rows of one merge-on-read file slice (paths relative to the table root), logs merged."""
    result = reader.read_file_slice_from_paths(base, logs)
    batches = result if isinstance(result, list) else [result]
    return [b for b in batches if b.num_rows]


def _conform(table: pa.Table, target: pa.Schema, partition_values: dict[str, str]) -> pa.Table:
    cols = []
    for f in target:
        if f.name in table.column_names:
            col = table.column(f.name)
            cols.append(col.cast(f.type) if col.type != f.type else col)
        elif f.name in partition_values:
            value = partition_values[f.name]
            arr = pa.array([None if value == HIVE_DEFAULT_PARTITION else value] * table.num_rows,
                           pa.string())
            cols.append(arr.cast(f.type))
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.table(cols, schema=target)


class HudiHiveDataSource(DataSource):
    """``spark.read.format("hudi-hive").load(path)``: a Hudi table read through the Hive storage handler path."""

    @classmethod
    def name(cls) -> str:
        return "hudi-hive"

    def schema(self) -> Any:
        return spark_schema(HudiTable.open(self._path(), storage_options=_storage_options_of(self.options)
                                           or None).arrow_schema())

    def _path(self) -> str:
        path = self.options.get("path")
        if not path:
            raise SparkReadError("hudi-hive needs a path: spark.read.format('hudi-hive').load(path)")
        return str(path).removeprefix("file:")

    def reader(self, schema: Any) -> DataSourceReader:
        cls = PruningHudiHiveReader if spark_scopes_read_plans() else HudiHiveReader
        return cls(self._path(), schema, dict(self.options))


def register(spark: SparkSession) -> None:
    """Register the ``hudi-hive`` data source with a session (and turn Python filter pushdown on), after
    checking that the session's Python workers can run it (:func:`check_workers`)."""
    check_workers(spark)
    guard_parquet_pushdown(spark)  # a cached DataFrame of the data source must keep its NaN rows too
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(HudiHiveDataSource)


_CHECKED: set[str] = set()
_PROBE = """
def probe(_):
    import sys
    out = [sys.executable]
    for name in ("pyarrow", "hive_bridge"):
        try:
            __import__(name)
            out.append("")
        except Exception as exc:
            out.append(type(exc).__name__ + ": " + str(exc))
    return out
"""


def check_workers(spark: SparkSession) -> None:
    """Run one tiny task and check that Spark's Python workers import pyarrow and hive_bridge; if they do not
    (the workers run another interpreter than the project's), say what to set instead of failing later with
    ``ModuleNotFoundError`` deep inside a Java stack trace. Once per Spark application."""
    app = spark.sparkContext.applicationId
    if app in _CHECKED:
        return
    namespace: dict[str, Any] = {"__name__": "hive_bridge_worker_probe"}  # pickled by value, not by module
    exec(compile(_PROBE, "<hive-bridge worker probe>", "exec"), namespace)  # fixed source above
    advice = (f"set PYSPARK_PYTHON={sys.executable} before the session starts (or the Spark conf "
              f"spark.pyspark.python), so the workers run the interpreter hive-bridge is installed in")
    try:
        executable, *problems = spark.sparkContext.parallelize([0], 1).map(namespace["probe"]).collect()[0]
    except Exception as exc:  # a worker that cannot start at all
        first = next((line for line in str(exc).splitlines() if "Error" in line), str(exc).splitlines()[0])
        raise SparkReadError(f"Spark's Python workers failed to start: {first.strip()[:300]}; {advice}") from None
    missing = [p for p in problems if p]
    if missing:
        raise SparkReadError(f"Spark's Python workers run {executable}, which cannot import what hive-bridge "
                             f"needs ({'; '.join(missing)}); {advice}")
    _CHECKED.add(app)


__all__ = [
    "HiveRead",
    "HoodieParquetInputFormat",
    "HudiHiveDataSource",
    "SparkReadError",
    "check_workers",
    "guard_parquet_pushdown",
    "last_scan_report",
    "list_files",
    "read_hudi",
    "read_slices",
    "read_slices_in_workers",
    "read_table",
    "register",
    "session",
    "spark_filters_to_sarg",
    "spark_scopes_read_plans",
]
