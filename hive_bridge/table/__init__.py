"""The Hudi table facade: one object that opens a table folder and answers what a reader needs.

    t = HudiTable.open(path)              # .hoodie/hoodie.properties + active timeline (versions 6, 8, 9)
    t.properties                          # TableProperties: name, table_type, version, partition_fields, ...
    t.timeline                            # Timeline: instants, completed, inflight, requested (Instant objects)
    t.latest_file_slices(as_of=None)      # list[FileSlice], latest committed slice per live file group
    t.arrow_schema()                      # data schema incl. meta columns and partition columns

It sits on the Hudi layout (:mod:`hive_bridge.layout`: properties, timeline, file-system view) and the metadata
table (:mod:`hive_bridge.mdt`), which it uses for listing where the table has one. The column-statistics index
built over a table lives one layer up, in :mod:`hive_bridge.stats`. Every error is a HudiTableError naming the file
and the reason.
"""

from hive_bridge.table.table import META_FIELDS, HudiTable

__all__ = ["META_FIELDS", "HudiTable"]
