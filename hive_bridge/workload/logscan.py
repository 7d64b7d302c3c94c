"""Find the filters in real Hive and Spark logs, without being told which kind of log it is.

Recognised, line by line:
- Spark's ORC reader (logger ``org.apache.orc.impl.ReaderImpl`` at DEBUG), one line per file read:
  ``Reading ORC rows from file:/…/part-0.orc with {include: […], offset: 0, length: 556, sarg: <SARG>,
  schema: struct<…>, …}`` — the SearchArgument and the file schema it was typed with.
- Hive's ORC input format: ``ORC pushdown predicate: <SARG>``, including the old newline-separated form
  (``leaf-0 = (…)`` lines up to ``expr = …``) spanning several lines.
- EXPLAIN output and HiveServer2 operation logs: ``filterExpr: <HiveQL>`` and ``hive.io.filter.text=<HiveQL>``.
- Files with one filter per line: a line that is a SearchArgument in any printed form (``sarg.looks_like_sarg``,
  the rule every reader shares), or (a line that does not look like a log line) HiveQL filter text.
A scan logs one line per file, so filters repeat: they are deduplicated, counting occurrences.

A log line that is not a filter is never taken for one (:func:`bare_filter_line`): a bare line is HiveQL filter
text only when it reads like a comparison, and never when it is JSON, binary, a SQL statement or its
continuation (a HiveServer2 ``Compiling command(...)`` statement runs on over the following lines), a stack
trace or a log's status line (``OK``, ``Time taken``); an input whose first line is JSON or binary (an event
log, compressed bytes) has no bare filter lines at all.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import sarg
from hive_bridge.workload.accounting import FILTERS, LOG, Accounts
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.inputs import filter_lines, text_lines, with_gaps
from sarg.detect import looks_like_sarg

_READER_MARK = "Reading ORC rows from "
_PUSHDOWN = re.compile(r"ORC pushdown predicate:\s?(?P<sarg>.*)$")
# the text ends at its "(type: boolean)" (a line holding a printed list of EXPLAIN lines goes on after it)
_FILTER_EXPR = re.compile(r"filterExpr:\s*(?P<text>.+?)\s*(?:\(type: boolean\).*|\s*)$")
_FILTER_TEXT = re.compile(r"hive\.io\.filter\.text\s*[=:]\s*(?P<text>.+?)\s*$")
_LOG_PREFIX = re.compile(
    r"^\s*(?:\d{2,4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b)"
)
_STATEMENT = re.compile(r"(?:Compiling|Executing) command\(queryId=")
_NOT_FILTER_START = re.compile(
    r"^(?:select|from|where|with|set|use|insert|create|explain|drop|alter|show|describe|desc|load|analyze|grant|"
    r"join|left|right|full|inner|cross|group|order|having|limit|union|on|as|and|or|ok|failed|time taken|"
    r"query id|total jobs|launching|stage|caused by|at|warning|result|err|\.\.\.)\b",
    re.I,
)
_FILTER_HINT = re.compile(r"[=<>]|\b(?:is\s+(?:not\s+)?null\b|in\s*\(|between\b|r?like\s+')", re.I)
# in a file of filters only (no log line seen): a boolean column alone or tested, and the null / NaN tests
_NAME = r"(?:`[^`]+`|[A-Za-z_][\w$]*)"
_BOOLEAN_FORM = re.compile(rf"(?:(?:not\s+|!\s*))*{_NAME}(?:\.{_NAME})*(?:\s+is\s+(?:not\s+)?(?:true|false))?", re.I)
_TEST_FUNCTION = re.compile(r"\b(?:isnan|isnull|isnotnull)\s*\(", re.I)
_KEY_VALUE = re.compile(r"^[A-Za-z][\w .-]*:\s|(?<!<)=>")
_BINARY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]")
_OLD_ENTRY = re.compile(r"^\s*leaf-\d+\s*=\s*\(")
_OLD_EXPR = re.compile(r"^\s*expr\s*=")


@dataclass
class FoundFilter:
    """One filter found in the input: its text, the schema logged with it (if any), where it was first seen."""

    text: str
    kind: str  # "sarg" or "hiveql"
    source: str  # "spark-orc", "hive-orc", "explain", "jobconf", "line"
    line: int
    schema: str | None = None
    column: int = 1  # where the filter text starts in its (first) line, 1-based
    occurrences: int = 1
    lines: list[int] = field(default_factory=list)
    #: the last line the filter text spans (an old SearchArgument runs over several lines)
    last_line: int = 0
    #: the input it was found in ("<stdin>" for standard input; "" when not told)
    file: str = ""

    def __post_init__(self) -> None:
        self.last_line = max(self.last_line, self.line)

    @property
    def where(self) -> str:
        """``file:line`` (or ``line N`` when the input is not named)."""
        return f"{self.file}:{self.line}" if self.file else f"line {self.line}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.text)


def pushdown_predicate(line: str) -> str | None:
    """The SearchArgument of a Hive ``ORC pushdown predicate: <SARG>`` log line (the rest of that line), or None."""
    m = _PUSHDOWN.search(line)
    return m.group("sarg").rstrip("\r") if m else None


def split_reader_line(line: str) -> tuple[str | None, str, str | None] | None:
    """(file, SearchArgument text, struct schema) of a Spark/ORC ``Reading ORC rows from …`` record, or None
    when it is not one or carries no ``sarg:``."""
    i = line.find(_READER_MARK)
    if i < 0:
        return None
    rest = line[i + len(_READER_MARK):]
    with_at = rest.find(" with {")
    path = rest[:with_at] if with_at >= 0 else None
    m = re.compile(r"[{,] sarg: |\{sarg: ").search(rest, max(with_at, 0))
    if m is None:
        return None
    s = m.end()
    # The schema follows the SearchArgument; string literals may hold anything, so take the last match.
    k = rest.rfind(", schema: struct<")
    if k < s:
        end = rest.find(", ", s)
        return path, rest[s: end if end >= 0 else len(rest)].strip(), None
    schema_start = k + len(", schema: ")
    close = _struct_end(rest, schema_start)
    schema = rest[schema_start:close] if close > 0 else None
    sarg_text = rest[s:k]
    # Newer ORC versions print the SearchArgument's column names after it: "..., columns: [a, b]".
    m = re.search(r", columns: \[[^\]]*\]\Z", sarg_text)
    if m:
        sarg_text = sarg_text[:m.start()]
    return path, sarg_text, schema


def _struct_end(text: str, start: int) -> int:
    """The index just past the ``>`` that closes the ``struct<`` starting at ``start`` (-1 if unclosed)."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _col(line: str, text: str) -> int:
    at = line.find(text)
    return at + 1 if at >= 0 else 1


