"""The active timeline: instant files of table versions 6 (`.hoodie/`) and 8/9 (`.hoodie/timeline/`)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.properties import TableProperties
from hive_bridge.storage.core import StorageError


class State(StrEnum):
    REQUESTED = "REQUESTED"
    INFLIGHT = "INFLIGHT"
    COMPLETED = "COMPLETED"


_STATE_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}

#: actions whose completed instants add data files to the table
WRITE_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})
KNOWN_ACTIONS = frozenset(
    {
        "commit", "deltacommit", "replacecommit", "clean", "rollback", "savepoint", "restore",
        "compaction", "logcompaction", "clustering", "indexing", "schemacommit",
    }
)

_COMPLETED_V2 = re.compile(r"^(\d+)_(\d+)\.([a-z]+)$")
_PLAIN = re.compile(r"^(\d+)\.([a-z]+)(?:\.(requested|inflight))?$")
_AVRO_MAGIC = b"Obj\x01"


@dataclass(frozen=True, slots=True, order=True)
class Instant:
    """One instant in its latest state. `completion_time` is known for completed instants of layout 2 only."""

    timestamp: str
    action: str
    state: State
    completion_time: str | None = None
    file_name: str = ""

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED


def parse_instant_file_name(name: str, layout: int) -> Instant | None:
    """The instant a timeline file stands for, or None for files that are not instants."""
    if layout >= 2:
        m = _COMPLETED_V2.match(name)
        if m is not None:
            ts, completion, action = m.groups()
            if action not in KNOWN_ACTIONS:
                return None
            return Instant(ts, action, State.COMPLETED, completion, name)
    m = _PLAIN.match(name)
    if m is None:
        return None
    ts, action, suffix = m.groups()
    if action == "inflight" and suffix is None:
        return Instant(ts, "commit", State.INFLIGHT, None, name)
    if action not in KNOWN_ACTIONS:
        return None
    if suffix == "requested":
        return Instant(ts, action, State.REQUESTED, None, name)
    if suffix == "inflight":
        return Instant(ts, action, State.INFLIGHT, None, name)
    return Instant(ts, action, State.COMPLETED, None, name)


def normalize_timestamp(value: str) -> str:
    """An as-of time as a 17-digit instant time: accepts 17 digits, 14 digits (seconds) or ISO-like text."""
    digits = "".join(ch for ch in str(value) if ch.isdigit())
    if len(digits) == 17:
        return digits
    if len(digits) == 14:
        return digits + "999"
    if 14 < len(digits) < 17:
        return digits.ljust(17, "9")
    if len(digits) > 17 and len(digits) <= 20:  # fractional seconds beyond millis
        return digits[:17]
    raise HudiTableError(f"not an instant time: {value!r} (expected yyyyMMddHHmmss[SSS])")


class Timeline:
    """Instants of the active timeline, one per timestamp in its most advanced state."""

    def __init__(self, properties: TableProperties, instants: Iterable[Instant]) -> None:
        self.properties = properties
        self.directory = properties.timeline_dir
        #: the timeline folder's location (a local path, or a URI on object storage)
        self.location = properties.timeline_location
        self.instants: tuple[Instant, ...] = tuple(sorted(instants, key=lambda i: i.timestamp))
        self._metadata_cache: dict[str, dict[str, Any]] = {}
        #: archived instants' pseudo file names -> what names them in messages (see `with_archived`)
        self._archived_where: dict[str, str] = {}
        self._with_archived: Timeline | None = None

    @classmethod
    def load(cls, properties: TableProperties) -> Timeline:
        directory = properties.timeline_location
        layout = properties.timeline_layout_version
        try:
            entries = properties.store.file_names(directory)
        except FileNotFoundError:
            if layout >= 2:
                # a v8 table without any commit may not have created the folder yet
                entries = []
            else:
                raise HudiTableError(f"{directory}: timeline folder is missing") from None
        except OSError as exc:
            raise HudiTableError(f"{directory}: cannot list the timeline: {exc.strerror or exc}") from None
        best: dict[str, Instant] = {}
        for name in entries:
            instant = parse_instant_file_name(name, layout)
            if instant is None:
                continue
            prev = best.get(instant.timestamp)
            if prev is None or _STATE_RANK[instant.state] > _STATE_RANK[prev.state]:
                best[instant.timestamp] = instant
        return cls(properties, best.values())

    @cached_property
    def has_archive(self) -> bool:
        """Whether instants were archived: the archived timeline's folder holds a file (``history/`` in the
        timeline folder on layout 2, ``.hoodie/archived/`` before). Its instants are not read here."""
        raw = self.properties.raw
        if self.properties.timeline_layout_version >= 2:
            folder = raw.get("hoodie.timeline.history.path") or "history"
        else:
            folder = raw.get("hoodie.archivelog.folder") or "archived"
        return self.properties.store.has_files(self.properties.store.join(self.location, folder))

    # ----------------------------------------------------------------- views
    @cached_property
    def completed(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.state is State.COMPLETED)

    @cached_property
    def inflight(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.state is State.INFLIGHT)

    @cached_property
    def requested(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.state is State.REQUESTED)

    @cached_property
    def pending(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.state is not State.COMPLETED)

    @cached_property
    def completed_writes(self) -> tuple[Instant, ...]:
        """Completed commit / deltacommit / replacecommit instants (compaction and clustering complete as these)."""
        return tuple(i for i in self.completed if i.action in WRITE_ACTIONS)

    def completed_writes_as_of(self, as_of: str | None) -> tuple[Instant, ...]:
        if as_of is None:
            return self.completed_writes
        return tuple(i for i in self.completed_writes if i.timestamp <= as_of)

    @property
    def latest_completed_write(self) -> Instant | None:
        writes = self.completed_writes
        return writes[-1] if writes else None

    def get(self, timestamp: str) -> Instant | None:
        for instant in self.instants:
            if instant.timestamp == timestamp:
                return instant
        return None

    @property
    def is_merged_with_archive(self) -> bool:
        """Whether this timeline holds the archived instants too (made by `with_archived`)."""
        return bool(self._archived_where) or self._with_archived is self

    @property
    def merged_archive(self) -> Timeline | None:
        """The archived and active instants as one timeline, once :func:`hive_bridge.layout.archived.with_archived`
        has read the archive (None before: a request inside the active timeline never reads it)."""
        return self._with_archived

    def merge_archived(self, instants: Iterable[Instant], metadata: Mapping[str, dict[str, Any]],
                       location: str) -> Timeline:
        """This timeline with the archived ``instants`` (``metadata``: the completed ones' by instant time, read
        from the archive at ``location``) added, kept as :attr:`merged_archive`. An archived instant still on the
        active timeline is taken from the active one."""
        active = {i.timestamp for i in self.instants}
        merged = Timeline(self.properties, [
            *(Instant(i.timestamp, i.action, i.state, i.completion_time, f"archived:{i.timestamp}.{i.action}")
              for i in instants if i.timestamp not in active),
            *self.instants])
        for instant in merged.instants:
            if instant.file_name.startswith("archived:"):
                merged._archived_where[instant.file_name] = f"{location} (archived {instant.action} {instant.timestamp})"
                if instant.timestamp in metadata:
                    merged._metadata_cache[instant.file_name] = metadata[instant.timestamp]
        merged._metadata_cache.update(self._metadata_cache)
        merged._with_archived = merged
        self._with_archived = merged
        return merged

    # -------------------------------------------------------------- metadata
    def instant_path(self, instant: Instant) -> Path:
        """The instant file of a local table (see `instant_location`)."""
        return self.directory / instant.file_name

    def instant_location(self, instant: Instant) -> str:
        """The instant file's location (a local path, or a URI on object storage)."""
        archived = self._archived_where.get(instant.file_name)
        if archived is not None:
            return archived
        return f"{self.location}/{instant.file_name}"

    def read_metadata(self, instant: Instant) -> dict[str, Any]:
        """The instant file's content as a dict: JSON (layout 1 commits) or Avro (layout 2, rollbacks, cleans)."""
        cached = self._metadata_cache.get(instant.file_name)
        if cached is not None:
            return cached
        if instant.file_name in self._archived_where:
            return {}       # an archived instant in a state that keeps no metadata
        path = self.instant_location(instant)
        try:
            data = self.properties.store.read_bytes(path)
        except OSError as exc:
            raise HudiTableError(f"{path}: unreadable commit file: {exc.strerror or exc}") from None
        result = decode_instant_bytes(data, path)
        self._metadata_cache[instant.file_name] = result
        return result

    @cached_property
    def rolled_back_timestamps(self) -> frozenset[str]:
        """Instants undone by completed rollbacks (their files must never be returned)."""
        out: set[str] = set()
        for instant in self.completed:
            if instant.action not in ("rollback", "restore"):
                continue
            meta = self.read_metadata(instant)
            rollbacks = [meta]
            if instant.action == "restore":  # a restore is a list of rollbacks per undone instant
                for nested in (meta.get("hoodieRestoreMetadata") or {}).values():
                    rollbacks += [m for m in nested or () if isinstance(m, dict)]
            for m in rollbacks:
                for ts in m.get("commitsRollback") or ():
                    if isinstance(ts, str):
                        out.add(ts)
                for key in ("instantsRollback", "instantsToRollback"):
                    for item in m.get(key) or ():
                        if isinstance(item, dict) and isinstance(item.get("commitTime"), str):
                            out.add(item["commitTime"])
        return frozenset(out)

    def replaced_file_groups(self, as_of: str | None = None) -> frozenset[tuple[str, str]]:
        """(partition path, file id) of file groups replaced by completed replacecommits up to `as_of`."""
        out: set[tuple[str, str]] = set()
        for instant in self.completed_writes_as_of(as_of):
            if instant.action != "replacecommit":
                continue
            meta = self.read_metadata(instant)
            replaced = meta.get("partitionToReplaceFileIds") or {}
            if not isinstance(replaced, dict):
                raise HudiTableError(
                    f"{self.instant_location(instant)}: damaged replacecommit: partitionToReplaceFileIds is not a map"
                )
            for partition, file_ids in replaced.items():
                for file_id in file_ids or ():
                    out.add((str(partition), str(file_id)))
        return frozenset(out)

    def latest_schema_json(self) -> str | None:
        """The Avro schema recorded in the latest completed write's extraMetadata, if any."""
        for instant in reversed(self.completed_writes):
            try:
                meta = self.read_metadata(instant)
            except (HudiTableError, StorageError):
                continue
            extra = meta.get("extraMetadata") or {}
            schema = extra.get("schema") if isinstance(extra, dict) else None
            if isinstance(schema, str) and schema.strip():
                return schema
        return None


def decode_instant_bytes(data: bytes, path: Path | str) -> dict[str, Any]:
    if not data.strip():
        return {}
    if data[:4] == _AVRO_MAGIC:
        import fastavro

        try:
            records = list(fastavro.reader(io.BytesIO(data)))
        except Exception as exc:  # fastavro raises many types for damaged input
            raise HudiTableError(f"{path}: unreadable commit file: damaged Avro ({exc})") from None
        if not records:
            return {}
        record = records[0]
        if not isinstance(record, dict):
            raise HudiTableError(f"{path}: unreadable commit file: Avro record is not a record")
        return record
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HudiTableError(f"{path}: unreadable commit file: neither Avro nor valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise HudiTableError(f"{path}: unreadable commit file: JSON content is not an object")
    return value
