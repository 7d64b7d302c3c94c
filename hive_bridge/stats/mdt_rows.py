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
import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge import config
from hive_bridge.mdt.colstats import BOOL, BYTES, DATE, DECIMAL, INT, INT64_MAX, STR
from hive_bridge.mdt.records import ColumnStatsEntry, decimal_of
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
            return value if value_type == "LONG" and -INT64_MAX <= value <= INT64_MAX else None
        if unit == "us":
            return value
        if unit == "ns":
            scaled = value * 1000
            return scaled if -INT64_MAX <= scaled <= INT64_MAX else None
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


def partition_rows(entries: Iterable[ColumnStatsEntry], partitions: Sequence[str],
                   leaves: Sequence[tuple[str, pa.DataType]]) -> pa.Table:
    """The metadata table's partition statistics as a statistics table whose rows are partitions (``partition``,
    then each leaf's bound columns; ``num_rows`` unknown), one row per entry of ``partitions``, in order.

    What a partition's entry proves is less than a file's: it aggregates the entries of the partition's files,
    so whatever a file's entry may get wrong the aggregate hides. The bounds are mapped as a file's are
    (floats never used, timestamps by their value type); besides:

    - the null count is unknown: a sum over the files' entries overcounts after updates (never tight) and leaves
      out files that have no entry for the column (written before the column was added, holding nulls);
    - string and binary bounds are used only when the partition's null count is 0: a file of long strings
      without parquet statistics is recorded as all null (apache/hudi#18755) and adds no bound to the
      aggregate, but adds its values to the null count, so a null count of 0 proves there was none;
    - a column whose value count is below the partition's greatest (``entries`` should hold the meta columns'
      entries too, or every column's) left out files (every file counts each top-level column's values, nulls
      included, once per row): a file written before the column was indexed or added; it is unknown;
    - a partition without an entry for a column, or without entries at all, has that column unknown."""
    by_partition: dict[str, dict[str, ColumnStatsEntry]] = {}
    for e in entries:
        if e.is_deleted or e.partition is None:
            continue
        by_partition.setdefault(e.partition.strip("/"), {})[e.column] = e
    most = {p: max((e.value_count or 0 for e in cols.values()), default=0) for p, cols in by_partition.items()}
    chosen = [by_partition.get(p.strip("/"), {}) for p in partitions]
    counts = [most.get(p.strip("/"), 0) for p in partitions]
    columns: dict[str, Any] = {"partition": pa.array(list(partitions), pa.string()),
                               "num_rows": pa.nulls(len(partitions), pa.int64())}
    for name, typ in leaves:
        lo: list[Any] = []
        hi: list[Any] = []
        stringy = pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ) \
            or pa.types.is_large_binary(typ)
        for c, count in zip(chosen, counts, strict=True):
            got = c.get(name)
            a = b = None
            if got is not None and got.value_count == count and not (stringy and got.null_count != 0):
                a, b = _bound(got.min, typ, False, got.value_type), _bound(got.max, typ, True, got.value_type)
            lo.append(a)
            hi.append(b)
        columns.update(bound_columns(name, typ, _typed(lo, typ), _typed(hi, typ),
                                     pa.nulls(len(partitions), pa.int64())))
    return pa.table(columns)


__all__ = ["FileKey", "index_entries", "mdt_rows", "partition_rows"]


# ================================================================================================ into rows


