"""Float proofs applied to a plan's verdicts (:mod:`hive_bridge.pruning.float_proofs` reads and remembers the
facts; this module picks the files, puts the facts in the statistics and judges again).

- **Base files alone** (slices without log files): the files a float column's unknown NaN count or bounds keep.
- **Merged slices** (a snapshot query's slices with log files): a merged row's value comes from one of the
  slice's parts (its base file or one of its log files; a partial update keeps a base or earlier log value), so
  the slice is judged by its parts' facts as before (each part alone for a whole-record merge, else the union of
  the parts' ranges, :func:`hive_bridge.stats.log_stats.union_stats`), with the parts whose facts were unknown
  proven: the base file's column chunks, a log file's data blocks (the blocks the slice statistics count). A
  slice some part of which stays unknown (unreadable, past the budget, a base file that is not parquet) is kept
  as before.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.filters.expression import HudiExpression
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.pruning import float_proofs as fp
from hive_bridge.pruning.vectorized import PruneResult, StatsTable, TruthColumn, prune
from hive_bridge.stats.contract import MIN, NAN_COUNT, NULL_COUNT, stat_name
from hive_bridge.stats.index import PARQUET_SUFFIX
from hive_bridge.stats.log_stats import union_stats
from hive_bridge.table.table import HudiTable


class SliceGroup(Protocol):
    """Slices judged together, as the pruner holds them: the slices, their statistics (one row each), and for
    merged slices every part's statistics, the slice of each part and whether merging keeps whole records."""

    slices: list[FileSlice]
    full: StatsTable
    parts_stats: StatsTable | None
    part_slice: list[int]
    whole_record: bool


@dataclass
class ProofContext:
    """One plan's proving: the table, the index's I/O threads, the pruner's lock (its groups' statistics are
    replaced under it), the files proven (path -> columns, for explain), the plan's budget and report."""

    table: HudiTable
    max_workers: int
    lock: threading.Lock
    proven: dict[str, list[str]]
    report: fp.ProofReport = field(default_factory=fp.ProofReport)
    budget: fp.Budget = field(default_factory=fp.new_budget)

    def facts(self, wanted: list[fp.Wanted], where: list[tuple[int, str, int | None]]
              ) -> dict[tuple[int, str], fp.FloatFacts]:
        """The facts of ``wanted`` (remembered or read within the budget) that describe their files, by the
        ``(row, column)`` of ``where`` (row, column, the statistics' row count; one per wanted file)."""
        storage = self.table.storage
        found = fp.obtain(storage, storage.cache_key(), wanted, self.max_workers, self.report, self.budget)
        return {(row, c): found[w.key] for w, (row, c, rows) in zip(wanted, where, strict=True)
                if self.consistent(found.get(w.key), w.key, rows)}

    def consistent(self, facts: fp.FloatFacts | None, key: fp.FileKey, rows: int | None) -> bool:
        """Whether facts were found and describe the file the statistics describe (else counted, kept)."""
        if facts is None:
            return False
        if fp.facts_consistent(facts, rows):
            self.proven.setdefault(key.path, []).append(key.column)
            return True
        self.report.unreadable += 1
        if len(self.report.problems) < 20:
            self.report.problems.append(f"{key.path}: {facts.num_rows} rows read, the statistics say {rows}: "
                                        "kept")
        return False

    def count_proven(self, table: pa.Table, rows: dict[int, set[str]]) -> None:
        """Of ``rows`` of ``table`` (after the facts; row -> the columns proven), those whose NaN counts in
        those columns are now known: free of NaN or holding NaN."""
        names = {c for cs in rows.values() for c in cs}
        nans = {c: table.column(stat_name(c, NAN_COUNT)).to_pylist() for c in names
                if stat_name(c, NAN_COUNT) in table.column_names}
        for row, columns in rows.items():
            counts = [nans[c][row] if c in nans else None for c in columns]
            if None in counts:
                continue
            if any(counts):
                self.report.holding_nan += 1
            else:
                self.report.proven_nan_free += 1


