"""The record keys of a file slice's merged rows, with the values of some columns: what the key check of Hudi's
indexes (:mod:`hive_bridge.pruning.key_check`) compares the record index and secondary indexes with.

A slice without log files holds its base file's rows. A merge-on-read slice holds its base file's rows (if it has
a base file), replaced, added to or removed by the records of its log blocks, in log order (the blocks a merged
read applies: :mod:`hive_bridge.layout.log_blocks`). Per record key, as Hudi's readers merge whole records:

- commit-time ordering (``COMMIT_TIME_ORDERING``, or the overwrite-with-latest payload): the later record wins, a
  delete removes the key;
- event-time ordering (``EVENT_TIME_ORDERING``, the default and event-time payloads, with ordering fields): a
  record replaces the current one unless its ordering value is smaller; a delete removes the key when it carries
  no ordering value or Hudi's default (an int 0: what Hudi's own deletes carry) or one no smaller than the current
  record's; a record after a delete is taken to be in.

Where the rule cannot be applied (ordering values missing or not comparable, a merge the payload class decides),
the answer covers every record that may be the merged one: a key may then have several candidate values, and a
delete that may not win leaves the key in. Checking every candidate against the indexes is stricter than checking
the merged row alone, so what the check accepts holds for the merged rows; it may refuse an index that holds.

What cannot be read as records raises :class:`SliceUnreadable` (the check then leaves the indexes unused): a log
file that does not read, a data block that does not decode, a partial-update or log-compacted block, an HFile,
CDC or unknown block, a delete block of Hudi < 0.11, a custom merge.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import BlockType, HeaderKey, data_block_table, delete_block_records
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.layout.log_blocks import slice_log_blocks
from hive_bridge.layout.properties import TableProperties
from hive_bridge.pruning.record_keys import RECORD_KEY_COLUMN
from hive_bridge.storage.core import StorageError
from hive_bridge.table.table import HudiTable

__all__ = ["MergeRule", "SliceKeys", "SliceUnreadable", "merge_rule", "slice_keys"]

_DATA = frozenset({BlockType.AVRO_DATA, BlockType.PARQUET_DATA})


class SliceUnreadable(HudiTableError):
    """A slice whose merged keys cannot be told; the message names the file and why."""


@dataclass(frozen=True)
class MergeRule:
    """How a slice's records merge: ``kind`` "commit" (the later wins), "event" (the greater ordering value wins,
    ties the later) or "any" (either: every candidate is kept); ``ordering``: the ordering fields."""

    kind: str
    ordering: tuple[str, ...] = ()


def merge_rule(props: TableProperties) -> MergeRule | str:
    """The table's merge rule, or why none applies (a merge that does not keep whole records)."""
    if not props.whole_record_merge:
        return "its merge does not keep whole records (a custom merge or a partial-update payload)"
    raw = props.raw
    mode = raw.get("hoodie.record.merge.mode", "").strip().upper()
    ordering = tuple(f.strip() for f in (props.precombine_field or "").split(",") if f.strip())
    payload = (raw.get("hoodie.compaction.payload.class") or raw.get("hoodie.table.legacy.payload.class")
               or raw.get("hoodie.datasource.write.payload.class") or "").strip()
    if mode == "COMMIT_TIME_ORDERING" or (mode == "EVENT_TIME_ORDERING" and not ordering):
        return MergeRule("commit")
    if mode == "EVENT_TIME_ORDERING":
        return MergeRule("event", ordering)
    if payload.endswith(("DefaultHoodieRecordPayload", "EventTimeAvroPayload")) and ordering:
        return MergeRule("event", ordering)
    # the overwrite-with-latest payload (and no payload named): Hudi 1.x merges by commit time, earlier releases
    # pre-combined log records by their ordering value: either may decide
    return MergeRule("any", ordering)


@dataclass
class SliceKeys:
    """Every (record key, values of the asked columns) a slice's merged rows may hold; a key appears once per
    candidate value. ``absent``: asked columns some part of the slice lacks; ``types``: their types as read;
    ``log_blocks``: log blocks applied; ``log_bytes``: bytes of log files
    read."""

    keys: list[str] = field(default_factory=list)
    values: dict[str, list[Any]] = field(default_factory=dict)
    absent: set[str] = field(default_factory=set)
    #: the Arrow types each asked column has in the parts read
    types: dict[str, set[pa.DataType]] = field(default_factory=dict)
    log_blocks: int = 0
    log_bytes: int = 0


class _Key:
    """One key's state: its candidate values (empty: deleted), the ordering value of the current winner (None:
    unknown), and whether the rule was given up for it (every later record is a candidate, no delete removes)."""

    __slots__ = ("cands", "loose", "order")

    def __init__(self, vals: tuple[Any, ...], order: Any) -> None:
        self.cands: list[tuple[Any, ...]] = [vals]
        self.order = order
        self.loose = False


def _compare(a: Any, b: Any) -> int | None:
    """-1, 0, 1, or None when either is missing or they do not compare."""
    if a is None or b is None:
        return None
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b) or any(x is None for x in a) or any(y is None for y in b):
            return None
        a, b = tuple(a), tuple(b)
    try:
        return -1 if a < b else (1 if a > b else 0)
    except TypeError:
        return None


