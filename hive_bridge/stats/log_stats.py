"""Column statistics of merge-on-read log files, and of a file slice as a whole (base file + log files).

A log file's statistics are computed from the records of its data blocks (Avro or parquet), with Arrow:
per column, the minimum and maximum of the non-null, non-NaN values, the null count and the NaN count. Delete
blocks and rollback command blocks add no record; a block this reader cannot decode (HFile data, CDC, an
unknown type, an Avro payload that does not decode) makes the whole log file unknown. A damaged tail (a
crashed writer's half block) ends the readable part of the file: Hudi's reader skips such a region too, so the
records it holds never reach a merged row.

A slice's merged rows are its base file's rows, some replaced by log records, some removed by deletes, so per
column the union of the parts' ranges bounds them: the slice's minimum is the minimum of its parts' minimums
(unknown when any part with values has an unknown one), null counts and row counts are sums (zero only when
every part has none, equal only when every part is all null), and a part with an unknown row count makes the
slice's unknown. Updates that move a value out of the base file's range are covered by the log's range;
deletes and rollbacks only make the bound looser.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import BlockType, HeaderKey, LogFileContents, data_block_table, read_log_file
from hive_bridge.stats.contract import (
    BOUND_STATS,
    MAX,
    MAX_EXACT,
    MIN,
    MIN_EXACT,
    NAN_COUNT,
    NULL_COUNT,
    bound_columns,
    has_nan_count,
    stat_name,
)
from hive_bridge.stats.rows import order_preserving_cast
from hive_bridge.storage.core import Storage, StorageError, environment_storage

#: block types that hold no record of the merged rows: delete keys, rollback commands, blocks Hudi's own
#: reader marks corrupted (their bytes are never read as records)
_NO_RECORDS = frozenset({BlockType.DELETE, BlockType.COMMAND, BlockType.CORRUPTED})
_DATA = frozenset({BlockType.AVRO_DATA, BlockType.PARQUET_DATA})


@dataclass
class LogStats:
    """Statistics of one log file: per leaf column (min, max, null count), the bounds as Arrow scalars of the
    leaf's type (None = no bound, null count None = unknown); `num_rows` = records in its data blocks (None =
    unknown)."""

    num_rows: int | None
    #: per leaf (min, max, null count, NaN count: None = unknown; 0 for a column that is not float/double)
    columns: dict[str, tuple[Any, Any, int | None, int | None]] = field(default_factory=dict)
    size: int | None = None
    error: str | None = None
    data_blocks: int = 0
    delete_blocks: int = 0
    rollback_blocks: int = 0
    corrupt_regions: int = 0


def _leaf_column(table: pa.Table, name: str) -> pa.ChunkedArray | pa.Array | None:
    """A top-level column or a dotted struct leaf of `table`; None when the table lacks it."""
    parts = name.split(".")
    if parts[0] not in table.column_names:
        # a top-level name with a dot in it
        return table.column(name) if name in table.column_names else None
    col: Any = table.column(parts[0])
    for p in parts[1:]:
        typ = col.type
        if not pa.types.is_struct(typ) or typ.get_field_index(p) < 0:
            return None
        col = pc.struct_field(col, p)
    return col


def _as_leaf_type(col: Any, typ: pa.DataType) -> Any:
    """The column as the leaf's type when the conversion keeps the order of values; None otherwise."""
    if col.type == typ:
        return col
    if not order_preserving_cast(col.type, typ):
        return None
    try:
        return pc.cast(col, typ, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None


def read_log_stats(path: str, leaves: Sequence[tuple[str, pa.DataType]],
                   storage: Storage | None = None) -> LogStats:
    """Statistics of one log file for `leaves` ((dotted name, arrow type)); never raises: a file that cannot be
    read, or a block that cannot be decoded, gives unknown statistics and an `error`."""
    try:
        where = storage if storage is not None else environment_storage(path)
        contents: LogFileContents = read_log_file(path, storage=where)
    except (HudiTableError, StorageError, OSError) as exc:
        return LogStats(None, error=f"{path}: unreadable log file: {exc}")
    out = LogStats(None, size=contents.size, corrupt_regions=contents.corrupt_regions)
    tables: list[pa.Table] = []
    for block in contents.blocks:
        kind = block.block_type
        if kind in _NO_RECORDS:
            if kind == BlockType.DELETE:
                out.delete_blocks += 1
            elif kind == BlockType.COMMAND:
                out.rollback_blocks += 1
            continue
        if str(block.header.get(HeaderKey.IS_PARTIAL, "")).lower() == "true":
            # a partial update: its records hold some columns only, merged into the base file's record; the
            # slice's rows then mix files, which the per-file verdicts of a whole-record merge do not cover
            out.error = f"{path}: byte {block.offset}: a partial-update block (IS_PARTIAL): statistics unknown"
            return out
        if kind not in _DATA:
            out.error = f"{path}: byte {block.offset}: a block of type {kind} has records this reader cannot read"
            return out
        try:
            tables.append(data_block_table(block, path))
        except HudiTableError as exc:
            out.error = str(exc)
            return out
        except Exception as exc:  # a decoder's own error: unknown, never an exception out of the listing
            out.error = f"{path}: byte {block.offset}: undecodable data block: {type(exc).__name__}: {exc}"
            return out
        out.data_blocks += 1
    out.num_rows = sum(t.num_rows for t in tables)
    chunks: dict[str, list[Any]] = {name: [] for name, _ in leaves}
    absent = dict.fromkeys(chunks, 0)
    bad: set[str] = set()
    for t in tables:
        names = set(t.schema.names)
        for name, typ in leaves:
            col = t.column(name) if name in names else _leaf_column(t, name)
            if col is None:
                # a block written without the column (before it was added, or a partial update): its records
                # hold null there, or the base file's value, which the base file's own statistics cover
                absent[name] += t.num_rows
                continue
            if col.type != typ:
                col = _as_leaf_type(col, typ)
                if col is None:
                    bad.add(name)
                    continue
            chunks[name].append(col)
    for name, typ in leaves:
        out.columns[name] = (None, None, None, None) if name in bad else \
            _column_stats(chunks[name], absent[name], typ)
    return out


_Stats = tuple[Any, Any, int | None, int | None]


def _column_stats(cols: list[Any], absent_rows: int, typ: pa.DataType) -> _Stats:
    """(min, max) as Arrow scalars of `typ` (None when there is no bound), the null count and the NaN count
    (every value is seen: known)."""
    nulls = absent_rows + sum(c.null_count for c in cols)
    values = [c for c in cols if len(c) > c.null_count]
    nans: int | None = 0
    if pa.types.is_floating(typ):
        try:
            nans = sum(int(pc.sum(pc.is_nan(c)).as_py() or 0) for c in values)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):  # e.g. half floats: unknown
            nans = None
    if not values:
        return None, None, nulls, nans
    try:
        mm = pc.min_max(values[0] if len(values) == 1 else
                        pa.chunked_array([ch for c in values for ch in getattr(c, "chunks", [c])], typ))
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None, None, nulls, nans
    lo, hi = mm["min"], mm["max"]
    if not lo.is_valid or not hi.is_valid:
        return None, None, nulls, nans
    if pa.types.is_floating(typ):
        a, b = lo.as_py(), hi.as_py()
        if a != a or b != b:
            return None, None, nulls, nans  # only NaN values: no bound (NaN is kept unknown)
    return lo, hi, nulls, nans


