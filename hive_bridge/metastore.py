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

import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType, TracebackType
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from hive_bridge.errors import HiveBridgeError

__all__ = [
    "DEFAULT_URI",
    "HUDI_INPUT_FORMAT",
    "HUDI_INPUT_FORMATS",
    "HUDI_OUTPUT_FORMAT",
    "HUDI_SERDE",
    "HUDI_STORAGE_HANDLER",
    "HiveTable",
    "MetastoreClient",
    "MetastoreError",
    "is_hudi",
]

DEFAULT_URI = "thrift://127.0.0.1:9083"
HUDI_STORAGE_HANDLER = "org.apache.hudi.hadoop.hive.HoodieStorageHandler"
HUDI_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
HUDI_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
HUDI_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
# Input formats Hudi's Hive sync has registered over the years (copy-on-write, merge-on-read, pre-Apache names).
HUDI_INPUT_FORMATS = frozenset({
    HUDI_INPUT_FORMAT,
    "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat",
    "org.apache.hudi.hadoop.HoodieHFileInputFormat",
    "org.apache.hudi.hadoop.realtime.HoodieHFileRealtimeInputFormat",
    "com.uber.hoodie.hadoop.HoodieInputFormat",
    "com.uber.hoodie.hadoop.realtime.HoodieRealtimeInputFormat",
})
STORAGE_HANDLER_KEY = "storage_handler"

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
    """True for a table stored by a Hudi storage handler or registered by Hudi's Hive sync."""
    handler = (table.storage_handler or "").lower()
    if "hudi" in handler or "hoodie" in handler:
        return True
    if table.input_format in HUDI_INPUT_FORMATS:
        return True
    return table.parameters.get("spark.sql.sources.provider", "").lower() == "hudi"


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
                f"table {db}.{name} is not a Hudi table: input format {table.input_format!r}, storage handler "
                f"{table.storage_handler!r} (expected {HUDI_INPUT_FORMAT} or a Hudi storage handler)")
        return table

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
                            partition_keys: Sequence[tuple[str, str]] = (), *,
                            parameters: Mapping[str, str] | None = None,
                            storage_handler: str = HUDI_STORAGE_HANDLER, replace: bool = False) -> HiveTable:
        """Create ``db.name`` (and ``db`` if missing) as Hive sees a Hudi table stored by the Hudi storage handler.

        ``columns`` and ``partition_keys`` are (name, Hive type) pairs; ``location`` is a path or a URI
        (a local path is stored as ``file://…``). With ``replace``, an existing table of that name is dropped
        first (metadata only: it is EXTERNAL). Returns the table as the metastore now holds it.
        """
        from hmsclient.genthrift.hive_metastore import ttypes

        if not columns:
            raise MetastoreError(f"cannot register {db}.{name}: no columns given")
        location_uri = _location_uri(location)
        self.create_database(db)
        if replace and self.table_exists(db, name):
            self._call(f"drop table {db}.{name}", lambda c: c.drop_table(db, name, False))
        params = {"EXTERNAL": "TRUE", STORAGE_HANDLER_KEY: storage_handler, "hudi.table.name": name}
        params.update(parameters or {})
        sd = ttypes.StorageDescriptor(
            cols=_fields(columns), location=location_uri, inputFormat=HUDI_INPUT_FORMAT,
            outputFormat=HUDI_OUTPUT_FORMAT, compressed=False, numBuckets=-1,
            serdeInfo=ttypes.SerDeInfo(name=name, serializationLib=HUDI_SERDE,
                                       parameters={"serialization.format": "1"}),
            bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)
        table = ttypes.Table(tableName=name, dbName=db, owner="hive_bridge", createTime=int(time.time()),
                             lastAccessTime=0, retention=0, sd=sd, partitionKeys=_fields(partition_keys),
                             parameters=params, tableType="EXTERNAL_TABLE")
        self._call(f"register Hudi table {db}.{name}", lambda c: c.create_table(table),
                   exists=f"cannot register {db}.{name}: a table of that name already exists "
                          f"(pass replace=True to replace it)")
        return self.get_table(db, name)

    def drop_table(self, db: str, name: str, if_exists: bool = True) -> None:
        """Drop the table's metadata (never its files: Hudi tables are EXTERNAL)."""
        try:
            self._call(f"drop table {db}.{name}", lambda c: c.drop_table(db, name, False),
                       missing=f"table {db}.{name} not found in the metastore at {self.uri}")
        except _NotFound:
            if not if_exists:
                raise


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
