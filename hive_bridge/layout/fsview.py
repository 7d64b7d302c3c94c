"""The file-system view: file groups and their latest file slices, read from the table folder and timeline."""

from __future__ import annotations

import gc
import os
import re
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from sys import intern
from typing import NamedTuple, cast
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.fs as pafs

from hive_bridge import config
from hive_bridge.errors import HudiTableError
from hive_bridge.layout.properties import BASE_FILE_EXTENSIONS, HOODIE_DIR, TableProperties
from hive_bridge.layout.timeline import Timeline

_LOG_RE = re.compile(r"^\.(?P<fid>.+)_(?P<ts>\d+)\.log\.(?P<ver>\d+)(?:_(?P<tok>[0-9]+-[0-9]+-[0-9]+))?$")
#: partition folders listed at a time: one per core (up to 8). The stat calls are CPU-bound on a warm cache, and
#: the Python thread that builds the slices needs a core too: on 2 cores, 4 threads list 100,000 files ~15 % slower
#: than 2.
LISTING_THREADS = max(2, min(8, os.cpu_count() or 2))
#: partition folders listed at a time on object storage (listings wait on the network, not on a core)
REMOTE_LISTING_THREADS = 16


# The models are NamedTuples: immutable, typed, and built ~6x faster than frozen slotted dataclasses (a
# 100,000-file listing builds 200,000 of them).
class BaseFile(NamedTuple):
    """A base (columnar) file: `path` is relative to the table root with `/` separators."""

    path: str
    full_path: str
    size: int
    mtime: float
    #: the instant that wrote it (from the file name)
    instant: str

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def file_id(self) -> str:
        return self.name.rsplit("_", 2)[0]

    @property
    def write_token(self) -> str:
        return self.name.rsplit("_", 2)[1]


class LogFile(NamedTuple):
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


class FileSlice(NamedTuple):
    """The latest state of one file group: a base file (None for log-only groups) plus its log files.

    `partition_values` is shared by the slices of one partition: read it, do not mutate it."""

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


#: the partition path value Hive and Hudi write for a NULL partition value
HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


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


@contextmanager
def gc_paused(to_oldest: bool = True) -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small long-lived objects.

    Listing 100,000 files builds ~300,000 tuples that the table caches. With the collector running, young
    collections would scan them over and over; after a plain pause, the first young collection scans them
    all at once (~0.1 s). Instead, on exit everything young is moved straight to the oldest generation
    (`gc.freeze()` + `gc.unfreeze()`, no scan), where only a later full collection looks at it; cyclic garbage
    among it is still collected then. Done only when nobody else uses the permanent generation (a process that
    froze objects itself keeps them frozen: then this is a plain pause). Restores the previous state.
    ``to_oldest=False``: a plain pause (nothing is moved between generations)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if to_oldest and gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


# field getters for C-level passes over many slices and files: `list(map(get_path, files))`
get_base_file = attrgetter("base_file")
get_base_instant = attrgetter("base_instant")
get_partition_path = attrgetter("partition_path")
get_log_files = attrgetter("log_files")
get_path = attrgetter("path")
get_size = attrgetter("size")
get_instant = attrgetter("instant")
_tuple_new = tuple.__new__  # builds a NamedTuple from a ready tuple, skipping its generated __new__


#: a file group's listed base files: one, or a list when the group has several slices
_Bases = BaseFile | list[BaseFile]
_LogEntry = tuple[str, int, float, str, int, str]


def _add_slice(group: dict[str, _Bases], fid: str, prev: _Bases, item: BaseFile, multi: set[str], rel: str) -> None:
    """A second (or later) base file of a file group: the group's entry becomes a list, its partition is noted
    in `multi` (the common case, one base file per group, stays a plain entry set by the caller)."""
    if type(prev) is BaseFile:
        group[fid] = [prev, item]
        multi.add(rel)
    else:
        cast(list[BaseFile], prev).append(item)