def prove_base_files(ctx: ProofContext, g: SliceGroup, expression: HudiExpression, masks: dict[Any, pa.Array],
                     before: np.ndarray, second: PruneResult, session_tz: str, floats: list[str]) -> PruneResult:
    """``second`` (the statistics verdicts of a group of base files alone) after the float columns' facts of the
    files kept only for lack of them were read or remembered; the facts then stay in the group's statistics
    for later filters."""
    table = g.full.table
    keep2 = second.keep.to_numpy(zero_copy_only=False)
    kept_idx = np.flatnonzero(before & keep2)
    if not len(kept_idx) or not ctx.table.properties.base_files_are_parquet:
        return second
    sub = table.take(pa.array(kept_idx, pa.int64()))
    sub_masks = {k: m.take(pa.array(kept_idx, pa.int64())) for k, m in masks.items()}
    hyp = prune(expression, StatsTable(fp.with_nan_free(sub, floats)).answering(sub_masks), session_tz=session_tz)
    wanted = fp.candidates(sub, np.ones(len(kept_idx), dtype=bool), hyp.keep.to_numpy(zero_copy_only=False),
                           floats)
    if not wanted:
        return second
    paths, sizes = table.column("path"), table.column("file_size")
    instants, num_rows = table.column("instant"), table.column("num_rows")
    keys: list[fp.Wanted] = []
    where: list[tuple[int, str, int | None]] = []
    for j, c in wanted:
        row = int(kept_idx[j])
        s = g.slices[row]
        if s.base_file is None or s.log_files or not str(paths[row].as_py()).endswith(PARQUET_SUFFIX):
            continue
        keys.append(fp.Wanted(fp.FileKey(paths[row].as_py(), sizes[row].as_py(), instants[row].as_py() or "", c),
                              s.base_file.full_path))
        where.append((row, c, num_rows[row].as_py()))
    ctx.report.candidates += len({row for row, _, _ in where})
    if not keys:
        return second
    facts = ctx.facts(keys, where)
    if not facts:
        return second
    new = fp.with_facts(table, facts)
    proven: dict[int, set[str]] = {}
    for row, c in facts:
        proven.setdefault(row, set()).add(c)
    ctx.count_proven(new, proven)
    with ctx.lock:
        g.full = StatsTable(new)
    again = prune(expression, g.full.answering(masks), session_tz=session_tz)
    ctx.report.dropped += int(np.count_nonzero(before & keep2 & ~again.keep.to_numpy(zero_copy_only=False)))
    return again


