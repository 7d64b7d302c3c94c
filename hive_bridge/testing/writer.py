"""A small writer of Hudi copy-on-write tables (versions 6 and 8) from pyarrow tables, for tests, benchmarks
and the demo.

It writes what Hudi's own writer writes for the parts readers look at: `hoodie.properties`, the timeline
(requested / inflight / completed instant files; JSON commit metadata for version 6, Avro for version 8),
`.hoodie_partition_metadata`, and base files `<fileId>_<writeToken>_<instant>.parquet` carrying Hudi's meta
columns. Inserts create file groups; upserts write new slices of the file groups holding the keys;
`insert_overwrite` writes a replacecommit. Any write can stop at inflight (`inflight=True`).
"""

from __future__ import annotations

import io
import json
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hive_bridge.table.avro_schema import arrow_to_avro_schema
from hive_bridge.table.errors import HudiTableError
from hive_bridge.table.fsview import HIVE_DEFAULT_PARTITION
from hive_bridge.table.properties import HOODIE_DIR, PROPERTIES_FILE, TableProperties
from hive_bridge.table.table import META_FIELDS, HudiTable

PARTITION_METADATA = ".hoodie_partition_metadata"


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


@dataclass(frozen=True)
class WriteResult:
    """One write: its instant, action, the base files written (relative paths) and whether it completed."""

    instant: str
    action: str
    files: tuple[str, ...]
    completed: bool
    replaced: tuple[tuple[str, str], ...] = ()


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


