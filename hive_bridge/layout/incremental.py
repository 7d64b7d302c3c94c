"""Incremental queries: the records written by the commits in (begin, end], by Hudi's Spark reader's rules.

Options as Hudi's data source names them: ``hoodie.datasource.read.begin.instanttime`` (required; ``earliest``:
from the first commit, as Hudi 1.x's ``IncrementalQueryAnalyzer.START_COMMIT_EARLIEST``),
``hoodie.datasource.read.end.instanttime`` (default: the latest completed commit) and
``hoodie.datasource.read.incr.fallback.fulltablescan.enable`` (default false, as Hudi's relations for table
versions below 8 take it).

The files read are the slices, as of ``end``, of the file groups the commits in (begin, end] wrote to (their
commit metadata's write statistics); groups replaced by ``end`` are gone. Copy-on-write: each such group's
newest base file written by then, which holds every record the range wrote to the group that was not rewritten
later in the range; merge-on-read: the base file and the log files, merged up to ``end``. Rows are then kept when
``_hoodie_commit_time`` is in (begin, end]. When ``begin`` is before the active timeline (archived) or a file the
range needs was cleaned, the query fails, or with the fallback enabled reads the latest state whole with the same
row filter (Hudi's full table scan).

Table version 8+ is refused: Hudi 1.x ranges incremental queries over completion times, which is not emulated.
"""

from __future__ import annotations

from dataclasses import dataclass

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.timeline import Timeline

__all__ = ["EARLIEST", "IncrementalQueryError", "IncrementalRange", "incremental_range", "touched_file_groups"]

BEGIN_OPTION = "hoodie.datasource.read.begin.instanttime"
END_OPTION = "hoodie.datasource.read.end.instanttime"
FALLBACK_OPTION = "hoodie.datasource.read.incr.fallback.fulltablescan.enable"
EARLIEST = "earliest"
_COMMIT_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})


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

    def row_filter(self) -> str:
        """The rows of the range, as Spark SQL."""
        return f"`_hoodie_commit_time` > '{self.begin}' AND `_hoodie_commit_time` <= '{self.end}'"


def _instant_text(value: str, option: str, table: str) -> str:
    text = str(value).strip()
    if not text.isdigit() or len(text) < 8:
        raise IncrementalQueryError(f"{table}: {option}={value!r} is not an instant time (yyyyMMddHHmmss[SSS]"
                                    f"{', or earliest' if option == BEGIN_OPTION else ''})")
    return text


def incremental_range(timeline: Timeline, table: str, begin: str | None, end: str | None = None, *,
                      fallback: bool = False) -> IncrementalRange:
    """The commits of an incremental query, checked (see the module docstring)."""
    if timeline.properties.timeline_layout_version >= 2:
        raise IncrementalQueryError(f"{table}: incremental query on a table of version {timeline.properties.version}: "
                                    "Hudi 1.x ranges it over completion times, which is not emulated")
    if begin is None or not str(begin).strip():
        raise IncrementalQueryError(f"{table}: an incremental query needs {BEGIN_OPTION}")
    commits_all = [i.timestamp for i in timeline.completed if i.action in _COMMIT_ACTIONS]
    if not commits_all:
        raise IncrementalQueryError(f"{table}: the table has no completed commit")
    start = "0" if str(begin).strip().lower() == EARLIEST else _instant_text(begin, BEGIN_OPTION, table)
    stop = commits_all[-1] if end is None or not str(end).strip() else _instant_text(end, END_OPTION, table)
    if start > stop:
        raise IncrementalQueryError(f"{table}: {BEGIN_OPTION}={start} is after {END_OPTION}={stop}")
    pending = [i for i in timeline.pending if i.action in _COMMIT_ACTIONS and start < i.timestamp <= stop]
    if pending and end is not None:
        first = pending[0]
        raise IncrementalQueryError(f"{table}: {END_OPTION}={stop} is at or after the incomplete "
                                    f"{first.action} {first.timestamp} ({first.state.value.lower()})")
    commits = tuple(c for c in commits_all if start < c <= stop)
    if start != "0" and start < commits_all[0]:
        why = (f"{BEGIN_OPTION}={start} is before the first commit of the active timeline ({commits_all[0]}): "
               "the archived commits are not read")
        if not fallback:
            raise IncrementalQueryError(f"{table}: {why}; set {FALLBACK_OPTION}=true to read the latest state "
                                        "filtered by commit time instead")
        return IncrementalRange(start, stop, commits, True, why)
    return IncrementalRange(start, stop, commits)


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

