"""A Hive Metastore client over thrift (hmsclient): look tables up, register Hudi tables as Hudi's Hive sync does.

::

    with MetastoreClient("thrift://127.0.0.1:9083") as hms:
        hms.sync_hudi_table("/data/trips", database="db")     # trips_ro, trips_rt, trips for a merge-on-read table
        ref = hms.resolve_hudi_table("db", "trips_ro")        # read-optimized: HoodieParquetInputFormat
        assert ref.query_type == "read_optimized" and ref.table.location == "/data/trips"

What a sync registers is planned by :mod:`hive_bridge.hive.sync` (Hudi's ``HiveSyncTool`` in its HMS mode);
this module makes the thrift calls. No table parameter names a storage handler: Hudi ships none
(``org.apache.hudi.hadoop.hive.HoodieStorageHandler``, which older hive-bridge versions registered, does not
exist, so Hive and Spark failed on such tables with "Error in loading storage handler"). Such tables are still
read by name, with a ``RuntimeWarning`` saying how to register them again. ``resolve_hudi_table`` maps a name
to a :class:`~hive_bridge.hive.resolve.RegisteredHudiTable`: its query type (see
:func:`~hive_bridge.hive.model.query_type_of`) and its metastore partitions.

Every failure is a ``MetastoreError`` that says what failed (connection refused after ``retries`` attempts with
backoff, database or table missing, not a Hudi table), never a raw thrift traceback.
"""

from __future__ import annotations

import getpass
import socket
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

from hive_bridge.hive.model import (
    DEFAULT_URI,
    HUDI_INPUT_FORMAT,
    HUDI_OUTPUT_FORMAT,
    HUDI_REALTIME_INPUT_FORMAT,
    HUDI_SERDE,
    QUERY_AS_RO_TABLE,
    SERDE_PATH,
    SPARK_PROVIDER,
    HivePartition,
    HiveTable,
    MetastoreError,
    is_hudi,
    local_location,
    location_uri,
    old_registration_warning,
    query_type_of,
    registered_the_old_way,
)
from hive_bridge.hive.resolve import RegisteredHudiTable
from hive_bridge.hive.sync import plan_hive_sync, spark_table_properties
from hive_bridge.redaction import split_userinfo

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["MetastoreClient"]

T = TypeVar("T")


class _NotFound(MetastoreError):
    """The metastore answered "no such object"."""


class _Exists(MetastoreError):
    """The metastore answered "already exists"."""


