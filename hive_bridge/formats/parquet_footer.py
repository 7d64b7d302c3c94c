"""Parquet footers: each column's statistics combined over a file's row groups, in a form that orders like
the values (strings as UTF-8 bytes, decimals as unscaled integers), read with pyarrow from the file's tail.

Knows nothing of tables: :mod:`hive_bridge.stats.rows` turns :class:`FooterStats` into the statistics table.
"""


import math
import os
import re
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hive_bridge import config
from hive_bridge.formats.parquet_thrift import FooterThriftError, nan_counts
from hive_bridge.storage.core import Storage, environment_storage

# how a leaf column's statistics are read from pyarrow
MODE_RAW, MODE_LOGICAL, MODE_FLOAT, MODE_UNKNOWN, MODE_STRING, MODE_DECIMAL = 0, 1, 2, 3, 4, 5
_BYTE_ARRAYS = ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
#: per column read: (parquet column index, leaf name, read mode, Arrow type, exactness of its bounds)
ColumnPlan = list[tuple[int, str, int, pa.DataType, bool | None]]

@dataclass(frozen=True)
class StatsLeaf:
    name: str
    type: pa.DataType


def stat_leaves(schema: pa.Schema) -> list[StatsLeaf]:
    """Columns that get statistics: top-level primitives and struct leaves (dotted); lists and maps skipped."""
    out: list[StatsLeaf] = []

    def walk(prefix: str, typ: pa.DataType) -> None:
        if pa.types.is_struct(typ):
            for child in typ:
                walk(f"{prefix}.{child.name}", child.type)
            return
        if pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_map(typ):
            return
        if pa.types.is_fixed_size_list(typ) or pa.types.is_union(typ) or pa.types.is_null(typ):
            return
        out.append(StatsLeaf(prefix, typ))

    for f in schema:
        walk(f.name, f.type)
    return out


# ------------------------------------------------------------------ footers
FooterValues = tuple[Any, Any, int | None, bool | None, bool | None]
_UNKNOWN_VALUES: FooterValues = (None, None, None, None, None)


@dataclass
class FooterStats:
    """Statistics of one parquet file, combined over its row groups (None = unknown).

    `rows` holds one (min, max, null count, min exact, max exact) per column of `plan`, the bounds in a form
    that orders like the values: strings as their UTF-8 bytes, decimals as unscaled integers, everything else
    as pyarrow's raw statistics (`footer_rows_to_table` turns them into typed, validated arrays). `size` is the
    file's size when its footer was read."""

    num_rows: int | None
    plan: ColumnPlan
    rows: list[FooterValues]
    error: str | None = None
    size: int | None = None
    #: each column's NaN count over the file, aligned with `plan` (None: unknown; always None for a column
    #: that is not FLOAT/DOUBLE); None: unknown for every column
    nans: list[int | None] | None = None

    @property
    def values(self) -> dict[str, FooterValues]:
        return {c[1]: v for c, v in zip(self.plan, self.rows, strict=True)}


def _read_mode(column: Any, arrow_type: pa.DataType) -> int:
    physical = column.physical_type
    if physical == "INT96":
        return MODE_UNKNOWN
    logical = column.logical_type.type
    if physical in ("FLOAT", "DOUBLE"):
        return MODE_FLOAT
    if physical == "BOOLEAN":
        return MODE_RAW
    is_string = pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    if logical == "DECIMAL" or (physical in ("INT32", "INT64") and pa.types.is_decimal(arrow_type)):
        if pa.types.is_decimal(arrow_type) and physical in ("INT32", "INT64", *_BYTE_ARRAYS):
            return MODE_DECIMAL
        return MODE_LOGICAL
    if logical in ("STRING", "ENUM", "JSON"):
        return MODE_STRING if physical == "BYTE_ARRAY" and is_string else MODE_LOGICAL
    if logical == "INT" and '"isSigned":false' in column.logical_type.to_json():
        return MODE_LOGICAL
    if logical in ("FLOAT16", "INTERVAL", "UUID", "BSON", "VARIANT", "GEOMETRY", "GEOGRAPHY"):
        return MODE_UNKNOWN
    if physical in ("INT32", "INT64"):
        if logical in ("NONE", "INT", "DATE", "TIME", "TIMESTAMP"):
            return MODE_RAW
        return MODE_UNKNOWN
    if physical in _BYTE_ARRAYS:
        if is_string:
            return MODE_STRING if physical == "BYTE_ARRAY" else MODE_LOGICAL
        return MODE_RAW
    return MODE_UNKNOWN


