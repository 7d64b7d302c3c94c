"""Column statistics per file, as one Arrow table the pruner reads (the contract of
:mod:`~hive_bridge.stats.contract`): built from parquet footers, log files and the metadata table, persisted
inside the table in segments, and looked up per listing by (path, size, instant).

:class:`ColumnStatsIndex` orchestrates: which source answers each file, what is persisted, what stays in memory.
"""

from hive_bridge.stats.contract import ColumnStats, FileStats, file_stats_from_table, stats_table
from hive_bridge.stats.index import STATS_SOURCES, ColumnStatsIndex, IndexCounters
from hive_bridge.stats.reader import LocalStatsReader, StatsReader

__all__ = ["STATS_SOURCES", "ColumnStats", "ColumnStatsIndex", "FileStats", "IndexCounters", "LocalStatsReader",
           "StatsReader", "file_stats_from_table", "stats_table"]
