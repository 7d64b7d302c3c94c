"""Hudi tables: file-system view, timeline and the persisted column-statistics index (read-only).

    t = HudiTable.open(path)              # .hoodie/hoodie.properties + active timeline (versions 6, 8, 9)
    t.properties                          # TableProperties: name, table_type, version, partition_fields, ...
    t.timeline                            # Timeline: instants, completed, inflight, requested (Instant objects)
    t.latest_file_slices(as_of=None)      # list[FileSlice], latest committed slice per live file group
    t.arrow_schema()                      # data schema incl. meta columns and partition columns
    ColumnStatsIndex(t).load()            # pyarrow.Table, one row per latest slice (see hive_bridge.table.stats)

The tables tests and benchmarks write come from :mod:`hive_bridge.testing.writer`.
Every error of this layer is a HudiTableError (a HiveBridgeError) naming the file and the reason.
"""

from hive_bridge.table.errors import HudiTableError
from hive_bridge.table.fsview import BaseFile, FileSlice, FileSystemView, LogFile
from hive_bridge.table.properties import TableProperties
from hive_bridge.table.stats import ColumnStatsIndex, IndexCounters
from hive_bridge.table.table import META_FIELDS, HudiTable
from hive_bridge.table.timeline import Instant, State, Timeline

__all__ = [
    "META_FIELDS",
    "BaseFile",
    "ColumnStatsIndex",
    "FileSlice",
    "FileSystemView",
    "HudiTable",
    "HudiTableError",
    "IndexCounters",
    "Instant",
    "LogFile",
    "State",
    "TableProperties",
    "Timeline",
]
