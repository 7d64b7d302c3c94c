"""A replayed workload summed up for people: per table what Spark read beside what hive-bridge keeps (and Hudi's
own data skipping where the log has it), the filters that cost the most I/O, how often each column is filtered
on and how well filters on it prune, and which partitions and files the workload reads. Everything here is
plain JSON-able data (dicts, lists, numbers, strings), with URIs redacted; :mod:`hive_bridge.workload.htmlreport`
draws it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.replay_report import summary, table_totals
from hive_bridge.workload.runner import FilterEntry, TableState, Workload
from hive_bridge.workload.tables import redact

#: the costliest filters listed per table (the rest are counted)
TOP_FILTERS = 25
#: queries listed per filter (the count is always complete)
QUERIES_SHOWN = 3
#: the longest filter text shown (the rest is cut, with a mark)
FILTER_CHARS = 600
#: a heat map's largest grid: rows (partitions, or runs of files) by cells per row
HEAT_ROWS = 24
HEAT_COLUMNS = 20
#: the longest row label of a heat map
LABEL_CHARS = 64
#: columns listed per table (the rest are counted)
TOP_COLUMNS = 30
#: messages listed per kind of problem (the rest are counted)
MESSAGES_SHOWN = 100


#: the listing's figures a filter's row of the report shows (:meth:`ListStatusResult.figures`)
_LISTING_FIGURES = ("files_kept", "files_total", "bytes_kept", "bytes_total", "kept_unknown")


def clip(text: str, limit: int = FILTER_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with ``…`` where it was cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table_overview(state: TableState) -> dict[str, Any]:
    """One table's read figures: the report's totals, the unpruned bytes of all scans, Hudi's own candidate
    count beside hive-bridge's files for the scans that have it, and the unknowns."""
    out = table_totals(state)
    snap = state.snapshot
    out["table_type"] = snap.table.properties.table_type if snap is not None else None
    out["slices"] = len(snap.slices) if snap is not None else 0
    bytes_all = hudi_scans = hudi_candidates = hb_files_hudi = occurrences = 0
    unknown_filters = kept_unknown = failed = 0
    for e in state.entries.values():
        occurrences += e.occurrences
        unknown_filters += e.unknown * e.occurrences
        if e.error:
            failed += 1
        if e.listing is None:
            continue
        bytes_all += e.listing.bytes_total * e.occurrences
        kept_unknown += e.listing.kept_unknown * e.occurrences
        hudi_scans += e.hudi_scans
        hudi_candidates += e.hudi_candidates
        hb_files_hudi += e.listing.files_kept * e.hudi_scans
    out.update({"occurrences": occurrences, "bytes_unpruned": bytes_all, "hudi_scans_measured": hudi_scans,
                "hudi_candidate_files": hudi_candidates, "hive_bridge_files_kept_hudi_measured": hb_files_hudi,
                "unknown_filters": unknown_filters, "kept_unknown": kept_unknown, "failed_filters": failed})
    return out


def entry_cost(entry: FilterEntry) -> int:
    """The I/O a filter costs the workload: the bytes hive-bridge keeps for it times its occurrences."""
    return entry.listing.bytes_kept * entry.occurrences if entry.listing is not None else 0


def filter_row(entry: FilterEntry) -> dict[str, Any]:
    """One filter as the report shows it (texts clipped, queries capped)."""
    lst = entry.listing
    row: dict[str, Any] = {
        "filter": clip(entry.hiveql) if entry.hiveql else None,
        "sarg": clip(entry.sarg_text) if entry.sarg_text else None,
        "columns": list(entry.columns), "time_zone": entry.time_zone, "query_type": entry.query_type,
        "occurrences": entry.occurrences, "queries": entry.queries[:QUERIES_SHOWN],
        "queries_more": entry.occurrences - min(len(entry.queries), QUERIES_SHOWN),
        "sources": sorted(entry.sources), "unknown_filters": entry.unknown,
        "unknown_filter_texts": [clip(t, 200) for t in entry.unknown_texts[:3]],
        "cost": entry_cost(entry), "error": entry.error,
    }
    if lst is not None:
        figures = lst.figures()
        row.update({k: figures[k] for k in _LISTING_FIGURES})
    if entry.spark_scans:
        row.update({"spark_scans": entry.spark_scans, "spark_files": entry.spark_files,
                    "spark_bytes": entry.spark_bytes})
    if entry.hudi_scans:
        row.update({"hudi_scans": entry.hudi_scans, "hudi_candidates": entry.hudi_candidates})
    return row


