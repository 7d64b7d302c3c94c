"""A workload replayed: per table, each distinct filter planned once through the table's snapshot, with where it
occurred and, where the log says, what Spark (or Hudi) really read beside what hive-bridge keeps.

Filters arrive from every source as :class:`Occurrence` values (table location or name, HiveQL text or the
printed Spark filter lists, the query it came from, Spark's read figures); :class:`Workload` resolves each to a
table (opened once, on its first occurrence, its failure reported with the number of scans it had), types its
filter with the table's columns and counts it under ``(table, filter, time zone)``. :meth:`Workload.plan` then
plans each distinct filter once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sarg
from hive_bridge.errors import HiveBridgeError
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning import ListStatusResult
from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT
from hive_bridge.pruning.snapshot import SnapshotCache, TableSnapshot, timeline_state
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.workload.accounting import Accounts
from hive_bridge.workload.eventlog import Problem, Scan
from hive_bridge.workload.logscan import FoundFilter, describe_error
from hive_bridge.workload.printed_filters import translate_lists
from hive_bridge.workload.readings import UNKNOWN_CALL
from hive_bridge.workload.tables import TableResolver, redact
from sarg.detect import looks_like_sarg

#: how many queries are listed per filter (the count is always complete)
MAX_QUERIES = 50
_IDS = re.compile(r"#\d+")


@dataclass
class Occurrence:
    """One filter occurrence from a log, before its table is known."""

    source: str  # "spark-eventlog", "spark-eventlog-v2", "hiveserver2", "spark-driver", ...
    query: str  # where: file#execution, queryId, file:line
    table_name: str | None = None
    locations: list[str] = field(default_factory=list)
    #: printed Spark filter lists (text, is_v1) — or, for SQL-derived filters, HiveQL text in ``hiveql``
    lists: Sequence[tuple[str, bool] | tuple[str, bool, str]] = field(default_factory=list)
    hiveql: str | None = None
    #: a SQL statement (HiveServer2): each table it reads is one scan, with the filter pushed to it
    sql: str | None = None
    database: str = "default"
    #: where in the input (``file:line``), for messages
    origin: str = ""
    #: a printed parquet FilterPredicate (executor and Hive task logs), physical values
    parquet: str | None = None
    time_zone: str = "UTC"
    spark_files: int | None = None
    spark_bytes: int | None = None
    #: Hudi's own data skipping count for the scan (``HoodieFileIndex`` lines), when paired
    hudi_candidates: int | None = None
    #: filters aimed at this scan that could not be kept (counted as unknown)
    unknown: int = 0


@dataclass
class FilterEntry:
    """One distinct filter of one table, with its occurrences and (after planning) its listing."""

    table: str
    hiveql: str | None
    time_zone: str
    source: str
    unknown: int = 0
    unknown_texts: list[str] = field(default_factory=list)
    occurrences: int = 0
    queries: list[str] = field(default_factory=list)
    sources: set[str] = field(default_factory=set)
    spark_scans: int = 0  # occurrences with Spark's read figures
    spark_files: int = 0
    spark_bytes: int = 0
    hudi_scans: int = 0  # occurrences with Hudi's own candidate count
    hudi_candidates: int = 0
    listing: ListStatusResult | None = None
    sarg_text: str | None = None
    #: the columns the typed filter's leaves name (set when planned), each once, in order of first use
    columns: tuple[str, ...] = ()
    seconds: float = 0.0
    error: str | None = None
    verified: bool | None = None
    verify_detail: str = ""
    query_type: str = SNAPSHOT
    #: where the filter was first seen (``file:line``), for messages
    origin: str = ""
    #: the filter as a text input held it (file, line, column, every line it was seen on), when it came from one
    #: read filter by filter (:meth:`Workload.add_found`)
    found: FoundFilter | None = None
    #: the parts of the typed filter that could not be said (their files kept), set when planned
    unknown_parts: list[str] = field(default_factory=list)
    #: storage requests made to plan this filter, and made since the table was opened (listing included)
    requests: dict[str, int] | None = None
    requests_total: dict[str, int] | None = None
    #: segments of the persisted index discarded on load (damaged, failing a check, without a checksum)
    index_segments_discarded: int = 0
    #: the failure said in full (where, why, a caret under the offending text), for the terminal
    error_detail: str = ""

    @property
    def kind(self) -> str | None:
        """How the filter is written: ``sarg`` (a printed SearchArgument) or ``hiveql``; None for no filter."""
        if self.found is not None:
            return self.found.kind
        if self.hiveql is None:
            return None
        return "sarg" if looks_like_sarg(self.hiveql) else "hiveql"

    def as_json(self, *, kept: HudiTable | None = None) -> dict[str, Any]:
        """The one JSON form of a replayed filter (docs/replay.md lists its fields); with ``kept`` (the entry's
        table) the kept files too, as paths relative to the table."""
        lst = self.listing
        found = self.found
        out: dict[str, Any] = {
            "table": redact(self.table), "filter": self.hiveql, "sarg": self.sarg_text, "kind": self.kind,
            "time_zone": self.time_zone,
            "source": sorted(self.sources)[0] if len(self.sources) == 1 else sorted(self.sources),
            "origin": self.origin, "occurrences": self.occurrences, "queries": self.queries,
            "queries_listed": len(self.queries), "unknown_filters": self.unknown,
            "unknown_filter_texts": self.unknown_texts[:10],
        }
        if found is not None:
            out["first_line"] = found.line
            if found.file:
                out.update({"input": found.file, "lines": found.lines})
        if self.columns:
            out["columns"] = list(self.columns)
        if lst is not None:
            out.update(lst.figures())
            out.update({"unknown_parts": self.unknown_parts,
                        "index_segments_discarded": self.index_segments_discarded,
                        "seconds": round(self.seconds, 6)})
            if kept is not None:
                out["kept"] = [relative_path(kept, f.path) for f in lst.files]
        if self.spark_scans:
            out.update({"spark_scans_measured": self.spark_scans, "spark_files_read": self.spark_files,
                        "spark_bytes_read": self.spark_bytes})
        if self.hudi_scans:
            out.update({"hudi_scans_measured": self.hudi_scans, "hudi_candidate_files": self.hudi_candidates})
        if self.error:
            out["error"] = self.error
        if self.verified is not None:
            out["verified"] = self.verified
        if self.requests is not None:
            out.update({"requests": self.requests, "requests_total": self.requests_total})
        return out


def relative_path(table: HudiTable, path: str) -> str:
    """A file's path relative to its table's folder (unchanged when it is not under it)."""
    base = str(table.base_path).rstrip("/")
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    if not table.storage.is_local:
        return path
    try:
        return Path(path).relative_to(Path(table.base_path)).as_posix()
    except ValueError:
        return path


@dataclass
class TableState:
    uri: str
    snapshot: TableSnapshot | None = None
    error: str | None = None
    types: dict[str, str] = field(default_factory=dict)
    scans: int = 0
    entries: dict[tuple[str | None, str, str], FilterEntry] = field(default_factory=dict)


class Workload:
    """Occurrences collected per table and filter; tables opened once each."""

    def __init__(self, resolver: TableResolver, *, listing: str = "folders", stats_source: str = "auto",
                 storage_options: dict[str, str] | None = None, query_type: str = SNAPSHOT,
                 as_of: str | None = None) -> None:
        """``as_of``: plan every table's state as of this instant or time (time travel,
        :meth:`TableSnapshot.of`); a table whose state as of then cannot be read is a table error."""
        self.resolver = resolver
        self.as_of = as_of
        self.cache = SnapshotCache(max_tables=1 << 20)
        self.listing = listing
        self.stats_source = stats_source
        self.storage_options = storage_options
        self.query_type = query_type
        self.tables: dict[str, TableState] = {}
        #: scans whose table could not be resolved, by a printable name
        self.unresolved: dict[str, int] = {}
        self.problems: list[Problem] = []
        #: every input line of the workload, counted (see :mod:`hive_bridge.workload.accounting`)
        self.accounts = Accounts()
        self._memo: dict[tuple[str, tuple[tuple[object, ...], ...]], tuple[str | None, int, list[str]]] = {}

    def table(self, uri: str) -> TableState:
        state = self.tables.get(uri)
        if state is None:
            state = self.tables[uri] = TableState(uri)
            try:
                state.snapshot = self.cache.get(uri, listing=self.listing, stats_source=self.stats_source,
                                                storage_options=self.storage_options)
                if self.as_of is not None:
                    state.snapshot = TableSnapshot.of(state.snapshot.table, state.snapshot.index,
                                                      as_of=self.as_of, where="--as-of")
                state.types = table_sarg_schema(state.snapshot.table)
            except (HiveBridgeError, OSError) as exc:
                state.error = redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return state

    def adopt(self, table: HudiTable) -> TableState:
        """A table already opened, taken as one of the workload's (its statistics index made here, with the
        workload's ``stats_source``)."""
        uri = str(table.base_path)
        state = self.tables.get(uri)
        if state is None:
            index = ColumnStatsIndex(table, source=self.stats_source)
            if self.as_of is not None:
                snap = TableSnapshot.of(table, index, as_of=self.as_of, where="--as-of")
            else:
                snap = TableSnapshot(table, index, timeline_state(table), table.latest_file_slices())
            state = self.tables[uri] = TableState(uri, snap, types=table_sarg_schema(table))
        return state

    def add_found(self, uri: str, found: FoundFilter, time_zone: str = "UTC") -> FilterEntry:
        """A filter a text input held, read filter by filter (:func:`hive_bridge.workload.logscan.distinct`:
        deduplicated, its occurrences counted), counted under table ``uri`` (opened first) as it is: its text is
        the entry's filter, its input, lines and column say where a failure is."""
        state = self.table(uri)
        key = (found.text, time_zone, self.query_type)
        entry = state.entries.get(key)
        if entry is None:
            entry = state.entries[key] = FilterEntry(uri, found.text, time_zone, found.source,
                                                     query_type=self.query_type, origin=found.where, found=found)
        entry.occurrences += found.occurrences
        entry.sources.add(found.source)
        state.scans += found.occurrences
        if len(entry.queries) < MAX_QUERIES:
            entry.queries.append(found.where)
        return entry

    def add_scan(self, scan: Scan) -> None:
        if scan.other:
            name = f"({scan.node.split('[', 1)[0].strip()}: not a file scan, its filters are not in the log)"
            self.unresolved[name] = self.unresolved.get(name, 0) + 1
            return
        self.add(Occurrence(
            "spark-eventlog-v2" if scan.v2 else "spark-eventlog", scan.query, scan.table_name,
            scan.paths or ([scan.location] if scan.location else []),
            [(scan.partition_filters, False), (scan.data_filters, False), (scan.pushed_filters, True)],
            time_zone=scan.time_zone, spark_files=scan.spark_files, spark_bytes=scan.spark_bytes,
            origin=f"{scan.source}:{scan.line}"))

    def add(self, occ: Occurrence) -> None:
        if occ.sql is not None:
            self._add_statement(occ)
            return
        uri = self.resolver.resolve(occ.table_name, occ.locations)
        if uri is None:
            name = occ.table_name or (occ.locations[0] if occ.locations else f"({occ.source} lines: no table named)")
            name = redact(name)
            self.unresolved[name] = self.unresolved.get(name, 0) + 1
            return
        state = self.table(uri)
        state.scans += 1
        if state.snapshot is None:
            return
        if occ.parquet is not None:
            from hive_bridge.workload.parquet import predicate_to_hiveql

            pkey = (uri, ((occ.parquet,),))
            hit = self._memo.get(pkey)
            if hit is None:
                try:
                    text, n = predicate_to_hiveql(occ.parquet, state.types)
                except sarg.SargSyntaxError as exc:  # nested too deep: its files kept, the input reported
                    text, n = None, 1
                    self._problem(occ, f"a predicate not read: {exc.reason} (kept files as unknown): "
                                       f"{occ.parquet[:300]!r}")
                hit = self._memo[pkey] = (text, n, [occ.parquet] if n else [])
            hiveql, unknown, unknown_texts = hit
        elif occ.hiveql is not None or not occ.lists:
            hiveql, unknown, unknown_texts = occ.hiveql, occ.unknown, list[str]()
        else:
            key = (uri, tuple((_IDS.sub("#", item[0]), *item[1:]) for item in occ.lists))
            hit = self._memo.get(key)
            if hit is None:
                tr = translate_lists(occ.lists, state.types)
                hit = self._memo[key] = (tr.hiveql, tr.unknown, tr.unknown_texts)
                for text, why in zip(tr.unread, tr.unread_reasons, strict=True):  # once per distinct text
                    shown = "in a form not understood" if why == "a form not understood" else f"not read: {why}"
                    self._problem(occ, f"a filter list {shown} (kept files as unknown): {text[:300]!r}")
                if len(self._memo) > 100_000:
                    self._memo.clear()
            hiveql, unknown, unknown_texts = hit
        # a table read by Hive sync's read-optimized name (t_ro) is read as its base files only
        qt = READ_OPTIMIZED if (occ.table_name or "").lower().endswith("_ro") else self.query_type
        entry = state.entries.get((hiveql, occ.time_zone, qt))
        if entry is None:
            entry = state.entries[(hiveql, occ.time_zone, qt)] = FilterEntry(
                uri, hiveql, occ.time_zone, occ.source, unknown, list(unknown_texts), query_type=qt,
                origin=occ.origin or occ.query)
        entry.occurrences += 1
        entry.sources.add(occ.source)
        if len(entry.queries) < MAX_QUERIES:
            entry.queries.append(occ.query)
        if occ.hudi_candidates is not None:
            entry.hudi_scans += 1
            entry.hudi_candidates += occ.hudi_candidates
        if occ.spark_files is not None:
            entry.spark_scans += 1
            entry.spark_files += occ.spark_files
            entry.spark_bytes += occ.spark_bytes or 0

    def _problem(self, occ: Occurrence, message: str) -> None:
        where, _, line = occ.origin.rpartition(":")
        self.problems.append(Problem(where or occ.origin, int(line) if line.isdigit() else 0, message))

    def _add_statement(self, occ: Occurrence) -> None:
        from hive_bridge.workload.hiveserver2 import SqlError, table_filters

        assert occ.sql is not None

        def columns_of(name: str) -> dict[str, str] | None:
            uri = self.resolver.resolve(name, [])
            if uri is None:
                return None
            state = self.table(uri)
            return state.types if state.snapshot is not None else None

        try:
            scans = table_filters(occ.sql, occ.database, columns_of)
        except SqlError as exc:
            where, _, line = occ.origin.rpartition(":")
            self.problems.append(Problem(where or occ.origin, int(line) if line.isdigit() else 0,
                                         f"query {occ.query}: {exc}: {occ.sql[:200]!r}"))
            return
        for tf in scans:
            self.add(Occurrence(occ.source, occ.query, tf.table, [], hiveql=tf.hiveql, time_zone=occ.time_zone,
                                unknown=tf.unknown, origin=occ.origin))

    def plan(self, progress: Callable[[], None] | None = None) -> int:
        """Plan every distinct filter of every opened table; the number of filters that failed."""
        failures = 0
        for state in self.tables.values():
            snap = state.snapshot
            if snap is None:
                continue
            requests = snap.table.storage.requests
            for entry in state.entries.values():
                try:
                    parsed = sarg.read_filter(entry.hiveql, state.types) if entry.hiveql else None
                    t0 = time.perf_counter()
                    before = requests.counts()
                    entry.listing = snap.plan(parsed, session_time_zone=entry.time_zone,
                                              query_type=entry.query_type)
                    entry.seconds = time.perf_counter() - t0
                    entry.requests, entry.requests_total = requests.since(before), requests.counts()
                    entry.index_segments_discarded = snap.index.counters.corrupt_segments
                    entry.sarg_text = str(parsed) if parsed is not None else None
                    entry.columns = tuple(dict.fromkeys(leaf.column for leaf in parsed.leaves)) if parsed else ()
                    entry.unknown_parts = [str(part) for part in parsed.unknowns] if parsed else []
                    for part in parsed.unknowns if parsed else ():  # what the filter's text could not say
                        if part.text != UNKNOWN_CALL and str(part) not in entry.unknown_texts:
                            entry.unknown_texts.append(str(part))
                            entry.unknown += 1
                except (sarg.SargError, HiveBridgeError, ValueError, RecursionError) as exc:
                    failures += 1
                    if isinstance(exc, RecursionError):
                        entry.error = "expression nested too deeply to read"
                    else:
                        entry.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                    if entry.found is not None and isinstance(exc, (sarg.SargError, RecursionError)):
                        entry.error_detail = describe_error(entry.found, exc)
                if progress is not None:
                    progress()
        return failures

    def entries(self) -> list[FilterEntry]:
        return [e for s in self.tables.values() for e in s.entries.values()]
