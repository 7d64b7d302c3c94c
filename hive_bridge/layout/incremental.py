"""Incremental queries: the records written by the commits in (begin, end], by Hudi's Spark reader's rules.

Options as Hudi's data source names them: ``hoodie.datasource.read.begin.instanttime`` (required; ``earliest``:
from the first commit, as Hudi 1.x's ``IncrementalQueryAnalyzer.START_COMMIT_EARLIEST``),
``hoodie.datasource.read.end.instanttime`` (default: the latest completed commit) and
``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` (:func:`default_fallback`: true on table versions
8 and 9, as Hudi 1.x's ``DataSourceReadOptions.INCREMENTAL_FALLBACK_TO_FULL_TABLE_SCAN`` defaults; false on
version 6, as the Hudi 0.x readers of those tables default).

The files read are the slices, as of ``end``, of the file groups the commits in (begin, end] wrote to (their
commit metadata's write statistics); groups replaced by ``end`` are gone. Copy-on-write: each such group's
newest base file written by then, which holds every record the range wrote to the group that was not rewritten
later in the range; merge-on-read: the base file and the log files, merged up to ``end``. Rows are then kept when
``_hoodie_commit_time`` is in (begin, end]. When ``begin`` is before the active timeline, the archived timeline is
read (then only: :mod:`hive_bridge.layout.archived`) and the archived commits in the range are read from their
archived metadata like the active ones (Hudi 1.x's ``IncrementalQueryAnalyzer``); with the fallback enabled, the
latest state is read whole with the same row filter instead (Hudi's full table scan when the start is archived).
``earliest`` on a table whose timeline was archived is such a begin too (its first commits are archived): never
only the active timeline's commits. When a file the range needs was cleaned, the query fails, or with the fallback
enabled takes the full scan.

Table versions 8 and 9 (Hudi 1.x, ``IncrementalQueryAnalyzer`` with ``RangeType.OPEN_CLOSED``, as Hudi's Spark
reader has taken it since 1.1): ``begin`` and ``end`` are **completion times** (the ``<requested>_<completed>``
of the instant files); the commits read are those whose completion time is in (begin, end]; the default end is
the latest completion time; the slices are the state as of the last of the writes completed by ``end``; rows are
kept when ``_hoodie_commit_time`` (a requested time) is one of those commits' (Hudi 1.x's ``In`` filter). A
timeline whose writes did not complete in the order they were requested (concurrent writers) is refused: the
state as of a completion time is then not a state the file-system view here can take.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.archived import with_archived
from hive_bridge.layout.timeline import WRITE_ACTIONS, Timeline

__all__ = ["EARLIEST", "IncrementalQueryError", "IncrementalRange", "default_fallback", "incremental_range",
           "touched_file_groups"]

BEGIN_OPTION = "hoodie.datasource.read.begin.instanttime"
END_OPTION = "hoodie.datasource.read.end.instanttime"
FALLBACK_OPTION = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"
EARLIEST = "earliest"


class IncrementalQueryError(HudiTableError):
    """An incremental query that cannot be answered as asked (names the instants and the table)."""


@dataclass(frozen=True)
class IncrementalRange:
    """A checked range: the commits in (begin, end], and whether the latest state is read whole instead."""

    begin: str
    end: str
    commits: tuple[str, ...]
    #: read the latest state whole, rows filtered by commit time (Hudi's fallback to a full table scan)
    full_scan: bool = False
    #: why the full scan (empty when not)
    why_full_scan: str = ""
    #: the instant time (requested) the slices are taken as of: ``end`` for version 6, the last write completed
    #: by ``end`` for versions 8+ (empty: ``end``)
    state: str = ""
    #: versions 8+: begin and end are completion times, rows selected by their commits' requested times
    by_completion: bool = False
    #: versions 8+, full scan: the first requested time of the active timeline (older rows are the archived
    #: commits', kept when after ``begin``)
    active_from: str = ""
    #: the range begins before the active timeline: its commits, slices and files are the archived and active
    #: timeline's together (:func:`~hive_bridge.layout.archived.with_archived`)
    archived: bool = False

    @property
    def state_instant(self) -> str:
        """The instant time the range's slices are taken (and merged) as of."""
        return self.state or self.end

    def row_filter(self) -> str:
        """The rows of the range, as Spark SQL."""
        if not self.by_completion:
            return f"`_hoodie_commit_time` > '{self.begin}' AND `_hoodie_commit_time` <= '{self.end}'"
        listed = f"`_hoodie_commit_time` IN ({', '.join(repr(c) for c in self.commits)})" if self.commits else ""
        if self.full_scan and self.active_from:
            older = (f"(`_hoodie_commit_time` > '{self.begin}' AND `_hoodie_commit_time` < '{self.active_from}')")
            return f"{older} OR {listed}" if listed else older
        return listed or "1 = 0"


