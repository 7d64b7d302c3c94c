"""The replay of a workload printed: per table a table of its filters (occurrences, files and bytes kept of the
total, unknowns, and Spark's own read figures beside hive-bridge's where the log has them), per table totals,
overall totals and what could not be read; or JSON Lines (one object per table and filter, then one summary)."""

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


def write_json(out: IO[str], work: Workload, failures: int, problems: list[Problem]) -> None:
    for entry in work.entries():
        out.write(json.dumps(entry.as_json(), ensure_ascii=False) + "\n")
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
        out.print(line, highlight=False)
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