def bare_filter_line(line: str, in_log: bool = True) -> bool:
    """Whether a line with no log prefix and no known marker may be HiveQL filter text: it reads like a
    comparison and is not JSON, binary, a SQL statement's line, a stack trace or a status line. In a file of
    filters (``in_log`` False: no log line seen) a boolean column alone (``flag``, ``NOT flag``, ``flag IS NOT
    TRUE``) and ``isnan(x)`` / ``isnull(x)`` / ``isnotnull(x)`` are filters too."""
    stripped = line.strip()
    if not stripped or stripped[0] in "{[}]\"'|+-=<>*/\\:;," or _BINARY.search(stripped):
        return False
    if _NOT_FILTER_START.match(stripped) or _KEY_VALUE.search(stripped):
        return False
    if _FILTER_HINT.search(stripped) is not None:
        return True
    return not in_log and (_BOOLEAN_FORM.fullmatch(stripped) is not None
                           or _TEST_FUNCTION.search(stripped) is not None)


def _parses(text: str) -> bool:
    try:
        sarg.parse_hiveql(text)
    except sarg.SargSyntaxError:
        return False
    except sarg.SargError:
        return True
    return True


def scan_lines(lines: Iterable[str]) -> Iterator[FoundFilter]:
    """Every filter occurrence in the input, in order (not deduplicated)."""
    pending: list[str] | None = None
    pending_line = 0
    in_statement = False  # on the continuation lines of a HiveServer2 statement
    structured: bool | None = None  # the first line is JSON or binary: no bare filter lines in this input
    log = False  # a log line was seen: a bare line must also parse as a filter to be one
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if structured is None and line.strip():
            head = line.lstrip()
            structured = head.startswith("{") or _BINARY.search(head[:200]) is not None
        if pending is not None:  # inside an old newline-separated SearchArgument
            stripped = line.strip()
            if _OLD_ENTRY.match(stripped):
                pending.append(stripped)
                continue
            if _OLD_EXPR.match(stripped):
                pending.append(stripped)
                yield FoundFilter("\n".join(pending), "sarg", "hive-orc", pending_line, last_line=number)
                pending = None
                continue
            yield FoundFilter("\n".join(pending), "sarg", "hive-orc", pending_line,  # truncated: parse reports it
                              last_line=number - 1)
            pending = None
        reader = split_reader_line(line) if _READER_MARK in line else None
        if reader is not None:
            _, sarg_text, schema = reader
            if sarg_text:
                yield FoundFilter(sarg_text, "sarg", "spark-orc", number, schema, _col(line, sarg_text))
            continue
        m = _PUSHDOWN.search(line)
        if m:
            text = m.group("sarg").strip()
            if _OLD_ENTRY.match(text) and "expr =" not in text:
                pending, pending_line = [text], number
            elif text:
                yield FoundFilter(text, "sarg", "hive-orc", number, None, _col(line, text))
            continue
        m = _FILTER_EXPR.search(line)
        if m:
            yield FoundFilter(m.group("text"), "hiveql", "explain", number, None, m.start("text") + 1)
            continue
        m = _FILTER_TEXT.search(line)
        if m:
            yield FoundFilter(m.group("text"), "hiveql", "jobconf", number, None, m.start("text") + 1)
            continue
        stripped = line.strip()
        if _LOG_PREFIX.match(line):
            in_statement = _STATEMENT.search(line) is not None
            log = True
        if not stripped or stripped.startswith("#"):
            continue
        if _OLD_ENTRY.match(stripped) and "expr =" not in stripped and not stripped.rstrip().endswith(", "):
            pending, pending_line = [stripped], number
            continue
        if looks_like_sarg(stripped):
            yield FoundFilter(stripped, "sarg", "line", number, None, _col(line, stripped))
            continue
        if _LOG_PREFIX.match(line) or in_statement or structured or not bare_filter_line(stripped, in_log=log):
            continue
        if log and not _parses(stripped):
            continue
        yield FoundFilter(stripped, "hiveql", "line", number, None, _col(line, stripped))
    if pending is not None:
        yield FoundFilter("\n".join(pending), "sarg", "hive-orc", pending_line, last_line=pending_line + len(pending) - 1)


