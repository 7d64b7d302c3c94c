"""The statistics table of groups of rows: what a parquet writer would record for files holding those rows.

:func:`group_stats` takes rows (an Arrow table of data columns) and the group each row belongs to, and returns
one statistics row per group in the contract of :mod:`hive_bridge.stats.contract`: ``num_rows``, and per column
``c::min`` / ``c::max`` (nulls and NaN ignored, as parquet's statistics ignore them), ``c::null_count``, exact
bounds (every value was seen), and ``c::nan_count`` for floating-point columns. A group whose values are all
null or NaN has no bounds (unknown). Used to judge files that do not exist yet — rows laid out another way —
with the same evaluators as real files.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.stats.contract import bound_columns

_GROUP = "__group"


def _orderable(typ: pa.DataType) -> bool:
    t = pa.types
    return bool(t.is_integer(typ) or t.is_floating(typ) or t.is_decimal(typ) or t.is_string(typ)
                or t.is_large_string(typ) or t.is_date(typ) or t.is_timestamp(typ) or t.is_boolean(typ)
                or t.is_binary(typ) or t.is_large_binary(typ))


def group_stats(rows: pa.Table, groups: np.ndarray, num_groups: int) -> pa.Table:
    """One statistics row per group ``0..num_groups-1`` (row ``i`` of ``rows`` belongs to ``groups[i]``; every
    group must have at least one row). Columns whose type has no order (nested) get no statistics (unknown)."""
    ids = np.asarray(groups, dtype=np.int64)
    if len(ids) != rows.num_rows:
        raise ValueError("group_stats: one group per row")
    data: dict[str, pa.Array] = {_GROUP: pa.array(ids)}
    aggs: list[tuple[str, str]] = [(_GROUP, "count")]
    kept: list[tuple[int, str, pa.DataType, bool]] = []
    for k, name in enumerate(rows.column_names):
        col = rows.column(name).combine_chunks()
        typ = col.type
        if not _orderable(typ):
            continue
        is_float = pa.types.is_floating(typ)
        values = col
        if is_float:
            nan = pc.fill_null(pc.is_nan(col), False)
            values = pc.if_else(nan, pa.scalar(None, typ), col)
            data[f"n{k}"] = pc.cast(nan, pa.int64())
            aggs.append((f"n{k}", "sum"))
        data[f"v{k}"] = values
        data[f"z{k}"] = pc.cast(pc.is_null(col), pa.int64())
        aggs += [(f"v{k}", "min"), (f"v{k}", "max"), (f"z{k}", "sum")]
        kept.append((k, name, typ, is_float))
    grouped = pa.table(data).group_by(_GROUP, use_threads=False).aggregate(aggs)
    grouped = grouped.take(pc.sort_indices(grouped.column(_GROUP)))
    if grouped.num_rows != num_groups or (num_groups and (
            grouped.column(_GROUP)[0].as_py() != 0 or grouped.column(_GROUP)[-1].as_py() != num_groups - 1)):
        raise ValueError("group_stats: every group needs at least one row")

    def col_of(name: str) -> pa.Array:
        return grouped.column(name).combine_chunks()

    out: dict[str, pa.Array] = {
        "path": pa.array([f"group-{i}" for i in range(num_groups)], pa.string()),
        "partition": pa.array([""] * num_groups, pa.string()),
        "file_size": pa.array(np.zeros(num_groups, dtype=np.int64)),
        "instant": pa.array([""] * num_groups, pa.string()),
        "num_rows": col_of(f"{_GROUP}_count").cast(pa.int64()),
        "has_log_files": pa.array(np.zeros(num_groups, dtype=bool)),
    }
    for k, name, typ, is_float in kept:
        lo, hi = col_of(f"v{k}_min").cast(typ), col_of(f"v{k}_max").cast(typ)
        nans = col_of(f"n{k}_sum").cast(pa.int64()) if is_float else None
        out.update(bound_columns(name, typ, lo, hi, col_of(f"z{k}_sum").cast(pa.int64()), nan_counts=nans))
    return pa.table(out)


__all__ = ["group_stats"]
