"""A small writer of Hudi tables (versions 6 and 8, copy-on-write and merge-on-read) from pyarrow tables, for
tests, benchmarks and the demo.

It writes what Hudi's own writer writes for the parts readers look at: `hoodie.properties`, the timeline
(requested / inflight / completed instant files; JSON commit metadata for version 6, Avro for version 8),
`.hoodie_partition_metadata`, base files `<fileId>_<writeToken>_<instant>.parquet` carrying Hudi's meta
columns and, for merge-on-read tables, log files `.<fileId>_<instant>.log.<version>_<writeToken>`.

Copy-on-write: inserts create file groups; upserts write new slices of the file groups holding the keys;
`insert_overwrite` writes a replacecommit. Any write can stop at inflight (`inflight=True`).

Merge-on-read (`table_type="MERGE_ON_READ"`), as Hudi 0.x (version 6) and 1.x (version 8) write it:

- `insert` / `upsert` / `delete` are deltacommits. Rows whose key lives in a file group (in its base file or in
  a log data block) go to a new log file of that group holding one data block (Avro, or parquet with
  `block_format="parquet"`); deletes go to a new log file holding one DELETE block (ordering value 0, as Spark
  SQL's DELETE writes: the delete applies whatever the ordering field says). Rows with new keys create new file
  groups with a base file (a bloom / simple index), or with `inserts_to_logs=True` log-only file groups (what a
  bucket or HBase index does).
- Log file names: version 6 names a log file after the *base instant of its file slice* and each deltacommit
  writes the next version (`.<fid>_<base>.log.1`, `.log.2`, ...); version 8 names it after the *deltacommit's
  own instant* (version 1). Records carry the meta columns; `_hoodie_file_name` holds the file id, as Hudi's
  append handle writes it.
- `rollback(instant)` undoes a deltacommit (completed or not): a rollback plan (`rollback.requested`, Avro
  HoodieRollbackPlan), then the files the instant created are deleted; on version 6 each file group it appended
  to gets a new log version holding a rollback COMMAND block (INSTANT_TIME = the rollback instant,
  TARGET_INSTANT_TIME = the rolled-back one) and the appended log file stays; version 8 (Hudi 1.x) deletes the
  instant's log files instead ("V8+ rollback should not have logBlocksToBeDeleted"). The rolled-back instant's
  timeline files are removed and a completed rollback (Avro HoodieRollbackMetadata) written.
- `compact()` plans (`compaction.requested`, Avro HoodieCompactionPlan) and runs a compaction: every slice with
  log files becomes a new base file (same file id, the compaction instant) of its merged rows, completed as a
  `commit` with `compacted: true` and operation COMPACT.

Merging (compaction, and the model tests compare against): per record key, log records apply in log order
over the base file's row; with an ordering (precombine) field a record replaces the current one unless its
ordering value is smaller (event-time ordering, ties go to the later write), without one the later write wins;
a delete removes the key (later records bring it back). Blocks of instants that are not completed, or were
rolled back, are skipped. hudi-rs merges only tables with an ordering field (else it concatenates), so tests
that read merged rows with hudi-rs need one.
"""

from __future__ import annotations

import io
import json
import os
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.avro_schema import arrow_to_avro_schema, avro_to_arrow_schema
from hive_bridge.formats.logfile import (
    BlockType,
    HeaderKey,
    data_block_table,
    delete_block_keys,
    read_log_file,
)
from hive_bridge.layout.fsview import (
    HIVE_DEFAULT_PARTITION,
    FileSlice,
    parse_base_file_name,
    parse_log_file_name,
)
from hive_bridge.layout.properties import HOODIE_DIR, PROPERTIES_FILE, TableProperties
from hive_bridge.table.table import META_FIELDS, HudiTable
from hive_bridge.testing.logfile_writer import (
    avro_block_content,
    delete_block_content,
    encode_block,
    parquet_block_content,
    rollback_block,
)

PARTITION_METADATA = ".hoodie_partition_metadata"
COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
#: `HoodieRecordMerger` strategy ids Hudi records in hoodie.properties
EVENT_TIME_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
BLOCK_FORMATS = ("avro", "parquet")
_DATA_BLOCKS = frozenset({BlockType.AVRO_DATA, BlockType.PARQUET_DATA})


def _nullable_long() -> list[str]:
    return ["null", "long"]


_WRITE_STAT_FIELDS: list[tuple[str, Any]] = [
    ("fileId", ["null", "string"]),
    ("path", ["null", "string"]),
    ("prevCommit", ["null", "string"]),
    ("numWrites", _nullable_long()),
    ("numDeletes", _nullable_long()),
    ("numUpdateWrites", _nullable_long()),
    ("numInserts", _nullable_long()),
    ("totalWriteBytes", _nullable_long()),
    ("totalWriteErrors", _nullable_long()),
    ("partitionPath", ["null", "string"]),
    ("totalLogRecords", _nullable_long()),
    ("totalLogFiles", _nullable_long()),
    ("totalUpdatedRecordsCompacted", _nullable_long()),
    ("totalLogBlocks", _nullable_long()),
    ("totalCorruptLogBlock", _nullable_long()),
    ("totalRollbackBlocks", _nullable_long()),
    ("fileSizeInBytes", _nullable_long()),
    ("logVersion", ["null", "int"]),
    ("logOffset", _nullable_long()),
    ("baseFile", ["null", "string"]),
    ("logFiles", ["null", {"type": "array", "items": "string"}]),
    ("prevBaseFile", ["null", "string"]),
    ("minEventTime", _nullable_long()),
    ("maxEventTime", _nullable_long()),
    ("totalLogFilesCompacted", _nullable_long()),
    ("totalLogReadTimeMs", _nullable_long()),
    ("totalLogSizeCompacted", _nullable_long()),
    ("tempPath", ["null", "string"]),
    ("numUpdates", _nullable_long()),
]


def _commit_avro_schema(replace: bool) -> dict[str, Any]:
    write_stat = {
        "type": "record",
        "name": "HoodieWriteStat",
        "namespace": "org.apache.hudi.avro.model",
        "fields": [{"name": n, "type": t, "default": None} for n, t in _WRITE_STAT_FIELDS],
    }
    fields: list[dict[str, Any]] = [
        {"name": "partitionToWriteStats",
         "type": ["null", {"type": "map", "values": {"type": "array", "items": write_stat}}], "default": None},
        {"name": "compacted", "type": ["null", "boolean"], "default": None},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
        {"name": "version", "type": ["null", "int"], "default": None},
        {"name": "operationType", "type": ["null", "string"], "default": None},
    ]
    if replace:
        fields.append({"name": "partitionToReplaceFileIds",
                       "type": ["null", {"type": "map", "values": {"type": "array", "items": "string"}}],
                       "default": None})
    return {
        "type": "record",
        "name": "HoodieReplaceCommitMetadata" if replace else "HoodieCommitMetadata",
        "namespace": "org.apache.hudi.avro.model",
        "fields": fields,
    }


_AVRO_NS = "org.apache.hudi.avro.model"
_STRINGS = {"type": "array", "items": "string"}
_INSTANT_INFO = {"type": "record", "name": "HoodieInstantInfo", "namespace": _AVRO_NS, "fields": [
    {"name": "commitTime", "type": "string"}, {"name": "action", "type": "string"}]}

#: HoodieRollbackPlan (rollback.requested)
ROLLBACK_PLAN_SCHEMA: dict[str, Any] = {"type": "record", "name": "HoodieRollbackPlan", "namespace": _AVRO_NS, "fields": [
    {"name": "instantToRollback", "type": ["null", _INSTANT_INFO], "default": None},
    {"name": "RollbackRequests", "default": None, "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "HoodieRollbackRequest", "namespace": _AVRO_NS, "fields": [
            {"name": "partitionPath", "type": "string"},
            {"name": "fileId", "type": ["null", "string"], "default": None},
            {"name": "latestBaseInstant", "type": ["null", "string"], "default": None},
            {"name": "filesToBeDeleted", "type": _STRINGS, "default": []},
            {"name": "logBlocksToBeDeleted", "type": ["null", {"type": "map", "values": "long"}], "default": None},
        ]}}]},
    {"name": "version", "type": ["int", "null"], "default": 1},
]}

