"""Reads of Hudi tables by name: from Spark's catalog or a Hive metastore."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sarg
from hive_bridge.errors import HudiTableError
from hive_bridge.pruning.pruner import check_query_type, filter_columns
from hive_bridge.pruning.snapshot import TableSnapshot
from hive_bridge.spark.file_index import indexed_read
from hive_bridge.spark.jar import is_classic
from hive_bridge.spark.reads import HiveRead, filter_of, read_hudi, read_slices
from hive_bridge.spark.sessions import SparkReadError
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.storage.core import StorageError
from hive_bridge.table.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

def read_table(spark: SparkSession, name: str, filt: str | sarg.SearchArgument | None = None, *,
               prune: bool = True, query_type: str | None = None, metastore: Any = None,
               begin_instant: str | None = None, end_instant: str | None = None,
               incremental_fallback: bool | None = None) -> HiveRead:
    """Read a Hudi table by name: from a Hive metastore (``metastore``: its ``thrift://host:port`` URI or a
    :class:`~hive_bridge.hive.metastore.MetastoreClient`; ``name`` is ``db.table``, ``default`` when no database is
    given), else from Spark's catalog (or the metastore Spark is connected to). The table is a Hudi table as
    Hudi's Hive sync registers one (Hudi's input formats, or ``spark.sql.sources.provider=hudi``) or as older
    hive-bridge versions did (a ``storage_handler`` parameter naming a Hudi class; read, with a
    ``RuntimeWarning`` saying how to register it again).

    Without a ``query_type``, the table says: ``HoodieParquetInputFormat`` (Hive sync's ``<t>_ro``, and a
    copy-on-write table) is a read-optimized query, ``HoodieParquetRealtimeInputFormat`` (``<t>_rt``, ``<t>``) a
    snapshot query; where the input format says nothing (an old registration, a Spark data source table), a name
    ending in ``_ro`` is read-optimized, else snapshot. Through a metastore, the table's partitions are pruned by
    their metastore values and read from their locations (see
    :meth:`hive_bridge.hive.metastore.RegisteredHudiTable.select_slices`) before files are judged by statistics.

    ``query_type="incremental"`` with ``begin_instant`` (``end_instant``, ``incremental_fallback``; a
    ``begin_instant`` alone says it too): an incremental query of the table's location, as :func:`read_hudi`
    reads one (Hudi's ``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``; docs/incremental.md);
    from Spark's catalog only."""
    from hive_bridge.hive import HiveTable, is_hudi, query_type_of, registered_the_old_way

    incremental = begin_instant is not None or end_instant is not None or \
        (query_type or "").strip().lower() == "incremental"
    if incremental and begin_instant is None:
        raise SparkReadError(f"table {name}: an incremental query needs begin_instant "
                             "(hoodie.datasource.read.begin.instanttime; 'earliest' for all commits)")
    if incremental and metastore is not None:
        raise SparkReadError(f"table {name}: an incremental query through a Hive metastore is not supported: read "
                             "it from Spark's catalog, or read_hudi(spark, location, begin_instant=...)")
    if metastore is not None:
        return _read_registered(spark, metastore, name, filt, prune=prune, query_type=query_type)
    location, params = _catalog_table(spark, name)
    table = HiveTable(database="", name=name.rpartition(".")[2], location=location, columns=(), partition_keys=(),
                      input_format=params.get(_INPUT_FORMAT) or None, output_format=None, serde=None,
                      table_type=None, parameters={k: v for k, v in params.items() if k != _INPUT_FORMAT})
    provider = params.get("provider", "").lower()
    if not is_hudi(table) and provider not in ("hudi", "hudi-hive"):
        raise SparkReadError(f"table {name} is not a Hudi table: not stored by the Hudi storage handler "
                             f"(storage_handler={params.get('storage_handler') or 'unset'}), input format "
                             f"{table.input_format or 'unset'}, provider {provider or 'unset'}")
    if registered_the_old_way(table):
        import warnings

        warnings.warn(f"table {name} names storage handler {table.storage_handler}, a class no Hudi release "
                      "ships: Hive and Spark cannot load such a table; hive-bridge reads it from its location "
                      f"{location}. Register it as Hudi's Hive sync does (Hudi's HiveSyncTool, or "
                      f"hive_bridge.hive.metastore.MetastoreClient(uri).sync_hudi_table({location!r}, ...))",
                      RuntimeWarning, stacklevel=2)
    if incremental:
        return read_hudi(spark, location, filt, prune=prune, begin_instant=begin_instant, end_instant=end_instant,
                         incremental_fallback=incremental_fallback)
    qt = query_type or query_type_of(table)
    if prune and is_classic(spark):  # Spark's own file source, each scan pruned by the file index
        return indexed_read(spark, location, filt, query_type=qt)
    return read_hudi(spark, location, filt, prune=prune, query_type=qt)


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
        parsed, residual = filter_of(table, filt)
        qt = check_query_type(query_type or ref.query_type)
        tz = spark.conf.get("spark.sql.session.timeZone") or "UTC"
        chosen = ref.select_slices(table, parsed if prune else None, session_time_zone=tz, query_type=qt)
        index = ColumnStatsIndex(table, mdt_columns=filter_columns(table, parsed) if prune else None)
        result = TableSnapshot.of(table, index, chosen.slices).plan(parsed if prune else None, session_time_zone=tz,
                                                                    query_type=qt)
    except (MetastoreError, HudiTableError, StorageError, ValueError) as exc:
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

