"""``hive-bridge serve``: one long-lived PySpark driver with ``hudi-hive`` registered and Spark's Thrift Server
(HiveServer2: beeline, JDBC/ODBC drivers, BI tools) in it, serving every Hudi table of a lake folder and of a Hive
metastore under their database and table names.

- ``--lake [NAME=]DIR|URI``: every folder holding ``.hoodie/`` below it is a table of the database NAME (default:
  the folder's own name), named by its path below the lake (``a/b`` is ``a_b``; lower case, other characters
  ``_``).
- ``--metastore thrift://HOST:PORT``: every Hudi table the metastore holds as Hudi's Hive sync registers them
  (Hudi's input formats, or ``spark.sql.sources.provider=hudi``): copy-on-write and merge-on-read ``_ro`` read
  optimized, ``_rt`` and the plain name snapshot; other tables are not served and the log says why.

Freshness: every statement resolves its tables afresh (the session's relation cache is off,
``spark.sql.filesourceTableRelationCacheSize=0``), so it reads the latest completed commit at its start, on every
connection, pooled ones too; a running statement keeps the table state it started with (its pin). Tables that
appear or disappear are found every ``--refresh-seconds`` (default 10).

Safe by default: loopback bind; a non-loopback bind needs ``--auth`` PASSWORD, LDAP or CUSTOM (``--auth PASSWORD``:
users and PBKDF2-HMAC-SHA256 hashes of a ``--password-file``, checked by the product's own provider class); ``spark.sql.runSQLOnFiles``
off (no ``SELECT … FROM parquet.`/path```); clients get the error's message and SQLSTATE, not Java stack traces;
a client that drops its connection mid-statement has the statement cancelled within about a second (both by the
product's ``ThriftGuard``, :func:`hive_bridge.spark.thrift.start_endpoint`).
Each scan is logged as one JSON line (``--scan-log``) that ``hive-bridge replay`` reads back.
"""

from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hive_bridge.errors import HiveBridgeError
from hive_bridge.pruning.pruner import SNAPSHOT

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: hive.server2.authentication modes Spark's Thrift Server offers (KERBEROS needs a keytab: given by --conf), and
#: PASSWORD: CUSTOM with the product's password-file provider
AUTH_MODES = ("NONE", "NOSASL", "PASSWORD", "LDAP", "CUSTOM", "KERBEROS")
#: the provider class of --auth PASSWORD (java/…/PasswordFileAuthenticator.java) and the system property it reads
PASSWORD_PROVIDER = "io.hivebridge.spark.PasswordFileAuthenticator"
PASSWORD_FILE_PROPERTY = "hive.bridge.password.file"
CUSTOM_CLASS = "hive.server2.custom.authentication.class"
#: a password file line: ``user:pbkdf2-sha256$ITERATIONS$SALT$HASH`` (base64 salt and hash)
PASSWORD_SCHEME = "pbkdf2-sha256"
PASSWORD_ITERATIONS = 600_000
#: modes that check nobody: refused on a bind other than loopback
OPEN_MODES = ("NONE", "NOSASL")
DEFAULT_PORT = 10000
DEFAULT_REFRESH_SECONDS = 10.0
#: the mark of a serve scan-log line (what ``replay`` tells them by)
SCAN_EVENT = "hive-bridge-serve-scan"
_NAME = re.compile(r"[^a-z0-9_]+")


class ServeError(HiveBridgeError):
    """A setting ``serve`` cannot start with (exit code 2)."""


@dataclass(frozen=True, order=True)
class ServedTable:
    """One table the endpoint serves: ``database.name`` over ``location``, read as ``query_type``."""

    database: str
    name: str
    location: str
    query_type: str = SNAPSHOT
    source: str = "lake"

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.name}"


@dataclass
class Discovery:
    """What a look at the lakes and the metastore found: the tables, and what was passed over and why."""

    tables: list[ServedTable] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def identifier(text: str) -> str:
    """A database or table name from a folder name: lower case, runs of other characters as ``_``."""
    name = _NAME.sub("_", text.strip().lower()).strip("_")
    return name or "_"


def parse_lake(text: str) -> tuple[str, str]:
    """``[NAME=]DIR|URI`` as (database, location); the database defaults to the folder's own name."""
    name, sep, uri = text.partition("=")
    if not sep or "/" in name or ":" in name:
        name, uri = "", text
    uri = uri.rstrip("/") or uri
    if not uri:
        raise ServeError(f"--lake {text!r}: no folder or URI")
    if "://" not in uri and not uri.startswith("file:"):
        uri = os.path.abspath(uri)
    return identifier(name or os.path.basename(uri.rstrip("/")) or "lake"), uri