#: HoodieRollbackMetadata (completed rollback)
ROLLBACK_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieRollbackMetadata", "namespace": _AVRO_NS, "fields": [
        {"name": "startRollbackTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "commitsRollback", "type": _STRINGS},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieRollbackPartitionMetadata", "namespace": _AVRO_NS, "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "successDeleteFiles", "type": _STRINGS},
                {"name": "failedDeleteFiles", "type": _STRINGS},
                {"name": "rollbackLogFiles", "type": ["null", {"type": "map", "values": "long"}], "default": None},
                {"name": "logFilesFromFailedCommit", "type": ["null", {"type": "map", "values": "long"}],
                 "default": None},
            ]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "instantsRollback", "type": {"type": "array", "items": _INSTANT_INFO}, "default": []},
    ]}

#: HoodieCompactionPlan (compaction.requested)
COMPACTION_PLAN_SCHEMA: dict[str, Any] = {"type": "record", "name": "HoodieCompactionPlan", "namespace": _AVRO_NS, "fields": [
    {"name": "operations", "default": None, "type": ["null", {"type": "array", "items": {
        "type": "record", "name": "HoodieCompactionOperation", "namespace": _AVRO_NS, "fields": [
            {"name": "baseInstantTime", "type": ["null", "string"]},
            {"name": "deltaFilePaths", "type": ["null", _STRINGS], "default": None},
            {"name": "dataFilePath", "type": ["null", "string"], "default": None},
            {"name": "fileId", "type": ["null", "string"]},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
            {"name": "bootstrapFilePath", "type": ["null", "string"], "default": None},
        ]}}]},
    {"name": "extraMetadata", "type": ["null", {"type": "map", "values": "string"}], "default": None},
    {"name": "version", "type": ["int", "null"], "default": 1},
    {"name": "strategy", "default": None, "type": ["null", {
        "type": "record", "name": "HoodieCompactionStrategy", "namespace": _AVRO_NS, "fields": [
            {"name": "compactorClassName", "type": ["null", "string"], "default": None},
            {"name": "strategyParams", "type": ["null", {"type": "map", "values": "string"}], "default": None},
            {"name": "version", "type": ["int", "null"], "default": 1},
        ]}]},
    {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False},
    {"name": "missingSchedulePartitions", "type": ["null", _STRINGS], "default": None},
]}


@dataclass(frozen=True)
class WriteResult:
    """One write: its instant, action, the files written (relative paths: base files, and log files of
    merge-on-read writes) and whether it completed. A rollback lists the log files holding its rollback
    blocks in `files` and the files it deleted in `deleted`."""

    instant: str
    action: str
    files: tuple[str, ...]
    completed: bool
    replaced: tuple[tuple[str, str], ...] = ()
    deleted: tuple[str, ...] = ()


@dataclass(frozen=True)
class _NewFile:
    partition: str
    file_id: str
    name: str
    rows: int
    size: int
    prev_commit: str | None
    prev_base_file: str | None
    inserts: int
    updates: int
    deletes: int = 0
    #: log files: their version, the slice's base file name ("" for none) and the log files the stat lists
    log_version: int | None = None
    base_file: str | None = None
    log_files: tuple[str, ...] | None = None
    #: extra write-stat fields (compaction counters)
    extra: tuple[tuple[str, int], ...] = ()


@dataclass
class _Merged:
    """A file slice's merged rows, and what compaction statistics count."""

    table: pa.Table | None
    log_records: int = 0
    log_blocks: int = 0
    rollback_blocks: int = 0
    updated: int = 0
    inserted: int = 0
    deleted: int = 0


@dataclass
class _LogPart:
    """One readable block of a slice's logs, in log order: data records (a table) or deleted keys."""

    instant: str
    table: pa.Table | None = None
    deleted: list[tuple[str, str]] = field(default_factory=list)


