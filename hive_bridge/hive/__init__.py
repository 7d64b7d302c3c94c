"""Hive's side of a Hudi table: the storage handler and input format Hive would call (:mod:`.handler`), and the
Hive Metastore, where Hudi's Hive sync registers Hudi tables and from which they are read by name. What the
metastore holds and means is in :mod:`.model` (tables, partitions, Hudi's class names and keys, the query type of
a table); what Hudi's Hive sync registers for a Hudi table in :mod:`.sync` (the tables, partition values, the
Spark data source properties); the thrift client that reads and registers tables in :mod:`.client`; and a
registered name resolved to the file slices a read starts from, its partitions pruned by their values, in
:mod:`.resolve`. Type mappings (Hive, Arrow, Spark) are in :mod:`hive_bridge.filters.typemap`.

The names below are the metastore's; the handler's are imported from :mod:`hive_bridge.hive.handler` itself,
which loads the pruning machinery (importing this package stays light).
"""

from hive_bridge.hive.client import MetastoreClient
from hive_bridge.hive.model import (
    DEFAULT_URI,
    HUDI_INPUT_FORMAT,
    HUDI_INPUT_FORMATS,
    HUDI_OUTPUT_FORMAT,
    HUDI_REALTIME_INPUT_FORMAT,
    HUDI_SERDE,
    HUDI_STORAGE_HANDLER,
    LAST_COMMIT_COMPLETION_TIME_SYNC,
    LAST_COMMIT_TIME_SYNC,
    HivePartition,
    HiveTable,
    MetastoreError,
    is_hudi,
    query_type_of,
    registered_the_old_way,
)
from hive_bridge.hive.resolve import PartitionSelection, RegisteredHudiTable
from hive_bridge.hive.sync import (
    HiveSyncPlan,
    HiveSyncTable,
    hive_sync_tables,
    partition_values,
    plan_hive_sync,
    spark_table_properties,
)

__all__ = [
    "DEFAULT_URI",
    "HUDI_INPUT_FORMAT",
    "HUDI_INPUT_FORMATS",
    "HUDI_OUTPUT_FORMAT",
    "HUDI_REALTIME_INPUT_FORMAT",
    "HUDI_SERDE",
    "HUDI_STORAGE_HANDLER",
    "LAST_COMMIT_COMPLETION_TIME_SYNC",
    "LAST_COMMIT_TIME_SYNC",
    "HivePartition",
    "HiveSyncPlan",
    "HiveSyncTable",
    "HiveTable",
    "MetastoreClient",
    "MetastoreError",
    "PartitionSelection",
    "RegisteredHudiTable",
    "hive_sync_tables",
    "is_hudi",
    "partition_values",
    "plan_hive_sync",
    "query_type_of",
    "registered_the_old_way",
    "spark_table_properties",
]