#: how many line numbers are listed per distinct filter (the count of occurrences is always complete)
MAX_LINES_LISTED = 50


def distinct(found: Iterable[FoundFilter]) -> list[FoundFilter]:
    """Filters deduplicated by text, in order of first appearance, with occurrence counts and (the first
    :data:`MAX_LINES_LISTED`) line numbers."""
    seen: dict[tuple[str, str], FoundFilter] = {}
    for f in found:
        first = seen.get(f.key)
        if first is None:
            f.lines = [f.line]
            seen[f.key] = f
        else:
            first.occurrences += 1
            if len(first.lines) < MAX_LINES_LISTED:
                first.lines.append(f.line)
            if first.schema is None:
                first.schema = f.schema
    return list(seen.values())


def distinct_filters(lines: Iterable[str]) -> list[FoundFilter]:
    """The filters of log lines (:func:`scan_lines`), deduplicated (:func:`distinct`)."""
    return distinct(scan_lines(lines))


def input_filters(inputs: Sequence[tuple[str, str | None]], problems: list[Problem],
                  accounts: Accounts) -> Iterator[FoundFilter]:
    """Every filter of the inputs, each ``(path, kind)`` as :func:`hive_bridge.workload.sources.split_inputs`
    gives them ('-': standard input, kind None: told by its first lines): in a file of filters every line that
    is not blank or a comment, in a log what :func:`scan_lines` finds; each named by its input and line. Every
    line is counted in ``accounts``; what cannot be read is appended to ``problems`` and the next input read."""
    for path, kind in inputs:
        name = "<stdin>" if path == "-" else path
        count = accounts.of(name, kind or LOG)
        lines = text_lines(path, count, problems)
        first = next(lines, None)  # standard input's kind is told when its first line is asked for
        if first is None:
            continue
        rest = itertools.chain([first], lines)
        if count.kind == FILTERS:
            for f in filter_lines(rest, count):
                yield FoundFilter(f.text, f.kind, "filters", f.line, column=f.column, file=name)
            continue
        filters = 0
        for found in scan_lines(with_gaps(rest)):
            found.file = name
            filters += found.last_line - found.line + 1
            yield found
        count.filters += filters
        count.other += count.lines - count.failed - count.filters


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
