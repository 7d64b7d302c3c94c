"""Hudi tables: file-system view, timeline, persisted column-statistics index and a small writer.

    t = HudiTable.open(path)              # .hoodie/hoodie.properties + active timeline (versions 6, 8, 9)
    t.properties                          # TableProperties: name, table_type, version, partition_fields, ...
    t.timeline                            # Timeline: instants, completed, inflight, requested (Instant objects)
    t.latest_file_slices(as_of=None)      # list[FileSlice], latest committed slice per live file group
    t.arrow_schema()                      # data schema incl. meta columns and partition columns
    ColumnStatsIndex(t).load()            # pyarrow.Table, one row per latest slice (see hive_bridge.table.stats)
    HudiWriter(path, ...).insert(data)    # copy-on-write writer (v6/v8): insert, upsert, insert_overwrite

Every error of this layer is a HudiTableError (a HiveBridgeError) naming the file and the reason.
"""

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
