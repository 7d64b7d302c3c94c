"""Filters in text logs and files of filters, as occurrences: HiveServer2 statements, Spark driver lines, and the
forms :mod:`hive_bridge.workload.logscan` finds when its scanner is passed in (ORC readers, Hive's ORC pushdown, EXPLAIN's
``filterExpr:``); in a file of filters (:mod:`hive_bridge.workload.inputs` tells one), every line that is not
blank or a comment. Every line is accounted for (:class:`hive_bridge.workload.accounting.LineCount`).

- HiveServer2 (``ql.Driver``): ``Compiling command(queryId=…): <SQL>`` and its continuation lines (up to the next
  line starting with a timestamp); ``Executing command`` repeats it: each ``queryId`` once. ``USE db`` followed.
  EXPLAIN statements read nothing and are not scans.
- Spark driver, INFO ``FileSourceStrategy``: ``Pruning directories with: …`` (partition filters, Catalyst),
  ``Pushed Filters: …`` (V1) and ``Post-Scan Filters: …`` (Catalyst): one scan, completed by its Post-Scan line.
  Items are separated by ``,`` (Spark 3) or wrapped in ``Set(…)`` and separated by ``, `` (Spark 4). These lines
  name no table: their scans go to ``--table``.
- Parquet's ``FilterCompat: Filtering using predicate: …`` (executor logs; Hive task logs with
  ``hive.optimize.index.filter=true``), the following ``Predicate has been collapsed to: …`` preferred
  (:mod:`hive_bridge.workload.parquet`).
- Hudi's ``HoodieFileIndex: Total file slices: N; candidate file slices after data skipping: M`` (and the older
  wordings): Hudi's own count, paired with the driver-log scan whose filter lines follow it.
- ``hive-bridge serve``'s scan log: one JSON object per scan (``"event": "hive-bridge-serve-scan"``), its table's
  location, its filter as a SearchArgument, the files it read; the statement id names the query.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from hive_bridge.workload.accounting import EVENTS, FILTERS, LOG, Accounts, LineCount
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.hiveserver2 import use_database
from hive_bridge.workload.inputs import filter_lines, sniff, text_lines, with_gaps
from hive_bridge.workload.runner import Occurrence

#: the source of a filter read from a file of filters
FILTERS_SOURCE = "filters-file"
#: a statement or a driver filter line over this many bytes (over many lines) is not read
MAX_TEXT = 8 << 20

_TIMESTAMP = re.compile(r"^\s*(?:\d{2,4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}|\d{2}:\d{2}:\d{2})")
_COMMAND = re.compile(r"(?P<kind>Compiling|Executing) command\(queryId=(?P<id>[^)]*)\):\s?(?P<sql>.*)$")
_PRUNING = re.compile(r"Pruning directories with:\s?(?P<f>.*)$")
_PUSHED = re.compile(r"Pushed Filters:\s?(?P<f>.*)$")
_POST_SCAN = re.compile(r"Post-Scan Filters:\s?(?P<f>.*)$")
_DRIVER_LINE = re.compile(r"Pruning directories with:|Pushed Filters:|Post-Scan Filters:")
_EXPLAIN = re.compile(r"^\s*EXPLAIN\b", re.I)
_PARQUET = re.compile(r"FilterCompat: Filtering using predicate:\s?(?P<p>.*)$")
_COLLAPSED = re.compile(r"FilterCompat: Predicate has been collapsed to:\s?(?P<p>.*)$")
_SERVE_SCAN = re.compile(r'^\s*\{.*"event"\s*:\s*"hive-bridge-serve-scan"')
#: the source of a scan read from ``hive-bridge serve``'s scan log
SERVE_SOURCE = "hive-bridge-serve"
_HUDI = re.compile(r"HoodieFileIndex: Total (?:file slices|files|base files)\s*:?\s*(?P<total>\d+);\s*candidate "
                   r"(?:file slices|files) after data skipping\s*:?\s*(?P<kept>\d+)")


def _driver_list(text: str, v1: bool) -> tuple[str, bool, str]:
    text = text.strip(" \t")
    if text.startswith("Set(") and text.endswith(")"):
        return "[" + text[4:-1] + "]", v1, ", "
    return "[" + text + "]", v1, ","


class _State:
    """What one text log has shown so far."""

    def __init__(self, name: str, time_zone: str, problems: list[Problem] | None = None) -> None:
        self.name = name
        self.problems = problems if problems is not None else []
        self.size = 0  # the bytes of the statement or driver filter line being read
        self.time_zone = time_zone
        self.database = "default"
        self.statement: list[str] | None = None
        self.statement_id = ""
        self.statement_line = 0
        self.seen_ids: set[str] = set()
        self.pruning: str | None = None
        self.pushed: str | None = None
        self.post_scan: str | None = None
        self.post_scan_line = 0
        self.continued: str | None = None  # the driver filter line that may go on over the next lines
        self.more: list[str] = []  # the lines that continued it so far
        self.continued_line = 0
        self.last_parquet: Occurrence | None = None
        self.hudi: int | None = None  # Hudi's candidate count, for the scan whose filter lines follow

    def feed(self, number: int, line: str, out: list[Occurrence]) -> bool:
        """Read one line; whether it was read into a filter (a statement's line, a scan's filter line, a
        FilterCompat line) rather than passed over."""
        if self.continued is not None:  # a driver filter line whose literal held a newline goes on here
            if line.strip() and not _TIMESTAMP.match(line) and not _DRIVER_LINE.search(line):
                self._continue(number, line)
                return True
            self._close()
            if self.post_scan is not None:
                self._end_scan(out)
        if self.statement is not None:
            if _TIMESTAMP.match(line):
                self._end_statement(out)
            else:
                self._continue(number, line)
                return True
        if _SERVE_SCAN.match(line):
            return self._serve_scan(number, line, out)
        m = _COMMAND.search(line)
        if m:
            qid = m.group("id")
            if qid in self.seen_ids:
                return False  # Executing command repeats the statement compiled before
            self.seen_ids.add(qid)
            self.statement, self.statement_id, self.statement_line = [m.group("sql")], qid, number
            self.size = len(line)
            return True
        m = _PARQUET.search(line)
        if m:
            out.append(Occurrence("parquet-filtercompat", f"{self.name}:{number}", None, [],
                                  time_zone=self.time_zone, origin=f"{self.name}:{number}", parquet=m.group("p")))
            self.last_parquet = out[-1]
            return True
        m = _COLLAPSED.search(line)
        if m:
            if self.last_parquet is not None:  # the collapsed form of the predicate just logged is preferred
                self.last_parquet.parquet = m.group("p")
                self.last_parquet = None
            return True
        m = _HUDI.search(line)
        if m:
            self.hudi = int(m.group("kept"))
            return False
        for pattern, attr in ((_PRUNING, "pruning"), (_PUSHED, "pushed"), (_POST_SCAN, "post_scan")):
            m = pattern.search(line)
            if m:
                setattr(self, attr, m.group("f"))
                self.continued, self.more, self.continued_line = attr, [], number
                self.size = len(line)
                if attr == "post_scan":
                    self.post_scan_line = number
                return True
        return False

    def _serve_scan(self, number: int, line: str, out: list[Occurrence]) -> bool:
        """One line of ``hive-bridge serve``'s scan log: the scan of its table's location with its filter."""
        import json

        where = f"{self.name}:{number}"
        try:
            scan = json.loads(line)
            path = str(scan["path"])
        except (ValueError, KeyError, TypeError) as exc:
            self.problems.append(Problem(self.name, number, f"a serve scan-log line that cannot be read: {exc}"))
            return False
        kept, size = scan.get("files_kept"), scan.get("bytes_kept")
        out.append(Occurrence(SERVE_SOURCE, str(scan.get("statement_id") or where), None, [path],
                              hiveql=scan.get("sarg") or None, time_zone=self.time_zone, origin=where,
                              spark_files=kept if isinstance(kept, int) else None,
                              spark_bytes=size if isinstance(size, int) else None))
        return True

    def _continue(self, number: int, line: str) -> None:
        """A statement's or a driver filter line's next line; past :data:`MAX_TEXT` bytes in all, what was read
        of it is dropped (reported) and its lines are passed over up to the next log line."""
        self.size += len(line) + 1
        if self.size > MAX_TEXT:
            if self.size - len(line) - 1 <= MAX_TEXT:
                what = "statement" if self.statement is not None else "filter line"
                start = self.statement_line if self.statement is not None else self.continued_line
                self.problems.append(Problem(self.name, start, f"a {what} of over {MAX_TEXT} bytes (over many "
                                                                "lines): not read"))
                if self.statement is not None:
                    self.statement = []
                else:  # the scan's filter lines are dropped whole
                    self.pruning = self.pushed = self.post_scan = None
            return
        if self.statement is not None:
            self.statement.append(line)
        elif self.continued is not None:
            self.more.append(line)

    def _close(self) -> None:
        """The driver filter line being continued is complete: its lines joined."""
        if self.continued is not None and self.more and getattr(self, self.continued) is not None:
            setattr(self, self.continued, "\n".join([getattr(self, self.continued), *self.more]))
        self.continued, self.more = None, []

    def _end_scan(self, out: list[Occurrence]) -> None:
        """A scan's filter lines are complete (its Post-Scan line and what continued it)."""
        assert self.post_scan is not None
        lists = [_driver_list(self.post_scan, False)]
        if self.pruning:
            lists.append(_driver_list(self.pruning, False))
        if self.pushed:
            lists.append(_driver_list(self.pushed, True))
        where = f"{self.name}:{self.post_scan_line}"
        out.append(Occurrence("spark-driver", where, None, [], lists=lists, time_zone=self.time_zone, origin=where,
                              hudi_candidates=self.hudi))
        self.pruning = self.pushed = self.post_scan = None
        self.hudi = None

    def _end_statement(self, out: list[Occurrence]) -> None:
        assert self.statement is not None
        sql = "\n".join(self.statement).strip()
        self.statement = None
        db = use_database(sql)
        if db is not None:
            self.database = db
            return
        if not sql or _EXPLAIN.match(sql):
            return
        out.append(Occurrence("hiveserver2", self.statement_id, sql=sql, database=self.database,
                              time_zone=self.time_zone, origin=f"{self.name}:{self.statement_line}"))

    def finish(self, out: list[Occurrence]) -> None:
        self._close()
        if self.post_scan is not None:
            self._end_scan(out)
        if self.statement is not None:
            self._end_statement(out)


