"""``hive-bridge explain`` rendered: the forms of a filter, each file's verdict grouped by reason, and the
counts of what dropped and kept files, as rich tables or as one JSON document."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import sarg
from hive_bridge.filters.expression import Constant, HudiExpression, Predicate
from hive_bridge.pruning import FileVerdict, ListStatusResult
from hive_bridge.pruning.pruner import unknown_column_note
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable

#: files listed by default in explain's text output
DEFAULT_FILES_SHOWN = 20
_TRUTH_WORD = re.compile(r"[A-Z_]+(?: \(unknown\))?")


def requests_text(counts: dict[str, int]) -> str:
    return f"{counts['total']} (" + ", ".join(f"{k} {v}" for k, v in counts.items() if k != "total" and v) + ")"


def _verdict_label(v: FileVerdict) -> str:
    if not v.kept:
        return "skip"
    return "keep (unknown)" if v.unknown else "keep"


def _reason_summary(reason: str, leaves: Sequence[str], constants: frozenset[str]) -> str:
    """A file's reason without its own statistics, so files judged alike group together: the verdict line
    (``root is NO: no row can match``, ``partition path: …``, ``kept: the slice has log files …``) and each
    leaf's truth (``id < 15: NO``); a constant leaf (a literal that cannot be typed, …) keeps its explanation,
    which is the same for every file."""
    reason = reason.strip()
    starts: list[tuple[int, str]] = []
    pos = 0
    for leaf in leaves:  # the evaluator writes "<head>; <leaf>: <TRUTH>[ (unknown)] - <detail>; …" in leaf order
        marker = f"; {leaf}: "
        at = reason.find(marker, pos)
        if at < 0:
            continue
        starts.append((at, leaf))
        pos = at + len(marker)
    if not starts:
        return reason if len(reason) <= 200 else reason.split("; ", 1)[0]
    parts = [reason[:starts[0][0]]]
    for k, (at, leaf) in enumerate(starts):
        body_start = at + len(f"; {leaf}: ")
        end = starts[k + 1][0] if k + 1 < len(starts) else len(reason)
        body = reason[body_start:end]
        if leaf in constants:
            parts.append(f"{leaf}: {body}")
        else:
            m = _TRUTH_WORD.match(body)
            parts.append(f"{leaf}: {m.group(0) if m else body.split(' - ', 1)[0]}")
    return "; ".join(parts)


def _explain_leaves(expression: Any) -> tuple[list[str], frozenset[str]]:
    """The printed leaves of a HudiExpression in the evaluator's order, and which of them are constants."""
    leaves: list[str] = []
    constants: set[str] = set()
    seen: set[Any] = set()
    for node in expression.walk():
        if isinstance(node, Predicate | Constant) and node not in seen:
            seen.add(node)
            leaves.append(str(node))
            if isinstance(node, Constant):
                constants.add(str(node))
    return leaves, frozenset(constants)


def _verdict_groups(verdicts: Sequence[FileVerdict], leaves: Sequence[str], constants: frozenset[str]
                    ) -> list[tuple[tuple[str, str, str], int]]:
    """(verdict, stage, reason) with the number of files: kept before skipped, then the largest groups first."""
    counts = Counter((_verdict_label(v), v.stage, _reason_summary(v.reason, leaves, constants)) for v in verdicts)
    order = {"keep": 0, "keep (unknown)": 1, "skip": 2}
    return sorted(counts.items(), key=lambda kv: (order.get(kv[0][0], 3), -kv[1], kv[0][1], kv[0][2]))


