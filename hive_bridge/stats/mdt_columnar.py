"""The metadata table's column statistics read column by column, straight into Arrow.

The record-at-a-time path (``MetadataTable.column_stats`` -> ``mdt_stats.index_entries`` -> ``mdt_stats.mdt_rows``)
decodes each Avro record with fastavro, unwraps its bounds into Python values and maps them into the index's
layout one value at a time: ~50 µs per (file, column), 5 s for a 100,000-file table. This module does the same
work on arrays:

1. every HFile cell of a slice source (the base HFile, each HFILE_DATA log block) selected by the column
   prefixes is decoded with :mod:`hive_bridge.formats.avro_columns` into an Arrow table of entries
   (:data:`ENTRY_SCHEMA`: bounds as a kind, an int64, a binary value and a decimal scale);
2. the sources of a slice are merged as ``HoodieMetadataPayload.preCombine`` merges them (newer wins, untight
   bounds widened, counts summed, tombstones and DELETE blocks drop keys): only the few keys written more than
   once go through Python;
3. :func:`mdt_rows_columnar` maps the entries into the index's rows with the same rules as
   :func:`hive_bridge.stats.mdt_rows.mdt_rows` (tested equal on every fixture and on generated tables).

Decoded sources are cached in the process by the identity of the file they come from (path, size, mtime and
block offset): a metadata base file never changes once written and a log file that grows changes size, so a
second query of the same table, even through a new ``HudiTable``, decodes nothing again.

Anything this path does not handle (a map or array value, bounds of different kinds for one key, a malformed
value) raises :class:`Unsupported`; the caller then takes the record-at-a-time path, which handles or reports it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.avro_columns import AvroColumnsError, Decoded, decode_buffer, gather_binary
from hive_bridge.formats.hfile.reader import Cells, HFileError, HFileReader
from hive_bridge.formats.logfile import BlockType, HeaderKey, LogFormatError
from hive_bridge.mdt.table import (
    _VALUE_TYPES,
    _WRAPPER_TYPES,
    COLUMN_STATS,
    _decimal,
    _Unreadable,
    column_index_id,
    deleted_keys,
)
from hive_bridge.stats.contract import bound_columns
from hive_bridge.stats.mdt_rows import _INT64_MAX, _MICROS, _bound, _typed

if TYPE_CHECKING:
    from hive_bridge.mdt.table import MetadataTable, _Slice

__all__ = ["ENTRY_SCHEMA", "Unsupported", "clear_cache", "file_keys_table", "mdt_rows_columnar", "read_column_stats"]


class Unsupported(Exception):
    """This path cannot decide: the caller uses the record-at-a-time path."""


# bound kinds: what the record-at-a-time path's unwrapped Python value is
NONE, BOOL, INT, FLOAT, STR, BYTES, DECIMAL, DATE, OTHER = range(9)

ENTRY_SCHEMA = pa.schema([
    ("key", pa.string()), ("partition", pa.string()), ("file_name", pa.string()), ("column", pa.string()),
    ("value_count", pa.int64()), ("null_count", pa.int64()), ("deleted", pa.bool_()), ("tight", pa.bool_()),
    ("value_type", pa.string()),
    ("lo_kind", pa.int8()), ("lo_int", pa.int64()), ("lo_bin", pa.binary()), ("lo_scale", pa.int32()),
    ("hi_kind", pa.int8()), ("hi_int", pa.int64()), ("hi_bin", pa.binary()), ("hi_scale", pa.int32()),
])

_STATS = ("ColumnStatsMetadata", "HoodieMetadataColumnStats")
_MILLIS_TYPES = frozenset({"TIME_MILLIS", "TIMESTAMP_MILLIS", "LOCAL_TIMESTAMP_MILLIS"})
_NANOS_TYPES = frozenset({"TIMESTAMP_NANOS", "LOCAL_TIMESTAMP_NANOS"})

# ================================================================================================ the cache

_CACHE_BYTES = int(os.environ.get("HIVE_BRIDGE_MDT_CACHE_MB", "512")) * 2**20
_cache: OrderedDict[tuple[Any, ...], pa.Table] = OrderedDict()
_cache_bytes = 0
_cache_lock = threading.Lock()


def _cache_get(key: tuple[Any, ...]) -> pa.Table | None:
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
        return hit


def _cache_put(key: tuple[Any, ...], table: pa.Table) -> None:
    global _cache_bytes
    size = table.nbytes
    if size > _CACHE_BYTES:
        return
    with _cache_lock:
        old = _cache.pop(key, None)
        if old is not None:
            _cache_bytes -= old.nbytes
        _cache[key] = table
        _cache_bytes += size
        while _cache_bytes > _CACHE_BYTES and _cache:
            _, dropped = _cache.popitem(last=False)
            _cache_bytes -= dropped.nbytes


def clear_cache() -> None:
    """Forget every decoded metadata-table source (tests; memory)."""
    global _cache_bytes
    with _cache_lock:
        _cache.clear()
        _cache_bytes = 0


def _identity(mdt: MetadataTable, path: str) -> tuple[str, int]:
    """A metadata file's identity: its path and its listed size (base HFiles are never rewritten; a log file
    that grows by an append changes size)."""
    return path, mdt.file_size(path)


# ================================================================================================ decoding


def _py_kind(node: Any) -> int:
    """The kind of value fastavro returns for a leaf (logical types applied)."""
    logical = node.logical
    if logical == "date":
        return DATE
    if logical == "decimal":
        return DECIMAL
    if logical in ("time-micros", "time-millis"):
        return OTHER                            # a datetime.time: converted below where the record path does
    if logical is not None and "timestamp" in logical:
        return OTHER                            # a datetime: never a bound the record path uses
    return {"boolean": BOOL, "int": INT, "long": INT, "float": FLOAT, "double": FLOAT, "string": STR,
            "bytes": BYTES}.get(node.kind, OTHER)


def _value_types(d: Decoded) -> tuple[np.ndarray, list[str | None]]:
    """Per value: the V2 value type ordinal (-1 for V1) and the additional info."""
    n = d.n
    ordinals, present = d.full((*_STATS, "valueType", "HoodieValueTypeInfo", "typeOrdinal"), np.int64, -1)
    if not present.any():
        return np.full(n, -1, dtype=np.int64), [None] * n
    if ((ordinals[present] < 0) | (ordinals[present] >= len(_VALUE_TYPES))).any():
        raise Unsupported("a column stats value type ordinal is unknown")
    codes = np.where(present & (ordinals != 0), ordinals, -1)     # ordinal 0 is "V1": the wrapper says
    infos = d.binary((*_STATS, "valueType", "HoodieValueTypeInfo", "additionalInfo", "string"), True).to_pylist()
    return codes, infos


def _side(d: Decoded, field: str, codes: np.ndarray, infos: list[str | None],
          upper: bool) -> tuple[np.ndarray, np.ndarray, pa.Array, np.ndarray, np.ndarray]:
    """(kind, int value, binary value, decimal scale, V1 value type) of the min or max bound of every value:
    what ``metadata._unwrap`` makes of it, as arrays."""
    n = d.n
    kind = np.zeros(n, dtype=np.int8)
    ints = np.zeros(n, dtype=np.int64)
    scales = np.zeros(n, dtype=np.int32)
    bins: pa.Array = pa.nulls(n, pa.binary())
    v1_types = np.full(n, None, dtype=object)
    branch = d.branches.get((*_STATS, field))
    if branch is None:
        return kind, ints, bins, scales, v1_types
    reached = np.zeros(n, dtype=bool)
    for path, col in d.columns.items():
        if not (path[: len(_STATS) + 1] == (*_STATS, field) and len(path) == len(_STATS) + 3):
            continue
        wrapper = path[len(_STATS) + 1]
        rows = col.rows
        reached[rows] = True
        node = col.node
        pk = _py_kind(node)
        is_time = node.logical in ("time-micros", "time-millis")
        time_factor = 1000 if node.logical == "time-millis" else 1
        vt1 = _WRAPPER_TYPES.get(wrapper)
        k = np.full(len(rows), pk, dtype=np.int16)
        iv = col.values.astype(np.int64) if col.values is not None and col.values.dtype != np.float64 \
            else np.zeros(len(rows), dtype=np.int64)
        sc = np.zeros(len(rows), dtype=np.int32)
        if pk == DECIMAL:
            sc[:] = node.scale or 0
        code = codes[rows]
        v1 = code < 0
        if v1.any():
            if vt1 is None or vt1 == "ARRAY":
                raise Unsupported(f"column stats bound of wrapper {wrapper!r}")
            v1_types[rows[v1]] = vt1
            if vt1 == "DATE" and pk == INT:
                k[v1] = DATE
            elif vt1 == "DECIMAL" and pk == BYTES:
                k[v1] = DECIMAL
                sc[v1] = 15
            elif vt1 == "TIME_MICROS" and is_time:
                k[v1] = INT
                iv[v1] *= time_factor
        for c in np.unique(code[~v1]):
            m = code == c
            name = _VALUE_TYPES[int(c)]
            if name == "DECIMAL":
                if pk not in (DECIMAL, BYTES):
                    raise Unsupported("a decimal bound that is not bytes")
                for j in np.flatnonzero(m):
                    try:
                        scale = int(str(infos[int(rows[j])]).split(",")[1])
                    except (IndexError, ValueError):
                        raise Unsupported("decimal column stats without precision,scale") from None
                    if pk == BYTES:
                        sc[j] = scale
                k[m] = DECIMAL
            elif name == "DATE":
                if pk == INT:
                    k[m] = DATE
            elif name in _MILLIS_TYPES or name in _NANOS_TYPES:
                if pk not in (INT, BOOL):
                    raise Unsupported(f"a {name} bound of kind {pk}")
                k[m] = INT
                if name in _MILLIS_TYPES:
                    big = m & (np.abs(iv) > _INT64_MAX // 1000)
                    k[big] = OTHER
                    iv[m & ~big] *= 1000
                else:
                    q, r = np.divmod(iv[m], 1000)
                    iv[m] = np.where(r != 0, q + 1, q) if upper else q
            elif name == "TIME_MICROS" and is_time:
                k[m] = INT
                iv[m] *= time_factor
        if is_time:
            k[(k != INT)] = OTHER
        kind[rows] = k
        ints[rows] = iv
        scales[rows] = sc
        if col.starts is not None:
            bins = pc.coalesce(bins, d.binary(path, pk == STR).cast(pa.binary()))
    if ((branch > 0) & ~reached).any():
        raise Unsupported(f"{field} bounds without a value")
    return kind, ints, bins, scales, v1_types


def _entries_of(cells: Cells, keys: pa.Array, schema_json: str) -> pa.Table:
    """Column statistics records (the values of HFile cells) as entries (partition not yet resolved)."""
    if not len(cells):
        return ENTRY_SCHEMA.empty_table()
    try:
        d = decode_buffer(cells.buffer, cells.value_starts, cells.value_ends, schema_json)
        top = d.branches.get(("ColumnStatsMetadata",))
        if top is None or (top != 1).any():
            raise Unsupported("a record without ColumnStatsMetadata")
        codes, infos = _value_types(d)
        lo = _side(d, "minValue", codes, infos, False)
        hi = _side(d, "maxValue", codes, infos, True)
        vc, vc_ok = d.full((*_STATS, "valueCount", "long"), np.int64, 0)
        nc, nc_ok = d.full((*_STATS, "nullCount", "long"), np.int64, 0)
        deleted, _ = d.full((*_STATS, "isDeleted"), np.int64, 0)
        tight, tight_ok = d.full((*_STATS, "isTightBound"), np.int64, 0)
        if not tight_ok.any():
            tight, tight_ok = d.full((*_STATS, "isTightBound", "boolean"), np.int64, 0)
        names = np.array(_VALUE_TYPES, dtype=object)
        value_type = np.where(codes >= 0, names[np.maximum(codes, 0)], np.where(lo[4] != None, lo[4], hi[4]))  # noqa: E711
        return pa.table([
            keys,
            pa.nulls(d.n, pa.string()),
            d.binary((*_STATS, "fileName", "string"), True),
            d.binary((*_STATS, "columnName", "string"), True),
            pa.array(vc, pa.int64(), mask=~vc_ok),
            pa.array(nc, pa.int64(), mask=~nc_ok),
            pa.array(deleted.astype(bool), pa.bool_()),
            pa.array(tight.astype(bool), pa.bool_(), mask=~tight_ok),
            pa.array(value_type, pa.string()),
            pa.array(lo[0], pa.int8()), pa.array(lo[1], pa.int64()), lo[2], pa.array(lo[3], pa.int32()),
            pa.array(hi[0], pa.int8()), pa.array(hi[1], pa.int64()), hi[2], pa.array(hi[3], pa.int32()),
        ], schema=ENTRY_SCHEMA)
    except AvroColumnsError as exc:
        raise Unsupported(str(exc)) from None


# ================================================================================================ merging


def _bound_value(kind: int, iv: int, bv: bytes | None, scale: int) -> Any:
    """A bound as a comparable Python value (what the record path's unwrapped value compares like)."""
    if kind in (INT, BOOL, DATE):
        return iv
    if kind in (STR, BYTES):
        return bv
    if kind == DECIMAL:
        return _decimal(bv or b"", scale)
    raise Unsupported(f"bounds of kind {kind} merged")


def _combine(older: dict[str, Any] | None, newer: dict[str, Any]) -> dict[str, Any]:
    """``HoodieMetadataPayload.preCombine`` of two entries of one key (see ``metadata._combine``)."""
    if older is None or newer["deleted"] or older["deleted"] or newer["tight"]:
        return newer
    out = dict(newer)
    for side, pick in (("lo", min), ("hi", max)):
        cands = [e for e in (older, newer) if e[side + "_kind"] != NONE]
        if len(cands) == 2:
            if cands[0][side + "_kind"] != cands[1][side + "_kind"]:
                raise Unsupported("bounds of different kinds for one key")
            a, b = (_bound_value(e[side + "_kind"], e[side + "_int"], e[side + "_bin"], e[side + "_scale"])
                    for e in cands)
            chosen = cands[0] if pick(a, b) == a and a != b else cands[1]
        else:
            chosen = cands[0] if cands else newer
        for f in ("_kind", "_int", "_bin", "_scale"):
            out[side + f] = chosen[side + f]
    for f in ("value_count", "null_count"):
        out[f] = None if older[f] is None or newer[f] is None else older[f] + newer[f]
    if out["value_type"] is None:
        out["value_type"] = older["value_type"]
    return out


def _merge(sources: list[pa.Table | set[str]]) -> pa.Table:
    """One slice's entries: sources (entry tables, or the keys of a DELETE block) in merge order."""
    tables = [s for s in sources if isinstance(s, pa.Table)]
    deletes = [s for s in sources if not isinstance(s, pa.Table)]
    if not tables:
        return ENTRY_SCHEMA.empty_table()
    if len(tables) == 1 and not deletes:
        merged = tables[0]
    else:
        seq = pa.concat_tables(tables)
        keys = seq.column("key")
        counts = pc.value_counts(keys)
        repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
        touched = set(repeated.to_pylist())
        for d in deletes:
            touched |= d
        if not touched:
            merged = seq
        else:
            keep = pc.invert(pc.is_in(keys, value_set=pa.array(sorted(touched), pa.string())))
            plain = seq.filter(keep)
            state: dict[str, dict[str, Any] | None] = {}
            for src in sources:
                if isinstance(src, pa.Table):
                    mask = pc.is_in(src.column("key"), value_set=pa.array(sorted(touched), pa.string()))
                    for rec in src.filter(mask).to_pylist():
                        state[rec["key"]] = _combine(state.get(rec["key"]), rec)
                else:
                    for k in src:
                        if k in touched:
                            state[k] = None
            extra = [r for r in state.values() if r is not None]
            merged = pa.concat_tables([plain, pa.Table.from_pylist(extra, schema=ENTRY_SCHEMA)])
    return merged.filter(pc.invert(merged.column("deleted")))


# ================================================================================================ reading


def _prefixed(reader: HFileReader, prefixes: list[str]) -> Cells:
    """The entries under each prefix (sorted, distinct: the entries come out in key order)."""
    parts = [reader.prefix_cells(p.encode("utf-8")) for p in prefixes]
    if len(parts) == 1:
        return parts[0]
    return Cells.join([(c.buffer, (c.key_starts, c.key_ends, c.value_starts, c.value_ends)) for c in parts])


def _source_entries(mdt: MetadataTable, sl: _Slice, prefixes: list[str]) -> list[pa.Table | set[str]]:
    tag = tuple(prefixes)

    def entries(key: tuple[Any, ...], open_reader: Callable[[], HFileReader], header_schema: str | None,
                where: str) -> pa.Table:
        hit = _cache_get(key)
        if hit is None:
            try:
                reader = open_reader()
                schema = header_schema or reader.avro_schema
                if schema is None:
                    raise _Unreadable(f"{where}: no Avro schema for the metadata records")
                cells = _prefixed(reader, prefixes)
            except HFileError as exc:
                raise _Unreadable(str(exc)) from None
            try:
                keys = gather_binary(cells.buffer, cells.key_starts, cells.key_ends - cells.key_starts, True)
            except ValueError as exc:
                raise _Unreadable(f"{reader.name}: a key is not UTF-8: {exc}") from None
            hit = _entries_of(cells, keys, schema)
            _cache_put(key, hit)
        return hit

    sources: list[pa.Table | set[str]] = []
    if sl.base is not None:
        base = sl.base
        sources.append(entries((_identity(mdt, base), -1, tag),
                               lambda: mdt._reader((base, -1), lambda: HFileReader.open(base, storage=mdt._storage)),
                               None, base))
    for path, block in mdt._blocks(sl):
        where = f"{path}: byte {block.offset}"
        if block.block_type == BlockType.DELETE:
            sources.append(deleted_keys(block, where, None, prefixes))
            continue
        sources.append(entries((_identity(mdt, path), block.offset, tag),
                               partial(HFileReader, block.content, f"{where} (HFILE_DATA block)"),
                               block.header.get(HeaderKey.SCHEMA), where))
    return sources


def read_column_stats(mdt: MetadataTable, columns: Sequence[str]) -> pa.Table:
    """The merged latest column statistics entries of ``columns`` (:data:`ENTRY_SCHEMA`, ``partition`` resolved,
    None when the partition id is unknown; deleted entries dropped). Raises :class:`Unsupported` when this
    path cannot decide, ``MetadataTableError`` when the partition is not usable or unreadable."""
    prefixes = sorted({column_index_id(c) for c in columns})
    if not prefixes:
        return ENTRY_SCHEMA.empty_table()
    slices = mdt._require(COLUMN_STATS)
    whole_key = ("entries", mdt._slice_identity(COLUMN_STATS), tuple(prefixes))
    whole = _cache_get(whole_key)
    if whole is not None:
        return whole
    parts = []
    try:
        for sl in slices:
            parts.append(_merge(_source_entries(mdt, sl, prefixes)))
    except _Unreadable as why:
        raise mdt._fail(COLUMN_STATS, str(why)) from None
    except (OSError, LogFormatError) as exc:
        raise mdt._fail(COLUMN_STATS, f"{type(exc).__name__}: {exc}") from None
    except HudiTableError:
        raise
    table = pa.concat_tables(parts) if parts else ENTRY_SCHEMA.empty_table()
    if len(parts) > 1:
        # a key in two slices (never written so): the later slice wins, as the record path's dict update
        counts = pc.value_counts(table.column("key"))
        if (pc.max(counts.field("counts")).as_py() or 0) > 1:
            table = _last_of_each(table, "key")
    # the partition of an entry: its key's partition id (characters 12..24) mapped by the files partition
    pids = pc.utf8_slice_codeunits(table.column("key"), 12, 24)
    mdt._partition_name_of("")                  # builds the id -> name map
    names = mdt._partition_names or {}
    ids = pa.array(list(names), pa.string())
    idx = pc.index_in(pids, value_set=ids)
    partition = pc.take(pa.array(list(names.values()), pa.string()), idx)
    table = table.set_column(1, "partition", partition)
    _cache_put(whole_key, table)
    return table


def _last_of_each(table: pa.Table, column: str) -> pa.Table:
    """The last row of each value of ``column`` (rows in their order)."""
    keys = table.column(column).to_pylist()
    last = {k: i for i, k in enumerate(keys)}
    return table.take(pa.array(sorted(last.values()), pa.int64()))


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
        ok &= (ints >= int(info.min)) & (ints <= min(int(info.max), _INT64_MAX))
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
            big = np.abs(ints) > _INT64_MAX // 1000
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
            v: Any = _decimal(bl[i] or b"", int(scales[i]))
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
