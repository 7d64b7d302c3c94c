"""A Hive Metastore client over thrift (hmsclient): look tables up, register Hudi tables as Hudi's Hive sync does.

::

    with MetastoreClient("thrift://127.0.0.1:9083") as hms:
        hms.sync_hudi_table("/data/trips", database="db")     # trips_ro, trips_rt, trips for a merge-on-read table
        ref = hms.resolve_hudi_table("db", "trips_ro")        # read-optimized: HoodieParquetInputFormat
        assert ref.query_type == "read_optimized" and ref.table.location == "/data/trips"

Tables are registered the way Hudi's ``HiveSyncTool`` registers them in its HMS mode (apache/hudi
``hudi-sync/hudi-hive-sync``: ``HiveSyncTool.doSync``/``syncFirstTime``, ``ddl/HMSDDLExecutor.createTable`` and
``addPartitionsToTable``, ``HoodieHiveSyncClient.updateLastCommitTimeSynced``,
``sync/common/util/SparkDataSourceTableUtils``), with its defaults:

- copy-on-write: one table ``<t>`` with ``org.apache.hudi.hadoop.HoodieParquetInputFormat``;
- merge-on-read (``hoodie.datasource.hive_sync.table.strategy=ALL``): ``<t>_ro`` with ``HoodieParquetInputFormat``
  (read-optimized), ``<t>_rt`` and, since Hudi 0.14 (``hoodie.meta.sync.sync_snapshot_with_table_name=true``),
  ``<t>`` itself with ``org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat`` (snapshot);
  ``skip_ro_suffix`` names the read-optimized table ``<t>``; strategy ``RO`` / ``RT`` registers ``<t>`` alone;
- output format ``MapredParquetOutputFormat``, serde ``ParquetHiveSerDe`` with serde properties
  ``serialization.format=1``, ``path=<base path>`` and ``hoodie.query.as.ro.table``;
- table parameters ``EXTERNAL=TRUE`` (table type ``EXTERNAL_TABLE``), ``last_commit_time_sync`` (the latest
  completed commit; ``last_commit_completion_time_sync`` where completion times are known, table version 8+),
  ``spark.sql.sources.provider=hudi`` and the Spark schema properties (``spark.sql.sources.schema.numParts`` /
  ``part.N``, ``numPartCols`` / ``partCol.N``), which is how Spark reads the table as a Hudi data source table;
- columns from the table's schema (meta columns included) without the partition columns, which are the
  partition keys; one metastore partition per Hudi partition, located at ``<base path>/<partition path>``, its
  values extracted as Hudi's default extractor for the table does (hive-style ``k=v``, single or multiple parts).

No table parameter names a storage handler: Hudi ships none (``org.apache.hudi.hadoop.hive.HoodieStorageHandler``,
which older hive-bridge versions registered, does not exist, so Hive and Spark failed on such tables with "Error
in loading storage handler"). Such tables are still read by name, with a ``RuntimeWarning`` saying how to
register them again. ``resolve_hudi_table`` maps a name to its query type (the input format class:
``HoodieParquetInputFormat`` is read-optimized, ``HoodieParquetRealtimeInputFormat`` snapshot; the ``_ro`` /
``_rt`` suffix where the class says nothing) and to its metastore partitions, which prune partitions by their
values before files are judged by statistics (:meth:`RegisteredHudiTable.select_slices`).

Every failure is a ``MetastoreError`` that says what failed (connection refused after ``retries`` attempts with
backoff, database or table missing, not a Hudi table), never a raw thrift traceback.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urlparse

from hive_bridge.errors import HiveBridgeError

if TYPE_CHECKING:
    import pyarrow as pa

    import sarg
    from hive_bridge.layout.fsview import FileSlice
    from hive_bridge.table.table import HudiTable

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
    "HiveSyncTable",
    "HiveTable",
    "MetastoreClient",
    "MetastoreError",
    "PartitionSelection",
    "RegisteredHudiTable",
    "hive_sync_tables",
    "is_hudi",
    "partition_values",
    "query_type_of",
    "registered_the_old_way",
    "spark_table_properties",
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

T = TypeVar("T")


class MetastoreError(HiveBridgeError):
    """A metastore call failed: unreachable server, missing database/table, or a table that is not Hudi."""


class _NotFound(MetastoreError):
    """The metastore answered "no such object"."""


class _Exists(MetastoreError):
    """The metastore answered "already exists"."""


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


def _old_way_warning(table: HiveTable) -> str:
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


@dataclass(frozen=True)
class HivePartition:
    """One metastore partition: its values (in partition-key order) and location (a local path for ``file:``)."""

    values: tuple[str, ...]
    location: str

    def spec(self, keys: Sequence[tuple[str, str]]) -> str:
        """``day=2024-01-01/city=x``: the partition as Hive names it."""
        return "/".join(f"{k}={v}" for (k, _), v in zip(keys, self.values, strict=False))


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


# --------------------------------------------------------------------------------------------------------------
# Types: Hive type names, Arrow types, Spark's schema JSON (spark.sql.sources.schema.*)
# --------------------------------------------------------------------------------------------------------------

def _sync_hive_type(typ: pa.DataType, support_timestamp: bool) -> str:
    """The Hive type Hive sync gives a column (HiveSchemaUtil.convertField over the parquet schema): INT32 is
    ``int`` whatever its annotation, INT64 ``bigint`` (timestamps too unless ``support_timestamp``)."""
    import pyarrow as pa

    from hive_bridge.typemap import arrow_to_hive

    if pa.types.is_integer(typ) and typ.bit_width <= 32 and not (pa.types.is_uint32(typ)):
        return "int"
    if pa.types.is_timestamp(typ):
        return "timestamp" if support_timestamp else "bigint"
    if pa.types.is_struct(typ):
        return "struct<" + ",".join(f"{f.name}:{_sync_hive_type(f.type, support_timestamp)}" for f in typ) + ">"
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return f"array<{_sync_hive_type(typ.value_type, support_timestamp)}>"
    if pa.types.is_map(typ):
        return (f"map<{_sync_hive_type(typ.key_type, support_timestamp)},"
                f"{_sync_hive_type(typ.item_type, support_timestamp)}>")
    return arrow_to_hive(typ).lower()


def _hive_to_arrow(text: str) -> pa.DataType:
    """The Arrow type of a Hive type name (nested types too); ValueError for what it cannot read."""
    typ, end = _read_hive_type(text, 0)
    if text[end:].strip():
        raise ValueError(f"unexpected {text[end:]!r} after a type in {text!r}")
    return typ


def _read_hive_type(text: str, pos: int) -> tuple[pa.DataType, int]:
    import re

    import pyarrow as pa

    simple = {"boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
              "integer": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
              "string": pa.string(), "binary": pa.binary(), "date": pa.date32(),
              "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us")}

    def skip(p: int) -> int:
        while p < len(text) and text[p].isspace():
            p += 1
        return p

    def expect(p: int, ch: str) -> int:
        p = skip(p)
        if p >= len(text) or text[p] != ch:
            raise ValueError(f"expected {ch!r} at {p} in {text!r}")
        return p + 1

    pos = skip(pos)
    m = re.compile(r"[A-Za-z_]+").match(text, pos)
    if m is None:
        raise ValueError(f"no type at {pos} in {text!r}")
    word, pos = m.group(0).lower(), m.end()
    if word in ("varchar", "char", "decimal", "numeric"):
        args = re.compile(r"\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)").match(text, pos)
        if word in ("varchar", "char"):
            if args is None:
                raise ValueError(f"{word} needs a length in {text!r}")
            return pa.string(), args.end()
        if args is None:
            return pa.decimal128(10, 0), pos
        return pa.decimal128(int(args.group(1)), int(args.group(2) or 0)), args.end()
    if word in simple:
        return simple[word], pos
    if word == "array":
        item, pos = _read_hive_type(text, expect(pos, "<"))
        return pa.list_(item), expect(pos, ">")
    if word == "map":
        key, pos = _read_hive_type(text, expect(pos, "<"))
        value, pos = _read_hive_type(text, expect(pos, ","))
        return pa.map_(key, value), expect(pos, ">")
    if word == "struct":
        pos = expect(pos, "<")
        fields: list[pa.Field] = []
        while True:
            pos = skip(pos)
            if text.startswith(">", pos):
                return pa.struct(fields), pos + 1
            name_match = re.compile(r"`([^`]*)`|([^:\s]+)").match(text, pos)
            if name_match is None:
                raise ValueError(f"no field name at {pos} in {text!r}")
            name = name_match.group(1) if name_match.group(1) is not None else name_match.group(2)
            typ, pos = _read_hive_type(text, expect(name_match.end(), ":"))
            fields.append(pa.field(name, typ))
            pos = skip(pos)
            if text.startswith(",", pos):
                pos += 1
    raise ValueError(f"unknown Hive type {word!r} in {text!r}")


def _spark_type(typ: pa.DataType) -> Any:
    """Spark's JSON form of an Arrow type (``DataType.json``), as Hudi's Spark schema properties hold it."""
    import pyarrow as pa

    t = pa.types
    if t.is_boolean(typ):
        return "boolean"
    if t.is_int8(typ):
        return "byte"
    if t.is_int16(typ) or t.is_uint8(typ):
        return "short"
    if t.is_int32(typ) or t.is_uint16(typ):
        return "integer"
    if t.is_integer(typ):
        return "long"
    if t.is_float32(typ):
        return "float"
    if t.is_floating(typ):
        return "double"
    if t.is_string(typ) or t.is_large_string(typ):
        return "string"
    if t.is_date(typ):
        return "date"
    if t.is_timestamp(typ):
        return "timestamp" if typ.tz is not None else "timestamp_ntz"
    if t.is_decimal(typ):
        return f"decimal({typ.precision},{typ.scale})"
    if t.is_list(typ) or t.is_large_list(typ):
        return {"type": "array", "elementType": _spark_type(typ.value_type), "containsNull": True}
    if t.is_map(typ):
        return {"type": "map", "keyType": _spark_type(typ.key_type), "valueType": _spark_type(typ.item_type),
                "valueContainsNull": True}
    if t.is_struct(typ):
        return _spark_struct(list(typ))
    return "binary"


def _spark_struct(fields: Iterable[pa.Field]) -> dict[str, Any]:
    return {"type": "struct", "fields": [{"name": f.name, "type": _spark_type(f.type), "nullable": f.nullable,
                                          "metadata": {}} for f in fields]}


def spark_table_properties(fields: Sequence[pa.Field], partition_fields: Sequence[str],
                           spark_version: str = "") -> dict[str, str]:
    """Hive sync's Spark data source properties (``SparkDataSourceTableUtils.getSparkTableProperties``): the
    provider, the schema as Spark's JSON (partition columns last) cut in parts of 4,000 characters, and the
    partition columns."""
    parts = set(partition_fields)
    by_name = {f.name: f for f in fields}
    ordered = [f for f in fields if f.name not in parts] + [by_name[p] for p in partition_fields if p in by_name]
    schema = json.dumps(_spark_struct(ordered), separators=(",", ":"))
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


def _local_location(uri: str | None) -> str:
    """``file:/x`` and ``file:///x`` become ``/x``; other schemes are kept as they are."""
    if not uri:
        return ""
    parsed = urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return unquote(parsed.path)
    return uri


