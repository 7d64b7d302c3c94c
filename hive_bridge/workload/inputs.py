"""The inputs of a replay: what each one is, its lines read with bounded memory, and every line accounted for.

An input is told by what it holds, not only by its name (``--filters FILE`` says it outright):

- a **folder**, or a file whose first line is a Spark event (``{"Event":"SparkListener...``) once decompressed:
  a Spark event log (:mod:`hive_bridge.workload.eventlog`);
- **binary** content (a NUL byte, or over a tenth of the first 64 KiB neither text nor UTF-8) once
  decompressed: not a log. It is reported by name and counts as an input that could not be read;
- a **text log**: one of its first :data:`HEAD_LINES` lines starts as a log line does (a timestamp, a log level)
  or holds a form only logs have (``Compiling command(queryId=``, ``Pushed Filters:``, ``Reading ORC rows``,
  ``ORC pushdown predicate:``, ``filterExpr:``, a ``leaf-0 = (`` line of an old SearchArgument, ...). Its
  filters are found by the log readers; a bare line in it is a filter only when it reads as one;
- otherwise a **file of filters**: every line that is neither blank nor a comment (``#`` or ``--``) is one filter,
  HiveQL or a SearchArgument in any printed form, replayed or reported as failed with its file, line and text.

A file is read whatever its codec (gzip, zstd, lz4, snappy, lzf: :mod:`hive_bridge.workload.codecs`, by its
first bytes or its name); only regular files are opened (a FIFO or a device is reported, never read); a line over
:data:`TEXT_MAX_LINE` bytes is skipped and reported with its file and line, and reading goes on.

Each input's lines are counted (:class:`LineCount`): the lines holding filters (replayed), the lines reported as
failures, the lines known not to be filters (blank lines, comments, a log's other lines, events without a scan);
they add up to the lines read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from hive_bridge.workload.accounting import EVENTS, FILTERS, LOG, LineCount
from hive_bridge.workload.codecs import LogReadError, LongLine, decompressed_chunks, lines_of
from hive_bridge.workload.eventlog import Problem
from sarg.detect import looks_like_sarg

__all__ = ["EVENTS", "FILTERS", "LOG", "FilterLine", "LineCount", "filter_lines", "is_binary", "kind_of_head",
           "kind_of_text", "sniff", "text_lines",
           "with_gaps"]
#: a text log's lines longer than this are skipped (reported with their file and line)
TEXT_MAX_LINE = 8 << 20
#: how many lines (at most :data:`HEAD_BYTES`) of a file are looked at to tell what it is
HEAD_LINES = 200
HEAD_BYTES = 1 << 20
_BINARY_PROBE = 64 << 10

_LOG_START = re.compile(
    r"^\s*(?:\d{2,4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}|\d{2}:\d{2}:\d{2}|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|"
    r"FATAL)\b|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2})"
)
_LOG_FORMS = re.compile(
    r"(?:Compiling|Executing) command\(queryId=|Pushed Filters:|Post-Scan Filters:|Pruning directories with:|"
    r"FilterCompat: |HoodieFileIndex: |Reading ORC rows from |ORC pushdown predicate:|filterExpr:|"
    r"hive\.io\.filter\.text|^\s*leaf-\d+\s*=\s*\(|^\s*expr\s*=\s|^\s*at [\w$.]+\(|^Caused by: |^\s*\{\s*\"")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufffd]")
_EVENT_START = re.compile(rb'^\s*\{\s*"Event"\s*:\s*"SparkListener')


def is_binary(head: bytes) -> bool:
    """Whether the first bytes of a (decompressed) stream are not text: a NUL byte, or over a tenth of them
    control characters or bytes that are not UTF-8."""
    probe = head[:_BINARY_PROBE]
    if not probe:
        return False
    if b"\x00" in probe:
        return True
    text = probe.decode("utf-8", "replace")
    if len(probe) == _BINARY_PROBE:  # a character cut at the probe's end is not a sign of anything
        text = text[:-1]
    return len(_CONTROL.findall(text)) * 10 > max(len(text), 1)


def kind_of_text(lines: Iterable[str]) -> str:
    """:data:`LOG` when one of ``lines`` (a file's first lines) reads as a log's line, else :data:`FILTERS`."""
    for line in lines:
        if _LOG_START.match(line) or _LOG_FORMS.search(line):
            return LOG
    return FILTERS


def _head(path: str) -> bytes:
    """Up to :data:`HEAD_BYTES` of a file, decompressed."""
    out = bytearray()
    for chunk in decompressed_chunks(path):
        out += chunk
        if len(out) >= HEAD_BYTES:
            break
    return bytes(out[:HEAD_BYTES])


def kind_of_head(head: bytes) -> str | None:
    """What a stream is by its first bytes (decompressed): :data:`EVENTS`, :data:`LOG`, :data:`FILTERS`, or None
    for binary content (not a log)."""
    if is_binary(head):
        return None
    first = next((line for line in head.split(b"\n") if line.strip()), b"")
    if _EVENT_START.match(first):
        return EVENTS
    lines = head.split(b"\n")
    if len(head) >= HEAD_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut at the head's end
    return kind_of_text(line.decode("utf-8", "replace") for line in lines[:HEAD_LINES])


def sniff(path: str, filters: bool = False) -> tuple[str | None, str | None]:
    """(kind, None) of an input path, or (None, why it cannot be read); ``filters``: the user said it is a file
    of filters (still refused when binary)."""
    if os.path.isdir(path):
        return (None, "a folder given as a file of filters") if filters else (EVENTS, None)
    try:
        head = _head(path)
    except LogReadError as exc:
        return None, str(exc).removeprefix(f"{path}: ")
    kind = kind_of_head(head)
    if kind is None:
        return None, "binary content (neither text nor a known compressed log): not a log, not read"
    return (FILTERS if filters else kind), None


def text_lines(path: str, count: LineCount, problems: list[Problem],
               max_line: int = TEXT_MAX_LINE) -> Iterator[tuple[int, str]]:
    """The lines of a text input ('-': standard input), numbered, decoded (UTF-8, undecodable bytes replaced),
    read with bounded memory. ``count.lines`` counts every line; a line over ``max_line`` bytes is not yielded
    but reported and counted as failed; an input that cannot be read (on) is reported with where it stopped.
    For standard input, whose kind is not known before, ``count.kind`` is set from its first lines."""
    name = count.source
    number = 0
    try:
        raw = lines_of(decompressed_chunks(path), max_line=max_line)
        if path == "-":
            raw = _classified(raw, count, problems)
        for number, line in enumerate(raw, start=1):
            count.lines += 1
            if isinstance(line, LongLine):
                count.failed += 1
                problems.append(Problem(name, number, f"a line of {line.length} bytes, over the limit of "
                                                      f"{max_line} bytes: skipped"))
                continue
            yield number, line.decode("utf-8", "replace").rstrip("\r")
    except LogReadError as exc:
        why = str(exc).removeprefix(f"{path}: ")
        count.unreadable = why
        problems.append(Problem(name, number + 1 if number else 0, why))


def _classified(raw: Iterator[bytes | LongLine], count: LineCount,
                problems: list[Problem]) -> Iterator[bytes | LongLine]:
    """Standard input's lines, its kind told from its first lines (buffered) first."""
    head: list[bytes | LongLine] = []
    size = 0
    for line in raw:
        head.append(line)
        size += line.length if isinstance(line, LongLine) else len(line) + 1
        if len(head) >= HEAD_LINES or size >= HEAD_BYTES:
            break
    text = b"\n".join(x for x in head if isinstance(x, bytes))
    kind = kind_of_head(text)
    if kind is None or kind == EVENTS:
        why = ("binary content (neither text nor a known compressed log): not a log, not read" if kind is None
               else "a Spark event log on standard input: give its file or folder instead, not read")
        count.unreadable = why
        problems.append(Problem(count.source, 0, why))
        return
    if count.kind != FILTERS:
        count.kind = kind
    yield from head
    yield from raw


@dataclass
class FilterLine:
    """One filter of a file of filters: its text (stripped), HiveQL or a SearchArgument, and where it is."""

    text: str
    kind: str  # "sarg" or "hiveql"
    line: int
    column: int


def filter_lines(lines: Iterable[tuple[int, str]], count: LineCount) -> Iterator[FilterLine]:
    """The filters of a file of filters: every line neither blank nor a comment (``#``, ``--``) is one, counted in
    ``count.filters``; the others in ``count.other``."""
    for number, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "--")):
            count.other += 1
            continue
        count.filters += 1
        kind = "sarg" if looks_like_sarg(stripped) else "hiveql"
        yield FilterLine(stripped, kind, number, line.find(stripped) + 1)


def with_gaps(lines: Iterable[tuple[int, str]]) -> Iterator[str]:
    """Numbered lines as a plain stream, a line not given (skipped: too long) standing as an empty one."""
    expected = 1
    for number, line in lines:
        while expected < number:
            yield ""
            expected += 1
        yield line
        expected += 1