def log_rows_to_table(keys: Sequence[tuple[str, str, int, str]], stats: Sequence[LogStats],
                      leaves: Sequence[tuple[str, pa.DataType]]) -> pa.Table:
    """Rows (path, partition, file_size, instant) + log statistics in the index's layout: min/max exact (every
    record was seen), unknown everywhere for a file with an error."""
    columns: dict[str, Any] = {
        "path": pa.array([k[0] for k in keys], pa.string()),
        "partition": pa.array([k[1] for k in keys], pa.string()),
        "file_size": pa.array([k[2] for k in keys], pa.int64()),
        "instant": pa.array([k[3] for k in keys], pa.string()),
        "num_rows": pa.array([s.num_rows if s.error is None else None for s in stats], pa.int64()),
    }
    for name, typ in leaves:
        los: list[Any] = []
        his: list[Any] = []
        nulls: list[int | None] = []
        nans: list[int | None] = []
        for s in stats:
            st = s.columns.get(name) if s.error is None else None
            if st is None:
                los.append(None)
                his.append(None)
                nulls.append(None)
                nans.append(None)
            else:
                los.append(st[0])
                his.append(st[1])
                nulls.append(st[2])
                nans.append(st[3])
        columns.update(bound_columns(name, typ, pa.array(los, typ), pa.array(his, typ), pa.array(nulls, pa.int64()),
                                     nan_counts=pa.array(nans, pa.int64())))
    return pa.table(columns)


