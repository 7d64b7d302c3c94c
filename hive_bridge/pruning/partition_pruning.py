"""Whole partitions judged by the metadata table's ``partition_stats``, before any file of them is looked at.

Hudi 1.x can keep, per data partition and column, the min / max / null count aggregated over the partition's
files (the metadata table's ``partition_stats`` partition). Those rows make a statistics table whose rows are
partitions (:func:`hive_bridge.stats.mdt_rows.partition_rows`, the one statistics contract), judged by the same
vectorized evaluator as files, together with the partition values (:func:`hive_bridge.pruning.pruner.
partition_stats`); a partition whose root cannot be TRUE holds no matching row, so its slices are dropped
without their files' statistics being read.

What is trusted, and why (Hudi's ``HoodieTableMetadataUtil`` / ``PartitionStatsIndexer``: a commit's partition
stats are the merge of its new files' statistics with the partition's earlier record, or, with tight bounds,
recomputed from the column statistics of the partition's latest merged slices):

- only a metadata table in step with the data timeline: ``partition_stats`` ready and usable, no lagging data
  instant (the same rule as the record index), and no judged slice newer than the instant it is synced up to;
- only partitions whose judged slices have no log file: whether a partition's record covers its log files
  depends on the Hudi version, and a log file's own entry may say it holds no value when it does (seen on
  ``v8_trips_8i3u1d``); a read-optimized query, which reads base files only, is judged by them;
- the bounds as :func:`~hive_bridge.stats.mdt_rows.partition_rows` maps them (null counts unknown; string
  bounds only with a null count of 0; a column counting fewer values than the partition's other columns left
  files out); a partition or column without an entry is unknown.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from hive_bridge.errors import MetadataTableError
from hive_bridge.filters.expression import HudiExpression
from hive_bridge.formats.parquet_footer import stat_leaves
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.mdt.keys import PARTITION_STATS
from hive_bridge.pruning.vectorized import StatsTable, prune
from hive_bridge.stats.mdt_rows import partition_rows
from hive_bridge.table.table import META_FIELDS, HudiTable

__all__ = ["PartitionStatsStage", "PartitionVerdicts", "partition_stats_problem"]

_get_partition = operator.attrgetter("partition_path")
_get_log_files = operator.attrgetter("log_files")
_get_base_instant = operator.attrgetter("base_instant")


@dataclass
class PartitionVerdicts:
    """Which slices the partition statistics drop (``dropped``, a mask over the slices judged), the partitions
    they dropped (``partitions_dropped``: partition -> its row in the verdict, :meth:`reason` says why), and why
    a partition or the whole stage was not used."""

    dropped: np.ndarray
    partitions_dropped: dict[str, int] = field(default_factory=dict)
    partitions_judged: int = 0
    not_used: str = ""
    verdict: Any = None
    _reasons: dict[str, str] = field(default_factory=dict)

    @property
    def slices_dropped(self) -> int:
        return int(np.count_nonzero(self.dropped))

    def truth(self, partition: str) -> Any:
        """The TruthValue a dropped partition's statistics give the filter (None for another partition)."""
        row = self.partitions_dropped.get(partition)
        return None if row is None or self.verdict is None else self.verdict.truth[row]

    def reason(self, partition: str) -> str:
        """Why the partition statistics dropped ``partition`` (explain)."""
        found = self._reasons.get(partition)
        if found is None:
            row = self.partitions_dropped.get(partition)
            reason = "" if row is None or self.verdict is None else self.verdict.reason(row)
            found = self._reasons[partition] = f"partition {partition or '(non-partitioned)'}: partition " \
                                               f"statistics: {reason}"
        return found


def partition_stats_problem(table: HudiTable) -> str | None:
    """Why the table's partition statistics cannot be trusted (None: they can)."""
    if PARTITION_STATS not in table.properties.metadata_partitions:
        return "the metadata table has no ready partition_stats partition"
    mdt = table.metadata_table()
    if PARTITION_STATS not in mdt.status.partitions:
        return "partition_stats not usable: " + ("; ".join(mdt.status.problems) or "not readable")
    if mdt.status.lagging_instants:
        return (f"the metadata table lags the data timeline ({len(mdt.status.lagging_instants)} instants): its "
                "partition statistics may not cover their files")
    return None


ValueStats = Callable[[HudiTable, list[FileSlice], Any], pa.Table]