def costly_filters(state: TableState, top: int = TOP_FILTERS) -> tuple[list[dict[str, Any]], int]:
    """A table's ``top`` filters by I/O cost (bytes kept × occurrences, then occurrences), and how many more
    the table has."""
    ranked = sorted(state.entries.values(), key=lambda e: (-entry_cost(e), -e.occurrences, e.hiveql or ""))
    return [filter_row(e) for e in ranked[:top]], max(0, len(ranked) - top)


def column_usage(state: TableState) -> list[dict[str, Any]]:
    """Per column of a table's typed filters: distinct filters and occurrences naming it, and the mean
    fraction of files and of bytes kept by those filters, weighted by occurrences (``alone_*``: the filters
    naming only this column, which show its own pruning). Most filtered on first."""
    acc: dict[str, list[float]] = {}
    for e in state.entries.values():
        lst = e.listing
        if lst is None or not e.columns:
            continue
        f_files = lst.files_kept / lst.files_total if lst.files_total else 1.0
        f_bytes = lst.bytes_kept / lst.bytes_total if lst.bytes_total else 1.0
        w = float(e.occurrences)
        alone = len(e.columns) == 1
        for col in e.columns:
            a = acc.setdefault(col, [0.0] * 8)
            a[0] += 1
            a[1] += w
            a[2] += f_files * w
            a[3] += f_bytes * w
            a[4] += 1.0 if lst.kept_unknown else 0.0
            if alone:
                a[5] += w
                a[6] += f_files * w
                a[7] += f_bytes * w
    rows: list[dict[str, Any]] = [{"column": col, "filters": int(a[0]), "occurrences": int(a[1]), "kept_files": a[2] / a[1],
             "kept_bytes": a[3] / a[1], "filters_with_unknown": int(a[4]), "alone_occurrences": int(a[5]),
             "alone_kept_files": a[6] / a[5] if a[5] else None, "alone_kept_bytes": a[7] / a[5] if a[5] else None}
            for col, a in acc.items() if a[1] > 0]
    rows.sort(key=lambda r: (-r["occurrences"], r["kept_files"], r["column"]))
    return rows


