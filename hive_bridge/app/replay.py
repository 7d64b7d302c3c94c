"""Filter replay: the filters found in real Hive/Spark logs, judged against a Hudi table, with the files each
keeps; optionally verified by reading with Spark pruned and unpruned (``hive-bridge replay`` and the demo)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import sarg
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning import ListStatusResult, Pruner
from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT, filter_columns, read_optimized_view
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.workload.accounting import EVENTS, Accounts
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.formatting import human_bytes
from hive_bridge.workload.logscan import FoundFilter, distinct, distinct_filters, input_filters, scan_lines
from hive_bridge.workload.report import input_notes, lines_summary


@dataclass
class ReplayRow:
    found: FoundFilter
    sarg: sarg.SearchArgument
    listing: ListStatusResult
    seconds: float
    verified: bool | None = None
    verify_detail: str = ""
    #: storage requests made to plan this filter, and made since the table was opened (listing included)
    requests: dict[str, int] | None = None
    requests_total: dict[str, int] | None = None
    #: segments of the persisted index discarded on load (damaged, failing a check, without a checksum)
    index_segments_discarded: int = 0

    def as_json(self, table: HudiTable) -> dict[str, Any]:
        return {
            "filter": self.found.text,
            "sarg": str(self.sarg),
            "kind": self.found.kind,
            "source": self.found.source,
            "first_line": self.found.line,
            "occurrences": self.found.occurrences,
            **({"input": self.found.file, "lines": self.found.lines} if self.found.file else {}),
            "files_total": self.listing.files_total,
            "files_kept": self.listing.files_kept,
            "bytes_total": self.listing.bytes_total,
            "bytes_kept": self.listing.bytes_kept,
            "dropped_by_partition": self.listing.dropped_by_partition,
            "dropped_by_partition_stats": self.listing.dropped_by_partition_stats,
            "partitions_dropped_by_stats": self.listing.partitions_dropped_by_stats,
            "dropped_by_statistics": self.listing.dropped_by_statistics,
            "kept_unknown": self.listing.kept_unknown,
            "unknown_parts": [str(part) for part in self.sarg.unknowns],
            "kept_log_files": self.listing.kept_log_files,
            "query_type": self.listing.query_type,
            "log_files_total": self.listing.log_files_total,
            "log_files_unknown": self.listing.log_files_unknown,
            "listing_source": self.listing.listing_source,
            "stats_sources": self.listing.stats_sources,
            "index_sources": self.listing.index_sources,
            "index_segments_discarded": self.index_segments_discarded,
            "unknown_columns": self.listing.unknown_columns,
            "seconds": round(self.seconds, 6),
            "kept": [relative_path(table, f.path) for f in self.listing.files],
            **({"verified": self.verified} if self.verified is not None else {}),
            **({"requests": self.requests, "requests_total": self.requests_total} if self.requests is not None
               else {}),
        }


def relative_path(table: HudiTable, path: str) -> str:
    base = str(table.base_path).rstrip("/")
    if path.startswith(base + "/"):
        return path[len(base) + 1:]
    if not table.storage.is_local:
        return path
    try:
        return Path(path).relative_to(Path(table.base_path)).as_posix()
    except ValueError:
        return path


def verify_filter(spark: Any, table: HudiTable, listing: ListStatusResult, residual: str | None) -> tuple[bool, str]:
    """Read the kept files and all latest files with the same row filter; the rows must be identical. A Spark
    failure is a failed verification with its first line as the detail (a replay reports it and goes on)."""
    try:
        return _compare_reads(spark, table, listing, residual)
    except Exception as exc:
        return False, f"verify failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"


def _compare_reads(spark: Any, table: HudiTable, listing: ListStatusResult, residual: str | None) -> tuple[bool, str]:
    from pyspark.sql import functions as F

    from hive_bridge.spark import read_slices

    pruned = read_slices(spark, table, listing.slices)
    everything = table.latest_file_slices()
    if listing.query_type == READ_OPTIMIZED:
        everything = read_optimized_view(everything)
    full = read_slices(spark, table, everything)
    if residual:
        pruned, full = pruned.where(residual), full.where(residual)
    as_json = [F.to_json(F.struct("*")).alias("row")]
    p, f = pruned.select(as_json), full.select(as_json)
    missing = f.exceptAll(p).count()
    extra = p.exceptAll(f).count()
    if missing or extra:
        return False, f"{missing} rows missing from the pruned read, {extra} unexpected"
    return True, f"{f.count()} rows identical"


def describe_error(found: FoundFilter, exc: sarg.SargError | RecursionError) -> str:
    """Where a filter failed, in the input's own file, line and column numbers, with the reason and a caret."""
    more = f" (and {found.occurrences - 1} more occurrences)" if found.occurrences > 1 else ""
    where = f"{found.file}: " if found.file else ""
    if isinstance(exc, RecursionError):
        return f"error: {where}line {found.line}{more}: expression nested too deeply to read: {_excerpt(found.text)}"
    if not isinstance(exc, sarg.SargSyntaxError):
        return f"error: {where}line {found.line}{more}: {exc}: {_excerpt(found.text)}"
    line = found.line + exc.line - 1
    column = exc.column + (found.column - 1 if exc.line == 1 else 0)
    caret = " " * (exc.column - 1) + "^"
    expected = f"\n  expected one of: {', '.join(exc.expected)}" if exc.expected else ""
    return (f"error: {where}line {line}, column {column}{more}: {exc.reason}\n  {exc.source_line}\n  {caret}"
            f"{expected}")