class HudiWriter:
    """Writes one Hudi table; creates it (hoodie.properties) if the folder has none.

    `table_type` must be the table's type when it exists (COPY_ON_WRITE, the default, or MERGE_ON_READ)."""

    def __init__(
        self,
        base_path: str | os.PathLike[str],
        *,
        table_name: str | None = None,
        version: int = 6,
        table_type: str = COPY_ON_WRITE,
        partition_fields: Sequence[str] = (),
        hive_style: bool = True,
        record_key_fields: Sequence[str] = ("id",),
        precombine_field: str | None = None,
        populate_meta_fields: bool = True,
        rows_per_file: int | None = None,
    ) -> None:
        self.base_path = Path(base_path).absolute()
        self.rows_per_file = rows_per_file
        self._last_instant = "0"
        self._task = 0
        self._partitions_done: set[str] = set()
        table_type = table_type.upper()
        if table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise HudiTableError(f"{self.base_path}: unknown table type {table_type!r} (COPY_ON_WRITE or MERGE_ON_READ)")
        prop_file = self.base_path / HOODIE_DIR / PROPERTIES_FILE
        if not prop_file.exists():
            if version not in (6, 8):
                raise HudiTableError(f"{self.base_path}: the writer writes table versions 6 and 8, not {version}")
            if not record_key_fields:
                raise HudiTableError(f"{self.base_path}: a Hudi table needs at least one record key field")
            if table_type == MERGE_ON_READ and not populate_meta_fields:
                raise HudiTableError(f"{self.base_path}: the writer writes merge-on-read tables with meta fields only")
            self._create(
                table_name or self.base_path.name, version, table_type, list(partition_fields), hive_style,
                list(record_key_fields), precombine_field, populate_meta_fields,
            )
        self.properties = TableProperties.load(self.base_path)
        if self.properties.table_type not in (COPY_ON_WRITE, MERGE_ON_READ):
            raise HudiTableError(f"{prop_file}: the writer writes COPY_ON_WRITE and MERGE_ON_READ tables only")
        if self.properties.table_type != table_type:
            raise HudiTableError(
                f"{prop_file}: the table is {self.properties.table_type}; this writer was asked for {table_type} "
                f"(pass table_type={self.properties.table_type!r})"
            )
        if self.properties.version not in (6, 8):
            raise HudiTableError(f"{prop_file}: the writer writes table versions 6 and 8 only")
        if not self.properties.base_files_are_parquet:
            # its parquet files would not be listed in a table of another format: rows written, never read
            raise HudiTableError(
                f"{prop_file}: the writer writes parquet base files only; this table's base file format is "
                f"{self.properties.base_file_format!r}"
            )
        if self.is_mor and not self.properties.populate_meta_fields:
            raise HudiTableError(f"{prop_file}: the writer writes merge-on-read tables with meta fields only")
        existing = [p.name for p in self.properties.timeline_dir.iterdir()] if self.properties.timeline_dir.is_dir() \
            else []
        stamps = [n.split(".", 1)[0].split("_")[-1] for n in existing if n[:1].isdigit()]
        if stamps:
            self._last_instant = max(stamps)

    # ---------------------------------------------------------------- setup
    def _create(
        self, name: str, version: int, table_type: str, partition_fields: list[str], hive_style: bool,
        record_keys: list[str], precombine: str | None, populate_meta: bool,
    ) -> None:
        hoodie = self.base_path / HOODIE_DIR
        hoodie.mkdir(parents=True, exist_ok=True)
        if len(record_keys) > 1:
            keygen, keygen_type = "org.apache.hudi.keygen.ComplexKeyGenerator", "COMPLEX"
        elif partition_fields:
            keygen, keygen_type = "org.apache.hudi.keygen.SimpleKeyGenerator", "SIMPLE"
        else:
            keygen, keygen_type = "org.apache.hudi.keygen.NonpartitionedKeyGenerator", "NON_PARTITION"
        props: dict[str, str] = {
            "hoodie.table.name": name,
            "hoodie.table.type": table_type,
            "hoodie.table.version": str(version),
            "hoodie.timeline.layout.version": "2" if version >= 8 else "1",
            "hoodie.table.recordkey.fields": ",".join(record_keys),
            "hoodie.datasource.write.hive_style_partitioning": "true" if hive_style else "false",
            "hoodie.datasource.write.partitionpath.urlencode": "false",
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.archivelog.folder": "archived",
            "hoodie.database.name": "default",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.populate.meta.fields": "true" if populate_meta else "false",
        }
        if partition_fields:
            props["hoodie.table.partition.fields"] = ",".join(partition_fields)
        if precombine:
            props["hoodie.table.precombine.field"] = precombine
        if version >= 8:
            props.update({
                "hoodie.table.initial.version": str(version),
                "hoodie.timeline.path": "timeline",
                "hoodie.timeline.history.path": "history",
                "hoodie.table.keygenerator.type": keygen_type,
                "hoodie.record.merge.mode": "EVENT_TIME_ORDERING" if precombine else "COMMIT_TIME_ORDERING",
            })
            (hoodie / "timeline").mkdir(exist_ok=True)
        else:
            props["hoodie.table.keygenerator.class"] = keygen
        if table_type == MERGE_ON_READ:
            # what the real v6 (Hudi 0.14/0.15) and v8 (Hudi 1.0) merge-on-read tables record: the payload
            # class compaction merges with, and the merger strategy matching the ordering
            props["hoodie.compaction.payload.class"] = DEFAULT_PAYLOAD if precombine else OVERWRITE_PAYLOAD
            strategy = EVENT_TIME_STRATEGY if precombine else COMMIT_TIME_STRATEGY
            if version >= 8:
                props["hoodie.record.merge.strategy.id"] = strategy
            else:
                props["hoodie.compaction.record.merger.strategy"] = strategy
        lines = ["#Properties saved on " + datetime.now(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")]
        for key in sorted(props):
            value = props[key].replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
            lines.append(f"{key}={value}")
        _atomic_write(hoodie / PROPERTIES_FILE, ("\n".join(lines) + "\n").encode("latin-1"))

    # -------------------------------------------------------------- public
    @property
    def is_mor(self) -> bool:
        return self.properties.table_type == MERGE_ON_READ

    def table(self) -> HudiTable:
        return HudiTable.open(self.base_path)

    def new_instant(self) -> str:
        """A fresh instant time (yyyyMMddHHmmssSSS, UTC), later than every instant written so far."""
        now = datetime.now(UTC)
        stamp = now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"
        if stamp <= self._last_instant:
            stamp = _plus_one_ms(self._last_instant)
        self._last_instant = stamp
        return stamp

    def insert(
        self, data: pa.Table, *, rows_per_file: int | None = None, instant: str | None = None,
        inflight: bool = False, inserts_to_logs: bool = False, block_format: str = "avro",
    ) -> WriteResult:
        """An insert: every row goes into new file groups (`rows_per_file` rows per file). A commit on
        copy-on-write tables; a deltacommit on merge-on-read ones, where `inserts_to_logs=True` makes the new
        groups log-only (one `block_format` data block per log file)."""
        self._check_block_format(block_format)
        if not self.is_mor:
            if inserts_to_logs:
                raise HudiTableError(f"{self.base_path}: inserts_to_logs needs a MERGE_ON_READ table")
            instant = self._take_instant(instant)
            self._start(instant, "commit")
            files = self._write_new_groups(data, instant, rows_per_file or self.rows_per_file)
            return self._finish(instant, "commit", files, "INSERT", data.schema, inflight)
        return self._mor_write(data, instant, inflight, rows_per_file, "INSERT", block_format, inserts_to_logs,
                               route=False)

    def upsert(
        self, data: pa.Table, *, rows_per_file: int | None = None, instant: str | None = None,
        inflight: bool = False, block_format: str = "avro", inserts_to_logs: bool = False,
    ) -> WriteResult:
        """An upsert. Copy-on-write: a commit; rows whose key lives in a file group replace it there (a new file
        slice of the group, same file id); the other rows create new file groups. Merge-on-read: a deltacommit;
        rows whose key lives in a file group go to a new log file of the group (one `block_format` data block),
        the other rows to new file groups (base files, or log-only groups with `inserts_to_logs=True`)."""
        self._check_block_format(block_format)
        if self.is_mor:
            return self._mor_write(data, instant, inflight, rows_per_file, "UPSERT", block_format, inserts_to_logs,
                                   route=True)
        if inserts_to_logs:
            raise HudiTableError(f"{self.base_path}: inserts_to_logs needs a MERGE_ON_READ table")
        instant = self._take_instant(instant)
        self._start(instant, "commit")
        table = self.table()
        keys = self._record_keys(data)
        parts = self._partition_paths(data)
        slices = {(s.partition_path, s.file_id): s for s in table.latest_file_slices() if s.base_file is not None}
        touched_partitions = set(parts)
        key_home: dict[tuple[str, str], str] = {}
        key_columns = ["_hoodie_record_key"] if self.properties.populate_meta_fields \
            else list(self.properties.record_key_fields)
        for (partition, file_id), s in slices.items():
            if partition not in touched_partitions:
                continue
            assert s.base_file is not None
            keys_only = pq.read_table(s.base_file.full_path, columns=key_columns)
            for k in self._record_keys(keys_only, prefer_meta=True):
                key_home[(partition, k)] = file_id
        updates_by_group: dict[str, list[int]] = {}
        insert_rows: list[int] = []
        for i, (k, p) in enumerate(zip(keys, parts, strict=True)):
            home = key_home.get((p, k))
            if home is None:
                insert_rows.append(i)
            else:
                updates_by_group.setdefault(home, []).append(i)
        files: list[_NewFile] = []
        for file_id, rows in sorted(updates_by_group.items()):
            partition = parts[rows[0]]
            s = slices[(partition, file_id)]
            assert s.base_file is not None
            old = pq.read_table(s.base_file.full_path)
            incoming = data.take(pa.array(rows, pa.int64()))
            new_keys = {keys[r] for r in rows}
            old_keys = self._record_keys(old, prefer_meta=True)
            keep = pa.array([k not in new_keys for k in old_keys], pa.bool_())
            kept = old.filter(keep)
            files.append(self._write_base_file(
                incoming, partition, instant, file_id=file_id, carried=kept,
                prev_commit=s.base_instant, prev_base_file=s.base_file.name,
            ))
        if insert_rows:
            files += self._write_new_groups(data.take(pa.array(insert_rows, pa.int64())), instant,
                                            rows_per_file or self.rows_per_file)
        return self._finish(instant, "commit", files, "UPSERT", data.schema, inflight)

    def insert_overwrite(
        self, data: pa.Table, *, whole_table: bool = False, rows_per_file: int | None = None,
        instant: str | None = None, inflight: bool = False,
    ) -> WriteResult:
        """A replacecommit: new file groups for `data`; the file groups of the partitions it touches (or of
        the whole table) are replaced."""
        instant = self._take_instant(instant)
        self._start(instant, "replacecommit")
        table = self.table()
        touched = set(self._partition_paths(data))
        replaced = sorted(
            (s.partition_path, s.file_id) for s in table.latest_file_slices()
            if whole_table or s.partition_path in touched
        )
        files = self._write_new_groups(data, instant, rows_per_file or self.rows_per_file)
        op = "INSERT_OVERWRITE_TABLE" if whole_table else "INSERT_OVERWRITE"
        return self._finish(instant, "replacecommit", files, op, data.schema, inflight, replaced)

    def delete(self, keys: pa.Table, *, instant: str | None = None, inflight: bool = False) -> WriteResult:
        """A merge-on-read deltacommit deleting the rows whose keys `keys` holds (it needs the record key
        fields, and the partition fields of a partitioned table): one log file with a DELETE block per file
        group holding some of the keys. Keys no file group holds are ignored."""
        self._require_mor("delete")
        instant = self._take_instant(instant)
        self._check_no_pending_compaction()
        self._start(instant, "deltacommit")
        table = self.table()
        record_keys = self._record_keys(keys)
        parts = self._partition_paths(keys)
        homes = self._key_homes(table, set(parts))
        by_group: dict[tuple[str, str], list[str]] = {}
        for k, p in zip(record_keys, parts, strict=True):
            s = homes.get((p, k))
            if s is not None:
                group = by_group.setdefault((p, s.file_id), [])
                if k not in group:
                    group.append(k)
        slices = {(s.partition_path, s.file_id): s for s in table.latest_file_slices()}
        schema_json = self._block_schema_json(self._full_schema(keys.schema, table))
        files: list[_NewFile] = []
        versions = _LogVersions()
        for (partition, file_id), group_keys in sorted(by_group.items()):
            content = delete_block_content((k, partition, 0) for k in group_keys)
            block = encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json},
                                 content)
            files.append(self._write_log_file(partition, file_id, slices[(partition, file_id)], instant, block,
                                              versions, deletes=len(group_keys)))
        # the table's schema for the commit metadata; a table with none yet (every write rolled back) gets the
        # keys' columns
        schema = self._data_schema_for_meta(table)
        return self._finish(instant, "deltacommit", files, "DELETE", schema if len(schema) else keys.schema, inflight)

    def rollback(self, target: str | WriteResult, *, instant: str | None = None) -> WriteResult:
        """Roll back a deltacommit (or a copy-on-write commit), completed or not, as Hudi does (see the module
        docstring): its files are deleted, version-6 file groups it appended to get a rollback command block,
        its timeline files are removed and a completed rollback instant is written."""
        target_ts = target.instant if isinstance(target, WriteResult) else target
        table = self.table()
        timeline = table.timeline
        found = timeline.get(target_ts)
        if found is None:
            raise HudiTableError(f"{self.base_path}: no instant {target_ts} on the timeline to roll back")
        expected = "deltacommit" if self.is_mor else "commit"
        if found.action != expected:
            raise HudiTableError(
                f"{self.base_path}: the writer rolls back {expected} instants, not the {found.action} {target_ts}"
            )
        later_compaction = [i.timestamp for i in timeline.instants
                            if i.timestamp > target_ts and i.action in ("compaction", "commit")]
        if self.is_mor and later_compaction:
            raise HudiTableError(
                f"{self.base_path}: {target_ts} cannot be rolled back: compaction {later_compaction[0]} came after it"
            )
        later = [i.timestamp for i in timeline.completed_writes if i.timestamp > target_ts]
        if found.is_completed and later:
            # Hudi's validateRollbackCommitSequence: a completed instant goes only when it is the latest
            raise HudiTableError(
                f"{self.base_path}: {target_ts} cannot be rolled back: {later[0]} completed after it (roll back "
                "later instants first)"
            )
        instant = self._take_instant(instant)
        layout2 = self.properties.timeline_layout_version >= 2
        # what the target wrote: base files named with its instant; log files named with it (version 8, or
        # version-6 log-only groups it created); version-6 log files it appended a block to
        to_delete: list[tuple[str, str, str]] = []  # (partition, file id, name)
        appended: dict[tuple[str, str, str], list[tuple[str, int]]] = {}  # (partition, fid, base) -> logs
        for partition in table.partition_paths():
            directory = self.base_path / partition if partition else self.base_path
            for entry in sorted(os.scandir(directory), key=lambda e: e.name):
                if not entry.is_file():
                    continue
                name = entry.name
                log = parse_log_file_name(name)
                if log is not None:
                    fid, ts, _version, _token = log
                    if ts == target_ts:
                        to_delete.append((partition, fid, name))
                    elif not layout2 and ts < target_ts and any(
                        b.instant == target_ts and b.block_type != BlockType.COMMAND
                        for b in read_log_file(entry.path).blocks
                    ):
                        appended.setdefault((partition, fid, ts), []).append((name, entry.stat().st_size))
                    continue
                base = parse_base_file_name(name)
                if base is not None and base[2] == target_ts:
                    to_delete.append((partition, base[0], name))
        requests: list[dict[str, Any]] = []
        for partition, fid, name in to_delete:
            requests.append({
                "partitionPath": partition, "fileId": fid if layout2 else "",
                "latestBaseInstant": target_ts if layout2 else "",
                "filesToBeDeleted": [self._abs(partition, name)], "logBlocksToBeDeleted": {},
            })
        for (partition, fid, base_ts), logs in sorted(appended.items()):
            requests.append({
                "partitionPath": partition, "fileId": fid, "latestBaseInstant": base_ts, "filesToBeDeleted": [],
                "logBlocksToBeDeleted": {"file:" + self._abs(partition, n): size for n, size in logs},
            })
        d = self._timeline_dir()
        plan = {"instantToRollback": {"commitTime": target_ts, "action": found.action},
                "RollbackRequests": requests, "version": 1}
        _atomic_write(d / f"{instant}.rollback.requested", _avro_record(ROLLBACK_PLAN_SCHEMA, plan))
        _atomic_write(d / f"{instant}.rollback.inflight", b"")
        # a completed target first goes back to inflight (HoodieActiveTimeline.revertToInflight)
        for p in d.iterdir():
            if p.name.startswith((f"{target_ts}_", f"{target_ts}.")) and _is_completed_file(p.name):
                p.unlink()
        started = datetime.now(UTC)
        partition_meta: dict[str, dict[str, Any]] = {}

        def meta_of(partition: str) -> dict[str, Any]:
            return partition_meta.setdefault(partition, {
                "partitionPath": partition, "successDeleteFiles": [], "failedDeleteFiles": [],
                "rollbackLogFiles": {}, "logFilesFromFailedCommit": {},
            })

        deleted: list[str] = []
        for partition, _fid, name in to_delete:
            path = self._abs(partition, name)
            size = os.path.getsize(path)
            os.remove(path)
            meta_of(partition)["successDeleteFiles"].append(path)
            if name.startswith("."):
                meta_of(partition)["logFilesFromFailedCommit"]["file:" + path] = size
            deleted.append(f"{partition}/{name}" if partition else name)
        written: list[str] = []
        versions = _LogVersions()
        for (partition, fid, base_ts), logs in sorted(appended.items()):
            block = rollback_block(instant, target_ts)
            version = versions.next(self._partition_dir(partition), fid, base_ts)
            _task, token = self._next_token()
            name = f".{fid}_{base_ts}.log.{version}_{token}"
            with open(self._abs(partition, name), "wb") as f:
                f.write(block)
            meta_of(partition)["rollbackLogFiles"]["file:" + self._abs(partition, name)] = len(block)
            for n, size in logs:
                meta_of(partition)["logFilesFromFailedCommit"]["file:" + self._abs(partition, n)] = size
            written.append(f"{partition}/{name}" if partition else name)
        meta = {
            "startRollbackTime": instant,
            "timeTakenInMillis": int((datetime.now(UTC) - started).total_seconds() * 1000),
            "totalFilesDeleted": len(deleted),
            "commitsRollback": [target_ts],
            "partitionMetadata": partition_meta,
            "version": 1,
            "instantsRollback": [{"commitTime": target_ts, "action": found.action}],
        }
        if layout2:
            _atomic_write(d / f"{instant}_{self.new_instant()}.rollback", _avro_record(ROLLBACK_METADATA_SCHEMA, meta))
        else:
            _atomic_write(d / f"{instant}.rollback", _avro_record(ROLLBACK_METADATA_SCHEMA, meta))
        # then the rolled-back instant's requested / inflight files go
        for p in d.iterdir():
            if p.name.startswith(f"{target_ts}.") and not p.name.startswith("."):
                p.unlink()
        return WriteResult(instant, "rollback", tuple(written), True, deleted=tuple(deleted))

    def compact(self, *, instant: str | None = None, inflight: bool = False) -> WriteResult:
        """Compact every latest slice that has log files (a merge-on-read table): a compaction plan
        (`compaction.requested`), an empty `compaction.inflight`, a new base file per slice (same file id, the
        compaction instant) holding its merged rows, and the completed `commit` (unless `inflight`). With no
        log file anywhere nothing is written (Hudi schedules no plan): the result has no files and did not
        complete."""
        self._require_mor("compact")
        self._check_no_pending_compaction()
        table = self.table()
        todo = [s for s in table.latest_file_slices() if s.log_files]
        instant = self._take_instant(instant)
        if not todo:
            return WriteResult(instant, "commit", (), False)
        d = self._timeline_dir()
        operations = []
        for s in todo:
            operations.append({
                "baseInstantTime": s.base_instant,
                "deltaFilePaths": [lf.name for lf in s.log_files],
                "dataFilePath": None if s.base_file is None else s.base_file.name,
                "fileId": s.file_id,
                "partitionPath": s.partition_path,
                "metrics": {
                    "TOTAL_LOG_FILES": float(len(s.log_files)), "TOTAL_IO_MB": 0.0, "TOTAL_IO_READ_MB": 0.0,
                    "TOTAL_LOG_FILES_SIZE": float(sum(lf.size for lf in s.log_files)), "TOTAL_IO_WRITE_MB": 0.0,
                },
                "bootstrapFilePath": None,
            })
        plan = {"operations": operations, "extraMetadata": {}, "version": 2, "strategy": None,
                "preserveHoodieMetadata": False, "missingSchedulePartitions": []}
        _atomic_write(d / f"{instant}.compaction.requested", _avro_record(COMPACTION_PLAN_SCHEMA, plan))
        _atomic_write(d / f"{instant}.compaction.inflight", b"")
        ok = self._block_filter(table)
        files: list[_NewFile] = []
        schema: pa.Schema | None = None
        for s in todo:
            merged = self._merge_slice(table, ok, s)
            files.append(self._write_compacted(s, merged, instant))
            if merged.table is not None:
                schema = merged.table.schema
        result_files = tuple(f"{f.partition}/{f.name}" if f.partition else f.name for f in files)
        if inflight:
            return WriteResult(instant, "commit", result_files, False)
        meta = self._commit_metadata(files, "COMPACT", schema or self._data_schema_for_meta(table), None,
                                     compacted=True, with_schema=True)
        if self.properties.timeline_layout_version >= 2:
            _atomic_write(d / f"{instant}_{self.new_instant()}.commit", _avro_bytes(meta, False))
        else:
            _atomic_write(d / f"{instant}.commit", _json_bytes(meta))
        return WriteResult(instant, "commit", result_files, True)

    def merged_rows(self) -> pa.Table | None:
        """The table's rows now, as the writer merges them (what a snapshot query returns), meta columns
        included; None for a table with no slice."""
        table = self.table()
        ok = self._block_filter(table)
        parts = [self._merge_slice(table, ok, s).table for s in table.latest_file_slices()]
        present = [t for t in parts if t is not None]
        if not present:
            return None
        return pa.concat_tables(present, promote_options="permissive")

    # ---------------------------------------------------------- merge-on-read
    def _require_mor(self, what: str) -> None:
        if not self.is_mor:
            raise HudiTableError(f"{self.base_path}: {what} is for MERGE_ON_READ tables (this one is "
                                 f"{self.properties.table_type})")

    def _check_block_format(self, block_format: str) -> None:
        if block_format not in BLOCK_FORMATS:
            raise HudiTableError(f"unknown log block format {block_format!r} (avro or parquet)")

    def _check_no_pending_compaction(self) -> None:
        pending = [i.timestamp for i in self.table().timeline.pending if i.action == "compaction"]
        if pending:
            raise HudiTableError(f"{self.base_path}: compaction {pending[0]} is pending: the writer does not write "
                                 "beside a pending compaction")

    def _mor_write(
        self, data: pa.Table, instant: str | None, inflight: bool, rows_per_file: int | None, operation: str,
        block_format: str, inserts_to_logs: bool, *, route: bool,
    ) -> WriteResult:
        instant = self._take_instant(instant)
        self._check_no_pending_compaction()
        self._start(instant, "deltacommit")
        table = self.table()
        keys = self._record_keys(data)
        parts = self._partition_paths(data)
        homes = self._key_homes(table, set(parts)) if route else {}
        updates: dict[tuple[str, str], list[int]] = {}
        insert_rows: list[int] = []
        for i, (k, p) in enumerate(zip(keys, parts, strict=True)):
            s = homes.get((p, k))
            if s is None:
                insert_rows.append(i)
            else:
                updates.setdefault((p, s.file_id), []).append(i)
        files: list[_NewFile] = []
        versions = _LogVersions()
        full_schema = self._full_schema(data.schema, None)
        slices = {(s.partition_path, s.file_id): s for s in homes.values()}
        for (partition, file_id), rows in sorted(updates.items()):
            chunk = data.take(pa.array(rows, pa.int64()))
            block = self._data_block(chunk, partition, file_id, instant, block_format, full_schema)
            files.append(self._write_log_file(partition, file_id, slices[(partition, file_id)], instant, block,
                                              versions, rows=chunk.num_rows, updates=chunk.num_rows))
        if insert_rows:
            inserts = data.take(pa.array(insert_rows, pa.int64())) if len(insert_rows) < data.num_rows else data
            step_default = rows_per_file or self.rows_per_file
            if not inserts_to_logs:
                files += self._write_new_groups(inserts, instant, step_default)
            else:
                for partition, chunk in self._partition_chunks(inserts, step_default):
                    file_id = f"{uuid.uuid4()}-0"
                    block = self._data_block(chunk, partition, file_id, instant, block_format, full_schema)
                    files.append(self._write_log_file(partition, file_id, None, instant, block, versions,
                                                      rows=chunk.num_rows, inserts=chunk.num_rows))
        return self._finish(instant, "deltacommit", files, operation, data.schema, inflight)

    def _key_homes(self, table: HudiTable, partitions: set[str]) -> dict[tuple[str, str], FileSlice]:
        """(partition, record key) -> the latest slice holding the key, in its base file or in a committed log
        data block (an index that finds keys in base files and logs: bloom / simple on base files, and the
        log-only groups a bucket index fills)."""
        ok = self._block_filter(table)
        homes: dict[tuple[str, str], FileSlice] = {}
        for s in table.latest_file_slices():
            if s.partition_path not in partitions:
                continue
            if s.base_file is not None:
                base_keys = pq.read_table(s.base_file.full_path, columns=["_hoodie_record_key"])
                for k in base_keys.column(0).to_pylist():
                    homes[(s.partition_path, k)] = s
            for part in self._log_parts(ok, s):
                if part.table is not None:
                    for k in part.table.column("_hoodie_record_key").to_pylist():
                        homes[(s.partition_path, k)] = s
        return homes

    def _block_filter(self, table: HudiTable) -> Callable[[str | None], bool]:
        """Whether a log block written at an instant counts: its instant completed and was not rolled back
        (instants older than the active timeline count unless pending)."""
        timeline = table.timeline
        completed = {i.timestamp for i in timeline.completed_writes}
        rolled_back = timeline.rolled_back_timestamps
        pending = {i.timestamp for i in timeline.pending}
        earliest = min(completed) if completed else None

        def ok(ts: str | None) -> bool:
            if ts is None or ts in rolled_back:
                return False
            if ts in completed:
                return True
            return earliest is not None and ts < earliest and ts not in pending

        return ok

    def _log_parts(self, ok: Callable[[str | None], bool], s: FileSlice) -> list[_LogPart]:
        """The slice's readable log blocks in log order, without blocks of uncommitted or rolled-back instants
        (rollback command blocks name the rolled-back instants)."""
        contents = [(lf.full_path, read_log_file(lf.full_path)) for lf in s.log_files]
        targets = {b.target_instant for _, c in contents for b in c.blocks if b.is_rollback and ok(b.instant)}
        out: list[_LogPart] = []
        for path, c in contents:
            for b in c.blocks:
                ts = b.instant
                if b.block_type == BlockType.COMMAND or ts is None or not ok(ts) or ts in targets:
                    continue
                if b.block_type in _DATA_BLOCKS:
                    out.append(_LogPart(ts, table=data_block_table(b, path)))
                elif b.block_type == BlockType.DELETE:
                    out.append(_LogPart(ts, deleted=delete_block_keys(b, path)))
                else:
                    raise HudiTableError(f"{path}: the writer cannot merge {BlockType(b.block_type).name} blocks")
        return out

    def _merge_slice(self, table: HudiTable, ok: Callable[[str | None], bool], s: FileSlice) -> _Merged:
        """The slice's merged rows (base file rows updated by log records, deleted keys removed)."""
        ordering_field = self.properties.precombine_field
        parts: list[pa.Table] = []
        base = pq.read_table(s.base_file.full_path) if s.base_file is not None else None
        log_parts = self._log_parts(ok, s)
        merged = _Merged(None)
        # key -> (part index, row index, ordering value), or None once deleted
        winner: dict[str, tuple[int, int, Any] | None] = {}
        base_keys: set[str] = set()

        def offer(t: pa.Table) -> None:
            idx = len(parts)
            parts.append(t)
            keys = t.column("_hoodie_record_key").to_pylist()
            orderings = t.column(ordering_field).to_pylist() if ordering_field and ordering_field in t.column_names \
                else [None] * t.num_rows
            for i, (k, o) in enumerate(zip(keys, orderings, strict=True)):
                cur = winner.get(k)
                if cur is not None and o is not None and cur[2] is not None and o < cur[2]:
                    continue  # an older event: the current record stays
                winner[k] = (idx, i, o)

        if base is not None:
            offer(base)
            base_keys = set(winner)
        for part in log_parts:
            merged.log_blocks += 1
            if part.table is not None:
                merged.log_records += part.table.num_rows
                offer(part.table)
            else:
                merged.log_records += len(part.deleted)
                for k, _p in part.deleted:
                    if k in winner:
                        winner[k] = None
        take: dict[int, list[int]] = {}
        for k, w in winner.items():
            if w is None:
                merged.deleted += k in base_keys
                continue
            take.setdefault(w[0], []).append(w[1])
            if w[0] > 0 or base is None:
                if k in base_keys:
                    merged.updated += 1
                else:
                    merged.inserted += 1
        target = base.schema if base is not None else self._log_only_schema(table, parts)
        # a column added by a later write lives only in its log records: keep it (null in older records)
        added: dict[str, pa.Field] = {}
        for part_table in parts:
            for fld in part_table.schema:
                if target.get_field_index(fld.name) < 0:
                    added.setdefault(fld.name, fld.with_nullable(True))
        if added:
            target = pa.schema(list(target) + list(added.values()))
        pieces = [_conform(parts[i].take(pa.array(sorted(rows), pa.int64())), target)
                  for i, rows in sorted(take.items())]
        merged.table = pa.concat_tables(pieces) if pieces else target.empty_table()
        return merged

    def _log_only_schema(self, table: HudiTable, parts: list[pa.Table]) -> pa.Schema:
        try:
            return table.arrow_schema(include_meta_fields=True)
        except HudiTableError:
            return parts[0].schema

    def _write_compacted(self, s: FileSlice, merged: _Merged, instant: str) -> _NewFile:
        _task, token = self._next_token()
        name = f"{s.file_id}_{token}_{instant}.parquet"
        directory = self._partition_dir(s.partition_path)
        assert merged.table is not None
        data = merged.table
        col = data.schema.get_field_index("_hoodie_file_name")
        if col >= 0:
            data = data.set_column(col, "_hoodie_file_name", pa.array([name] * data.num_rows, pa.string()))
        buf = pa.BufferOutputStream()
        pq.write_table(data, buf)
        payload = buf.getvalue()
        with open(directory / name, "wb") as f:
            f.write(payload)
        log_size = sum(lf.size for lf in s.log_files)
        return _NewFile(
            s.partition_path, s.file_id, name, data.num_rows, payload.size, s.base_instant,
            None if s.base_file is None else s.base_file.name, merged.inserted, merged.updated, merged.deleted,
            extra=(
                ("totalLogRecords", merged.log_records), ("totalLogFilesCompacted", len(s.log_files)),
                ("totalLogSizeCompacted", log_size), ("totalUpdatedRecordsCompacted", merged.updated),
                ("totalLogBlocks", merged.log_blocks),
            ),
        )

    def _full_schema(self, data_schema: pa.Schema, table: HudiTable | None) -> pa.Schema:
        """The schema of log records: meta columns, then the data columns (the table's when `data_schema` is
        only keys, as for deletes)."""
        data = pa.schema([f for f in data_schema if f.name not in META_FIELDS])
        if table is not None:
            try:
                data = table.arrow_schema(include_meta_fields=False)
            except HudiTableError:
                pass
        return pa.schema([pa.field(m, pa.string()) for m in META_FIELDS] + list(data))

    def _data_schema_for_meta(self, table: HudiTable) -> pa.Schema:
        try:
            return table.arrow_schema(include_meta_fields=False)
        except HudiTableError:
            return pa.schema([])

    def _block_schema_json(self, full_schema: pa.Schema) -> str:
        name = self.properties.name
        avro = arrow_to_avro_schema(full_schema, f"{name}_record", f"hoodie.{name}")
        return json.dumps(avro, separators=(",", ":"))

    def _data_block(
        self, chunk: pa.Table, partition: str, file_id: str, instant: str, block_format: str,
        full_schema: pa.Schema,
    ) -> bytes:
        """One data block of `chunk`'s rows with their meta columns (`_hoodie_file_name` = the file id, as
        Hudi's append handle writes it)."""
        task, _token = self._next_token()
        with_meta = self._with_meta(chunk, partition, instant, task, file_id)
        name = self.properties.name
        avro = arrow_to_avro_schema(full_schema, f"{name}_record", f"hoodie.{name}")
        schema_json = json.dumps(avro, separators=(",", ":"))
        header = {HeaderKey.INSTANT_TIME: instant, HeaderKey.SCHEMA: schema_json}
        if block_format == "parquet":
            # Hudi writes parquet blocks from Avro records: the columns have the Avro schema's types (no
            # 8/16-bit ints, `element` list items), which readers reconcile with the SCHEMA header
            as_avro = _conform(with_meta, avro_to_arrow_schema(schema_json))
            return encode_block(BlockType.PARQUET_DATA, header, parquet_block_content(as_avro))
        return encode_block(BlockType.AVRO_DATA, header, avro_block_content(_avro_records(with_meta), avro))

    def _write_log_file(
        self, partition: str, file_id: str, s: FileSlice | None, instant: str, block: bytes,
        versions: _LogVersions, *, rows: int = 0, inserts: int = 0, updates: int = 0, deletes: int = 0,
    ) -> _NewFile:
        """A new log file of a file group holding `block`. Version 6: named after the slice's base instant,
        the group's next log version; version 8: named after `instant`."""
        layout2 = self.properties.timeline_layout_version >= 2
        directory = self._partition_dir(partition)
        self._ensure_partition_metadata(directory, partition, instant)
        base_ts = instant if (layout2 or s is None) else s.base_instant
        version = versions.next(directory, file_id, base_ts)
        _task, token = self._next_token()
        name = f".{file_id}_{base_ts}.log.{version}_{token}"
        with open(directory / name, "wb") as f:
            f.write(block)
        log_files: tuple[str, ...]
        if layout2:
            base_file, log_files, prev = "", (name,), instant
        else:
            base_file = "" if s is None or s.base_file is None else s.base_file.name
            earlier = () if s is None else tuple(lf.name for lf in s.log_files)
            log_files, prev = (*earlier, name), base_ts
        return _NewFile(partition, file_id, name, rows, len(block), prev, None, inserts, updates, deletes,
                        log_version=version, base_file=base_file, log_files=log_files)

    def _partition_chunks(self, data: pa.Table, rows_per_file: int | None) -> list[tuple[str, pa.Table]]:
        parts = self._partition_paths(data)
        by_partition: dict[str, list[int]] = {}
        for i, p in enumerate(parts):
            by_partition.setdefault(p, []).append(i)
        out: list[tuple[str, pa.Table]] = []
        for partition in sorted(by_partition):
            rows = by_partition[partition]
            chunk = data if len(by_partition) == 1 else data.take(pa.array(rows, pa.int64()))
            step = rows_per_file or chunk.num_rows
            for start in range(0, chunk.num_rows, step):
                out.append((partition, chunk.slice(start, step)))
        return out

    def _partition_dir(self, partition: str) -> Path:
        directory = self.base_path / partition if partition else self.base_path
        if partition not in self._partitions_done:
            directory.mkdir(parents=True, exist_ok=True)
        return directory

    def _abs(self, partition: str, name: str) -> str:
        return str(self._partition_dir(partition) / name)

    def _next_token(self) -> tuple[int, str]:
        self._task += 1
        task = self._task
        return task, f"{task}-{task % 1000}-{task}"

    # ------------------------------------------------------------ internals
    def _take_instant(self, instant: str | None) -> str:
        if instant is None:
            return self.new_instant()
        if not (instant.isdigit() and len(instant) == 17):
            raise HudiTableError(f"instant {instant!r} is not a 17-digit instant time")
        if instant <= self._last_instant:
            raise HudiTableError(f"instant {instant} is not later than the table's last instant {self._last_instant}")
        self._last_instant = instant
        return instant

    def _timeline_dir(self) -> Path:
        d = self.properties.timeline_dir
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _start(self, instant: str, action: str) -> None:
        d = self._timeline_dir()
        _atomic_write(d / f"{instant}.{action}.requested", b"")

    def _finish(
        self, instant: str, action: str, files: list[_NewFile], operation: str, schema: pa.Schema,
        inflight: bool, replaced: Sequence[tuple[str, str]] = (),
    ) -> WriteResult:
        d = self._timeline_dir()
        layout2 = self.properties.timeline_layout_version >= 2
        inflight_name = f"{instant}.inflight" if action == "commit" else f"{instant}.{action}.inflight"
        pending_meta = self._commit_metadata([], operation, schema, None)
        _atomic_write(d / inflight_name, b"" if layout2 else _json_bytes(pending_meta))
        result_files = tuple(f"{f.partition}/{f.name}" if f.partition else f.name for f in files)
        if inflight:
            return WriteResult(instant, action, result_files, False, tuple(replaced))
        meta = self._commit_metadata(files, operation, schema, replaced if action == "replacecommit" else None,
                                     with_schema=True)
        if layout2:
            completion = self.new_instant()
            _atomic_write(d / f"{instant}_{completion}.{action}", _avro_bytes(meta, action == "replacecommit"))
        else:
            _atomic_write(d / f"{instant}.{action}", _json_bytes(meta))
        return WriteResult(instant, action, result_files, True, tuple(replaced))

    def _commit_metadata(
        self, files: Sequence[_NewFile], operation: str, schema: pa.Schema,
        replaced: Sequence[tuple[str, str]] | None, *, compacted: bool = False, with_schema: bool = False,
    ) -> dict[str, Any]:
        """Commit metadata; the writer schema goes in `extraMetadata` when files were written or `with_schema`
        (completed instants, even empty ones: readers such as hudi-rs take the table schema from there)."""
        stats: dict[str, list[dict[str, Any]]] = {}
        for f in files:
            path = f"{f.partition}/{f.name}" if f.partition else f.name
            stat: dict[str, Any] = {
                "fileId": f.file_id, "path": path, "prevCommit": f.prev_commit or "null",
                "numWrites": f.rows, "numDeletes": f.deletes, "numUpdateWrites": f.updates, "numInserts": f.inserts,
                "totalWriteBytes": f.size, "totalWriteErrors": 0, "partitionPath": f.partition,
                "totalLogRecords": 0, "totalLogFiles": None, "totalUpdatedRecordsCompacted": 0,
                "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
                "fileSizeInBytes": f.size, "logVersion": f.log_version, "logOffset": None, "baseFile": f.base_file,
                "logFiles": None if f.log_files is None else list(f.log_files), "prevBaseFile": f.prev_base_file,
                "minEventTime": None, "maxEventTime": None,
                "totalLogFilesCompacted": 0, "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0,
                "tempPath": None, "numUpdates": f.updates,
            }
            if f.log_version is not None:
                stat["logOffset"] = 0
            stat.update(dict(f.extra))
            stats.setdefault(f.partition, []).append(stat)
        data_schema = pa.schema([f for f in schema if f.name not in META_FIELDS])
        avro = arrow_to_avro_schema(data_schema, f"{self.properties.name}_record", f"hoodie.{self.properties.name}")
        meta: dict[str, Any] = {
            "partitionToWriteStats": stats,
            "compacted": compacted,
            "extraMetadata": {"schema": json.dumps(avro, separators=(",", ":"))} if (files or with_schema) and len(
                data_schema) else {},
            "version": 1,
            "operationType": operation,
        }
        if replaced is not None:
            by_partition: dict[str, list[str]] = {}
            for partition, file_id in replaced:
                by_partition.setdefault(partition, []).append(file_id)
            meta["partitionToReplaceFileIds"] = by_partition
        return meta

    def _record_keys(self, data: pa.Table, prefer_meta: bool = False) -> list[str]:
        if prefer_meta and "_hoodie_record_key" in data.column_names:
            return [str(v) for v in data.column("_hoodie_record_key").to_pylist()]
        fields = self.properties.record_key_fields
        missing = [f for f in fields if f not in data.column_names]
        if missing:
            raise HudiTableError(f"{self.base_path}: data lacks record key field(s) {', '.join(missing)}")
        cols = [_as_strings(data.column(f)) for f in fields]
        if len(fields) == 1:
            return ["__null__" if v is None else v for v in cols[0]]
        return [
            ",".join(f"{f}:{'__null__' if v is None else v}" for f, v in zip(fields, row, strict=True))
            for row in zip(*cols, strict=True)
        ]

    def _partition_paths(self, data: pa.Table) -> list[str]:
        fields = self.properties.partition_fields
        if not fields:
            return [""] * data.num_rows
        missing = [f for f in fields if f not in data.column_names]
        if missing:
            raise HudiTableError(f"{self.base_path}: data lacks partition field(s) {', '.join(missing)}")
        hive = self.properties.hive_style_partitioning
        cols = [_as_strings(data.column(f)) for f in fields]
        out: list[str] = []
        for row in zip(*cols, strict=True):
            segs = []
            for f, v in zip(fields, row, strict=True):
                value = HIVE_DEFAULT_PARTITION if v is None or v == "" else v
                segs.append(f"{f}={value}" if hive else value)
            out.append("/".join(segs))
        return out

    def _write_new_groups(self, data: pa.Table, instant: str, rows_per_file: int | None) -> list[_NewFile]:
        if data.num_rows == 0:
            return []
        return [self._write_base_file(chunk, partition, instant)
                for partition, chunk in self._partition_chunks(data, rows_per_file)]

    def _with_meta(self, data: pa.Table, partition: str, instant: str, task: int, file_name: str) -> pa.Table:
        """`data` (meta columns dropped) with Hudi's meta columns in front."""
        data = data.select([c for c in data.column_names if c not in META_FIELDS])
        n = data.num_rows
        keys = self._record_keys(data)
        meta_cols = [
            pa.array([instant] * n, pa.string()),
            pa.array([f"{instant}_{task}_{i}" for i in range(n)], pa.string()),
            pa.array(keys, pa.string()),
            pa.array([partition] * n, pa.string()),
            pa.array([file_name] * n, pa.string()),
        ]
        return pa.Table.from_arrays(
            meta_cols + list(data.columns),
            schema=pa.schema([pa.field(m, pa.string()) for m in META_FIELDS] + list(data.schema)),
        )

    def _write_base_file(
        self, incoming: pa.Table, partition: str, instant: str, *, file_id: str | None = None,
        carried: pa.Table | None = None, prev_commit: str | None = None, prev_base_file: str | None = None,
    ) -> _NewFile:
        task, token = self._next_token()
        file_id = file_id or f"{uuid.uuid4()}-0"
        name = f"{file_id}_{token}_{instant}.parquet"
        directory = self._partition_dir(partition)
        self._ensure_partition_metadata(directory, partition, instant)
        data = incoming.select([c for c in incoming.column_names if c not in META_FIELDS])
        n = data.num_rows
        if self.properties.populate_meta_fields:
            data = self._with_meta(data, partition, instant, task, name)
        inserts, updates = n, 0
        if carried is not None and carried.num_rows:
            if self.properties.populate_meta_fields:
                carried = carried.set_column(
                    carried.schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name",
                    pa.array([name] * carried.num_rows, pa.string()),
                )
            try:
                data = pa.concat_tables([carried, data], promote_options="permissive")
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise HudiTableError(f"{directory / name}: upsert data does not match the table schema: {exc}") \
                    from None
            updates = n
            inserts = 0
        elif carried is not None:
            updates, inserts = n, 0
        # serialize in memory, then one plain write: file creation dominates on small files, and a
        # partly written file is harmless (its instant is not committed yet)
        buf = pa.BufferOutputStream()
        pq.write_table(data, buf)
        payload = buf.getvalue()
        with open(directory / name, "wb") as f:
            f.write(payload)
        size = payload.size
        return _NewFile(partition, file_id, name, data.num_rows, size, prev_commit, prev_base_file, inserts, updates)

    def _ensure_partition_metadata(self, directory: Path, partition: str, instant: str) -> None:
        if partition in self._partitions_done:
            return
        marker = directory / PARTITION_METADATA
        self._partitions_done.add(partition)
        if marker.exists():
            return
        depth = len(partition.split("/")) if partition else 0
        text = (
            "#partition metadata\n"
            f"#{datetime.now(UTC).strftime('%a %b %d %H:%M:%S UTC %Y')}\n"
            f"commitTime={instant}\npartitionDepth={depth}\n"
        )
        _atomic_write(marker, text.encode("latin-1"))