#: bytes read from the end of a file at once: the footer and its length in one read for most files
_TAIL = 16 * 1024


def read_metadata(path: str) -> tuple[pq.FileMetaData, int]:
    """The parquet footer and the file's size at the time it was read (see `read_metadata_bytes`)."""
    md, size, _footer = read_metadata_bytes(path)
    return md, size


def read_metadata_bytes(path: str) -> tuple[pq.FileMetaData, int, Any]:
    """The parquet footer, the file's size at the time it was read and the footer's thrift bytes (None when
    pyarrow read the footer itself): the tail is read with one `pread` and deserialized by pyarrow (several
    times faster than `pq.read_metadata`, which sets up a whole reader); falls back to `pq.read_metadata`."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if _reconstruct is not None and size >= 12:
            want = min(size, _TAIL)
            tail = os.pread(fd, want, size - want)
            if len(tail) == want and tail[-4:] == b"PAR1":
                length = _LENGTH.unpack_from(tail, want - 8)[0]
                if 0 < length <= size - 12:
                    if length + 8 <= want:
                        footer: Any = memoryview(tail)[want - 8 - length: want - 8]
                    else:
                        footer = os.pread(fd, length, size - 8 - length)
                    if len(footer) == length:
                        try:
                            return _reconstruct(pa.py_buffer(footer)), size, footer
                        except Exception:
                            pass
    finally:
        os.close(fd)
    return pq.read_metadata(path), size, None


_LENGTH = struct.Struct("<i")

try:  # private pyarrow helper (used to unpickle FileMetaData); optional
    from pyarrow._parquet import _reconstruct_filemetadata as _reconstruct
except ImportError:  # pragma: no cover
    _reconstruct = None

_PLANS: list[tuple[Any, ColumnPlan]] = []
config.register_cache("formats.parquet_footer: column plans", _PLANS.clear)
_PLANS_LOCK = threading.Lock()


def _column_plan(md: pq.FileMetaData) -> ColumnPlan:
    """Which parquet columns get statistics, under which name, read how, typed how (cached per schema: files
    of one schema share one plan object, which `footer_rows_to_table` groups by)."""
    schema = md.schema
    for cached, plan in _PLANS:
        if cached.equals(schema):
            return plan
    leaf_types = {leaf.name: leaf.type for leaf in stat_leaves(schema.to_arrow_schema())}
    plan = []
    for i in range(md.num_columns):
        col = schema.column(i)
        if col.max_repetition_level > 0:
            continue
        typ = leaf_types.get(col.path)
        if typ is None:
            continue
        plan.append((i, col.path, _read_mode(col, typ), typ, _exactness(typ)))
    with _PLANS_LOCK:
        _PLANS.insert(0, (schema, plan))
        del _PLANS[32:]
    return plan


def read_footer_stats(path: str, size: int | None = None, storage: Storage | None = None,
                      count_nans: bool = False) -> FooterStats:
    """Read one footer; damaged files give unknown statistics and an `error` (never an exception). A file on
    object storage is read through `storage` (the table's; without one, a Storage made from the environment,
    see `environment_storage`), with one ranged read when `size` (the listed size) is given.

    NaN counts of FLOAT/DOUBLE columns come from the footer's thrift (`Statistics.nan_count`, which pyarrow does
    not expose); with `count_nans`, those the footer does not give are counted in the column's values (only
    those columns' chunks are read: data, not a footer, hence an option)."""
    footer: Any = None
    remote: Storage | None = None
    try:
        if storage is None:
            storage = environment_storage(path)     # None for a local path
        remote = storage if storage is not None and not storage.is_local else None
        if remote is None:
            md, size, footer = read_metadata_bytes(path)
        else:
            if size is None:
                size = remote.size(path)
            md = remote.parquet_metadata(path, size)
        plan = _column_plan(md)
    except Exception as exc:  # pyarrow raises several types for damaged files
        return FooterStats(None, [], [], f"{path}: unreadable parquet footer: {exc}")
    try:
        stats = footer_stats_of(md, plan)
    except Exception as exc:
        return FooterStats(None, [], [], f"{path}: unreadable parquet statistics: {exc}")
    stats.size = size
    floats = [k for k, c in enumerate(plan) if c[2] == MODE_FLOAT]
    if floats:
        stats.nans = _nan_counts(path, md, footer, plan, floats, stats, remote, count_nans)
    return stats