def _excerpt(text: str, n: int = 200) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


@dataclass
class ReadInputs:
    """The distinct filters of a run's text inputs, what could not be read in them, and every line's count."""

    found: list[FoundFilter]
    problems: list[Any]
    accounts: Accounts


def read_inputs(logs: Sequence[str], filters: Sequence[str] = ()) -> ReadInputs:
    """The filters of text logs and files of filters (none given: standard input), told apart by what they hold
    (``filters`` are files of filters, said so), deduplicated; each unreadable input is a problem and the others
    are read."""
    from hive_bridge.workload.sources import split_inputs

    accounts = Accounts()
    split = split_inputs(list(logs) if logs or filters else ["-"], filters, accounts)
    problems: list[Any] = list(split.problems)
    for path in split.events:   # an event log goes to the workload replay; here it is not read
        problems.append(Problem(path, 0, "a Spark event log: replayed with the workload replay, not here"))
        accounts.unreadable(path, EVENTS, "a Spark event log read with the workload replay")
    found = distinct(input_filters(split.texts, problems, accounts))
    return ReadInputs(found, problems, accounts)


def replay(table: HudiTable, lines: Iterable[str] | ReadInputs, *, out: Console, err: Console,
           time_zone: str = "UTC", verify: bool = False, verbose: bool = False, as_json: bool = False,
           query_type: str = SNAPSHOT, stats_source: str = "auto") -> int:
    """Find the filters in log lines (or take those :func:`read_inputs` read), replay each against the table
    (one Pruner, prepared once), print a table (or JSON Lines with ``as_json``); ``query_type`` snapshot (base
    files merged with log files) or read_optimized (base files only); ``verify`` reads every filter with Spark
    pruned and unpruned. A filter that does not parse is reported with the input's own file, line and column,
    an input that cannot be read with its name, and the run goes on. Returns 1 if anything failed, else 0."""
    requests = table.storage.requests
    index = ColumnStatsIndex(table, source=stats_source)
    schema = table_sarg_schema(table)
    # prepared with the first filter that parses: the metadata table's statistics of its columns are read then,
    # those of other columns when a filter first needs them (ColumnStatsIndex.want)
    pruner: Pruner | None = None
    read = lines if isinstance(lines, ReadInputs) else None
    found = read.found if read is not None else distinct_filters(lines)  # type: ignore[arg-type]
    failures = 0
    for p in read.problems if read is not None else ():
        failures += 1
        err.print(f"error: {p}", highlight=False, markup=False)
    rows: list[ReplayRow] = []
    spark = None
    if verify:
        from hive_bridge.spark import start as spark_start

        spark = spark_start.start_session("hive-bridge-replay", verbose=verbose)
    from hive_bridge.filters.residual import to_sql

    progress = _progress(err, len(found)) if len(found) > 20 and err.is_terminal and not as_json else None
    task = progress.add_task("replaying", total=len(found)) if progress else None
    if progress:
        progress.start()
    try:
        for f in found:
            try:
                parsed = sarg.read_filter(f.text, schema)
            except (sarg.SargError, RecursionError) as exc:
                failures += 1
                err.print(describe_error(f, exc), highlight=False, markup=False)
                if progress and task is not None:
                    progress.advance(task)
                continue
            if pruner is None:
                index.want(filter_columns(table, parsed))
                pruner = Pruner(table, index, table.latest_file_slices(), query_type)
            t0 = time.perf_counter()
            before = requests.snapshot()
            listing = pruner.run(parsed, None, time_zone)
            row = ReplayRow(f, parsed, listing, time.perf_counter() - t0, requests=requests.since(before),
                            requests_total=requests.snapshot(),
                            index_segments_discarded=index.counters.corrupt_segments)
            if spark is not None:
                residual = f.text if f.kind == "hiveql" else to_sql(parsed)
                row.verified, row.verify_detail = verify_filter(spark, table, listing, residual)
                if not row.verified:
                    failures += 1
                    err.print(f"[red]verify[/red] line {f.line}: {row.verify_detail}", markup=True,
                              highlight=False)
            rows.append(row)
            if as_json:
                out.file.write(json.dumps(row.as_json(table), ensure_ascii=False) + "\n")
            if progress and task is not None:
                progress.advance(task)
    finally:
        if progress:
            progress.stop()
    for line in index.discard_notices():
        err.print(f"hive-bridge replay: {line}", highlight=False, markup=False)
    for note in input_notes(read.accounts) if read is not None else ():
        err.print(f"note: {note}", highlight=False, markup=False)
    if not as_json:
        print_replay(out, table, rows, failures)
        if read is not None:
            out.print(lines_summary(read.accounts), highlight=False)
    else:
        if read is not None:
            err.print(lines_summary(read.accounts), highlight=False)
        if failures:
            err.print(f"{failures} failed", highlight=False)
    return 1 if failures else 0


