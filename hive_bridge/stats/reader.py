"""Who reads the statistics of the files the column-statistics index lacks: the strategy `ColumnStatsIndex`
delegates its reading step to.

A reader gets the files to read — `(path, partition, listed size, instant, full path)`, path relative to the
table root — and returns `ReadRows`: one row per file, in the order asked, in the layout
`footer_rows_to_table` / `log_rows_to_table` give, and each file's error (None when it was read). The index
then persists the rows of the files read and keeps the others, unknown, in memory only, whoever read them.

- `LocalStatsReader` (the default): this process, a thread pool (`read_footer_stats`, `read_log_stats`).
- `hive_bridge.spark.index_build.SparkStatsReader`: Spark executors, `mapPartitions` over the file list; the table
  layer never imports pyspark.

Both run the same functions, `footer_rows` and `log_rows`, on the whole list (local) or on consecutive chunks
of it (one per Spark partition, joined again with `concat_footer_rows`), so the rows are the same: a file whose
size is not the listed one (rewritten or appended to since it was listed) is unknown, with the same error text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge import config
from hive_bridge.errors import HudiTableError
from hive_bridge.formats.parquet_footer import FooterStats, StatsLeaf, read_footer_stats
from hive_bridge.stats.contract import (
    MAX,
    MIN,
    MIN_EXACT,
    NAN_COUNT,
    NULL_COUNT,
    bound_columns,
    split_stat_name,
    stat_kinds,
    stat_name,
)
from hive_bridge.stats.log_stats import LogStats, log_rows_to_table, read_log_stats
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION, footer_rows_to_table, order_preserving_cast
from hive_bridge.storage.core import Storage

#: one file to read: (path relative to the table root, partition, size when listed, instant, full path)
FileToRead = tuple[str, str, int, str, str]
#: a log-statistics leaf: (dotted name, Arrow type)
LogLeaf = tuple[str, pa.DataType]
_KEYS = ("path", "partition", "file_size", "instant")

_T = TypeVar("_T")
_R = TypeVar("_R")


@dataclass(frozen=True)
class ReadRows:
    """What a reader returns: one row per file asked for (same order) and each file's error or None."""

    rows: pa.Table
    errors: list[str | None]


class StatsReader(Protocol):
    """Reads the statistics of files the index lacks (see the module's docstring for the contract)."""

    def read_footers(self, files: Sequence[FileToRead], target: Sequence[StatsLeaf]) -> ReadRows:
        """Parquet footer statistics of base files: `footer_rows(files, target)`'s rows and errors."""
        ...

    def read_logs(self, files: Sequence[FileToRead], leaves: Sequence[LogLeaf]) -> ReadRows:
        """Statistics of merge-on-read log files: `log_rows(files, leaves)`'s rows and errors."""
        ...


class LocalStatsReader:
    """Reads in this process on `max_workers` threads (1: in the calling thread), through `storage` (the
    table's; None: local files, or a Storage made from the environment for a URI)."""

    def __init__(self, max_workers: int = 1, storage: Storage | None = None, count_nans: bool | None = None) -> None:
        self.max_workers = max_workers
        self.storage = storage
        self.count_nans = count_nans

    def read_footers(self, files: Sequence[FileToRead], target: Sequence[StatsLeaf]) -> ReadRows:
        return footer_rows(files, target, self.max_workers, self.storage, self.count_nans)

    def read_logs(self, files: Sequence[FileToRead], leaves: Sequence[LogLeaf]) -> ReadRows:
        return log_rows(files, leaves, self.max_workers, self.storage)


def _map(fn: Callable[[_T], _R], items: list[_T], max_workers: int, chunksize: int) -> list[_R]:
    if len(items) > 1 and max_workers > 1:
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            return list(pool.map(fn, items, chunksize=chunksize))
    return [fn(p) for p in items]


def footer_rows(files: Sequence[FileToRead], target: Sequence[StatsLeaf], max_workers: int = 1,
                storage: Storage | None = None, count_nans: bool | None = None) -> ReadRows:
    """Read the footers of `files` (parquet base files) and build their index rows (`footer_rows_to_table`).
    `count_nans`: count NaN in the values of float/double columns whose footer gives no NaN count (None: the
    ``HIVE_BRIDGE_COUNT_NANS`` setting)."""
    paths = [f[4] for f in files]
    nans = config.settings().count_nans if count_nans is None else count_nans
    # the listed size spares object storage a HEAD request per footer (a local read checks the size itself)
    stats = _map(lambda f: read_footer_stats(f[4], f[2], storage, nans), list(files), max_workers, chunksize=16)
    for i, st in enumerate(stats):
        if st.error is None and st.size != files[i][2]:
            # the file is not the one listed (rewritten since): its statistics would be stored under the
            # listed size, a key that does not describe them; unknown now, read again next time
            stats[i] = FooterStats(None, [], [], f"{paths[i]}: changed while being indexed (listed size "
                                                 f"{files[i][2]}, read {st.size})")
    keys = [(f[0], f[1], f[2], f[3]) for f in files]
    return ReadRows(footer_rows_to_table(keys, stats, target), [s.error for s in stats])


def log_rows(files: Sequence[FileToRead], leaves: Sequence[LogLeaf], max_workers: int = 1,
             storage: Storage | None = None) -> ReadRows:
    """Read the blocks of `files` (merge-on-read log files) and build their index rows (`log_rows_to_table`)."""
    paths = [f[4] for f in files]
    leaf_list = list(leaves)

    def read(path: str) -> LogStats:
        return read_log_stats(path, leaf_list, storage)

    stats = _map(read, paths, max_workers, chunksize=8)
    for i, st in enumerate(stats):
        if st.error is None and st.size != files[i][2]:
            # the log grew (an append) or was rewritten since it was listed: its statistics would be stored under
            # a key that does not describe them; unknown now, read again next time
            stats[i] = LogStats(None, error=f"{paths[i]}: changed while being indexed (listed size {files[i][2]}, "
                                            f"read {st.size})")
    keys = [(f[0], f[1], f[2], f[3]) for f in files]
    rows = log_rows_to_table(keys, stats, leaf_list).replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})
    return ReadRows(rows, [s.error for s in stats])