def _typed_bounds(kind: np.ndarray, ints: np.ndarray, bins: pa.Array, scales: np.ndarray,
                  value_type: pa.Array, typ: pa.DataType, upper: bool) -> pa.Array:
    """``mdt_stats._bound`` + ``_typed`` over arrays: the bounds as values of ``typ``, null where unusable."""
    t = pa.types
    n = len(kind)
    if t.is_floating(typ) or n == 0:
        return pa.nulls(n, typ)
    if t.is_boolean(typ):
        ok = kind == BOOL
        return pa.array(ints.astype(bool), pa.bool_(), mask=~ok)
    if t.is_integer(typ):
        ok = kind == INT
        info = np.iinfo(typ.to_pandas_dtype())
        ok &= (ints >= int(info.min)) & (ints <= min(int(info.max), INT64_MAX))
        return pa.array(np.where(ok, ints, 0), pa.int64(), mask=~ok).cast(typ)
    if t.is_string(typ) or t.is_large_string(typ):
        ok = kind == STR
        strings = pc.if_else(pa.array(ok), bins, pa.nulls(n, pa.binary()))
        return strings.cast(pa.string()).cast(typ)
    if t.is_binary(typ) or t.is_large_binary(typ):
        ok = kind == BYTES
        return pc.if_else(pa.array(ok), bins, pa.nulls(n, pa.binary())).cast(typ)
    if t.is_date32(typ):
        ok = ((kind == DATE) | (kind == INT)) & (np.abs(ints) <= 2_932_896)  # datetime.date's range
        return pa.array(np.where(ok, ints, 0).astype(np.int32), pa.int32(), mask=~ok).cast(pa.date32())
    if t.is_timestamp(typ):
        vt = value_type.to_numpy(zero_copy_only=False)
        micros = np.isin(vt, list(_MICROS))
        raw = vt == "LONG"
        ok = (kind == INT) & (micros | raw)
        out = ints.copy()
        unit = typ.unit
        if unit == "ns":
            big = np.abs(ints) > INT64_MAX // 1000
            ok &= ~(micros & big)
            out = np.where(micros & ~big, ints * 1000, out)
        elif unit in ("ms", "s"):
            per = 1000 if unit == "ms" else 1_000_000
            scaled = -((-ints) // per) if upper else ints // per
            out = np.where(micros, scaled, out)
        ok &= out != np.iinfo(np.int64).min
        return pa.array(np.where(ok, out, 0), pa.int64(), mask=~ok).cast(typ)
    # decimals, date64 and the rest: the record path's own conversion, value by value (rare columns)
    bl = bins.to_pylist()
    vts = value_type.to_pylist()
    values: list[Any] = []
    for i in range(n):
        k = int(kind[i])
        if k == DECIMAL:
            v: Any = decimal_of(bl[i] or b"", int(scales[i]))
        elif k in (INT, BOOL):
            v = int(ints[i]) if k == INT else bool(ints[i])
        elif k == DATE:
            v = _dt.date(1970, 1, 1) + _dt.timedelta(days=int(ints[i])) if abs(int(ints[i])) <= 2_932_896 else None
        elif k == STR:
            v = bl[i].decode("utf-8") if bl[i] is not None else None
        elif k == BYTES:
            v = bl[i]
        else:
            v = None
        values.append(_bound(v, typ, upper, vts[i]))
    return _typed(values, typ)


def file_keys_table(keys: Sequence[tuple[str, str, int, str, str, bool]]) -> pa.Table:
    """(path, partition, size, instant, file name, is a log file) tuples as the table
    :func:`mdt_rows_columnar` takes."""
    cols = list(zip(*keys, strict=True)) if keys else [()] * 6
    return pa.table({"path": pa.array(cols[0], pa.string()), "partition": pa.array(cols[1], pa.string()),
                     "size": pa.array(cols[2], pa.int64()), "instant": pa.array(cols[3], pa.string()),
                     "name": pa.array(cols[4], pa.string()), "is_log": pa.array(cols[5], pa.bool_())})


def mdt_rows_columnar(keys: pa.Table | Sequence[tuple[str, str, int, str, str, bool]], entries: pa.Table,
                      leaves: Sequence[tuple[str, pa.DataType]], appendable_logs: bool) -> tuple[pa.Table, list[bool]]:
    """:func:`hive_bridge.stats.mdt_rows.mdt_rows` for entries read by :func:`read_column_stats`; ``keys`` as
    tuples or as a :func:`file_keys_table` (its ``name`` column may be left out: an entry is matched by its
    partition and file name joined as the listing's path). The keys' paths are distinct."""
    if not isinstance(keys, pa.Table):
        keys = file_keys_table(keys)
    rows_key = ("rows", id(entries), _fingerprint(keys), tuple((n, str(t)) for n, t in leaves), appendable_logs)
    cached = _rows_cache.get(rows_key)
    if cached is not None and cached[0] is entries:
        return cached[1], list(cached[2])
    rows, found = _mdt_rows(keys, entries, leaves, appendable_logs)
    _rows_cache[rows_key] = (entries, rows, found)
    while len(_rows_cache) > 4:
        _rows_cache.popitem(last=False)
    return rows, found


#: the rows made for a listing from one (cached) entries table: a repeated planning of an unchanged table makes
#: the same rows again; the entries table itself is kept in the value (its id is only valid while it lives)
_rows_cache: OrderedDict[tuple[Any, ...], tuple[pa.Table, pa.Table, list[bool]]] = OrderedDict()
config.register_cache("stats.mdt_rows: index rows made from the metadata table", _rows_cache.clear)


def _fingerprint(keys: pa.Table) -> tuple[int, bytes]:
    """A digest of a keys table's content (paths, sizes, instants, log flags)."""
    h = hashlib.blake2b(digest_size=16)
    for name in ("path", "partition", "size", "instant", "is_log"):     # (a name is a function of its path)
        col = keys.column(name).combine_chunks()
        for buf in col.buffers():
            h.update(b"-" if buf is None else f"+{buf.size}:".encode())
            if buf is not None:
                h.update(buf)
        h.update(f"@{col.offset}/{len(col)}".encode())
    return keys.num_rows, h.digest()


def _mdt_rows(keys: pa.Table, entries: pa.Table, leaves: Sequence[tuple[str, pa.DataType]],
              appendable_logs: bool) -> tuple[pa.Table, list[bool]]:
    n = keys.num_rows
    is_log = keys.column("is_log").to_numpy(zero_copy_only=False).astype(bool)
    usable = entries.filter(pc.and_(pc.is_valid(entries.column("partition")),
                                    pc.is_valid(entries.column("file_name")))).combine_chunks()
    # an entry's file as the listing names it: <partition>/<file name> (the file name alone in a table without
    # partitions); each entry's row among the keys (their paths are distinct), -1 for a file not listed
    part = pc.utf8_trim(usable.column("partition"), "/")
    name = usable.column("file_name")
    ekey = pc.binary_join_element_wise(part, name, "/")
    if pc.any(pc.equal(part, "")).as_py():
        ekey = pc.utf8_ltrim(ekey, "/")        # "/<name>": a partition's trimmed name has no leading "/"
    row_of = pc.fill_null(pc.index_in(ekey, value_set=keys.column("path")), -1).to_numpy(zero_copy_only=False)
    columns_of = usable.column("column")
    value_count = usable.column("value_count")
    vc_all = value_count.fill_null(0).to_numpy(zero_copy_only=False)
    vc_ok_all = value_count.is_valid().to_numpy(zero_copy_only=False)
    by_column: dict[str, np.ndarray] = {}
    any_entry = np.zeros(n, dtype=bool)
    vc_min = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    vc_max = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    vc_any = np.zeros(n, dtype=bool)
    for column in pc.unique(columns_of).to_pylist():
        if column is None:
            continue
        mine = np.flatnonzero(pc.equal(columns_of, column).to_numpy(zero_copy_only=False) & (row_of >= 0))
        rows = row_of[mine]
        pos = np.full(n, -1, dtype=np.int64)
        if len(rows) and np.bincount(rows, minlength=n).max() > 1:
            np.maximum.at(pos, rows, mine)      # a file with two entries: the later one (as a dict update)
        else:
            pos[rows] = mine
        has = pos >= 0
        any_entry |= has
        at = np.maximum(pos, 0)
        vc_valid = has & vc_ok_all[at]
        vc_np = vc_all[at]
        vc_min = np.where(vc_valid, np.minimum(vc_min, vc_np), vc_min)
        vc_max = np.where(vc_valid, np.maximum(vc_max, vc_np), vc_max)
        vc_any |= vc_valid
        by_column[column] = pos
    found = any_entry & ~(is_log & appendable_logs) & vc_any & (vc_min == vc_max)
    found &= ~(is_log & (vc_min == 0))
    rows = np.flatnonzero(found)
    sel = pa.array(rows, pa.int64())
    columns: dict[str, Any] = {
        "path": keys.column("path").take(sel).combine_chunks(),
        "partition": keys.column("partition").take(sel).combine_chunks(),
        "file_size": keys.column("size").take(sel).combine_chunks(),
        "instant": keys.column("instant").take(sel).combine_chunks(),
        "num_rows": pa.array(vc_min[rows], pa.int64()),
    }
    m = len(rows)
    needed = usable.select(["value_count", "null_count", "value_type", *(f"{side}_{f}" for side in ("lo", "hi")
                                                                           for f in ("kind", "int", "bin", "scale"))])
    for leaf, typ in leaves:
        got = by_column.get(leaf)
        if got is None or m == 0:
            columns.update(bound_columns(leaf, typ, pa.nulls(m, typ), pa.nulls(m, typ), pa.nulls(m, pa.int64())))
            continue
        pos_sel = got[rows]
        pos_i = pa.array(np.maximum(pos_sel, 0), pa.int64(), mask=pos_sel < 0)
        t = needed.take(pos_i)
        vc = t.column("value_count").combine_chunks()
        nc = t.column("null_count").combine_chunks()
        bad = pc.and_(pc.and_(pc.is_valid(nc), pc.is_valid(vc)),
                      pc.or_(pc.less(nc, 0), pc.greater(nc, vc)))
        nc = pc.if_else(pc.fill_null(bad, False), pa.nulls(m, pa.int64()), nc)
        if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_binary(typ) \
                or pa.types.is_large_binary(typ):
            allnull = pc.and_(pc.greater_equal(nc, vc), pc.greater(vc, 0))
            nc = pc.if_else(pc.fill_null(allnull, False), pa.nulls(m, pa.int64()), nc)
        present = pos_i.is_valid().to_numpy(zero_copy_only=False)
        vt = t.column("value_type").combine_chunks()

        def side(prefix: str, upper: bool, t: pa.Table = t, present: np.ndarray = present, typ: pa.DataType = typ,
                 vt: pa.Array = vt) -> pa.Array:
            kind = np.where(present, t.column(prefix + "_kind").fill_null(0).to_numpy(zero_copy_only=False), 0)
            ints = t.column(prefix + "_int").fill_null(0).to_numpy(zero_copy_only=False)
            scales = t.column(prefix + "_scale").fill_null(0).to_numpy(zero_copy_only=False)
            bins = t.column(prefix + "_bin").combine_chunks()
            return _typed_bounds(kind.astype(np.int8), ints, bins, scales, vt, typ, upper)

        # a bound unknown on one side is unknown on both: bound_columns applies that rule
        columns.update(bound_columns(leaf, typ, side("lo", False), side("hi", True), nc))
    return pa.table(columns), found.tolist()
