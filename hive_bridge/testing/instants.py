"""What the test writers put on a table's timeline: the Avro schemas of instant metadata (commits, rollback plans
and metadata, compaction plans), the commit metadata of a write and its serialisation (JSON for timeline layout
1, Avro container files for layout 2), and the atomic file writes they all use.
"""

from __future__ import annotations

import io
import json
import os
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa

from hive_bridge.formats.avro_schema import arrow_to_avro_schema
from hive_bridge.table.table import META_FIELDS

__all__ = [
    "CLEAN_METADATA_SCHEMA",
    "COMPACTION_PLAN_SCHEMA",
    "ROLLBACK_METADATA_SCHEMA",
    "ROLLBACK_PLAN_SCHEMA",
    "NewFile",
    "WriteResult",
    "atomic_write",
    "avro_bytes",
    "avro_record",
    "commit_avro_schema",
    "commit_metadata",
    "is_completed_file",
    "json_bytes",
    "plus_one_ms",
]


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


def commit_avro_schema(replace: bool) -> dict[str, Any]:
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

#: Hudi's HoodieCleanMetadata (the completed clean instant), the fields readers look at
CLEAN_METADATA_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieCleanMetadata", "namespace": _AVRO_NS, "fields": [
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieCleanPartitionMetadata", "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "policy", "type": "string"},
                {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
                {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
                {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None},
            ]}}},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}

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
class NewFile:
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


def commit_metadata(
    table_name: str, files: Sequence[NewFile], operation: str, schema: pa.Schema,
    replaced: Sequence[tuple[str, str]] | None, *, compacted: bool = False, with_schema: bool = False,
) -> dict[str, Any]:
    """The commit metadata of table ``table_name``; the writer schema goes in `extraMetadata` when files were written or `with_schema`
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
    avro = arrow_to_avro_schema(data_schema, f"{table_name}_record", f"hoodie.{table_name}")
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


_COMPLETED_NAME = re.compile(r"^\d+(?:_\d+)?\.[a-z]+$")


def is_completed_file(name: str) -> bool:
    """Whether a timeline file name is a completed instant's (`<i>.<action>` or `<i>_<completion>.<action>`;
    the layout-1 commit inflight `<i>.inflight` is not)."""
    return _COMPLETED_NAME.match(name) is not None and not name.endswith(".inflight")


def plus_one_ms(stamp: str) -> str:
    try:
        dt = datetime.strptime(stamp[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
        ms = int(stamp[14:17] or "0") + 1
        if ms >= 1000:
            dt = datetime.fromtimestamp(dt.timestamp() + 1, UTC)
            ms = 0
        return dt.strftime("%Y%m%d%H%M%S") + f"{ms:03d}"
    except ValueError:
        return str(int(stamp) + 1).zfill(17)


def json_bytes(meta: dict[str, Any]) -> bytes:
    return json.dumps(meta).encode("utf-8")


def avro_bytes(meta: dict[str, Any], replace: bool) -> bytes:
    return avro_record(commit_avro_schema(replace), meta)


def avro_record(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    """An Avro container file of one record, as Hudi serialises instant metadata."""
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [record])
    return buf.getvalue()


def atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