def concat_footer_rows(parts: Sequence[pa.Table], target: Sequence[StatsLeaf]) -> pa.Table:
    """`footer_rows_to_table` of a file list, from its results for consecutive chunks of that list (in order).

    The chunks' columns are the target's plus the leaves their own files have beyond it; the whole list's are
    the target's plus every chunk's other leaves in the order first seen, typed as the first file that has them.
    A chunk without such a leaf gets what `footer_rows_to_table` gives a file without it (no bounds, null count
    = row count, unknown for an unreadable file); a chunk whose leaf has another type is cast when the cast keeps
    bounds bounds, and is unknown otherwise.

    One difference remains: `footer_rows_to_table` makes a bound unknown for every file of one schema when one
    of them has a bound that does not fit its column's type (e.g. a decimal beyond its precision); chunked, only
    the files of that schema in that chunk. Both are sound (unknown keeps files)."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        raise HudiTableError("concat_footer_rows: no rows to join")
    leaves: dict[str, pa.DataType] = {leaf.name: leaf.type for leaf in target}
    for part in parts:
        for f in part.schema:
            name, stat = split_stat_name(f.name)
            if stat == MIN:
                leaves.setdefault(name, f.type)
    tables: list[pa.Table] = []
    for part in parts:
        names = set(part.column_names)
        n = part.num_rows
        columns: dict[str, pa.Array | pa.ChunkedArray] = {k: part.column(k) for k in (*_KEYS, "num_rows")}
        for name, typ in leaves.items():
            if stat_name(name, MIN) not in names:
                # what footer_rows_to_table gives a file without the column: all null, no NaN (unknown for an
                # unreadable file, whose row count is unknown)
                rows = _array(part.column("num_rows"))
                columns.update(bound_columns(name, typ, pa.nulls(n, typ), pa.nulls(n, typ), rows,
                                             pa.nulls(n, pa.bool_()),
                                             pc.if_else(pc.is_valid(rows), 0, pa.scalar(None, pa.int64()))))
                continue
            lo, hi, nulls, exact = (part.column(stat_name(name, s)) for s in (MIN, MAX, NULL_COUNT, MIN_EXACT))
            if lo.type != typ:
                own = lo.type
                try:
                    if not order_preserving_cast(lo.type, typ):
                        raise TypeError(f"{lo.type} bounds are not {typ} bounds")
                    lo, hi = pc.cast(lo, typ, safe=True), pc.cast(hi, typ, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError):
                    lo, hi = pa.nulls(n, typ), pa.nulls(n, typ)
                nan = stat_name(name, NAN_COUNT)
                nans = _array(part.column(nan)) if nan in names else \
                    pa.array(np.zeros(n, dtype=np.int64)) if pa.types.is_integer(own) or pa.types.is_decimal(own) \
                    else None
                columns.update(bound_columns(name, typ, _array(lo), _array(hi), _array(nulls), _array(exact), nans))
            else:
                for s in stat_kinds(typ):
                    columns[stat_name(name, s)] = part.column(stat_name(name, s))
        tables.append(pa.table(columns))
    return pa.concat_tables(tables).replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})


def _array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def with_keys(rows: pa.Table, files: Sequence[FileToRead]) -> pa.Table:
    """`rows` with the key columns (path, partition, file_size, instant) of `files`: readers that ship only
    (full path, size) to where the files are read put the keys back with this."""
    if rows.num_rows != len(files):
        raise HudiTableError(f"statistics reader returned {rows.num_rows} rows for {len(files)} files")
    values = (pa.array([f[0] for f in files], pa.string()), pa.array([f[1] for f in files], pa.string()),
              pa.array([f[2] for f in files], pa.int64()), pa.array([f[3] for f in files], pa.string()))
    for i, (name, arr) in enumerate(zip(_KEYS, values, strict=True)):
        rows = rows.set_column(i, name, arr)
    return rows


def checked(read: ReadRows, files: Sequence[FileToRead], what: str) -> ReadRows:
    """A reader's answer, checked before anything is stored: one row and one error entry per file, the files'
    own paths in order, and the index's format mark on the rows."""
    rows = read.rows
    if rows.num_rows != len(files) or len(read.errors) != len(files):
        raise HudiTableError(f"{what}: the statistics reader returned {rows.num_rows} rows and {len(read.errors)} "
                             f"errors for {len(files)} files")
    if rows.schema.names[:len(_KEYS)] != list(_KEYS):
        raise HudiTableError(f"{what}: the statistics reader's rows start with {rows.schema.names[:len(_KEYS)]}, "
                             f"not {list(_KEYS)}")
    if rows.column("path").to_pylist() != [f[0] for f in files]:
        raise HudiTableError(f"{what}: the statistics reader's rows are not the files asked for, in their order")
    if (rows.schema.metadata or {}).get(FORMAT_KEY) != FORMAT_VERSION:
        rows = rows.replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})
    return ReadRows(rows, list(read.errors))


__all__ = ["FileToRead", "LocalStatsReader", "LogLeaf", "ReadRows", "StatsReader", "checked", "concat_footer_rows",
           "footer_rows", "log_rows", "with_keys"]
