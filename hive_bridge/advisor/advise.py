"""Which layout a table's workload would read least from: candidates chosen from the workload's filters,
simulated on several independent samples of the table's rows, compared with today's layout simulated the same
way, and the best one recommended with the Hudi settings that produce it — when its saving is beyond the
spread of the estimate.

:func:`advise_workload` takes a :class:`hive_bridge.workload.Workload` and returns one :class:`Advice` per
table. The calibration — today's layout simulated beside what the real pruner keeps on today's files — uses
every filter when the workload was planned (:meth:`Workload.plan`), else the heaviest filters, planned here one
at a time: at most :data:`CALIBRATION_FILTERS`, and no more than :data:`CALIBRATION_FILES` file verdicts in all
(the pruner lists every kept file: at 100,000 files a filter costs a good part of a second, and a planned
workload of 10,000 such filters holds gigabytes of listings). :meth:`Advice.as_json` is the JSON contract an
HTML report renders::

    {"table": str, "sample_rows": int, "samples": int, "target_file_bytes": int, "filters": int,
     "candidates": [{"layout": str, "files_read": float, "bytes_read": float, "bytes_low": float,
                     "bytes_high": float, "saving": float, "vs_best": float}],
     "recommended": {"layout": str, "saving": float, "settings": {str: str}, "sql": [str],
                     "files": int, "runner_up": {"layout": str, "bytes_vs_best": float,
                                                 "within_spread": bool} | None} | None,
     "notes": [str], "warnings": [str]}

``files_read`` and ``bytes_read`` are the workload's totals (each filter's reads times its occurrences), the
mean over the samples; ``bytes_low`` / ``bytes_high`` the smallest and largest over the samples; ``saving`` the
fraction of today's simulated bytes saved (negative: reads more); ``vs_best`` the bytes read over the least any
candidate reads (1.0: the best). The first candidate is always ``today``. ``settings`` make the next write
cluster the table (inline, ``hoodie.clustering.inline.max.commits=1``); ``sql`` clusters it now (Spark SQL
statements: Hudi's ``run_clustering`` procedure with the same options, for ``linear`` after the shuffle settings
:func:`sql_for` explains; empty for a partitioning); ``files`` is the number of files that clustering writes
(``ceil(bytes of a partition's files / target)`` per partition, as Hudi plans it); ``runner_up`` the candidate
reading least after the recommended one, its bytes over the recommended one's, and whether its lowest sample is at
or below the recommended one's highest (``within_spread``: the estimate cannot tell them apart). ``warnings``:
a file size below Hudi's small-file limit, a table too small for several files per partition.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import sarg
from hive_bridge.advisor.sample import Sample, sample_rows
from hive_bridge.advisor.simulate import (
    HILBERT,
    LINEAR,
    PARTITION,
    TODAY,
    ZORDER,
    Layout,
    SimulatedFiles,
    judge,
    simulate,
)
from hive_bridge.errors import HiveBridgeError
from hive_bridge.filters.expression import HudiExpression, translate
from hive_bridge.pruning.pruner import filter_columns
from hive_bridge.stats.contract import resolve_column
from hive_bridge.workload.runner import FilterEntry, TableState, Workload
from hive_bridge.workload.tables import redact

#: rows sampled per sample, files read per sample, independent samples
SAMPLE_ROWS = 200_000
MAX_FILES = 1_000
SAMPLES = 3
#: the fewest sampled rows a simulated file is cut from (thinner samples: each stands for several files)
MIN_ROWS_PER_FILE = 8
#: a layout is recommended only when it saves at least this fraction and beyond the spread of the estimate
MIN_SAVING = 0.05
#: candidate columns (by weight), and the most distinct values a partitioning column may have
MAX_COLUMNS = 3
MAX_PARTITION_VALUES = 1_000
#: filters planned with the real pruner for the calibration when the workload was not planned, and the most
#: file verdicts they may take in all (files x filters; at least one filter)
CALIBRATION_FILTERS = 200
CALIBRATION_FILES = 2_000_000
CLUSTERING_STRATEGY = {LINEAR: "linear", ZORDER: "z-order", HILBERT: "hilbert"}
#: Hudi's defaults: a file below ``hoodie.parquet.small.file.limit`` is small (the next writes pack records into
#: it); ``hoodie.parquet.max.file.size`` is the size its writers fill files to; a clustering group holds at most
#: ``hoodie.clustering.plan.strategy.max.bytes.per.group`` of input files (each group sorted on its own) and a
#: plan at most ``hoodie.clustering.plan.strategy.max.num.groups`` groups
HUDI_SMALL_FILE_LIMIT = 104_857_600
HUDI_PARQUET_MAX_FILE_SIZE = 125_829_120
HUDI_MAX_BYTES_PER_GROUP = 2_147_483_648
HUDI_MAX_NUM_GROUPS = 30


class AdviceError(HiveBridgeError):
    """A table that cannot be advised on (not opened, no filters, nothing readable)."""


@dataclass
class Candidate:
    """One layout's estimate for the workload: totals over its occurrences, mean / low / high over samples."""

    layout: str
    files_read: float
    bytes_read: float
    bytes_low: float
    bytes_high: float
    saving: float = 0.0
    vs_best: float = 1.0  # bytes read over the least any candidate reads (1.0: the best)

    def as_json(self) -> dict[str, Any]:
        return {"layout": self.layout, "files_read": round(self.files_read, 3), "bytes_read": round(self.bytes_read, 1),
                "bytes_low": round(self.bytes_low, 1), "bytes_high": round(self.bytes_high, 1),
                "saving": round(self.saving, 6), "vs_best": round(self.vs_best, 4)}


