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

The writer's parts: :mod:`~hive_bridge.testing.table_files` (the table's files: properties, timeline files,
base and log files), :mod:`~hive_bridge.testing.instants` (instant metadata and its serialisation) and
:mod:`~hive_bridge.testing.merge_model` (the merge); this module holds the write operations.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import BlockType, HeaderKey, read_log_file
from hive_bridge.layout.fsview import BaseFile, FileSlice, parse_base_file_name, parse_log_file_name
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.instants import (
    CLEAN_METADATA_SCHEMA,
    COMPACTION_PLAN_SCHEMA,
    ROLLBACK_METADATA_SCHEMA,
    ROLLBACK_PLAN_SCHEMA,
    NewFile,
    WriteResult,
    atomic_write,
    avro_bytes,
    avro_record,
    is_completed_file,
    json_bytes,
)
from hive_bridge.testing.logfile_writer import delete_block_content, encode_block, rollback_block
from hive_bridge.testing.merge_model import Merged, block_filter, log_parts, merge_slice
from hive_bridge.testing.table_files import (
    BLOCK_FORMATS,
    COMMIT_TIME_STRATEGY,
    COPY_ON_WRITE,
    DEFAULT_PAYLOAD,
    EVENT_TIME_STRATEGY,
    MERGE_ON_READ,
    OVERWRITE_PAYLOAD,
    PARTITION_METADATA,
    LogVersions,
    TableFiles,
)

__all__ = [
    "BLOCK_FORMATS",
    "COMMIT_TIME_STRATEGY",
    "COPY_ON_WRITE",
    "DEFAULT_PAYLOAD",
    "EVENT_TIME_STRATEGY",
    "MERGE_ON_READ",
    "OVERWRITE_PAYLOAD",
    "PARTITION_METADATA",
    "HudiWriter",
    "WriteResult",
    "write_hudi_table",
]


