"""What the metastore holds of a Hudi table, and what it means: :class:`HiveTable` and :class:`HivePartition`,
the class names and parameter keys Hudi's Hive sync registers, :class:`MetastoreError`, whether a table is a
Hudi table (:func:`is_hudi`, :func:`registered_the_old_way`) and which query reading it by name is
(:func:`query_type_of`), and how locations are written in the metastore (:func:`local_location`,
:func:`location_uri`).

No thrift here: these are plain values, shared by the client (:mod:`hive_bridge.hive.client`), what Hive sync
registers (:mod:`hive_bridge.hive.sync`) and the resolution of a name to files (:mod:`hive_bridge.hive.resolve`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from urllib.parse import unquote, urlparse

from hive_bridge.errors import HiveBridgeError

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
    "QUERY_AS_RO_TABLE",
    "SCHEMA_PART_LENGTH",
    "SERDE_PATH",
    "SPARK_PROVIDER",
    "SPARK_SCHEMA_PREFIX",
    "STORAGE_HANDLER_KEY",
    "SUFFIX_READ_OPTIMIZED",
    "SUFFIX_SNAPSHOT",
    "HivePartition",
    "HiveTable",
    "MetastoreError",
    "is_hudi",
    "local_location",
    "location_uri",
    "old_registration_warning",
    "query_type_of",
    "registered_the_old_way",
]

DEFAULT_URI = "thrift://127.0.0.1:9083"
#: what older hive-bridge versions registered as table parameter ``storage_handler``: no Hudi release ships it
HUDI_STORAGE_HANDLER = "org.apache.hudi.hadoop.hive.HoodieStorageHandler"
HUDI_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
HUDI_REALTIME_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
HUDI_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
HUDI_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
# Input formats Hudi's Hive sync has registered over the years (copy-on-write, merge-on-read, pre-Apache names).
HUDI_INPUT_FORMATS = frozenset({
    HUDI_INPUT_FORMAT,
    HUDI_REALTIME_INPUT_FORMAT,
    "org.apache.hudi.hadoop.HoodieHFileInputFormat",
    "org.apache.hudi.hadoop.realtime.HoodieHFileRealtimeInputFormat",
    "com.uber.hoodie.hadoop.HoodieInputFormat",
    "com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat",
})
#: the read-optimized ones among them (the others are realtime: snapshot queries)
_READ_OPTIMIZED_INPUT_FORMATS = frozenset({
    HUDI_INPUT_FORMAT, "org.apache.hudi.hadoop.HoodieHFileInputFormat", "com.uber.hoodie.hadoop.HoodieInputFormat",
})
STORAGE_HANDLER_KEY = "storage_handler"
# Hive sync's keys (HoodieSyncClient, ConfigUtils, SparkDataSourceTableUtils)
LAST_COMMIT_TIME_SYNC = "last_commit_time_sync"
LAST_COMMIT_COMPLETION_TIME_SYNC = "last_commit_completion_time_sync"
SERDE_PATH = "path"
QUERY_AS_RO_TABLE = "hoodie.query.as.ro.table"
SPARK_PROVIDER = "spark.sql.sources.provider"
SPARK_SCHEMA_PREFIX = "spark.sql.sources.schema"
#: HiveSyncTool's table name suffixes
SUFFIX_READ_OPTIMIZED, SUFFIX_SNAPSHOT = "_ro", "_rt"
#: hoodie.datasource.hive_sync.schema_string_length_thresh (default 4000): the Spark schema's JSON per property
SCHEMA_PART_LENGTH = 4000


class MetastoreError(HiveBridgeError):
    """A metastore call failed: unreachable server, missing database/table, or a table that is not Hudi."""


@dataclass(frozen=True)
class HiveTable:
    """What the metastore knows of one table. ``location`` is a local path when the table's URI is ``file:``."""

    database: str
    name: str
    location: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[tuple[str, str], ...]
    input_format: str | None
    output_format: str | None
    serde: str | None
    table_type: str | None
    parameters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    serde_parameters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"

    @property
    def storage_handler(self) -> str | None:
        """The ``storage_handler`` table parameter (the class Hive loads for a non-native table), if any."""
        return self.parameters.get(STORAGE_HANDLER_KEY)

    @property
    def schema(self) -> tuple[tuple[str, str], ...]:
        """Data columns then partition keys, as (name, Hive type): the full row of the table."""
        return self.columns + self.partition_keys