def _location_uri(location: str) -> str:
    if "://" in location or location.startswith("file:"):
        return location
    if not location.startswith("/"):
        raise MetastoreError(f"a table location must be absolute or a URI, not {location!r}")
    return "file://" + location


def _parse_uri(uri: str) -> tuple[str, int]:
    parsed = urlparse(uri if "://" in uri else f"thrift://{uri}")
    if parsed.scheme != "thrift" or not parsed.hostname:
        raise MetastoreError(f"a metastore URI looks like thrift://host:9083, not {uri!r}")
    try:
        port = parsed.port or 9083
    except ValueError:
        raise MetastoreError(f"bad port in metastore URI {uri!r}") from None
    return parsed.hostname, port


def _describe(exc: BaseException) -> str:
    """A one-line reason from a thrift/socket exception (thrift's exceptions carry .message)."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return " ".join(str(message).split())


def _connect_reason(exc: BaseException | None, timeout: float) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused ({_describe(exc)})"
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({_describe(exc)})"
    if isinstance(exc, TimeoutError):
        return f"timed out after {timeout:g} s"
    return _describe(exc) if exc is not None else "unknown error"


class MetastoreClient:
    """A connection to one Hive Metastore; use it as a context manager (``with MetastoreClient(uri) as hms``).

    ``retries`` bounds the connection attempts (with exponential backoff from ``backoff`` seconds);
    ``timeout`` is the socket timeout of each call in seconds.
    """

    def __init__(self, uri: str = DEFAULT_URI, retries: int = 3, timeout: float = 30.0, backoff: float = 0.5) -> None:
        self.uri = uri
        self.host, self.port = _parse_uri(uri)
        self.retries = max(1, int(retries))
        self.timeout = timeout
        self.backoff = backoff
        self._client: Any = None
        self._transport: Any = None

    # ------------------------------------------------------------------ connection

    def open(self) -> MetastoreClient:
        """Connect, trying ``retries`` times; MetastoreError if the server cannot be reached."""
        if self._client is not None:
            return self
        from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        last: BaseException | None = None
        for attempt in range(self.retries):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            # A plain socket first: thrift's TSocket hides why a connection failed (and logs it at ERROR).
            try:
                socket.create_connection((self.host, self.port), timeout=self.timeout).close()
            except OSError as exc:
                last = exc
                continue
            sock = TSocket.TSocket(self.host, self.port)
            sock.setTimeout(self.timeout * 1000)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except (TTransport.TTransportException, OSError) as exc:
                last = exc
                continue
            self._transport = transport
            self._client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
            return self
        raise MetastoreError(f"cannot reach the Hive Metastore at {self.uri} after {self.retries} attempt(s): "
                             f"{_connect_reason(last, self.timeout)}")

    def close(self) -> None:
        if self._transport is not None:
            try:
                self._transport.close()
            finally:
                self._transport = None
                self._client = None

    def __enter__(self) -> MetastoreClient:
        return self.open()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _call(self, what: str, fn: Callable[[Any], T], missing: str | None = None,
              exists: str | None = None) -> T:
        """Run one thrift call, turning every thrift/socket failure into a MetastoreError about ``what``.

        ``missing`` / ``exists`` replace the message for "no such object" / "already exists" answers.
        """
        from hmsclient.genthrift.hive_metastore import ttypes
        from thrift.Thrift import TException

        self.open()
        try:
            return fn(self._client)
        except ttypes.NoSuchObjectException as exc:
            raise _NotFound(missing or f"{what}: not found in the metastore at {self.uri} ({_describe(exc)})") from None
        except ttypes.AlreadyExistsException as exc:
            raise _Exists(exists or f"{what}: already exists ({_describe(exc)})") from None
        except (ttypes.MetaException, ttypes.InvalidObjectException, ttypes.InvalidOperationException) as exc:
            raise MetastoreError(f"{what}: the metastore at {self.uri} refused it: {_describe(exc)}") from None
        except (TException, OSError, EOFError) as exc:
            # The connection is in an unknown state after a transport error: drop it (the next call reconnects).
            self.close()
            raise MetastoreError(f"{what}: lost the connection to the metastore at {self.uri}: "
                                 f"{_describe(exc)}") from None

    # ------------------------------------------------------------------ reads

    def get_databases(self, pattern: str = "*") -> list[str]:
        return list(self._call(f"list databases {pattern!r}", lambda c: c.get_databases(pattern)))

    def get_tables(self, db: str, pattern: str = "*") -> list[str]:
        return list(self._call(f"list tables of {db}", lambda c: c.get_tables(db, pattern)))

    def table_exists(self, db: str, name: str) -> bool:
        return name.lower() in {t.lower() for t in self.get_tables(db, name)}

    def get_table(self, db: str, name: str) -> HiveTable:
        """The table ``db.name``; MetastoreError "table db.name not found" if there is none."""
        raw = self._call(f"get table {db}.{name}", lambda c: c.get_table(db, name),
                         missing=f"table {db}.{name} not found in the metastore at {self.uri}")
        return _to_hive_table(raw)

    def get_hudi_table(self, db: str, name: str) -> HiveTable:
        """The table ``db.name``, which must be a Hudi table (MetastoreError "not a Hudi table" otherwise)."""
        table = self.get_table(db, name)
        if not is_hudi(table):
            raise MetastoreError(
                f"table {db}.{name} is not a Hudi table: input format {table.input_format!r}, table parameter "
                f"{SPARK_PROVIDER}={table.parameters.get(SPARK_PROVIDER)!r} (expected one of Hudi's input formats, "
                f"as Hudi's Hive sync registers, e.g. {HUDI_INPUT_FORMAT})")
        return table

    def get_partitions(self, db: str, name: str) -> list[HivePartition]:
        """Every partition of ``db.name`` (values in partition-key order, location), sorted by values."""
        raw = self._call(f"list partitions of {db}.{name}", lambda c: c.get_partitions(db, name, -1),
                         missing=f"table {db}.{name} not found in the metastore at {self.uri}")
        parts = [HivePartition(tuple(p.values or ()), _local_location(p.sd.location if p.sd is not None else None))
                 for p in raw or []]
        return sorted(parts, key=lambda p: p.values)

    def resolve_hudi_table(self, db: str, name: str) -> RegisteredHudiTable:
        """What reading ``db.name`` by name means: the Hudi table's location, the query type (see
        :func:`query_type_of`) and the metastore partitions (None for a table without partition keys, and for
        one registered the old way, which never had partitions registered: all of it is read, with a
        ``RuntimeWarning`` saying how to register it again)."""
        table = self.get_hudi_table(db, name)
        old = registered_the_old_way(table)
        if old:
            warnings.warn(_old_way_warning(table), RuntimeWarning, stacklevel=2)
        partitions = None if old or not table.partition_keys else tuple(self.get_partitions(db, name))
        return RegisteredHudiTable(table, query_type_of(table), partitions, old)

    # ------------------------------------------------------------------ writes

    def create_database(self, db: str, location: str | None = None, if_missing: bool = True) -> None:
        """Create database ``db`` (nothing happens if it exists, unless ``if_missing`` is False)."""
        from hmsclient.genthrift.hive_metastore import ttypes

        database = ttypes.Database(name=db, description="", locationUri=_location_uri(location) if location else None,
                                   parameters={})
        try:
            self._call(f"create database {db}", lambda c: c.create_database(database),
                       exists=f"database {db} already exists in the metastore at {self.uri}")
        except _Exists:
            if not if_missing:
                raise

    def register_hudi_table(self, db: str, name: str, location: str, columns: Sequence[tuple[str, str]],
                            partition_keys: Sequence[tuple[str, str]] = (), *, realtime: bool = False,
                            read_optimized: bool | None = None, partitions: Iterable[HivePartition] = (),
                            parameters: Mapping[str, str] | None = None,
                            serde_parameters: Mapping[str, str] | None = None,
                            spark_schema: Sequence[pa.Field] | None = None, sync_as_datasource: bool = True,
                            replace: bool = False) -> HiveTable:
        """Create ``db.name`` (and ``db`` if missing) as Hudi's Hive sync creates a table in its HMS mode.

        ``columns`` and ``partition_keys`` are (name, Hive type) pairs; ``location`` is a path or a URI (a local
        path is stored as ``file://…``). ``realtime``: ``HoodieParquetRealtimeInputFormat`` (a snapshot table:
        ``<t>_rt`` / ``<t>`` of a merge-on-read table) instead of ``HoodieParquetInputFormat``;
        ``read_optimized``: the serde property ``hoodie.query.as.ro.table`` (default: not ``realtime``, except
        that Hive sync's copy-on-write table says false: pass it). ``partitions`` are added as
        ``HMSDDLExecutor.addPartitionsToTable`` adds them (the table's storage descriptor, their own location).
        ``sync_as_datasource`` (Hive sync's default): the Spark data source properties, the schema from
        ``spark_schema`` (Arrow fields) or else from the Hive types. ``parameters`` / ``serde_parameters`` are
        added (Hive sync's ``table_properties`` / ``serde_properties``). With ``replace``, an existing table of
        that name is dropped first (metadata only). Returns the table as the metastore now holds it.
        """
        from hmsclient.genthrift.hive_metastore import ttypes

        if not columns:
            raise MetastoreError(f"cannot register {db}.{name}: no columns given")
        location_uri = _location_uri(location)
        ro = (not realtime) if read_optimized is None else read_optimized
        params = {"EXTERNAL": "TRUE"}
        if sync_as_datasource:
            fields = list(spark_schema) if spark_schema is not None else _arrow_fields(db, name, [
                *columns, *partition_keys])
            params.update(spark_table_properties(fields, [k for k, _ in partition_keys]))
        params.update(parameters or {})
        serde_params = dict(serde_parameters or {})
        if sync_as_datasource:
            serde_params.update({SERDE_PATH: location_uri, QUERY_AS_RO_TABLE: "true" if ro else "false"})
        serde_params["serialization.format"] = "1"
        self.create_database(db)
        if replace and self.table_exists(db, name):
            self._call(f"drop table {db}.{name}", lambda c: c.drop_table(db, name, False))
        sd = ttypes.StorageDescriptor(
            cols=_fields(columns), location=location_uri,
            inputFormat=HUDI_REALTIME_INPUT_FORMAT if realtime else HUDI_INPUT_FORMAT,
            outputFormat=HUDI_OUTPUT_FORMAT, compressed=False, numBuckets=-1,
            serdeInfo=ttypes.SerDeInfo(name=None, serializationLib=HUDI_SERDE, parameters=serde_params),
            bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)
        table = ttypes.Table(tableName=name, dbName=db, owner=_owner(), createTime=int(time.time()),
                             lastAccessTime=0, retention=0, sd=sd, partitionKeys=_fields(partition_keys),
                             parameters=params, tableType="EXTERNAL_TABLE")
        self._call(f"register Hudi table {db}.{name}", lambda c: c.create_table(table),
                   exists=f"cannot register {db}.{name}: a table of that name already exists "
                          f"(pass replace=True to replace it)")
        parts = list(partitions)
        if parts:
            self._add_partitions(db, name, sd, parts, len(partition_keys))
        return self.get_table(db, name)

    def _add_partitions(self, db: str, name: str, sd: Any, partitions: list[HivePartition], keys: int) -> None:
        from hmsclient.genthrift.hive_metastore import ttypes

        raw = []
        for p in partitions:
            if len(p.values) != keys:
                raise MetastoreError(f"cannot add partition {list(p.values)} to {db}.{name}: {keys} partition "
                                     f"key(s), {len(p.values)} value(s)")
            part_sd = ttypes.StorageDescriptor(
                cols=sd.cols, location=_location_uri(p.location), inputFormat=sd.inputFormat,
                outputFormat=sd.outputFormat, compressed=False, numBuckets=-1, serdeInfo=sd.serdeInfo,
                bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)
            raw.append(ttypes.Partition(values=list(p.values), dbName=db, tableName=name, createTime=0,
                                        lastAccessTime=0, sd=part_sd, parameters={}))
        self._call(f"add {len(raw)} partitions to {db}.{name}", lambda c: c.add_partitions(raw))

    def sync_hudi_table(self, base_path: str, database: str | None = None, table: str | None = None, *,
                        skip_ro_suffix: bool = False, table_strategy: str = "ALL",
                        sync_snapshot_with_table_name: bool = True, support_timestamp: bool = True,
                        sync_as_datasource: bool = True, omit_metadata_fields: bool = False,
                        table_properties: Mapping[str, str] | None = None,
                        serde_properties: Mapping[str, str] | None = None,
                        replace: bool = False) -> list[HiveTable]:
        """Register the Hudi table at ``base_path`` as Hudi's ``HiveSyncTool`` does on its first sync (HMS mode),
        with its defaults; returns the tables registered, in Hive sync's order (see :func:`hive_sync_tables`).

        ``database``: ``hoodie.database.name`` or ``default``; ``table``: ``hoodie.table.name``. Columns: the
        table's schema (meta columns unless ``omit_metadata_fields``) without the partition fields, typed as
        Hive sync types parquet columns (timestamps are ``timestamp`` with ``support_timestamp``, the default on
        Hudi's Spark writer, ``bigint`` without it); partition keys: the table's partition fields, typed by the
        schema (``string`` when not in it); one partition per Hudi partition holding live files. A table of one
        of those names that already exists is refused unless ``replace`` (a Hudi table of that name is
        registered again, as Hive sync recreates a table whose base path changed).
        """
        from hive_bridge.errors import HudiTableError
        from hive_bridge.table.table import HudiTable

        root = _local_location(base_path)
        try:
            hudi = HudiTable.open(root)
        except HudiTableError as exc:
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
        columns = [(f.name, _sync_hive_type(f.type, support_timestamp)) for f in fields if f.name not in part_fields]
        keys = [(k, _sync_hive_type(by_name[k].type, support_timestamp) if k in by_name else "string")
                for k in part_fields]
        location = _location_uri(root)
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
        synced = hive_sync_tables(name, props.table_type, skip_ro_suffix=skip_ro_suffix,
                                  table_strategy=table_strategy,
                                  sync_snapshot_with_table_name=sync_snapshot_with_table_name)
        for t in synced:
            if not replace and self.table_exists(db, t.name):
                raise MetastoreError(f"cannot sync {base_path} as {db}.{t.name}: a table of that name already "
                                     "exists (pass replace=True to register it again)")
        out = []
        for t in synced:
            out.append(self.register_hudi_table(
                db, t.name, location, columns, keys, realtime=t.realtime, read_optimized=t.read_optimized,
                partitions=partitions, parameters=params, serde_parameters=serde_properties,
                spark_schema=[by_name[n] for n, _ in columns] + [by_name[k] for k, _ in keys if k in by_name],
                sync_as_datasource=sync_as_datasource, replace=replace))
        return out

    def drop_table(self, db: str, name: str, if_exists: bool = True) -> None:
        """Drop the table's metadata (never its files: Hudi tables are EXTERNAL)."""
        try:
            self._call(f"drop table {db}.{name}", lambda c: c.drop_table(db, name, False),
                       missing=f"table {db}.{name} not found in the metastore at {self.uri}")
        except _NotFound:
            if not if_exists:
                raise


def _owner() -> str:
    """The table owner Hive sync records: the user running it."""
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment
        return "hive_bridge"


def _arrow_fields(db: str, name: str, pairs: Sequence[tuple[str, str]]) -> list[pa.Field]:
    import pyarrow as pa

    out = []
    for col, typ in pairs:
        try:
            out.append(pa.field(col, _hive_to_arrow(typ)))
        except ValueError as exc:
            raise MetastoreError(f"cannot register {db}.{name}: column {col}: {exc}") from None
    return out


@dataclass(frozen=True)
class PartitionSelection:
    """The file slices a read by name starts from: those of the metastore partitions a filter may match."""

    slices: list[FileSlice]
    partitions_total: int = 0
    partitions_kept: int = 0
    #: slices (and their base files' bytes) in the partitions pruned by their metastore values
    slices_dropped: int = 0
    bytes_dropped: int = 0
    #: Hudi partition paths holding live files that no metastore partition points at (Hive does not read them)
    unregistered: tuple[str, ...] = ()
    #: metastore partitions whose values differ from what the table's layout says of their folder: never pruned
    #: by their metastore values (the rows read are the files' own), judged by the Hudi table's own values
    inconsistent: tuple[str, ...] = ()


@dataclass(frozen=True)
class RegisteredHudiTable:
    """A Hudi table as the metastore registers it: the table, the query type its input format means, and its
    partitions (None: read the whole table)."""

    table: HiveTable
    query_type: str
    partitions: tuple[HivePartition, ...] | None
    old_registration: bool = False

    @property
    def location(self) -> str:
        return self.table.location

    def select_slices(self, hudi: HudiTable, filt: sarg.SearchArgument | None = None, *,
                      session_time_zone: str = "UTC", query_type: str | None = None) -> PartitionSelection:
        """The latest file slices a read of this table starts from, as Hive plans a scan of a partitioned table:
        the metastore partitions pruned by their values (the filter's leaves on partition keys, typed by the keys'
        Hive types; other leaves unknown), then the slices under the locations of those kept — which need not
        follow the table's layout, but must lie inside the Hudi table. Files are judged by statistics after
        this (:func:`hive_bridge.pruning.prune_slices`). A read-optimized query starts from base files only.
        Hudi partitions no metastore partition points at are not read (as in Hive), with a ``RuntimeWarning``."""
        from hive_bridge.pruning.pruner import READ_OPTIMIZED, check_query_type, read_optimized_view

        qt = check_query_type(query_type or self.query_type)
        slices = hudi.latest_file_slices()
        if qt == READ_OPTIMIZED:
            slices = read_optimized_view(slices)
        if self.partitions is None:
            return PartitionSelection(slices)
        keys = self.table.partition_keys
        root = os.path.realpath(str(hudi.base_path))
        by_path: dict[str, list[FileSlice]] = {}
        for s in slices:
            by_path.setdefault(s.partition_path, []).append(s)
        rels: list[str] = []
        for p in self.partitions:
            where = os.path.realpath(p.location)
            rel = os.path.relpath(where, root)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel):
                raise MetastoreError(f"partition {p.spec(keys)} of {self.table.qualified_name} is located at "
                                     f"{p.location}, outside the Hudi table at {hudi.base_path}: hive-bridge reads "
                                     "partitions of the table only")
            rels.append("" if rel == os.curdir else rel.replace(os.sep, "/"))
        keep = [True] * len(rels)
        inconsistent: list[str] = []
        if filt is not None and keys:
            by_value = _prune_by_values(self.partitions, keys, filt, hudi, session_time_zone)
            for i, (p, rel) in enumerate(zip(self.partitions, rels, strict=True)):
                if by_value[i]:
                    continue
                here = by_path.get(rel)
                if here and not _agrees(p, keys, here[0].partition_values):
                    inconsistent.append(p.spec(keys))
                    continue
                keep[i] = False
        kept_paths = {rel for rel, k in zip(rels, keep, strict=True) if k}
        dropped_paths = set(rels) - kept_paths
        chosen = [s for s in slices if s.partition_path in kept_paths]
        dropped = [s for path in dropped_paths for s in by_path.get(path, ())]
        unregistered = tuple(sorted(set(by_path) - set(rels)))
        if unregistered:
            warnings.warn(f"{self.table.qualified_name}: {len(unregistered)} partition(s) of the Hudi table at "
                          f"{hudi.base_path} are not registered in the metastore and are not read, as Hive does not "
                          f"read them (e.g. {unregistered[0]!r}): sync the table again (Hudi's Hive sync, or "
                          "MetastoreClient.sync_hudi_table)", RuntimeWarning, stacklevel=2)
        return PartitionSelection(chosen, len(self.partitions), sum(keep), len(dropped),
                                  sum(s.base_file.size for s in dropped if s.base_file is not None), unregistered,
                                  tuple(inconsistent))


def _agrees(partition: HivePartition, keys: Sequence[tuple[str, str]], path_values: Mapping[str, str]) -> bool:
    """Whether the metastore's values of a partition are what the Hudi table's layout says of its folder."""
    low = {k.lower(): v for k, v in path_values.items()}
    for (key, _), value in zip(keys, partition.values, strict=False):
        if low.get(key.lower()) != value:
            return False
    return len(partition.values) == len(keys)


def _partition_key_type(hive_type: str) -> pa.DataType | None:
    """The Arrow type metastore partition values of a key are compared in, or None (not compared: unknown):
    strings, integers, decimals, floating point, dates and booleans, as Hive casts partition values."""
    import pyarrow as pa

    low = hive_type.strip().lower()
    if low.startswith("char"):  # space-padded: Hive's comparison is not the string's
        return None
    try:
        typ = _hive_to_arrow(low)
    except ValueError:
        return None
    t = pa.types
    if t.is_string(typ) or t.is_integer(typ) or t.is_decimal(typ) or t.is_floating(typ) or t.is_date(typ) \
            or t.is_boolean(typ):
        return pa.int64() if t.is_integer(typ) else typ
    return None


def _prune_by_values(partitions: Sequence[HivePartition], keys: Sequence[tuple[str, str]],
                     filt: sarg.SearchArgument, hudi: HudiTable, session_time_zone: str) -> list[bool]:
    """Whether the filter may be true on each partition, judged on its metastore values only (one row per
    partition, its keys exact, every other column unknown); a value that does not convert is unknown."""
    import pyarrow as pa

    from hive_bridge.expression import translate
    from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION
    from hive_bridge.pruning.vectorized import prune
    from hive_bridge.stats.contract import MAX, MAX_EXACT, MIN, MIN_EXACT, NULL_COUNT, stat_name
    from hive_bridge.typemap import table_sarg_schema

    n = len(partitions)
    columns: dict[str, pa.Array] = {"num_rows": pa.array([1] * n, pa.int64())}
    for i, (key, hive_type) in enumerate(keys):
        typ = _partition_key_type(hive_type)
        if typ is None:
            continue
        values: list[Any] = []
        nulls: list[int | None] = []
        for p in partitions:
            raw = p.values[i] if i < len(p.values) else None
            if raw == HIVE_DEFAULT_PARTITION:
                values.append(None)
                nulls.append(1)
                continue
            try:
                values.append(None if raw is None else pa.array([raw], pa.string()).cast(typ)[0].as_py())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                values.append(None)
            nulls.append(0 if values[-1] is not None else None)
        typed = pa.array(values, typ)
        columns[stat_name(key, MIN)] = typed
        columns[stat_name(key, MAX)] = typed
        columns[stat_name(key, NULL_COUNT)] = pa.array(nulls, pa.int64())
        columns[stat_name(key, MIN_EXACT)] = pa.array([True] * n)
        columns[stat_name(key, MAX_EXACT)] = pa.array([True] * n)
    if len(columns) == 1:
        return [True] * n
    expression = translate(filt, table_sarg_schema(hudi))
    result = prune(expression, pa.table(columns), session_tz=session_time_zone)
    return [bool(k) for k in result.keep.to_pylist()]


def _fields(pairs: Iterable[tuple[str, str]]) -> list[Any]:
    from hmsclient.genthrift.hive_metastore import ttypes

    out = []
    for pair in pairs:
        col, typ = pair
        out.append(ttypes.FieldSchema(name=col, type=typ, comment=None))
    return out


def _to_hive_table(raw: Any) -> HiveTable:
    sd = raw.sd
    serde = sd.serdeInfo if sd is not None else None
    return HiveTable(
        database=raw.dbName,
        name=raw.tableName,
        location=_local_location(sd.location if sd is not None else None),
        columns=tuple((f.name, f.type) for f in (sd.cols or [] if sd is not None else [])),
        partition_keys=tuple((f.name, f.type) for f in raw.partitionKeys or []),
        input_format=sd.inputFormat if sd is not None else None,
        output_format=sd.outputFormat if sd is not None else None,
        serde=serde.serializationLib if serde is not None else None,
        table_type=raw.tableType,
        parameters=MappingProxyType(dict(raw.parameters or {})),
        serde_parameters=MappingProxyType(dict(serde.parameters or {}) if serde is not None else {}),
    )