def lake_tables(database: str, root: str, storage_options: Mapping[str, str] | None = None,
                max_depth: int = 8) -> Discovery:
    """Every folder holding ``.hoodie/`` below ``root`` (not looking inside a table), breadth first."""
    from hive_bridge.storage.core import Storage

    found = Discovery()
    try:
        storage = Storage.for_uri(root, dict(storage_options or {}))
    except Exception as exc:
        found.skipped.append(f"lake {root}: cannot be opened: {exc}")
        return found
    names: dict[str, str] = {}
    todo: list[tuple[str, tuple[str, ...]]] = [(root, ())]
    while todo:
        folder, rel = todo.pop(0)
        try:
            entries = storage.list_dir(folder)
        except OSError as exc:
            found.skipped.append(f"{folder}: cannot be listed: {exc}")
            continue
        folders = sorted(e.name for e in entries if e.is_dir)
        if ".hoodie" in folders:
            if not rel:
                found.skipped.append(f"lake {root} is itself a Hudi table: give the folder above it")
                continue
            name = identifier("_".join(rel))
            if name in names:
                found.skipped.append(f"{folder}: not served: its name {database}.{name} is {names[name]}'s")
                continue
            names[name] = folder
            found.tables.append(ServedTable(database, name, folder, SNAPSHOT, "lake"))
            continue
        if len(rel) < max_depth:
            todo.extend((f"{folder}/{n}", (*rel, n)) for n in folders if not n.startswith((".", "_")))
    return found


def metastore_tables(uri: str) -> Discovery:
    """Every Hudi table the metastore at ``uri`` holds, with the query type its registration says."""
    from hive_bridge.hive import MetastoreClient, MetastoreError, is_hudi, query_type_of
    from hive_bridge.hive.model import SPARK_PROVIDER

    found = Discovery()
    with MetastoreClient(uri) as client:
        for db in client.get_databases():
            for name in client.get_tables(db):
                try:
                    table = client.get_table(db, name)
                except MetastoreError as exc:
                    found.skipped.append(f"{db}.{name}: not served: {exc}")
                    continue
                if not is_hudi(table):
                    found.skipped.append(
                        f"{db}.{name}: not served: not a Hudi table (input format {table.input_format or 'unset'}, "
                        f"{SPARK_PROVIDER}={table.parameters.get(SPARK_PROVIDER) or 'unset'})")
                    continue
                if not table.location:
                    found.skipped.append(f"{db}.{name}: not served: the metastore gives no location")
                    continue
                found.tables.append(ServedTable(identifier(db), identifier(name), table.location,
                                                query_type_of(table), "metastore"))
    return found


def discover(lakes: Sequence[tuple[str, str]], metastore: str | None,
             storage_options: Mapping[str, str] | None = None) -> Discovery:
    """The tables of every lake and of the metastore; a name served twice keeps its first table."""
    out = Discovery()
    parts = [lake_tables(db, root, storage_options) for db, root in lakes]
    if metastore:
        parts.append(metastore_tables(metastore))
    seen: dict[str, ServedTable] = {}
    for part in parts:
        out.skipped.extend(part.skipped)
        for t in part.tables:
            if t.qualified in seen:
                out.skipped.append(f"{t.location}: not served: {t.qualified} is {seen[t.qualified].location}")
                continue
            seen[t.qualified] = t
            out.tables.append(t)
    return out


# -- settings -----------------------------------------------------------------------------------------------------

def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, auth: str) -> None:
    """A bind other than loopback must check who connects."""
    if auth.upper() not in AUTH_MODES:
        raise ServeError(f"--auth {auth}: one of {', '.join(AUTH_MODES)}")
    if not is_loopback(host) and auth.upper() in OPEN_MODES:
        raise ServeError(f"--bind {host} reaches beyond this machine and --auth {auth.upper()} lets anyone in: give "
                         "--auth PASSWORD, LDAP or CUSTOM (--password-file FILE; LDAP / CUSTOM with their "
                         "hive.server2.authentication.* settings as --conf), or bind 127.0.0.1")


def jdbc_url(host: str, port: int, database: str = "default", http_path: str | None = None,
             auth: str = "NONE") -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if ":" in shown:
        shown = f"[{shown}]"
    url = f"jdbc:hive2://{shown}:{port}/{database}"
    if http_path is not None:
        url += f";transportMode=http;httpPath={http_path.strip('/')}"
    if auth.upper() == "NOSASL":
        url += ";auth=noSasl"
    return url