@dataclass(frozen=True)
class HivePartition:
    """One metastore partition: its values (in partition-key order) and location (a local path for ``file:``)."""

    values: tuple[str, ...]
    location: str

    def spec(self, keys: Sequence[tuple[str, str]]) -> str:
        """``day=2024-01-01/city=x``: the partition as Hive names it."""
        return "/".join(f"{k}={v}" for (k, _), v in zip(keys, self.values, strict=False))


def is_hudi(table: HiveTable) -> bool:
    """True for a table registered by Hudi's Hive sync (its input formats, or ``spark.sql.sources.provider=hudi``)
    or by an older hive-bridge (a Hudi storage handler parameter)."""
    if registered_the_old_way(table):
        return True
    if table.input_format in HUDI_INPUT_FORMATS:
        return True
    return table.parameters.get(SPARK_PROVIDER, "").lower() == "hudi"


def registered_the_old_way(table: HiveTable) -> bool:
    """Whether the table names a Hudi storage handler (what hive-bridge registered before it registered tables
    as Hudi's Hive sync does): no Hudi release ships one, so Hive and Spark cannot load such a table."""
    handler = (table.storage_handler or "").lower()
    return "hudi" in handler or "hoodie" in handler


def _name_rule(name: str) -> str:
    from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT

    return READ_OPTIMIZED if name.lower().endswith(SUFFIX_READ_OPTIMIZED) else SNAPSHOT


def query_type_of(table: HiveTable) -> str:
    """The query a read of the table by name is: ``read_optimized`` for Hudi's ``HoodieParquetInputFormat`` (Hive
    sync's copy-on-write table and merge-on-read ``<t>_ro``), ``snapshot`` for ``HoodieParquetRealtimeInputFormat``
    (``<t>_rt`` and ``<t>``), read as :func:`hive_bridge.hive.handler.input_format_for` reads them; a table registered
    the old way (every one had ``HoodieParquetInputFormat``) by its name: ``_ro`` is read-optimized, else snapshot.
    On a copy-on-write table both read the same files."""
    from hive_bridge.hive.handler import input_format_for

    if registered_the_old_way(table):
        return _name_rule(table.name)
    if table.input_format in _READ_OPTIMIZED_INPUT_FORMATS:
        from hive_bridge.pruning.pruner import READ_OPTIMIZED

        return READ_OPTIMIZED
    return input_format_for(table.input_format, table.name.lower()).query_type


def old_registration_warning(table: HiveTable) -> str:
    """What to tell the user reading a table registered the old way (see :func:`registered_the_old_way`)."""
    return (f"table {table.qualified_name} was registered by an older hive-bridge with table parameter "
            f"storage_handler={table.storage_handler}, a class no Hudi release ships: Hive and Spark cannot "
            f"DESCRIBE or read it (\"Error in loading storage handler\"). hive-bridge reads it by its location "
            f"{table.location} and its name ({_name_rule(table.name)} query). Register it again as Hudi's Hive sync "
            f"does: MetastoreClient(uri).sync_hudi_table({table.location!r}, database={table.database!r}, "
            f"table={_base_name(table.name)!r}, replace=True), or run Hudi's HiveSyncTool")


def _base_name(name: str) -> str:
    low = name.lower()
    for suffix in (SUFFIX_READ_OPTIMIZED, SUFFIX_SNAPSHOT):
        if low.endswith(suffix):
            return name[:-len(suffix)]
    return name


def local_location(uri: str | None) -> str:
    """A location as the metastore holds it, read back: ``file:/x`` and ``file:///x`` become ``/x``; other
    schemes are kept as they are."""
    if not uri:
        return ""
    parsed = urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return unquote(parsed.path)
    return uri


def location_uri(location: str) -> str:
    """A location as the metastore is given it: a URI (``file://`` for an absolute local path)."""
    if "://" in location or location.startswith("file:"):
        return location
    if not location.startswith("/"):
        raise MetastoreError(f"a table location must be absolute or a URI, not {location!r}")
    return "file://" + location