def default_fallback(timeline: Timeline) -> bool:
    """Whether an incremental query whose range cannot be read falls back to a full table scan when the query
    does not say: Hudi 1.x's default (true) on table versions 8 and 9 (timeline layout 2), Hudi 0.x's (false)
    on version 6."""
    return timeline.properties.timeline_layout_version >= 2


def _instant_text(value: str, option: str, table: str) -> str:
    text = str(value).strip()
    if not text.isdigit() or len(text) < 8:
        raise IncrementalQueryError(f"{table}: {option}={value!r} is not an instant time (yyyyMMddHHmmss[SSS]"
                                    f"{', or earliest' if option == BEGIN_OPTION else ''})")
    return text


def incremental_range(timeline: Timeline, table: str, begin: str | None, end: str | None = None, *,
                      fallback: bool | None = None) -> IncrementalRange:
    """The commits of an incremental query, checked (see the module docstring); ``fallback`` None: the table
    version's :func:`default_fallback`."""
    if fallback is None:
        fallback = default_fallback(timeline)
    if begin is None or not str(begin).strip():
        raise IncrementalQueryError(f"{table}: an incremental query needs {BEGIN_OPTION}")
    if timeline.properties.timeline_layout_version >= 2:
        return _completion_range(timeline, table, begin, end, fallback=fallback)
    commits_all = [i.timestamp for i in timeline.completed_writes]
    if not commits_all:
        raise IncrementalQueryError(f"{table}: the table has no completed commit")
    start = "0" if str(begin).strip().lower() == EARLIEST else _instant_text(begin, BEGIN_OPTION, table)
    stop = commits_all[-1] if end is None or not str(end).strip() else _instant_text(end, END_OPTION, table)
    if start > stop:
        raise IncrementalQueryError(f"{table}: {BEGIN_OPTION}={start} is after {END_OPTION}={stop}")
    pending = [i for i in timeline.pending if i.action in WRITE_ACTIONS and start < i.timestamp <= stop]
    if pending and end is not None:
        first = pending[0]
        raise IncrementalQueryError(f"{table}: {END_OPTION}={stop} is at or after the incomplete "
                                    f"{first.action} {first.timestamp} ({first.state.value.lower()})")
    commits = tuple(c for c in commits_all if start < c <= stop)
    if start < commits_all[0] and (start != "0" or timeline.has_archive):
        if fallback:
            why = (f"{BEGIN_OPTION}={begin} is before the first commit of the active timeline ({commits_all[0]}): "
                   f"the start is archived, and {FALLBACK_OPTION}=true (Hudi's full table scan)")
            return IncrementalRange(start, stop, commits, True, why)
        merged = with_archived(timeline)
        if merged.completed_writes[0].timestamp == commits_all[0]:
            raise IncrementalQueryError(_no_archived_commit(table, begin, commits_all[0]))
        commits = tuple(i.timestamp for i in merged.completed_writes if start < i.timestamp <= stop)
        return IncrementalRange(start, stop, commits, archived=True)
    return IncrementalRange(start, stop, commits)


