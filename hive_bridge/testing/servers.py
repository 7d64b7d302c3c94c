"""Local Hive servers from pyspark's own jars: a standalone Hive Metastore and the Spark Thrift Server.

Everything is bound to 127.0.0.1 on a free port, keeps all of its state in one work folder, is waited for on its
TCP port (never a sleep) and stopped by PID (SIGTERM, then SIGKILL) whatever happens::

    with start_metastore(work) as hms, start_thrift_server(work, metastore_uri=hms.uri) as hs2:
        offset = log_offset(hs2.orc_log)
        ...  # run queries through HiveServer2 (pyhive) on hs2.host / hs2.port
        sargs, offset = read_logged_sargs(hs2.orc_log, offset)

Why a Java main of our own for the metastore: Hive 2.3's ``HiveMetaStore.main`` always listens on every
interface. ``LoopbackMetastore`` (below, compiled once with javac against pyspark's jars) serves the very same
handler (``HMSHandler`` wrapped by ``newRetryingHMSHandler``, ``TUGIBasedProcessor``, binary protocol) from a
``TThreadPoolServer`` whose socket is bound to the address it is given.

The Thrift Server logs every ORC file it opens through ``org.apache.orc.impl.ReaderImpl`` at DEBUG into its own
file (``orc_log``), with the SearchArgument pushed to that file::

    Reading ORC rows from file:/…/part-0.orc with {include: […], offset: 0, length: 556,
      sarg: (and leaf-(EQUALS id 5) …), schema: struct<id:bigint,…>, …}

``read_logged_sargs`` extracts those (SearchArgument text, schema) pairs, also Hive 4's
``ORC pushdown predicate: <SARG>`` lines, reading only what was appended since an offset.

Stopping "whatever happens": ``ServerProcess.stop`` (SIGTERM, then SIGKILL) from context managers, an ``atexit``
hook for whatever is still running, and, should this Python process be killed outright, each JVM reads a pipe
from us on stdin and exits when it closes (``LoopbackMetastore`` itself; the Thrift Server through the tiny
``ParentWatchdog`` Java agent).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from hive_bridge.errors import HiveBridgeError
from hive_bridge.workload.logscan import pushdown_predicate, split_reader_line

__all__ = [
    "LOOPBACK",
    "QUICK_START_JVM",
    "LoggedSarg",
    "ServerError",
    "ServerProcess",
    "ThriftServer",
    "compile_metastore_main",
    "find_java",
    "free_port",
    "java_major_version",
    "log_offset",
    "pyspark_home",
    "read_logged_sargs",
    "start_metastore",
    "start_thrift_server",
    "stop_all",
    "wait_for_port",
    "watchdog_agent",
]

LOOPBACK = "127.0.0.1"
ORC_READER_LOGGER = "org.apache.orc.impl.ReaderImpl"
HIVE_ORC_READER_LOGGER = "org.apache.hadoop.hive.ql.io.orc.ReaderImpl"
METASTORE_MAIN = "LoopbackMetastore"
# JVM options for short-lived servers on small machines: C1 only (less JIT work at start-up), one GC thread.
QUICK_START_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

METASTORE_JAVA = r"""
import java.net.InetSocketAddress;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.IHMSHandler;
import org.apache.hadoop.hive.metastore.TUGIBasedProcessor;
import org.apache.hadoop.hive.thrift.TUGIContainingTransport;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;

