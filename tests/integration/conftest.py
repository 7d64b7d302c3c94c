"""Real Hive servers for the integration tests, started once per session (or taken from the environment).

Locally: a standalone Hive Metastore (``LoopbackMetastore`` over pyspark's Hive 2.3 jars) and the Spark Thrift
Server sharing it, both on free 127.0.0.1 ports in a pytest temporary folder, stopped by PID at the end whatever
happens (fixture finalizers, plus ``hive_bridge.testing.servers``' atexit hook, plus SIGTERM turned into a clean exit).
With ``HIVE_BRIDGE_METASTORE_URI`` / ``HIVE_BRIDGE_HS2_HOST`` set (see ``endpoints.py``) those servers are used.

Fixtures for later tests (the replay against a Hudi table): ``hs2_cursor``, ``hs2_table`` (the rows as Python
tuples), ``hs2_queries`` (each query's SearchArguments and HiveServer2's rows), ``metastore`` (a connected
``MetastoreClient``) and ``hs2_replay`` (all of it)::

    def test_replay(hs2_replay, metastore):
        rows = hs2_replay.table.rows                      # tuples in hs2_data.COLUMNS order
        where = hs2_replay.servers.data_dir / "sarg_types"  # write the Hudi table there, then register it
        metastore.register_hudi_table("db", "t", str(where), hs2_replay.table.columns, replace=True)
        for name, q in hs2_replay.queries.items():        # q.sargs: [(sarg_text, struct_schema)], q.rows
            ...
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from hive_bridge.testing import servers
from tests.integration import hs2_data
from tests.integration.endpoints import ExternalEndpoints, endpoints_from_env

INTEGRATION_DIR = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that uses a server fixture is marked ``integration`` (``-m 'not integration'`` skips them)."""
    server_fixtures = {"hive_servers", "hs2_cursor", "hs2_table", "hs2_queries", "hs2_replay", "metastore"}
    for item in items:
        if INTEGRATION_DIR in Path(str(item.fspath)).resolve().parents and \
                server_fixtures & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