def _no_archived_commit(table: str, begin: str, first: str) -> str:
    """An archived begin (``earliest`` on an archived timeline too) whose archive yields no commit: the commits
    before the active timeline cannot be listed, so the answer would be the active ones' only."""
    hint = "" if begin == EARLIEST else f"use {BEGIN_OPTION}={EARLIEST} for every commit, or "
    return (f"{table}: {BEGIN_OPTION}={begin} is before the first commit of the active timeline ({first}) and the "
            f"archived timeline holds no commit: {hint}set {FALLBACK_OPTION}=true to read the latest state filtered "
            "by commit time")


def _completion_range(timeline: Timeline, table: str, begin: str, end: str | None, *,
                      fallback: bool) -> IncrementalRange:
    """Versions 8+: the commits whose completion time is in (begin, end] (see the module docstring)."""
    writes = list(timeline.completed_writes)
    if not writes:
        raise IncrementalQueryError(f"{table}: the table has no completed commit")
    done = {i.timestamp: i.completion_time or i.timestamp for i in writes}
    start = "0" if str(begin).strip().lower() == EARLIEST else _instant_text(begin, BEGIN_OPTION, table)
    stop = max(done.values()) if end is None or not str(end).strip() else _instant_text(end, END_OPTION, table)
    if start > stop:
        raise IncrementalQueryError(f"{table}: {BEGIN_OPTION}={start} is after {END_OPTION}={stop} (completion "
                                    "times)")
    pending = [i for i in timeline.pending if i.action in WRITE_ACTIONS and i.timestamp <= stop]
    if pending and end is not None:
        first = pending[0]
        raise IncrementalQueryError(f"{table}: {END_OPTION}={stop} is at or after the incomplete "
                                    f"{first.action} {first.timestamp} ({first.state.value.lower()}): it may "
                                    "complete within the range")
    by_then = [i.timestamp for i in writes if done[i.timestamp] <= stop]
    state = max(by_then) if by_then else ""
    late = [i for i in writes if i.timestamp <= state and done[i.timestamp] > stop]
    if late:
        raise IncrementalQueryError(
            f"{table}: {late[0].action} {late[0].timestamp} was requested before {state} but completed after "
            f"{END_OPTION}={stop} ({done[late[0].timestamp]}): the state as of a completion time of writers that "
            "overlapped is not emulated")
    commits = tuple(i.timestamp for i in writes if start < done[i.timestamp] <= stop)
    if (start < writes[0].timestamp and (start != "0" or timeline.has_archive)
            and not timeline.is_merged_with_archive):
        if not fallback:
            merged = with_archived(timeline)
            if merged.completed_writes[0].timestamp == writes[0].timestamp:
                raise IncrementalQueryError(_no_archived_commit(table, begin, writes[0].timestamp))
            return replace(_completion_range(merged, table, begin, end, fallback=False), archived=True)
        why = (f"{BEGIN_OPTION}={begin} is before the first commit of the active timeline ({writes[0].timestamp}, "
               f"completed {done[writes[0].timestamp]}): the start is archived, and "
               f"{FALLBACK_OPTION}=true (Hudi's full table scan)")
        return IncrementalRange(start, stop, commits, True, why, state, True, writes[0].timestamp)
    return IncrementalRange(start, stop, commits, state=state or stop, by_completion=True)


def touched_file_groups(timeline: Timeline, commits: tuple[str, ...]) -> set[tuple[str, str]]:
    """(partition path, file id) of the file groups the commits wrote to, from their write statistics."""
    by_ts = {i.timestamp: i for i in timeline.completed}
    out: set[tuple[str, str]] = set()
    for ts in commits:
        meta = timeline.read_metadata(by_ts[ts])
        stats = meta.get("partitionToWriteStats") or {}
        if not isinstance(stats, dict):
            raise IncrementalQueryError(f"{timeline.instant_location(by_ts[ts])}: partitionToWriteStats is not a map")
        for partition, writes in stats.items():
            for w in writes or ():
                if isinstance(w, dict) and w.get("fileId"):
                    out.add((str(partition).strip("/"), str(w["fileId"])))
    return out

