"""The rows of the statistics table: the leaves that get statistics, the index's row layout and format
version, casts that keep bounds bounds, and footer statistics turned into typed rows."""


from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hive_bridge.formats.parquet_footer import ColumnPlan, FooterStats, StatsLeaf, stat_array
from hive_bridge.stats.contract import (
    FILE_FIELDS,
    bound_columns,
    stat_fields,
)

FORMAT_KEY = b"hive_bridge.column_stats.format"
FORMAT_VERSION = b"3"  # 2: byte-array exactness judged by the writer; 3: float columns' nan_count
#: older formats still read: their rows hold no nan_count, which is then unknown
READABLE_FORMATS = (b"2", FORMAT_VERSION)
# the statistics table's layout is defined once, in hive_bridge.stats.contract; the index's segments hold its
# file columns except has_log_files (a property of the listing, not of the file) and every statistics column
KEY_FIELDS = FILE_FIELDS[:5]
HAS_LOG_FILES = FILE_FIELDS[5]


def leaf_pairs(leaves: Sequence[StatsLeaf]) -> list[tuple[str, pa.DataType]]:
    """(name, type) of each leaf: what the log and metadata-table statistics builders take."""
    return [(leaf.name, leaf.type) for leaf in leaves]


def stats_schema(leaves: Sequence[StatsLeaf], with_has_log_files: bool) -> pa.Schema:
    fields: list[pa.Field] = list(KEY_FIELDS)
    if with_has_log_files:
        fields.insert(5, HAS_LOG_FILES)
    for leaf in leaves:
        fields += stat_fields(leaf.name, leaf.type)
    return pa.schema(fields)