class _LogVersions:
    """The next free log version of (file id, name instant) in a partition folder, listed once per folder."""

    def __init__(self) -> None:
        self._latest: dict[Path, dict[tuple[str, str], int]] = {}

    def next(self, directory: Path, file_id: str, name_instant: str) -> int:
        latest = self._latest.get(directory)
        if latest is None:
            latest = {}
            with os.scandir(directory) as entries:
                for e in entries:
                    parsed = parse_log_file_name(e.name) if e.name.startswith(".") else None
                    if parsed is not None:
                        key = (parsed[0], parsed[1])
                        latest[key] = max(latest.get(key, 0), parsed[2])
            self._latest[directory] = latest
        version = latest.get((file_id, name_instant), 0) + 1
        latest[(file_id, name_instant)] = version
        return version


def write_hudi_table(
    base_path: str | os.PathLike[str],
    data: pa.Table,
    *,
    version: int = 6,
    table_type: str = COPY_ON_WRITE,
    partition_fields: Sequence[str] = (),
    hive_style: bool = True,
    record_key_fields: Sequence[str] = ("id",),
    rows_per_file: int | None = None,
    table_name: str | None = None,
    precombine_field: str | None = None,
) -> HudiWriter:
    """Create a table at `base_path` holding `data` in one insert (a commit, or a deltacommit on a
    merge-on-read table); returns its writer."""
    writer = HudiWriter(
        base_path, table_name=table_name, version=version, table_type=table_type,
        partition_fields=partition_fields, hive_style=hive_style, record_key_fields=record_key_fields,
        rows_per_file=rows_per_file, precombine_field=precombine_field,
    )
    writer.insert(data)
    return writer


