"""Hudi tables: file-system view, timeline, persisted column-statistics index and a small writer."""

from hive_bridge.table.errors import HudiTableError
from hive_bridge.table.fsview import BaseFile, FileSlice, FileSystemView, LogFile
from hive_bridge.table.properties import TableProperties
from hive_bridge.table.stats import ColumnStatsIndex, IndexCounters
from hive_bridge.table.table import META_FIELDS, HudiTable
from hive_bridge.table.timeline import Instant, State, Timeline
from hive_bridge.table.writer import HudiWriter, WriteResult, write_hudi_table

__all__ = [
    "META_FIELDS",
    "BaseFile",
    "ColumnStatsIndex",
    "FileSlice",
    "FileSystemView",
    "HudiTable",
    "HudiTableError",
    "HudiWriter",
    "IndexCounters",
    "Instant",
    "LogFile",
    "State",
    "TableProperties",
    "Timeline",
    "WriteResult",
    "write_hudi_table",
]