@dataclass
class Advice:
    """The advice for one table (see the module's text for its JSON form)."""

    table: str
    sample_rows: int
    samples: int
    target_file_bytes: int
    filters: int
    candidates: list[Candidate]
    recommended: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    #: the calibration: over the ``calibration_filters`` heaviest filters (all when the workload was planned),
    #: what the real pruner keeps on today's files and what today's layout simulated reads (occurrence totals)
    engine_files_read: float = 0.0
    engine_bytes_read: float = 0.0
    simulated_bytes_read: float = 0.0
    calibration_filters: int = 0
    calibration_share: float = 1.0  # the share of the occurrences those filters account for
    table_bytes: int = 0
    table_files: int = 0
    occurrences: int = 0
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "sample_rows": self.sample_rows, "samples": self.samples,
                "target_file_bytes": self.target_file_bytes, "filters": self.filters,
                "candidates": [c.as_json() for c in self.candidates], "recommended": self.recommended,
                "notes": list(self.notes), "warnings": list(self.warnings)}


def _parsed_filters(state: TableState, entries: Sequence[FilterEntry]
                    ) -> tuple[list[FilterEntry], list[tuple[HudiExpression | None, str]], list[int],
                               list[sarg.SearchArgument | None]]:
    """The entries whose filter reads (with their expressions, weights and SearchArguments); a filter that
    does not read against the table's columns is left out (its entry's ``error`` says why)."""
    kept: list[FilterEntry] = []
    exprs: list[tuple[HudiExpression | None, str]] = []
    weights: list[int] = []
    parsed_all: list[sarg.SearchArgument | None] = []
    for e in entries:
        try:
            parsed = sarg.read_filter(e.hiveql, state.types) if e.hiveql else None
            expression = translate(parsed, state.types) if parsed is not None else None
        except (sarg.SargError, HiveBridgeError, ValueError) as exc:
            e.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            continue
        kept.append(e)
        exprs.append((expression, e.time_zone))
        weights.append(e.occurrences)
        parsed_all.append(parsed)
    return kept, exprs, weights, parsed_all


def candidate_columns(state: TableState, parsed: Sequence[sarg.SearchArgument | None], weights: Sequence[int]
                      ) -> list[tuple[str, int]]:
    """The table's columns the filters read, heaviest first (weight: occurrences of filters reading it)."""
    assert state.snapshot is not None
    table = state.snapshot.table
    schema = table.arrow_schema(include_meta_fields=False)
    types = {f.name: f.type for f in schema}
    weight: dict[str, int] = {}
    for filt, w in zip(parsed, weights, strict=True):
        for name in filter_columns(table, filt) or ():
            real = resolve_column(types, name)
            if real is not None:
                weight[real] = weight.get(real, 0) + w
    usable = {c: w for c, w in weight.items() if not pa.types.is_nested(types[c])}
    return sorted(usable.items(), key=lambda kv: (-kv[1], kv[0]))