def _chunks(n: int, parts: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into ``parts`` contiguous runs as equal as can be: (start, stop) pairs."""
    return [(n * i // parts, n * (i + 1) // parts) for i in range(parts)]


def read_heat(state: TableState, rows: int = HEAT_ROWS, columns: int = HEAT_COLUMNS) -> dict[str, Any] | None:
    """Which partitions and files of a table the workload reads: every latest file slice's reads (the
    occurrences of the filters that keep it), laid out as a grid of at most ``rows`` × ``columns`` cells. A row
    is a partition (runs of neighbouring partitions when there are more), or, in a table of one partition, a run
    of its files; a cell is a run of a row's files, holding their count, bytes and reads. Per partition: its
    reads and the scans that read any of its files. None for a table that was not opened."""
    snap = state.snapshot
    if snap is None:
        return None
    reads: dict[tuple[str, str], int] = {}
    part_scans: dict[str, int] = {}
    for e in state.entries.values():
        if e.listing is None:
            continue
        touched: set[str] = set()
        for sl in e.listing.slices:
            key = (sl.partition_path, sl.file_id)
            reads[key] = reads.get(key, 0) + e.occurrences
            touched.add(sl.partition_path)
        for p in touched:
            part_scans[p] = part_scans.get(p, 0) + e.occurrences
    by_part: dict[str, list[tuple[str, int]]] = {}
    for sl in snap.slices:
        size = sl.base_file.size if sl.base_file is not None else 0
        size += sum(lf.size for lf in sl.log_files)
        by_part.setdefault(sl.partition_path, []).append((sl.file_id, size))
    parts = sorted(by_part)
    for p in parts:
        by_part[p].sort()
    # the rows: (label, partitions, files as (partition, file id, bytes))
    grid: list[tuple[str, list[str], list[tuple[str, str, int]]]] = []
    if len(parts) == 1:
        p = parts[0]
        files = [(p, fid, size) for fid, size in by_part[p]]
        n_rows = max(1, min(rows, -(-len(files) // columns)))
        for a, b in _chunks(len(files), n_rows):
            grid.append((clip(f"{p + ': ' if p else ''}files {a + 1}-{b}", LABEL_CHARS), [p], files[a:b]))
    else:
        for a, b in _chunks(len(parts), min(rows, len(parts))):
            group = parts[a:b]
            label = (clip(group[0], LABEL_CHARS) if len(group) == 1 else
                     f"{clip(group[0], LABEL_CHARS // 2)} – {clip(group[-1], LABEL_CHARS // 2)} ({len(group)})")
            grid.append((label, group, [(p, fid, size) for p in group for fid, size in by_part[p]]))
    seen: set[str] = set()
    for i, (label, group, files) in enumerate(grid):   # row labels name the rows: unique even when clipped
        while label in seen:
            label += f" #{i + 1}"
        seen.add(label)
        grid[i] = (label, group, files)
    # cells: x (run in its row), y (row), files, bytes, reads, mean reads per file, first and last file of
    # the run (1-based positions in the row); plain numbers, so that a page of many tables stays small
    cells: dict[str, list[Any]] = {k: [] for k in ("x", "y", "files", "bytes", "reads", "mean", "first", "last")}
    row_totals = []
    for y, (label, _group, files) in enumerate(grid):
        total = 0
        for x, (a, b) in enumerate(_chunks(len(files), min(columns, len(files)) or 1)):
            run = files[a:b]
            if not run:
                continue
            n_reads = sum(reads.get((p, fid), 0) for p, fid, _ in run)
            total += n_reads
            values: dict[str, Any] = {"x": x, "y": y, "files": len(run), "bytes": sum(size for _, _, size in run),
                                      "reads": n_reads, "mean": round(n_reads / len(run), 2), "first": a + 1,
                                      "last": b}
            for name, value in values.items():
                cells[name].append(value)
        row_totals.append({"row": label, "files": len(files), "reads": total})
    partitions: list[dict[str, Any]] = sorted(({"partition": p or "(table)", "files": len(by_part[p]), "scans": part_scans.get(p, 0),
                          "reads": sum(reads.get((p, fid), 0) for fid, _ in by_part[p])} for p in parts),
                        key=lambda r: (-r["reads"], r["partition"]))
    widest = max((len(files) for _, _, files in grid), default=0)
    return {"rows": [r["row"] for r in row_totals], "row_totals": row_totals, "cells": cells,
            "columns": min(columns, widest),
            "files": len(snap.slices), "partitions": len(parts), "partitioned": len(parts) > 1,
            "partition_reads": partitions, "files_read": sum(1 for v in reads.values() if v),
            "reads": sum(reads.values())}


def not_read(work: Workload, problems: Sequence[Problem]) -> dict[str, Any]:
    """What could not be read: input problems, tables not opened, scans whose table was not found, filters that
    failed to plan (counts, and the first messages of each)."""
    failed = [{"table": redact(e.table), "filter": clip(e.hiveql or "", 300), "error": redact(e.error)}
              for e in work.entries() if e.error]
    return {
        "problems": len(problems),
        "problem_messages": [redact(clip(str(p), 400)) for p in problems[:MESSAGES_SHOWN]],
        "tables_unopened": [{"table": redact(s.uri), "scans": s.scans, "error": redact(s.error)}
                            for s in work.tables.values() if s.error],
        "scans_unresolved": [{"name": redact(name), "scans": n}
                             for name, n in sorted(work.unresolved.items(), key=lambda kv: (-kv[1], kv[0]))],
        "filters_failed": len(failed),
        "failed_messages": failed[:MESSAGES_SHOWN],
    }


def workload_insights(work: Workload, failures: int, problems: Sequence[Problem], *,
                      top: int = TOP_FILTERS) -> dict[str, Any]:
    """Everything the HTML report shows, as JSON-able data: totals, per table its read figures, costliest
    filters, columns and read heat, and what could not be read."""
    tables = []
    for state in work.tables.values():
        info = table_overview(state)
        if state.snapshot is not None:
            info["filters_top"], info["filters_left_out"] = costly_filters(state, top)
            cols = column_usage(state)
            info["columns"], info["columns_left_out"] = cols[:TOP_COLUMNS], max(0, len(cols) - TOP_COLUMNS)
            info["heat"] = read_heat(state)
        tables.append(info)
    s = summary(work, failures, list(problems))
    s.pop("tables")
    s.update({
        "tables": tables,
        "occurrences": sum(t["occurrences"] for t in tables),
        "hive_bridge_bytes_kept": sum(t["hive_bridge_bytes_kept"] for t in tables),
        "bytes_unpruned": sum(t["bytes_unpruned"] for t in tables),
        "hudi_scans_measured": sum(t["hudi_scans_measured"] for t in tables),
        "hudi_candidate_files": sum(t["hudi_candidate_files"] for t in tables),
        "hive_bridge_files_kept_hudi_measured": sum(t["hive_bridge_files_kept_hudi_measured"] for t in tables),
        "spark_scans_measured": sum(t["spark_scans_measured"] for t in tables),
        "not_read": not_read(work, problems),
    })
    return s