@dataclass(slots=True)
class _Listed:
    # partition -> file id -> base file entry (or a list of entries when the group has several slices)
    bases: dict[str, dict[str, _Bases]]
    # partition -> file id -> log files
    logs: dict[str, dict[str, list[_LogEntry]]]
    # partitions where some file group has several base files
    multi: set[str]


#: parsed listings by identity (see FileSystemView.use_listing): never mutated once built, so views share them
_LISTED_CACHE: OrderedDict[Hashable, _Listed] = OrderedDict()
_LISTED_CACHE_ENTRIES = 2              # a 1,000,000-file listing is ~2 million objects
config.register_cache("layout.fsview: folder listings", _LISTED_CACHE.clear)


def _newest(b: BaseFile) -> tuple[str, str]:
    """Sort key of a group's base files: by instant, then name (ties: the later name wins, as before)."""
    return b.instant, b.path


class _SliceContext:
    """What choosing the latest slices as of one instant needs from the timeline, computed once per call."""

    def __init__(self, view: FileSystemView, as_of: str | None) -> None:
        timeline = view.timeline
        writes_all = timeline.completed_writes
        writes = timeline.completed_writes_as_of(as_of)
        self.as_of = as_of
        self.completed = {i.timestamp for i in writes}
        self.completion_of = {i.timestamp: (i.completion_time or i.timestamp) for i in writes}
        self.earliest = writes_all[0].timestamp if writes_all else None
        self.pending = {i.timestamp for i in timeline.pending}
        self.pending_compactions = {i.timestamp for i in timeline.pending if i.action == "compaction"}
        self.rolled_back = timeline.rolled_back_timestamps if any(
            i.action in ("rollback", "restore") for i in timeline.completed
        ) else frozenset()
        self.replaced = timeline.replaced_file_groups(as_of)
        self.layout2 = view.properties.timeline_layout_version >= 2
        self.properties = view.properties
        self.base_path = view.base_path

    def committed(self, ts: str) -> bool:
        """Whether a file written at `ts` is committed as of the context's instant. Files older than the active
        timeline (archived instants) count as committed unless pending or rolled back."""
        if ts in self.completed:
            return True
        earliest = self.earliest
        if earliest is None or ts >= earliest or ts in self.pending or ts in self.rolled_back:
            return False
        return self.as_of is None or ts <= self.as_of

    def newest_committed(self, files: _Bases) -> BaseFile | None:
        """A file group's newest committed base file (ties on the instant: the later name), None if none is."""
        if type(files) is BaseFile:
            return files if self.committed(files.instant) else None
        for bf in sorted(cast(list[BaseFile], files), key=_newest, reverse=True):
            if self.committed(bf.instant):
                return bf
        return None

    def slices(self, partition: str, listed: _Listed) -> list[FileSlice]:
        """The latest slices of one partition's file groups, by file id."""
        groups = listed.bases.get(partition)
        part_logs = listed.logs.get(partition)
        if not groups and not part_logs:
            return []
        values = partition_values_for(partition, self.properties)
        prefix = f"{partition}/" if partition else ""
        full_prefix = f"{self.base_path}/{prefix}"
        completed = self.completed
        committed = self.committed
        replaced = self.replaced
        out: list[FileSlice] = []
        append = out.append
        if groups is None:
            groups = {}
        if not part_logs and not replaced:
            # the common case, kept lean: base files only, nothing replaced
            new = _tuple_new
            no_logs: tuple[LogFile, ...] = ()
            if partition not in listed.multi:
                # one base file per group: when every file's instant is a completed write, every group's
                # slice is its file, built by C-level maps
                file_ids = sorted(groups)
                files = cast(list[BaseFile], list(map(groups.__getitem__, file_ids)))
                instants = list(map(get_instant, files))
                if completed.issuperset(instants):
                    return list(map(new, repeat(FileSlice), zip(
                        file_ids, repeat(partition), instants, files, repeat(no_logs), repeat(values)
                    )))
            newest_committed = self.newest_committed
            for file_id in sorted(groups):
                found = groups[file_id]
                bf = found if type(found) is BaseFile and found.instant in completed else newest_committed(found)
                if bf is not None:
                    append(new(FileSlice, (file_id, partition, bf.instant, bf, no_logs, values)))
            return out
        file_ids = sorted(groups.keys() | part_logs.keys()) if part_logs else sorted(groups)
        layout2 = self.layout2
        completion_of = self.completion_of
        pending_compactions = self.pending_compactions
        for file_id in file_ids:
            if replaced and (partition, file_id) in replaced:
                continue
            entry = groups.get(file_id)
            base_file = None if entry is None else self.newest_committed(entry)
            base_instant = None if base_file is None else base_file.instant
            log_files: tuple[LogFile, ...] = ()
            group_logs = part_logs.get(file_id) if part_logs else None
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
                        LogFile(prefix + n, full_prefix + n, sz, mt, file_id, ts, ver, tok)
                        for n, sz, mt, ts, ver, tok in chosen
                    )
                    if base_instant is None:
                        base_instant = chosen[0][3]
            if base_instant is None:
                continue
            append(FileSlice(file_id, partition, base_instant, base_file, log_files, values))
        return out