def order_preserving_cast(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether casting bounds from `src` to `dst` keeps them bounds (a monotonic conversion).

    Widening numbers, decimals, dates to timestamps, timestamp units (same zone) and string/binary
    flavours qualify; string <-> number does not (lexicographic bounds are not numeric bounds)."""
    if src == dst:
        return True
    t = pa.types
    if t.is_integer(src) and (t.is_integer(dst) or t.is_floating(dst) or t.is_decimal(dst)):
        return True
    if t.is_floating(src) and t.is_floating(dst):
        return True
    if t.is_decimal(src) and (t.is_decimal(dst) or t.is_floating(dst)):
        return True
    if t.is_date(src) and (t.is_date(dst) or (t.is_timestamp(dst) and dst.tz is None)):
        return True
    if t.is_timestamp(src) and t.is_timestamp(dst):
        return bool(src.tz == dst.tz)
    stringy = (t.is_string(src) or t.is_large_string(src), t.is_string(dst) or t.is_large_string(dst))
    if all(stringy):
        return True
    binary_dst = t.is_binary(dst) or t.is_large_binary(dst)
    return bool((stringy[0] or t.is_binary(src) or t.is_large_binary(src)) and binary_dst)

_BoundsChunk = tuple[list[int], pa.Array, pa.Array, Sequence[int | None], Sequence[bool | None],
                     Sequence[int | None]]


def footer_rows_to_table(
    keys: Sequence[tuple[str, str, int, str]], stats: Sequence[FooterStats], target: Sequence[StatsLeaf]
) -> pa.Table:
    """Rows (path, partition, file_size, instant) + footer statistics as a table with `target`'s columns
    plus any leaf a file has beyond them.

    Files that share a column plan (one schema) are converted together, a column at a time."""
    leaves: dict[str, pa.DataType] = {leaf.name: leaf.type for leaf in target}
    groups: dict[int, tuple[ColumnPlan, list[int]]] = {}
    for r, st in enumerate(stats):
        if st.error is not None:
            continue
        group = groups.get(id(st.plan))
        if group is None:
            groups[id(st.plan)] = (st.plan, [r])
            for c in st.plan:
                leaves.setdefault(c[1], c[3])
        else:
            group[1].append(r)
    n = len(keys)
    num_rows = [s.num_rows for s in stats]
    columns: dict[str, pa.Array] = {
        "path": pa.array([k[0] for k in keys], pa.string()),
        "partition": pa.array([k[1] for k in keys], pa.string()),
        "file_size": pa.array([k[2] for k in keys], pa.int64()),
        "instant": pa.array([k[3] for k in keys], pa.string()),
        "num_rows": pa.array(num_rows, pa.int64()),
    }
    chunks: dict[str, list[_BoundsChunk]] = {}
    for plan, rows in groups.values():
        per_column = zip(*[stats[r].rows for r in rows], strict=True)
        for k, ((_i, name, mode, own, _exact), values) in enumerate(zip(plan, per_column, strict=True)):
            lo_v, hi_v, nulls_v, exact_v, _ = zip(*values, strict=True)
            lo, hi = _typed_bounds(lo_v, hi_v, mode, own, leaves[name])
            chunks.setdefault(name, []).append((rows, lo, hi, nulls_v, exact_v, _nans(stats, rows, k, own)))
    for name, typ in leaves.items():
        parts = chunks.get(name, [])
        if len(parts) == 1 and len(parts[0][0]) == n:  # one schema, every file readable: rows already in order
            _rows, lo_all, hi_all, part_nulls, part_exact, part_nans = parts[0]
            null_counts, exact = pa.array(part_nulls, pa.int64()), pa.array(part_exact, pa.bool_())
            nans = pa.array(part_nans, pa.int64())
        else:
            lo_all, hi_all, null_counts, exact, nans = _assemble(parts, n, typ, stats, num_rows)
        columns.update(bound_columns(name, typ, lo_all, hi_all, null_counts, exact, nans))
    table = pa.table(columns)
    return table.replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})


def _nans(stats: Sequence[FooterStats], rows: list[int], k: int, own: pa.DataType) -> list[int | None]:
    """The NaN counts of plan column `k` of the files `rows`: the footer's (or counted) for a float column; 0
    for an integer or decimal column (its values, cast to a float leaf, are never NaN); unknown otherwise."""
    if not pa.types.is_floating(own):
        known = pa.types.is_integer(own) or pa.types.is_decimal(own)
        return [0 if known else None] * len(rows)
    out: list[int | None] = []
    for r in rows:
        nans = stats[r].nans
        out.append(None if nans is None else nans[k])
    return out


def _assemble(
    parts: list[_BoundsChunk], n: int, typ: pa.DataType, stats: Sequence[FooterStats], num_rows: list[int | None]
) -> tuple[pa.Array, pa.Array, pa.Array, pa.Array, pa.Array]:
    """One leaf's columns in file order from the chunks of several schemas; files without the column have
    no bounds and are all null (null count = row count, no NaN), unreadable files are unknown."""
    order: list[int] = []
    lo_chunks: list[pa.Array] = []
    hi_chunks: list[pa.Array] = []
    nulls: list[int | None] = []
    exact: list[bool | None] = []
    nans: list[int | None] = []
    covered = bytearray(n)
    for rows, lo, hi, nulls_v, exact_v, nans_v in parts:
        order += rows
        lo_chunks.append(lo)
        hi_chunks.append(hi)
        nulls += nulls_v
        exact += exact_v
        nans += nans_v
        for r in rows:
            covered[r] = 1
    absent = [r for r in range(n) if not covered[r]]
    order += absent
    nulls += [num_rows[r] if stats[r].error is None else None for r in absent]
    nans += [0 if stats[r].error is None else None for r in absent]
    exact += [None] * len(absent)
    lo_chunks.append(pa.nulls(len(absent), typ))
    hi_chunks.append(pa.nulls(len(absent), typ))
    inverse = [0] * n
    for pos, r in enumerate(order):
        inverse[r] = pos
    idx = pa.array(inverse, pa.int64())
    return (pa.concat_arrays(lo_chunks).take(idx), pa.concat_arrays(hi_chunks).take(idx),
            pa.array(nulls, pa.int64()).take(idx), pa.array(exact, pa.bool_()).take(idx),
            pa.array(nans, pa.int64()).take(idx))


def _typed_bounds(
    lo_v: Sequence[Any], hi_v: Sequence[Any], mode: int, own: pa.DataType, typ: pa.DataType
) -> tuple[pa.Array, pa.Array]:
    """min/max arrays of type `typ` from bounds of the files' own column type `own`; bounds that do not fit
    (or do not cast safely, or not order-preservingly) become unknown."""
    try:
        if not order_preserving_cast(own, typ):
            raise TypeError(f"{own} bounds are not {typ} bounds")
        lo = stat_array(lo_v, own, mode)
        hi = stat_array(hi_v, own, mode)
        if own != typ:
            lo = lo.cast(typ, safe=True)
            hi = hi.cast(typ, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, ValueError,
            OverflowError, ArithmeticError):
        lo = hi = pa.nulls(len(lo_v), typ)
    return lo, hi


