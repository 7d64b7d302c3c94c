"""Hudi tables: file-system view, timeline, persisted column-statistics index and a small writer."""

from hive_bridge.table.errors import HudiTableError
from hive_bridge.table.fsview import BaseFile, FileSlice, FileSystemView, LogFile
from hive_bridge.table.properties import TableProperties
from hive_bridge.table.table import META_FIELDS, HudiTable
from hive_bridge.table.timeline import Instant, State, Timeline

__all__ = [
    "META_FIELDS",
    "BaseFile",
    "FileSlice",
    "FileSystemView",
    "HudiTable",
    "HudiTableError",
    "Instant",
    "LogFile",
    "State",
    "TableProperties",
    "Timeline",
]
