"""How the ``hive-bridge`` command starts Spark: quiet unless ``--verbose``.

The JVM PySpark starts prints its start-up chatter on standard error before ``setLogLevel`` can act: log4j2's
default profile (``Using Spark's default log4j profile``, ``WARN Utils: Your hostname …``, ``WARN NativeCodeLoader
…``, ``Setting default log level …``) and the JVM's own ``WARNING: Using incubator modules: jdk.incubator.vector``
(Spark's launcher always adds that module). A quiet start gives the driver JVM the ERROR-level profile
``hive_bridge/data/log4j2-quiet.properties`` through ``SPARK_SUBMIT_OPTS`` (the launcher puts it before
``spark.driver.extraJavaOptions``, so a log4j2 setting of the user's own still wins), and passes the JVM's standard
error through a filter that drops only that incubator notice. Errors are still printed.

Nothing changes when a JVM is already running in this process (a notebook, the test suite): ``session()`` then
returns the existing session.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUIET_LOG4J2 = "log4j2-quiet.properties"
#: settings read when the driver's JVM is launched (too late once it runs): handed to spark-submit
LAUNCH_PREFIX = "spark.driver."
# lines the JVM itself prints (not log4j) that a quiet start drops
JVM_NOTICES = (b"WARNING: Using incubator modules:",)


def start_session(app: str, *, verbose: bool = False, master: str = "local[2]", **conf: str) -> SparkSession:
    """``hive_bridge.spark.session(app, master, **conf)``, started quietly unless ``verbose``; verbose keeps
    Spark's own WARN level after the start too."""
    from hive_bridge import spark as hb_spark

    if verbose:
        spark = hb_spark.session(app, master, **conf)
        spark.sparkContext.setLogLevel("WARN")
        return spark
    with quiet_jvm_options():
        _launch_filtered_gateway({k: v for k, v in conf.items() if k.startswith(LAUNCH_PREFIX)})
        return hb_spark.session(app, master, **conf)


@contextlib.contextmanager
def quiet_jvm_options() -> Iterator[str]:
    """``SPARK_SUBMIT_OPTS`` with ``-Dlog4j2.configurationFile=<the quiet profile>`` while a JVM is launched
    (restored afterwards); yields the option."""
    with resources.as_file(resources.files("hive_bridge").joinpath("data", QUIET_LOG4J2)) as path:
        option = f"-Dlog4j2.configurationFile={path.resolve().as_uri()}"
        old = os.environ.get("SPARK_SUBMIT_OPTS")
        os.environ["SPARK_SUBMIT_OPTS"] = f"{old} {option}" if old else option
        try:
            yield option
        finally:
            if old is None:
                os.environ.pop("SPARK_SUBMIT_OPTS", None)
            else:
                os.environ["SPARK_SUBMIT_OPTS"] = old


def _launch_filtered_gateway(launch_conf: dict[str, str] | None = None) -> None:
    """Launch PySpark's JVM gateway with its standard error read through :func:`_forward` (pyspark's own
    ``launch_gateway(popen_kwargs=…)`` hook), unless a JVM is already there; ``session()`` then uses it.
    ``launch_conf``: the settings the JVM's launch itself reads (``spark.driver.extraClassPath``, memory, Java
    options), handed to spark-submit as PySpark does."""
    try:
        from pyspark import SparkContext
        from pyspark.java_gateway import launch_gateway
    except ImportError:  # pragma: no cover - pyspark is a dependency
        return
    if getattr(SparkContext, "_gateway", None) is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    ensure = getattr(SparkContext, "_ensure_initialized", None)
    if ensure is None:  # pragma: no cover - a PySpark without the hook: session() starts the JVM unfiltered
        return
    from hive_bridge.spark import use_this_interpreter

    use_this_interpreter()  # before the JVM copies the environment
    read_fd, write_fd = os.pipe()
    forwarder = threading.Thread(target=_forward, args=(read_fd,), name="jvm-stderr", daemon=True)
    forwarder.start()
    try:
        from pyspark import SparkConf

        launch = SparkConf(loadDefaults=False).setAll(list((launch_conf or {}).items())) if launch_conf else None
        gateway: Any = launch_gateway(conf=launch, popen_kwargs={"stderr": write_fd})  # type: ignore[no-untyped-call]
    except BaseException:
        os.close(write_fd)
        forwarder.join(timeout=5)  # the launcher's own error text (no Java, …) is printed before we fail
        raise
    os.close(write_fd)
    ensure(gateway=gateway)


def _forward(read_fd: int) -> None:
    """Copy the JVM's standard error to ours, line by line, without :data:`JVM_NOTICES`."""
    with os.fdopen(read_fd, "rb") as pipe:
        for line in pipe:
            if line.startswith(JVM_NOTICES):
                continue
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(2, view):]
            except OSError:  # our standard error is gone: keep draining so the JVM never blocks
                pass
