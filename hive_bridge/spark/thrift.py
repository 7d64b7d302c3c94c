"""Spark's Thrift Server (the HiveServer2 protocol: JDBC/ODBC clients, BI tools, beeline) started inside this
driver, serving its catalog: tables created ``USING hudi-hive`` are read through the file index, so every SQL
statement a client sends prunes per scan. It must run in the driver that registered the planner (the planner is
this Python process), hence ``HiveThriftServer2.startWithContext`` rather than a separate server process."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hive_bridge.spark.file_index import attach

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def start_thrift_server(spark: SparkSession, host: str = "127.0.0.1", port: int = 10000) -> Any:
    """Start the Thrift Server on ``host:port`` in ``spark``'s driver (after :func:`attach`); returns the JVM
    ``HiveThriftServer2`` (call ``.stop()`` on it to stop)."""
    attach(spark)
    jvm: Any = spark._jvm
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in (("hive.server2.thrift.port", str(port)), ("hive.server2.thrift.bind.host", host),
                       ("hive.server2.transport.mode", "binary")):
        hadoop.set(key, value)
        spark.conf.set(key, value)
    return jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
        spark._jsparkSession.sqlContext())
