"""Workloads read from logs: the scans and filters real Spark and Hive runs wrote down, per table, replayed.

``codecs`` streams Spark's compressed event log files (zstd, lz4-java blocks, snappy-java, lzf) line by line,
with a cap on the expanded size; ``eventlog`` finds every file scan of every SQL execution in event logs (files,
rolled folders, folders of many applications) with its filters, its location and what Spark read; ``filters``
turns Spark's printed filters (Catalyst and V1, raw ambiguous literals included) into HiveQL filter text typed
by the table's columns, leaving whatever cannot be read for certain unknown; ``parquet`` does the same for
parquet's printed FilterPredicates (physical values); ``hiveserver2`` derives each table scan's pushed filter
from a HiveServer2 statement (sqlglot); ``textlogs`` finds all of these in text logs; ``tables`` resolves a
scan's location or name to the Hudi table it read; ``sources`` tells event logs from text logs and reads event
logs here or on Spark executors; ``runner`` collects the occurrences per table and filter and plans each
distinct filter once through the table's snapshot; ``report`` prints the result or writes JSON Lines
(``formatting``: figures as people read them, for every report);
``insights`` sums it up per table, filter, column and file, and ``htmlreport`` draws that as one self-contained
HTML page (imported on use: it needs Bokeh).
"""

from hive_bridge.workload.codecs import LogReadError, codec_of, decompressed_chunks, lines_of
from hive_bridge.workload.eventlog import (
    Problem,
    Scan,
    application_files,
    read_application,
)
from hive_bridge.workload.hiveserver2 import SqlError, TableFilter, table_filters, use_database
from hive_bridge.workload.parquet import predicate_to_hiveql
from hive_bridge.workload.printed_filters import Translated, parse_list, to_hiveql, translate_lists
from hive_bridge.workload.replay_report import print_report, summary, write_json
from hive_bridge.workload.runner import FilterEntry, Occurrence, TableState, Workload
from hive_bridge.workload.sources import event_log_scans, event_log_scans_spark, is_event_log, split_inputs
from hive_bridge.workload.tables import (
    TableResolver,
    metastore_locator,
    normalize_location,
    parse_table_args,
    redact,
)
from hive_bridge.workload.textlogs import file_occurrences, text_occurrences

__all__ = [
    "FilterEntry",
    "LogReadError",
    "Occurrence",
    "Problem",
    "Scan",
    "SqlError",
    "TableFilter",
    "TableResolver",
    "TableState",
    "Translated",
    "Workload",
    "application_files",
    "codec_of",
    "decompressed_chunks",
    "event_log_scans",
    "event_log_scans_spark",
    "file_occurrences",
    "is_event_log",
    "lines_of",
    "metastore_locator",
    "normalize_location",
    "parse_list",
    "parse_table_args",
    "predicate_to_hiveql",
    "print_report",
    "read_application",
    "redact",
    "split_inputs",
    "summary",
    "table_filters",
    "text_occurrences",
    "to_hiveql",
    "translate_lists",
    "use_database",
    "write_json",
]