def _progress(console: Console, total: int) -> Any:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=True)


def print_replay(out: Console, table: HudiTable, rows: list[ReplayRow], failures: int) -> None:
    t = Table(title=f"Filter replay against {table.name} ({table.properties.table_type}, "
                    f"{len(table.latest_file_slices())} latest file slices)", show_lines=False)
    t.add_column("#", justify="right")
    t.add_column("filter", overflow="fold", max_width=70)
    t.add_column("seen", justify="right")
    t.add_column("files kept", justify="right")
    t.add_column("bytes kept", justify="right")
    t.add_column("kept: unknown", justify="right")
    t.add_column("time", justify="right")
    if any(r.verified is not None for r in rows):
        t.add_column("verify")
    files_total = files_kept = bytes_total = bytes_kept = unknown = 0
    for i, r in enumerate(rows, start=1):
        lst = r.listing
        cells = [str(i), r.found.text if r.found.kind == "hiveql" else str(r.sarg), str(r.found.occurrences),
                 f"{lst.files_kept} / {lst.files_total}",
                 f"{human_bytes(lst.bytes_kept)} / {human_bytes(lst.bytes_total)}",
                 str(lst.kept_unknown), f"{r.seconds * 1000:.1f} ms"]
        if r.verified is not None:
            cells.append("rows identical" if r.verified else f"DIFFERENT: {r.verify_detail}")
        t.add_row(*map(escape, cells))  # filter text is not rich markup: `[x]` stays
        files_total += lst.files_total
        files_kept += lst.files_kept
        bytes_total += lst.bytes_total
        bytes_kept += lst.bytes_kept
        unknown += lst.kept_unknown
    out.print(t)
    for i, r in enumerate(rows, start=1):  # what each filter's text could not say (its files are kept for it)
        if r.sarg.unknowns:
            out.print(escape(f"#{i} unknown: " + "; ".join(str(part) for part in r.sarg.unknowns)), highlight=False)
    pct = 100.0 * (1 - files_kept / files_total) if files_total else 0.0
    out.print(f"{len(rows)} distinct filters ({sum(r.found.occurrences for r in rows)} occurrences); "
              f"files kept {files_kept} / {files_total} ({pct:.1f}% pruned), bytes kept "
              f"{human_bytes(bytes_kept)} / {human_bytes(bytes_total)}; {unknown} kept only because something "
              f"was unknown; {failures} failed", highlight=False)


def load_workload(inputs: Sequence[str], resolver: Any, *, verbose: bool = False, query_type: str = SNAPSHOT,
                  stats_source: str = "auto", listing: str = "folders",
                  storage_options: dict[str, str] | None = None, time_zone: str = "UTC",
                  spark_master: str | None = None, filters: Sequence[str] = ()) -> tuple[Any, list[Any]]:
    """The workload of log files and folders and of files of filters (``filters``; see
    :mod:`hive_bridge.workload`), not planned yet, and the problems met reading them: every scan and filter
    occurrence resolved to its table (each opened once) and counted under its distinct filter; every input line
    counted in the workload's ``accounts``. With ``spark_master`` the event logs' applications are read by Spark
    executors (same result)."""
    from hive_bridge.workload.runner import Workload
    from hive_bridge.workload.sources import event_log_scans, split_inputs
    from hive_bridge.workload.textlogs import text_occurrences

    work = Workload(resolver, listing=listing, stats_source=stats_source, storage_options=storage_options,
                    query_type=query_type)
    split = split_inputs(list(inputs), filters, work.accounts)
    problems: list[Problem] = list(split.problems)
    if spark_master is not None and split.events:
        from hive_bridge.spark import start as spark_start
        from hive_bridge.workload.sources import event_log_scans_spark

        session = spark_start.start_session("hive-bridge-replay", verbose=verbose, master=spark_master)
        scans = event_log_scans_spark(split.events, problems, session, work.accounts)
    else:
        scans = event_log_scans(split.events, problems, work.accounts)
    for scan in scans:
        work.add_scan(scan)
    for occ in text_occurrences(split.texts, problems, time_zone=time_zone, scanner=scan_lines,
                                accounts=work.accounts):
        work.add(occ)
    problems.extend(work.problems)
    return work, problems