def parse_confs(items: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ServeError(f"--conf {item!r}: give KEY=VALUE")
        out[key.strip()] = value
    return out


def server_settings(args: argparse.Namespace) -> dict[str, str]:
    """The HiveServer2 settings (``hive.server2.*``) of the command line."""
    auth = args.auth.upper()
    settings = {
        "hive.server2.thrift.bind.host": args.bind,
        "hive.server2.authentication": "CUSTOM" if auth == "PASSWORD" else auth,
        # clients get the message and SQLSTATE; the stack trace stays in the server's log
        "hive.server2.logging.operation.enabled": "false",
    }
    if args.http is not None:
        settings.update({"hive.server2.transport.mode": "http", "hive.server2.thrift.http.port": str(args.port),
                         "hive.server2.thrift.http.path": args.http.strip("/") or "cliservice"})
    else:
        settings.update({"hive.server2.transport.mode": "binary", "hive.server2.thrift.port": str(args.port)})
    if auth == "PASSWORD":
        settings[CUSTOM_CLASS] = PASSWORD_PROVIDER
    return settings


# -- the password file --------------------------------------------------------------------------------------------

def hash_password(password: str, *, iterations: int = PASSWORD_ITERATIONS, salt: bytes | None = None) -> str:
    """``pbkdf2-sha256$ITERATIONS$SALT$HASH`` of ``password`` (UTF-8), a random 16-byte salt unless given."""
    import base64
    import hashlib
    import secrets

    if not password:
        raise ServeError("an empty password cannot be used")
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)
    b64 = base64.b64encode
    return f"{PASSWORD_SCHEME}${iterations}${b64(salt).decode()}${b64(digest).decode()}"


def password_line(user: str, password: str, *, iterations: int = PASSWORD_ITERATIONS) -> str:
    """A line of a password file: ``user:<salted hash>``."""
    if not user or any(c in user for c in ":\n\r") or user != user.strip() or user.startswith("#"):
        raise ServeError(f"user name {user!r}: give one without ':', line breaks, '#' first or spaces around it")
    return f"{user}:{hash_password(password, iterations=iterations)}"


def check_password_file(path: str) -> int:
    """The number of users of the password file ``path``; a line not of the form ``user:pbkdf2-sha256$N$SALT$HASH``
    is an error naming the file and line (its text is not shown: it may be a password pasted by mistake)."""
    import base64
    import binascii

    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ServeError(f"--password-file {path}: cannot be read: {exc}") from None
    users = 0
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        user, _, stored = text.rpartition(":")
        parts = stored.split("$")
        try:
            ok = (bool(user) and len(parts) == 4 and parts[0] == PASSWORD_SCHEME and 0 < int(parts[1]) <= 10_000_000
                  and len(base64.b64decode(parts[2], validate=True)) > 0
                  and len(base64.b64decode(parts[3], validate=True)) > 0)
        except (ValueError, binascii.Error):
            ok = False
        if not ok:
            raise ServeError(f"--password-file {path}, line {number}: not of the form "
                             f"user:{PASSWORD_SCHEME}$ITERATIONS$SALT$HASH (write lines with "
                             "`hive-bridge serve --hash-password USER`)")
        users += 1
    if users == 0:
        raise ServeError(f"--password-file {path}: holds no user")
    return users


def session_settings(args: argparse.Namespace, user_conf: Mapping[str, str]) -> dict[str, str]:
    """The Spark settings the serving session starts with (the user's ``--conf`` last, but never raw-path SQL).
    The driver's own RPC stays on loopback whatever ``--bind`` says (a cluster's ``spark.driver.host`` /
    ``bindAddress`` come as ``--conf``)."""
    conf = {
        "spark.sql.runSQLOnFiles": "false",
        # every statement resolves its tables afresh: new commits and re-created tables are read at once
        "spark.sql.filesourceTableRelationCacheSize": "0",
        "spark.sql.hive.thriftServer.singleSession": "false",
    }
    conf.update(user_conf)
    if str(conf.get("spark.sql.runSQLOnFiles", "false")).lower() != "false":
        raise ServeError("spark.sql.runSQLOnFiles stays false: SQL on raw paths would let any client read the "
                         "driver's files")
    conf["spark.sql.runSQLOnFiles"] = "false"
    return conf