# ------------------------------------------------------------------ helpers
_COMPLETED_NAME = re.compile(r"^\d+(?:_\d+)?\.[a-z]+$")


def _is_completed_file(name: str) -> bool:
    """Whether a timeline file name is a completed instant's (`<i>.<action>` or `<i>_<completion>.<action>`;
    the layout-1 commit inflight `<i>.inflight` is not)."""
    return _COMPLETED_NAME.match(name) is not None and not name.endswith(".inflight")


def _conform(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """`t` with `schema`'s columns in its order and types (missing columns as nulls)."""
    cols = []
    for f in schema:
        if f.name in t.column_names:
            col = t.column(f.name)
            cols.append(col if col.type == f.type else col.cast(f.type))
        else:
            cols.append(pa.nulls(t.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def _avro_value_fixer(typ: pa.DataType) -> Callable[[Any], Any] | None:
    """What turns a `to_pylist` value of `typ` into what fastavro writes (maps: dicts), None if nothing."""
    if pa.types.is_map(typ):
        inner = _avro_value_fixer(typ.item_type)
        return lambda v: None if v is None else {k: (x if inner is None else inner(x)) for k, x in v}
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        inner = _avro_value_fixer(typ.value_type)
        if inner is None:
            return None
        return lambda v: None if v is None else [inner(x) for x in v]
    if pa.types.is_struct(typ):
        fixers = {f.name: _avro_value_fixer(f.type) for f in typ}
        if not any(fixers.values()):
            return None
        return lambda v: None if v is None else {
            k: (x if fixers.get(k) is None else fixers[k](x)) for k, x in v.items()  # type: ignore[misc]
        }
    return None


def _avro_records(table: pa.Table) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = table.to_pylist()
    fixers = {f.name: fx for f in table.schema if (fx := _avro_value_fixer(f.type)) is not None}
    for row in rows:
        for name, fx in fixers.items():
            row[name] = fx(row[name])
    return rows


def _as_strings(column: pa.ChunkedArray) -> list[str | None]:
    typ = column.type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return column.to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_timestamp(typ) or pa.types.is_date(typ) or pa.types.is_decimal(typ):
        return pc.cast(column, pa.string()).to_pylist()  # type: ignore[no-any-return]
    return [None if v is None else str(v) for v in column.to_pylist()]


def _plus_one_ms(stamp: str) -> str:
    try:
        dt = datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        ms = int(stamp[14:17] or "0") + 1
        if ms >= 1000:
            dt = datetime.fromtimestamp(dt.timestamp() + 1, UTC)
            ms = 0
        return dt.strftime("%Y%m%d%H%M%S") + f"{ms:03d}"
    except ValueError:
        return str(int(stamp) + 1).zfill(17)


def _json_bytes(meta: dict[str, Any]) -> bytes:
    return json.dumps(meta).encode("utf-8")


def _avro_bytes(meta: dict[str, Any], replace: bool) -> bytes:
    return _avro_record(_commit_avro_schema(replace), meta)


def _avro_record(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    """An Avro container file of one record, as Hudi serialises instant metadata."""
    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record])
    return buf.getvalue()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


__all__ = ["COPY_ON_WRITE", "MERGE_ON_READ", "HudiWriter", "WriteResult", "write_hudi_table"]