_WRITER_VERSION = re.compile(r"^(parquet-mr|parquet-cpp-arrow) version (\d+)\.(\d+)")


def writer_may_write_nan_counts(created_by: str | None) -> bool:
    """Whether a writer, judged by `created_by`, may have put `Statistics.nan_count` in its footer (else the
    footer's thrift is not decoded for it: a cost on every footer read, for nothing).

    parquet-java writes it from 1.18 (parquet-format's IEEE 754 total order and NaN counts, 2026); earlier
    parquet-mr versions (what Hudi and Spark write with today) never did. Arrow's C++ writer (pyarrow) does
    not write it up to 26 (tested). Every other writer may."""
    m = _WRITER_VERSION.match(created_by or "")
    if m is None:
        return True
    version = (int(m.group(2)), int(m.group(3)))
    if m.group(1) == "parquet-mr":
        return version >= (1, 18)
    return version[0] > 26


def _nan_counts(path: str, md: pq.FileMetaData, footer: Any, plan: ColumnPlan, floats: list[int],
                stats: FooterStats, remote: Storage | None, count_nans: bool) -> list[int | None]:
    """The NaN counts of the FLOAT/DOUBLE columns `floats` (positions in `plan`): from the footer's thrift,
    else (with `count_nans`) counted in the values; unknown where neither answers."""
    out: list[int | None] = [None] * len(plan)
    rows = stats.num_rows
    for k in floats:  # a column known to hold only nulls holds no NaN
        nulls = stats.rows[k][2]
        if rows is not None and nulls is not None and nulls >= rows:
            out[k] = 0
    ask = [k for k in floats if out[k] is None]
    if not ask:
        return out
    if not writer_may_write_nan_counts(md.created_by):
        found: list[int | None] = [None] * len(ask)
    else:
        found = _footer_nan_counts(path, md, footer, [plan[k][0] for k in ask])
    for k, count in zip(ask, found, strict=True):
        out[k] = count
    missing = [k for k in ask if out[k] is None]
    if count_nans and missing:
        counted = count_column_nans(path, [plan[k][1] for k in missing], remote, stats.size, md)
        for k, count in zip(missing, counted, strict=True):
            out[k] = count
    return out


def _footer_nan_counts(path: str, md: pq.FileMetaData, footer: Any, columns: list[int]) -> list[int | None]:
    """Each of `columns`' NaN count from the footer's thrift (None where it has none, or does not decode)."""
    try:
        if footer is None:
            footer = md.__reduce__()[1][0]  # pyarrow's own serialization keeps Statistics.nan_count
        group_rows = [md.row_group(g).num_rows for g in range(md.num_row_groups)]
        return nan_counts(footer, columns, group_rows, path)
    except (FooterThriftError, IndexError, TypeError, AttributeError):
        return [None] * len(columns)


def count_column_nans(path: str, columns: Sequence[str], storage: Storage | None = None,
                      size: int | None = None, metadata: pq.FileMetaData | None = None) -> list[int | None]:
    """The NaN count of each of `columns` (leaf names, dotted for struct fields) in a parquet file, read from
    the values of those columns only (a local file with its footer `metadata` when given: not parsed again);
    None for all of them when the file cannot be read."""
    try:
        if storage is None:
            table = pq.ParquetFile(path, metadata=metadata).read(columns=list(columns), use_threads=False)
        else:
            table = storage.parquet_fragment(path, size).to_table(columns=list(columns), use_threads=False)
        flat = table.flatten()
        while any(pa.types.is_struct(f.type) for f in flat.schema):
            flat = flat.flatten()
        out: list[int | None] = []
        for name in columns:
            values = flat.column(name)
            if not pa.types.is_floating(values.type):
                out.append(None)
                continue
            out.append(int(pc.sum(pc.is_nan(values)).as_py() or 0))
        return out
    except Exception:  # a file that changed or cannot be read: unknown
        return [None] * len(columns)