#: finds the line forms of :mod:`hive_bridge.workload.logscan` in a stream of lines (its ``scan_lines``: objects with
#: ``source``, ``line``, ``last_line`` and ``text``); passed in by the caller, which sits above this package
LineScanner = Callable[[Iterable[str]], Iterator[Any]]
#: how many of a log's latest lines taken by the log readers are remembered, so that a line the scanner also
#: finds a filter in is counted once
_RECENT = 4096


def _no_scanner(lines: Iterable[str]) -> Iterator[Any]:
    for _ in lines:
        pass
    return iter(())


def file_occurrences(name: str, lines: Iterable[str], time_zone: str = "UTC", scanner: LineScanner | None = None,
                     count: LineCount | None = None, problems: list[Problem] | None = None) -> Iterator[Occurrence]:
    """Every filter occurrence of one text log (its lines streamed once); ``scanner`` also finds the ORC-era
    forms (``hive_bridge.workload.logscan.scan_lines``). With ``count``, the lines read into filters are counted in
    ``count.filters`` (the others, less those counted failed, in ``count.other`` at the end); ``problems``
    gets a statement or filter line too long to be read."""
    state = _State(name, time_zone, problems)
    mine: list[Occurrence] = []
    taken: dict[int, None] = {}
    filters = 0

    def tap() -> Iterator[str]:
        nonlocal filters
        for number, line in enumerate(lines, start=1):
            if state.feed(number, line.rstrip("\r\n"), mine):
                filters += 1
                taken[number] = None
                if len(taken) > _RECENT:
                    del taken[next(iter(taken))]
            yield line

    for found in (scanner or _no_scanner)(tap()):
        filters += sum(1 for n in range(found.line, getattr(found, "last_line", found.line) + 1) if n not in taken)
        yield from mine
        mine.clear()
        yield Occurrence(found.source, f"{name}:{found.line}", None, [], hiveql=found.text, time_zone=time_zone,
                         origin=f"{name}:{found.line}")
    state.finish(mine)
    yield from mine
    if count is not None:
        count.filters += filters
        count.other += count.lines - count.failed - count.filters