def table_options(t: ServedTable, storage_options: Mapping[str, str]) -> dict[str, str]:
    from hive_bridge.spark.options import QUERY_TYPE_OPTION, STORAGE_OPTION_PREFIX

    options = {QUERY_TYPE_OPTION: t.query_type}
    options.update({STORAGE_OPTION_PREFIX + k: v for k, v in storage_options.items()})
    return options


# -- the server ---------------------------------------------------------------------------------------------------

class Server:
    """The served catalog, kept in step with the lakes and the metastore, and the Thrift Server over it."""

    def __init__(self, spark: SparkSession, lakes: Sequence[tuple[str, str]], metastore: str | None,
                 storage_options: Mapping[str, str], log: Callable[[str], None],
                 scan_log: str | None = None) -> None:
        self.spark = spark
        self.lakes = list(lakes)
        self.metastore = metastore
        self.storage_options = dict(storage_options)
        self.log = log
        self.served: dict[str, ServedTable] = {}
        self.thrift: Any = None
        self.stopping = threading.Event()
        self._told: set[str] = set()
        self.scan_log = scan_log
        self._lock = threading.Lock()

    # the catalog
    def sync(self) -> tuple[int, int]:
        """Create the tables found that are not served yet, drop those no longer found: (added, dropped)."""
        from hive_bridge.spark.thrift import sql_string

        try:
            found = discover(self.lakes, self.metastore, self.storage_options)
        except HiveBridgeError as exc:
            self._tell(f"cannot look for tables: {exc}")
            return 0, 0
        for why in found.skipped:
            self._tell(why)
        want = {t.qualified: t for t in found.tables}
        added = dropped = 0
        with self._lock:
            for name, old in list(self.served.items()):
                if want.get(name) != old:
                    self._run(f"DROP TABLE IF EXISTS {self._quoted(old)}")
                    del self.served[name]
                    dropped += 1
                    self.log(f"dropped {name} ({old.location})")
            for name, t in sorted(want.items()):
                if name in self.served:
                    continue
                options = ", ".join(f"{sql_string(k)} {sql_string(v)}"
                                    for k, v in table_options(t, self.storage_options).items())
                try:
                    self._run(f"CREATE DATABASE IF NOT EXISTS `{t.database}`")
                    self._run(f"CREATE TABLE {self._quoted(t)} USING `hudi-hive` OPTIONS ({options}) "
                              f"LOCATION {sql_string(t.location)}")
                except Exception as exc:
                    self._tell(f"{name} ({t.location}): not served: {_first_line(exc)}")
                    continue
                self.served[name] = t
                added += 1
                self.log(f"serving {name} ({t.query_type}) from {t.location}")
        return added, dropped

    @staticmethod
    def _quoted(t: ServedTable) -> str:
        return f"`{t.database}`.`{t.name}`"

    def _run(self, sql: str) -> None:
        self.spark.sql(sql).collect()

    def _tell(self, message: str) -> None:
        if message not in self._told:
            self._told.add(message)
            self.log(message)

    def keep_in_step(self, every: float) -> threading.Thread:
        def loop() -> None:
            while not self.stopping.wait(every):
                try:
                    self.sync()
                except Exception as exc:  # the next round tries again
                    self._tell(f"looking for tables failed: {_first_line(exc)}")

        thread = threading.Thread(target=loop, name="hive-bridge-serve-sync", daemon=True)
        thread.start()
        return thread

    def table_of(self, location: str) -> list[str]:
        """The served names reading ``location``."""
        loc = location.removeprefix("file://").removeprefix("file:").rstrip("/")
        return sorted(t.qualified for t in list(self.served.values())
                      if t.location.removeprefix("file://").removeprefix("file:").rstrip("/") == loc)

    # the endpoint
    def start(self, settings: Mapping[str, str], password_file: str | None = None) -> Any:
        from hive_bridge.spark.thrift import start_endpoint

        jvm: Any = self.spark._jvm
        # the Thrift Server's CUSTOM provider is made from a fresh HiveConf, which takes hive.* system properties
        if CUSTOM_CLASS in settings:
            jvm.java.lang.System.setProperty(CUSTOM_CLASS, settings[CUSTOM_CLASS])
        if password_file is not None:
            jvm.java.lang.System.setProperty(PASSWORD_FILE_PROPERTY, os.path.abspath(password_file))
        self.thrift = start_endpoint(self.spark, settings)
        return self.thrift

    def stop(self) -> None:
        """End running statements, stop the endpoint, release the planner's pins."""
        from hive_bridge.spark.file_index import planner

        self.stopping.set()
        try:
            self.spark.sparkContext.cancelAllJobs()
        except Exception:
            pass
        if self.thrift is not None:
            try:
                self.thrift.stop()
            except Exception:
                pass
        planner().release_all()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class ScanLog:
    """Each scan's report as one JSON line of the file ``path`` (appended, ``0600``): the time, the statement,
    session and user Spark's Thrift Server ran it for, the served names of the table, the filter as a
    SearchArgument, files and bytes kept of the total. Written by a thread of its own (the statement's session
    and user come from the Thrift Server's listener, which may lag the scan a little)."""

    def __init__(self, path: str, server: Server) -> None:
        import queue

        self.path = path
        self.server = server
        self._queue: queue.Queue[tuple[str, dict[str, Any]] | None] = queue.Queue()
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
        self._thread = threading.Thread(target=self._write, name="hive-bridge-scan-log", daemon=True)
        self._thread.start()

    def __call__(self, report: dict[str, Any]) -> None:
        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")
        self._queue.put((now, dict(report)))

    def close(self, timeout: float = 5.0) -> None:
        """Write what is queued, then stop."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _write(self) -> None:
        from hive_bridge.redaction import redact_data

        while True:
            item = self._queue.get()
            if item is None:
                return
            when, report = item
            try:
                line = self.line(when, report)
                with open(self.path, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(redact_data(line)) + "\n")
            except Exception as exc:  # the next report is written still
                self.server._tell(f"scan log {self.path}: {_first_line(exc)}")

    def line(self, when: str, report: Mapping[str, Any]) -> dict[str, Any]:
        statement = report.get("statement_id")
        info = _execution(self.server.spark, str(statement)) if statement else {}
        return {"event": SCAN_EVENT, "time": when, "statement_id": statement, "session": info.get("session"),
                "user": info.get("user"), "tables": self.server.table_of(str(report.get("path", ""))),
                "path": report.get("path"), "sarg": report.get("sarg"), "filter": report.get("filter"),
                "files_kept": report.get("files_read"), "files_total": report.get("files_total"),
                "bytes_kept": report.get("bytes_read"), "bytes_total": report.get("bytes_total"),
                "query_type": report.get("query_type")}


def _execution(spark: SparkSession, statement: str, wait: float = 2.0) -> dict[str, str]:
    """Session and user of a Thrift Server statement, from its listener's store (it may lag a little)."""
    try:
        jvm: Any = spark._jvm
        store = jvm.org.apache.spark.sql.hive.thriftserver.ui.HiveThriftServer2AppStatusStore(
            spark.sparkContext._jsc.sc().statusStore().store())
    except Exception:
        return {}
    deadline = time.monotonic() + wait
    while True:
        try:
            found = store.getExecution(statement)
            if found.isDefined():
                info = found.get()
                return {"session": str(info.sessionId()), "user": str(info.userName())}
        except Exception:
            return {}
        if time.monotonic() > deadline:
            return {}
        time.sleep(0.05)


