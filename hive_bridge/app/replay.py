"""Filter replay: the filters found in real Hive/Spark logs, judged against Hudi tables, with the files each
keeps; optionally verified by reading with Spark pruned and unpruned (``hive-bridge replay`` and the demo).

One pipeline: inputs read into a :class:`~hive_bridge.workload.runner.Workload` (filter reading), each distinct
filter planned once through its table's snapshot (:meth:`~hive_bridge.workload.runner.Workload.plan`, planning),
each a :class:`~hive_bridge.workload.runner.FilterEntry` (the record, with its one JSON form). The
filter-by-filter replay (:func:`replay`: one table, its filters read with their file, line and column) is a
view of it; :func:`replay_workload` is the whole of it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

import sarg
from hive_bridge.pruning import ListStatusResult
from hive_bridge.pruning.pruner import READ_OPTIMIZED, SNAPSHOT, read_optimized_view
from hive_bridge.table.table import HudiTable
from hive_bridge.workload.accounting import EVENTS, Accounts
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.formatting import human_bytes
from hive_bridge.workload.logscan import FoundFilter, distinct, distinct_filters, input_filters, scan_lines
from hive_bridge.workload.replay_report import input_notes, lines_summary

if TYPE_CHECKING:   # the HTML report is imported on use (it needs Bokeh); the rest on use for start-up time
    from pyspark.sql import SparkSession
    from rich.progress import Progress

    from hive_bridge.workload.htmlreport import LayoutAdvice
    from hive_bridge.workload.runner import Workload
    from hive_bridge.workload.tables import TableResolver


def verify_filter(spark: SparkSession, table: HudiTable, listing: ListStatusResult, residual: str | None) -> tuple[bool, str]:
    """Read the kept files and all latest files with the same row filter; the rows must be identical. A Spark
    failure is a failed verification with its first line as the detail (a replay reports it and goes on)."""
    try:
        return _compare_reads(spark, table, listing, residual)
    except Exception as exc:
        return False, f"verify failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"


def _compare_reads(spark: SparkSession, table: HudiTable, listing: ListStatusResult, residual: str | None) -> tuple[bool, str]:
    from pyspark.sql import functions as F

    from hive_bridge.spark import read_slices

    pruned = read_slices(spark, table, listing.slices, as_of=listing.as_of)
    everything = table.time_travel(listing.as_of)[1] if listing.as_of is not None else table.latest_file_slices()
    if listing.query_type == READ_OPTIMIZED:
        everything = read_optimized_view(everything)
    full = read_slices(spark, table, everything, as_of=listing.as_of)
    if residual:
        pruned, full = pruned.where(residual), full.where(residual)
    as_json = [F.to_json(F.struct("*")).alias("row")]
    p, f = pruned.select(as_json), full.select(as_json)
    missing = f.exceptAll(p).count()
    extra = p.exceptAll(f).count()
    if missing or extra:
        return False, f"{missing} rows missing from the pruned read, {extra} unexpected"
    return True, f"{f.count()} rows identical"


@dataclass
class ReadInputs:
    """The distinct filters of a run's text inputs, what could not be read in them, and every line's count."""

    found: list[FoundFilter]
    problems: list[Problem]
    accounts: Accounts


def read_inputs(logs: Sequence[str], filters: Sequence[str] = ()) -> ReadInputs:
    """The filters of text logs and files of filters (none given: standard input), told apart by what they hold
    (``filters`` are files of filters, said so), deduplicated; each unreadable input is a problem and the others
    are read."""
    from hive_bridge.workload.sources import split_inputs

    accounts = Accounts()
    split = split_inputs(list(logs) if logs or filters else ["-"], filters, accounts)
    problems: list[Problem] = list(split.problems)
    for path in split.events:   # an event log goes to the workload replay; here it is not read
        problems.append(Problem(path, 0, "a Spark event log: replayed with the workload replay, not here"))
        accounts.unreadable(path, EVENTS, "a Spark event log read with the workload replay")
    found = distinct(input_filters(split.texts, problems, accounts))
    return ReadInputs(found, problems, accounts)


def replay(table: HudiTable, lines: Iterable[str] | ReadInputs, *, out: Console, err: Console,
           time_zone: str = "UTC", verify: bool = False, verbose: bool = False, as_json: bool = False,
           query_type: str = SNAPSHOT, stats_source: str = "auto", kept_files: bool = True,
           as_of: str | None = None) -> int:
    """The filter-by-filter replay: a view of the workload replay with one table. The filters of log lines (or
    those :func:`read_inputs` read) are the workload's entries, each planned once through the table's snapshot
    (:meth:`Workload.plan`); printed as a table (or JSON Lines with ``as_json``: one record per filter planned,
    its kept files with ``kept_files``, then the summary object). ``query_type`` snapshot (base files merged
    with log files) or read_optimized (base files only); ``verify`` reads every filter with Spark pruned and
    unpruned; ``as_of`` plans the table's state as of an instant or time (time travel). A filter that does not
    parse is reported with the input's own file, line and column, an input
    that cannot be read with its name, and the run goes on. Returns 1 if anything failed, else 0."""
    from hive_bridge.workload.replay_report import print_filters, write_json
    from hive_bridge.workload.runner import Workload
    from hive_bridge.workload.tables import TableResolver

    counted = isinstance(lines, ReadInputs)
    read = lines if isinstance(lines, ReadInputs) else ReadInputs(distinct_filters(lines), [], Accounts())
    work = Workload(TableResolver(default=str(table.base_path)), stats_source=stats_source, query_type=query_type,
                    as_of=as_of)
    work.accounts = read.accounts
    state = work.adopt(table)
    for f in read.found:
        work.add_found(state.uri, f, time_zone)
    failures = len(read.problems)
    for p in read.problems:
        err.print(f"error: {p}", highlight=False, markup=False)
    entries = list(state.entries.values())
    progress = _progress(err, len(entries)) if len(entries) > 20 and err.is_terminal and not as_json else None
    task = progress.add_task("replaying", total=len(entries)) if progress else None
    if progress:
        progress.start()
    try:
        failures += work.plan(progress=lambda: progress.advance(task) if progress and task is not None else None)
    finally:
        if progress:
            progress.stop()
    for entry in entries:
        if entry.error:
            err.print(entry.error_detail or f"error: {entry.origin}: {entry.error}", highlight=False, markup=False)
    if verify:
        failures += verify_workload(work, err, verbose)
    for line in state.snapshot.index.discard_notices() if state.snapshot is not None else ():
        err.print(f"hive-bridge replay: {line}", highlight=False, markup=False)
    for note in input_notes(read.accounts) if counted else ():
        err.print(f"note: {note}", highlight=False, markup=False)
    if not as_json:
        print_filters(out, state, failures)
        if counted:
            out.print(lines_summary(read.accounts), highlight=False)
    else:
        write_json(out.file, work, failures, read.problems, kept_files=kept_files, failed_filters=False)
        if counted:
            err.print(lines_summary(read.accounts), highlight=False)
        if failures:
            err.print(f"{failures} failed", highlight=False)
    return 1 if failures else 0


def _progress(console: Console, total: int) -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=console, transient=True)


def load_workload(inputs: Sequence[str], resolver: TableResolver, *, verbose: bool = False, query_type: str = SNAPSHOT,
                  stats_source: str = "auto", listing: str = "folders",
                  storage_options: dict[str, str] | None = None, time_zone: str = "UTC",
                  spark_master: str | None = None, filters: Sequence[str] = (),
                  as_of: str | None = None) -> tuple[Workload, list[Problem]]:
    """The workload of log files and folders and of files of filters (``filters``; see
    :mod:`hive_bridge.workload`), not planned yet, and the problems met reading them: every scan and filter
    occurrence resolved to its table (each opened once) and counted under its distinct filter; every input line
    counted in the workload's ``accounts``. With ``spark_master`` the event logs' applications are read by Spark
    executors (same result)."""
    from hive_bridge.workload.runner import Workload
    from hive_bridge.workload.sources import event_log_scans, split_inputs
    from hive_bridge.workload.textlogs import text_occurrences

    work = Workload(resolver, listing=listing, stats_source=stats_source, storage_options=storage_options,
                    query_type=query_type, as_of=as_of)
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


def replay_workload(inputs: Sequence[str], resolver: TableResolver, *, out: Console, err: Console, verify: bool = False,
                    verbose: bool = False, as_json: bool = False, query_type: str = SNAPSHOT,
                    stats_source: str = "auto", listing: str = "folders",
                    storage_options: dict[str, str] | None = None, time_zone: str = "UTC",
                    spark_master: str | None = None, html: str | None = None, filters: Sequence[str] = (),
                    kept_files: bool = False, as_of: str | None = None) -> int:
    """Replay a workload of many tables: the scans of Spark event logs, the filters of text logs and of files of
    filters (``filters``, said so; see
    :mod:`hive_bridge.workload`), each table opened once and each distinct filter planned once through its
    snapshot; a report per table with Spark's own read figures beside hive-bridge's (or JSON Lines). Problems
    in the input are reported with file and line and the run goes on. With ``spark_master`` the event logs'
    applications are read by Spark executors (same result). With ``html`` the report is also written there as one
    self-contained HTML page (:mod:`hive_bridge.workload.htmlreport`); with ``kept_files`` each JSON record lists
    its kept files. ``as_of``: every table's state as of this instant or time (time travel; a table whose state
    then cannot be read is reported as a table error). Returns 1 if anything failed."""
    from hive_bridge.workload.replay_report import input_notes, print_report, write_json
    from hive_bridge.workload.tables import redact

    work, problems = load_workload(inputs, resolver, verbose=verbose, query_type=query_type,
                                   stats_source=stats_source, listing=listing, storage_options=storage_options,
                                   time_zone=time_zone, spark_master=spark_master, filters=filters, as_of=as_of)
    failures = work.plan()
    if verify:
        failures += verify_workload(work, err, verbose)
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
        write_json(out.file, work, failures, problems, kept_files=kept_files)
    else:
        print_report(out, work, failures, problems)
    if html is not None and not write_html(html, work, failures, problems, err):
        return 1
    return 1 if failures else 0


def write_html(path: str, work: Workload, failures: int, problems: list[Problem], err: Console,
               advice: Sequence[LayoutAdvice] | None = None) -> bool:
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


def verify_workload(work: Workload, err: Console, verbose: bool) -> int:
    """Every planned filter of the workload read with Spark pruned and unpruned (:func:`verify_filter`); the
    number that differed or failed, each said on ``err``. A filter a text input held as HiveQL is its own row
    filter; the others (SearchArguments, filters translated from Spark's plans) are said in Spark SQL."""
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
            if entry.found is not None and entry.kind == "hiveql":
                residual = entry.hiveql
            else:
                parsed = sarg.read_filter(entry.hiveql, state.types) if entry.hiveql else None
                residual = to_sql(parsed) if parsed is not None else None
            entry.verified, entry.verify_detail = verify_filter(spark, state.snapshot.table, entry.listing, residual)
            if entry.verified:
                continue
            failures += 1
            if entry.found is not None:
                err.print(f"[red]verify[/red] line {entry.found.line}: {escape(entry.verify_detail)}", markup=True,
                          highlight=False)
            else:
                err.print(f"verify {redact(entry.table)}: {entry.hiveql}: {entry.verify_detail}", markup=False,
                          highlight=False)
    return failures