class PartitionStatsStage:
    """The partition statistics stage for one set of slices: which partitions can be judged (worked out once),
    the partition rows of each set of columns (read once), judged against any number of filters.
    ``value_stats``: the partition values as statistics columns (:func:`hive_bridge.pruning.pruner.
    partition_stats`), judged with the statistics."""

    def __init__(self, table: HudiTable, slices: Sequence[FileSlice], value_stats: ValueStats | None = None) -> None:
        self.table = table
        self.slices = slices
        self.value_stats = value_stats
        self.problem = partition_stats_problem(table) if slices else ""
        self._layout: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._rows: dict[tuple[str, ...], tuple[pa.Table, pa.Table] | str] = {}
        if self.problem is None:
            self._prepare()

    def _prepare(self) -> None:
        slices = self.slices
        n = len(slices)
        synced = self.table.metadata_table().status.synced_up_to
        parts = np.asarray(list(map(_get_partition, slices)), dtype=object)
        names, first, inverse = np.unique(parts, return_index=True, return_inverse=True)
        # a partition with a log file among its slices, or a slice the metadata table is not synced up to: unknown
        unusable = np.zeros(len(names), dtype=bool)
        has_logs = np.fromiter(map(bool, map(_get_log_files, slices)), dtype=bool, count=n)
        if has_logs.any():
            unusable[np.unique(inverse[has_logs])] = True
        instants = np.asarray(list(map(_get_base_instant, slices)), dtype=object)
        newer = instants > synced if synced is not None else np.ones(n, dtype=bool)
        if newer.any():
            unusable[np.unique(inverse[newer])] = True
        usable = np.flatnonzero(~unusable)
        if not len(usable):
            self.problem = "every partition judged has log files or files newer than the metadata table"
        self._layout = (names, first, inverse, usable)

    def _partition_rows(self, columns: set[str] | None) -> tuple[pa.Table, pa.Table] | str:
        """(statistics and partition values, partition values alone) of the usable partitions, or why not."""
        assert self._layout is not None
        names, first, _inverse, usable = self._layout
        leaves = [(leaf.name, leaf.type) for leaf in stat_leaves(self.table.arrow_schema())
                  if columns is None or leaf.name in columns]
        key = tuple(name for name, _ in leaves)
        found = self._rows.get(key)
        if found is not None:
            return found
        try:
            # with the meta columns' entries (indexed from the first commit on, whatever the column list): a
            # column counting fewer values than they do left files out; without meta fields, every column's
            reference = list(META_FIELDS) if self.table.properties.populate_meta_fields else None
            entries = self.table.metadata_table().partition_stats(
                None if reference is None else list(dict.fromkeys([*key, *reference])))
        except MetadataTableError as exc:
            self._rows[key] = str(exc)
            return str(exc)
        rows = partition_rows(entries, [str(names[i]) for i in usable], leaves)
        # the partition values too (path-only columns), judged with the statistics as files are
        values = self.value_stats(self.table, [self.slices[int(first[i])] for i in usable], None) \
            if self.value_stats is not None else pa.table({})
        for name in values.column_names:
            if name not in rows.column_names:
                rows = rows.append_column(name, values.column(name))
        self._rows[key] = (rows, values)
        return rows, values

    def judge(self, expression: HudiExpression, columns: set[str] | None,
              session_time_zone: str = "UTC") -> PartitionVerdicts:
        """The slices whose partition's statistics prove that no row matches ``expression`` (``columns``: the
        columns it reads, :func:`hive_bridge.pruning.pruner.filter_columns`)."""
        out = PartitionVerdicts(np.zeros(len(self.slices), dtype=bool))
        if self.problem is not None:
            out.not_used = self.problem
            return out
        assert self._layout is not None
        names, _first, inverse, usable = self._layout
        found = self._partition_rows(columns)
        if isinstance(found, str):
            out.not_used = found
            return out
        rows, values = found
        verdict = prune(expression, StatsTable(rows), session_tz=session_time_zone)
        keep = verdict.keep.to_numpy(zero_copy_only=False)
        if values.num_columns:
            # partitions their values alone drop are left to the partition-value stage (and counted there)
            keep |= ~prune(expression, StatsTable(values), session_tz=session_time_zone).keep.to_numpy(
                zero_copy_only=False)
        out.partitions_judged = len(usable)
        if keep.all():
            return out
        dropped_parts = np.zeros(len(names), dtype=bool)
        dropped_parts[usable[~keep]] = True
        out.dropped = dropped_parts[inverse]
        out.verdict = verdict
        for j in np.flatnonzero(~keep).tolist():
            out.partitions_dropped[str(names[usable[j]])] = j
        return out
