"""Hudi's metadata table (MDT): its latest state, trusted only as far as the data table's timeline allows.

``<table>/.hoodie/metadata/`` is itself a merge-on-read Hudi table (base files are HFiles, log files carry
HFILE_DATA and DELETE blocks, payload ``HoodieMetadataPayload``) with one folder per *MDT partition*: ``files``,
``column_stats``, ``partition_stats``, ``bloom_filters``, ``record_index``, ``secondary_index_<name>``, ...

    mdt = MetadataTable.open(HudiTable.open(path))      # never raises for a missing or damaged MDT
    mdt.status                 # MetadataStatus: available, ready partitions, synced_up_to, lagging_instants
    mdt.files("city=chennai")  # {file name: size}: every committed file of a data partition the MDT knows
    mdt.column_stats(["fare"]) # ColumnStatsEntry per (file, column): typed min/max, counts
    mdt.record_index(["k1"])   # record key -> RecordLocation(partition, file_id, instant, instant_millis)
    mdt.secondary_index("secondary_index_rider_idx", ["rider-A"])   # value -> record keys
    BloomFilter.from_parquet_metadata(pq.read_metadata(f).metadata).might_contain(key)

What is read (checked against every MDT of the shared fixture tables, Hudi 1.0 / table version 8 and Hudi 1.1 /
version 9, and against apache/hudi ``HoodieBackedTableMetadata``, ``HoodieMetadataPayload``,
``MetadataPartitionType``, ``HoodieTableMetadataUtil``):

- **Ready partitions** are the data table's ``hoodie.table.metadata.partitions`` minus
  ``...partitions.inflight``; a partition still being built is never read.
- **Slices.** Per MDT file group the latest base HFile of a completed MDT instant (a compaction completes as a
  ``commit``) plus its log files. Timeline layout 2 (v8+): a log file belongs to the slice when its deltacommit is
  completed on the MDT timeline and *completed* after the base file's instant (a deltacommit requested before a
  compaction but completed after it belongs to the new slice: ``v8_trips_8i3u1d`` has one); logs are merged in
  completion order (Hudi sorts them by the instant in the name; the two agree unless MDT writes overlapped, and
  then completion order is the order the records were written). Layout 1 (v6): logs named after the base
  instant, in name order.
- **Trust.** Every log block's INSTANT_TIME must be an MDT instant completed on the MDT timeline, not rolled
  back, and (Hudi's ``getValidInstantTimestamps``): an MDT-only instant (initialisation and index bootstrap
  deltacommits, ``00000000000000xxx``), an instant completed on the data timeline (any action: commits, cleans,
  rollbacks, indexing), the MDT's own rollback/restore, or one older than the data's active timeline
  (archived). A deltacommit whose data instant is pending, or unknown to a data timeline that should show it,
  is ignored (the MDT commits before the data table does). Rollback command blocks drop the target instant's
  blocks. Blocks of a log compaction (``COMPACTED_BLOCK_TIMES``) are not read: the partition is unavailable.
- **Lag.** ``lagging_instants`` are completed data instants of the actions the MDT mirrors (commit, deltacommit,
  replacecommit, clean, rollback, restore) the MDT has no trusted completed instant for, and that are not
  covered by its bootstrap (completed before the files partition's initialisation completed) or by MDT
  compactions whose deltacommits were archived. Their files are not in ``files()``; the caller must list them.
- **Damage.** On open: the MDT's properties and timeline; each ready partition's folder; each file an MDT
  instant's commit metadata says it wrote to the current slices (present, not shorter than recorded); each base
  HFile's trailer magic. A partition that fails is left out of ``status.partitions`` with a problem naming the
  file; an MDT that cannot be read at all is ``available=False``. Content is decoded when queried; a file that
  then turns out unreadable (HFile damage, corrupt log region, undecodable value) makes its partition unavailable
  (``status`` updated) and the query raises :class:`MetadataTableError`: never a partial answer. ``verify()``
  reads everything at once. The ``partition_stats`` of a LANCE table are not used: the Hudi that wrote the
  fixtures aggregated them from log files only (Lance base files have no statistics), so they do not bound the
  partitions' rows (seen on ``v9_lance_nonhivestyle``; Hudi later disabled them for LANCE). Its ``column_stats``
  are kept: they simply have no entry for a Lance base file, which a pruner must treat as unknown.
- **Merging**: :mod:`hive_bridge.mdt.records` (``HoodieMetadataPayload.preCombine``); keys: :mod:`hive_bridge.mdt.keys`.

Facts of the record index (verified on the fixtures): record index file id = UUID(fileIdHighBits, fileIdLowBits) +
"-" + fileIndex (encoding 0) or the raw ``fileId`` (encoding 1); the record index's ``instantTime`` is epoch
millis of the instant read in the *writer's* time zone (the v9 fixtures were written in UTC-6), so the instant
string is rebuilt with the offset that maps the record's millis onto the data timeline.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from hive_bridge import config
from hive_bridge.errors import HudiTableError, MetadataTableError
from hive_bridge.formats.bloom import BloomFilter, BloomFilterError
from hive_bridge.formats.hfile import TRAILER_SIZE, HFileError, HFileReader, trailer_problem
from hive_bridge.formats.logfile import (
    BlockType,
    HeaderKey,
    LogBlock,
    LogFormatError,
    read_log_file,
)
from hive_bridge.layout.fsview import parse_base_file_name, parse_log_file_name
from hive_bridge.layout.properties import PROPERTIES_FILE, TableProperties
from hive_bridge.layout.timeline import Instant, Timeline
from hive_bridge.mdt.files import FileInfos
from hive_bridge.mdt.keys import (
    ALL_PARTITIONS_KEY,
    BLOOM_FILTERS,
    COLUMN_STATS,
    FILES,
    MIRRORED_ACTIONS,
    NON_PARTITIONED_NAME,
    PARTITION_STATS,
    RECORD_INDEX,
    SECONDARY_INDEX_PREFIX,
    SECONDARY_INDEX_SEPARATOR,
    SOLO_COMMIT_TIMESTAMP,
    TYPE_FILES,
    bloom_filter_key,
    column_index_id,
    escape_secondary_value,
    partition_identifier,
    partition_index_id,
    secondary_value_text,
    split_secondary_index_key,
)
from hive_bridge.mdt.records import (
    ColumnStatsEntry,
    RecordLocation,
    Unreadable,
    combine_records,
    decode_values,
    deleted_keys,
    instant_of_millis,
    is_tombstone,
    millis_offset,
    nested_record,
    record_file_id,
    select_entries,
    selected_key,
    stats_of,
    unwrap_bound,
    value_type_of,
)
from hive_bridge.storage.core import Storage, StorageError

__all__ = ["DataTable", "MdtSlice", "MetadataStatus", "MetadataTable"]


class DataTable(Protocol):
    """What the metadata table needs of its data table: where it lives and its state (``HudiTable`` has it)."""

    @property
    def storage(self) -> Storage: ...

    @property
    def base_path(self) -> str: ...

    @property
    def properties(self) -> TableProperties: ...

    @property
    def timeline(self) -> Timeline: ...


_MDT_WRITE_ACTIONS = frozenset({"commit", "deltacommit", "replacecommit"})
#: HFiles (base files, log blocks) kept open between queries: point lookups then decode one data block each
_READER_CACHE = 64
#: decoded files partitions by the identity of their slices (see MetadataTable.records), a few tables' worth
#: (records by key, file sizes by record key: filled in as files() asks for them)
_FILES_CACHE: OrderedDict[tuple[Any, ...], tuple[dict[str, dict[str, Any]], dict[str, dict[str, int]]]] = \
    OrderedDict()
_FILES_CACHE_ENTRIES = 8
config.register_cache("mdt.table: decoded files partitions", _FILES_CACHE.clear)
#: the sentinel of a key a DELETE block removed
_DELETED = object()


@dataclass(frozen=True)
class MetadataStatus:
    """What the MDT can be trusted for.

    ``available``: the MDT was found and its timeline read, and at least one ready partition is usable.
    ``partitions``: ready partitions (``hoodie.table.metadata.partitions``, never the inflight ones) that are
    usable. ``synced_up_to``: the latest data instant the MDT has a trusted completed instant for.
    ``lagging_instants``: completed data instants the MDT does not cover (their files must be listed by the
    caller). ``problems``: what was unreadable and why."""

    available: bool
    partitions: tuple[str, ...]
    synced_up_to: str | None
    lagging_instants: tuple[str, ...]
    problems: tuple[str, ...]


class MdtSlice(NamedTuple):
    file_id: str
    base: str | None            # full path of the base HFile
    base_instant: str | None
    logs: tuple[str, ...]       # full paths, in merge order



class MetadataTable:
    """The metadata table of one Hudi table, read-only: ``MetadataTable.open(hudi_table)``."""

    def __init__(self, table: DataTable) -> None:
        self.table = table
        self.storage = table.storage
        #: the metadata table's folder: `location` (a local path or a URI), `path` (a local table's)
        self.location = self.storage.join(table.base_path, ".hoodie", "metadata")
        self.path = Path(self.location)
        self.status = MetadataStatus(False, (), None, (), ())
        self._problems: list[str] = []
        self._slices: dict[str, list[MdtSlice]] = {}
        self._trusted: frozenset[str] = frozenset()
        self._cache: dict[str, dict[str, dict[str, Any]]] = {}
        self._partition_names: dict[str, str] | None = None
        self._millis_offset: int | None = None
        self._offset_inferred = False
        self._data_instant_times: list[str] = []
        self._sizes: dict[str, int] = {}
        #: data partition key -> file name -> size, from the files partition (shared with its process cache)
        self._file_sizes: dict[str, dict[str, int]] = {}
        self._completion: dict[str, str] = {}
        self._mdt_done: dict[str, Instant] = {}
        self._layout2 = True
        self._readers: OrderedDict[tuple[str, int], HFileReader] = OrderedDict()
        self._slice_blocks: dict[MdtSlice, list[tuple[str, LogBlock]]] = {}
        self._dropped: set[str] = set()

    # ------------------------------------------------------------------------------------------ opening

    @classmethod
    def open(cls, table: DataTable) -> MetadataTable:
        """Read what the MDT can be trusted for. Never raises for a missing or damaged MDT: ``status`` says."""
        mdt = cls(table)
        try:
            mdt._open()
        except Exception as exc:  # never raises: anything unexpected is a damaged MDT too
            what = str(exc) if isinstance(exc, HudiTableError | OSError) else f"{type(exc).__name__}: {exc}"
            mdt._problems.append(f"{mdt.location}: metadata table not readable: {what}")
            mdt._slices = {}
            mdt._set_status(available=False)
        return mdt

    def _set_status(self, *, available: bool | None = None, synced: str | None = None,
                    lagging: tuple[str, ...] | None = None) -> None:
        old = self.status
        partitions = tuple(sorted(self._slices))
        self.status = MetadataStatus(
            available=(old.available if available is None else available) and bool(partitions),
            partitions=partitions,
            synced_up_to=old.synced_up_to if synced is None else synced,
            lagging_instants=old.lagging_instants if lagging is None else lagging,
            problems=tuple(self._problems),
        )

    def _open(self) -> None:
        props = self.table.properties
        ready = props.metadata_partitions
        if not self.storage.is_file(self.storage.join(self.location, ".hoodie", PROPERTIES_FILE)):
            why = "no metadata table" if not ready else \
                f"hoodie.table.metadata.partitions lists {', '.join(ready)} but there is no {PROPERTIES_FILE}"
            self._problems.append(f"{self.location}: {why}")
            self._set_status(available=False)
            return
        if not ready:
            self._problems.append(f"{self.location}: no ready metadata partition (hoodie.table.metadata.partitions "
                                  "is empty: the metadata table is disabled or being rebuilt)")
            self._set_status(available=False)
            return
        mprops = TableProperties.load(self.location, self.storage)
        if mprops.base_file_format != "HFILE" or not mprops.is_mor:
            raise MetadataTableError(f"{self.location}: not a metadata table ({mprops.table_type}, "
                                     f"{mprops.base_file_format} base files)")
        self.mdt_properties = mprops
        mtl = self.mdt_timeline = Timeline.load(mprops)
        dtl = self.table.timeline
        self._layout2 = mprops.timeline_layout_version >= 2
        mdt_rolled_back = mtl.rolled_back_timestamps if any(
            i.action in ("rollback", "restore") for i in mtl.completed) else frozenset()
        mdt_done = self._mdt_done = {i.timestamp: i for i in mtl.completed if i.timestamp not in mdt_rolled_back}
        self._completion = {ts: (i.completion_time or ts) for ts, i in mdt_done.items()}
        data_completed = {i.timestamp for i in dtl.completed}
        data_pending = {i.timestamp for i in dtl.pending}
        data_earliest = dtl.instants[0].timestamp if dtl.instants else None
        self._data_instant_times = [i.timestamp for i in dtl.instants]

        def data_allows(ts: str, action: str) -> bool:
            if ts.startswith(SOLO_COMMIT_TIMESTAMP) or ts in data_completed:
                return True
            if len(ts) > 17 and ts[:17] in data_completed:          # 0.x initialisation: <instant><3 digits>
                return True
            if ts in data_pending:
                return False
            if action in ("rollback", "restore"):
                return True                                         # the MDT's own rollbacks are valid
            return data_earliest is not None and ts[:17] < data_earliest   # archived on the data timeline

        self._trusted = frozenset(ts for ts, i in mdt_done.items() if data_allows(ts, i.action))
        self._lag(mdt_done)
        for name in ready:
            try:
                self._slices[name] = self._list_partition(name)
            except Unreadable as why:
                self._problems.append(f"metadata partition {name!r} unavailable: {why}")
                self._dropped.add(name)
        self._verify_written_files(mdt_done)
        if props.base_file_format == "LANCE" and self._slices.pop(PARTITION_STATS, None) is not None:
            self._dropped.add(PARTITION_STATS)
            # Hudi before 1.2 aggregated partition stats of Lance tables from log files only (Lance base files
            # have no column statistics): those ranges do not bound the partitions' rows (seen on the fixtures)
            self._problems.append(f"metadata partition {PARTITION_STATS!r} not used: the table's base files are "
                                  "LANCE, which have no column statistics, so its ranges cover log files only")
        self._set_status(available=True)

    def _lag(self, mdt_done: Mapping[str, Instant]) -> None:
        dtl = self.table.timeline
        solo = [i for ts, i in mdt_done.items() if ts.startswith(SOLO_COMMIT_TIMESTAMP)]
        bootstrap_done = min((i.completion_time for i in solo if i.completion_time), default=None)
        init_prefixes = [ts[:17] for ts, i in mdt_done.items() if len(ts) > 17 and i.action == "deltacommit"
                         and not ts.startswith(SOLO_COMMIT_TIMESTAMP)]     # 0.x: <instant>010 and so on
        bootstrap_upto = min(init_prefixes, default=None)
        mirrored = [ts for ts, i in mdt_done.items()
                    if not ts.startswith(SOLO_COMMIT_TIMESTAMP) and len(ts) <= 17 and i.action != "commit"]
        earliest_mirrored = min(mirrored, default=None)
        compacted = any(i.action == "commit" for i in mdt_done.values()) and self._mdt_has_archive()
        covered: list[str] = []
        lagging: list[str] = []
        for inst in dtl.completed:
            if inst.action not in MIRRORED_ACTIONS:
                continue
            ts = inst.timestamp
            ok = ts in self._trusted
            if not ok and bootstrap_done is not None and inst.completion_time is not None:
                ok = inst.completion_time <= bootstrap_done       # listed by the bootstrap
            if not ok and bootstrap_upto is not None:
                ok = ts <= bootstrap_upto
            if not ok and compacted and earliest_mirrored is not None:
                ok = ts < earliest_mirrored                         # compacted, then archived in the MDT
            (covered if ok else lagging).append(ts)
        self.status = replace(self.status, synced_up_to=max(covered, default=None), lagging_instants=tuple(lagging))

    def _mdt_has_archive(self) -> bool:
        """Whether the MDT archived instants (then older data instants may have no MDT instant left)."""
        raw = self.mdt_properties.raw
        join = self.storage.join
        if self._layout2:
            folder = join(self.mdt_properties.timeline_location, raw.get("hoodie.timeline.history.path") or "history")
        else:
            folder = join(self.location, ".hoodie", raw.get("hoodie.archivelog.folder") or "archived")
        return self.storage.has_files(folder)

    # ------------------------------------------------------------------------------------------ slices

    def _list_partition(self, name: str) -> list[MdtSlice]:
        folder = self.storage.join(self.location, name)
        try:
            entries = [(e.name, e.size) for e in self.storage.list_dir(folder) if not e.is_dir and e.size is not None]
        except FileNotFoundError:
            raise Unreadable(f"{folder}: ready metadata partition {name!r} has no folder") from None
        except OSError as exc:
            raise Unreadable(f"{folder}: cannot list: {exc.strerror or exc}") from None
        completed_writes = {ts for ts, i in self._mdt_done.items() if i.action in _MDT_WRITE_ACTIONS}
        bases: dict[str, list[tuple[str, str]]] = {}
        logs: dict[str, list[tuple[str, int, str, str]]] = {}
        for fname, size in entries:
            self._sizes[f"{name}/{fname}"] = size
            if fname.startswith("."):
                parsed = parse_log_file_name(fname)
                if parsed is not None:
                    fid, ts, ver, tok = parsed
                    logs.setdefault(fid, []).append((ts, ver, tok, fname))
                continue
            pb = parse_base_file_name(fname, ".hfile")
            if pb is not None:
                fid, _tok, ts = pb
                if ts in completed_writes:
                    bases.setdefault(fid, []).append((ts, fname))
        out: list[MdtSlice] = []
        for fid in sorted(bases.keys() | logs.keys()):
            base = max(bases.get(fid, ()), default=None)
            base_ts = base[0] if base else None
            chosen: list[tuple[tuple[str, ...], str]] = []
            for ts, ver, tok, fname in logs.get(fid, ()):
                if self._layout2:
                    done = self._completion.get(ts)
                    if done is None or (base_ts is not None and done < base_ts):
                        continue
                    order: tuple[str, ...] = (done, ts, f"{ver:09d}", tok)
                else:
                    if base_ts is not None and ts < base_ts:
                        continue
                    order = (ts, f"{ver:09d}", tok)
                chosen.append((order, fname))
            chosen.sort()
            if base is None and not chosen:
                continue
            out.append(MdtSlice(fid, f"{folder}/{base[1]}" if base else None, base_ts,
                              tuple(f"{folder}/{f}" for _, f in chosen)))
        for sl in out:
            if sl.base is not None:
                self._check_trailer(sl.base)
        return out

    def _check_trailer(self, path: str) -> None:
        try:
            tail, size = self.storage.read_tail(path, TRAILER_SIZE)
        except OSError as exc:
            raise Unreadable(f"{path}: cannot read: {exc.strerror or exc}") from None
        problem = trailer_problem(tail, size)
        if problem is not None:
            raise Unreadable(f"{path}: {problem}")

    def _verify_written_files(self, mdt_done: Mapping[str, Instant]) -> None:
        """Every file a trusted MDT instant (or a compaction) wrote to a current slice is there, not shorter."""
        slice_of: dict[tuple[str, str], MdtSlice] = {}
        for name, slices in self._slices.items():
            for one in slices:
                slice_of[(name, one.file_id)] = one
        bad: dict[str, str] = {}
        for ts, inst in mdt_done.items():
            if ts not in self._trusted and inst.action != "commit":
                continue
            try:
                meta = self.mdt_timeline.read_metadata(inst)
            except (HudiTableError, StorageError) as exc:
                raise MetadataTableError(f"cannot check the files of metadata instant {ts}: {exc}") from None
            stats = meta.get("partitionToWriteStats") or {}
            if not isinstance(stats, dict):
                raise MetadataTableError(f"{self.mdt_timeline.instant_location(inst)}: partitionToWriteStats is not a map")
            for partition, writes in stats.items():
                if partition not in self._slices or partition in bad:
                    continue
                for w in writes or ():
                    if not isinstance(w, dict) or not isinstance(w.get("path"), str):
                        continue
                    rel = w["path"]
                    fname = rel.rsplit("/", 1)[-1]
                    parsed_log = parse_log_file_name(fname)
                    parsed_base = None if parsed_log else parse_base_file_name(fname, ".hfile")
                    if parsed_log is None and parsed_base is None:
                        continue
                    fid = parsed_log[0] if parsed_log is not None else parsed_base[0]  # type: ignore[index]
                    sl = slice_of.get((partition, fid))
                    full = f"{self.location}/{partition}/{fname}"
                    if sl is not None and (full == sl.base or full in sl.logs):
                        recorded = w.get("fileSizeInBytes")
                        actual = self._sizes.get(f"{partition}/{fname}", -1)
                        if isinstance(recorded, int) and 0 <= actual < recorded:
                            bad[partition] = (f"{full}: {actual} bytes, but metadata instant {ts} wrote "
                                              f"{recorded}: truncated")
                        continue
                    if sl is not None and sl.base_instant is not None:
                        # not in the current slice: fine if a newer base file superseded it (and it was cleaned)
                        if parsed_base is not None:
                            position = parsed_base[2]
                        else:
                            assert parsed_log is not None
                            position = self._completion.get(parsed_log[1], parsed_log[1]) if self._layout2 \
                                else parsed_log[1]
                        if position < sl.base_instant:
                            continue
                    bad[partition] = f"{full}: missing, but metadata instant {ts} wrote it"
        for partition, why in sorted(bad.items()):
            self._problems.append(f"metadata partition {partition!r} unavailable: {why}")
            self._slices.pop(partition, None)
            self._dropped.add(partition)

    # ------------------------------------------------------------------------------------------ reading

    def slices_of(self, partition: str) -> list[MdtSlice]:
        slices = self._slices.get(partition)
        if slices is None:
            why = "unavailable (see status.problems)" if partition in self._dropped else "not ready"
            known = ", ".join(self.status.partitions) or "none"
            raise MetadataTableError(f"{self.location}: metadata partition {partition!r} is {why} (usable: {known})")
        return slices

    def failure(self, partition: str, why: str) -> MetadataTableError:
        self._problems.append(f"metadata partition {partition!r} unavailable: {why}")
        self._slices.pop(partition, None)
        self._dropped.add(partition)
        self._cache.pop(partition, None)
        self._set_status()
        return MetadataTableError(f"{self.location}: metadata partition {partition!r} became unavailable: {why}")

    def records(self, partition: str, keys: Iterable[str] | None = None,
                prefixes: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
        """The merged latest records of one MDT partition (all, or those with one of ``keys`` / a key starting
        with one of ``prefixes``: point lookups through the HFiles' indexes), by record key. Records are decoded
        Avro dicts (``key`` filled in; unions of several records, e.g. min/max wrappers, as ``(record name,
        record)`` tuples). Tombstones are dropped. Raises :class:`MetadataTableError` if the partition is not
        usable, or turns out unreadable (then the partition is dropped from ``status``)."""
        slices = self.slices_of(partition)
        want = None if keys is None else set(keys)
        pre = None if prefixes is None else list(prefixes)
        cached = self._cache.get(partition)
        if cached is None and partition == FILES:
            # the files partition is read whole (one record per data partition) and kept in the process by the
            # identity of its slices: a second table open lists from it without decoding it again
            identity = self.slice_identity(partition)
            hit = _FILES_CACHE.get(identity)
            if hit is None:
                _FILES_CACHE[identity] = hit = (self._read_slices(partition, slices, None, None), {})
                while len(_FILES_CACHE) > _FILES_CACHE_ENTRIES:
                    _FILES_CACHE.popitem(last=False)
            else:
                _FILES_CACHE.move_to_end(identity)
            self._cache[partition] = cached = hit[0]
            self._file_sizes = hit[1]
        if cached is not None:
            if want is None and pre is None:
                return dict(cached)
            if pre is None and want is not None:
                return {k: cached[k] for k in want if k in cached}
            return {k: v for k, v in cached.items() if selected_key(k, want, pre)}
        out = self._read_slices(partition, slices, want, pre)
        if want is None and pre is None:
            self._cache[partition] = out
            return dict(out)
        return out

    def _read_slices(self, partition: str, slices: list[MdtSlice], want: set[str] | None,
                     pre: list[str] | None) -> dict[str, dict[str, Any]]:
        """The merged records of a partition's slices; an unreadable one drops the partition and raises."""
        out: dict[str, dict[str, Any]] = {}
        try:
            for sl in slices:
                out.update(self._read_slice(sl, want, pre, partition == FILES))
        except Unreadable as why:
            raise self.failure(partition, str(why)) from None
        except (HudiTableError, StorageError, KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise self.failure(partition, f"{type(exc).__name__}: {exc}") from None
        return out

    def file_size(self, path: str) -> int:
        """The listed size of one of the metadata table's files (-1 when it was not listed)."""
        prefix = f"{self.location}/"
        rel = path[len(prefix):] if path.startswith(prefix) else path
        return self._sizes.get(rel, -1)

    def slice_identity(self, partition: str) -> tuple[Any, ...]:
        """What a full read of ``partition`` depends on: its slices' files and their listed sizes."""
        return (self.location, partition, tuple(
            (sl.base, self.file_size(sl.base) if sl.base else -1,
             tuple((p, self.file_size(p)) for p in sl.logs)) for sl in self.slices_of(partition)),
            self._trusted)

    def cached_reader(self, key: tuple[str, int], make: Callable[[], HFileReader]) -> HFileReader:
        reader = self._readers.get(key)
        if reader is None:
            reader = make()
            self._readers[key] = reader
            if len(self._readers) > _READER_CACHE:
                self._readers.popitem(last=False)
        else:
            self._readers.move_to_end(key)
        return reader

    def _read_slice(self, sl: MdtSlice, want: set[str] | None, pre: list[str] | None,
                    files: bool = False) -> dict[str, dict[str, Any]]:
        merged: dict[str, Any] = {}
        if sl.base is not None:
            base = sl.base
            try:
                reader = self.cached_reader((base, -1), lambda: HFileReader.open(base, storage=self.storage))
                schema = reader.avro_schema
                if schema is None:
                    raise Unreadable(f"{base}: HFile has no Avro schema in its file info")
                for key, rec in decode_values(select_entries(reader, want, pre), schema, base, files):
                    merged[key] = rec
            except HFileError as exc:
                raise Unreadable(str(exc)) from None
        for path, block in self.log_blocks(sl):
            where = f"{path}: byte {block.offset}"
            if block.block_type == BlockType.DELETE:
                for key in deleted_keys(block, where, want, pre):
                    merged[key] = _DELETED
                continue
            try:
                reader = self.cached_reader((path, block.offset), partial(HFileReader, block.content,
                                                                    f"{where} (HFILE_DATA block)"))
                schema = block.header.get(HeaderKey.SCHEMA) or reader.avro_schema
                if schema is None:
                    raise Unreadable(f"{where}: HFILE_DATA block without a schema")
                decoded = decode_values(select_entries(reader, want, pre), schema, where, files)
            except HFileError as exc:
                raise Unreadable(str(exc)) from None
            for key, rec in decoded:
                old = merged.get(key)
                merged[key] = combine_records(None if old is _DELETED else old, rec)
        return {k: v for k, v in merged.items() if v is not _DELETED and not is_tombstone(v)}

    def log_blocks(self, sl: MdtSlice) -> list[tuple[str, LogBlock]]:
        """The trusted data and delete blocks of a slice's logs, in order, rollbacks applied (cached)."""
        cached = self._slice_blocks.get(sl)
        if cached is not None:
            return cached
        blocks: list[tuple[str, LogBlock]] = []
        for path in sl.logs:
            try:
                contents = read_log_file(path, storage=self.storage)
            except LogFormatError as exc:
                raise Unreadable(str(exc)) from None
            if contents.problems:
                raise Unreadable("; ".join(contents.problems))
            for block in contents.blocks:
                where = f"{path}: byte {block.offset}"
                instant = block.instant
                if instant is None:
                    raise Unreadable(f"{where}: log block without an instant time")
                if instant not in self._trusted:
                    continue
                if HeaderKey.COMPACTED_BLOCK_TIMES in block.header:
                    raise Unreadable(f"{where}: log-compacted block (COMPACTED_BLOCK_TIMES) is not supported")
                if block.block_type == BlockType.COMMAND:
                    if block.is_rollback:
                        target = block.target_instant
                        blocks = [(p, b) for p, b in blocks if b.instant != target]
                    continue
                if block.block_type in (BlockType.HFILE_DATA, BlockType.DELETE):
                    blocks.append((path, block))
                    continue
                try:
                    kind = BlockType(block.block_type).name
                except ValueError:
                    kind = f"type {block.block_type}"
                raise Unreadable(f"{where}: {kind} block in a metadata log file")
        self._slice_blocks[sl] = blocks
        return blocks

    def verify(self) -> MetadataStatus:
        """Read every usable partition fully now (what queries would read lazily); partitions that do not read
        are dropped from ``status`` with a problem. Returns the new status."""
        for partition in list(self._slices):
            try:
                self.records(partition)
            except MetadataTableError:
                pass
        return self.status

    # ------------------------------------------------------------------------------------------ files

    def all_partitions(self) -> list[str]:
        """The data partitions the files partition lists (``__all_partitions__``); a non-partitioned table's
        ``"."`` is returned as ``""`` (the partition path :class:`HudiTable` uses)."""
        rec = self.records(FILES, keys=[ALL_PARTITIONS_KEY]).get(ALL_PARTITIONS_KEY)
        if rec is None:
            return []
        names = [n for n, info in (rec.get("filesystemMetadata") or {}).items() if not info.get("isDeleted")]
        return sorted("" if n == NON_PARTITIONED_NAME else n for n in names)

    def files(self, partition: str) -> dict[str, int] | None:
        """File name -> size of every committed file (base and log, not only the latest slices) the MDT lists
        for one data partition (``""`` or ``"."`` for a non-partitioned table), deletions applied. None when
        unknown: no record for the partition, or the files partition is not usable. Files of
        ``status.lagging_instants`` are missing from it."""
        key = partition_identifier(partition)
        try:
            rec = self.records(FILES, keys=[key]).get(key)
        except MetadataTableError:
            return None
        if rec is None or rec.get("type") != TYPE_FILES:
            return None
        sizes = self._file_sizes.get(key)
        if sizes is None:
            # computed once per record of a cached files partition: shared by every open of the same one
            infos = rec.get("filesystemMetadata") or {}
            if isinstance(infos, FileInfos):
                sizes = self._file_sizes[key] = infos.live_sizes()
            else:
                sizes = self._file_sizes[key] = {name: int(info.get("size") or 0) for name, info in infos.items()
                                                 if not info.get("isDeleted")}
        return dict(sizes)

    # ------------------------------------------------------------------------------------------ stats

    def partition_ids(self) -> dict[str, str]:
        """Partition id (``partition_index_id``) -> data partition path, for every partition the files partition
        lists ("." as ``""``); built once."""
        if self._partition_names is None:
            names: dict[str, str] = {partition_index_id(NON_PARTITIONED_NAME): ""}
            try:
                for p in self.all_partitions():
                    names[partition_index_id(p)] = p
            except MetadataTableError:
                pass
            self._partition_names = names
        return self._partition_names

    def _stats_entries(self, partition: str, columns: Iterable[str] | None) -> list[ColumnStatsEntry]:
        prefixes = None if columns is None else [column_index_id(c) for c in columns]
        if prefixes is not None and not prefixes:
            return []
        recs = self.records(partition, prefixes=prefixes)
        out = []
        for key, rec in sorted(recs.items()):
            stats = stats_of(rec)
            if stats is None:
                raise self.failure(partition, f"record {key!r} has no ColumnStatsMetadata")
            try:
                vtype, info = value_type_of(stats)
                lo, t_lo = unwrap_bound(stats.get("minValue"), vtype, info, False)
                hi, t_hi = unwrap_bound(stats.get("maxValue"), vtype, info, True)
            except MetadataTableError as exc:
                raise self.failure(partition, f"record {key!r}: {exc}") from None
            if partition == PARTITION_STATS:
                part: str | None = stats.get("fileName")
                part = "" if part == NON_PARTITIONED_NAME else part
                file_name = None
            else:
                part = self.partition_ids().get(key[12:24])
                file_name = stats.get("fileName")
            out.append(ColumnStatsEntry(
                partition=part, file_name=file_name, column=stats.get("columnName") or "",
                min=lo, max=hi, null_count=stats.get("nullCount"), value_count=stats.get("valueCount"),
                total_size=stats.get("totalSize"), is_deleted=bool(stats.get("isDeleted")),
                is_tight_bound=stats.get("isTightBound"), value_type=vtype or t_lo or t_hi,
            ))
        return out

    def column_stats(self, columns: Iterable[str] | None = None) -> list[ColumnStatsEntry]:
        """Per-file column statistics (base and log files alike), of ``columns`` (point lookups by the key's
        column prefix) or of every column."""
        return self._stats_entries(COLUMN_STATS, columns)

    def partition_stats(self, columns: Iterable[str] | None = None) -> list[ColumnStatsEntry]:
        """Per-partition column statistics (``file_name`` None)."""
        return self._stats_entries(PARTITION_STATS, columns)

    # ------------------------------------------------------------------------------------------ indexes

    def record_index(self, keys: Iterable[str]) -> dict[str, RecordLocation]:
        """Record key -> location, for the keys the record index has (absent keys are left out)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        recs = self.records(RECORD_INDEX, keys=wanted)
        out: dict[str, RecordLocation] = {}
        for key, rec in recs.items():
            info = nested_record(rec, "recordIndexMetadata")
            if info is None:
                raise self.failure(RECORD_INDEX, f"record {key!r} has no recordIndexMetadata")
            file_id = record_file_id(info)
            if file_id is None:
                raise self.failure(RECORD_INDEX, f"record {key!r} has no file id bits")
            millis = info.get("instantTime")
            out[key] = RecordLocation(str(info.get("partitionName") or ""), file_id,
                                      self._instant_of_millis(millis) if isinstance(millis, int) else None,
                                      millis if isinstance(millis, int) else None)
        return out

    def _instant_of_millis(self, millis: int) -> str | None:
        """The instant string of a record index ``instantTime`` (epoch millis of the instant as read in the
        writer JVM's time zone): formatted with the offset that maps such millis onto data timeline instants."""
        if not self._offset_inferred:
            tz = (self.table.properties.raw.get("hoodie.table.timeline.timezone") or "").strip().upper()
            self._millis_offset = millis_offset(millis, self._data_instant_times, tz == "UTC")
            self._offset_inferred = True
        offset = self._millis_offset
        if offset is None:
            return None
        return instant_of_millis(millis, offset)

    def _secondary_partition(self, index_name: str) -> str:
        return index_name if index_name.startswith(SECONDARY_INDEX_PREFIX) else SECONDARY_INDEX_PREFIX + index_name

    def secondary_index(self, index_name: str, values: Iterable[Any]) -> dict[str | None, set[str]]:
        """Secondary value -> record keys, for the values the index has (absent values are left out).
        ``index_name``: ``secondary_index_rider_idx`` or ``rider_idx``. Values are matched as Hudi stored them
        (strings; a date column's values are days since the epoch, which a ``date`` is converted to)."""
        partition = self._secondary_partition(index_name)
        texts = list(dict.fromkeys(secondary_value_text(v) for v in values))
        if not texts:
            return {}
        recs = self.records(partition, prefixes=[escape_secondary_value(t) + SECONDARY_INDEX_SEPARATOR for t in texts])
        out: dict[str | None, set[str]] = {}
        for key in recs:
            value, record_key = split_secondary_index_key(key)
            if record_key is not None:
                out.setdefault(value, set()).add(record_key)
        return out

    def bloom_filter(self, partition: str, file_name: str) -> BloomFilter | None:
        """The bloom filter of one base file (``partition`` ``""`` for a non-partitioned table) from the
        ``bloom_filters`` partition; None when unknown: the partition is not usable, has no entry for the file,
        or the entry does not parse (then the partition is dropped from ``status`` with a problem)."""
        key = bloom_filter_key(partition, file_name)
        try:
            rec = self.records(BLOOM_FILTERS, keys=[key]).get(key)
        except MetadataTableError:
            return None
        info = None if rec is None else nested_record(rec, "BloomFilterMetadata")
        if info is None:
            return None
        try:
            return BloomFilter.from_serialized(info.get("bloomFilter") or b"", str(info.get("type") or ""))
        except BloomFilterError as exc:
            self.failure(BLOOM_FILTERS, f"record {key!r}: {exc}")
            return None

    def __repr__(self) -> str:
        s = self.status
        return (f"MetadataTable({self.location!r}, available={s.available}, partitions={list(s.partitions)}, "
                f"synced_up_to={s.synced_up_to!r}, lagging={list(s.lagging_instants)})")