class HudiWriter(TableFiles):
    """Writes one Hudi table; creates it (hoodie.properties) if the folder has none.

    `table_type` must be the table's type when it exists (COPY_ON_WRITE, the default, or MERGE_ON_READ)."""

    # ------------------------------------------------------------ public
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
            for k in self._base_file_keys(s.base_file, key_columns):
                key_home[(partition, k)] = file_id
        updates_by_group: dict[str, list[int]] = {}
        insert_rows: list[int] = []
        for i, (k, p) in enumerate(zip(keys, parts, strict=True)):
            home = key_home.get((p, k))
            if home is None:
                insert_rows.append(i)
            else:
                updates_by_group.setdefault(home, []).append(i)
        files: list[NewFile] = []
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
        files: list[NewFile] = []
        versions = LogVersions()
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
        atomic_write(d / f"{instant}.rollback.requested", avro_record(ROLLBACK_PLAN_SCHEMA, plan))
        atomic_write(d / f"{instant}.rollback.inflight", b"")
        # a completed target first goes back to inflight (HoodieActiveTimeline.revertToInflight)
        for p in d.iterdir():
            if p.name.startswith((f"{target_ts}_", f"{target_ts}.")) and is_completed_file(p.name):
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
        versions = LogVersions()
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
            atomic_write(d / f"{instant}_{self.new_instant()}.rollback", avro_record(ROLLBACK_METADATA_SCHEMA, meta))
        else:
            atomic_write(d / f"{instant}.rollback", avro_record(ROLLBACK_METADATA_SCHEMA, meta))
        # then the rolled-back instant's requested / inflight files go
        for p in d.iterdir():
            if p.name.startswith(f"{target_ts}.") and not p.name.startswith("."):
                p.unlink()
        return WriteResult(instant, "rollback", tuple(written), True, deleted=tuple(deleted))

    def clean(self, retain_commits: int, *, instant: str | None = None,
              record_retained: bool = True) -> WriteResult:
        """A clean with Hudi's KEEP_LATEST_COMMITS policy: the earliest commit to retain is the
        ``retain_commits``-th latest completed write; every file slice older than the slice its group had as of
        then is deleted, and the file groups replaced by then are deleted whole. A completed ``clean`` instant
        (Avro HoodieCleanMetadata) lists the deleted files; ``record_retained=False`` leaves its
        ``earliestCommitToRetain`` empty (as a clean keeping file versions writes it)."""
        table = self.table()
        writes = table.timeline.completed_writes
        if retain_commits < 1 or len(writes) < retain_commits:
            raise HudiTableError(f"{self.base_path}: cannot retain {retain_commits} of {len(writes)} commits")
        retain = writes[-retain_commits].timestamp
        instant = self._take_instant(instant)
        kept = {(s.partition_path, s.file_id): s.base_instant for s in table.latest_file_slices(as_of=retain)}
        replaced = table.timeline.replaced_file_groups(retain)
        layout2 = self.properties.timeline_layout_version >= 2
        deleted: dict[str, list[str]] = {}
        for partition in table.partition_paths():
            directory = self._partition_dir(partition)
            for entry in sorted(os.scandir(directory), key=lambda e: e.name):
                log = parse_log_file_name(entry.name)
                base = None if log is not None else parse_base_file_name(entry.name)
                if log is not None:
                    fid, written = log[0], log[1]
                elif base is not None:
                    fid, written = base[0], base[2]
                else:
                    continue
                slice_base = kept.get((partition, fid))
                # older than the group's slice as of the retained commit (version-6 logs are named after their
                # slice's base instant, version-8 logs after their own: either way older than that slice)
                if (partition, fid) in replaced or (slice_base is not None and written < slice_base):
                    os.remove(entry.path)
                    deleted.setdefault(partition, []).append(self._abs(partition, entry.name))
        d = self._timeline_dir()
        atomic_write(d / f"{instant}.clean.requested", b"")
        atomic_write(d / f"{instant}.clean.inflight", b"")
        meta = {
            "startCleanTime": instant, "timeTakenInMillis": 1,
            "totalFilesDeleted": sum(map(len, deleted.values())),
            "earliestCommitToRetain": retain if record_retained else "",
            "lastCompletedCommitTimestamp": writes[-1].timestamp,
            "partitionMetadata": {p: {"partitionPath": p, "policy": "KEEP_LATEST_COMMITS", "deletePathPatterns": [
                f.rsplit("/", 1)[-1] for f in files], "successDeleteFiles": files, "failedDeleteFiles": [],
                "isPartitionDeleted": False} for p, files in deleted.items()},
            "version": 2,
        }
        name = f"{instant}_{self.new_instant()}.clean" if layout2 else f"{instant}.clean"
        atomic_write(d / name, avro_record(CLEAN_METADATA_SCHEMA, meta))
        return WriteResult(instant, "clean", (), True,
                           deleted=tuple(f"{p}/{f.rsplit('/', 1)[-1]}" if p else f.rsplit("/", 1)[-1]
                                         for p, files in deleted.items() for f in files))

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
        atomic_write(d / f"{instant}.compaction.requested", avro_record(COMPACTION_PLAN_SCHEMA, plan))
        atomic_write(d / f"{instant}.compaction.inflight", b"")
        ok = block_filter(table)
        files: list[NewFile] = []
        schema: pa.Schema | None = None
        for s in todo:
            merged = merge_slice(table, ok, s, self.properties.precombine_field)
            files.append(self._write_compacted(s, merged, instant))
            if merged.table is not None:
                schema = merged.table.schema
        result_files = tuple(f"{f.partition}/{f.name}" if f.partition else f.name for f in files)
        if inflight:
            return WriteResult(instant, "commit", result_files, False)
        meta = self._commit_metadata(files, "COMPACT", schema or self._data_schema_for_meta(table), None,
                                     compacted=True, with_schema=True)
        if self.properties.timeline_layout_version >= 2:
            atomic_write(d / f"{instant}_{self.new_instant()}.commit", avro_bytes(meta, False))
        else:
            atomic_write(d / f"{instant}.commit", json_bytes(meta))
        return WriteResult(instant, "commit", result_files, True)

    def merged_rows(self) -> pa.Table | None:
        """The table's rows now, as the writer merges them (what a snapshot query returns), meta columns
        included; None for a table with no slice."""
        table = self.table()
        ok = block_filter(table)
        parts = [merge_slice(table, ok, s, self.properties.precombine_field).table for s in table.latest_file_slices()]
        present = [t for t in parts if t is not None]
        if not present:
            return None
        return pa.concat_tables(present, promote_options="permissive")

    # ----------------------------------------------------- merge-on-read
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
        files: list[NewFile] = []
        versions = LogVersions()
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

    def _base_file_keys(self, base: BaseFile, key_columns: list[str]) -> list[str]:
        """The record keys of a base file, read once per writer: a file is known by its path, size and
        modification time, so a file rewritten in place is read again."""
        cache = self._keys_read
        known = (base.full_path, base.size, base.mtime)
        if known not in cache:
            keys_only = pq.read_table(base.full_path, columns=key_columns)
            cache[known] = self._record_keys(keys_only, prefer_meta=True)
        return cache[known]

    def _key_homes(self, table: HudiTable, partitions: set[str]) -> dict[tuple[str, str], FileSlice]:
        """(partition, record key) -> the latest slice holding the key, in its base file or in a committed log
        data block (an index that finds keys in base files and logs: bloom / simple on base files, and the
        log-only groups a bucket index fills)."""
        ok = block_filter(table)
        homes: dict[tuple[str, str], FileSlice] = {}
        for s in table.latest_file_slices():
            if s.partition_path not in partitions:
                continue
            if s.base_file is not None:
                base_keys = pq.read_table(s.base_file.full_path, columns=["_hoodie_record_key"])
                for k in base_keys.column(0).to_pylist():
                    homes[(s.partition_path, k)] = s
            for part in log_parts(ok, s):
                if part.table is not None:
                    for k in part.table.column("_hoodie_record_key").to_pylist():
                        homes[(s.partition_path, k)] = s
        return homes

    def _write_compacted(self, s: FileSlice, merged: Merged, instant: str) -> NewFile:
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
        return NewFile(
            s.partition_path, s.file_id, name, data.num_rows, payload.size, s.base_instant,
            None if s.base_file is None else s.base_file.name, merged.inserted, merged.updated, merged.deleted,
            extra=(
                ("totalLogRecords", merged.log_records), ("totalLogFilesCompacted", len(s.log_files)),
                ("totalLogSizeCompacted", log_size), ("totalUpdatedRecordsCompacted", merged.updated),
                ("totalLogBlocks", merged.log_blocks),
            ),
        )


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
