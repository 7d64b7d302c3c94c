"""Spark's Thrift Server (the HiveServer2 protocol: JDBC/ODBC clients, BI tools, beeline) started inside this
driver, serving its catalog: tables created ``USING hudi-hive`` are read through the file index, so every SQL
statement a client sends prunes per scan. It must run in the driver that registered the planner (the planner is
this Python process), hence ``HiveThriftServer2.startWithContext`` rather than a separate server process.

:func:`start_endpoint` is the one way both ``hive-bridge serve`` and :func:`start_thrift_server` start it: the
product's jar added to the sessions' jar loader, the ``hive.server2.*`` settings, and the product's guard
(``ThriftGuard``, binary transport): a client that drops its connection mid-statement has its statements cancelled
within ``watch_seconds`` (Linux), and clients get an error's message and SQLSTATE without the Java stack trace
(which stays in the server's log)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hive_bridge.spark.file_index import attach
from hive_bridge.spark.jar import JVM_PACKAGE, jar_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: how often the guard looks for client connections that are gone (seconds)
WATCH_SECONDS = 1.0


def sql_string(text: str) -> str:
    """``text`` as a Spark SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def add_product_jar(spark: SparkSession) -> str:
    """The product's jar in the class loader Spark's Thrift Server runs statements with (its sessions' shared jar
    loader), so that ``hudi-hive`` is the JVM file index there too, never the Python data source; once per
    session. Returns the jar's path."""
    jar = str(jar_path())
    added = [str(j) for j in spark.sparkContext._jsc.jars()]
    if not any(j.endswith("/" + jar.rsplit("/", 1)[-1]) for j in added):
        spark.sql(f"ADD JAR {sql_string(jar)}").collect()
    return jar


def start_endpoint(spark: SparkSession, settings: Mapping[str, str], watch_seconds: float = WATCH_SECONDS) -> Any:
    """Start the Thrift Server with the ``hive.server2.*`` ``settings`` in ``spark``'s driver; returns the JVM
    ``HiveThriftServer2`` (call ``.stop()`` on it to stop)."""
    attach(spark)
    add_product_jar(spark)
    jvm: Any = spark._jvm
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in settings.items():
        hadoop.set(key, value)
        spark.conf.set(key, value)
    server = jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
        spark._jsparkSession.sqlContext())
    getattr(jvm, JVM_PACKAGE).ThriftGuard.install(server, int(watch_seconds * 1000))
    return server


def start_thrift_server(spark: SparkSession, host: str = "127.0.0.1", port: int = 10000) -> Any:
    """Start the Thrift Server on ``host:port`` (binary transport, no authentication) in ``spark``'s driver; see
    :func:`start_endpoint`."""
    return start_endpoint(spark, {"hive.server2.thrift.port": str(port), "hive.server2.thrift.bind.host": host,
                                  "hive.server2.transport.mode": "binary"})
