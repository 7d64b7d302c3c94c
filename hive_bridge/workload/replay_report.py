"""The replay of a workload printed: per table a table of its filters (occurrences, files and bytes kept of the
total, unknowns, and Spark's own read figures beside hive-bridge's where the log has them), per table totals,
overall totals and what could not be read; or JSON Lines (one object per table and filter, then one summary).
The filter-by-filter replay of one table is printed from the same records (:func:`print_filters`)."""

from __future__ import annotations

import json
from typing import IO, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hive_bridge.workload.accounting import Accounts
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.formatting import human_bytes
from hive_bridge.workload.runner import FilterEntry, TableState, Workload
from hive_bridge.workload.tables import redact


def table_totals(state: TableState) -> dict[str, Any]:
    """Per table: scans, bytes read by Spark (measured scans) and what hive-bridge keeps for the same scans."""
    spark_scans = spark_bytes = hb_bytes_measured = hb_bytes = hb_files = spark_files = 0
    hb_files_measured = 0
    for e in state.entries.values():
        if e.listing is None:
            continue
        hb_bytes += e.listing.bytes_kept * e.occurrences
        hb_files += e.listing.files_kept * e.occurrences
        spark_scans += e.spark_scans
        spark_bytes += e.spark_bytes
        spark_files += e.spark_files
        hb_bytes_measured += e.listing.bytes_kept * e.spark_scans
        hb_files_measured += e.listing.files_kept * e.spark_scans
    return {"table": redact(state.uri), "scans": state.scans, "filters": len(state.entries),
            "hive_bridge_files_kept": hb_files, "hive_bridge_bytes_kept": hb_bytes,
            "spark_scans_measured": spark_scans, "spark_files_read": spark_files, "spark_bytes_read": spark_bytes,
            "hive_bridge_files_kept_measured": hb_files_measured,
            "hive_bridge_bytes_kept_measured": hb_bytes_measured,
            "index_segments_discarded": state.snapshot.index.counters.corrupt_segments if state.snapshot else 0,
            **({"error": state.error} if state.error else {})}


def summary(work: Workload, failures: int, problems: list[Problem]) -> dict[str, Any]:
    tables = [table_totals(s) for s in work.tables.values()]
    return {
        "summary": True,
        "tables": tables,
        "tables_unopened": {redact(s.uri): {"scans": s.scans, "error": s.error}
                            for s in work.tables.values() if s.error},
        "scans_unresolved": dict(work.unresolved),
        "scans": sum(t["scans"] for t in tables) + sum(work.unresolved.values()),
        "filters": sum(t["filters"] for t in tables),
        "spark_bytes_read": sum(t["spark_bytes_read"] for t in tables),
        "hive_bridge_bytes_kept_measured": sum(t["hive_bridge_bytes_kept_measured"] for t in tables),
        "problems": len(problems),
        "failed": failures,
        **work.accounts.totals(),
        "inputs_read": work.accounts.as_json(),
    }


def lines_summary(accounts: Accounts) -> str:
    """One sentence: the inputs and lines read, and what each line was."""
    t = accounts.totals()
    text = (f"{t['inputs']} inputs, {t['lines']} lines read: {t['filter_lines']} holding filters, "
            f"{t['failed_lines']} failed, {t['other_lines']} not filters")
    if t["inputs_unreadable"]:
        text += f"; {t['inputs_unreadable']} inputs could not be read"
    return text


def input_notes(accounts: Accounts) -> list[str]:
    """A note for each input read whole that held no filter at all (what it was read as, and its lines)."""
    return [f"{c.source}: {c.lines} lines read ({c.kind}), none holding a filter"
            for c in accounts.inputs.values() if not c.unreadable and not c.filters]


def write_json(out: IO[str], work: Workload, failures: int, problems: list[Problem], *, kept_files: bool = False,
               failed_filters: bool = True) -> None:
    """JSON Lines: one record per table and filter (:meth:`FilterEntry.as_json`; its kept files too with
    ``kept_files``; a filter that failed only with ``failed_filters``), then the summary object."""
    for state in work.tables.values():
        table = state.snapshot.table if kept_files and state.snapshot is not None else None
        for entry in state.entries.values():
            if entry.error and not failed_filters:
                continue
            out.write(json.dumps(entry.as_json(kept=table), ensure_ascii=False) + "\n")
    out.write(json.dumps(summary(work, failures, problems), ensure_ascii=False) + "\n")


def _spark_cell(e: FilterEntry) -> str:
    cells = []
    if e.spark_scans:
        files = e.spark_files / e.spark_scans
        size = e.spark_bytes // e.spark_scans
        cells.append(f"{files:.0f} files, {human_bytes(size)}"
                     + (f" (mean of {e.spark_scans})" if e.spark_scans > 1 else ""))
    if e.hudi_scans:
        cells.append(f"Hudi kept {e.hudi_candidates / e.hudi_scans:.0f} file slices"
                     + (f" (mean of {e.hudi_scans})" if e.hudi_scans > 1 else ""))
    return "; ".join(cells) or "-"