class HudiWriter:
    """Writes one Hudi copy-on-write table; creates it (hoodie.properties) if the folder has none."""

    def __init__(
        self,
        base_path: str | os.PathLike[str],
        *,
        table_name: str | None = None,
        version: int = 6,
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
        prop_file = self.base_path / HOODIE_DIR / PROPERTIES_FILE
        if not prop_file.exists():
            if version not in (6, 8):
                raise HudiTableError(f"{self.base_path}: the writer writes table versions 6 and 8, not {version}")
            if not record_key_fields:
                raise HudiTableError(f"{self.base_path}: a Hudi table needs at least one record key field")
            self._create(
                table_name or self.base_path.name, version, list(partition_fields), hive_style,
                list(record_key_fields), precombine_field, populate_meta_fields,
            )
        self.properties = TableProperties.load(self.base_path)
        if self.properties.table_type != "COPY_ON_WRITE":
            raise HudiTableError(f"{prop_file}: the writer only writes COPY_ON_WRITE tables")
        if self.properties.version not in (6, 8):
            raise HudiTableError(f"{prop_file}: the writer writes table versions 6 and 8 only")
        if not self.properties.base_files_are_parquet:
            # its parquet files would not be listed in a table of another format: rows written, never read
            raise HudiTableError(
                f"{prop_file}: the writer writes parquet base files only; this table's base file format is "
                f"{self.properties.base_file_format!r}"
            )
        existing = [p.name for p in self.properties.timeline_dir.iterdir()] if self.properties.timeline_dir.is_dir() \
            else []
        stamps = [n.split(".", 1)[0].split("_")[-1] for n in existing if n[:1].isdigit()]
        if stamps:
            self._last_instant = max(stamps)

    # ---------------------------------------------------------------- setup
    def _create(
        self, name: str, version: int, partition_fields: list[str], hive_style: bool, record_keys: list[str],
        precombine: str | None, populate_meta: bool,
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
            "hoodie.table.type": "COPY_ON_WRITE",
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
        lines = ["#Properties saved on " + datetime.now(UTC).strftime("%a %b %d %H:%M:%S UTC %Y")]
        for key in sorted(props):
            value = props[key].replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
            lines.append(f"{key}={value}")
        _atomic_write(hoodie / PROPERTIES_FILE, ("\n".join(lines) + "\n").encode("latin-1"))

    # -------------------------------------------------------------- public
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
        inflight: bool = False,
    ) -> WriteResult:
        """An insert commit: every row goes into new file groups (`rows_per_file` rows per base file)."""
        instant = self._take_instant(instant)
        self._start(instant, "commit")
        files = self._write_new_groups(data, instant, rows_per_file or self.rows_per_file)
        return self._finish(instant, "commit", files, "INSERT", data.schema, inflight)

    def upsert(
        self, data: pa.Table, *, rows_per_file: int | None = None, instant: str | None = None,
        inflight: bool = False,
    ) -> WriteResult:
        """An upsert commit: rows whose key lives in a file group replace it there (a new file slice of the
        group, same file id); the other rows create new file groups."""
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
        meta = self._commit_metadata(files, operation, schema, replaced if action == "replacecommit" else None)
        if layout2:
            completion = self.new_instant()
            _atomic_write(d / f"{instant}_{completion}.{action}", _avro_bytes(meta, action == "replacecommit"))
        else:
            _atomic_write(d / f"{instant}.{action}", _json_bytes(meta))
        return WriteResult(instant, action, result_files, True, tuple(replaced))

    def _commit_metadata(
        self, files: Sequence[_NewFile], operation: str, schema: pa.Schema,
        replaced: Sequence[tuple[str, str]] | None,
    ) -> dict[str, Any]:
        stats: dict[str, list[dict[str, Any]]] = {}
        for f in files:
            path = f"{f.partition}/{f.name}" if f.partition else f.name
            stats.setdefault(f.partition, []).append({
                "fileId": f.file_id, "path": path, "prevCommit": f.prev_commit or "null",
                "numWrites": f.rows, "numDeletes": 0, "numUpdateWrites": f.updates, "numInserts": f.inserts,
                "totalWriteBytes": f.size, "totalWriteErrors": 0, "partitionPath": f.partition,
                "totalLogRecords": 0, "totalLogFiles": None, "totalUpdatedRecordsCompacted": 0,
                "totalLogBlocks": 0, "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0,
                "fileSizeInBytes": f.size, "logVersion": None, "logOffset": None, "baseFile": None,
                "logFiles": None, "prevBaseFile": f.prev_base_file, "minEventTime": None, "maxEventTime": None,
                "totalLogFilesCompacted": 0, "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0,
                "tempPath": None, "numUpdates": f.updates,
            })
        data_schema = pa.schema([f for f in schema if f.name not in META_FIELDS])
        avro = arrow_to_avro_schema(data_schema, f"{self.properties.name}_record", f"hoodie.{self.properties.name}")
        meta: dict[str, Any] = {
            "partitionToWriteStats": stats,
            "compacted": False,
            "extraMetadata": {"schema": json.dumps(avro, separators=(",", ":"))} if files else {},
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
        parts = self._partition_paths(data)
        by_partition: dict[str, list[int]] = {}
        for i, p in enumerate(parts):
            by_partition.setdefault(p, []).append(i)
        files: list[_NewFile] = []
        for partition in sorted(by_partition):
            rows = by_partition[partition]
            chunk = data if len(by_partition) == 1 else data.take(pa.array(rows, pa.int64()))
            step = rows_per_file or chunk.num_rows
            for start in range(0, chunk.num_rows, step):
                files.append(self._write_base_file(chunk.slice(start, step), partition, instant))
        return files

    def _write_base_file(
        self, incoming: pa.Table, partition: str, instant: str, *, file_id: str | None = None,
        carried: pa.Table | None = None, prev_commit: str | None = None, prev_base_file: str | None = None,
    ) -> _NewFile:
        self._task += 1
        task = self._task
        file_id = file_id or f"{uuid.uuid4()}-0"
        token = f"{task}-{task % 1000}-{task}"
        name = f"{file_id}_{token}_{instant}.parquet"
        directory = self.base_path / partition if partition else self.base_path
        if partition not in self._partitions_done:
            directory.mkdir(parents=True, exist_ok=True)
        self._ensure_partition_metadata(directory, partition, instant)
        data = incoming.select([c for c in incoming.column_names if c not in META_FIELDS])
        n = data.num_rows
        if self.properties.populate_meta_fields:
            keys = self._record_keys(data)
            meta_cols = [
                pa.array([instant] * n, pa.string()),
                pa.array([f"{instant}_{task}_{i}" for i in range(n)], pa.string()),
                pa.array(keys, pa.string()),
                pa.array([partition] * n, pa.string()),
                pa.array([name] * n, pa.string()),
            ]
            data = pa.Table.from_arrays(
                meta_cols + list(data.columns),
                schema=pa.schema([pa.field(m, pa.string()) for m in META_FIELDS] + list(data.schema)),
            )
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


def write_hudi_table(
    base_path: str | os.PathLike[str],
    data: pa.Table,
    *,
    version: int = 6,
    partition_fields: Sequence[str] = (),
    hive_style: bool = True,
    record_key_fields: Sequence[str] = ("id",),
    rows_per_file: int | None = None,
    table_name: str | None = None,
    precombine_field: str | None = None,
) -> HudiWriter:
    """Create a copy-on-write table at `base_path` holding `data` in one insert commit; returns its writer."""
    writer = HudiWriter(
        base_path, table_name=table_name, version=version, partition_fields=partition_fields,
        hive_style=hive_style, record_key_fields=record_key_fields, rows_per_file=rows_per_file,
        precombine_field=precombine_field,
    )
    writer.insert(data)
    return writer


# ------------------------------------------------------------------ helpers
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
    import fastavro

    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(_commit_avro_schema(replace)), [meta])
    return buf.getvalue()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


__all__ = ["HudiWriter", "WriteResult", "write_hudi_table"]

