"""Layouts simulated on a sample: the sample's rows put in a layout's order, cut into files of the target size,
each simulated file's statistics computed in the statistics contract (:func:`hive_bridge.stats.groups.group_stats`)
and every filter judged by the project's vectorized evaluator (:func:`hive_bridge.pruning.vectorized.prune`).

A :class:`Layout` is today's (the sampled rows kept in the files they came from), ``linear`` (sorted by one
column), ``z-order`` / ``hilbert`` (along a curve over 2–3 columns' ranks) or ``partition`` (grouped by one
column's values, today's order inside each group, each group cut into its own files).

Cutting: a file of the target size holds ``target / bytes_per_row`` of the table's rows, i.e. ``step`` sampled
rows; files are cut every ``step`` rows of the ordered sample (each group on its own for a partitioned layout),
the last one smaller, as a writer fills files. When ``step`` is below ``min_rows`` sampled rows, files of
``min_rows`` rows are cut instead and each stands for ``min_rows / step`` real files (said in the notes), unless
the sample is the whole table (its files are cut from the rows they would hold). When
the sample is not the whole table, the boundary between two files lies somewhere between the last sampled row
of one and the first of the next: each simulated file's statistics include the next one's first row (the
estimate errs towards reading more).

Bytes: Hudi's clustering plans ``ceil(bytes of a partition's files / target)`` output files per partition
(``PartitionAwareClusteringPlanStrategy``: the input files' sizes, one clustering group per partition when the
group limit allows), and each output file costs its rows' column chunks plus the bytes every file carries
outside them (footer, Hudi's bloom filter in its key-value metadata: about 430 KB with Hudi's defaults). So the
files are cut from the table's bytes per row (today's files, overhead included), and each simulated file's bytes
are its rows' share of the table's column-chunk bytes plus the sampled files' mean overhead: a table of many
tiny files shrinks when clustered into fewer.

Every (layout, sample) pair becomes one block of rows of a single statistics table, so each filter is judged
once for all of them: the statistics are computed once per layout and sample, and the filters are judged
vectorized over every simulated file at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hive_bridge.advisor.curves import curve_order, linear_order, rank_nulls_first
from hive_bridge.advisor.sample import FILE_COLUMN, PARTITION_COLUMN, Sample
from hive_bridge.filters.expression import HudiExpression
from hive_bridge.pruning.vectorized import StatsTable, prune
from hive_bridge.stats.groups import group_stats

TODAY, LINEAR, ZORDER, HILBERT, PARTITION = "today", "linear", "z-order", "hilbert", "partition"


@dataclass(frozen=True)
class Layout:
    """A candidate layout: its kind and the columns it is built on."""

    kind: str
    columns: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.kind if self.kind == TODAY else f"{self.kind}({','.join(self.columns)})"


def parse_layout(name: str) -> Layout:
    """A layout from its name: ``today``, ``linear(c)``, ``z-order(a,b)``, ``hilbert(a,b,c)``,
    ``partition(c)``."""
    text = name.strip()
    if text == TODAY:
        return Layout(TODAY)
    kind, sep, rest = text.partition("(")
    columns = tuple(c.strip() for c in rest.rstrip(")").split(",") if c.strip()) if sep else ()
    if kind not in (LINEAR, ZORDER, HILBERT, PARTITION) or not columns or not rest.endswith(")"):
        raise ValueError(f"not a layout: {name!r}")
    return Layout(kind, columns)


@dataclass
class SimulatedFiles:
    """One layout on one sample: the statistics of its simulated files, the bytes each stands for and how many
    real files each stands for."""

    layout: Layout
    stats: pa.Table
    bytes: np.ndarray
    files: np.ndarray
    stand_in: float = 1.0  # real files per simulated file (1 unless the sample was too thin)


def _cut(order: np.ndarray, segments: np.ndarray | None, step: float, overlap: bool
         ) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Row positions and group ids of files cut every ``step`` rows of ``order`` (inside each segment when
    ``segments`` — the segment of each ordered row, contiguous — is given), and each file's own row count."""
    n = len(order)
    if segments is None:
        bounds = [(0, n)]
    else:
        change = np.flatnonzero(segments[1:] != segments[:-1]) + 1
        edges = np.concatenate([[0], change, [n]]).astype(np.int64)
        bounds = list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
    take: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    sizes: list[int] = []
    group = 0
    for lo, hi in bounds:
        count = hi - lo
        files = max(1, math.ceil(count / step - 1e-9))
        cuts = [lo + min(count, round(i * step)) for i in range(files)] + [hi]
        for i in range(files):
            a, b = cuts[i], cuts[i + 1]
            if b <= a:
                continue
            end = b + 1 if overlap and b < hi else b
            take.append(order[a:end])
            ids.append(np.full(end - a, group, dtype=np.int64))
            sizes.append(b - a)
            group += 1
    return np.concatenate(take), np.concatenate(ids), sizes


