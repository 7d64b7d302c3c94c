"""Hive-on-Spark reads of Hudi tables: the input format's surviving files, read by Spark's own parquet reader.

    spark = hive_bridge.spark.session()
    read = hive_bridge.spark.read_hudi(spark, "/data/trips", "(and leaf-(EQUALS city sf) (not leaf-(IS_NULL fare)))")
    read.df.show(); print(read.listing.files_kept, "of", read.listing.files_total, "files read")

The result equals a full read of the latest file slices with the same filter: pruning only drops files whose
statistics prove no row matches, and the whole filter (the residual) is applied to the rows of the files kept.
Merge-on-read slices with log files are read through hudi-rs's file-group reader (base file merged with its logs);
if that cannot be done the read fails with a clear error rather than returning stale rows.

``hive_bridge.spark.register(spark)`` adds the ``hudi-hive`` Python data source:
``spark.read.format(PYTHON_SOURCE).load(path).where("id > 5")`` prunes with the filters Spark pushes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pyarrow as pa

import sarg
from hive_bridge.errors import HudiTableError
from hive_bridge.filters.residual import to_sql
from hive_bridge.layout.asof import merge_bound
from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION, FileSlice
from hive_bridge.pruning import ListStatusResult
from hive_bridge.pruning.pruner import SNAPSHOT, check_query_type
from hive_bridge.pruning.snapshot import TableSnapshot, default_cache
from hive_bridge.spark.datasource import PYTHON_SOURCE, register_python_source
from hive_bridge.spark.hadoop import (
    can_open,
    conf_getter,
    merge_storage_options,
    s3a_storage_options,
    session_hadoop_conf,
    spark_storage,
)
from hive_bridge.spark.jar import sound_parquet_format
from hive_bridge.spark.merge import conform, hudi_reader, merge_with_hudi, read_by_hudi_rs
from hive_bridge.spark.options import (
    AS_OF_OPTION,
    ROUTE_SPARK,
    ROUTE_WORKERS,
    SLICES_OPTION,
    STORAGE_OPTION_PREFIX,
)
from hive_bridge.spark.sessions import (
    CACHE_PRUNING,
    PARQUET_PUSHDOWN,
    SparkReadError,
    guard_parquet_pushdown,
    spark_schema,
)
from hive_bridge.storage.core import S3_SCHEMES, SPARK_NATIVE_SCHEMES, StorageError, is_local_uri, split_uri
from hive_bridge.table.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class HiveRead:
    """A pruned (or full) read: the DataFrame, what listStatus kept, and the filter applied to rows."""

    df: DataFrame
    listing: ListStatusResult
    residual_sql: str | None
    #: how the rows are read: ROUTE_SPARK (Spark's own parquet reader: local and HDFS tables) or ROUTE_WORKERS
    #: (pyarrow.fs in Spark's Python workers: object storage Spark's Hadoop file systems cannot open here)
    route: str = ""


def filter_of(table: HudiTable, filt: str | sarg.SearchArgument | None) -> tuple[sarg.SearchArgument | None,
                                                                                   str | None]:
    """(SearchArgument to prune with, Spark SQL to apply to rows)."""
    if filt is None or (isinstance(filt, str) and not filt.strip()):
        return None, None
    from hive_bridge.filters.typemap import table_sarg_schema
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
               storage_options: Mapping[str, str] | None = None,
               as_of: str | None = None) -> tuple[HudiTable, ListStatusResult, str | None]:
    """(the table, what listStatus keeps for ``filt``, the filter to apply to rows); ``as_of``: the table's
    state as of an instant or time (time travel, :meth:`TableSnapshot.of`; ``result.as_of`` says which)."""
    try:
        # the process's snapshot of the table: re-used while its timeline is unchanged (a DataFrame queried
        # again plans in milliseconds), followed when an instant completed (never stale)
        snap = default_cache().get(path, listing=listing, stats_source=stats_source,
                                   storage_options=storage_options)
        if as_of is not None:
            snap = TableSnapshot.of(snap.table, snap.index, as_of=as_of, where="as_of")
    except (HudiTableError, StorageError) as exc:
        raise SparkReadError(str(exc)) from None
    table = snap.table
    parsed, residual = filter_of(table, filt)
    try:
        query_type = check_query_type(query_type)
    except ValueError as exc:
        raise SparkReadError(str(exc)) from None
    try:
        result = snap.plan(parsed if prune else None, session_time_zone=session_time_zone, explain=explain,
                           query_type=query_type)
    except (HudiTableError, StorageError) as exc:
        raise SparkReadError(str(exc)) from None
    if not prune:
        result.sarg = parsed
    return table, result, residual


def list_incremental(path: str, filt: str | sarg.SearchArgument | None = None, *, begin: str | None,
                     end: str | None = None, fallback: bool | None = None, session_time_zone: str = "UTC",
                     explain: bool = False, listing: str = "folders", stats_source: str = "auto",
                     storage_options: Mapping[str, str] | None = None
                     ) -> tuple[HudiTable, ListStatusResult, str]:
    """An incremental query's files: the slices of the file groups the commits in (``begin``, ``end``] wrote
    (Hudi's ``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``; ``begin="earliest"``), pruned by
    ``filt`` with those files' own statistics; (the table, the listing, the row filter: commit time in the
    range, and ``filt``). ``fallback``: ``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` (see
    :mod:`hive_bridge.layout.incremental`). An incremental query is a snapshot query of those slices (merged)."""
    try:
        snap = default_cache().get(path, listing=listing, stats_source=stats_source,
                                   storage_options=storage_options)
        table = snap.table
        rng, slices = table.incremental(begin, end, fallback=fallback)
        parsed, residual = filter_of(table, filt)
        result = TableSnapshot.of(table, snap.index, slices, latest_state=False).plan(
            parsed, session_time_zone=session_time_zone, explain=explain)
    except (HudiTableError, StorageError) as exc:
        raise SparkReadError(str(exc)) from None
    result.commit_range = (rng.begin, rng.end)
    rows = rng.row_filter() if not residual else f"({rng.row_filter()}) AND ({residual})"
    return table, result, rows


def read_hudi(spark: SparkSession, path: str, filt: str | sarg.SearchArgument | None = None, *,
              prune: bool = True, session_time_zone: str | None = None, query_type: str = SNAPSHOT,
              listing: str = "folders", stats_source: str = "auto",
              storage_options: Mapping[str, str] | None = None, as_of: str | None = None,
              begin_instant: str | None = None, end_instant: str | None = None,
              incremental_fallback: bool | None = None) -> HiveRead:
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
    ``as_of``: the table's state as of a completed instant or a time (time travel: ``yyyyMMddHHmmssSSS``,
    ``yyyyMMddHHmmss``, ``yyyy-MM-dd HH:mm:ss[.SSS]``, ``yyyy-MM-dd``), planned with the statistics of the files
    of that state; a state that cannot be read exactly (unknown, pending, cleaned, before the first
    commit, future instant; archived instants are read from the archived timeline) is
    a ``SparkReadError`` naming the instant and the table.
    ``begin_instant`` (``end_instant``, ``incremental_fallback``): an incremental query instead, the records
    written by the commits in (begin, end] (:func:`list_incremental`); ``incremental_fallback`` None: the
    table version's default (a full scan where the range cannot be read: on for versions 8 and 9, as Hudi 1.x).
    """
    tz = session_time_zone or spark.conf.get("spark.sql.session.timeZone") or "UTC"
    path, storage_options, by_spark = _session_storage(spark, str(path), storage_options)
    residual: str | None
    if begin_instant is not None or end_instant is not None:
        if as_of is not None:
            raise SparkReadError("as_of and begin_instant / end_instant: a read is a time travel or an incremental "
                                 "query, not both")
        table, result, residual = list_incremental(path, filt if prune else None, begin=begin_instant,
                                                   end=end_instant, fallback=incremental_fallback,
                                                   session_time_zone=tz, listing=listing,
                                                   stats_source=stats_source, storage_options=storage_options)
        if not prune and filt is not None:
            residual = f"({residual}) AND ({filter_of(table, filt)[1]})"
        bound = result.commit_range[1] if result.commit_range else None
    else:
        table, result, residual = list_files(path, filt, prune=prune, session_time_zone=tz, query_type=query_type,
                                             listing=listing, stats_source=stats_source,
                                             storage_options=storage_options, as_of=as_of)
        bound = result.as_of
    if by_spark:
        df, route = read_slices(spark, table, result.slices, as_of=bound), ROUTE_SPARK
    else:
        df, route = read_slices_in_workers(spark, table, result.slices, storage_options, as_of=bound), ROUTE_WORKERS
    if residual:
        df = df.where(residual)
    return HiveRead(df, result, residual, route)




def _session_storage(spark: SparkSession, path: str, storage_options: Mapping[str, str] | None
                     ) -> tuple[str, Mapping[str, str] | None, bool]:
    """(the table's URI, its storage options, whether Spark's parquet reader reads its files): a table on storage
    the session's Hadoop file systems open is read by Spark (``s3://`` as ``s3a://``), with the session's S3A
    settings for the Python side too (explicit ``storage_options`` winning); any other object storage in the
    Python workers, S3 still with the session's S3A settings (one configuration for both sides)."""
    if is_local_uri(path) or split_uri(path)[0] in SPARK_NATIVE_SCHEMES:
        return path, storage_options, True
    conf = session_hadoop_conf(spark)
    if conf is None:
        return path, storage_options, False
    if can_open(path, conf):
        uri, options = spark_storage(path, storage_options or {}, conf)
        return uri, options or None, True
    if split_uri(path)[0] in S3_SCHEMES:
        derived = s3a_storage_options(conf_getter(conf), urlsplit(path).hostname or "")
        return path, merge_storage_options(derived, storage_options or {}) or None, False
    return path, storage_options, False


def read_slices_in_workers(spark: SparkSession, table: HudiTable, slices: Sequence[FileSlice],
                           storage_options: Mapping[str, str] | None = None,
                           as_of: str | None = None) -> DataFrame:
    """The rows of the given slices read by the Python data source (``hudi-hive-python``) in Spark's Python workers through
    ``pyarrow.fs`` (no Hadoop connector needed): each worker opens the table's storage from its URI,
    ``storage_options`` and the environment."""
    import json

    register_python_source(spark)
    files = [(s.base_file.full_path if s.base_file is not None else "", [lf.full_path for lf in s.log_files],
              dict(s.partition_values)) for s in slices]
    reader = (spark.read.format(PYTHON_SOURCE).schema(spark_schema(table.arrow_schema()))
              .option(SLICES_OPTION, json.dumps(files)))
    if as_of is not None:                       # merges skip the log blocks of later instants
        reader = reader.option(AS_OF_OPTION, as_of)
    # the table's own options: they hold the credentials its URI held (taken out of the URI it is loaded by)
    for key, value in {**(storage_options or {}), **table.storage.options}.items():
        reader = reader.option(STORAGE_OPTION_PREFIX + key, value)
    return reader.load(str(table.base_path))


def read_slices(spark: SparkSession, table: HudiTable, slices: Sequence[FileSlice], *,
                as_of: str | None = None) -> DataFrame:
    """The rows of the given file slices as one DataFrame, partition columns restored. ``as_of``: the slices
    are the state as of this instant (time travel: merges skip the log blocks of later instants).

    A filter applied to this DataFrame must see every row of the files: base files are read by Spark's parquet
    reader handed only the filters that cannot lose a row (``SoundParquetFileFormat``, the session's settings
    untouched); a session that cannot load it (Spark Connect) has its parquet filter pushdown turned off instead.
    The session's cached-batch pruning is turned off either way (see :func:`guard_parquet_pushdown`)."""
    sound = sound_parquet_format(spark)
    # a cached DataFrame's batch pruning drops NaN rows too, and no relation can reach it: off in the session
    guard_parquet_pushdown(spark, (CACHE_PRUNING,) if sound is not None else (PARQUET_PUSHDOWN, CACHE_PRUNING))
    schema = table.arrow_schema()
    sp_schema = spark_schema(schema)
    file_cols = set(table.file_schema().names)
    path_cols = [f for f in table.properties.partition_fields if f not in file_cols]
    plain: list[tuple[FileSlice, str]] = []
    merged: list[FileSlice] = []
    for s in slices:
        if s.base_file is None or read_by_hudi_rs(s.base_file.path, bool(s.log_files)):
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
                                            group[0][0].partition_values, sound))
        else:
            frames.append(_read_parquet(spark, table, [p for _, p in plain], [], {}, sound))
    if merged:
        frames.append(_read_merged(spark, table, merged, schema, as_of))
    if not frames:
        return spark.createDataFrame([], sp_schema)
    out = frames[0]
    for frame in frames[1:]:
        out = out.unionByName(frame, allowMissingColumns=True)
    return out.select(*[f"`{f.name}`" for f in schema])




def _read_parquet(spark: SparkSession, table: HudiTable, paths: list[str], path_cols: list[str],
                  values: dict[str, str], file_format: str | None) -> DataFrame:
    from pyspark.sql import functions as F

    file_schema = spark_schema(table.file_schema())
    old = spark.conf.get("spark.sql.sources.parallelPartitionDiscovery.threshold")
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(max(32, len(paths) + 1)))
    try:
        df = spark.read.format(file_format or "parquet").schema(file_schema).load(paths)
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
                 schema: pa.Schema, as_of: str | None = None) -> DataFrame:
    """Slices Spark's parquet reader cannot take: hudi-rs merges each base file with its log files (and reads
    base files of other formats); refuse if it cannot."""
    import importlib.util

    if importlib.util.find_spec("hudi") is None:
        raise SparkReadError(f"{table.base_path}: {len(slices)} file slices have log files (merge-on-read) or "
                             f"{table.properties.base_file_format} base files, and the `hudi` package that reads "
                             "them is not installed; refusing to return stale or missing rows")
    parts: list[pa.Table] = []
    try:
        reader = hudi_reader(str(table.base_path), table.storage.options, merge_bound(as_of))
        for s in slices:
            base = s.base_file.path if s.base_file is not None else ""
            batches = merge_with_hudi(reader, base, [lf.path for lf in s.log_files])
            if batches:
                parts.append(conform(pa.Table.from_batches(batches), schema, s.partition_values))
    except Exception as exc:
        raise SparkReadError(f"{table.base_path}: cannot read {len(slices)} file slices with hudi-rs (merge-on-read "
                             f"logs or {table.properties.base_file_format} base files; {type(exc).__name__}: "
                             f"{exc}); refusing to return stale or missing rows") from None
    if not parts:
        return spark.createDataFrame([], spark_schema(schema))
    return spark.createDataFrame(pa.concat_tables(parts))

