"""Hudi's metadata table (``.hoodie/metadata``), read-only and trusted only as far as the data timeline allows.

:mod:`~hive_bridge.mdt.table` opens it from what it needs of its data table (storage, base path, properties,
timeline) and answers the files listing, column and partition statistics, the record index, secondary indexes and
bloom filters; :mod:`~hive_bridge.mdt.keys` forms Hudi's record keys, :mod:`~hive_bridge.mdt.records` decodes and
merges records, :mod:`~hive_bridge.mdt.files` reads files records without an object per file and
:mod:`~hive_bridge.mdt.colstats` decodes column statistics column by column into Arrow.
"""

from hive_bridge.errors import MetadataTableError
from hive_bridge.mdt.records import ColumnStatsEntry, RecordLocation
from hive_bridge.mdt.table import DataTable, MetadataStatus, MetadataTable

__all__ = ["ColumnStatsEntry", "DataTable", "MetadataStatus", "MetadataTable", "MetadataTableError",
           "RecordLocation"]
