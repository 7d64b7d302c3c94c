"""Hive-on-Spark reads of Hudi tables, pruned by column statistics.

This package holds everything that touches Spark: :mod:`~hive_bridge.spark.sessions` (sessions, the guard
against Spark's NaN-losing optimizations, the worker check), :mod:`~hive_bridge.spark.reads` (``read_hudi``: the
input format's surviving files read by Spark's parquet reader, merge-on-read slices by hudi-rs),
:mod:`~hive_bridge.spark.catalog` (``read_table``: tables by name, from Spark's catalog or a Hive metastore),
:mod:`~hive_bridge.spark.file_index` with :mod:`~hive_bridge.spark.jar` and
:mod:`~hive_bridge.spark.merged_cache` (``hudi-hive`` as Spark's own parquet file source whose JVM file index
asks the Python planner per scan: DataFrames, SQL, views, joins prune), :mod:`~hive_bridge.spark.datasource`
(the Python data source, used on Spark Connect and for object storage), :mod:`~hive_bridge.spark.filters`
(Spark filters to a SearchArgument), :mod:`~hive_bridge.spark.reports` (scan reports) and
:mod:`~hive_bridge.spark.thrift` (Spark's Thrift Server inside this driver, for JDBC/ODBC clients). :func:`register` is all a user calls: on classic PySpark ``spark.read.format("hudi-hive")``, ``CREATE
TABLE ... USING hudi-hive`` and ``read_table`` then prune per scan; on Spark Connect the Python data source
serves ``hudi-hive`` (sound, unpruned). See ``docs/spark.md``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from hive_bridge.hive.handler import HoodieParquetInputFormat
from hive_bridge.spark.catalog import read_table
from hive_bridge.spark.datasource import (
    PYTHON_SOURCE,
    HudiHiveDataSource,
    HudiHivePythonDataSource,
    HudiHiveReader,
    register_python_source,
)
from hive_bridge.spark.file_index import ROUTE_INDEX, attach, indexed_read, load, pin_of, planner
from hive_bridge.spark.filters import spark_filters_to_sarg
from hive_bridge.spark.jar import is_classic
from hive_bridge.spark.merge import hudi_reader, hudi_rs_storage_options, merge_with_hudi
from hive_bridge.spark.options import QUERY_TYPE_OPTION, ROUTE_SPARK, ROUTE_WORKERS
from hive_bridge.spark.reads import (
    HiveRead,
    filter_of,
    list_files,
    read_hudi,
    read_slices,
    read_slices_in_workers,
)
from hive_bridge.spark.reports import last_scan_report
from hive_bridge.spark.sessions import (
    CACHE_PRUNING,
    PARQUET_PUSHDOWN,
    SparkReadError,
    check_workers,
    guard_parquet_pushdown,
    session,
    spark_schema,
    use_this_interpreter,
)
from hive_bridge.spark.thrift import start_thrift_server

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: why a Spark Connect session reads ``hudi-hive`` unpruned
CONNECT_WHY_NOT = ("Spark Connect has no callback path from the server's JVM to this Python process, so the "
                   "hudi-hive file index cannot ask the planner: hudi-hive is the Python data source here (every "
                   "latest file read, Spark applies the filters); use read_hudi() for pruned reads")


def register(spark: SparkSession) -> None:
    """Make ``hudi-hive`` readable in ``spark``. Classic PySpark: the JVM file index (every scan pruned by its own
    filters), the Python data source also registered as ``hudi-hive-python``. Spark Connect: the Python data
    source as ``hudi-hive`` (a ``RuntimeWarning`` says why it does not prune)."""
    classic = is_classic(spark)
    register_python_source(spark, check=classic)
    if classic:
        attach(spark)
    else:
        warnings.warn(CONNECT_WHY_NOT, RuntimeWarning, stacklevel=2)


__all__ = [
    "CACHE_PRUNING",
    "CONNECT_WHY_NOT",
    "PARQUET_PUSHDOWN",
    "PYTHON_SOURCE",
    "QUERY_TYPE_OPTION",
    "ROUTE_INDEX",
    "ROUTE_SPARK",
    "ROUTE_WORKERS",
    "HiveRead",
    "HoodieParquetInputFormat",
    "HudiHiveDataSource",
    "HudiHivePythonDataSource",
    "HudiHiveReader",
    "SparkReadError",
    "attach",
    "check_workers",
    "filter_of",
    "guard_parquet_pushdown",
    "hudi_reader",
    "hudi_rs_storage_options",
    "indexed_read",
    "is_classic",
    "last_scan_report",
    "list_files",
    "load",
    "merge_with_hudi",
    "pin_of",
    "planner",
    "read_hudi",
    "read_slices",
    "read_slices_in_workers",
    "read_table",
    "register",
    "register_python_source",
    "session",
    "spark_filters_to_sarg",
    "spark_schema",
    "start_thrift_server",
    "use_this_interpreter",
]
