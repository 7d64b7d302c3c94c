"""The Hudi table layout: ``hoodie.properties``, the timeline of instants, and the file-system view that turns a
listing into the latest file slice of every file group (table versions 6, 8 and 9; copy-on-write and
merge-on-read). Read-only; every error is a HudiTableError naming the file and the reason.
"""

from hive_bridge.layout.fsview import BaseFile, FileSlice, FileSystemView, LogFile
from hive_bridge.layout.properties import HOODIE_DIR, PROPERTIES_FILE, TableProperties
from hive_bridge.layout.timeline import Instant, State, Timeline

__all__ = ["HOODIE_DIR", "PROPERTIES_FILE", "BaseFile", "FileSlice", "FileSystemView", "Instant", "LogFile",
           "State", "TableProperties", "Timeline"]