def render_explain(out: Console, filter_text: str, parsed: sarg.SearchArgument, expression: HudiExpression,
                   table: HudiTable, index: ColumnStatsIndex, listing: ListStatusResult, files: int | None,
                   as_json: bool) -> int:
    """Print what explain found: ``files`` the number of file verdicts shown (-1 all; None the default)."""
    leaves, constants = _explain_leaves(expression)
    groups = _verdict_groups(listing.verdicts, leaves, constants)
    # kept files first (they are what a read reads), then the skipped ones, each in listing order
    ordered = sorted(listing.verdicts, key=lambda v: not v.kept)
    limit = files if files is not None else (-1 if as_json else DEFAULT_FILES_SHOWN)
    shown = ordered if limit < 0 else ordered[:limit]
    if as_json:
        doc = {
            "filter": filter_text,
            "sarg": str(parsed),
            "sarg_old_form": parsed.to_old_string(),
            "hudi_expression": str(expression),
            "notes": [unknown_column_note(c) for c in listing.unknown_columns],
            **listing.figures(),
            "listing_problems": table.listing_problems,
            "index_segments_discarded": index.counters.corrupt_segments,
            "index_problems": index.discard_notices(),
            "requests": table.storage.requests.counts(),
            "summary": [{"verdict": "skip" if label == "skip" else "keep", "unknown": label == "keep (unknown)",
                         "stage": stage, "reason": reason, "files": n}
                        for (label, stage, reason), n in groups],
            "files": [{"path": v.path, "partition": v.partition, "kept": v.kept, "unknown": v.unknown,
                       "stage": v.stage, "truth": str(v.truth) if v.truth else None, "reason": v.reason.strip(),
                       "sources": list(v.sources),
                       **({"parts": [{"file": name, "truth": truth} for name, truth in v.parts]} if v.parts else {})}
                      for v in shown],
            "files_omitted": len(ordered) - len(shown),
        }
        out.file.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.print(f"[bold]SearchArgument[/bold]  {escape(str(parsed))}", highlight=False)
    out.print(f"[bold]old form[/bold]        {escape(parsed.to_old_string())}", highlight=False)
    out.print(f"[bold]HudiExpression[/bold]  {escape(str(expression))}", highlight=False)
    for column in listing.unknown_columns:
        out.print(f"[bold]unknown column[/bold]  {escape(unknown_column_note(column))}", highlight=False)
    s = Table(title=f"verdicts of {listing.files_total} files by reason")
    s.add_column("files", justify="right")
    s.add_column("verdict")
    s.add_column("stage")
    s.add_column("reason", overflow="fold")
    for (label, stage, reason), n in groups:
        s.add_row(str(n), label, stage, escape(reason))
    out.print(s)
    if shown:
        t = Table(title="file verdicts" + ("" if len(shown) == len(ordered) else
                                           f" (first {len(shown)} of {len(ordered)}, kept files first)"))
        t.add_column("file", overflow="fold")
        t.add_column("verdict")
        t.add_column("stage")
        t.add_column("truth")
        t.add_column("reason", overflow="fold")
        for v in shown:
            t.add_row(escape(v.path), _verdict_label(v), v.stage, str(v.truth) if v.truth else "-",
                      escape(v.reason.strip()))
        out.print(t)
    if len(shown) < len(ordered):
        out.print(f"{len(ordered) - len(shown)} more files not shown (--files all shows every file)",
                  highlight=False)
    stats_from = ", ".join(f"{n} from {src}" for src, n in listing.stats_sources.items()) or "none"
    out.print(f"listing: {listing.listing_source}"
              + (f" ({'; '.join(table.listing_problems)})" if table.listing_problems else "")
              + f"; statistics: {stats_from}"
              + (f"; answered by {', '.join(listing.index_sources)}" if listing.index_sources else "")
              + f"; storage requests: {requests_text(table.storage.requests.counts())}",
              highlight=False)
    out.print(f"files kept {listing.files_kept} / {listing.files_total}: dropped {listing.dropped_by_partition} by "
              f"partition values, {listing.dropped_by_partition_stats} by partition statistics "
              f"({listing.partitions_dropped_by_stats} partitions), {listing.dropped_by_statistics} by statistics; {listing.kept_unknown} kept "
              f"because something was unknown; {listing.kept_log_files} with log files ({listing.query_type} query; "
              f"{listing.log_files_total} log files, {listing.log_files_unknown} with unknown statistics)",
              highlight=False)
    if listing.float_proofs is not None:
        out.print(listing.float_proofs.text(), highlight=False)
    return 0