def print_report(out: Console, work: Workload, failures: int, problems: list[Problem]) -> None:
    for state in work.tables.values():
        if state.error:
            continue
        snap = state.snapshot
        title = f"{escape(redact(state.uri))}: {state.scans} scans, {len(state.entries)} distinct filters"
        if snap is not None:
            title += f" ({snap.table.properties.table_type}, {len(snap.slices)} latest file slices)"
        t = Table(title=title, show_lines=False)
        for name in ("#", "filter", "seen", "files kept", "bytes kept", "unknown", "Spark read", "queries"):
            t.add_column(name, justify="left" if name in ("filter", "queries") else "right", overflow="fold",
                         max_width=60 if name == "filter" else None)
        verify = any(e.verified is not None for e in state.entries.values())
        if verify:
            t.add_column("verify")
        for i, e in enumerate(state.entries.values(), start=1):
            lst = e.listing
            unknown = f"{e.unknown} filters" if e.unknown else ""
            if lst is not None and lst.kept_unknown:
                unknown += (", " if unknown else "") + f"{lst.kept_unknown} files"
            queries = e.queries[0] + (f" +{e.occurrences - 1}" if e.occurrences > 1 else "") if e.queries else ""
            cells = [str(i), e.hiveql or "(none)", str(e.occurrences),
                     f"{lst.files_kept} / {lst.files_total}" if lst else f"error: {e.error}",
                     f"{human_bytes(lst.bytes_kept)} / {human_bytes(lst.bytes_total)}" if lst else "",
                     unknown or "0", _spark_cell(e), queries]
            if verify:
                cells.append("-" if e.verified is None else "rows identical" if e.verified
                             else f"DIFFERENT: {e.verify_detail}")
            t.add_row(*map(escape, cells))
        out.print(t)
        tot = table_totals(state)
        line = f"{escape(redact(state.uri))}: {state.scans} scans; hive-bridge keeps " \
               f"{human_bytes(tot['hive_bridge_bytes_kept'])} over all scans"
        if tot["spark_scans_measured"]:
            line += (f"; of the {tot['spark_scans_measured']} scans Spark measured, Spark read "
                     f"{tot['spark_files_read']} files, {human_bytes(tot['spark_bytes_read'])} and hive-bridge keeps "
                     f"{tot['hive_bridge_files_kept_measured']} files, "
                     f"{human_bytes(tot['hive_bridge_bytes_kept_measured'])}")
        out.print(line, highlight=False, soft_wrap=True)   # one line however long the table's URI (greppable)
    s = summary(work, failures, problems)
    for uri, info in s["tables_unopened"].items():
        out.print(f"table {escape(uri)} ({info['scans']} scans) could not be opened: {escape(info['error'] or '')}",
                  highlight=False)
    for name, n in s["scans_unresolved"].items():
        out.print(f"{n} scans of {escape(name)}: no Hudi table found for them (give --table NAME=URI)",
                  highlight=False)
    out.print(f"{len(s['tables'])} tables, {s['scans']} scans, {s['filters']} distinct filters; Spark read "
              f"{human_bytes(s['spark_bytes_read'])} in the scans it measured, hive-bridge keeps "
              f"{human_bytes(s['hive_bridge_bytes_kept_measured'])} for them; {len(problems)} input problems; "
              f"{failures} failed", highlight=False)
    out.print(lines_summary(work.accounts), highlight=False)


def print_filters(out: Console, state: TableState, failures: int) -> None:
    """The filter-by-filter replay of one table: a row per filter planned (the text as written, its occurrences,
    files and bytes kept of the total, files kept only because something was unknown, planning time, and the
    verification when there was one), what each filter could not say, and the totals."""
    entries = [e for e in state.entries.values() if e.listing is not None]
    snap = state.snapshot
    title = "Filter replay"
    if snap is not None:
        title += (f" against {snap.table.name} ({snap.table.properties.table_type}, {len(snap.slices)} latest "
                  "file slices)")
    t = Table(title=title, show_lines=False)
    t.add_column("#", justify="right")
    t.add_column("filter", overflow="fold", max_width=70)
    t.add_column("seen", justify="right")
    t.add_column("files kept", justify="right")
    t.add_column("bytes kept", justify="right")
    t.add_column("kept: unknown", justify="right")
    t.add_column("time", justify="right")
    if any(e.verified is not None for e in entries):
        t.add_column("verify")
    files_total = files_kept = bytes_total = bytes_kept = unknown = 0
    for i, e in enumerate(entries, start=1):
        lst = e.listing
        assert lst is not None
        cells = [str(i), (e.hiveql if e.kind == "hiveql" else e.sarg_text) or "(none)", str(e.occurrences),
                 f"{lst.files_kept} / {lst.files_total}",
                 f"{human_bytes(lst.bytes_kept)} / {human_bytes(lst.bytes_total)}",
                 str(lst.kept_unknown), f"{e.seconds * 1000:.1f} ms"]
        if e.verified is not None:
            cells.append("rows identical" if e.verified else f"DIFFERENT: {e.verify_detail}")
        t.add_row(*map(escape, cells))  # filter text is not rich markup: `[x]` stays
        files_total += lst.files_total
        files_kept += lst.files_kept
        bytes_total += lst.bytes_total
        bytes_kept += lst.bytes_kept
        unknown += lst.kept_unknown
    out.print(t)
    for i, e in enumerate(entries, start=1):  # what each filter's text could not say (its files are kept for it)
        if e.unknown_parts:
            out.print(escape(f"#{i} unknown: " + "; ".join(e.unknown_parts)), highlight=False)
    pct = 100.0 * (1 - files_kept / files_total) if files_total else 0.0
    out.print(f"{len(entries)} distinct filters ({sum(e.occurrences for e in entries)} occurrences); "
              f"files kept {files_kept} / {files_total} ({pct:.1f}% pruned), bytes kept "
              f"{human_bytes(bytes_kept)} / {human_bytes(bytes_total)}; {unknown} kept only because something "
              f"was unknown; {failures} failed", highlight=False)
