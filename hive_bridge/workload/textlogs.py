"""Filters in text logs, as occurrences: HiveServer2 statements, Spark driver lines, and the forms
:mod:`hive_bridge.logscan` finds when its scanner is passed in (ORC readers, Hive's ORC pushdown, EXPLAIN's
``filterExpr:``, filter-per-line files).

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
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.hiveserver2 import use_database
from hive_bridge.workload.runner import Occurrence

_TIMESTAMP = re.compile(r"^\s*(?:\d{2,4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}|\d{2}:\d{2}:\d{2})")
_COMMAND = re.compile(r"(?P<kind>Compiling|Executing) command\(queryId=(?P<id>[^)]*)\):\s?(?P<sql>.*)$")
_PRUNING = re.compile(r"Pruning directories with:\s?(?P<f>.*)$")
_PUSHED = re.compile(r"Pushed Filters:\s?(?P<f>.*)$")
_POST_SCAN = re.compile(r"Post-Scan Filters:\s?(?P<f>.*)$")
_DRIVER_LINE = re.compile(r"Pruning directories with:|Pushed Filters:|Post-Scan Filters:")
_EXPLAIN = re.compile(r"^\s*EXPLAIN\b", re.I)
_PARQUET = re.compile(r"FilterCompat: Filtering using predicate:\s?(?P<p>.*)$")
_COLLAPSED = re.compile(r"FilterCompat: Predicate has been collapsed to:\s?(?P<p>.*)$")
_HUDI = re.compile(r"HoodieFileIndex: Total (?:file slices|files|base files)\s*:?\s*(?P<total>\d+);\s*candidate "
                   r"(?:file slices|files) after data skipping\s*:?\s*(?P<kept>\d+)")


def _driver_list(text: str, v1: bool) -> tuple[str, bool, str]:
    text = text.strip(" \t")
    if text.startswith("Set(") and text.endswith(")"):
        return "[" + text[4:-1] + "]", v1, ", "
    return "[" + text + "]", v1, ","


class _State:
    """What one text log has shown so far."""

    def __init__(self, name: str, time_zone: str) -> None:
        self.name = name
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
        self.last_parquet: Occurrence | None = None
        self.hudi: int | None = None  # Hudi's candidate count, for the scan whose filter lines follow

    def feed(self, number: int, line: str, out: list[Occurrence]) -> None:
        if self.continued is not None:  # a driver filter line whose literal held a newline goes on here
            if line.strip() and not _TIMESTAMP.match(line) and not _DRIVER_LINE.search(line):
                setattr(self, self.continued, getattr(self, self.continued) + "\n" + line)
                return
            self.continued = None
            if self.post_scan is not None:
                self._end_scan(out)
        if self.statement is not None:
            if _TIMESTAMP.match(line):
                self._end_statement(out)
            else:
                self.statement.append(line)
                return
        m = _COMMAND.search(line)
        if m:
            qid = m.group("id")
            if qid not in self.seen_ids:
                self.seen_ids.add(qid)
                self.statement, self.statement_id, self.statement_line = [m.group("sql")], qid, number
            return
        m = _PARQUET.search(line)
        if m:
            out.append(Occurrence("parquet-filtercompat", f"{self.name}:{number}", None, [],
                                  time_zone=self.time_zone, origin=f"{self.name}:{number}", parquet=m.group("p")))
            self.last_parquet = out[-1]
            return
        m = _COLLAPSED.search(line)
        if m:
            if self.last_parquet is not None:  # the collapsed form of the predicate just logged is preferred
                self.last_parquet.parquet = m.group("p")
                self.last_parquet = None
            return
        m = _HUDI.search(line)
        if m:
            self.hudi = int(m.group("kept"))
            return
        for pattern, attr in ((_PRUNING, "pruning"), (_PUSHED, "pushed"), (_POST_SCAN, "post_scan")):
            m = pattern.search(line)
            if m:
                setattr(self, attr, m.group("f"))
                self.continued = attr
                if attr == "post_scan":
                    self.post_scan_line = number
                return

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
        if self.post_scan is not None:
            self._end_scan(out)
        if self.statement is not None:
            self._end_statement(out)


def _lines(path: str) -> Iterator[str]:
    if path == "-":
        yield from sys.stdin
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        yield from fh


#: finds the line forms of :mod:`hive_bridge.logscan` in a stream of lines (its ``scan_lines``: objects with
#: ``source``, ``line`` and ``text``); passed in by the caller, which sits above this package
LineScanner = Callable[[Iterable[str]], Iterator[Any]]


def _no_scanner(lines: Iterable[str]) -> Iterator[Any]:
    for _ in lines:
        pass
    return iter(())


def file_occurrences(name: str, lines: Iterable[str], time_zone: str = "UTC",
                     scanner: LineScanner | None = None) -> Iterator[Occurrence]:
    """Every filter occurrence of one text log (its lines streamed once); ``scanner`` also finds the ORC-era
    forms (``hive_bridge.logscan.scan_lines``)."""
    state = _State(name, time_zone)
    mine: list[Occurrence] = []

    def tap() -> Iterator[str]:
        for number, line in enumerate(lines, start=1):
            state.feed(number, line.rstrip("\r\n"), mine)
            yield line

    for found in (scanner or _no_scanner)(tap()):
        yield from mine
        mine.clear()
        yield Occurrence(found.source, f"{name}:{found.line}", None, [], hiveql=found.text, time_zone=time_zone,
                         origin=f"{name}:{found.line}")
    state.finish(mine)
    yield from mine


def text_occurrences(paths: Sequence[str], problems: list[Problem], time_zone: str = "UTC",
                     scanner: LineScanner | None = None) -> Iterator[Occurrence]:
    """Every filter occurrence of the text logs ``paths`` ('-': standard input); an unreadable file is a
    problem and the others are read."""
    for path in paths:
        try:
            yield from file_occurrences("<stdin>" if path == "-" else path, _lines(path), time_zone, scanner)
        except OSError as exc:
            problems.append(Problem(path, 0, f"cannot read: {exc.strerror or exc}"))
