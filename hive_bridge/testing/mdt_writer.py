"""A test-only writer of Hudi 1.0's metadata table (MDT) for a data table written by :class:`HudiWriter` (table
version 8), for tests and benchmarks of the code that reads it.

It writes what Hudi 1.0 writes when the metadata table is **initialised on an existing table**
(``HoodieBackedTableMetadataWriter.initializeFromFilesystem``): the data table's partition folders are listed,
every file of a completed data instant is recorded, and each MDT partition is bootstrapped by one
``BULK_INSERT`` deltacommit of its own, at the MDT-only instants ``00000000000000000`` (``files``, always first),
``00000000000000001`` (``column_stats``), ... (``SOLO_COMMIT_TIMESTAMP`` plus an offset, whatever the data
timeline holds), completed after the data table's last completed instant (so the bootstrap covers every one of
them: nothing lags). The fixture ``quickstart_trips_table.mor.avro.v8_trips_8i3u1d`` shows the same instants
(its MDT was initialised on an empty table, then mirrored the data commits with log files; an MDT initialised on
a table that already has commits has only the bootstrap deltacommits). Per MDT partition:

- file groups ``files-0000-0`` (one, as Hudi) and ``col-stats-000N-0`` (two by default, Hudi's
  ``hoodie.metadata.index.column.stats.file.group.count``); a record goes to the group Hudi's
  ``mapRecordKeyToFileGroupIndex`` (Java ``String.hashCode``) picks;
- per file group an empty log file ``.<fileId>_<instant>.log.1_0-0-0`` holding one DELETE block without keys
  (``initializeFileGroups``; byte for byte the fixture's) and one base HFile ``<fileId>_<token>_<instant>.hfile``
  (``bulkCommit``) written with :func:`hive_bridge.testing.hfile_writer.write_hfile` as HBase's writer lays it out
  (version 3.3, GZ, CRC32C checksums by default), its file info carrying the Avro schema of the values
  (``HoodieMetadataRecord`` with Hudi's meta fields, as in the fixture's base files), ``minRecordKey`` /
  ``maxRecordKey``; values are Avro-encoded ``HoodieMetadataRecord`` (the ``key`` field blank, as Hudi stores it);
- the MDT timeline (layout 2): ``<instant>.deltacommit.requested`` / ``.inflight`` and
  ``<instant>_<completion>.deltacommit`` (Avro ``HoodieCommitMetadata``: the HFiles' write stats, the record
  schema in ``extraMetadata``), the MDT's ``hoodie.properties`` as the fixture's, ``.hoodie_partition_metadata``
  in every MDT partition;
- the data table's ``hoodie.properties`` gets ``hoodie.table.metadata.partitions`` (and, for column stats, the
  index definition ``.hoodie/.index_defs/index.json`` Hudi writes, ``hoodie.table.index.defs.path``).

Records:

- ``files``: ``__all_partitions__`` (type 1) lists the partitions (``.`` for a non-partitioned table); one record
  per partition (type 2) maps the name of every file of a completed data instant -- base and log files, the
  latest slices' and older ones -- to its size. Files of pending (or unknown) instants are left out, as Hudi's
  listing leaves out files of pending instants.
- ``column_stats``: one record per (file, column) for base parquet files (read from the parquet footer, as
  Hudi's ``ParquetUtils.readColumnStatsFromMetadata``: row-group statistics merged, ``valueCount`` the column
  chunks' value counts, ``totalSize`` / ``totalUncompressedSize`` their sizes) and, with ``log_files=True``, for
  log files (from their data blocks' records; ``totalSize`` 0; a log without data records gets ``valueCount`` 0
  and no bounds, as in the fixture). Bounds are wrapped as Hudi 1.0 (V1 column stats, no ``valueType``) wraps
  the Java values its parquet reader gives: INT32 -> IntWrapper, INT64 -> LongWrapper (timestamps and times
  included: the raw value in the column's own unit), FLOAT / DOUBLE, BOOLEAN, UTF8 -> StringWrapper, other
  binaries -> BytesWrapper, DATE -> DateWrapper (days), DECIMAL -> DecimalWrapper (decimal(30,15)).
  ``isTightBound`` is false, as the fixture's. Columns (Hudi's ``getColumnsToIndex``): ``_hoodie_commit_time``,
  ``_hoodie_partition_path``, ``_hoodie_record_key`` when the table has meta fields, then the first 32 data
  columns of a supported type (no record, array or map; decimals that fit decimal(30,15)), or
  ``column_stats_columns``.

- ``partition_stats`` (with ``column_stats``): per (partition, column) the files' statistics merged as Hudi's
  ``HoodieColumnRangeMetadata.merge`` does (least min, greatest max, counts summed), over every file the
  listing records (the latest slices' and older ones: a true bound, wider than Hudi's where older slices remain);
  key = column id + partition id, ``fileName`` the partition (``.`` for a non-partitioned table),
  ``isTightBound`` true, as the fixtures' records; one file group ``partition-stats-0000-0``.

- ``record_index`` and ``secondary_index_<name>`` (``secondary_indexes={name: column}``): every record of the
  latest slices (base files only; a table whose latest slices have log files is refused unless
  ``key_index_logs`` says how to treat them) with its file group,
  and its secondary value with its record key (:mod:`~hive_bridge.testing.mdt_keys`); two file groups each, a key
  placed by ``mapRecordKeyToFileGroupIndex``; the secondary index's ``identity`` definition in
  ``.hoodie/.index_defs/index.json``.

Not written: the ``bloom_filters`` partition (the base files carry their own, with ``HudiWriter(...,
bloom_filters=True)``), the HFiles' ``bloomFilter`` meta block (no reader of this project uses it), and mirrored
deltacommits with log files (what an MDT enabled from the table's first commit holds).

The records and their Avro encoding are in :mod:`~hive_bridge.testing.mdt_records`, the indexed columns and the
statistics of data files in :mod:`~hive_bridge.testing.mdt_stats`; this module lists the data table and writes
the MDT's files, timeline and properties.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.hfile import ChecksumType, Codec
from hive_bridge.formats.logfile import BlockType, HeaderKey
from hive_bridge.layout.fsview import parse_base_file_name, parse_log_file_name
from hive_bridge.layout.properties import HOODIE_DIR, PROPERTIES_FILE, TableProperties
from hive_bridge.layout.timeline import Timeline
from hive_bridge.mdt.keys import (
    ALL_PARTITIONS_KEY,
    COLUMN_STATS,
    FILES,
    NON_PARTITIONED_NAME,
    PARTITION_STATS,
    RECORD_INDEX,
    SECONDARY_INDEX_PREFIX,
    SOLO_COMMIT_TIMESTAMP,
    TYPE_ALL_PARTITIONS,
    TYPE_FILES,
    TYPE_PARTITION_STATS,
    TYPE_RECORD_INDEX,
    TYPE_SECONDARY_INDEX,
    column_index_id,
    escape_secondary_value,
    file_index_id,
    partition_index_id,
    secondary_index_key,
    secondary_value_text,
)
from hive_bridge.testing.hfile_writer import write_hfile
from hive_bridge.testing.instants import atomic_write, avro_record, commit_avro_schema, plus_one_ms
from hive_bridge.testing.logfile_writer import delete_block_content, encode_block
from hive_bridge.testing.mdt_keys import key_index_rows, record_index_info
from hive_bridge.testing.mdt_records import (
    COMMIT_SCHEMA_JSON,
    RECORD_SCHEMA_JSON,
    avro_bytes_of,
    encode_record,
    group_of_hash,
    java_hash,
    merge_stats,
    metadata_record,
    metadata_record_schema,
    prefix_hash,
    stats_value,
)
from hive_bridge.testing.mdt_stats import columns_to_index, file_stats
from hive_bridge.testing.table_files import PARTITION_METADATA

__all__ = [
    "FILE_ID_PREFIXES",
    "MetadataTableWrite",
    "file_group_index",
    "metadata_record_schema",
    "write_metadata_table",
]

#: MDT partitions this writer writes, in the order Hudi initialises them (files first)
SUPPORTED_PARTITIONS = (FILES, COLUMN_STATS, PARTITION_STATS, RECORD_INDEX)
#: file id prefix of each MDT partition (``MetadataPartitionType.getFileIdPrefix``)
FILE_ID_PREFIXES = {FILES: "files-", COLUMN_STATS: "col-stats-", PARTITION_STATS: "partition-stats-",
                    RECORD_INDEX: "record-index-"}
#: Hudi 1.0's default file group counts (the record index's is computed by Hudi from the record count)
DEFAULT_FILE_GROUPS = {FILES: 1, COLUMN_STATS: 2, PARTITION_STATS: 1, RECORD_INDEX: 2}
#: ``HoodieLogFormat.DEFAULT_WRITE_TOKEN``
DEFAULT_WRITE_TOKEN = "0-0-0"
#: HBase's writer (Hudi 1.0's MDT files: version 3.3, 16 KiB checksum chunks); Hudi's HFile block size
HFILE_MINOR_VERSION = 3
HFILE_BLOCK_SIZE = 1024 * 1024
_INDEX_DEFS = ".hoodie/.index_defs/index.json"

# ============================================================================================== helpers


def file_group_index(record_key: str, num_file_groups: int) -> int:
    """``HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex``: Java's ``String.hashCode`` (UTF-16 code
    units, int overflow), then ``Math.abs(Math.abs(h) % n)``."""
    return group_of_hash(java_hash(record_key), num_file_groups)


def _file_id(partition: str, index: int) -> str:
    # a secondary index's groups: secondary-index-<name, "_" as "-">-000N-0, as the fixtures' are named
    prefix = FILE_ID_PREFIXES.get(partition) or partition.replace("_", "-") + "-"
    return f"{prefix}{index:04d}-0"


def _identifier(partition: str) -> str:
    return NON_PARTITIONED_NAME if partition in ("", NON_PARTITIONED_NAME) else partition


def _now_after(stamp: str) -> str:
    now = datetime.now(UTC)
    s = now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"
    return s if s > stamp else plus_one_ms(stamp)


def _properties_text(props: Mapping[str, str], header: str) -> bytes:
    lines = [header]
    for key in sorted(props):
        value = props[key].replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
        lines.append(f"{key}={value}")
    return ("\n".join(lines) + "\n").encode("latin-1")


def _saved_on() -> str:
    return "#Properties saved on " + datetime.now(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")


# ============================================================================================== listing


@dataclass(frozen=True)
class _DataFile:
    partition: str              # "" for a non-partitioned table
    name: str
    size: int
    is_log: bool

    @property
    def full_path(self) -> str:
        return self.name if not self.partition else f"{self.partition}/{self.name}"


def _list_data_files(root: Path, completed: frozenset[str]) -> dict[str, list[_DataFile]]:
    """Partition -> files of completed instants, as Hudi's ``listAllPartitionsFromFilesystem`` finds them:
    folders holding a ``.hoodie_partition_metadata`` (never under a hidden folder such as ``.hoodie``)."""
    out: dict[str, list[_DataFile]] = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if PARTITION_METADATA not in names:
            continue
        rel = os.path.relpath(directory, root)
        partition = "" if rel == "." else rel.replace(os.sep, "/")
        files: list[_DataFile] = []
        with os.scandir(directory) as entries:
            for e in entries:
                if not e.is_file(follow_symlinks=False):
                    continue
                log = parse_log_file_name(e.name) if e.name.startswith(".") else None
                base = None if log is not None else parse_base_file_name(e.name)
                instant = log[1] if log is not None else base[2] if base is not None else None
                if instant is None or instant not in completed:
                    continue
                files.append(_DataFile(partition, e.name, e.stat(follow_symlinks=False).st_size, log is not None))
        out[partition] = sorted(files, key=lambda f: f.name)
    return out


@dataclass(frozen=True)
class MetadataTableWrite:
    """What :func:`write_metadata_table` wrote: the MDT folder, its partitions and their instants (partition ->
    instant), the HFiles (relative to the MDT folder), the data partitions and files listed, the indexed columns
    and the number of column stats records."""

    path: Path
    partitions: tuple[str, ...]
    instants: dict[str, str]
    hfiles: tuple[str, ...]
    data_partitions: tuple[str, ...]
    data_files: int
    columns: tuple[str, ...]
    column_stats_records: int
    files_without_stats: tuple[str, ...]


def write_metadata_table(
    data_table_root: str | os.PathLike[str],
    *,
    partitions: Iterable[str] = (FILES, COLUMN_STATS),
    column_stats_columns: Sequence[str] | None = None,
    secondary_indexes: Mapping[str, str] | None = None,
    file_groups: Mapping[str, int] | None = None,
    log_files: bool = True,
    key_index_logs: str | None = None,
    codec: Codec = Codec.GZ,
    checksum: ChecksumType = ChecksumType.CRC32C,
    block_size: int = HFILE_BLOCK_SIZE,
    workers: int | None = None,
    overwrite: bool = False,
) -> MetadataTableWrite:
    """Write the metadata table Hudi 1.0 initialises on the (version 8) table at ``data_table_root`` (see the
    module docstring). ``partitions``: MDT partitions to write (``files`` is always written); ``file_groups``:
    MDT partition -> number of file groups (default files 1, column_stats 2); ``log_files``: column stats for
    log files too; ``key_index_logs``: how the record index and secondary indexes treat slices with log files
    (None: refused; "merged": their merged rows; "base": their base files' rows only, an index out of step with
    the logs: :func:`hive_bridge.testing.mdt_keys.key_index_rows`); ``secondary_indexes``: index name (``rider_idx``) -> the column it indexes, each written as
    partition ``secondary_index_<name>`` (with ``record_index``, whether or not ``partitions`` names it);
    ``codec`` / ``checksum`` / ``block_size``: the HFiles' layout; ``overwrite``: replace an existing metadata
    table (else it is an error)."""
    root = Path(data_table_root).absolute()
    props = TableProperties.load(root)
    if props.version < 8 or props.timeline_layout_version < 2:
        raise HudiTableError(f"{root}: the MDT writer writes Hudi 1.0's metadata table for table version 8 "
                             f"(this table is version {props.version})")
    if not props.base_files_are_parquet:
        raise HudiTableError(f"{root}: the MDT writer indexes parquet base files only")
    secondary = {f"{SECONDARY_INDEX_PREFIX}{name}": column for name, column in (secondary_indexes or {}).items()}
    wanted = list(dict.fromkeys([FILES, *partitions, *([RECORD_INDEX] if secondary else []), *secondary]))
    unknown = [p for p in wanted if p not in SUPPORTED_PARTITIONS and p not in secondary]
    if unknown:
        raise HudiTableError(f"the MDT writer writes {', '.join(SUPPORTED_PARTITIONS)}, not {', '.join(unknown)}")
    groups = {**DEFAULT_FILE_GROUPS, **dict.fromkeys(secondary, 2), **(file_groups or {})}
    if any(groups[p] < 1 for p in wanted):
        raise HudiTableError(f"file group counts must be positive: {groups}")
    if FILES in (file_groups or {}) and groups[FILES] != 1:
        raise HudiTableError("the files partition has exactly one file group in Hudi (readers expect one)")
    mdt = root / HOODIE_DIR / "metadata"
    if mdt.exists():
        if not overwrite:
            raise HudiTableError(f"{mdt}: a metadata table exists (pass overwrite=True to replace it)")
        shutil.rmtree(mdt)

    timeline = Timeline.load(props)
    completed = frozenset(i.timestamp for i in timeline.completed)
    last_completion = max((i.completion_time or i.timestamp for i in timeline.completed), default="0")
    listing = _list_data_files(root, completed)
    data_files = sum(len(v) for v in listing.values())
    if PARTITION_STATS in wanted and COLUMN_STATS not in wanted:
        raise HudiTableError("partition stats are aggregated from column stats: write column_stats too")
    columns = columns_to_index(props, timeline.latest_schema_json(), column_stats_columns) \
        if COLUMN_STATS in wanted else []

    # ---------------------------------------------------------------- the MDT's own table and folders
    hoodie = mdt / HOODIE_DIR
    tl = hoodie / "timeline"
    for d in (tl / "history", hoodie / ".aux" / ".bootstrap" / ".partitions", hoodie / ".aux" / ".bootstrap" /
              ".fileids", hoodie / ".schema", hoodie / ".temp", hoodie / ".heartbeat"):
        d.mkdir(parents=True, exist_ok=True)
    mprops = {
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.table.initial.version": "8", "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
        "hoodie.table.type": "MERGE_ON_READ", "hoodie.archivelog.folder": "history",
        "hoodie.timeline.layout.version": "2", "hoodie.timeline.history.path": "history",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        "hoodie.table.recordkey.fields": "key", "hoodie.table.name": f"{props.name}_metadata",
        "hoodie.timeline.path": "timeline", "hoodie.populate.meta.fields": "false",
        "hoodie.table.base.file.format": "HFILE", "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.table.version": "8",
    }
    atomic_write(hoodie / PROPERTIES_FILE, _properties_text(mprops, _saved_on()))

    keyed = key_index_rows(root, props, list(dict.fromkeys(secondary.values())), key_index_logs) \
        if RECORD_INDEX in wanted or secondary else []

    # ---------------------------------------------------------------- records per MDT partition
    stats_of: dict[tuple[str, str], dict[str, dict[str, Any]] | None] = {}
    if COLUMN_STATS in wanted and columns:
        todo = [f for fs in listing.values() for f in fs if log_files or not f.is_log]
        paths = [(str(root / f.full_path), f.is_log) for f in todo]
        n_workers = workers or min(8, (os.cpu_count() or 2) * 2)
        if len(paths) > 1 and n_workers > 1:
            with ThreadPoolExecutor(max_workers=n_workers) as pool:
                results = list(pool.map(lambda p: file_stats(p, columns), paths, chunksize=64))
        else:
            results = [file_stats(p, columns) for p in paths]
        stats_of = {(f.partition, f.name): r for f, r in zip(todo, results, strict=True)}

    instants: dict[str, str] = {}
    hfiles: list[str] = []
    completion = last_completion
    stats_records = 0
    for offset, partition in enumerate(wanted):
        instant = f"{SOLO_COMMIT_TIMESTAMP}{offset:03d}"
        instants[partition] = instant
        atomic_write(tl / f"{instant}.deltacommit.requested", b"")
        atomic_write(tl / f"{instant}.deltacommit.inflight", b"")
        folder = mdt / partition
        folder.mkdir()
        atomic_write(folder / PARTITION_METADATA,
                      (f"#partition metadata\n#{datetime.now(UTC).strftime('%a %b %d %H:%M:%S UTC %Y')}\n"
                       f"commitTime={instant}\npartitionDepth=1\n").encode("latin-1"))
        n = groups[partition]
        names = [f"{_file_id(partition, g)}_{g}-0-{g}_{instant}.hfile" for g in range(n)]
        fids = [_file_id(partition, g) for g in range(n)]
        # (key, value) per file group
        entries: list[list[tuple[bytes, bytes]]] = [[] for _ in range(n)]

        def add(key: str, rtype: int, files: dict[str, dict[str, Any]] | None = None,
                stats: dict[str, Any] | None = None, _n: int = n, _names: list[str] = names,
                _entries: list[list[tuple[bytes, bytes]]] = entries, index: dict[str, Any] | None = None) -> None:
            g = file_group_index(key, _n) if _n > 1 else 0
            _entries[g].append((key.encode("utf-8"), encode_record(metadata_record(
                _names[g], rtype, files, stats, record_index=index))))

        if partition == FILES:
            add(ALL_PARTITIONS_KEY, TYPE_ALL_PARTITIONS,
                files={_identifier(p): {"size": 0, "isDeleted": False} for p in listing})
            for p, fs in listing.items():
                add(_identifier(p), TYPE_FILES, files={f.name: {"size": f.size, "isDeleted": False} for f in fs})
        elif partition == RECORD_INDEX:
            for row in keyed:
                add(row.key, TYPE_RECORD_INDEX, index=record_index_info(row.partition, row.file_id, row.instant))
        elif partition in secondary:
            column = secondary[partition]
            for row in keyed:
                value = secondary_value_text(row.values[column])
                g = file_group_index(escape_secondary_value(value), n) if n > 1 else 0
                entries[g].append((secondary_index_key(value, row.key).encode("utf-8"), encode_record(
                    metadata_record(names[g], TYPE_SECONDARY_INDEX, secondary={"isDeleted": False}))))
        elif partition == PARTITION_STATS:
            # key = column id (12) + partition id (12); the record's fileName is the partition
            by_partition: dict[str, list[dict[str, dict[str, Any]]]] = {}
            for (p, _name), per_column in stats_of.items():
                if per_column is not None:
                    by_partition.setdefault(p, []).append(per_column)
            names_bytes = [avro_bytes_of(nm.encode("utf-8")) for nm in names]
            for p, files_stats in sorted(by_partition.items()):
                for column in columns:
                    found = [fs[column] for fs in files_stats if fs.get(column) is not None]
                    if not found:
                        continue
                    key = column_index_id(column) + partition_index_id(p)
                    g = file_group_index(key, n) if n > 1 else 0
                    record = {"fileName": _identifier(p), "columnName": column, **merge_stats(found),
                              "isDeleted": False, "isTightBound": True}
                    entries[g].append((key.encode("utf-8"), stats_value(names_bytes[g], record,
                                                                        TYPE_PARTITION_STATS)))
        else:
            # key = column id (12) + partition id (12) + file id (24): hashed part by part (the Java hash of a
            # concatenation continues from its prefix's), the ids computed once each
            names_bytes = [avro_bytes_of(nm.encode("utf-8")) for nm in names]
            col_ids = {c: column_index_id(c) for c in columns}
            part_ids: dict[str, str] = {}
            for (p, name), per_column in stats_of.items():
                if per_column is None:
                    continue
                pid = part_ids.get(p)
                if pid is None:
                    pid = part_ids[p] = partition_index_id(p)
                fid_part = file_index_id(name)
                for column in columns:
                    st = per_column.get(column)
                    if st is None:
                        continue
                    prefix = col_ids[column] + pid
                    key = prefix + fid_part
                    g = group_of_hash(java_hash(fid_part, prefix_hash(prefix)), n) if n > 1 else 0
                    record = {"fileName": name, "columnName": column, **st, "isDeleted": False,
                              "isTightBound": False}
                    entries[g].append((key.encode("utf-8"), stats_value(names_bytes[g], record)))
                    stats_records += 1
        write_stats: list[dict[str, Any]] = []
        for g in range(n):
            fid = fids[g]
            log = encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant}, delete_block_content([]))
            with open(folder / f".{fid}_{instant}.log.1_{DEFAULT_WRITE_TOKEN}", "wb") as fh:
                fh.write(log)
            pairs = sorted(entries[g])
            info = {b"schema": RECORD_SCHEMA_JSON.encode("utf-8")}
            if pairs:
                info[b"minRecordKey"] = pairs[0][0]
                info[b"maxRecordKey"] = pairs[-1][0]
            data = write_hfile(pairs, file_info=info, codec=codec, checksum=checksum, block_size=block_size,
                               minor_version=HFILE_MINOR_VERSION)
            with open(folder / names[g], "wb") as fh:
                fh.write(data)
            hfiles.append(f"{partition}/{names[g]}")
            write_stats.append(_write_stat(partition, fid, names[g], len(pairs), len(data)))
        completion = _now_after(completion)
        meta = {"partitionToWriteStats": {partition: write_stats}, "compacted": False,
                "extraMetadata": {"schema": COMMIT_SCHEMA_JSON}, "version": None, "operationType": "BULK_INSERT"}
        atomic_write(tl / f"{instant}_{completion}.deltacommit", avro_record(commit_avro_schema(False), meta))

    _update_data_properties(root, wanted, columns, secondary)
    missing = tuple(sorted(f"{p}/{n}" if p else n for (p, n), s in stats_of.items() if s is None))
    return MetadataTableWrite(mdt, tuple(wanted), instants, tuple(hfiles), tuple(sorted(listing)), data_files,
                              tuple(columns), stats_records, missing)


def _write_stat(partition: str, file_id: str, name: str, records: int, size: int) -> dict[str, Any]:
    return {
        "fileId": file_id, "path": f"{partition}/{name}", "prevCommit": "null", "numWrites": records,
        "numDeletes": 0, "numUpdateWrites": 0, "numInserts": records, "totalWriteBytes": size,
        "totalWriteErrors": 0, "partitionPath": partition, "totalLogRecords": 0, "totalLogFiles": None,
        "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
        "fileSizeInBytes": size, "logVersion": None, "logOffset": None, "baseFile": None, "logFiles": None,
        "prevBaseFile": None, "minEventTime": None, "maxEventTime": None, "totalLogFilesCompacted": 0,
        "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0, "tempPath": None, "numUpdates": 0,
    }


def _update_data_properties(root: Path, partitions: Sequence[str], columns: Sequence[str],
                            secondary: Mapping[str, str]) -> None:
    """The data table's hoodie.properties: ready MDT partitions (none inflight) and, with column stats or
    secondary indexes, the index definitions Hudi writes (``updateColumnsToIndexWithColStats``, the secondary
    index's ``identity`` definition over its one column)."""
    path = root / HOODIE_DIR / PROPERTIES_FILE
    raw = dict(TableProperties.load(root).raw)
    raw["hoodie.table.metadata.partitions"] = ",".join(sorted(partitions))
    raw["hoodie.table.metadata.partitions.inflight"] = ""
    if COLUMN_STATS in partitions or secondary:
        defs_path = root / _INDEX_DEFS
        defs: dict[str, Any] = {}
        if defs_path.is_file():
            try:
                defs = json.loads(defs_path.read_text())
            except ValueError:
                defs = {}
        found = defs.setdefault("indexDefinitions", {})
        if COLUMN_STATS in partitions:
            found[COLUMN_STATS] = {"indexName": COLUMN_STATS, "indexType": COLUMN_STATS,
                                   "indexFunction": COLUMN_STATS, "sourceFields": list(columns), "indexOptions": {}}
        for name, column in secondary.items():
            found[name] = {"indexName": name, "indexType": "secondary_index", "indexFunction": "identity",
                           "sourceFields": [column], "indexOptions": {}, "version": "V2"}
        defs_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(defs_path, json.dumps(defs, indent=2).encode("utf-8"))
        raw["hoodie.table.index.defs.path"] = _INDEX_DEFS
    header = "#Updated at " + datetime.now(UTC).isoformat().replace("+00:00", "Z")
    atomic_write(path, _properties_text(raw, header))