# ------------------------------------------------------------------ slices
_EXACT_RANK = {False: 0, None: 1, True: 2}


def union_stats(parts: pa.Table, slice_of_part: Sequence[int], n: int,
                leaves: Sequence[tuple[str, pa.DataType]]) -> pa.Table:
    """One row per slice (0..n-1): the union of its parts' statistics (the rows of `parts`, part i belonging to
    slice `slice_of_part[i]`); every slice must have at least one part. Columns: num_rows and per leaf the
    statistics columns (`stat_kinds`), in the statistics table's types."""
    groups = pa.array(slice_of_part, pa.int32())
    rows = parts.column("num_rows").combine_chunks()
    table: dict[str, Any] = {"g": groups, "rows": rows, "rows_unknown": pc.is_null(rows)}
    for k, (name, typ) in enumerate(leaves):
        lo = parts.column(stat_name(name, MIN)).combine_chunks()
        hi = parts.column(stat_name(name, MAX)).combine_chunks()
        nc = parts.column(stat_name(name, NULL_COUNT)).combine_chunks()
        # a part that is known to hold only nulls (or no row) gives no bound, nor does a float part known to hold
        # no number (only NaN and nulls: its NaN and null counts add up to its rows, no bound given); any other
        # part without a bound makes the slice's bound unknown
        no_values = pc.fill_null(pc.greater_equal(nc, rows), False)
        nan = None
        if has_nan_count(typ):
            nan_name = stat_name(name, NAN_COUNT)
            nan = parts.column(nan_name).combine_chunks() if nan_name in parts.column_names \
                else pa.nulls(parts.num_rows, pa.int64())
            unbounded = pc.and_(_no_bound(lo), _no_bound(hi))
            no_number = pc.and_(pc.fill_null(pc.equal(pc.add(nc, nan), rows), False), unbounded)
            no_values = pc.or_(no_values, no_number)
        contributes = pc.invert(no_values)
        lo_ex = _exact_rank(parts.column(stat_name(name, MIN_EXACT)).combine_chunks())
        hi_ex = _exact_rank(parts.column(stat_name(name, MAX_EXACT)).combine_chunks())
        table[f"lo{k}"] = pc.if_else(contributes, lo, pa.scalar(None, lo.type))
        table[f"hi{k}"] = pc.if_else(contributes, hi, pa.scalar(None, hi.type))
        table[f"lo_bad{k}"] = pc.and_(contributes, pc.or_(_no_bound(lo), pc.equal(lo_ex, 0)))
        table[f"hi_bad{k}"] = pc.and_(contributes, pc.or_(_no_bound(hi), pc.equal(hi_ex, 0)))
        table[f"lo_ex{k}"] = pc.if_else(contributes, lo_ex, pa.scalar(None, pa.int8()))
        table[f"hi_ex{k}"] = pc.if_else(contributes, hi_ex, pa.scalar(None, pa.int8()))
        table[f"nc{k}"] = nc
        table[f"nc_unknown{k}"] = pc.is_null(nc)
        if nan is not None:
            # a slice's NaN count: the parts' sum; unknown when any part's is (a part without the column
            # in the statistics at all is unknown too), or when a part's counts contradict its row count (NaN
            # and nulls beyond its rows: a sum could otherwise claim a slice without numbers)
            table[f"nan{k}"] = nan
            beyond = pc.fill_null(pc.greater(pc.add(nc, nan), rows), False)
            table[f"nan_unknown{k}"] = pc.or_(pc.is_null(nan), beyond)
    t = pa.table(table)
    aggs: list[tuple[str, str]] = [("rows", "sum"), ("rows_unknown", "any")]
    for k, (_name, typ) in enumerate(leaves):
        aggs += [(f"lo{k}", "min"), (f"hi{k}", "max"), (f"lo_bad{k}", "any"), (f"hi_bad{k}", "any"),
                 (f"lo_ex{k}", "min"), (f"hi_ex{k}", "min"), (f"nc{k}", "sum"), (f"nc_unknown{k}", "any")]
        if has_nan_count(typ):
            aggs += [(f"nan{k}", "sum"), (f"nan_unknown{k}", "any")]
    grouped = t.group_by("g", use_threads=False).aggregate(aggs)
    order = pc.sort_indices(grouped.column("g"))
    grouped = grouped.take(order)
    if grouped.num_rows != n or pc.any(pc.not_equal(grouped.column("g"), pa.array(range(n), pa.int32()))).as_py():
        raise ValueError("union_stats: every slice needs at least one part")

    def unknown_if(values: pa.ChunkedArray, unknown: pa.ChunkedArray) -> Any:
        return pc.if_else(unknown, pa.scalar(None, values.type), values)

    out: dict[str, Any] = {
        "num_rows": unknown_if(grouped.column("rows_sum"), grouped.column("rows_unknown_any")),
    }
    for k, (name, typ) in enumerate(leaves):
        lo = unknown_if(grouped.column(f"lo{k}_min"), grouped.column(f"lo_bad{k}_any"))
        hi = unknown_if(grouped.column(f"hi{k}_max"), grouped.column(f"hi_bad{k}_any"))
        out[stat_name(name, MIN)] = pc.cast(lo, typ)
        out[stat_name(name, MAX)] = pc.cast(hi, typ)
        out[stat_name(name, NULL_COUNT)] = unknown_if(grouped.column(f"nc{k}_sum"), grouped.column(f"nc_unknown{k}_any"))
        out[stat_name(name, MIN_EXACT)] = _exact_from_rank(grouped.column(f"lo_ex{k}_min"))
        out[stat_name(name, MAX_EXACT)] = _exact_from_rank(grouped.column(f"hi_ex{k}_min"))
        if has_nan_count(typ):
            out[stat_name(name, NAN_COUNT)] = unknown_if(grouped.column(f"nan{k}_sum"),
                                                         grouped.column(f"nan_unknown{k}_any"))
    return pa.table({k: (v.combine_chunks() if isinstance(v, pa.ChunkedArray) else v) for k, v in out.items()})


def _no_bound(bound: pa.Array) -> pa.Array:
    """Where a bound is absent (null; for a float bound also NaN, which bounds nothing)."""
    if not pa.types.is_floating(bound.type):
        return pc.is_null(bound)
    return pc.fill_null(pc.is_nan(bound), True)


def _exact_rank(exact: pa.Array) -> pa.Array:
    """False -> 0, unknown -> 1, True -> 2 (the union is as exact as its least exact part)."""
    return pc.fill_null(pc.if_else(exact, pa.scalar(2, pa.int8()), pa.scalar(0, pa.int8())),
                        pa.scalar(1, pa.int8()))


def _exact_from_rank(rank: pa.ChunkedArray) -> pa.Array:
    """0 -> False, 1 or no contributing part -> unknown, 2 -> True."""
    r = rank.combine_chunks()
    return pc.if_else(pc.equal(r, 2), True, pc.if_else(pc.equal(r, 0), False, pa.scalar(None, pa.bool_())))


__all__ = ["BOUND_STATS", "LogStats", "log_rows_to_table", "read_log_stats", "union_stats"]