@dataclass(frozen=True)
class HiveServers:
    """Where the metastore and HiveServer2 are, and what the tests may rely on."""

    metastore_uri: str
    hs2_host: str
    hs2_port: int
    orc_log: Path | None  # where the ORC reader's SearchArguments are logged (None: not visible from here)
    data_dir: Path  # where Hudi tables are written (seen at the same path by the servers)
    local: bool  # True when both servers were started by this session (Spark Thrift Server flavour)


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """While local servers run, SIGTERM to pytest unwinds (finalizers stop the JVMs) instead of killing it."""
    def handler(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def external_endpoints() -> ExternalEndpoints:
    try:
        return endpoints_from_env(os.environ)
    except ValueError as exc:
        raise pytest.UsageError(f"integration test endpoints: {exc}") from None


@pytest.fixture(scope="session")
def hive_servers(external_endpoints: ExternalEndpoints,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveServers]:
    ext = external_endpoints
    data_dir = ext.data_dir or tmp_path_factory.mktemp("hudi-tables")
    if ext.metastore_uri and ext.hs2_host and ext.hs2_port:
        yield HiveServers(ext.metastore_uri, ext.hs2_host, ext.hs2_port, ext.orc_log, data_dir, local=False)
        return
    found = servers.find_java()
    if found is None or found[1] is None:
        pytest.skip("the local Hive servers need Java 17+ with javac (JAVA_HOME or PATH); none found")
    version = servers.java_major_version(found[0])
    if version is None or version < 17:
        pytest.skip(f"the local Hive servers need Java 17+ (PySpark 4); {found[0]} is version {version}")
    work = tmp_path_factory.mktemp("hive-servers")
    with _sigterm_as_exit(), contextlib.ExitStack() as stack:
        started = time.monotonic()
        metastore_uri = ext.metastore_uri
        if metastore_uri is None:
            metastore = stack.enter_context(servers.start_metastore(work / "metastore", timeout=180))
            metastore_uri = metastore.uri
        hs2 = stack.enter_context(servers.start_thrift_server(work / "thriftserver", metastore_uri=metastore_uri,
                                                              timeout=240, jvm_options=servers.QUICK_START_JVM))
        host, port, orc_log = hs2.host, hs2.port, hs2.orc_log
        print(f"\nlocal Hive servers up in {time.monotonic() - started:.1f} s: metastore {metastore_uri}, "
              f"HiveServer2 {host}:{port}, work dir {work}")
        yield HiveServers(metastore_uri, host, port, orc_log, data_dir, local=not ext.any)


@pytest.fixture(scope="session")
def hs2_cursor(hive_servers: HiveServers) -> Iterator[Any]:
    """A pyhive cursor on HiveServer2 (binary thrift, no authentication), shared by the whole session."""
    from pyhive import hive

    conn = hive.connect(host=hive_servers.hs2_host, port=hive_servers.hs2_port, username="hive_bridge",
                        auth="NONE")
    cursor = conn.cursor()
    try:
        yield cursor
    finally:
        with contextlib.suppress(Exception):
            cursor.close()
        with contextlib.suppress(Exception):
            conn.close()


@dataclass(frozen=True)
class HS2Table:
    """The ORC table created through HiveServer2: its name, columns (name, Hive type) and rows as Python tuples."""

    database: str
    name: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[hs2_data.Row, ...]
    struct_schema: str

    @property
    def qualified_name(self) -> str:
        return f"{self.database}.{self.name}"


@pytest.fixture(scope="session")
def hs2_table(hs2_cursor: Any) -> HS2Table:
    hs2_cursor.execute(f"DROP DATABASE IF EXISTS {hs2_data.DATABASE} CASCADE")
    hs2_cursor.execute(f"CREATE DATABASE {hs2_data.DATABASE}")
    hs2_cursor.execute(hs2_data.create_sql())
    for batch in hs2_data.BATCHES:
        hs2_cursor.execute(hs2_data.insert_sql(batch))
    return HS2Table(hs2_data.DATABASE, hs2_data.TABLE, hs2_data.COLUMNS, hs2_data.ROWS, hs2_data.STRUCT_SCHEMA)


@dataclass(frozen=True)
class CollectedQuery:
    """One query run through HiveServer2: its rows (sorted) and the distinct SearchArguments its scans logged."""

    query: hs2_data.Query
    rows: tuple[hs2_data.Row, ...]
    sargs: tuple[tuple[str, str], ...]  # (SearchArgument text, struct schema), in the order first logged
    files: tuple[str, ...]  # the files the scan opened, as logged


@pytest.fixture(scope="session")
def hs2_queries(hive_servers: HiveServers, hs2_cursor: Any, hs2_table: HS2Table,
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, CollectedQuery]:
    """Run every query of ``hs2_data.QUERIES``; the SearchArguments come from the server's ORC log."""
    if hive_servers.orc_log is None:
        pytest.skip("HIVE_BRIDGE_ORC_LOG is not set: the SearchArguments of an external HiveServer2 are not "
                    "visible from here (see docker/README.md)")
    log = hive_servers.orc_log
    out: dict[str, CollectedQuery] = {}
    for query in hs2_data.QUERIES:
        offset = servers.log_offset(log)
        hs2_cursor.execute(query.sql)
        rows = sorted((hs2_data.normalize_row(r) for r in hs2_cursor.fetchall()), key=hs2_data.sort_key)
        logged: list[servers.LoggedSarg] = []
        for _ in range(20):  # the reader logs before the rows come back; a remote log may lag a little
            found, offset = servers.read_logged_sargs(log, offset)
            logged += found
            if logged:
                break
            time.sleep(0.1)
        pairs = tuple(dict.fromkeys((s.sarg, s.schema or hs2_table.struct_schema) for s in logged))
        files = tuple(dict.fromkeys(s.path for s in logged if s.path))
        out[query.name] = CollectedQuery(query, tuple(rows), pairs, files)
    dump = tmp_path_factory.mktemp("hs2-sargs") / "hs2_sargs.jsonl"
    write_sargs_jsonl(dump, out.values(), flavor="spark-thriftserver" if hive_servers.local else "external")
    print(f"\nSearchArguments collected from HiveServer2 written to {dump}")
    return out


def write_sargs_jsonl(path: Path, queries: Iterable[CollectedQuery], flavor: str) -> None:
    """One JSON object per (query, SearchArgument): what ``data/hs2_sargs.jsonl`` holds (see its test)."""
    with path.open("w", encoding="utf-8") as f:
        for collected in queries:
            for text, schema in collected.sargs:
                f.write(json.dumps({"server": flavor, "query": collected.query.name, "where": collected.query.where,
                                    "sarg": text, "schema": schema,
                                    "ids": [row[0] for row in collected.rows]}) + "\n")


@dataclass(frozen=True)
class HS2Replay:
    """Everything a replay of HiveServer2's SearchArguments against a Hudi table with the same rows needs."""

    cursor: Any
    servers: HiveServers
    table: HS2Table
    queries: dict[str, CollectedQuery]

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """Every distinct (SearchArgument text, struct schema) the server produced, in query order."""
        return list(dict.fromkeys(p for q in self.queries.values() for p in q.sargs))


@pytest.fixture(scope="session")
def hs2_replay(hs2_cursor: Any, hive_servers: HiveServers, hs2_table: HS2Table,
               hs2_queries: dict[str, CollectedQuery]) -> HS2Replay:
    return HS2Replay(hs2_cursor, hive_servers, hs2_table, hs2_queries)


@pytest.fixture()
def metastore(hive_servers: HiveServers) -> Iterator[Any]:
    """A connected ``hive_bridge.hive.MetastoreClient`` on the session's metastore."""
    from hive_bridge.hive import MetastoreClient

    with MetastoreClient(hive_servers.metastore_uri, retries=3, timeout=60) as client:
        yield client
