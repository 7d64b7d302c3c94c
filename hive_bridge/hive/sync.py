"""What Hudi's Hive sync registers for a Hudi table, computed without a metastore.

Tables are registered the way Hudi's ``HiveSyncTool`` registers them in its HMS mode (apache/hudi
``hudi-sync/hudi-hive-sync``: ``HiveSyncTool.doSync``/``syncFirstTime``, ``ddl/HMSDDLExecutor.createTable`` and
``addPartitionsToTable``, ``HoodieHiveSyncClient.updateLastCommitTimeSynced``,
``sync/common/util/SparkDataSourceTableUtils``), with its defaults:

- copy-on-write: one table ``<t>`` with ``org.apache.hudi.hadoop.HoodieParquetInputFormat``;
- merge-on-read (``hoodie.datasource.hive_sync.table.strategy=ALL``): ``<t>_ro`` with ``HoodieParquetInputFormat``
  (read-optimized), ``<t>_rt`` and, since Hudi 0.14 (``hoodie.meta.sync.sync_snapshot_with_table_name=true``),
  ``<t>`` itself with ``org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat`` (snapshot);
  ``skip_ro_suffix`` names the read-optimized table ``<t>``; strategy ``RO`` / ``RT`` registers ``<t>`` alone
  (:func:`hive_sync_tables`);
- output format ``MapredParquetOutputFormat``, serde ``ParquetHiveSerDe`` with serde properties
  ``serialization.format=1``, ``path=<base path>`` and ``hoodie.query.as.ro.table``;
- table parameters ``EXTERNAL=TRUE`` (table type ``EXTERNAL_TABLE``), ``last_commit_time_sync`` (the latest
  completed commit; ``last_commit_completion_time_sync`` where completion times are known, table version 8+),
  ``spark.sql.sources.provider=hudi`` and the Spark schema properties (``spark.sql.sources.schema.numParts`` /
  ``part.N``, ``numPartCols`` / ``partCol.N``: :func:`spark_table_properties`), which is how Spark reads the
  table as a Hudi data source table;
- columns from the table's schema (meta columns included) without the partition columns, which are the
  partition keys, typed by :func:`hive_bridge.filters.typemap.arrow_to_hive_sync_type`; one metastore partition per
  Hudi partition, located at ``<base path>/<partition path>``, its values extracted as Hudi's default extractor
  for the table does (hive-style ``k=v``, single or multiple parts: :func:`partition_values`).

:func:`plan_hive_sync` gathers all of it for one Hudi table; :meth:`hive_bridge.hive.client.MetastoreClient.
sync_hudi_table` registers what it planned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hive_bridge.hive.model import (
    HUDI_INPUT_FORMAT,
    HUDI_REALTIME_INPUT_FORMAT,
    LAST_COMMIT_COMPLETION_TIME_SYNC,
    LAST_COMMIT_TIME_SYNC,
    SCHEMA_PART_LENGTH,
    SPARK_PROVIDER,
    SPARK_SCHEMA_PREFIX,
    SUFFIX_READ_OPTIMIZED,
    SUFFIX_SNAPSHOT,
    HivePartition,
    MetastoreError,
    local_location,
    location_uri,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["HiveSyncPlan", "HiveSyncTable", "hive_sync_tables", "partition_values", "plan_hive_sync",
           "spark_table_properties"]


@dataclass(frozen=True)
class HiveSyncTable:
    """One table Hive sync registers for a Hudi table: its name, whether it is the realtime (snapshot) one, and
    the ``readAsOptimized`` flag (serde property ``hoodie.query.as.ro.table``)."""

    name: str
    realtime: bool
    read_optimized: bool

    @property
    def input_format(self) -> str:
        return HUDI_REALTIME_INPUT_FORMAT if self.realtime else HUDI_INPUT_FORMAT


def hive_sync_tables(name: str, table_type: str, *, skip_ro_suffix: bool = False, table_strategy: str = "ALL",
                     sync_snapshot_with_table_name: bool = True) -> list[HiveSyncTable]:
    """The tables ``HiveSyncTool.doSync`` registers for a Hudi table, in its order, with its defaults.

    Copy-on-write: ``name`` (``syncHoodieTable(name, false, false)``). Merge-on-read, strategy ``ALL``:
    ``name_ro`` (or ``name`` with ``skip_ro_suffix``), ``name_rt``, then ``name`` again when
    ``sync_snapshot_with_table_name`` (its default, since Hudi 0.14) — a later sync of the same name updates its
    input format and serde properties, so with ``skip_ro_suffix`` too ``name`` ends up realtime (as in Hudi).
    Strategy ``RO`` / ``RT``: ``name`` alone, read-optimized / realtime."""
    kind = table_type.strip().upper()
    if kind == "COPY_ON_WRITE":
        return [HiveSyncTable(name, False, False)]
    if kind != "MERGE_ON_READ":
        raise MetastoreError(f"unknown Hudi table type {table_type!r}")
    strategy = table_strategy.strip().upper()
    if strategy == "RO":
        return [HiveSyncTable(name, False, True)]
    if strategy == "RT":
        return [HiveSyncTable(name, True, False)]
    if strategy != "ALL":
        raise MetastoreError(f"unknown Hive sync table strategy {table_strategy!r}: RO, RT or ALL")
    synced = [HiveSyncTable(name if skip_ro_suffix else name + SUFFIX_READ_OPTIMIZED, False, True),
              HiveSyncTable(name + SUFFIX_SNAPSHOT, True, False)]
    if sync_snapshot_with_table_name:
        synced.append(HiveSyncTable(name, True, False))
    last: dict[str, HiveSyncTable] = {}
    for t in synced:
        last[t.name.lower()] = t
    order = list(dict.fromkeys(t.name.lower() for t in synced))
    return [last[n] for n in order]


def partition_values(partition_path: str, partition_fields: Sequence[str], hive_style: bool) -> list[str]:
    """A Hudi partition path's values as Hive sync's default extractor for the table reads them
    (``HoodieSyncConfig.META_SYNC_PARTITION_EXTRACTOR_CLASS``, inferred): no partition fields,
    ``NonPartitionedExtractor`` (none); one field, ``HiveStylePartitionValueExtractor`` (hive-style: the text after
    ``=``) or ``SinglePartPartitionValueExtractor`` (the whole path, ``/`` turned into ``-``); several,
    ``MultiPartKeysValueExtractor`` (one value per ``/``-separated part, the text after ``=`` where there is one)."""
    if not partition_fields:
        return []
    if len(partition_fields) == 1:
        if hive_style:
            parts = partition_path.split("=")
            if len(parts) != 2:
                raise MetastoreError(f"partition path {partition_path!r} is not hive-style (one field=value)")
            return [parts[1]]
        return [partition_path.replace("/", "-")]
    if not partition_path:
        return []
    out = []
    for part in partition_path.split("/"):
        if "=" in part:
            pieces = part.split("=")
            if len(pieces) != 2:
                raise MetastoreError(f"partition field {part!r} of {partition_path!r} is not field=value")
            out.append(pieces[1])
        else:
            out.append(part)
    return out


def spark_table_properties(fields: Sequence[pa.Field], partition_fields: Sequence[str],
                           spark_version: str = "") -> dict[str, str]:
    """Hive sync's Spark data source properties (``SparkDataSourceTableUtils.getSparkTableProperties``): the
    provider, the schema as Spark's JSON (partition columns last; :func:`hive_bridge.filters.typemap.
    arrow_to_spark_schema_json`) cut in parts of 4,000 characters, and the partition columns."""
    from hive_bridge.filters.typemap import arrow_to_spark_schema_json

    parts = set(partition_fields)
    by_name = {f.name: f for f in fields}
    ordered = [f for f in fields if f.name not in parts] + [by_name[p] for p in partition_fields if p in by_name]
    try:
        schema = arrow_to_spark_schema_json(ordered)
    except ValueError as exc:
        raise MetastoreError(f"cannot write the Spark schema properties: {exc}") from None
    props = {SPARK_PROVIDER: "hudi"}
    if spark_version:
        props["spark.sql.create.version"] = spark_version
    count = (len(schema) + SCHEMA_PART_LENGTH - 1) // SCHEMA_PART_LENGTH
    props[f"{SPARK_SCHEMA_PREFIX}.numParts"] = str(count)
    for i in range(count):
        props[f"{SPARK_SCHEMA_PREFIX}.part.{i}"] = schema[i * SCHEMA_PART_LENGTH:(i + 1) * SCHEMA_PART_LENGTH]
    if partition_fields:
        props[f"{SPARK_SCHEMA_PREFIX}.numPartCols"] = str(len(partition_fields))
        for i, name in enumerate(partition_fields):
            props[f"{SPARK_SCHEMA_PREFIX}.partCol.{i}"] = name
    return props


@dataclass(frozen=True)
class HiveSyncPlan:
    """Everything Hive sync registers for one Hudi table, before any metastore call: the database, the tables
    (in Hive sync's order), their shared location, columns, partition keys, partitions, table parameters, and
    the Arrow fields their Spark schema properties are written from."""

    base_path: str
    database: str
    tables: tuple[HiveSyncTable, ...]
    location: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[tuple[str, str], ...]
    partitions: tuple[HivePartition, ...]
    parameters: Mapping[str, str] = field(default_factory=dict)
    spark_schema: tuple[pa.Field, ...] = ()


def plan_hive_sync(base_path: str, database: str | None = None, table: str | None = None, *,
                   skip_ro_suffix: bool = False, table_strategy: str = "ALL",
                   sync_snapshot_with_table_name: bool = True, support_timestamp: bool = True,
                   omit_metadata_fields: bool = False,
                   table_properties: Mapping[str, str] | None = None) -> HiveSyncPlan:
    """What ``HiveSyncTool`` registers on its first sync (HMS mode) of the Hudi table at ``base_path``, with its
    defaults (see :meth:`hive_bridge.hive.client.MetastoreClient.sync_hudi_table` for the options)."""
    from hive_bridge.errors import HudiTableError
    from hive_bridge.filters.typemap import arrow_to_hive_sync_type
    from hive_bridge.storage.core import StorageError
    from hive_bridge.table.table import HudiTable

    root = local_location(base_path)
    try:
        hudi = HudiTable.open(root)
    except (HudiTableError, StorageError) as exc:
        raise MetastoreError(f"cannot sync {base_path}: {exc}") from None
    props = hudi.properties
    if hudi.base_file_format != "PARQUET":
        raise MetastoreError(f"cannot sync {base_path}: Hive sync registers parquet tables here; its base files "
                             f"are {hudi.base_file_format}")
    db = database or props.raw.get("hoodie.database.name") or "default"
    name = table or props.name
    fields = list(hudi.arrow_schema(include_meta_fields=not omit_metadata_fields))
    part_fields = list(props.partition_fields)
    by_name = {f.name: f for f in fields}
    columns = [(f.name, arrow_to_hive_sync_type(f.type, support_timestamp)) for f in fields
               if f.name not in part_fields]
    keys = [(k, arrow_to_hive_sync_type(by_name[k].type, support_timestamp) if k in by_name else "string")
            for k in part_fields]
    location = location_uri(root)
    partitions = [HivePartition(tuple(partition_values(path, part_fields, props.hive_style_partitioning)),
                                location.rstrip("/") + "/" + path)
                  for path in sorted({s.partition_path for s in hudi.latest_file_slices()}) if part_fields]
    params = dict(table_properties or {})
    latest = hudi.timeline.latest_completed_write
    if latest is not None:
        params[LAST_COMMIT_TIME_SYNC] = latest.timestamp
        completions = [i.completion_time for i in hudi.timeline.completed_writes if i.completion_time]
        if completions:
            params[LAST_COMMIT_COMPLETION_TIME_SYNC] = max(completions)
    synced = hive_sync_tables(name, props.table_type, skip_ro_suffix=skip_ro_suffix, table_strategy=table_strategy,
                              sync_snapshot_with_table_name=sync_snapshot_with_table_name)
    spark_schema = [by_name[n] for n, _ in columns] + [by_name[k] for k, _ in keys if k in by_name]
    return HiveSyncPlan(base_path, db, tuple(synced), location, tuple(columns), tuple(keys), tuple(partitions),
                        params, tuple(spark_schema))
