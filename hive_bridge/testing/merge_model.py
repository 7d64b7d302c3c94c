"""The merge model of the test writer: how a merge-on-read file slice's rows are merged (compaction, and what tests
compare readers against). Per record key, log records apply in log order over the base file's row; with an
ordering (precombine) field a record replaces the current one unless its ordering value is smaller, without one
the later write wins; a delete removes the key. Blocks of instants that are not completed, or were rolled back,
are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import BlockType, data_block_table, delete_block_keys
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.layout.log_blocks import block_filter as timeline_block_filter
from hive_bridge.layout.log_blocks import slice_log_blocks
from hive_bridge.table.table import HudiTable

__all__ = ["DATA_BLOCKS", "LogPart", "Merged", "block_filter", "conform", "log_parts", "merge_slice"]

DATA_BLOCKS = frozenset({BlockType.AVRO_DATA, BlockType.PARQUET_DATA})


@dataclass
class Merged:
    """A file slice's merged rows, and what compaction statistics count."""

    table: pa.Table | None
    log_records: int = 0
    log_blocks: int = 0
    rollback_blocks: int = 0
    updated: int = 0
    inserted: int = 0
    deleted: int = 0


@dataclass
class LogPart:
    """One readable block of a slice's logs, in log order: data records (a table) or deleted keys."""

    instant: str
    table: pa.Table | None = None
    deleted: list[tuple[str, str]] = field(default_factory=list)


def block_filter(table: HudiTable) -> Callable[[str | None], bool]:
    """Whether a log block written at an instant counts (:func:`hive_bridge.layout.log_blocks.block_filter`)."""
    return timeline_block_filter(table.timeline)


def log_parts(ok: Callable[[str | None], bool], s: FileSlice) -> list[LogPart]:
    """The slice's log blocks a merged read applies (:func:`hive_bridge.layout.log_blocks.slice_log_blocks`:
    committed, not rolled back), in log order, decoded."""
    out: list[LogPart] = []
    for path, b in slice_log_blocks(ok, s):
        ts = b.instant or ""
        if b.block_type in DATA_BLOCKS:
            out.append(LogPart(ts, table=data_block_table(b, path)))
        elif b.block_type == BlockType.DELETE:
            out.append(LogPart(ts, deleted=delete_block_keys(b, path)))
        else:
            raise HudiTableError(f"{path}: the writer cannot merge {BlockType(b.block_type).name} blocks")
    return out


def merge_slice(table: HudiTable, ok: Callable[[str | None], bool], s: FileSlice,
                ordering_field: str | None) -> Merged:
    """The slice's merged rows (base file rows updated by log records, deleted keys removed; with an
    ``ordering_field``, a record older than the current one is ignored)."""
    parts: list[pa.Table] = []
    base = pq.read_table(s.base_file.full_path) if s.base_file is not None else None
    slice_parts = log_parts(ok, s)
    merged = Merged(None)
    # key -> (part index, row index, ordering value), or None once deleted
    winner: dict[str, tuple[int, int, Any] | None] = {}
    base_keys: set[str] = set()

    def offer(t: pa.Table) -> None:
        idx = len(parts)
        parts.append(t)
        keys = t.column("_hoodie_record_key").to_pylist()
        orderings = t.column(ordering_field).to_pylist() if ordering_field and ordering_field in t.column_names \
            else [None] * t.num_rows
        for i, (k, o) in enumerate(zip(keys, orderings, strict=True)):
            cur = winner.get(k)
            if cur is not None and o is not None and cur[2] is not None and o < cur[2]:
                continue  # an older event: the current record stays
            winner[k] = (idx, i, o)

    if base is not None:
        offer(base)
        base_keys = set(winner)
    for part in slice_parts:
        merged.log_blocks += 1
        if part.table is not None:
            merged.log_records += part.table.num_rows
            offer(part.table)
        else:
            merged.log_records += len(part.deleted)
            for k, _p in part.deleted:
                if k in winner:
                    winner[k] = None
    take: dict[int, list[int]] = {}
    for k, w in winner.items():
        if w is None:
            merged.deleted += k in base_keys
            continue
        take.setdefault(w[0], []).append(w[1])
        if w[0] > 0 or base is None:
            if k in base_keys:
                merged.updated += 1
            else:
                merged.inserted += 1
    target = base.schema if base is not None else _log_only_schema(table, parts)
    # a column added by a later write lives only in its log records: keep it (null in older records)
    added: dict[str, pa.Field] = {}
    for part_table in parts:
        for fld in part_table.schema:
            if target.get_field_index(fld.name) < 0:
                added.setdefault(fld.name, fld.with_nullable(True))
    if added:
        target = pa.schema(list(target) + list(added.values()))
    pieces = [conform(parts[i].take(pa.array(sorted(rows), pa.int64())), target)
              for i, rows in sorted(take.items())]
    merged.table = pa.concat_tables(pieces) if pieces else target.empty_table()
    return merged


def _log_only_schema(table: HudiTable, parts: list[pa.Table]) -> pa.Schema:
    try:
        return table.arrow_schema(include_meta_fields=True)
    except HudiTableError:
        return parts[0].schema


def conform(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """`t` with `schema`'s columns in its order and types (missing columns as nulls)."""
    cols = []
    for f in schema:
        if f.name in t.column_names:
            col = t.column(f.name)
            cols.append(col if col.type == f.type else col.cast(f.type))
        else:
            cols.append(pa.nulls(t.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)