/** Hive 2.3's metastore handler served on one address only: LoopbackMetastore HOST PORT [key=value ...]. */
public final class LoopbackMetastore {
  public static void main(String[] args) throws Exception {
    String host = args[0];
    int port = Integer.parseInt(args[1]);
    if (Boolean.getBoolean("hive_bridge.exit_with_parent")) {
      // Our stdin is a pipe from the process that started us: when it closes, that process is gone.
      Thread watchdog = new Thread(() -> {
        try {
          while (System.in.read() != -1) { }
        } catch (java.io.IOException e) { }
        System.err.println("LoopbackMetastore: stdin closed (parent gone), exiting");
        System.exit(0);
      }, "parent-watchdog");
      watchdog.setDaemon(true);
      watchdog.start();
    }
    HiveConf conf = new HiveConf(HiveMetaStore.HMSHandler.class);
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      conf.set(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    HiveMetaStore.HMSHandler base = new HiveMetaStore.HMSHandler("loopback metastore", conf, false);
    IHMSHandler handler = HiveMetaStore.newRetryingHMSHandler(base, conf);  // runs init(): schema ready
    TServerSocket serverSocket = new TServerSocket(new InetSocketAddress(host, port));
    TThreadPoolServer.Args serverArgs = new TThreadPoolServer.Args(serverSocket)
        .processor(new TUGIBasedProcessor<IHMSHandler>(handler))
        .transportFactory(new TUGIContainingTransport.Factory())
        .protocolFactory(new TBinaryProtocol.Factory())
        .minWorkerThreads(2)
        .maxWorkerThreads(64);
    TServer server = new TThreadPoolServer(serverArgs);
    Runtime.getRuntime().addShutdownHook(new Thread(server::stop));
    System.out.println("LoopbackMetastore listening on " + host + ":" + port);
    System.out.flush();
    server.serve();
  }
}
"""


WATCHDOG_MAIN = "ParentWatchdog"
WATCHDOG_JAVA = r"""
/** A Java agent: when stdin (a pipe from the process that started this JVM) closes, exit. */
public final class ParentWatchdog {
  public static void premain(String args) {
    Thread watchdog = new Thread(() -> {
      try {
        while (System.in.read() != -1) { }
      } catch (java.io.IOException e) { }
      System.err.println("ParentWatchdog: stdin closed (parent gone), exiting");
      System.exit(0);
    }, "parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }
}
"""


class ServerError(HiveBridgeError):
    """A local server could not be compiled, started or reached; the message ends with its log tail."""


# --------------------------------------------------------------------------------------------- discovery


def find_java() -> tuple[str, str | None] | None:
    """(java, javac or None) from JAVA_HOME, else PATH; None when there is no java at all."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java, javac = Path(home, "bin", "java"), Path(home, "bin", "javac")
        if java.is_file():
            return str(java), str(javac) if javac.is_file() else None
    java_path = shutil.which("java")
    if java_path is None:
        return None
    return java_path, shutil.which("javac")


def java_major_version(java: str) -> int | None:
    """The major version of a ``java`` binary (17 for "17.0.15"), None if it cannot be told."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(1\.)?(\d+)', out)
    return int(m.group(2)) if m else None


def _require_java(javac: bool = False) -> tuple[str, str]:
    found = find_java()
    if found is None:
        raise ServerError("no `java` found (JAVA_HOME or PATH): the local Hive servers need Java 17+")
    java, javac_path = found
    if javac and javac_path is None:
        raise ServerError("no `javac` found next to java or on PATH: the loopback metastore main is compiled "
                          "at start-up and needs a JDK, not a JRE")
    return java, javac_path or ""


def pyspark_home() -> Path:
    """pyspark's install folder (holds bin/spark-submit and jars/ with Hive 2.3, the Thrift Server, ORC, Derby)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# --------------------------------------------------------------------------------------------- processes

_RUNNING: set[ServerProcess] = set()
_RUNNING_LOCK = threading.Lock()


def _tail(path: Path, lines: int = 40, max_bytes: int = 64_000) -> str:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return "\n".join(data.splitlines()[-lines:])


@dataclass(eq=False)
class ServerProcess:
    """One server JVM we started: its PID, address and log; a context manager that stops it on exit."""

    name: str
    process: subprocess.Popen[bytes]
    host: str
    port: int
    log_path: Path
    work_dir: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def uri(self) -> str:
        """``thrift://host:port`` (what a metastore client or ``hive.metastore.uris`` takes)."""
        return f"thrift://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's own log (stdout and stderr)."""
        return _tail(self.log_path, lines)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM, wait up to ``timeout`` s, then SIGKILL; returns the exit code. Safe to call twice."""
        proc = self.process
        try:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(proc.pid, signal.SIGKILL)
                    proc.wait(10)
        finally:
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            with _RUNNING_LOCK:
                _RUNNING.discard(self)
        return proc.returncode

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


@dataclass(eq=False)
class ThriftServer(ServerProcess):
    """The Spark Thrift Server (HiveServer2 protocol); ``orc_log`` receives the ORC reader's DEBUG lines."""

    orc_log: Path = field(default=Path())
    metastore_uri: str | None = None

    def __enter__(self) -> ThriftServer:
        return self


_S = TypeVar("_S", bound=ServerProcess)


def stop_all() -> None:
    """Stop every server this process started and has not stopped yet (registered with atexit)."""
    with _RUNNING_LOCK:
        servers = list(_RUNNING)
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop(timeout=5.0)


atexit.register(stop_all)


def _on_free_port(start: Callable[[int], _S], host: str, port: int | None, attempts: int = 3) -> _S:
    """``start(port)``; with no port given, on a free one, trying another if it was taken meanwhile."""
    if port is not None:
        return start(port)
    for attempt in range(attempts):
        try:
            return start(free_port(host))
        except ServerError as exc:
            if "Address already in use" not in str(exc) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def wait_for_port(server: ServerProcess, timeout: float) -> None:
    """Poll the server's TCP port until it accepts a connection; raise ServerError (with log tail) on exit/timeout."""
    deadline = time.monotonic() + timeout
    while True:
        if _port_open(server.host, server.port):
            return
        code = server.process.poll()
        if code is not None:
            raise ServerError(f"{server.name} exited with code {code} before {server.address} opened; "
                              f"log {server.log_path}, last lines:\n{server.log_tail()}")
        if time.monotonic() >= deadline:
            raise ServerError(f"{server.name} did not open {server.address} within {timeout:.0f} s; "
                              f"log {server.log_path}, last lines:\n{server.log_tail()}")
        time.sleep(0.2)


def _launch(name: str, argv: Sequence[str], *, host: str, port: int, work_dir: Path, log_name: str,
            env: Mapping[str, str], timeout: float, cls: type[ServerProcess] = ServerProcess,
            stdin_pipe: bool = False, **extra: object) -> ServerProcess:
    log_path = work_dir / "logs" / log_name
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        log.write(f"=== {time.strftime('%Y-%m-%d %H:%M:%S')} starting: {' '.join(argv)}\n".encode())
        log.flush()
        # A session of its own: Ctrl-C in the terminal reaches pytest, not the JVM; we stop it by PID.
        # A stdin pipe lets a server notice that we died without stopping it (see LoopbackMetastore).
        process = subprocess.Popen(list(argv), stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT,
                                   cwd=work_dir, env=dict(env), start_new_session=True)
    server = cls(name=name, process=process, host=host, port=port, log_path=log_path, work_dir=work_dir,
                 **extra)
    with _RUNNING_LOCK:
        _RUNNING.add(server)
    try:
        wait_for_port(server, timeout)
    except BaseException:
        server.stop()
        raise
    return server


def _base_env(work_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HIVE_CONF_DIR", "HADOOP_CONF_DIR", "SPARK_CONF_DIR")}
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    env["SPARK_HOME"] = str(pyspark_home())
    env["SPARK_CONF_DIR"] = str(work_dir / "conf")  # an empty conf folder: nothing from the machine leaks in
    env["TZ"] = "UTC"
    return env


def _jvm_flags(work_dir: Path) -> list[str]:
    return [f"-Dderby.system.home={work_dir}", f"-Djava.io.tmpdir={work_dir / 'tmp'}", "-Duser.timezone=UTC"]


def _prepare(work_dir: Path) -> Path:
    work_dir = Path(work_dir).resolve()
    for sub in ("tmp", "conf", "logs", "warehouse"):
        (work_dir / sub).mkdir(parents=True, exist_ok=True)
    return work_dir


def write_log4j2(path: Path, orc_log: Path | None = None) -> Path:
    """A log4j2 properties file: INFO to the console; the ORC readers at DEBUG into ``orc_log`` (message only)."""
    lines = [
        "status = error",
        "appender.console.type = Console",
        "appender.console.name = console",
        "appender.console.target = SYSTEM_ERR",
        "appender.console.layout.type = PatternLayout",
        "appender.console.layout.pattern = %d{HH:mm:ss.SSS} %p %c{1}: %m%n%ex",
        "rootLogger.level = info",
        "rootLogger.appenderRef.stdout.ref = console",
        # The noisiest loggers stay at WARN so the server log tail stays readable.
        "logger.jetty.name = org.sparkproject.jetty",
        "logger.jetty.level = warn",
        "logger.datanucleus.name = DataNucleus",
        "logger.datanucleus.level = warn",
        "logger.hadoop.name = org.apache.hadoop.util.NativeCodeLoader",
        "logger.hadoop.level = error",
    ]
    if orc_log is not None:
        lines += [
            "appender.orc.type = File",
            "appender.orc.name = orc",
            f"appender.orc.fileName = {orc_log}",
            "appender.orc.append = true",
            "appender.orc.immediateFlush = true",
            "appender.orc.layout.type = PatternLayout",
            "appender.orc.layout.pattern = %m%n",
            f"logger.orc.name = {ORC_READER_LOGGER}",
            "logger.orc.level = debug",
            "logger.orc.additivity = false",
            "logger.orc.appenderRef.orc.ref = orc",
            f"logger.hiveorc.name = {HIVE_ORC_READER_LOGGER}",
            "logger.hiveorc.level = info",
            "logger.hiveorc.additivity = false",
            "logger.hiveorc.appenderRef.orc.ref = orc",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- metastore


def _compile(main: str, source: str, cache_dir: Path, classpath: str) -> Path:
    """javac ``source`` (class ``main``) into a folder under ``cache_dir`` keyed by source and classpath."""
    _, javac = _require_java(javac=True)
    key = hashlib.sha256((source + classpath).encode()).hexdigest()[:16]
    out = Path(cache_dir).resolve() / f"{main}-{key}"
    if (out / f"{main}.class").is_file():
        return out
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / f"{main}.java").write_text(source, encoding="utf-8")
    build = out.with_name(out.name + f".tmp{os.getpid()}")
    build.mkdir(parents=True, exist_ok=True)
    argv = [javac, "-nowarn", "-d", str(build), *(["-cp", classpath] if classpath else []), str(src / f"{main}.java")]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(build, ignore_errors=True)
        raise ServerError(f"javac failed on {main}.java (classpath {classpath or '-'}):\n{done.stderr[-4000:]}")
    for cls in build.glob("*.class"):
        os.replace(cls, out / cls.name)
    shutil.rmtree(build, ignore_errors=True)
    return out


def compile_metastore_main(cache_dir: Path, jars: Path | None = None) -> Path:
    """Compile ``LoopbackMetastore`` with javac against pyspark's jars into a folder under ``cache_dir``.

    The folder is keyed by the source and the jar folder, so a second call (or a second run with the same cache)
    reuses it. Returns the folder that holds ``LoopbackMetastore.class``.
    """
    jars = jars or pyspark_home() / "jars"
    return _compile(METASTORE_MAIN, METASTORE_JAVA, cache_dir, f"{jars}/*")


def watchdog_agent(cache_dir: Path) -> Path:
    """A Java agent jar (``-javaagent:<jar>``) that exits the JVM when its stdin closes, i.e. when we die."""
    classes = _compile(WATCHDOG_MAIN, WATCHDOG_JAVA, cache_dir, "")
    jar = classes / "parent-watchdog.jar"
    if not jar.is_file():
        tmp = jar.with_suffix(f".tmp{os.getpid()}")
        with zipfile.ZipFile(tmp, "w") as zf:
            zf.writestr("META-INF/MANIFEST.MF", f"Manifest-Version: 1.0\nPremain-Class: {WATCHDOG_MAIN}\n\n")
            for cls in sorted(classes.glob("*.class")):
                zf.write(cls, cls.name)
        os.replace(tmp, jar)
    return jar


def start_metastore(work_dir: Path, *, port: int | None = None, host: str = LOOPBACK, timeout: float = 120.0,
                    cache_dir: Path | None = None, heap: str = "512m") -> ServerProcess:
    """Start a standalone Hive 2.3 Metastore (Derby under ``work_dir``) on ``host:port`` (free port by default).

    Returns once its port accepts connections (the schema is created before the socket is bound).
    ``.uri`` of the result is ``thrift://host:port``.
    """
    java, _ = _require_java()
    work_dir = _prepare(work_dir)
    classes = compile_metastore_main(cache_dir or work_dir / "classes")
    jars = pyspark_home() / "jars"
    log4j = write_log4j2(work_dir / "conf" / "log4j2-metastore.properties")

    def start(port: int) -> ServerProcess:
        argv = [
            java, f"-Xmx{heap}", *QUICK_START_JVM, *_jvm_flags(work_dir), "-Dhive_bridge.exit_with_parent=true",
            f"-Dlog4j.configurationFile=file:{log4j}", f"-Dlog4j2.configurationFile=file:{log4j}",
            "-cp", f"{classes}{os.pathsep}{jars}/*", METASTORE_MAIN, host, str(port),
            f"javax.jdo.option.ConnectionURL=jdbc:derby:;databaseName={work_dir / 'metastore_db'};create=true",
            "javax.jdo.option.ConnectionDriverName=org.apache.derby.jdbc.EmbeddedDriver",
            "datanucleus.schema.autoCreateAll=true",
            "hive.metastore.schema.verification=false",
            f"hive.metastore.warehouse.dir={(work_dir / 'warehouse').as_uri()}",
            "hive.metastore.uris=",
        ]
        return _launch("Hive Metastore", argv, host=host, port=port, work_dir=work_dir, log_name="metastore.log",
                       env=_base_env(work_dir), timeout=timeout, stdin_pipe=True)

    return _on_free_port(start, host, port)


# --------------------------------------------------------------------------------------------- thrift server


def start_thrift_server(work_dir: Path, *, metastore_uri: str | None = None, port: int | None = None,
                        host: str = LOOPBACK, timeout: float = 180.0, driver_memory: str = "1g",
                        cores: int = 2, conf: Mapping[str, str] | None = None,
                        jvm_options: Sequence[str] = ()) -> ThriftServer:
    """Start Spark's Thrift Server (HiveServer2 protocol, no authentication) on ``host:port``.

    With ``metastore_uri`` it shares that metastore; without, it keeps an embedded Derby metastore in ``work_dir``.
    The ORC reader logs every file it opens, with the pushed SearchArgument, into ``<work_dir>/logs/orc-reader.log``
    (``.orc_log``). ``conf`` adds or overrides ``--conf`` settings; ``jvm_options`` go to the driver JVM
    (``QUICK_START_JVM`` trades peak speed for a start-up that burns less CPU, right for tests).
    """
    _require_java()
    work_dir = _prepare(work_dir)
    home = pyspark_home()
    orc_log = work_dir / "logs" / "orc-reader.log"
    orc_log.touch()
    log4j = write_log4j2(work_dir / "conf" / "log4j2-thriftserver.properties", orc_log=orc_log)
    try:  # the JVM exits by itself if we die without stopping it (needs javac; optional)
        agent = [f"-javaagent:{watchdog_agent(work_dir / 'classes')}"]
    except ServerError:
        agent = []
    java_opts = " ".join([*jvm_options, *_jvm_flags(work_dir), *agent,
                          f"-Dlog4j.configurationFile=file:{log4j}",
                          f"-Dlog4j2.configurationFile=file:{log4j}"])
    settings: dict[str, str] = {
        "spark.ui.enabled": "false",
        "spark.driver.bindAddress": host,
        "spark.driver.host": host,
        "spark.sql.warehouse.dir": (work_dir / "warehouse").as_uri(),
        "spark.local.dir": str(work_dir / "tmp"),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "2",
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={work_dir / 'thriftserver_metastore_db'};create=true",
    }
    if metastore_uri:
        settings["spark.hadoop.hive.metastore.uris"] = metastore_uri
    settings.update(conf or {})
    argv = [str(home / "bin" / "spark-submit"), "--master", f"local[{cores}]", "--driver-memory", driver_memory,
            "--driver-java-options", java_opts, "--name", "hive-bridge-thriftserver",
            "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"]
    for key, value in settings.items():
        argv += ["--conf", f"{key}={value}"]
    argv.append("spark-internal")
    hiveconf = {
        "hive.server2.thrift.bind.host": host,
        "hive.server2.authentication": "NONE",
        "hive.server2.transport.mode": "binary",
        "hive.server2.logging.operation.log.location": str(work_dir / "oplogs"),
        "hive.exec.scratchdir": str(work_dir / "scratch"),
        "hive.exec.local.scratchdir": str(work_dir / "local-scratch"),
        "hive.downloaded.resources.dir": str(work_dir / "resources"),
    }
    for key, value in hiveconf.items():
        argv += ["--hiveconf", f"{key}={value}"]

    def start(port: int) -> ThriftServer:
        server = _launch("Spark Thrift Server", [*argv, "--hiveconf", f"hive.server2.thrift.port={port}"],
                         host=host, port=port, work_dir=work_dir, log_name="thriftserver.log",
                         env=_base_env(work_dir), timeout=timeout, cls=ThriftServer, orc_log=orc_log,
                         metastore_uri=metastore_uri, stdin_pipe=True)
        assert isinstance(server, ThriftServer)
        return server

    return _on_free_port(start, host, port)


# --------------------------------------------------------------------------------------------- ORC log


@dataclass(frozen=True)
class LoggedSarg:
    """One SearchArgument a reader logged: its text, the file schema (``struct<…>``) if logged, the file read."""

    sarg: str
    schema: str | None
    path: str | None


_RECORD_START = re.compile(r"^(?=.*?(?:Reading ORC rows from |ORC pushdown predicate: ))", re.MULTILINE)


def log_offset(path: Path) -> int:
    """The current size of a log file (0 if it does not exist): pass it to ``read_logged_sargs`` later."""
    try:
        return Path(path).stat().st_size
    except FileNotFoundError:
        return 0


def parse_orc_record(record: str) -> LoggedSarg | None:
    """The SearchArgument in one logged record (a Spark/ORC ``Reading ORC rows`` line or a Hive 4 one)."""
    reader = split_reader_line(record)
    if reader is not None:
        path, sarg_text, schema = reader
        return LoggedSarg(sarg_text, schema, path)
    # Hive's own log has other lines after this one: the predicate is the rest of its line.
    predicate = pushdown_predicate(record.split("\n", 1)[0])
    return None if predicate is None else LoggedSarg(predicate, None, None)


def read_logged_sargs(path: Path, offset: int = 0) -> tuple[list[LoggedSarg], int]:
    """Every SearchArgument logged in ``path`` after byte ``offset``, and the offset to continue from.

    Only complete records are read (a record still being written is left for the next call). Records that carry
    no SearchArgument (a scan without a filter) are skipped.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1  # complete lines only
    text = data[:end].decode("utf-8", "replace")
    starts = [m.start() for m in _RECORD_START.finditer(text)]
    found: list[LoggedSarg] = []
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(text)
        record = text[start:stop]
        if record.endswith("\n"):
            record = record[:-1]
        logged = parse_orc_record(record)
        if logged is not None:
            found.append(logged)
    return found, offset + end