def candidate_layouts(columns: Sequence[str], sample: Sample, partition_fields: Sequence[str]) -> list[Layout]:
    """today; linear on each of the heaviest columns; Z-order and Hilbert over the heaviest 2 and 3 (partition
    fields left out: rows are ordered inside partitions); a partitioning by each heavy column with few distinct
    values (not already a partition field)."""
    top = list(columns[:MAX_COLUMNS])
    # a clustering orders rows inside each partition: ordering by a partition field changes nothing
    order_by = [c for c in columns if c not in partition_fields][:MAX_COLUMNS]
    out = [Layout(TODAY)] + [Layout(LINEAR, (c,)) for c in order_by]
    for k in (2, 3):
        if len(order_by) >= k:
            out += [Layout(ZORDER, tuple(order_by[:k])), Layout(HILBERT, tuple(order_by[:k]))]
    for c in top:
        if c in partition_fields:
            continue
        distinct = pc.count_distinct(sample.rows.column(c), mode="all").as_py()
        if 2 <= distinct <= min(MAX_PARTITION_VALUES, max(2, sample.rows.num_rows // 50)):
            out.append(Layout(PARTITION, (c,)))
    return out


def settings_for(layout: Layout, target_file_bytes: int, largest_file: int, largest_partition_bytes: int = 0,
                 partitions: int = 1) -> dict[str, str]:
    """The Hudi writer settings that produce ``layout`` (``HoodieClusteringConfig``'s keys; a partitioning by
    ``hoodie.datasource.write.partitionpath.field``): with ``hoodie.clustering.inline=true`` and
    ``hoodie.clustering.inline.max.commits=1`` the next write clusters the table. Every file is a candidate
    (``small.file.limit`` above the largest file) and each partition one clustering group, sorted as a whole (the
    group limit above its bytes, as many groups as partitions), which is what the simulation cuts."""
    if layout.kind == PARTITION:
        return {"hoodie.datasource.write.partitionpath.field": layout.columns[0]}
    out = {
        "hoodie.clustering.plan.strategy.sort.columns": ",".join(layout.columns),
        "hoodie.layout.optimize.strategy": CLUSTERING_STRATEGY[layout.kind],
        "hoodie.clustering.plan.strategy.target.file.max.bytes": str(target_file_bytes),
        # every existing file below the limit is a clustering candidate: above the largest, all are clustered once
        "hoodie.clustering.plan.strategy.small.file.limit": str(max(largest_file, target_file_bytes) + 1),
        "hoodie.clustering.plan.strategy.max.bytes.per.group": str(max(HUDI_MAX_BYTES_PER_GROUP,
                                                                      largest_partition_bytes + 1)),
        "hoodie.clustering.plan.strategy.max.num.groups": str(max(HUDI_MAX_NUM_GROUPS, partitions)),
        "hoodie.clustering.inline": "true",
        "hoodie.clustering.inline.max.commits": "1",
        "hoodie.clustering.async.enabled": "false",
    }
    if layout.kind in (ZORDER, HILBERT):
        out["hoodie.layout.optimize.curve.build.method"] = "sample"
    return out


#: the settings a ``CALL run_clustering`` takes as its own arguments or does not need (it clusters now)
_NOT_CALL_OPTIONS = ("hoodie.clustering.plan.strategy.sort.columns", "hoodie.layout.optimize.strategy",
                     "hoodie.clustering.inline", "hoodie.clustering.inline.max.commits",
                     "hoodie.clustering.async.enabled")


def sql_for(table_path: str, layout: Layout, settings: dict[str, str], files_per_partition: int) -> list[str]:
    """Spark SQL (with Hudi's session extension) that clusters the table now, as ``settings`` would after the
    next write: Hudi's ``run_clustering`` procedure (``order``, ``order_strategy``, ``options`` as ``key=value``
    pairs separated by commas). Hudi's linear clustering sorts with a Spark shuffle and then coalesces to the
    planned file count, so it writes no more files than the shuffle has partitions (and adaptive execution merges
    small ones): for ``linear`` two ``SET`` statements first give the shuffle the planned partitions (the curves
    range-partition to the planned count themselves). Empty for a partitioning (a rewrite, not a clustering)."""
    if layout.kind == PARTITION:
        return []
    options = ",".join(f"{k}={v}" for k, v in settings.items() if k not in _NOT_CALL_OPTIONS)
    quoted = table_path.replace("\\", "\\\\").replace("'", "\\'")
    out = []
    if layout.kind == LINEAR:
        out += [f"SET spark.sql.shuffle.partitions={max(1, files_per_partition)}",
                "SET spark.sql.adaptive.coalescePartitions.enabled=false"]
    out.append(f"CALL run_clustering(path => '{quoted}', order => '{','.join(layout.columns)}', "
               f"order_strategy => '{CLUSTERING_STRATEGY[layout.kind]}', options => '{options}')")
    return out


def target_size(mean_file_bytes: float, given: int | None) -> tuple[int, list[str]]:
    """The file size the layouts are cut to and the clustering writes, and warnings: ``given`` when set (a
    warning when it is below Hudi's small-file limit), else today's mean file size when it is not small, else
    Hudi's ``hoodie.parquet.max.file.size`` default (today's small files are not made again)."""
    from hive_bridge.workload.formatting import human_bytes

    if given:
        if given < HUDI_SMALL_FILE_LIMIT:
            return given, [f"files of {human_bytes(given)} (--target-file-bytes) are below Hudi's small-file limit "
                           f"({human_bytes(HUDI_SMALL_FILE_LIMIT)}): Hudi's next inserts pack records into them and "
                           f"each file costs a listing entry, an open and a footer"]
        return given, []
    if mean_file_bytes >= HUDI_SMALL_FILE_LIMIT:
        return round(mean_file_bytes), []
    return HUDI_PARQUET_MAX_FILE_SIZE, [
        f"today's files average {human_bytes(int(mean_file_bytes))}, below Hudi's small-file limit "
        f"({human_bytes(HUDI_SMALL_FILE_LIMIT)}): the layouts are cut into files of "
        f"{human_bytes(HUDI_PARQUET_MAX_FILE_SIZE)} (Hudi's hoodie.parquet.max.file.size), not today's size; "
        f"--target-file-bytes sets another"]


def _notes_for(layout: Layout) -> list[str]:
    if layout.kind == PARTITION:
        return [f"partitioning by {layout.columns[0]} needs the table rewritten (clustering cannot change the "
                f"partitioning): write it anew with hoodie.datasource.write.partitionpath.field="
                f"{layout.columns[0]}"]
    return ["run the CALL in Spark SQL with Hudi's session extension to cluster now, or add the settings to the "
            "next write (hoodie.clustering.inline.max.commits=1: that write clusters the table); "
            "hoodie.clustering.plan.strategy.small.file.limit is set above the largest file so that every file is "
            "clustered once: take the settings out of later writes (Hudi's default small.file.limit is 314572800), "
            "or every clustering rewrites the whole table"] + (
        ["a linear clustering writes no more files than its sort's shuffle has partitions: the writer's Spark "
         "session needs the two SET values too"] if layout.kind == LINEAR else [])


def advise_table(state: TableState, *, sample_rows_per_sample: int = SAMPLE_ROWS, samples: int = SAMPLES,
                 max_files: int = MAX_FILES, target_file_bytes: int | None = None, seed: int = 0,
                 min_rows_per_file: int = MIN_ROWS_PER_FILE) -> Advice:
    """The advice for one table of a planned workload (see the module's text). Raises :class:`AdviceError` for a
    table that was not opened or has no filters."""
    uri = redact(state.uri)
    if state.snapshot is None:
        raise AdviceError(f"table {uri}: {state.error or 'not opened'}")
    entries = [e for e in state.entries.values() if e.error is None]
    if not entries:
        raise AdviceError(f"table {uri}: no filters of the workload read it"
                          + (f" ({len(state.entries)} could not be read)" if state.entries else ""))
    snap = state.snapshot
    table = snap.table
    read, exprs, weights, parsed = _parsed_filters(state, entries)
    notes: list[str] = []
    if len(read) < len(entries):
        notes.append(f"{len(entries) - len(read)} filters could not be read against the table's columns and are "
                     f"left out")
        entries = read
    if not entries:
        raise AdviceError(f"table {uri}: none of its {len(state.entries)} filters could be read")
    columns = candidate_columns(state, parsed, weights)
    slices = snap.slices
    based = [s for s in slices if s.base_file is not None]
    if not based:
        raise AdviceError(f"table {uri}: no base files to sample")
    if any(s.log_files for s in slices):
        notes.append("the table has log files: the simulation reads base files only (as after a compaction)")
    table_bytes = sum(s.base_file.size for s in based if s.base_file is not None)
    largest = max(s.base_file.size for s in based if s.base_file is not None)
    target, warnings = target_size(table_bytes / len(based), target_file_bytes)
    by_partition: dict[str, int] = {}
    for sl in based:
        if sl.base_file is not None:
            by_partition[sl.partition_path] = by_partition.get(sl.partition_path, 0) + sl.base_file.size
    largest_partition = max(by_partition.values())
    schema = table.arrow_schema(include_meta_fields=False)
    types = {f.name: f.type for f in schema}
    read_columns = sorted({resolve_column(types, n) or n for p in parsed for n in (filter_columns(table, p) or ())}
                          & set(types))
    if not read_columns:
        notes.append("no filter reads a column of the table: every layout reads the same")
    sample_list: list[Sample] = []
    for k in range(max(1, samples)):
        s = sample_rows(table, slices, read_columns, rows=sample_rows_per_sample, max_files=max_files,
                        seed=seed + k)
        notes.extend(s.problems[:5])
        if s.rows.num_rows == 0:
            continue
        sample_list.append(s)
        if s.exact:
            break   # the whole table was read: another sample would be the same
    if not sample_list:
        raise AdviceError(f"table {uri}: no rows could be read")
    first = sample_list[0]
    if first.exact:
        notes.append("the whole table was read (no sampling): the estimate has no spread")
    partition_fields = list(table.properties.partition_fields)
    layouts = candidate_layouts([c for c, _ in columns if c in read_columns], first, partition_fields)
    blocks: list[SimulatedFiles] = []
    for s in sample_list:
        for layout in layouts:
            blocks.append(simulate(s, layout, target, min_rows_per_file))
    stand_in = max(b.stand_in for b in blocks)
    if stand_in > 1.0:
        notes.append(f"the sample is thinner than {min_rows_per_file} rows per file: each simulated file is cut from "
                     f"{min_rows_per_file} sampled rows and stands for up to {stand_in:.1f} files of the target size; "
                     f"its min/max come from fewer rows than a real file holds (reads of scattered columns are "
                     f"under-estimated, selective filters over-estimated): more --sample-rows narrow this")
    judged = judge(blocks, exprs)
    w = np.asarray(weights, dtype=np.float64)
    per_block_bytes = w @ judged.bytes          # totals over occurrences, per block
    per_block_files = w @ judged.files
    n_layouts = len(layouts)
    by_sample_bytes = per_block_bytes.reshape(len(sample_list), n_layouts)
    by_sample_files = per_block_files.reshape(len(sample_list), n_layouts)
    candidates = []
    for j, layout in enumerate(layouts):
        b = by_sample_bytes[:, j]
        candidates.append(Candidate(layout.name, float(by_sample_files[:, j].mean()), float(b.mean()),
                                    float(b.min()), float(b.max())))
    today = candidates[0]
    for c in candidates:
        c.saving = 1.0 - c.bytes_read / today.bytes_read if today.bytes_read else 0.0
    chosen, engine_files, engine_bytes = _engine_figures(state, entries, parsed)
    simulated_today = float(np.mean([w[chosen] @ judged.bytes[chosen, k * n_layouts]
                                     for k in range(len(sample_list))])) if chosen else 0.0
    recommended = None
    least = min(c.bytes_read for c in candidates)
    for c in candidates:
        c.vs_best = c.bytes_read / least if least else 1.0
    best_j = min(range(1, n_layouts), key=lambda j: candidates[j].bytes_read, default=None)
    if best_j is not None:
        best = candidates[best_j]
        if best.saving >= MIN_SAVING and best.bytes_high < today.bytes_low:
            settings = settings_for(layouts[best_j], target, largest, largest_partition, len(by_partition))
            recommended = {"layout": best.layout, "saving": round(best.saving, 6), "settings": settings,
                           "sql": sql_for(uri, layouts[best_j], settings,
                                          max(math.ceil(b / target) for b in by_partition.values())),
                           "files": _files_after(by_partition, target),
                           "runner_up": _runner_up(candidates, best_j)}
            notes.extend(_notes_for(layouts[best_j]))
            warnings.extend(_small_table_warning(by_partition, target, layouts[best_j]))
        else:
            notes.append(f"keep today's layout: the best candidate, {best.layout}, saves {best.saving:.1%} of "
                         f"the bytes read, within the spread of the estimate or below {MIN_SAVING:.0%}")
            warnings.extend(_small_table_warning(by_partition, target, layouts[best_j]))
    if not columns:
        notes.append("the filters read no column a layout can order")
    sim_rows = sum(s.rows.num_rows for s in sample_list) // len(sample_list)
    share = float(w[chosen].sum() / w.sum()) if chosen else 0.0
    if simulated_today and engine_bytes:
        scope = "" if len(chosen) == len(entries) else f" on the {len(chosen)} heaviest filters ({share:.1%} of runs)"
        notes.append(f"calibration{scope}: today's layout simulated reads {simulated_today / engine_bytes:.2f}x what "
                     f"the engine keeps on today's files")
    return Advice(uri, sim_rows, len(sample_list), target, len(entries), candidates, recommended, notes,
                  engine_files, engine_bytes, simulated_today, len(chosen), share, table_bytes, len(based),
                  int(w.sum()), warnings)


def _files_after(by_partition: dict[str, int], target: int) -> int:
    """The files Hudi's clustering writes: ``ceil(bytes of a partition's files / target)`` per partition."""
    return sum(max(1, math.ceil(b / target)) for b in by_partition.values())


def _runner_up(candidates: Sequence[Candidate], best_j: int) -> dict[str, Any] | None:
    """The candidate reading least after the best (today included): its bytes read over the best's, and
    whether it is within the estimate's spread (its lowest sample at or below the best's highest)."""
    others = [c for j, c in enumerate(candidates) if j != best_j]
    if not others:
        return None
    best = candidates[best_j]
    second = min(others, key=lambda c: c.bytes_read)
    return {"layout": second.layout, "bytes_vs_best": round(second.bytes_read / best.bytes_read, 4)
            if best.bytes_read else 1.0, "within_spread": bool(second.bytes_low <= best.bytes_high)}


def _small_table_warning(by_partition: dict[str, int], target: int, layout: Layout) -> list[str]:
    from hive_bridge.workload.formatting import human_bytes

    if layout.kind == PARTITION:
        return []
    files = _files_after(by_partition, target)
    biggest = max(by_partition.values())
    if biggest >= 2 * target:
        return []
    return [f"the table is small for files of {human_bytes(target)}: Hudi's clustering writes "
            f"ceil(partition bytes / target) files per partition, {files} in all ({len(by_partition)} partitions, "
            f"the largest {human_bytes(biggest)}); file-level skipping needs several files per partition"]


def _engine_figures(state: TableState, entries: Sequence[FilterEntry], parsed: Sequence[sarg.SearchArgument | None]
                    ) -> tuple[list[int], float, float]:
    """(the filters used, files and bytes the real pruner keeps for them, occurrence totals): every filter when
    each was planned, else the heaviest (see the module's text), planned here without keeping listings."""
    if all(e.listing is not None for e in entries):
        chosen = list(range(len(entries)))
        return (chosen, float(sum(e.occurrences * e.listing.files_kept for e in entries if e.listing)),
                float(sum(e.occurrences * e.listing.bytes_kept for e in entries if e.listing)))
    assert state.snapshot is not None
    limit = max(1, min(CALIBRATION_FILTERS, CALIBRATION_FILES // max(1, len(state.snapshot.slices))))
    order = sorted(range(len(entries)), key=lambda i: -entries[i].occurrences)[:limit]
    files = size = 0.0
    for i in order:
        e = entries[i]
        listing = e.listing or state.snapshot.plan(parsed[i], session_time_zone=e.time_zone,
                                                              query_type=e.query_type)
        files += e.occurrences * listing.files_kept
        size += e.occurrences * listing.bytes_kept
    return sorted(order), files, size


def advise_workload(work: Workload, tables: Sequence[str] | None = None, **options: Any
                    ) -> tuple[list[Advice], list[str]]:
    """Advice for the tables of a planned workload (``tables``: their URIs as resolved; None: every table with
    filters), and the errors of the tables that could not be advised on (one message each). ``options`` go
    to :func:`advise_table`."""
    advice: list[Advice] = []
    errors: list[str] = []
    wanted = list(tables) if tables is not None else [u for u, s in work.tables.items() if s.entries or s.error]
    for uri in wanted:
        state = work.tables.get(uri)
        if state is None:
            errors.append(f"table {redact(uri)}: no scan of the workload read it")
            continue
        try:
            advice.append(advise_table(state, **options))
        except (AdviceError, sarg.SargError) as exc:
            errors.append(str(exc))
    return advice, errors


__all__ = ["CALIBRATION_FILES", "CALIBRATION_FILTERS", "Advice", "AdviceError", "Candidate", "advise_table",
           "advise_workload", "candidate_columns", "candidate_layouts", "settings_for", "sql_for", "target_size"]