def filter_file_occurrences(name: str, lines: Iterable[tuple[int, str]], count: LineCount,
                            time_zone: str = "UTC") -> Iterator[Occurrence]:
    """The filters of a file of filters (:func:`hive_bridge.workload.inputs.filter_lines`: every line neither
    blank nor a comment is one), each an occurrence at its file and line."""
    for f in filter_lines(lines, count):
        where = f"{name}:{f.line}"
        yield Occurrence(FILTERS_SOURCE, where, None, [], hiveql=f.text, time_zone=time_zone, origin=where)


def text_occurrences(inputs: Sequence[str | tuple[str, str | None]], problems: list[Problem], time_zone: str = "UTC",
                     scanner: LineScanner | None = None, accounts: Accounts | None = None) -> Iterator[Occurrence]:
    """Every filter occurrence of the text inputs ('-': standard input), each a path or (path, kind): a text log
    (:data:`LOG`), a file of filters (:data:`FILTERS`), or None (told by its first lines). What cannot be read is
    a problem (with its file and line), the other inputs are read; each input's lines are counted in
    ``accounts``."""
    accounts = accounts if accounts is not None else Accounts()
    for item in inputs:
        path, kind = (item, None) if isinstance(item, str) else item
        name = "<stdin>" if path == "-" else path
        if kind is None and path != "-":
            kind, why = sniff(path)
            if kind is None or kind == EVENTS:
                why = why or "a Spark event log among text inputs: give it as a log"
                problems.append(Problem(name, 0, why))
                accounts.unreadable(name, LOG, why)
                continue
        count = accounts.of(name, kind or LOG)
        lines = text_lines(path, count, problems)
        if count.kind == FILTERS or kind == FILTERS:
            yield from filter_file_occurrences(name, lines, count, time_zone)
            continue
        # standard input's kind is told by its first lines, once the first line is asked for
        first = next(lines, None)
        if first is None:
            continue
        rest = itertools.chain([first], lines)
        if count.kind == FILTERS:
            yield from filter_file_occurrences(name, rest, count, time_zone)
        else:
            yield from file_occurrences(name, with_gaps(rest), time_zone, scanner, count, problems)