def footer_stats_of(md: pq.FileMetaData, plan: ColumnPlan | pa.Schema) -> FooterStats:
    if isinstance(plan, pa.Schema):  # tests hand in fake metadata with its Arrow schema
        leaf_types = {leaf.name: leaf.type for leaf in stat_leaves(plan)}
        columns: ColumnPlan = []
        for i in range(md.num_columns):
            col = md.schema.column(i)
            typ = leaf_types.get(col.path)
            if col.max_repetition_level == 0 and typ is not None:
                columns.append((i, col.path, _read_mode(col, typ), typ, _exactness(typ)))
    else:
        columns = plan
    n_groups = md.num_row_groups
    byte_array_exact = writer_keeps_exact_bounds(md.created_by)
    if n_groups == 1:
        rows = _one_row_group(md.row_group(0), columns, byte_array_exact)
    else:
        rows = _row_groups(md, n_groups, columns, byte_array_exact)
    return FooterStats(md.num_rows, columns, rows)


def _one_row_group(rg: Any, columns: ColumnPlan, byte_array_exact: bool | None) -> list[FooterValues]:
    """`_row_groups` for the common file of one row group, with fewer calls into pyarrow per column."""
    if rg.num_rows == 0:
        return [(None, None, 0, None, None)] * len(columns)
    column = rg.column
    out: list[FooterValues] = []
    append = out.append
    for i, _name, mode, _typ, exact in columns:
        st = column(i).statistics
        if st is None:
            append(_UNKNOWN_VALUES)
            continue
        nulls = st.null_count if st.has_null_count else None
        # no bounds: unknown, or an all-null row group (which has none to give); either way none here
        if mode == MODE_UNKNOWN or not st.has_min_max:
            append((None, None, nulls, None, None))
            continue
        if mode == MODE_LOGICAL:
            try:
                a, b = st.min, st.max
            except (UnicodeDecodeError, ValueError, ArithmeticError):  # e.g. invalid UTF-8 bounds
                append((None, None, nulls, None, None))
                continue
        else:
            a, b = st.min_raw, st.max_raw
            if mode == MODE_FLOAT:
                if a != a or b != b:  # NaN
                    append((None, None, nulls, None, None))
                    continue
            elif mode == MODE_DECIMAL and type(a) is bytes:
                if not a or not b:
                    append((None, None, nulls, None, None))
                    continue
                a, b = _from_bytes(a, "big", signed=True), _from_bytes(b, "big", signed=True)
        e = byte_array_exact if exact is None else exact
        append((a, b, nulls, e, e))
    return out


_from_bytes = int.from_bytes


def _row_groups(md: Any, n_groups: int, columns: ColumnPlan, byte_array_exact: bool | None) -> list[FooterValues]:
    """Bounds combined over row groups: min of mins, max of maxes (compared in the ordered forms of
    FooterStats); null counts summed; anything unknown in one row group makes the file's value unknown."""
    groups = [md.row_group(g) for g in range(n_groups)]
    out: list[FooterValues] = []
    for i, _name, mode, _typ, exact in columns:
        lo: Any = None
        hi: Any = None
        bounds_known = mode != MODE_UNKNOWN
        nulls: int | None = 0
        seen_values = False
        for rg in groups:
            rg_rows = rg.num_rows
            if rg_rows == 0:
                continue
            st = rg.column(i).statistics
            if st is None:
                nulls = None
                bounds_known = False
                break
            rg_nulls = st.null_count if st.has_null_count else None
            if rg_nulls is None:
                nulls = None
            elif nulls is not None:
                nulls += rg_nulls
            if not bounds_known:
                continue
            if not st.has_min_max:
                if rg_nulls is not None and rg_nulls >= rg_rows:
                    continue  # an all-null row group has no bounds to give
                bounds_known = False
                continue
            if mode == MODE_LOGICAL:
                try:
                    a, b = st.min, st.max
                except (UnicodeDecodeError, ValueError, ArithmeticError):  # e.g. invalid UTF-8 bounds
                    bounds_known = False
                    continue
            else:
                a, b = st.min_raw, st.max_raw
                if mode == MODE_FLOAT:
                    if math.isnan(a) or math.isnan(b):
                        bounds_known = False
                        continue
                elif mode == MODE_STRING:
                    # UTF-8 bytes order like the strings; any undecodable bound makes the file unknown
                    try:
                        a.decode("utf-8")
                        b.decode("utf-8")
                    except UnicodeDecodeError:
                        bounds_known = False
                        continue
                elif mode == MODE_DECIMAL and type(a) is bytes:
                    if not a or not b:
                        bounds_known = False
                        continue
                    a, b = _from_bytes(a, "big", signed=True), _from_bytes(b, "big", signed=True)
            if not seen_values:
                lo, hi, seen_values = a, b, True
            else:
                if a < lo:
                    lo = a
                if b > hi:
                    hi = b
        if not bounds_known or not seen_values:
            lo = hi = None
        exact_lo = exact_hi = None if lo is None else (byte_array_exact if exact is None else exact)
        out.append((lo, hi, nulls, exact_lo, exact_hi))
    return out


