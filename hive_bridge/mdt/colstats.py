"""The metadata table's column statistics decoded column by column, straight into Arrow entries.

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
3. :func:`hive_bridge.stats.mdt_rows.mdt_rows_columnar` maps the entries into the index's rows with the same rules as
   :func:`hive_bridge.stats.mdt_rows.mdt_rows` (tested equal on every fixture and on generated tables).

Decoded sources are cached in the process by the identity of the file they come from (path, size, mtime and
block offset): a metadata base file never changes once written and a log file that grows changes size, so a
second query of the same table, even through a new ``HudiTable``, decodes nothing again.

Anything this path does not handle (a map or array value, bounds of different kinds for one key, a malformed
value) raises :class:`Unsupported`; the caller then takes the record-at-a-time path, which handles or reports it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge import config
from hive_bridge.errors import HudiTableError
from hive_bridge.formats.avro_columns import AvroColumnsError, Decoded, decode_buffer, gather_binary
from hive_bridge.formats.hfile import Cells, HFileError, HFileReader
from hive_bridge.formats.logfile import BlockType, HeaderKey, LogFormatError
from hive_bridge.mdt.keys import COLUMN_STATS, column_index_id, partition_index_id
from hive_bridge.mdt.records import VALUE_TYPES, WRAPPER_TYPES, Unreadable, decimal_of, deleted_keys
from hive_bridge.mdt.table import MdtSlice, MetadataTable

__all__ = ["BOOL", "BYTES", "DATE", "DECIMAL", "ENTRY_SCHEMA", "FLOAT", "INT", "INT64_MAX", "NONE", "OTHER", "STR",
           "Unsupported", "clear_cache", "read_column_stats"]

INT64_MAX = 2**63 - 1


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
    limit = config.settings().mdt_cache_bytes
    if size > limit:
        return
    with _cache_lock:
        old = _cache.pop(key, None)
        if old is not None:
            _cache_bytes -= old.nbytes
        _cache[key] = table
        _cache_bytes += size
        while _cache_bytes > limit and _cache:
            _, dropped = _cache.popitem(last=False)
            _cache_bytes -= dropped.nbytes


def clear_cache() -> None:
    """Forget every decoded metadata-table source (tests; memory)."""
    global _cache_bytes
    with _cache_lock:
        _cache.clear()
        _cache_bytes = 0



config.register_cache("mdt.colstats: decoded column statistics", clear_cache)

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
    if ((ordinals[present] < 0) | (ordinals[present] >= len(VALUE_TYPES))).any():
        raise Unsupported("a column stats value type ordinal is unknown")
    codes = np.where(present & (ordinals != 0), ordinals, -1)     # ordinal 0 is "V1": the wrapper says
    infos = d.binary((*_STATS, "valueType", "HoodieValueTypeInfo", "additionalInfo", "string"), True).to_pylist()
    return codes, infos


def _side(d: Decoded, field: str, codes: np.ndarray, infos: list[str | None],
          upper: bool) -> tuple[np.ndarray, np.ndarray, pa.Array, np.ndarray, np.ndarray]:
    """(kind, int value, binary value, decimal scale, V1 value type) of the min or max bound of every value:
    what ``records.unwrap_bound`` makes of it, as arrays."""
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
        vt1 = WRAPPER_TYPES.get(wrapper)
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
            name = VALUE_TYPES[int(c)]
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
                    big = m & (np.abs(iv) > INT64_MAX // 1000)
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
        names = np.array(VALUE_TYPES, dtype=object)
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
        return decimal_of(bv or b"", scale)
    raise Unsupported(f"bounds of kind {kind} merged")


def _combine(older: dict[str, Any] | None, newer: dict[str, Any]) -> dict[str, Any]:
    """``HoodieMetadataPayload.preCombine`` of two entries of one key (see ``records.combine_records``)."""
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


def _source_entries(mdt: MetadataTable, sl: MdtSlice, prefixes: list[str]) -> list[pa.Table | set[str]]:
    tag = tuple(prefixes)

    def entries(key: tuple[Any, ...], open_reader: Callable[[], HFileReader], header_schema: str | None,
                where: str) -> pa.Table:
        hit = _cache_get(key)
        if hit is None:
            try:
                reader = open_reader()
                schema = header_schema or reader.avro_schema
                if schema is None:
                    raise Unreadable(f"{where}: no Avro schema for the metadata records")
                cells = _prefixed(reader, prefixes)
            except HFileError as exc:
                raise Unreadable(str(exc)) from None
            try:
                keys = gather_binary(cells.buffer, cells.key_starts, cells.key_ends - cells.key_starts, True)
            except ValueError as exc:
                raise Unreadable(f"{reader.name}: a key is not UTF-8: {exc}") from None
            hit = _entries_of(cells, keys, schema)
            _cache_put(key, hit)
        return hit

    sources: list[pa.Table | set[str]] = []
    if sl.base is not None:
        base = sl.base
        sources.append(entries((_identity(mdt, base), -1, tag),
                               lambda: mdt.cached_reader((base, -1), lambda: HFileReader.open(base, storage=mdt.storage)),
                               None, base))
    for path, block in mdt.log_blocks(sl):
        where = f"{path}: byte {block.offset}"
        if block.block_type == BlockType.DELETE:
            sources.append(deleted_keys(block, where, None, prefixes))
            continue
        sources.append(entries((_identity(mdt, path), block.offset, tag),
                               partial(HFileReader, block.content, f"{where} (HFILE_DATA block)"),
                               block.header.get(HeaderKey.SCHEMA), where))
    return sources


def read_column_stats(mdt: MetadataTable, columns: Sequence[str],
                      partitions: Iterable[str] | None = None) -> pa.Table:
    """The merged latest column statistics entries of ``columns`` (:data:`ENTRY_SCHEMA`, ``partition`` resolved,
    None when the partition id is unknown; deleted entries dropped). ``partitions``: only the entries of files
    of these data partitions (``""`` for a non-partitioned table) are looked up (a key is column id +
    partition id + file id, so each (column, partition) is one key prefix); None: every partition's. Raises
    :class:`Unsupported` when this path cannot decide, ``MetadataTableError`` when the partition is not usable
    or unreadable."""
    prefixes = sorted({column_index_id(c) for c in columns})
    if partitions is not None:
        parts_ids = sorted({partition_index_id(p) for p in partitions})
        prefixes = [c + p for c in prefixes for p in parts_ids]
    if not prefixes:
        return ENTRY_SCHEMA.empty_table()
    slices = mdt.slices_of(COLUMN_STATS)
    whole_key = ("entries", mdt.slice_identity(COLUMN_STATS), tuple(prefixes))
    whole = _cache_get(whole_key)
    if whole is not None:
        return whole
    parts = []
    try:
        for sl in slices:
            parts.append(_merge(_source_entries(mdt, sl, prefixes)))
    except Unreadable as why:
        raise mdt.failure(COLUMN_STATS, str(why)) from None
    except (OSError, LogFormatError) as exc:
        raise mdt.failure(COLUMN_STATS, f"{type(exc).__name__}: {exc}") from None
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
    names = mdt.partition_ids()
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