# -- the command --------------------------------------------------------------------------------------------------

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lake", action="append", default=[], metavar="[NAME=]DIR|URI",
                   help="serve every folder holding .hoodie/ below DIR as a table of the database NAME (default: "
                        "the folder's name); repeatable")
    p.add_argument("--metastore", default=None, metavar="thrift://HOST:PORT",
                   help="serve every Hudi table this Hive metastore holds (as Hudi's Hive sync registers them), "
                        "under its database and table name; other tables are passed over with a log line")
    p.add_argument("--bind", default="127.0.0.1", metavar="HOST",
                   help="the address to listen on (default 127.0.0.1; another needs --auth PASSWORD, LDAP or CUSTOM)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT})")
    p.add_argument("--http", nargs="?", const="cliservice", default=None, metavar="PATH",
                   help="HTTP transport at PATH (default cliservice) instead of binary thrift")
    p.add_argument("--auth", default="NONE", type=str.upper, choices=AUTH_MODES,
                   help="hive.server2.authentication (default NONE; PASSWORD: the users of --password-file; LDAP / "
                        "CUSTOM settings as --conf hive.server2.authentication.ldap.url=..., "
                        "hive.server2.custom.authentication.class=...)")
    p.add_argument("--password-file", default=None, metavar="FILE",
                   help="users of --auth PASSWORD: lines user:pbkdf2-sha256$ITERATIONS$SALT$HASH (read at each "
                        "login), written by --hash-password")
    p.add_argument("--hash-password", default=None, metavar="USER",
                   help="print a --password-file line for USER with the password read from the terminal (or the "
                        "first line of standard input) and exit")
    p.add_argument("--master", default="local[2]", metavar="URL", help="Spark master (default local[2])")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark setting of the serving session (hive.server2.* settings go to the endpoint)")
    p.add_argument("--refresh-seconds", type=float, default=DEFAULT_REFRESH_SECONDS, metavar="S",
                   help=f"how often new and removed tables are looked for (default {DEFAULT_REFRESH_SECONDS:g})")
    p.add_argument("--scan-log", default=None, metavar="PATH",
                   help="append each scan's report as a JSON line here (default: scans-served.jsonl in the "
                        "scan-report folder); `hive-bridge replay PATH` reads it")
    p.add_argument("--check", action="store_true", help="print what would be served and exit")


