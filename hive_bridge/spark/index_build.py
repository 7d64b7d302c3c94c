"""The column-statistics index built by Spark: the footers and log files the index lacks are read by Spark
executors in parallel, and the rows persisted exactly as the local build persists them.

    from hive_bridge.spark import session
    from hive_bridge.spark.index_build import SparkStatsReader, build_index

    index = build_index("/data/trips", session())                 # build or refresh, like `hive-bridge index --spark`
    index = ColumnStatsIndex(table, reader=SparkStatsReader(spark))  # any index: files it lacks read by Spark

How: the driver lists the table and finds the files the index lacks, as always; `SparkStatsReader` hands their
(full path, listed size) to Spark in consecutive partitions (``mapPartitionsWithIndex``), and each task reads its
files with the functions the local build uses (`hive_bridge.stats.reader.footer_rows` / `log_rows`:
`read_footer_stats` / `read_log_stats`, the size check, `footer_rows_to_table` / `log_rows_to_table`) and sends
back Arrow IPC bytes of its rows and each file's error text. The driver joins the partitions in order, puts the
files' keys back and stores the rows through the index's own path: a file that cannot be read is unknown, kept in
memory, counted and named in ``index.errors`` with the same text as a local build, never dropped.

On a cluster every executor must read the files at the paths the driver lists (a shared file system or object
storage both sides reach) and have hive-bridge installed in its Python.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hive_bridge import config
from hive_bridge.errors import HiveBridgeError
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.reader import (
    FileToRead,
    LogLeaf,
    ReadRows,
    concat_footer_rows,
    footer_rows,
    log_rows,
    with_keys,
)
from hive_bridge.table.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from hive_bridge.formats.parquet_footer import StatsLeaf

#: files per Spark task when not said otherwise: big enough that a task's start-up is small against its reads
FILES_PER_TASK = 2000

#: what one task sends back: (partition index, Arrow IPC stream of its rows, each file's error or None)
_TaskResult = tuple[int, bytes, list[str | None]]


class SparkIndexError(HiveBridgeError):
    """The Spark job that reads statistics failed (a worker without hive-bridge, a lost executor, ...)."""


class SparkStatsReader:
    """A `hive_bridge.stats.reader.StatsReader` whose reads run on Spark executors.

    ``spark``: a SparkSession, or a function that returns one (called on the first read, so an index with
    nothing to read never starts Spark). ``files_per_task``: files per Spark partition (at least as many
    partitions as the context's default parallelism when there are enough files). ``threads_per_task``:
    threads each task reads its files on (1: Spark's tasks are the parallelism; more can help when a read
    waits on object storage)."""

    def __init__(self, spark: SparkSession | Callable[[], SparkSession], *, files_per_task: int = FILES_PER_TASK,
                 threads_per_task: int = 1) -> None:
        if files_per_task < 1 or threads_per_task < 1:
            raise SparkIndexError(f"files_per_task and threads_per_task must be at least 1, not {files_per_task} "
                                  f"and {threads_per_task}")
        self._spark = spark
        self.files_per_task = files_per_task
        self.threads_per_task = threads_per_task
        #: Spark jobs run and partitions (tasks) read by this reader
        self.jobs = 0
        self.tasks = 0

    @property
    def spark(self) -> SparkSession:
        if callable(self._spark):
            self._spark = self._spark()
        return self._spark

    def partitions(self, n_files: int) -> int:
        """How many Spark partitions `n_files` files are read in."""
        if n_files <= 0:
            return 0
        parallelism = max(1, int(self.spark.sparkContext.defaultParallelism))
        return min(n_files, max(parallelism, math.ceil(n_files / self.files_per_task)))

    def read_footers(self, files: Sequence[FileToRead], target: Sequence[StatsLeaf]) -> ReadRows:
        """Parquet footers of `files`, read by executors: the rows and errors `footer_rows` gives locally."""
        if not files:
            return footer_rows(files, target)
        # the driver's setting, not the executors' environment
        task = functools.partial(_footer_task, list(target), self.threads_per_task, config.settings().count_nans)
        tables, errors = self._run(files, task, f"parquet footers of {len(files)} files")
        return ReadRows(with_keys(concat_footer_rows(tables, target), files), errors)

    def read_logs(self, files: Sequence[FileToRead], leaves: Sequence[LogLeaf]) -> ReadRows:
        """Log files' blocks, read by executors: the rows and errors `log_rows` gives locally."""
        if not files:
            return log_rows(files, leaves)
        task = functools.partial(_log_task, list(leaves), self.threads_per_task)
        tables, errors = self._run(files, task, f"statistics of {len(files)} log files")
        rows = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        return ReadRows(with_keys(rows, files), errors)

    def _run(self, files: Sequence[FileToRead], task: Callable[[int, Iterable[tuple[str, int]]], Iterator[_TaskResult]],
             what: str) -> tuple[list[pa.Table], list[str | None]]:
        spark = self.spark
        sc = spark.sparkContext
        n_parts = self.partitions(len(files))
        items = [(f[4], f[2]) for f in files]  # executors get (full path, listed size)
        sc.setJobDescription(f"hive-bridge index: {what}")
        try:
            results: list[_TaskResult] = sc.parallelize(items, n_parts).mapPartitionsWithIndex(task).collect()
        except Exception as exc:  # py4j / Spark job failures: a clear message, not a JVM stack
            raise SparkIndexError(f"Spark could not read the {what}: {_spark_error(exc)}") from None
        finally:
            sc.setJobDescription(None)  # type: ignore[arg-type]
        self.jobs += 1
        self.tasks += n_parts
        results.sort(key=lambda r: r[0])
        tables: list[pa.Table] = []
        errors: list[str | None] = []
        for _index, data, errs in results:
            with pa.ipc.open_stream(data) as source:
                tables.append(source.read_all())
            errors += errs
        if len(errors) != len(files) or sum(t.num_rows for t in tables) != len(files):
            raise SparkIndexError(f"{what}: Spark returned {sum(t.num_rows for t in tables)} rows and {len(errors)} "
                                  f"errors for {len(files)} files")
        return tables, errors


def _spark_error(exc: BaseException) -> str:
    """The line of a Spark/py4j failure that says what went wrong (the Python worker's own error when there is
    one), not the JVM's stack."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):  # a Python worker's traceback ends with its exception line
        if ln.startswith(("ModuleNotFoundError", "ImportError")) or "Error:" in ln.split(" ", 1)[0]:
            return ln
    for ln in lines:
        if not ln.startswith(("at ", "\tat ", "Traceback", "File ")):
            return ln[:500]
    return type(exc).__name__


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def _task_files(items: Iterable[tuple[str, int]]) -> list[FileToRead]:
    # the keys (relative path, partition, instant) stay on the driver, which puts them back (`with_keys`)
    return [("", "", size, "", path) for path, size in items]


def _footer_task(target: list[StatsLeaf], threads: int, count_nans: bool, index: int,
                 items: Iterable[tuple[str, int]]) -> Iterator[_TaskResult]:
    """One Spark partition's footers (runs on an executor)."""
    read = footer_rows(_task_files(items), target, threads, count_nans=count_nans)
    yield index, _ipc(read.rows), read.errors


def _log_task(leaves: list[LogLeaf], threads: int, index: int,
              items: Iterable[tuple[str, int]]) -> Iterator[_TaskResult]:
    """One Spark partition's log files (runs on an executor)."""
    read = log_rows(_task_files(items), leaves, threads)
    yield index, _ipc(read.rows), read.errors


def build_index(table: HudiTable | str, spark: SparkSession | Callable[[], SparkSession], *, source: str = "auto",
                rebuild: bool = False, files_per_task: int = FILES_PER_TASK, **options: Any) -> ColumnStatsIndex:
    """Build or refresh the persisted column-statistics index of `table` (a `HudiTable` or its folder) with the
    footers and log files it lacks read by Spark (what ``hive-bridge index --spark`` does): the latest base files
    and every log file of the latest slices. ``rebuild``: forget the persisted index first. ``source`` as for
    `ColumnStatsIndex` (files the metadata table describes are not read at all unless ``footers``);
    ``options`` go to `HudiTable.open` when `table` is a folder. Returns the index (``counters``, ``errors``)."""
    hudi_table = table if isinstance(table, HudiTable) else HudiTable.open(table, **options)
    reader = SparkStatsReader(spark, files_per_task=files_per_task)
    index = ColumnStatsIndex(hudi_table, source=source, reader=reader)
    if rebuild:
        index.clear()
    index.refresh()
    index.log_table(index.hudi_table.latest_file_slices())
    return index


__all__ = ["FILES_PER_TASK", "SparkIndexError", "SparkStatsReader", "build_index"]
