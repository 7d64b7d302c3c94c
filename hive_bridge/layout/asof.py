"""Time travel: which earlier state of a table a query may read, by Hudi's rules.

An as-of time is given as Hudi's Spark reader takes ``as.of.instant`` (``HoodieSqlCommonUtils.formatQueryInstant``):
``yyyyMMddHHmmssSSS`` or ``yyyyMMddHHmmss`` (an instant time, compared as given), ``yyyy-MM-dd HH:mm:ss[.SSS]``
or ``yyyy-MM-dd`` (a wall-clock time in the table's timeline time zone, made an instant time with the missing
digits zero). The state read is the table's file slices as of it: the completed writes whose instant is at or
before it (:meth:`hive_bridge.layout.fsview.FileSystemView.latest_file_slices`).

A state that cannot be read exactly is an error naming the instant and the table, never the latest state:

- the time is in the future (after the clock, in the timeline's time zone);
- an instant given by its id (17 digits) is not on the active timeline, or is there but not completed;
- the time is at or after the first incomplete commit, delta commit, replace commit or clustering (Hudi's
  ``TimelineUtils.validateTimestampAsOf``: files of a write still going on cannot be told apart);
- the time is before the earliest commit the latest clean retained (``earliestCommitToRetain`` of the latest
  completed clean: the cleaner deleted files of that state), or, for a clean that keeps file versions rather
  than commits, before the first completed write of the active timeline;
- the time is before the first completed write of the table: for a time before the active timeline, the archived
  timeline is read (:mod:`hive_bridge.layout.archived`, only then) and the state is taken against the archived
  and active instants together (:func:`timeline_for`): the archived replace commits, rollbacks and cleans count
  as the active ones do; a damaged archive is an error naming its file;
- a clean deleted a file the state needs (checked file by file from the cleans' ``successDeleteFiles``, on top
  of Hudi's rule, which a clean keeping file versions does not bound).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.archived import with_archived
from hive_bridge.layout.fsview import parse_base_file_name, parse_log_file_name
from hive_bridge.layout.timeline import WRITE_ACTIONS, Instant, Timeline

__all__ = ["AsOf", "TimeTravelError", "check_not_cleaned", "merge_bound", "query_instant", "resolve_as_of",
           "timeline_for"]

_FORMATS = "'yyyyMMddHHmmssSSS', 'yyyyMMddHHmmss', 'yyyy-MM-dd HH:mm:ss[.SSS]' or 'yyyy-MM-dd'"
_DIGITS = re.compile(r"^\d{14}(\d{3})?$")
_DATE_TIME = {10: "%Y-%m-%d", 19: "%Y-%m-%d %H:%M:%S", 23: "%Y-%m-%d %H:%M:%S.%f"}


class TimeTravelError(HudiTableError):
    """A state of a table that cannot be read as asked (the message names the instant and the table)."""


@dataclass(frozen=True, slots=True)
class AsOf:
    """A checked as-of time: ``instant`` the instant time the state is taken at, ``given`` what the user wrote."""

    instant: str
    given: str

    @property
    def millis(self) -> str:
        """The same bound as a 17-digit instant time (a 14-digit time ``T`` admits instants ordered before
        ``T000``, as Hudi compares instant times as text: the millisecond before it)."""
        if len(self.instant) == 17:
            return self.instant
        before = datetime.strptime(self.instant, "%Y%m%d%H%M%S") - timedelta(milliseconds=1)
        return before.strftime("%Y%m%d%H%M%S") + f"{before.microsecond // 1000:03d}"

    def __str__(self) -> str:
        return self.instant if self.given == self.instant else f"{self.instant} ({self.given!r})"


def query_instant(value: str, where: str = "") -> str:
    """An as-of text as an instant time, by ``formatQueryInstant``'s rules (``where``: what names the value in
    an error, e.g. the option it came from)."""
    text = str(value).strip()
    label = f"{where}: " if where else ""
    if _DIGITS.match(text):
        try:
            datetime.strptime(text[:14], "%Y%m%d%H%M%S")
        except ValueError:
            raise TimeTravelError(f"{label}not an instant time: {value!r} (no such date or time)") from None
        return text
    fmt = _DATE_TIME.get(len(text))
    if fmt is not None:
        try:
            parsed = datetime.strptime(text, fmt)
        except ValueError:
            fmt = None
        else:
            return parsed.strftime("%Y%m%d%H%M%S") + f"{parsed.microsecond // 1000:03d}"
    raise TimeTravelError(f"{label}unsupported as-of time format: {value!r}; use {_FORMATS}")


def merge_bound(instant: str | None) -> str | None:
    """The 17-digit instant time a merge of a state as of ``instant`` (an :attr:`AsOf.instant`) reads log blocks
    up to; None (every completed block) for the latest state."""
    return None if instant is None else AsOf(instant, instant).millis


def _now_instant(timeline: Timeline) -> str:
    """The clock as an instant time in the timeline's time zone (``hoodie.table.timeline.timezone``: UTC, or the
    writer's local time, which may not be this machine's: then the later of local time and UTC)."""
    zone = (timeline.properties.raw.get("hoodie.table.timeline.timezone") or "LOCAL").upper()
    utc = datetime.now(UTC).replace(tzinfo=None)
    now = utc if zone == "UTC" else max(utc, datetime.now())
    return now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"


def _latest_clean(timeline: Timeline) -> Instant | None:
    cleans = [i for i in timeline.completed if i.action == "clean"]
    return cleans[-1] if cleans else None


def timeline_for(timeline: Timeline, instant: str) -> Timeline:
    """The timeline a state as of ``instant`` is taken against: the active one, or, for an instant before its
    first completed write, the archived and active instants together (the archive is read then, and only then)."""
    writes = timeline.completed_writes
    if timeline.is_merged_with_archive or (writes and instant >= writes[0].timestamp):
        return timeline
    return with_archived(timeline)


def resolve_as_of(timeline: Timeline, value: str | AsOf, table: str, *, where: str = "") -> AsOf:
    """``value`` checked against the table's timeline: the state as of it can be read exactly, else
    :class:`TimeTravelError` naming the instant and ``table`` (its location)."""
    if isinstance(value, AsOf):
        return value
    instant = query_instant(value, where or table)
    given = str(value).strip()
    shown = instant if given == instant else f"{given!r} (instant {instant})"

    def refuse(why: str) -> TimeTravelError:
        return TimeTravelError(f"{table}: cannot read the table as of {shown}: {why}")

    now = _now_instant(timeline)
    if instant[:17] > now:
        raise refuse(f"it is in the future (now is {now} in the timeline's time zone)")
    timeline = timeline_for(timeline, instant)
    exact = timeline.get(instant)
    if exact is not None and not exact.is_completed:
        raise refuse(f"the instant is not completed ({exact.action} {exact.state.value.lower()})")
    writes = timeline.completed_writes
    if not writes:
        raise refuse("the table has no completed commit")
    first = writes[0].timestamp
    if instant < first:
        if timeline.is_merged_with_archive and any(i.file_name.startswith("archived:") for i in writes):
            raise refuse(f"it is before the first completed commit of the table ({first}, on the archived "
                         "timeline)")
        raise refuse(f"it is before the first completed commit of the active timeline ({first}), and the archived "
                     "timeline holds no commit")
    if len(given) == 17 and given.isdigit() and exact is None:
        raise refuse("no such instant on the timeline (for a point in time between instants, write it as "
                     "'yyyy-MM-dd HH:mm:ss.SSS')")
    incomplete = [i for i in timeline.pending if i.action in WRITE_ACTIONS or i.action == "clustering"]
    if incomplete and instant >= incomplete[0].timestamp:
        first_pending = incomplete[0]
        raise refuse(f"it must be earlier than the first incomplete commit {first_pending.timestamp} "
                     f"({first_pending.action} {first_pending.state.value.lower()})")
    clean = _latest_clean(timeline)
    if clean is not None:
        retain = str(timeline.read_metadata(clean).get("earliestCommitToRetain") or "")
        if retain and instant < retain:
            raise refuse(f"cleaned: the clean {clean.timestamp} kept the commits from {retain} on and deleted "
                         "older files")
    return AsOf(instant, given)


def check_not_cleaned(timeline: Timeline, as_of: AsOf, table: str,
                      slices: Iterable[tuple[str, str, str | None]]) -> None:
    """Refuse a state some file of which a clean deleted: ``slices`` are the state's (partition path, file id,
    base instant or None for a log-only group). A deleted base or log file written at or before the as-of instant,
    of a file group not replaced then, whose slice as of then is older than it (or absent), was part of that
    state: the files listed now cannot give its rows."""
    timeline = timeline_for(timeline, as_of.instant)
    state = {(p, fid): base for p, fid, base in slices}
    replaced = timeline.replaced_file_groups(as_of.instant)
    ext = timeline.properties.base_file_extension
    for clean in (i for i in timeline.completed if i.action == "clean" and i.timestamp > as_of.instant):
        parts = timeline.read_metadata(clean).get("partitionMetadata") or {}
        if not isinstance(parts, dict):
            continue
        for partition, meta in parts.items():
            if not isinstance(meta, dict):
                continue
            p = str(partition).strip("/")
            for deleted in meta.get("successDeleteFiles") or ():
                name = str(deleted).rsplit("/", 1)[-1]
                log = parse_log_file_name(name)
                if log is not None:
                    fid, written = log[0], log[1]
                else:
                    base = parse_base_file_name(name, ext)
                    if base is None:
                        continue
                    fid, written = base[0], base[2]
                if written > as_of.instant or (p, fid) in replaced:
                    continue
                have = state.get((p, fid), "")
                if (have or "") < written:
                    raise TimeTravelError(
                        f"{timeline.instant_location(clean)}: cannot read {table} as of {as_of}: cleaned: the "
                        f"clean {clean.timestamp} deleted {p + '/' if p else ''}{name}, written at {written}, "
                        "which that state reads")