class _Merge:
    def __init__(self, rule: MergeRule) -> None:
        self.rule = rule
        self.state: dict[str, _Key] = {}

    def record(self, key: str, vals: tuple[Any, ...], order: Any) -> None:
        cur = self.state.get(key)
        if cur is None:
            self.state[key] = _Key(vals, order)
            return
        kind = self.rule.kind
        if kind == "commit":
            cur.cands, cur.order = [vals], order
            return
        if kind == "any" or cur.loose:
            cur.cands.append(vals)
            cur.loose = True
            return
        if not cur.cands:                        # after a delete: a record inserted again (taken to win)
            cur.cands, cur.order = [vals], order
            return
        c = _compare(order, cur.order)
        if c is None:
            cur.cands.append(vals)
            cur.loose = True
        elif c >= 0:
            cur.cands, cur.order = [vals], order

    def delete(self, key: str, order: Any) -> None:
        cur = self.state.get(key)
        if cur is None or not cur.cands:
            return
        kind = self.rule.kind
        if kind == "commit":
            cur.cands, cur.order = [], None
        elif kind == "event" and not cur.loose:
            c = _compare(cur.order, order)
            if order is None or (c is not None and c <= 0):
                cur.cands, cur.order = [], order
            elif c is None:
                cur.loose = True


def _ordering(data: pa.Table, fields: Sequence[str]) -> list[Any]:
    if not fields or any(f not in data.column_names for f in fields):
        return [None] * data.num_rows
    cols = [data.column(f).to_pylist() for f in fields]
    return cols[0] if len(cols) == 1 else [list(t) for t in zip(*cols, strict=True)]


def slice_keys(table: HudiTable, s: FileSlice, columns: Sequence[str], rule: MergeRule,
               ok: Callable[[str | None], bool],
               read_base: Callable[[FileSlice, list[str]], pa.Table]) -> SliceKeys:
    """The keys and ``columns``' values of the slice's merged rows (see the module docstring). ``read_base``
    reads columns of the slice's base file (the caller's counted read); ``ok``: which instants' blocks count
    (:func:`hive_bridge.layout.log_blocks.block_filter`). Raises :class:`SliceUnreadable`; ``read_base``'s own
    errors pass through."""
    out = SliceKeys(values={c: [] for c in columns})
    ordering = list(rule.ordering) if rule.kind != "commit" else []
    wanted = list(dict.fromkeys([RECORD_KEY_COLUMN, *columns, *ordering]))

    def rows(data: pa.Table, where: str) -> tuple[list[Any], list[tuple[Any, ...]], list[Any]]:
        if RECORD_KEY_COLUMN not in data.column_names:
            raise SliceUnreadable(f"{where}: holds no {RECORD_KEY_COLUMN}: the indexes cannot be checked against it")
        keys = data.column(RECORD_KEY_COLUMN).to_pylist()
        cols = []
        for c in columns:
            if c in data.column_names:
                out.types.setdefault(c, set()).add(data.schema.field(c).type)
                cols.append(data.column(c).to_pylist())
            else:
                out.absent.add(c)
                cols.append([None] * data.num_rows)
        return keys, list(zip(*cols, strict=True)) if cols else [()] * len(keys), _ordering(data, ordering)

    if not s.log_files:
        assert s.base_file is not None
        data = read_base(s, wanted)
        keys, vals, _ = rows(data, s.base_file.path)
        out.keys = keys
        for i, c in enumerate(columns):
            out.values[c] = [v[i] for v in vals]
        return out
    merge = _Merge(rule)
    if s.base_file is not None:
        keys, vals, orders = rows(read_base(s, wanted), s.base_file.path)
        for k, v, o in zip(keys, vals, orders, strict=True):
            merge.record(k, v, o)
    try:
        blocks = slice_log_blocks(ok, s, table.storage)
    except (HudiTableError, StorageError, OSError) as exc:
        raise SliceUnreadable(f"{s.file_id}: a log file cannot be read ({exc})") from None
    out.log_bytes = sum(lf.size or 0 for lf in s.log_files)
    for path, block in blocks:
        where = f"{path}: byte {block.offset}"
        if HeaderKey.COMPACTED_BLOCK_TIMES in block.header:
            raise SliceUnreadable(f"{where}: a log-compacted block (COMPACTED_BLOCK_TIMES) is not read here")
        if str(block.header.get(HeaderKey.IS_PARTIAL, "")).lower() == "true":
            raise SliceUnreadable(f"{where}: a partial-update block (IS_PARTIAL) holds some columns only")
        out.log_blocks += 1
        try:
            if block.block_type == BlockType.DELETE:
                for k, _p, o in delete_block_records(block, path):
                    merge.delete(k, o)
                continue
            if block.block_type not in _DATA:
                name = BlockType(block.block_type).name if block.block_type in set(BlockType) \
                    else f"type {block.block_type}"
                raise SliceUnreadable(f"{where}: a {name} block's records are not read here")
            keys, vals, orders = rows(data_block_table(block, path), where)
        except SliceUnreadable:
            raise
        except HudiTableError as exc:
            raise SliceUnreadable(str(exc)) from None
        for k, v, o in zip(keys, vals, orders, strict=True):
            merge.record(k, v, o)
    for k, st in merge.state.items():
        for v in st.cands:
            out.keys.append(k)
            for i, c in enumerate(columns):
                out.values[c].append(v[i])
    return out
