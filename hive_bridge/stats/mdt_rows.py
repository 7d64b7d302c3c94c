"""The metadata table's column statistics as rows of the statistics table (the index's layout).

Hudi's `column_stats` partition holds one entry per (file, column) for base and log files alike. An entry is
used for a file only when it describes that very file: same partition, same name, and — where it records one —
a log file of a table whose writers append to log files (table versions before 8: an entry written before the
last append does not bound the blocks after it; `totalSize` is a column's size, not the file's, so it cannot
tell) is read from its blocks instead. Mapped into the pruning domains, distrusting what Hudi is known to get wrong:

- bounds are true bounds whatever `isTightBound` says (false: the range may be wider than the data);
- float and double bounds are never used (one NaN in a file has turned Hudi's range into min = max = 0.0,
  apache/hudi#18754; parquet's own min/max ignore NaN anyway): the null count is;
- a string or binary column that Hudi records as all null (nullCount = valueCount) may be a long-string column
  without parquet statistics (apache/hudi#18755): its null count is unknown;
- absent counts are unknown, never zero; a column without an entry is unknown (not "all null": the writer may
  index some columns only); timestamps are microseconds where the value type says so (converted to the
  column's unit, rounded outward), a V1 long is the raw value in the column's unit, anything else unknown;
- a log file whose entries say it holds no value (valueCount 0) is taken as unknown, never as empty: its
  statistics are then read from the log itself.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

from hive_bridge.mdt.table import ColumnStatsEntry
from hive_bridge.stats.contract import bound_columns

_EPOCH = _dt.date(1970, 1, 1)
_UNIT_MICROS = {"s": None, "ms": None, "us": 1, "ns": 1000}

#: (path, partition, size, instant, file name, is a log file)
FileKey = tuple[str, str, int, str, str, bool]


def index_entries(entries: Iterable[ColumnStatsEntry]) -> dict[tuple[str, str], dict[str, ColumnStatsEntry]]:
    """(partition, file name) -> column -> entry; deleted entries dropped."""
    out: dict[tuple[str, str], dict[str, ColumnStatsEntry]] = {}
    for e in entries:
        if e.is_deleted or e.partition is None or e.file_name is None:
            continue
        out.setdefault((e.partition.strip("/"), e.file_name), {})[e.column] = e
    return out


#: value types whose timestamp bounds the metadata reader has put in microseconds (V2 stats, typed wrappers)
_MICROS = frozenset({"TIMESTAMP_MICROS", "LOCAL_TIMESTAMP_MICROS", "TIMESTAMP_MILLIS", "LOCAL_TIMESTAMP_MILLIS",
                     "TIMESTAMP_NANOS", "LOCAL_TIMESTAMP_NANOS"})
_INT64_MAX = 2**63 - 1


def _bound(value: Any, typ: pa.DataType, upper: bool, value_type: str | None = None) -> Any:
    """A bound as a value of the column's Arrow type (None when it cannot be one exactly or outward).

    A timestamp bound is microseconds when its value type says so (V2 statistics, a timestamp wrapper); a
    plain long (Hudi 1.0's V1 LongWrapper) holds the raw value in the column's own unit, as parquet stores it."""
    if value is None:
        return None
    t = pa.types
    if t.is_floating(typ):
        return None  # see the module docstring: never trusted
    if t.is_boolean(typ):
        return value if isinstance(value, bool) else None
    if t.is_integer(typ):
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if t.is_string(typ) or t.is_large_string(typ):
        return value if isinstance(value, str) else None
    if t.is_binary(typ) or t.is_large_binary(typ):
        return bytes(value) if isinstance(value, (bytes, bytearray)) else None
    if t.is_decimal(typ):
        if not isinstance(value, Decimal):
            return None
        return value
    if t.is_date32(typ) or t.is_date64(typ):
        if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return _EPOCH + _dt.timedelta(days=value)
        return None
    if t.is_timestamp(typ):
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        unit = typ.unit
        if value_type not in _MICROS:
            # the raw value in the column's unit (V1 LongWrapper); anything else: not known to be a timestamp
            return value if value_type == "LONG" and -_INT64_MAX <= value <= _INT64_MAX else None
        if unit == "us":
            return value
        if unit == "ns":
            scaled = value * 1000
            return scaled if -_INT64_MAX <= scaled <= _INT64_MAX else None
        per = 1000 if unit == "ms" else 1_000_000
        return -((-value) // per) if upper else value // per  # outward: floor the min, ceil the max
    return None


def _typed(values: list[Any], typ: pa.DataType) -> pa.Array:
    try:
        if pa.types.is_timestamp(typ):
            return pa.array(values, pa.int64()).cast(typ)
        return pa.array(values, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
        out = []
        for v in values:
            try:
                pa.array([v], typ)
                out.append(v)
            except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
                out.append(None)
        return pa.array(out, typ)


def mdt_rows(keys: Sequence[FileKey], by_file: dict[tuple[str, str], dict[str, ColumnStatsEntry]],
             leaves: Sequence[tuple[str, pa.DataType]], appendable_logs: bool) -> tuple[pa.Table, list[bool]]:
    """Rows (index layout, without has_log_files) for the files the metadata table describes, and which of
    `keys` it does. Base files are named by their content (never rewritten under a name); log files of tables
    whose writers append to them (`appendable_logs`: table versions before 8) are never taken from it."""
    found: list[bool] = []
    chosen: list[dict[str, ColumnStatsEntry]] = []
    for _path, partition, _size, _instant, name, is_log in keys:
        cols = by_file.get((partition.strip("/"), name))
        ok = bool(cols) and not (is_log and appendable_logs)
        if cols and ok:
            counts = {e.value_count for e in cols.values() if e.value_count is not None}
            if not counts or len(counts) != 1:
                ok = False  # no row count (or contradicting ones): nothing to judge the file by
            elif is_log and counts == {0}:
                ok = False  # "no value" for a log file: read the log itself rather than trust it as empty
        found.append(ok)
        if ok:
            chosen.append(cols or {})
    rows = [k for k, ok in zip(keys, found, strict=True) if ok]
    columns: dict[str, Any] = {
        "path": pa.array([k[0] for k in rows], pa.string()),
        "partition": pa.array([k[1] for k in rows], pa.string()),
        "file_size": pa.array([k[2] for k in rows], pa.int64()),
        "instant": pa.array([k[3] for k in rows], pa.string()),
        "num_rows": pa.array([next(iter({e.value_count for e in c.values() if e.value_count is not None}))
                              for c in chosen], pa.int64()),
    }
    for name, typ in leaves:
        lo: list[Any] = []
        hi: list[Any] = []
        nulls: list[int | None] = []
        for c in chosen:
            e = c.get(name)
            if e is None:
                lo.append(None)
                hi.append(None)
                nulls.append(None)
                continue
            nc = e.null_count
            if nc is not None and e.value_count is not None and not 0 <= nc <= e.value_count:
                nc = None
            stringy = pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ) \
                or pa.types.is_large_binary(typ)
            if stringy and nc is not None and e.value_count is not None and nc >= e.value_count and e.value_count:
                nc = None  # all null, or a long-string column Hudi had no statistics for (apache/hudi#18755)
            a, b = _bound(e.min, typ, False, e.value_type), _bound(e.max, typ, True, e.value_type)
            if a is None or b is None:
                a = b = None
            lo.append(a)
            hi.append(b)
            nulls.append(nc)
        columns.update(bound_columns(name, typ, _typed(lo, typ), _typed(hi, typ), pa.array(nulls, pa.int64())))
    return pa.table(columns), found


__all__ = ["FileKey", "index_entries", "mdt_rows"]
