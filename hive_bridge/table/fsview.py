"""The file-system view: file groups and their latest file slices, read from the table folder and timeline."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from hive_bridge.table.errors import HudiTableError
from hive_bridge.table.properties import HOODIE_DIR, TableProperties
from hive_bridge.table.timeline import Timeline

_LOG_RE = re.compile(r"^\.(?P<fid>.+)_(?P<ts>\d+)\.log\.(?P<ver>\d+)(?:_(?P<tok>[0-9]+-[0-9]+-[0-9]+))?$")
_BASE_EXTENSIONS = {"PARQUET": ".parquet", "ORC": ".orc", "HFILE": ".hfile"}


@dataclass(frozen=True, slots=True)
class BaseFile:
    """A base (columnar) file: `path` is relative to the table root with `/` separators."""

    path: str
    full_path: str
    size: int
    mtime: float

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def file_id(self) -> str:
        return self.name.rsplit("_", 2)[0]

    @property
    def write_token(self) -> str:
        return self.name.rsplit("_", 2)[1]

    @property
    def instant(self) -> str:
        return self.name.rsplit("_", 2)[2].split(".", 1)[0]


@dataclass(frozen=True, slots=True)
class LogFile:
    """A merge-on-read log file `.<fileId>_<instant>.log.<version>_<writeToken>`."""

    path: str
    full_path: str
    size: int
    mtime: float
    file_id: str
    instant: str
    version: int
    write_token: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class FileSlice:
    """The latest state of one file group: a base file (None for log-only groups) plus its log files."""

    file_id: str
    partition_path: str
    base_instant: str
    base_file: BaseFile | None
    log_files: tuple[LogFile, ...]
    partition_values: dict[str, str]

    @property
    def has_log_files(self) -> bool:
        return bool(self.log_files)


def parse_log_file_name(name: str) -> tuple[str, str, int, str] | None:
    """(file id, instant, version, write token) of a log file name, None if it is not one."""
    m = _LOG_RE.match(name)
    if m is None:
        return None
    return m.group("fid"), m.group("ts"), int(m.group("ver")), m.group("tok") or ""


def parse_base_file_name(name: str, extension: str = ".parquet") -> tuple[str, str, str] | None:
    """(file id, write token, instant) of a base file name, None if it is not one."""
    if not name.endswith(extension) or name.startswith("."):
        return None
    parts = name[: -len(extension)].rsplit("_", 2)
    if len(parts) != 3 or not parts[2].isdigit() or not parts[0]:
        return None
    return parts[0], parts[1], parts[2]


def partition_values_for(path: str, properties: TableProperties) -> dict[str, str]:
    """Partition column values encoded in a partition path (hive-style `k=v/...`, plain `v/...` or none)."""
    fields = properties.partition_fields
    if not path or not fields:
        return {}
    segments = path.split("/")
    decode = properties.urlencode_partitions
    values: dict[str, str] = {}
    if properties.hive_style_partitioning or all("=" in s for s in segments):
        for segment in segments:
            key, sep, value = segment.partition("=")
            if not sep:
                continue
            values[key] = unquote(value) if decode else value
        if values:
            return values
    if len(segments) == len(fields):
        return {f: (unquote(v) if decode else v) for f, v in zip(fields, segments, strict=True)}
    if len(fields) == 1:
        return {fields[0]: unquote(path) if decode else path}
    return {}


@dataclass(slots=True)
class _Listed:
    # base files per (partition, file id): instant -> (name, size, mtime)
    bases: dict[tuple[str, str], dict[str, tuple[str, int, float]]]
    # log files per (partition, file id)
    logs: dict[tuple[str, str], list[tuple[str, int, float, str, int, str]]]


class FileSystemView:
    """Lists the table's data files once and answers latest-file-slice questions against the timeline."""

    def __init__(self, properties: TableProperties, timeline: Timeline) -> None:
        self.properties = properties
        self.timeline = timeline
        self.base_path = properties.base_path
        self._extension = _BASE_EXTENSIONS.get(properties.base_file_format, ".parquet")
        self._listed: _Listed | None = None

    # ------------------------------------------------------------- listing
    def _list(self) -> _Listed:
        if self._listed is not None:
            return self._listed
        bases: dict[tuple[str, str], dict[str, tuple[str, int, float]]] = {}
        logs: dict[tuple[str, str], list[tuple[str, int, float, str, int, str]]] = {}
        ext = self._extension
        partitioned = self.properties.is_partitioned
        root = self.base_path
        stack: list[tuple[str, str]] = [(root, "")]
        while stack:
            directory, rel = stack.pop()
            try:
                it = os.scandir(directory)
            except OSError as exc:
                raise HudiTableError(f"{directory}: cannot list: {exc.strerror or exc}") from None
            with it:
                for entry in it:
                    name = entry.name
                    if entry.is_dir(follow_symlinks=True):
                        if name[0] != "." and partitioned:
                            stack.append((entry.path, f"{rel}/{name}" if rel else name))
                        continue
                    if partitioned and not rel:
                        continue
                    if name[0] == ".":
                        if ".log." not in name:
                            continue
                        parsed_log = parse_log_file_name(name)
                        if parsed_log is None:
                            continue
                        try:
                            st = entry.stat()
                        except FileNotFoundError:
                            continue
                        fid, ts, ver, tok = parsed_log
                        logs.setdefault((rel, fid), []).append((name, st.st_size, st.st_mtime, ts, ver, tok))
                        continue
                    if not name.endswith(ext):
                        continue
                    parts = name[: -len(ext)].rsplit("_", 2)
                    if len(parts) != 3 or not parts[2].isdigit():
                        continue
                    try:
                        st = entry.stat()
                    except FileNotFoundError:
                        continue
                    key = (rel, parts[0])
                    group = bases.get(key)
                    if group is None:
                        bases[key] = {parts[2]: (name, st.st_size, st.st_mtime)}
                    else:
                        group[parts[2]] = (name, st.st_size, st.st_mtime)
        self._listed = _Listed(bases, logs)
        return self._listed

    # -------------------------------------------------------------- slices
    def latest_file_slices(self, as_of: str | None = None) -> list[FileSlice]:
        timeline = self.timeline
        writes_all = timeline.completed_writes
        writes = timeline.completed_writes_as_of(as_of)
        completed = {i.timestamp for i in writes}
        completion_of = {i.timestamp: (i.completion_time or i.timestamp) for i in writes}
        earliest = writes_all[0].timestamp if writes_all else None
        pending = {i.timestamp for i in timeline.pending}
        pending_compactions = {i.timestamp for i in timeline.pending if i.action == "compaction"}
        rolled_back = timeline.rolled_back_timestamps if any(
            i.action == "rollback" for i in timeline.completed
        ) else frozenset()
        replaced = timeline.replaced_file_groups(as_of)
        layout2 = self.properties.timeline_layout_version >= 2

        def committed(ts: str) -> bool:
            if ts in completed:
                return True
            if earliest is None or ts >= earliest or ts in pending or ts in rolled_back:
                return False
            return as_of is None or ts <= as_of

        listed = self._list()
        base_path = self.base_path
        props = self.properties
        part_values: dict[str, dict[str, str]] = {}
        out: list[FileSlice] = []
        for key in sorted(listed.bases.keys() | listed.logs.keys()):
            if key in replaced:
                continue
            partition, file_id = key
            base_instant: str | None = None
            base_file: BaseFile | None = None
            versions = listed.bases.get(key)
            if versions:
                for ts in sorted(versions, reverse=True):
                    if committed(ts):
                        name, size, mtime = versions[ts]
                        rel = f"{partition}/{name}" if partition else name
                        base_file = BaseFile(rel, f"{base_path}/{rel}", size, mtime)
                        base_instant = ts
                        break
            log_files: tuple[LogFile, ...] = ()
            group_logs = listed.logs.get(key)
            if group_logs:
                chosen = []
                for name, size, mtime, ts, ver, tok in group_logs:
                    if layout2:
                        if ts not in completed:
                            continue
                        position = completion_of[ts]
                    else:
                        if not (committed(ts) or ts in pending_compactions):
                            continue
                        position = ts
                    if base_instant is not None and position < base_instant:
                        continue
                    chosen.append((name, size, mtime, ts, ver, tok))
                if chosen:
                    chosen.sort(key=lambda r: (r[3], r[4], r[5]))
                    log_files = tuple(
                        LogFile(
                            f"{partition}/{n}" if partition else n,
                            f"{base_path}/{partition}/{n}" if partition else f"{base_path}/{n}",
                            sz, mt, file_id, ts, ver, tok,
                        )
                        for n, sz, mt, ts, ver, tok in chosen
                    )
                    if base_instant is None:
                        base_instant = chosen[0][3]
            if base_instant is None:
                continue
            values = part_values.get(partition)
            if values is None:
                values = part_values[partition] = partition_values_for(partition, props)
            out.append(FileSlice(file_id, partition, base_instant, base_file, log_files, values))
        return out

    def partition_paths(self) -> list[str]:
        listed = self._list()
        return sorted({p for p, _ in listed.bases} | {p for p, _ in listed.logs})


def base_file_from_path(base_path: str, rel: str) -> BaseFile:
    full = str(Path(base_path) / rel)
    st = os.stat(full)
    return BaseFile(rel, full, st.st_size, st.st_mtime)


def sort_slices(slices: Iterable[FileSlice]) -> list[FileSlice]:
    return sorted(slices, key=lambda s: (s.partition_path, s.file_id))


__all__ = [
    "HOODIE_DIR",
    "BaseFile",
    "FileSlice",
    "FileSystemView",
    "LogFile",
    "parse_base_file_name",
    "parse_log_file_name",
    "partition_values_for",
]
