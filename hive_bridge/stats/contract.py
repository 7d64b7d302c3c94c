"""Per-file column statistics: the columnar table layout the index produces, and a scalar model of one row.

The statistics table (``pyarrow.Table``, one row per file):

- ``path`` string, ``partition`` string, ``file_size`` int64, ``instant`` string,
  ``num_rows`` int64 (null = unknown), ``has_log_files`` bool (such files are always kept);
- per data column ``c`` (dotted names for nested fields): ``c::min`` and ``c::max`` in the column's arrow type
  (null = unknown bound), ``c::null_count`` int64 (null = unknown, never read as 0), ``c::min_exact`` and
  ``c::max_exact`` bool (False = truncated bound, never used to conclude anything; null = unknown: not exact for
  string/binary columns, exact for the others), and for a float/double column ``c::nan_count`` int64 (null =
  unknown: the column may hold NaN that its min/max do not show, since parquet statistics ignore NaN; a table
  without the column is read as unknown too).
- a column absent from a file's schema has null_count = num_rows and null bounds in that file.

:class:`FileStats` / :class:`ColumnStats` hold the same facts for one file, for the scalar evaluator and the
explain path. Values are Python values of the column's arrow type as ``pyarrow`` gives them, except that
timestamps are integers in the column's unit (so nanoseconds survive) and dates may be ``datetime.date`` or
days since the epoch.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

from sarg.schema import find_column

SEP = "::"
MIN, MAX, NULL_COUNT, MIN_EXACT, MAX_EXACT, NAN_COUNT = "min", "max", "null_count", "min_exact", "max_exact", \
    "nan_count"
STAT_SUFFIXES = (MIN, MAX, NULL_COUNT, MIN_EXACT, MAX_EXACT, NAN_COUNT)
# what every index row has for a statistics column; float columns have NAN_COUNT as well (stat_kinds)
BOUND_STATS = (MIN, MAX, NULL_COUNT, MIN_EXACT, MAX_EXACT)
FLOAT_STATS = (*BOUND_STATS, NAN_COUNT)
#: one row per file: these columns first, then the statistics columns of every data column
FILE_FIELDS = (
    pa.field("path", pa.string()),
    pa.field("partition", pa.string()),
    pa.field("file_size", pa.int64()),
    pa.field("instant", pa.string()),
    pa.field("num_rows", pa.int64()),
    pa.field("has_log_files", pa.bool_()),
)
FILE_COLUMNS = tuple(f.name for f in FILE_FIELDS)

_EPOCH_DATE = _dt.date(1970, 1, 1)

StatValue = int | float | str | bytes | bool | Decimal | _dt.date | _dt.datetime


def stat_name(column: str, stat: str) -> str:
    """``stat_name("a.b", "min") == "a.b::min"``."""
    return f"{column}{SEP}{stat}"


def has_nan_count(typ: pa.DataType) -> bool:
    """Whether a column of this arrow type has a ``nan_count`` statistic (float and double columns)."""
    return bool(pa.types.is_floating(typ))


def stat_kinds(typ: pa.DataType) -> tuple[str, ...]:
    """The statistics every row has for a column of this arrow type, in order."""
    return FLOAT_STATS if has_nan_count(typ) else BOUND_STATS


def bound_columns(column: str, typ: pa.DataType, lo: pa.Array, hi: pa.Array, null_counts: pa.Array,
                  exact: pa.Array | None = None, nan_counts: pa.Array | None = None) -> dict[str, pa.Array]:
    """One leaf's statistics columns (:func:`stat_kinds`). A bound unknown on one side is unknown on both (with
    its exactness); ``exact`` None: exact wherever both bounds are known (every value was seen);
    ``nan_counts`` None: unknown (a float column's only)."""
    import pyarrow.compute as pc

    both = pc.and_(pc.is_valid(lo), pc.is_valid(hi))
    if both.false_count:
        lo = pc.if_else(both, lo, pa.scalar(None, typ))
        hi = pc.if_else(both, hi, pa.scalar(None, typ))
        if exact is not None:
            exact = pc.if_else(both, exact, pa.scalar(None, pa.bool_()))
    if exact is None:
        exact = pc.if_else(both, True, pa.scalar(None, pa.bool_()))
    out = {stat_name(column, MIN): lo, stat_name(column, MAX): hi, stat_name(column, NULL_COUNT): null_counts,
           stat_name(column, MIN_EXACT): exact, stat_name(column, MAX_EXACT): exact}
    if has_nan_count(typ):
        out[stat_name(column, NAN_COUNT)] = pa.nulls(len(lo), pa.int64()) if nan_counts is None else nan_counts
    return out


def split_stat_name(name: str) -> tuple[str, str | None]:
    """``"a.b::min" -> ("a.b", "min")``; ``("path", None)`` for a column that is not a statistic."""
    base, sep, stat = name.rpartition(SEP)
    return (base, stat) if sep and stat in STAT_SUFFIXES else (name, None)


def stat_fields(column: str, arrow_type: pa.DataType) -> list[pa.Field]:
    """The statistics columns every row has for one data column (:func:`stat_kinds`, in that order)."""
    fields = [pa.field(stat_name(column, MIN), arrow_type), pa.field(stat_name(column, MAX), arrow_type),
              pa.field(stat_name(column, NULL_COUNT), pa.int64()), pa.field(stat_name(column, MIN_EXACT), pa.bool_()),
              pa.field(stat_name(column, MAX_EXACT), pa.bool_())]
    if has_nan_count(arrow_type):
        fields.append(pa.field(stat_name(column, NAN_COUNT), pa.int64()))
    return fields


def data_columns(schema: pa.Schema) -> dict[str, pa.DataType]:
    """Data column name -> arrow type, from the ``c::min`` / ``c::max`` columns of a statistics table."""
    out: dict[str, pa.DataType] = {}
    for f in schema:
        base, sep, stat = f.name.rpartition(SEP)
        if sep and stat in (MIN, MAX) and base not in out:
            out[base] = f.type
    # columns that only have a null_count (no bounds column at all) are still known columns
    for f in schema:
        base, sep, stat = f.name.rpartition(SEP)
        if sep and stat in STAT_SUFFIXES and base not in out:
            out[base] = pa.null()
    return out


def resolve_column(columns: Mapping[str, object], name: str) -> str | None:
    """The statistics column a SearchArgument column name means, by sarg's one rule for names
    (:func:`sarg.schema.find_column`: exact, else the single case-insensitive match); None if absent or
    ambiguous."""
    found = find_column(columns, name)
    return None if found is None else found[0]


@dataclass(frozen=True)
class ColumnStats:
    """One column's statistics in one file. None means unknown, never zero."""

    min: StatValue | None = None
    max: StatValue | None = None
    null_count: int | None = None
    min_exact: bool | None = None
    max_exact: bool | None = None
    nan_count: int | None = None


@dataclass(frozen=True)
class FileStats:
    """One file: its row count (None = unknown), its columns' statistics and their arrow types.

    ``types`` must name the arrow type of every column in ``columns``; a column not in ``columns`` is unknown
    (YES_NO_NULL). ``has_log_files``: a Hudi file slice with log files is always kept."""

    num_rows: int | None
    columns: Mapping[str, ColumnStats] = field(default_factory=dict)
    types: Mapping[str, pa.DataType] = field(default_factory=dict)
    path: str = ""
    has_log_files: bool = False

    def __post_init__(self) -> None:
        missing = [c for c in self.columns if c not in self.types]
        if missing:
            raise ValueError(f"no arrow type for column(s) {missing}")


def _pylist(array: pa.ChunkedArray) -> list[object]:
    t = array.type
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return pa.compute.cast(array, pa.int64()).to_pylist()  # type: ignore[no-any-return]
    return array.to_pylist()  # type: ignore[no-any-return]


def file_stats_from_table(table: pa.Table) -> list[FileStats]:
    """Every row of a statistics table as a FileStats (for the explain path and tests; slow for big tables)."""
    import pyarrow.compute  # noqa: F401  (registers pa.compute)

    n = table.num_rows
    names = set(table.column_names)

    def col(name: str) -> list[object]:
        return _pylist(table.column(name)) if name in names else [None] * n

    num_rows = col("num_rows")
    paths = col("path")
    logs = col("has_log_files")
    types = data_columns(table.schema)
    per_col = {c: {s: col(stat_name(c, s)) for s in STAT_SUFFIXES} for c in types}
    out: list[FileStats] = []
    for i in range(n):
        columns = {
            c: ColumnStats(
                min=stats[MIN][i], max=stats[MAX][i], null_count=stats[NULL_COUNT][i],  # type: ignore[arg-type]
                min_exact=stats[MIN_EXACT][i], max_exact=stats[MAX_EXACT][i],  # type: ignore[arg-type]
                nan_count=stats[NAN_COUNT][i])  # type: ignore[arg-type]
            for c, stats in per_col.items()
        }
        out.append(FileStats(num_rows=num_rows[i], columns=columns, types=types,  # type: ignore[arg-type]
                             path=str(paths[i] or ""), has_log_files=bool(logs[i])))
    return out


def stats_table(files: list[FileStats], types: Mapping[str, pa.DataType] | None = None) -> pa.Table:
    """The statistics table for a list of FileStats (the inverse of :func:`file_stats_from_table`)."""
    import pyarrow.compute  # noqa: F401

    all_types: dict[str, pa.DataType] = dict(types or {})
    for f in files:
        for c, t in f.types.items():
            all_types.setdefault(c, t)
    data: dict[str, pa.Array] = {  # FILE_FIELDS
        "path": pa.array([f.path for f in files], pa.string()),
        "partition": pa.array([""] * len(files), pa.string()),
        "file_size": pa.array([0] * len(files), pa.int64()),
        "instant": pa.array([""] * len(files), pa.string()),
        "num_rows": pa.array([f.num_rows for f in files], pa.int64()),
        "has_log_files": pa.array([f.has_log_files for f in files], pa.bool_()),
    }
    for c, t in all_types.items():
        stats = [f.columns.get(c, ColumnStats()) for f in files]
        for side in (MIN, MAX):
            values = [getattr(s, side) for s in stats]
            if pa.types.is_timestamp(t) and all(v is None or isinstance(v, int) for v in values):
                arr = pa.array(values, pa.int64()).view(t)
            elif pa.types.is_date32(t):
                days = [v if v is None or isinstance(v, int) else (v - _EPOCH_DATE).days for v in values]
                arr = pa.array(days, pa.int32()).view(t)
            else:
                arr = pa.array(values, t)
            data[stat_name(c, side)] = arr
        data[stat_name(c, NULL_COUNT)] = pa.array([s.null_count for s in stats], pa.int64())
        data[stat_name(c, MIN_EXACT)] = pa.array([s.min_exact for s in stats], pa.bool_())
        data[stat_name(c, MAX_EXACT)] = pa.array([s.max_exact for s in stats], pa.bool_())
        if any(s.nan_count is not None for s in stats):
            data[stat_name(c, NAN_COUNT)] = pa.array([s.nan_count for s in stats], pa.int64())
    return pa.table(data)


__all__ = [
    "BOUND_STATS",
    "FILE_COLUMNS",
    "FILE_FIELDS",
    "FLOAT_STATS",
    "SEP",
    "STAT_SUFFIXES",
    "ColumnStats",
    "FileStats",
    "bound_columns",
    "data_columns",
    "file_stats_from_table",
    "has_nan_count",
    "resolve_column",
    "split_stat_name",
    "stat_fields",
    "stat_kinds",
    "stat_name",
    "stats_table",
]
