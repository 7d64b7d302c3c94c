"""Workloads read from logs: the scans and filters real Spark and Hive runs wrote down, per table.

``codecs`` streams Spark's compressed event log files (zstd, lz4-java blocks, snappy-java, lzf) line by line,
with a cap on the expanded size; ``eventlog`` finds every file scan of every SQL execution in event logs (files,
rolled folders, folders of many applications) with its filters, its location and what Spark read; ``filters``
turns Spark's printed filters (Catalyst and V1, raw ambiguous literals included) into HiveQL filter text typed
by the table's columns, leaving whatever cannot be read for certain unknown; ``tables`` resolves a scan's
location or name to the Hudi table it read.
"""

from hive_bridge.workload.codecs import LogReadError, codec_of, decompressed_chunks, lines_of
from hive_bridge.workload.eventlog import (
    Problem,
    Scan,
    application_files,
    looks_like_event_log,
    read_application,
)
from hive_bridge.workload.filters import Translated, parse_list, to_hiveql, translate

__all__ = [
    "LogReadError",
    "Problem",
    "Scan",
    "Translated",
    "application_files",
    "codec_of",
    "decompressed_chunks",
    "lines_of",
    "looks_like_event_log",
    "parse_list",
    "read_application",
    "to_hiveql",
    "translate",
]