def writer_keeps_exact_bounds(created_by: str | None) -> bool | None:
    """Whether a writer's byte-array (string/binary) bounds can be used as exact, judged by `created_by`.

    Parquet may truncate byte-array bounds and pyarrow does not expose the footer's
    `is_{min,max}_value_exact`.
    - Arrow's C++ writer (pyarrow) never truncates column-chunk statistics: it drops values longer than its
      limit instead (tested): True.
    - parquet-mr / parquet-java (what Hudi's and Spark's writers use) does not truncate footer statistics by
      default (`parquet.statistics.truncate.length` defaults to Integer.MAX_VALUE; only the column index is
      truncated to 64 bytes), and when configured to, its BinaryTruncator keeps a prefix as the minimum and an
      incremented prefix as the maximum: still a true lower and upper bound, never equal to each other. Every
      min/max verdict stays sound with such bounds: True. Versions before 1.10 ordered strings as signed
      bytes; pyarrow already ignores those statistics (PARQUET-686).
    - Other writers (parquet-rs truncates to 64 bytes by default, unknown ones): None (unknown).
    """
    if created_by and (created_by.startswith("parquet-cpp") or created_by.startswith("parquet-mr")):
        return True
    return None


def _exactness(typ: pa.DataType) -> bool | None:
    """Bounds of numbers, dates, times and decimals are exact; byte-array bounds (strings, binary) depend on
    the writer (see writer_keeps_exact_bounds): None here."""
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ) \
            or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
        return None
    return True



def _utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def stat_array(values: Sequence[Any], typ: pa.DataType, mode: int = MODE_RAW) -> pa.Array:
    """Statistics values (in the form FooterStats keeps them for `mode`) as an array of the column's Arrow
    type; raises when they do not fit it."""
    if mode == MODE_STRING:  # UTF-8 bytes, validated by the cast; an undecodable bound is unknown
        raw = pa.array(values, pa.binary())
        try:
            return raw.cast(typ)
        except pa.ArrowInvalid:
            return pa.array([v if v is None or _utf8(v) else None for v in values], pa.binary()).cast(typ)
    if mode == MODE_DECIMAL:  # unscaled integers: built as decimals of scale 0, the same buffers read with the scale
        narrow = typ.precision <= 38
        unscaled = pa.array(values, pa.decimal128(38, 0) if narrow else pa.decimal256(76, 0))
        scaled_type = pa.decimal128(38, typ.scale) if narrow else pa.decimal256(76, typ.scale)
        scaled = pa.Array.from_buffers(scaled_type, len(unscaled), unscaled.buffers(), unscaled.null_count)
        return scaled.cast(typ, safe=True)  # checks the precision
    if pa.types.is_timestamp(typ) or pa.types.is_time64(typ):
        return pa.array(values, pa.int64()).cast(typ)
    if pa.types.is_date32(typ) or pa.types.is_time32(typ):
        return pa.array(values, pa.int32()).cast(typ)
    if pa.types.is_date64(typ):
        return pa.array(values, pa.int64()).cast(typ)
    if pa.types.is_decimal(typ):
        return pa.array([v if v is None or isinstance(v, Decimal) else Decimal(v) for v in values], typ)
    return pa.array(values, typ)