def _read_password() -> str:
    """The password from the terminal (asked twice, not echoed) or the first line of standard input."""
    import getpass
    import sys

    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise ServeError("the two passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def run(args: argparse.Namespace, storage_options: Mapping[str, str], out: Callable[[str], None],
        log: Callable[[str], None]) -> int:
    """``hive-bridge serve``: returns the exit code after SIGTERM / SIGINT."""
    if args.hash_password is not None:
        out(password_line(args.hash_password, _read_password()))
        return 0
    if not args.lake and not args.metastore:
        raise ServeError("give --lake DIR and/or --metastore thrift://HOST:PORT")
    check_bind(args.bind, args.auth)
    if args.auth == "PASSWORD":
        if not args.password_file:
            raise ServeError("--auth PASSWORD needs --password-file FILE (lines written by --hash-password USER)")
        log(f"{check_password_file(args.password_file)} users in {args.password_file}")
    elif args.password_file:
        raise ServeError("--password-file is read by --auth PASSWORD only")
    if not 0 < args.port < 65536:
        raise ServeError(f"--port {args.port}: not a port")
    user_conf = parse_confs(args.conf)
    hive_conf = {k: v for k, v in user_conf.items() if k.startswith("hive.")}
    spark_conf = {k: v for k, v in user_conf.items() if not k.startswith("hive.")}
    conf = session_settings(args, spark_conf)
    lakes = [parse_lake(text) for text in args.lake]
    if args.check:
        found = discover(lakes, args.metastore, storage_options)
        for t in found.tables:
            out(f"{t.qualified}\t{t.query_type}\t{t.location}")
        for why in found.skipped:
            log(why)
        out(f"{len(found.tables)} tables; endpoint {jdbc_url(args.bind, args.port, http_path=args.http, auth=args.auth)}")
        return 0
    from hive_bridge.spark import register
    from hive_bridge.spark.jar import jar_path
    from hive_bridge.spark.reports import add_listener, remove_listener, report_folder
    from hive_bridge.spark.start import start_session
    from hive_bridge.spark.thrift import add_product_jar

    # the product's jar on the driver's own class path: Spark's Thrift Server makes the CUSTOM provider
    # (--auth PASSWORD) in threads whose class loader does not see jars added later
    jar = str(jar_path())
    conf["spark.driver.extraClassPath"] = os.pathsep.join(p for p in (jar, conf.get("spark.driver.extraClassPath"))
                                                          if p)
    spark = start_session("hive-bridge-serve", verbose=getattr(args, "verbose", False), master=args.master, **conf)
    register(spark)
    add_product_jar(spark)  # before the tables are created: `hudi-hive` is the JVM file index in every session
    scan_log = args.scan_log or os.path.join(report_folder(), "scans-served.jsonl")
    server = Server(spark, lakes, args.metastore, storage_options, log, scan_log)
    listener = ScanLog(scan_log, server)
    add_listener(listener)
    server.sync()
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    import faulthandler

    faulthandler.register(signal.SIGUSR2, all_threads=True)  # `kill -USR2 PID`: every thread's stack to the log
    try:
        server.start({**server_settings(args), **hive_conf}, args.password_file)
        server.keep_in_step(args.refresh_seconds)
        out(f"serving {len(server.served)} tables at {jdbc_url(args.bind, args.port, http_path=args.http, auth=args.auth)}")
        out(f"scan log: {scan_log}")
        while not stop.wait(0.5):
            pass
        log("stopping: ending running statements")
    finally:
        server.stop()
        remove_listener(listener)
        listener.close()
        for s, handler in previous.items():
            signal.signal(s, handler)
        spark.stop()
    out("stopped")
    return 0