def replay_workload(inputs: Sequence[str], resolver: Any, *, out: Console, err: Console, verify: bool = False,
                    verbose: bool = False, as_json: bool = False, query_type: str = SNAPSHOT,
                    stats_source: str = "auto", listing: str = "folders",
                    storage_options: dict[str, str] | None = None, time_zone: str = "UTC",
                    spark_master: str | None = None, html: str | None = None, filters: Sequence[str] = ()) -> int:
    """Replay a workload of many tables: the scans of Spark event logs, the filters of text logs and of files of
    filters (``filters``, said so; see
    :mod:`hive_bridge.workload`), each table opened once and each distinct filter planned once through its
    snapshot; a report per table with Spark's own read figures beside hive-bridge's (or JSON Lines). Problems
    in the input are reported with file and line and the run goes on. With ``spark_master`` the event logs'
    applications are read by Spark executors (same result). With ``html`` the report is also written there as one
    self-contained HTML page (:mod:`hive_bridge.workload.htmlreport`). Returns 1 if anything failed."""
    from hive_bridge.workload.report import input_notes, print_report, write_json
    from hive_bridge.workload.tables import redact

    work, problems = load_workload(inputs, resolver, verbose=verbose, query_type=query_type,
                                   stats_source=stats_source, listing=listing, storage_options=storage_options,
                                   time_zone=time_zone, spark_master=spark_master, filters=filters)
    failures = work.plan()
    if verify:
        failures += _verify_workload(work, err, verbose)
    for p in problems:
        err.print(f"error: {p}", highlight=False, markup=False)
    for note in input_notes(work.accounts):
        err.print(f"note: {note}", highlight=False, markup=False)
    for state in work.tables.values():
        if state.error:
            failures += 1
            err.print(f"error: table {redact(state.uri)} ({state.scans} scans): {state.error}", highlight=False,
                      markup=False)
    for entry in work.entries():
        if entry.error:
            more = f" (and {entry.occurrences - 1} more occurrences)" if entry.occurrences > 1 else ""
            err.print(f"error: {entry.origin}{more}: {redact(entry.table)}: filter {entry.hiveql!r}: {entry.error}",
                      highlight=False, markup=False)
    for state in work.tables.values():
        for line in state.snapshot.index.discard_notices() if state.snapshot is not None else ():
            err.print(f"hive-bridge replay: {redact(state.uri)}: {line}", highlight=False, markup=False)
    failures += len(problems)
    if as_json:
        write_json(out.file, work, failures, problems)
    else:
        print_report(out, work, failures, problems)
    if html is not None and not write_html(html, work, failures, problems, err):
        return 1
    return 1 if failures else 0


def write_html(path: str, work: Any, failures: int, problems: list[Any], err: Console,
               advice: list[dict[str, Any]] | None = None) -> bool:
    """The workload's HTML report written to ``path`` (with the advisor's section when ``advice`` is given), its
    size said on ``err``; False, with the reason said, when the file cannot be written."""
    from hive_bridge.workload.htmlreport import write_report

    try:
        size = write_report(path, work, failures, problems, advice=advice)
    except OSError as exc:
        err.print(f"error: cannot write the HTML report {path}: {exc.strerror or exc}", highlight=False,
                  markup=False)
        return False
    err.print(f"HTML report written to {path} ({human_bytes(size)})", highlight=False, markup=False)
    return True


def _verify_workload(work: Any, err: Console, verbose: bool) -> int:
    from hive_bridge.filters.residual import to_sql
    from hive_bridge.spark import start as spark_start
    from hive_bridge.workload.tables import redact

    spark = spark_start.start_session("hive-bridge-replay", verbose=verbose)
    failures = 0
    for state in work.tables.values():
        if state.snapshot is None:
            continue
        for entry in state.entries.values():
            if entry.listing is None:
                continue
            parsed = sarg.read_filter(entry.hiveql, state.types) if entry.hiveql else None
            residual = to_sql(parsed) if parsed is not None else None
            entry.verified, entry.verify_detail = verify_filter(spark, state.snapshot.table, entry.listing, residual)
            if not entry.verified:
                failures += 1
                err.print(f"verify {redact(entry.table)}: {entry.hiveql}: {entry.verify_detail}", markup=False,
                          highlight=False)
    return failures
