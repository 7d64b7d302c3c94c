"""The index's rows in memory: keyed by (path, size, instant), looked up for a listing's files, patched with
the columns a later query needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.formats.parquet_footer import StatsLeaf
from hive_bridge.stats.contract import (
    MIN,
    stat_kinds,
    stat_name,
)


def entry_keys(paths: Any, sizes: Any, instants: Any) -> pa.Array:
    """Index keys (path, size, instant) as one string array; a row is used only when all three match."""
    joined = pc.binary_join_element_wise(paths, pc.cast(sizes, pa.string()), instants, "\x00")
    if isinstance(joined, pa.ChunkedArray):
        joined = joined.combine_chunks()
    return joined


def lookup_rows(state: IndexState, paths: pa.Array, sizes: pa.Array, instants: pa.Array) -> pa.Array:
    """The index row of each listed file (int32, null when none): the first row with the file's path, used only
    when its size and instant equal the listing's as well, so a row serves only the file (path, size, instant)
    it was read from. Comparing after a path lookup costs less than hashing joined keys."""
    n = len(paths)
    if n and len(state.paths) > 8 * n and pc.count_distinct(paths).as_py() == n:
        # a few files against a big index (a snapshot following a commit): hash the few, probe the index with
        # its paths, and keep each path's first row (hashing 1,000,000 index paths costs 0.35 s a call)
        hit = pc.index_in(state.paths, value_set=paths)
        valid = hit.is_valid().to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(valid)
        targets = hit.filter(hit.is_valid()).to_numpy(zero_copy_only=False).astype(np.int64)
        pos = np.full(n, -1, dtype=np.int64)
        pos[targets[::-1]] = rows[::-1]          # written last wins: the first row of each path
        positions = pa.array(pos.astype(np.int32), pa.int32(), mask=pos < 0)
    else:
        positions = pc.index_in(paths, value_set=state.paths)
    if not len(positions) or positions.null_count == len(positions):
        return positions
    same = pc.and_(
        pc.equal(state.sizes.take(positions), sizes),
        pc.equal(state.instants.take(positions), instants),
    )
    return pc.if_else(same, positions, pa.nulls(len(positions), pa.int32()))


def after_added(state: IndexState, positions: pa.Array, added: pa.Array, paths: pa.Array, sizes: pa.Array,
                 instants: pa.Array, before: tuple[int, int]) -> pa.Array:
    """The index rows of the listed files after the rows of files ``added`` (listing positions, in order) were
    put in front of the index (:meth:`ColumnStatsIndex._rebuild_entries` puts the newest segment first): the
    earlier rows moved down by as many, the added files are the first rows. Checked against the index: it grew
    by exactly those rows since ``before`` (:func:`layout` then), without being built again unless it was empty
    (a compaction, another writer's segments taken in), and their paths, sizes and instants are the first rows'; :func:`lookup_rows`
    otherwise."""
    m = len(added)
    rows, rebuilds = layout(state)
    if len(state.paths) < m or rows != before[0] + m or (rebuilds != before[1] and before[0]):
        return lookup_rows(state, paths, sizes, instants)
    for mine, theirs in ((paths, state.paths), (sizes, state.sizes), (instants, state.instants)):
        if not pc.all(pc.equal(pc.take(mine, added), theirs.slice(0, m))).as_py():
            return lookup_rows(state, paths, sizes, instants)
    pos = pc.fill_null(positions, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    pos[pos >= 0] += m
    pos[added.to_numpy(zero_copy_only=False)] = np.arange(m, dtype=np.int64)
    return pa.array(pos.astype(np.int32), pa.int32(), mask=pos < 0)


def layout(state: IndexState) -> tuple[int, int]:
    """(rows, full builds) of the index in memory: positions taken at one layout hold at another only when rows
    were only put in front (:func:`after_added`)."""
    return len(state.paths), state.rebuilds


# ------------------------------------------------------------------ index
#: the columns of a table of file keys (``mdt_rows.file_keys_table``); ``name`` may be left out
FILE_KEY_COLUMNS = ("path", "partition", "size", "instant", "name", "is_log")


def mdt_keys_of(rows: pa.Table) -> pa.Table:
    """The file keys (``mdt_rows.file_keys_table``'s columns) of rows made from the metadata table."""
    path = rows.column("path")
    name = pc.replace_substring_regex(path, "^.*/", "")
    return pa.table({"path": path, "partition": rows.column("partition"), "size": rows.column("file_size"),
                     "instant": rows.column("instant"), "name": name,
                     "is_log": pc.match_substring_regex(name, r"^\..*\.log\.")})


def with_leaves(rows: pa.Table, fresh: pa.Table, names: list[str]) -> pa.Table:
    """``rows`` with the statistics of columns ``names`` taken from ``fresh`` (rows of the same files, those
    not described left out), where ``fresh`` counts the same number of values as ``rows``; unknown elsewhere."""
    pos = pc.index_in(rows.column("path"), value_set=fresh.column("path"))
    same = pc.equal(pc.take(fresh.column("num_rows"), pos), rows.column("num_rows"))
    ok = pc.fill_null(pc.and_(pc.is_valid(pos), same), False)
    for name in names:
        for stat in stat_kinds(rows.schema.field(stat_name(name, MIN)).type):
            column = stat_name(name, stat)
            at = rows.schema.get_field_index(column)
            taken = pc.take(fresh.column(column), pos)
            rows = rows.set_column(at, rows.schema.field(at), pc.if_else(ok, taken, rows.column(column)))
    return rows


@dataclass
class IndexState:
    raw_segments: list[tuple[str, pa.Table]] = field(default_factory=list)
    entries: pa.Table | None = None
    #: entries' path, file_size and instant columns as single arrays (the lookup's)
    paths: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))
    sizes: pa.Array = field(default_factory=lambda: pa.array([], pa.int64()))
    instants: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))
    #: how many of raw_segments `entries` holds, and for which leaves (an append is then added on its own)
    built: int = 0
    built_for: list[StatsLeaf] | None = None
    #: how many times `entries` was built whole (row positions taken before do not hold after)
    rebuilds: int = 0
