"""Spark sessions for hive-bridge: the session builder, the guard against Spark's NaN-losing optimizations,
the check that Python workers run the project's interpreter, and the error every Spark read raises."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hive_bridge.errors import HiveBridgeError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

class SparkReadError(HiveBridgeError):
    """A read that cannot be done correctly (e.g. merge-on-read logs that cannot be merged)."""



# Two of Spark's own optimizations lose rows that Spark SQL says match, because they judge min/max statistics
# that ignore NaN (as the parquet format says they must) as if NaN were not there:
# - parquet filter pushdown: with it on, Spark 4.3 returned no row for `price = 'NaN'` (30 rows hold NaN), 60 of
#   63 rows for `price = 0.0` (three hold -0.0) and 961 of 963 for `price > 100` (NaN is above every number);
# - the in-memory columnar cache's batch pruning: a .cache()d DataFrame returned no row for `v = double('NaN')`.
# read_hudi turns both off in its session; register only the second (a hudi-hive relation's
# SoundParquetFileFormat keeps the first sound per scan); session() starts with both off
# (benchmarks/spark_pushdown_fact.py measures the first; tests/hive_bridge/spark/test_spark_usage.py checks reads, cached ones included, against Spark with them off).
PARQUET_PUSHDOWN = "spark.sql.parquet.filterPushdown"
CACHE_PRUNING = "spark.sql.inMemoryColumnarStorage.partitionPruning"
_LOSSY = (PARQUET_PUSHDOWN, CACHE_PRUNING)


def guard_parquet_pushdown(spark: SparkSession, keys: tuple[str, ...] = _LOSSY) -> bool:
    """Turn off, in ``spark``, Spark's parquet filter pushdown and its cached-batch pruning (both drop NaN and
    -0.0 rows a filter matches), or only the settings ``keys`` names. Returns True when one was on (and warns).
    ``register`` turns off only the cached-batch pruning: a ``hudi-hive`` relation's own file format keeps
    parquet pushdown sound per scan, but a cached batch's statistics belong to the cache, not to a relation."""
    changed = [key for key in keys if (spark.conf.get(key, "true") or "true").strip().lower() != "false"]
    if not changed:
        return False
    for key in changed:
        spark.conf.set(key, "false")
    import warnings

    warnings.warn(f"hive-bridge set {', '.join(k + '=false' for k in changed)} in this SparkSession: Spark's "
                  "statistics-based skipping drops rows holding NaN or -0.0 that a filter matches",
                  RuntimeWarning, stacklevel=3)
    return True


def use_this_interpreter() -> None:
    """Python workers run this interpreter (unless PYSPARK_PYTHON says otherwise): set before the JVM starts,
    which copies the environment."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def session(app: str = "hive-bridge", master: str = "local[2]", **conf: str) -> SparkSession:
    """A SparkSession configured for hive-bridge (workers use this interpreter; UTC; Python filter pushdown)."""
    use_this_interpreter()
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.python.filterPushdown.enabled", "true")
               .config(PARQUET_PUSHDOWN, "false")
               .config(CACHE_PRUNING, "false"))
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_schema(schema: pa.Schema) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    # a timestamp without a time zone is TIMESTAMP_NTZ (pyspark 4.2+'s default; 4.0 and 4.1 default to TIMESTAMP)
    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


_CHECKED: set[str] = set()
_PROBE = """
def probe(_):
    import sys
    out = [sys.executable]
    for name in ("pyarrow", "hive_bridge"):
        try:
            __import__(name)
            out.append("")
        except Exception as exc:
            out.append(type(exc).__name__ + ": " + str(exc))
    return out
"""


def check_workers(spark: SparkSession) -> None:
    """Run one tiny task and check that Spark's Python workers import pyarrow and hive_bridge; if they do not
    (the workers run another interpreter than the project's), say what to set instead of failing later with
    ``ModuleNotFoundError`` deep inside a Java stack trace. Once per Spark application."""
    app = spark.sparkContext.applicationId
    if app in _CHECKED:
        return
    namespace: dict[str, Any] = {"__name__": "hive_bridge_worker_probe"}  # pickled by value, not by module
    exec(compile(_PROBE, "<hive-bridge worker probe>", "exec"), namespace)  # fixed source above
    advice = (f"set PYSPARK_PYTHON={sys.executable} before the session starts (or the Spark conf "
              f"spark.pyspark.python), so the workers run the interpreter hive-bridge is installed in")
    try:
        executable, *problems = spark.sparkContext.parallelize([0], 1).map(namespace["probe"]).collect()[0]
    except Exception as exc:  # a worker that cannot start at all
        first = next((line for line in str(exc).splitlines() if "Error" in line), str(exc).splitlines()[0])
        raise SparkReadError(f"Spark's Python workers failed to start: {first.strip()[:300]}; {advice}") from None
    missing = [p for p in problems if p]
    if missing:
        raise SparkReadError(f"Spark's Python workers run {executable}, which cannot import what hive-bridge "
                             f"needs ({'; '.join(missing)}); {advice}")
    _CHECKED.add(app)


