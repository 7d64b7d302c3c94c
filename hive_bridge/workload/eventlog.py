"""Spark event logs: every file scan of every SQL execution, with its filters, its location and what it read.

An input is a file (plain or compressed, ``.inprogress`` too), a rolled ``eventlog_v2_<app>`` folder (its
``events_<N>_<app>`` files in order of N), or a folder of many applications (a History Server's log folder).
Lines are streamed; only the events that matter are decoded as JSON (the event name is read from the line's
start first): ``SparkListenerEnvironmentUpdate`` (the session time zone), ``SparkListenerSQLExecutionStart``
and ``SparkListenerSQLAdaptiveExecutionUpdate`` (the plans), ``SparkListenerDriverAccumUpdates`` (what the
scans read) and ``SparkListenerSQLExecutionEnd`` (an execution's scans are complete: they are handed on).

A scan is a ``FileSourceScanExec`` node of ``sparkPlanInfo`` (its ``metadata`` holds the complete filter lists;
``simpleString`` is cut at 100 characters and never read), or a DataSource V2 ``BatchScan`` section of
``physicalPlanDescription``. AQE re-plans repeat a scan: one execution's scans are deduplicated by their text.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from hive_bridge.workload.accounting import EVENTS, Accounts
from hive_bridge.workload.codecs import (
    MAX_LINE,
    LogReadError,
    LongLine,
    codec_of,
    codec_of_bytes,
    decompressed_chunks,
    lines_of,
)

_EVENT = re.compile(rb'^\{\s*"Event"\s*:\s*"([^"]+)"')
_WANTED = {
    b"SparkListenerLogStart", b"SparkListenerEnvironmentUpdate",
    b"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
    b"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate",
    b"org.apache.spark.sql.execution.ui.SparkListenerDriverAccumUpdates",
    b"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
}
FILES_READ = "number of files read"
BYTES_READ = "size of files read"
_V2_SECTION = re.compile(r"^\(\d+\) (?P<kind>BatchScan|Scan) (?P<rest>.*)$")
_V2_KEYS = ("Output", "DataFilters", "Format", "Location", "PartitionFilters", "PushedFilters", "ReadSchema",
            "RuntimeFilters", "PushedAggregation", "PushedGroupBy")


@dataclass
class Problem:
    """Something in a log that could not be read: where and why (the run goes on)."""

    source: str
    line: int
    message: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.message}"


@dataclass
class Scan:
    """One scan of one SQL execution, as the event log describes it."""

    source: str  # the log file (of a rolled log: its first file)
    app: str
    execution_id: int
    line: int
    node: str  # "Scan parquet db.t", "BatchScan parquet file:/..."
    table_name: str | None
    location: str  # the first path of Location
    paths: list[str]
    partition_filters: str
    data_filters: str
    pushed_filters: str
    time_zone: str
    v2: bool = False
    #: not a file scan (``Scan hive db.t``, ``Scan ExistingRDD``): no location or filters in the log
    other: bool = False
    #: per plan instance of the scan: (accumulator of files read, accumulator of bytes read)
    accumulators: list[tuple[int | None, int | None]] = field(default_factory=list)
    spark_files: int | None = None
    spark_bytes: int | None = None
    #: the execution's description: a call site, or the statement or job description when one was set
    description: str = ""

    @property
    def query(self) -> str:
        return f"{os.path.basename(self.source)}#{self.execution_id}"


def location_paths(location: str) -> list[str]:
    """The complete paths of a printed file index (``InMemoryFileIndex(2 paths)[file:/a, file:/b]``); a last
    path cut short (``...``) is left out."""
    m = re.search(r"\[(.*)", location, re.S)
    body = m.group(1) if m else location
    if body.endswith("]"):
        body = body[:-1]
    paths = [p.strip() for p in body.split(", ") if p.strip()]
    if paths and (paths[-1].endswith("...") or not m or not location.rstrip().endswith("]")):
        paths = paths[:-1] if len(paths) > 1 or paths[-1].endswith("...") else paths
    return [p for p in paths if not p.endswith("...") and not p.startswith("...")]


def application_files(path: str) -> list[list[str]]:
    """The applications under ``path``: each a list of its event log files in order."""
    if os.path.isfile(path):
        return [[path]]
    if not os.path.isdir(path):
        raise LogReadError(f"{path}: no such file or folder")
    name = os.path.basename(os.path.normpath(path))
    if name.startswith("eventlog_v2_"):
        events = []
        for f in os.listdir(path):
            m = re.match(r"events_(\d+)_", f)
            if m:
                events.append((int(m.group(1)), os.path.join(path, f)))
        return [[p for _, p in sorted(events)]] if events else []
    apps: list[list[str]] = []
    for f in sorted(os.listdir(path)):
        if f.startswith((".", "_")) or f.endswith(".crc"):
            continue
        child = os.path.join(path, f)
        if os.path.isdir(child):
            apps.extend(application_files(child))
        elif _is_event_file(child):
            apps.append([child])
    return apps


_APP_NAME = re.compile(r"^(?:local-|application_|app-|spark-|driver-)?[\w.-]*\d{6,}")


def _is_event_file(path: str) -> bool:
    """In a folder of applications: a file named as a compressed event log of an application, or one whose
    first line is a Spark event, once decompressed where its first bytes say a codec (other files — data,
    notes — are not looked at further)."""
    if not os.path.isfile(path):  # a FIFO or a device is never opened
        return False
    if codec_of(path) is not None:
        return bool(_APP_NAME.match(os.path.basename(path)))
    try:
        with open(path, "rb") as fh:
            head = fh.read(32)
        if codec_of_bytes(head) is not None:
            head = next(decompressed_chunks(path), b"")[:32]
    except (OSError, LogReadError):
        return False
    return head.startswith(b'{"Event":"SparkListener')


#: scan nodes that read no table (a SELECT without FROM, a DataFrame made from an RDD)
_NOT_TABLES = frozenset({"Scan OneRowRelation", "Scan ExistingRDD", "Scan RDD"})


def _scan_nodes(node: dict[str, Any], out: list[dict[str, Any]], others: list[str] | None = None) -> None:
    """The file scans of a plan tree (``FileSourceScanExec``: its ``metadata`` has a ``Location``) into ``out``;
    with ``others``, the names of the other scan nodes (``Scan hive db.t`` of Spark's Hive support, ``Scan
    ExistingRDD``, ...: no filters of theirs are in the log's metadata)."""
    meta = node.get("metadata") or {}
    if isinstance(meta, dict) and "Location" in meta:
        out.append(node)
    elif others is not None:
        name = str(node.get("nodeName", ""))
        if name.startswith(("Scan ", "HiveTableScan")) and name.split("[", 1)[0].strip() not in _NOT_TABLES:
            others.append(name)
    for child in node.get("children") or ():
        if isinstance(child, dict):
            _scan_nodes(child, out, others)


def _table_name(node_name: str) -> str | None:
    m = re.match(r"(?:Scan|FileScan) \S+ ?(?P<name>\S*)", node_name)
    name = m.group("name") if m else ""
    return name or None


def v2_sections(plan: str, file_scans: bool = False) -> list[dict[str, str]]:
    """The ``BatchScan`` sections of a ``physicalPlanDescription`` (or EXPLAIN FORMATTED's text), with
    ``file_scans`` the ``Scan <format>`` ones too: key -> value (a value's continuation lines, as a literal
    with a newline prints, joined back)."""
    sections: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    last = ""
    for line in plan.split("\n"):
        m = _V2_SECTION.match(line)
        if m and (file_scans or m.group("kind") == "BatchScan"):
            current = {"node": m.group("kind") + " " + m.group("rest")}
            sections.append(current)
            last = ""
            continue
        if current is None:
            continue
        if re.match(r"^\(\d+\) ", line):
            current = None
            continue
        key, sep, value = line.partition(": ")
        if sep and key in _V2_KEYS:
            current[key] = value
            last = key
        elif last and line:
            current[last] += "\n" + line
        elif not line:
            last = ""
    return sections


class _App:
    """The state of one application while its events are read."""

    def __init__(self, files: list[str]) -> None:
        self.source = files[0]
        self.app = os.path.basename(os.path.dirname(files[0])) if len(files) > 1 or "eventlog_v2_" in files[0] \
            else os.path.basename(files[0])
        self.time_zone = "UTC"
        self.system_zone: str | None = None
        self.scans: dict[int, dict[tuple[str, ...], Scan]] = {}
        self.values: dict[int, int] = {}
        self.descriptions: dict[int, str] = {}
        self.zones: dict[int, str] = {}
        #: scans found so far (a plan's scans repeated by a re-plan are not new)
        self.found = 0

    def add_plan(self, ev: dict[str, Any], line: int) -> None:
        exec_id = ev.get("executionId")
        if not isinstance(exec_id, int):
            raise ValueError("a plan event without an executionId")
        scans = self.scans.setdefault(exec_id, {})
        if isinstance(ev.get("description"), str):
            self.descriptions[exec_id] = ev["description"]
        # Spark 3.4+ lists the SQL settings the session changed at run time (spark.conf.set)
        modified = ev.get("modifiedConfigs")
        zone = modified.get("spark.sql.session.timeZone") if isinstance(modified, dict) else None
        if isinstance(zone, str) and zone:
            self.zones[exec_id] = zone
        nodes: list[dict[str, Any]] = []
        others: list[str] = []
        info = ev.get("sparkPlanInfo")
        if isinstance(info, dict):
            _scan_nodes(info, nodes, others)
        for name in others:
            # not a file scan: counted (as a scan no table could be found for) and named, never planned
            key = (name, "", "", "", "")
            if key not in scans:
                self.found += 1
                scans[key] = Scan(self.source, self.app, exec_id, line, name, None, "", [], "", "", "",
                                  self.time_zone, other=True)
        for node in nodes:
            meta = node["metadata"]
            metrics = {m.get("name"): m.get("accumulatorId") for m in node.get("metrics") or () if isinstance(m, dict)}
            self._add(scans, exec_id, line, str(node.get("nodeName", "")), meta, False,
                      (metrics.get(FILES_READ), metrics.get(BYTES_READ)))
        plan = ev.get("physicalPlanDescription")
        if isinstance(plan, str) and "BatchScan " in plan:
            for sec in v2_sections(plan):
                self._add(scans, exec_id, line, sec["node"], sec, True, (None, None))

    def _add(self, scans: dict[tuple[str, ...], Scan], exec_id: int, line: int, node: str, meta: dict[str, Any],
             v2: bool, accs: tuple[Any, Any]) -> None:
        location = str(meta.get("Location", ""))
        pf, df, pushed = (str(meta.get(k, "[]")) for k in ("PartitionFilters", "DataFilters", "PushedFilters"))
        key = (node.split("[", 1)[0] if v2 else node, location, pf, df, pushed)
        scan = scans.get(key)
        if scan is None:
            paths = location_paths(location)
            if not paths and v2:
                m = re.match(r"BatchScan \S+ (\S+)", node)
                paths = [m.group(1)] if m else []
            self.found += 1
            scan = scans[key] = Scan(self.source, self.app, exec_id, line, node.split("[", 1)[0].strip(),
                                     None if v2 else _table_name(node), paths[0] if paths else "", paths, pf, df,
                                     pushed, self.zones.get(exec_id, self.time_zone), v2)
        files_acc = accs[0] if isinstance(accs[0], int) else None
        bytes_acc = accs[1] if isinstance(accs[1], int) else None
        if (files_acc, bytes_acc) != (None, None) and (files_acc, bytes_acc) not in scan.accumulators:
            scan.accumulators.append((files_acc, bytes_acc))

    def add_values(self, ev: dict[str, Any]) -> None:
        for pair in ev.get("accumUpdates") or ():
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and isinstance(pair[1], int):
                self.values[pair[0]] = pair[1]

    def finish(self, exec_id: int) -> list[Scan]:
        scans = list(self.scans.pop(exec_id, {}).values())
        description = self.descriptions.pop(exec_id, "")
        self.zones.pop(exec_id, None)
        for scan in scans:
            scan.description = description
            read = [(self.values.get(f) if f is not None else None, self.values.get(b) if b is not None else None)
                    for f, b in scan.accumulators]
            read = [r for r in read if r[0] is not None]
            if read:
                files, size = max(read, key=lambda r: (r[0] or 0, r[1] or 0))
                scan.spark_files, scan.spark_bytes = files, size
            for f, b in scan.accumulators:
                self.values.pop(f, None) if f is not None else None
                self.values.pop(b, None) if b is not None else None
        return scans


def read_application(files: list[str], problems: list[Problem], accounts: Accounts | None = None) -> Iterator[Scan]:
    """The scans of one application's event log files, as each SQL execution ends (the rest at the end). A
    last line cut short in a file still being written (``.inprogress``) is expected and passed over. With
    ``accounts``, each file's lines are counted: those whose plan brought new scans (filters), those reported as
    problems (failed), the others (events without a new scan, a cut last line passed over)."""
    app = _App(files)
    for path in files:
        count = (accounts or Accounts()).of(path, EVENTS)
        number = 0
        held: Problem | None = None  # a line's problem, held until the next line shows it was not the last
        try:
            for number, raw in enumerate(lines_of(decompressed_chunks(path)), start=1):
                count.lines += 1
                if held is not None:
                    problems.append(held)
                    count.failed += 1
                    held = None
                if isinstance(raw, LongLine):
                    problems.append(Problem(path, number, f"a line of {raw.length} bytes, over the limit of "
                                                          f"{MAX_LINE} bytes: skipped"))
                    count.failed += 1
                    continue
                found = app.found
                held = yield from _read_event(app, path, number, raw)
                if held is None:
                    if app.found > found:
                        count.filters += 1
                    else:
                        count.other += 1
        except LogReadError as exc:
            why = str(exc).removeprefix(f"{path}: ")
            count.unreadable = why
            problems.append(Problem(path, number + 1 if number else 0, why))
        if held is not None:
            if path.endswith(".inprogress"):
                count.other += 1
            else:
                held.message = "the last line is cut short: " + held.message
                problems.append(held)
                count.failed += 1
    for exec_id in list(app.scans):
        yield from app.finish(exec_id)


def _read_event(app: _App, path: str, number: int, raw: bytes) -> Generator[Scan, None, Problem | None]:
    """One line of an event log: its scans (when it ends an execution), or the problem it has."""
    m = _EVENT.match(raw)
    if m is None:
        if raw.strip():
            return Problem(path, number, "not a Spark event (JSON object) line: " + _excerpt(raw))
        return None
    name = m.group(1)
    if name not in _WANTED:
        return None
    try:
        ev = json.loads(raw)
    except ValueError as exc:
        return Problem(path, number, f"malformed JSON ({exc}): {_excerpt(raw)}")
    try:
        if name.endswith(b"SQLExecutionStart") or name.endswith(b"AdaptiveExecutionUpdate"):
            app.add_plan(ev, number)
        elif name.endswith(b"DriverAccumUpdates"):
            app.add_values(ev)
        elif name.endswith(b"SQLExecutionEnd"):
            exec_id = ev.get("executionId")
            if isinstance(exec_id, int):
                yield from app.finish(exec_id)
        elif name == b"SparkListenerEnvironmentUpdate":
            props = ev.get("Spark Properties") or {}
            system = ev.get("System Properties") or {}
            zone = props.get("spark.sql.session.timeZone") or system.get("user.timezone")
            if isinstance(zone, str) and zone:
                app.time_zone = zone
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        return Problem(path, number, f"an event not understood ({exc})")
    return None


def _excerpt(raw: bytes, n: int = 80) -> str:
    text = raw[:n].decode("utf-8", "replace")
    return repr(text + ("..." if len(raw) > n else ""))