def layout_order(sample: Sample, layout: Layout) -> tuple[np.ndarray, np.ndarray | None]:
    """The sampled rows' positions in the layout's order, and each ordered row's segment (the partition it is
    written to; None: one segment). A clustering orders rows inside each of the table's partitions; a
    partitioning by a column replaces the table's partitions."""
    rows = sample.rows
    if layout.kind in (LINEAR, ZORDER, HILBERT):
        if layout.kind == LINEAR:
            order = linear_order(rows.column(layout.columns[0]))
        else:
            order = curve_order([rows.column(c) for c in layout.columns], layout.kind)
        partitions = rows.column(PARTITION_COLUMN).to_numpy()
        if len(partitions) and partitions.min() != partitions.max():
            order = order[np.argsort(partitions[order], kind="stable")]
            return order, partitions[order]
        return order, None
    if layout.kind == PARTITION:
        order = linear_order(rows.column(layout.columns[0]))   # ties (one partition) keep today's order
        values = rows.column(layout.columns[0]).take(pa.array(order))
        return order, rank_nulls_first(values, "dense").to_numpy()
    raise ValueError(f"unknown layout {layout.name}")


def simulate(sample: Sample, layout: Layout, target_file_bytes: int, min_rows: int) -> SimulatedFiles:
    """The simulated files of one layout on one sample (see the module's text)."""
    data = sample.rows.drop_columns([FILE_COLUMN, PARTITION_COLUMN])
    n = sample.rows.num_rows
    if layout.kind == TODAY:
        groups = sample.rows.column(FILE_COLUMN).to_numpy()
        picked = len(sample.file_bytes)
        scale = sample.table_bytes / float(sample.file_bytes.sum()) if sample.file_bytes.sum() else 0.0
        stats = group_stats(data, groups, picked)
        return SimulatedFiles(layout, stats, sample.file_bytes * scale,
                              np.full(picked, sample.table_files / max(1, picked), dtype=np.float64))
    bytes_per_sampled_row = sample.table_bytes / n
    step = target_file_bytes / bytes_per_sampled_row
    stand_in = 1.0
    if step < min_rows and not sample.exact:   # the whole table: its own rows, however few a file holds
        stand_in = min_rows / step
        step = float(min_rows)
    order, segments = layout_order(sample, layout)
    take, ids, sizes = _cut(order, segments, step, overlap=not sample.exact)
    stats = group_stats(data.take(pa.array(take)), ids, len(sizes))
    own = np.asarray(sizes, dtype=np.float64)
    overhead = min(sample.overhead_per_file, sample.table_bytes / max(1, sample.table_files))
    data_per_sampled_row = max(0.0, sample.table_bytes - overhead * sample.table_files) / n
    return SimulatedFiles(layout, stats, own * data_per_sampled_row + overhead * stand_in,
                          np.full(len(sizes), stand_in), stand_in)


@dataclass(frozen=True)
class Judged:
    """Per filter (rows) and simulated block (columns): the bytes and files each filter would read."""

    bytes: np.ndarray
    files: np.ndarray


def judge(blocks: Sequence[SimulatedFiles], filters: Sequence[tuple[HudiExpression | None, str]]) -> Judged:
    """Every filter (an expression, None for a scan without a filter, with its session time zone) judged
    against every block of simulated files at once: one statistics table, one :func:`prune` per filter."""
    table = pa.concat_tables([b.stats for b in blocks], promote_options="permissive")
    stats = StatsTable(table)
    sizes = np.concatenate([b.bytes for b in blocks])
    weights = np.concatenate([b.files for b in blocks])
    starts = np.cumsum([0] + [b.stats.num_rows for b in blocks[:-1]])
    out_bytes = np.zeros((len(filters), len(blocks)))
    out_files = np.zeros((len(filters), len(blocks)))
    all_bytes = np.add.reduceat(sizes, starts)
    all_files = np.add.reduceat(weights, starts)
    for i, (expression, tz) in enumerate(filters):
        if expression is None:
            out_bytes[i], out_files[i] = all_bytes, all_files
            continue
        keep = prune(expression, stats, session_tz=tz).keep.to_numpy(zero_copy_only=False)
        out_bytes[i] = np.add.reduceat(np.where(keep, sizes, 0.0), starts)
        out_files[i] = np.add.reduceat(np.where(keep, weights, 0.0), starts)
    return Judged(out_bytes, out_files)


__all__ = ["HILBERT", "LINEAR", "PARTITION", "TODAY", "ZORDER", "Judged", "Layout", "SimulatedFiles", "judge",
           "layout_order", "parse_layout", "simulate"]
