"""Hive's incremental pulls of a Hudi table: the JobConf keys Hudi's input format reads, read the same way.

A Hive session pulls what changed since a commit by setting, per table (Hudi's ``HoodieHiveUtils``):

- ``hoodie.<table>.consume.mode=INCREMENTAL`` (case-insensitive; anything else, ``SNAPSHOT`` by default, is a
  snapshot query);
- ``hoodie.<table>.consume.start.timestamp``: the commit time after which to pull;
- ``hoodie.<table>.consume.max.commits``: how many commits after it (default 1; ``-1``: all of them);
- ``hoodie.<table>.ro.stop.at.compaction`` (default true): the timeline ends before the first pending
  compaction (``HoodieInputFormatUtils.filterInstantsTimeline``);
- table versions 8 and 9 (Hudi 1.x) alike: the input format still compares the start with the instants'
  requested times (``BaseHoodieTimeline.findInstantsAfter`` takes ``requestedTime``), unlike the Spark reader,
  which ranges over completion times (:mod:`hive_bridge.layout.incremental`);
- ``hoodie.<table>.consume.commit`` (a snapshot query): the table as of that commit (time travel,
  :mod:`hive_bridge.layout.asof`; an instant that cannot be read is an error naming it);
- ``<table>`` is the Hudi table's own name (``hoodie.table.name``), ``<database>.<table>`` when
  ``hoodie.incremental.use.database=true`` (``hoodie.database.name``).

The commits pulled are the first ``max.commits`` completed commits, delta commits and replace commits after the
start (``HoodieTimeline.findInstantsAfter``); the files listed are, per file group, the newest base file one of
them wrote, the groups replaced by then left out (``getLatestBaseFilesInRange``), under the job's input folders.
Hive then reads every row of those files: the query itself filters ``_hoodie_commit_time`` (Hudi's documentation
tells users to add ``where `_hoodie_commit_time` > '<start>'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hive_bridge.errors import HiveBridgeError
from hive_bridge.layout.timeline import WRITE_ACTIONS, Timeline
from hive_bridge.table.table import HudiTable

__all__ = ["IncrementalPull", "consume_commit", "incremental_pull", "pulled_instants"]

CONSUME_MODE = "hoodie.{}.consume.mode"
CONSUME_START = "hoodie.{}.consume.start.timestamp"
CONSUME_MAX_COMMITS = "hoodie.{}.consume.max.commits"
CONSUME_COMMIT = "hoodie.{}.consume.commit"
STOP_AT_COMPACTION = "hoodie.{}.ro.stop.at.compaction"
USE_DATABASE = "hoodie.incremental.use.database"
INCREMENTAL = "INCREMENTAL"
DEFAULT_MAX_COMMITS = 1
MAX_COMMITS_ALL = -1


class IncrementalError(HiveBridgeError):
    """A JobConf's incremental pull that cannot be done as asked (names the key and its value)."""


@dataclass(frozen=True)
class IncrementalPull:
    """One table's incremental pull as a JobConf asks it."""

    #: the table's name in the keys
    name: str
    start: str
    #: None: every commit after the start
    max_commits: int | None
    stop_at_compaction: bool


def _hadoop_bool(value: str | None, default: bool) -> bool:
    """Hadoop's ``Configuration.getBoolean``: "true" / "false" (any case), anything else the default."""
    if value is None:
        return default
    v = value.strip().lower()
    return True if v == "true" else False if v == "false" else default


def _key_name(job_conf: Mapping[str, str], table: HudiTable) -> str:
    name = table.properties.name
    if _hadoop_bool(job_conf.get(USE_DATABASE), False):
        name = f"{table.properties.raw.get('hoodie.database.name', '')}.{name}"
    return name


def consume_commit(job_conf: Mapping[str, str], table: HudiTable) -> tuple[str, str] | None:
    """``hoodie.<table>.consume.commit`` of a snapshot query (``HoodieHiveUtils.getMaxCommit``: the commit a
    snapshot query reads the table as of): (the key, its value), None when unset."""
    key = CONSUME_COMMIT.format(_key_name(job_conf, table))
    value = job_conf.get(key)
    return None if value is None or not value.strip() else (key, value.strip())


def incremental_pull(job_conf: Mapping[str, str], table: HudiTable) -> IncrementalPull | None:
    """The incremental pull the JobConf asks of ``table``, None for a snapshot query."""
    name = _key_name(job_conf, table)
    mode = job_conf.get(CONSUME_MODE.format(name))
    if mode is None or mode.strip().upper() != INCREMENTAL:
        return None
    start_key = CONSUME_START.format(name)
    start = job_conf.get(start_key)
    if start is None or not start.strip():
        raise IncrementalError(f"{table.base_path}: {CONSUME_MODE.format(name)}={mode} but {start_key} is not set: "
                               "an incremental pull needs the commit time to pull after")
    start = start.strip()
    if not start.isdigit():
        raise IncrementalError(f"{table.base_path}: {start_key}={start!r} is not a commit time (yyyyMMddHHmmss[SSS])")
    max_key = CONSUME_MAX_COMMITS.format(name)
    raw = job_conf.get(max_key)
    max_commits: int | None = DEFAULT_MAX_COMMITS
    if raw is not None and raw.strip():
        try:
            max_commits = int(raw.strip())
        except ValueError:
            raise IncrementalError(f"{table.base_path}: {max_key}={raw!r} is not a number of commits (-1: all)") \
                from None
        if max_commits == MAX_COMMITS_ALL:
            max_commits = None
        elif max_commits < 0:
            raise IncrementalError(f"{table.base_path}: {max_key}={raw!r}: a number of commits is 0 or more "
                                   "(-1: all)")
    stop = _hadoop_bool(job_conf.get(STOP_AT_COMPACTION.format(name)), True)
    return IncrementalPull(name, start, max_commits, stop)


def pulled_instants(timeline: Timeline, pull: IncrementalPull) -> list[str]:
    """The completed commits an incremental pull reads, in order (``getFilteredCommitsTimeline`` then
    ``findInstantsAfter(start, maxCommits)``)."""
    instants = timeline.instants
    if pull.stop_at_compaction:
        pending = [i.timestamp for i in timeline.pending if i.action == "compaction"]
        if pending:
            instants = tuple(i for i in instants if i.timestamp < pending[0])
    commits = [i.timestamp for i in instants if i.is_completed and i.action in WRITE_ACTIONS
               and i.timestamp > pull.start]
    return commits if pull.max_commits is None else commits[:pull.max_commits]