class FileSystemView:
    """Lists the table's data files once and answers latest-file-slice questions against the timeline."""

    def __init__(self, properties: TableProperties, timeline: Timeline, *, freeze_listing: bool = False) -> None:
        self.properties = properties
        self.timeline = timeline
        self._freeze = freeze_listing
        self.base_path = properties.base_path
        # the table's format's extension; an unknown format raises HudiTableError (never a silent ".parquet",
        # which would list none of the table's files)
        self._extension = properties.base_file_extension
        self._listed: _Listed | None = None

    def with_timeline(self, timeline: Timeline) -> FileSystemView:
        """The same folders' files (listed once, shared) read against another timeline of the table (the active
        one with the archived instants: :func:`~hive_bridge.layout.archived.with_archived`)."""
        view = FileSystemView(self.properties, timeline, freeze_listing=self._freeze)
        view._listed = self._list()
        return view

    # ------------------------------------------------------------- listing
    def _list(self, on_partition: Callable[[str, _Listed], None] | None = None) -> _Listed:
        if self._listed is not None:
            return self._listed
        with gc_paused() if self._freeze else nullcontext():
            self._listed = self._list_files(on_partition)
        return self._listed

    def _list_files(self, on_partition: Callable[[str, _Listed], None] | None,
                    only: Iterable[str] | None = None) -> _Listed:
        """List every partition folder with pyarrow's C++ file system (the stat calls run without the GIL),
        several folders at a time: on a cold inode cache the waits overlap. `on_partition(rel, listed)` runs
        in this thread after each folder is absorbed, while the pool goes on stat-ing the next folders."""
        bases: dict[str, dict[str, _Bases]] = {}
        logs: dict[str, dict[str, list[_LogEntry]]] = {}
        multi: set[str] = set()
        listed = _Listed(bases, logs, multi)
        ext = self._extension
        cut = -len(ext)
        partitioned = self.properties.is_partitioned
        # one listing request per folder (the table's storage: a local folder, S3, GCS, HDFS, ...)
        storage = self.properties.store
        remote = not storage.is_local
        to_location = storage.location
        dir_type = pafs.FileType.Directory
        new = _tuple_new

        def list_dir(directory: str) -> list[pafs.FileInfo]:
            try:
                return storage.list_infos(directory)
            except FileNotFoundError:
                if only is not None:
                    return []                   # a partition listed again that no longer exists: no file
                raise HudiTableError(f"{to_location(directory)}: cannot list: no such folder") from None
            except (OSError, pa.ArrowException) as exc:
                raise HudiTableError(f"{to_location(directory)}: cannot list: {exc}") from None

        def absorb(rel: str, infos: list[pafs.FileInfo]) -> list[tuple[str, str]]:
            subdirs: list[tuple[str, str]] = []
            skip_files = partitioned and not rel
            group: dict[str, _Bases] | None = None
            prefix = f"{rel}/" if rel else ""
            for info in infos:
                # pyarrow gives a size to regular files only; `info.type` (a Python enum built per call) and
                # `info.base_name` cost more than the stat, so they are read only for what has no size
                size = info.size
                path = info.path
                name = path.rpartition("/")[2]
                if size is None:
                    if partitioned and info.type == dir_type and name[0] != ".":
                        subdirs.append((path, f"{rel}/{name}" if rel else name))
                    continue
                if skip_files:
                    continue
                if name[0] == ".":
                    if ".log." not in name:
                        continue
                    parsed_log = parse_log_file_name(name)
                    if parsed_log is None:
                        continue
                    fid, ts, ver, tok = parsed_log
                    logs.setdefault(rel, {}).setdefault(fid, []).append(
                        (name, size, info.mtime_ns / 1e9, ts, ver, tok)
                    )
                    continue
                if not name.endswith(ext):
                    continue
                parts = name[:cut].rsplit("_", 2)
                if len(parts) != 3 or not parts[2].isdigit():
                    continue
                if group is None:
                    group = bases.setdefault(rel, {})
                # the listing's own full path; the instant string is shared by all files of an instant
                item = new(BaseFile, (prefix + name, to_location(path) if remote else path, size,
                                      info.mtime_ns / 1e9, intern(parts[2])))
                fid = parts[0]
                prev = group.setdefault(fid, item)
                if prev is not item:
                    _add_slice(group, fid, prev, item, multi, rel)
            return subdirs

        if only is None:
            top = absorb("", list_dir(storage.fs_path(self.base_path)))
            if on_partition is not None:
                on_partition("", listed)
        else:                                   # just these partitions' folders (see relist)
            top = []
            for rel in only:
                if rel:
                    top.append((storage.fs_path(storage.join(self.base_path, rel)), rel))
                else:
                    absorb("", list_dir(storage.fs_path(self.base_path)))
        if top:
            # object storage: each listing is a network round trip, so many more in flight than cores
            with ThreadPoolExecutor(max_workers=REMOTE_LISTING_THREADS if remote else LISTING_THREADS) as pool:
                pending = {pool.submit(list_dir, path): rel for path, rel in top}
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        rel = pending.pop(future)
                        for path, sub_rel in absorb(rel, future.result()):
                            pending[pool.submit(list_dir, path)] = sub_rel
                        if on_partition is not None:
                            on_partition(rel, listed)
        return listed

    def relist(self, old: FileSystemView, partitions: Iterable[str]) -> None:
        """Take ``old``'s listing, with ``partitions`` listed again: the partitions the instants completed since
        ``old`` was listed wrote to (what the rest of the table holds has not changed). One listing per
        partition instead of one per partition of the table."""
        previous = old._list()
        touched = set(partitions)
        fresh = self._list_files(None, only=sorted(touched))
        bases = {k: v for k, v in previous.bases.items() if k not in touched}
        bases.update(fresh.bases)
        logs = {k: v for k, v in previous.logs.items() if k not in touched}
        logs.update(fresh.logs)
        self._listed = _Listed(bases, logs, (previous.multi - touched) | fresh.multi)

    def slices_of(self, partitions: Iterable[str]) -> dict[str, list[FileSlice]]:
        """The latest slices of some partitions, by partition (the others are not looked at)."""
        listed = self._list()
        context = _SliceContext(self, None)
        return {p: context.slices(p, listed) for p in partitions}

    def use_listing(self, files: Mapping[str, Mapping[str, int]], mtime: float = 0.0,
                    identity: Hashable | None = None) -> None:
        """List from a known file listing (partition path -> file name -> size), such as the metadata table's
        `files` partition, instead of the folders. Names that are neither base files of the table's format nor
        log files are ignored, as the folder listing ignores them. ``identity``: what ``files`` is a function
        of (e.g. the metadata files it was read from): the parsed listing is then kept in the process and a
        later view given the same identity reuses it (parsing 100,000 names costs more than the rest of a
        repeated planning)."""
        key = None if identity is None else (identity, self.base_path, self._extension, mtime)
        if key is not None:
            hit = _LISTED_CACHE.get(key)
            if hit is not None:
                _LISTED_CACHE.move_to_end(key)
                self._listed = hit
                return
        bases: dict[str, dict[str, _Bases]] = {}
        logs: dict[str, dict[str, list[_LogEntry]]] = {}
        multi: set[str] = set()
        ext = self._extension
        cut = -len(ext)
        root = self.base_path
        new = _tuple_new
        for rel, names in files.items():
            rel = rel.strip("/")
            prefix = f"{rel}/" if rel else ""
            full_prefix = f"{root}/{prefix}"
            group: dict[str, _Bases] = {}
            for name, size in names.items():
                if name[:1] == ".":
                    parsed_log = parse_log_file_name(name)
                    if parsed_log is not None:
                        fid, ts, ver, tok = parsed_log
                        logs.setdefault(rel, {}).setdefault(fid, []).append((name, size, mtime, ts, ver, tok))
                    continue
                # parse_base_file_name inlined (100,000s of names): <file id>_<write token>_<instant><ext>
                if not name.endswith(ext):
                    continue
                parts = name[:cut].rsplit("_", 2)
                if len(parts) != 3 or not parts[2].isdigit() or not parts[0]:
                    continue
                item = new(BaseFile, (prefix + name, full_prefix + name, size, mtime, intern(parts[2])))
                fid = parts[0]
                prev = group.setdefault(fid, item)
                if prev is not item:
                    _add_slice(group, fid, prev, item, multi, rel)
            if group:
                bases[rel] = group
        self._listed = _Listed(bases, logs, multi)
        if key is not None:
            _LISTED_CACHE[key] = self._listed
            while len(_LISTED_CACHE) > _LISTED_CACHE_ENTRIES:
                _LISTED_CACHE.popitem(last=False)

    # -------------------------------------------------------------- slices
    def latest_file_slices(self, as_of: str | None = None) -> list[FileSlice]:
        """The latest committed slice of every live file group (as of an instant time), by partition and id."""
        with gc_paused() if self._freeze else nullcontext():
            context = _SliceContext(self, as_of)
            if self._listed is None:
                # first call: each partition's slices are built as soon as its folder is listed, overlapping
                # the Python work with the pool's stat calls
                by_partition: dict[str, list[FileSlice]] = {}

                def on_partition(rel: str, listed: _Listed) -> None:
                    by_partition[rel] = context.slices(rel, listed)

                listed = self._list(on_partition)
                out: list[FileSlice] = []
                for partition in sorted(by_partition):
                    out += by_partition[partition]
                return out
            listed = self._listed
            out = []
            for partition in sorted(listed.bases.keys() | listed.logs.keys()):
                out += context.slices(partition, listed)
            return out

    def base_files_written_by(self, instants: Iterable[str]) -> list[FileSlice]:
        """Per file group, its newest base file written by one of ``instants`` (completed writes), as a slice
        without log files; groups replaced at or before the last of them are left out. What Hudi's
        ``getLatestBaseFilesInRange`` gives an incremental query of its input format."""
        wanted = set(instants)
        if not wanted:
            return []
        listed = self._list()
        replaced = self.timeline.replaced_file_groups(max(wanted))
        no_logs: tuple[LogFile, ...] = ()
        out: list[FileSlice] = []
        for partition in sorted(listed.bases):
            values = partition_values_for(partition, self.properties)
            for file_id, entry in sorted(listed.bases[partition].items()):
                if (partition, file_id) in replaced:
                    continue
                files = [entry] if type(entry) is BaseFile else cast(list[BaseFile], entry)
                written = [b for b in files if b.instant in wanted]
                if written:
                    bf = max(written, key=_newest)
                    out.append(FileSlice(file_id, partition, bf.instant, bf, no_logs, values))
        return out

    def partition_paths(self) -> list[str]:
        listed = self._list()
        return sorted(listed.bases.keys() | listed.logs.keys())


__all__ = [
    "BASE_FILE_EXTENSIONS",
    "HOODIE_DIR",
    "BaseFile",
    "FileSlice",
    "FileSystemView",
    "LogFile",
    "parse_base_file_name",
    "parse_log_file_name",
    "partition_values_for",
]
