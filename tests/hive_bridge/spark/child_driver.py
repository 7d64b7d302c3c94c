"""What the child drivers of the Spark tests (``cluster_driver``, ``s3a_driver``) share: rows as JSON strings, a
call's error as text, Spark's log at INFO."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def json_rows(df: Any) -> Any:
    """One ``to_json(struct(...))`` string a row (the columns by name, Hudi's meta columns left out)."""
    from pyspark.sql import functions as F

    cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))
    return df.select(F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols])))


def sorted_rows(df: Any) -> list[str]:
    """The rows of ``df`` as sorted JSON strings (:func:`json_rows`), sorted."""
    return sorted(r[0] for r in json_rows(df).collect())


def error_of(fn: Any) -> str:
    """The error ``fn()`` raises as ``Type: message``; empty when it raises none."""
    try:
        fn()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return ""


#: log4j2's configuration of a driver whose log is searched: everything from INFO on to standard error, in
#: Spark's pattern (``setLogLevel`` lifts the root level, but the console filter pyspark's driver gets from Spark's
#: defaults still holds INFO back)
INFO_LOG = """rootLogger.level = info
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def info_log(spark: Any, work: str) -> None:
    """Spark's log at INFO on the driver's standard error from now on (log4j2 reconfigured with
    :data:`INFO_LOG`, written in ``work``)."""
    path = Path(work) / "log4j2-info.properties"
    path.write_text(INFO_LOG)
    jvm = spark.sparkContext._jvm
    jvm.org.apache.logging.log4j.core.config.Configurator.reconfigure(jvm.java.net.URI(path.as_uri()))