def _parse_uri(uri: str) -> tuple[str, int]:
    # user info (thrift://user:password@host) is not how a metastore authenticates: it is not used, nor kept
    parsed = urlparse(split_userinfo(uri)[0] if "://" in uri else f"thrift://{uri}")
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
        self.uri = split_userinfo(uri)[0]
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
        parts = [HivePartition(tuple(p.values or ()), local_location(p.sd.location if p.sd is not None else None))
                 for p in raw or []]
        return sorted(parts, key=lambda p: p.values)

    def resolve_hudi_table(self, db: str, name: str) -> RegisteredHudiTable:
        """What reading ``db.name`` by name means: the Hudi table's location, the query type (see
        :func:`~hive_bridge.hive.model.query_type_of`) and the metastore partitions (None for a table without partition keys, and for
        one registered the old way, which never had partitions registered: all of it is read, with a
        ``RuntimeWarning`` saying how to register it again)."""
        table = self.get_hudi_table(db, name)
        old = registered_the_old_way(table)
        if old:
            warnings.warn(old_registration_warning(table), RuntimeWarning, stacklevel=2)
        partitions = None if old or not table.partition_keys else tuple(self.get_partitions(db, name))
        return RegisteredHudiTable(table, query_type_of(table), partitions, old)

    # ------------------------------------------------------------------ writes

    def create_database(self, db: str, location: str | None = None, if_missing: bool = True) -> None:
        """Create database ``db`` (nothing happens if it exists, unless ``if_missing`` is False)."""
        from hmsclient.genthrift.hive_metastore import ttypes

        database = ttypes.Database(name=db, description="", locationUri=location_uri(location) if location else None,
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
        where = location_uri(location)
        ro = (not realtime) if read_optimized is None else read_optimized
        params = {"EXTERNAL": "TRUE"}
        if sync_as_datasource:
            fields = list(spark_schema) if spark_schema is not None else _arrow_fields(db, name, [
                *columns, *partition_keys])
            params.update(spark_table_properties(fields, [k for k, _ in partition_keys]))
        params.update(parameters or {})
        serde_params = dict(serde_parameters or {})
        if sync_as_datasource:
            serde_params.update({SERDE_PATH: where, QUERY_AS_RO_TABLE: "true" if ro else "false"})
        serde_params["serialization.format"] = "1"
        self.create_database(db)
        if replace and self.table_exists(db, name):
            self._call(f"drop table {db}.{name}", lambda c: c.drop_table(db, name, False))
        sd = ttypes.StorageDescriptor(
            cols=_fields(columns), location=where,
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
                cols=sd.cols, location=location_uri(p.location), inputFormat=sd.inputFormat,
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
        with its defaults; returns the tables registered, in Hive sync's order (see
        :func:`~hive_bridge.hive.sync.hive_sync_tables`); what is registered is planned by
        :func:`~hive_bridge.hive.sync.plan_hive_sync`.

        ``database``: ``hoodie.database.name`` or ``default``; ``table``: ``hoodie.table.name``. Columns: the
        table's schema (meta columns unless ``omit_metadata_fields``) without the partition fields, typed as
        Hive sync types parquet columns (timestamps are ``timestamp`` with ``support_timestamp``, the default on
        Hudi's Spark writer, ``bigint`` without it); partition keys: the table's partition fields, typed by the
        schema (``string`` when not in it); one partition per Hudi partition holding live files. A table of one
        of those names that already exists is refused unless ``replace`` (a Hudi table of that name is
        registered again, as Hive sync recreates a table whose base path changed).
        """
        plan = plan_hive_sync(base_path, database, table, skip_ro_suffix=skip_ro_suffix,
                              table_strategy=table_strategy,
                              sync_snapshot_with_table_name=sync_snapshot_with_table_name,
                              support_timestamp=support_timestamp, omit_metadata_fields=omit_metadata_fields,
                              table_properties=table_properties)
        db = plan.database
        for t in plan.tables:
            if not replace and self.table_exists(db, t.name):
                raise MetastoreError(f"cannot sync {base_path} as {db}.{t.name}: a table of that name already "
                                     "exists (pass replace=True to register it again)")
        out = []
        for t in plan.tables:
            out.append(self.register_hudi_table(
                db, t.name, plan.location, list(plan.columns), list(plan.partition_keys), realtime=t.realtime,
                read_optimized=t.read_optimized, partitions=list(plan.partitions),
                parameters=dict(plan.parameters), serde_parameters=serde_properties,
                spark_schema=list(plan.spark_schema), sync_as_datasource=sync_as_datasource, replace=replace))
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

    from hive_bridge.filters.typemap import hive_to_arrow

    out = []
    for col, typ in pairs:
        try:
            out.append(pa.field(col, hive_to_arrow(typ)))
        except ValueError as exc:
            raise MetastoreError(f"cannot register {db}.{name}: column {col}: {exc}") from None
    return out


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
        location=local_location(sd.location if sd is not None else None),
        columns=tuple((f.name, f.type) for f in (sd.cols or [] if sd is not None else [])),
        partition_keys=tuple((f.name, f.type) for f in raw.partitionKeys or []),
        input_format=sd.inputFormat if sd is not None else None,
        output_format=sd.outputFormat if sd is not None else None,
        serde=serde.serializationLib if serde is not None else None,
        table_type=raw.tableType,
        parameters=MappingProxyType(dict(raw.parameters or {})),
        serde_parameters=MappingProxyType(dict(serde.parameters or {}) if serde is not None else {}),
    )