def prove_merged_slices(ctx: ProofContext, g: SliceGroup, expression: HudiExpression, masks: dict[Any, pa.Array],
                        part_masks: dict[Any, pa.Array], before: np.ndarray, second: PruneResult, session_tz: str,
                        floats: list[str]) -> PruneResult:
    """``second`` (the union verdicts of a group of merged slices) after the parts of the slices kept only for
    lack of a float column's facts were proven (the base file's column, each log file's data blocks); the parts'
    facts stay in the group's part statistics and the union of them in its slice statistics."""
    assert g.parts_stats is not None
    n = len(g.slices)
    full, parts = g.full.table, g.parts_stats.table

    def slice_keep(full_t: pa.Table, parts_t: pa.Table) -> np.ndarray:
        if g.whole_record:
            alone = prune(expression, StatsTable(parts_t).answering(part_masks), session_tz=session_tz)
            return any_part(alone, g.part_slice, n)[0]
        verdict = prune(expression, StatsTable(full_t).answering(masks), session_tz=session_tz)
        keep: np.ndarray = verdict.keep.to_numpy(zero_copy_only=False)
        return keep

    now = slice_keep(full, parts) if g.whole_record else second.keep.to_numpy(zero_copy_only=False)
    kept_idx = np.flatnonzero(before & now)
    if not len(kept_idx):
        return second
    hyp = slice_keep(fp.with_nan_free(full, floats), fp.with_nan_free(parts, floats))
    wanted = fp.candidates(full.take(pa.array(kept_idx, pa.int64())), np.ones(len(kept_idx), dtype=bool),
                           hyp[kept_idx], floats)
    if not wanted:
        return second
    parts_of: dict[int, list[int]] = {}
    for k, j in enumerate(g.part_slice):
        parts_of.setdefault(j, []).append(k)
    p_path, p_size = parts.column("path").to_pylist(), parts.column("file_size").to_pylist()
    p_instant = parts.column("instant").to_pylist()
    p_rows = parts.column("num_rows").to_pylist()
    keys: list[fp.Wanted] = []
    where: list[tuple[int, str, int | None]] = []
    slices_asked: dict[int, set[str]] = {}
    known: dict[str, tuple[list[Any], list[Any], list[bool]]] = {}
    for c in {c for _, c in wanted}:
        nan_name = stat_name(c, NAN_COUNT)
        known[c] = (parts.column(nan_name).to_pylist() if nan_name in parts.column_names else [None] * parts.num_rows,
                    parts.column(stat_name(c, NULL_COUNT)).to_pylist(),
                    pc.is_valid(parts.column(stat_name(c, MIN))).to_pylist())
    for j, c in wanted:
        row = int(kept_idx[j])
        s = g.slices[row]
        logs = {lf.path: lf.full_path for lf in s.log_files}
        typ = full.schema.field(stat_name(c, MIN)).type
        nan, nulls, bounded = known[c]
        asks: list[tuple[fp.Wanted, int]] = []
        for k in parts_of.get(row, []):
            rows, nc, nn = p_rows[k], nulls[k], nan[k]
            if rows is not None and nc is not None and (nc >= rows or (nn is not None and (
                    bounded[k] or nc + nn >= rows))):
                continue                        # known already: no value, or its NaN count and (no number or) bounds
            path = str(p_path[k])
            if path in logs:
                asks.append((fp.Wanted(fp.FileKey(path, p_size[k], s.base_instant, c), logs[path], typ), k))
            elif (s.base_file is not None and path == s.base_file.path and path.endswith(PARQUET_SUFFIX)
                  and ctx.table.properties.base_files_are_parquet):
                asks.append((fp.Wanted(fp.FileKey(path, p_size[k], p_instant[k] or "", c),
                                       s.base_file.full_path), k))
            else:
                asks = []                       # a part that cannot be proven: the slice stays kept, read nothing
                break
        for w, k in asks:
            keys.append(w)
            where.append((k, c, p_rows[k]))
        if asks:
            slices_asked.setdefault(row, set()).add(c)
    ctx.report.candidates += len(slices_asked)
    if not keys:
        return second
    facts = ctx.facts(keys, where)
    if not facts:
        return second
    columns = sorted({c for _, c in facts})
    new_parts = fp.with_facts(parts, facts)
    union = union_stats(new_parts, g.part_slice, n,
                        [(c, full.schema.field(stat_name(c, MIN)).type) for c in columns])
    new_full = full
    for name in union.column_names:
        if name == "num_rows":
            continue
        col = union.column(name)
        if name in new_full.column_names:
            i = new_full.column_names.index(name)
            new_full = new_full.set_column(i, name, col.cast(new_full.schema.field(i).type))
        else:
            new_full = new_full.append_column(name, col)
    ctx.count_proven(new_full, slices_asked)
    with ctx.lock:
        g.full, g.parts_stats = StatsTable(new_full), StatsTable(new_parts)
    again = prune(expression, g.full.answering(masks), session_tz=session_tz)
    after = slice_keep(new_full, new_parts) if g.whole_record else again.keep.to_numpy(zero_copy_only=False)
    ctx.report.dropped += int(np.count_nonzero(before & now & ~after))
    return again


def any_part(alone: PruneResult, part_slice: list[int], n: int) -> tuple[np.ndarray, np.ndarray, TruthColumn]:
    """Per slice, from the verdicts of its parts judged alone: kept when any part is kept; kept only for lack of
    information when every part that keeps it does so for lack of information; the TruthValue whose outcomes
    are those any part may have."""
    idx = np.asarray(part_slice, dtype=np.int64)

    def any_of(bits: pa.BooleanArray) -> np.ndarray:
        out = np.zeros(n, dtype=bool)
        np.logical_or.at(out, idx, bits.to_numpy(zero_copy_only=False))
        return out

    keep = any_of(alone.keep)
    known = any_of(pc.and_(alone.keep, pc.invert(alone.unknown)))
    truth = TruthColumn.from_bits(pa.array(any_of(alone.can_true)), pa.array(any_of(alone.can_false)),
                                  pa.array(any_of(alone.can_null)))
    return keep, keep & ~known, truth


__all__ = ["ProofContext", "SliceGroup", "any_part", "prove_base_files", "prove_merged_slices"]
