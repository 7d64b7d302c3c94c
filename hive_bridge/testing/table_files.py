"""The files of a Hudi table as the test writer lays them out: creating the table (``hoodie.properties``), instant
times and the timeline files of a write, meta columns, base files (``<fileId>_<writeToken>_<instant>.parquet``),
partition metadata and log files (``.<fileId>_<instant>.log.<version>_<writeToken>``, one data or delete block
each). :class:`TableFiles` is the base of :class:`~hive_bridge.testing.writer.HudiWriter`, which adds the write
operations (insert, upsert, delete, rollback, compaction).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.avro_schema import arrow_to_avro_schema, avro_to_arrow_schema
from hive_bridge.formats.logfile import BlockType, HeaderKey
from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION, FileSlice, parse_log_file_name
from hive_bridge.layout.properties import HOODIE_DIR, PROPERTIES_FILE, TableProperties
from hive_bridge.pruning.record_keys import EMPTY_PLACEHOLDER, NULL_PLACEHOLDER, complex_key
from hive_bridge.table.table import META_FIELDS, HudiTable
from hive_bridge.testing.bloom_writer import footer_entries
from hive_bridge.testing.instants import (
    NewFile,
    WriteResult,
    atomic_write,
    avro_bytes,
    commit_metadata,
    json_bytes,
    plus_one_ms,
)
from hive_bridge.testing.logfile_writer import avro_block_content, encode_block, parquet_block_content
from hive_bridge.testing.merge_model import conform

__all__ = [
    "BLOCK_FORMATS",
    "COMMIT_TIME_STRATEGY",
    "COPY_ON_WRITE",
    "DEFAULT_PAYLOAD",
    "EVENT_TIME_STRATEGY",
    "MERGE_ON_READ",
    "OVERWRITE_PAYLOAD",
    "PARTITION_METADATA",
    "LogVersions",
    "TableFiles",
]

PARTITION_METADATA = ".hoodie_partition_metadata"
COPY_ON_WRITE = "COPY_ON_WRITE"
MERGE_ON_READ = "MERGE_ON_READ"
#: `HoodieRecordMerger` strategy ids Hudi records in hoodie.properties
EVENT_TIME_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
BLOCK_FORMATS = ("avro", "parquet")


class TableFiles:
    """The files of one Hudi table as the test writer writes them; creates the table (hoodie.properties) if the
    folder has none. :class:`~hive_bridge.testing.writer.HudiWriter` adds the write operations.

    `table_type` must be the table's type when it exists (COPY_ON_WRITE, the default, or MERGE_ON_READ)."""

    # ----------------------------------------------------------- opening
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
        bloom_filters: bool = False,
    ) -> None:
        self.base_path = Path(base_path).absolute()
        self.rows_per_file = rows_per_file
        #: write Hudi's bloom filter over the record keys (and the key range) into each base file's footer
        self.bloom_filters = bloom_filters
        self._last_instant = "0"
        self._task = 0
        self._partitions_done: set[str] = set()
        #: record keys of the base files read so far, by (path, size, mtime): the upsert's key index
        self._keys_read: dict[tuple[str, int, float], list[str]] = {}
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
        atomic_write(hoodie / PROPERTIES_FILE, ("\n".join(lines) + "\n").encode("latin-1"))

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
            stamp = plus_one_ms(self._last_instant)
        self._last_instant = stamp
        return stamp

    def _take_instant(self, instant: str | None) -> str:
        if instant is None:
            return self.new_instant()
        if not (instant.isdigit() and len(instant) == 17):
            raise HudiTableError(f"instant {instant!r} is not a 17-digit instant time")
        if instant <= self._last_instant:
            raise HudiTableError(f"instant {instant} is not later than the table's last instant {self._last_instant}")
        self._last_instant = instant
        return instant

    # ---------------------------------------------------------- timeline
    def _timeline_dir(self) -> Path:
        d = self.properties.timeline_dir
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _start(self, instant: str, action: str) -> None:
        d = self._timeline_dir()
        atomic_write(d / f"{instant}.{action}.requested", b"")

    def _finish(
        self, instant: str, action: str, files: list[NewFile], operation: str, schema: pa.Schema,
        inflight: bool, replaced: Sequence[tuple[str, str]] = (),
    ) -> WriteResult:
        d = self._timeline_dir()
        layout2 = self.properties.timeline_layout_version >= 2
        inflight_name = f"{instant}.inflight" if action == "commit" else f"{instant}.{action}.inflight"
        pending_meta = self._commit_metadata([], operation, schema, None)
        atomic_write(d / inflight_name, b"" if layout2 else json_bytes(pending_meta))
        result_files = tuple(f"{f.partition}/{f.name}" if f.partition else f.name for f in files)
        if inflight:
            return WriteResult(instant, action, result_files, False, tuple(replaced))
        meta = self._commit_metadata(files, operation, schema, replaced if action == "replacecommit" else None,
                                     with_schema=True)
        if layout2:
            completion = self.new_instant()
            atomic_write(d / f"{instant}_{completion}.{action}", avro_bytes(meta, action == "replacecommit"))
        else:
            atomic_write(d / f"{instant}.{action}", json_bytes(meta))
        return WriteResult(instant, action, result_files, True, tuple(replaced))

    def _commit_metadata(
        self, files: Sequence[NewFile], operation: str, schema: pa.Schema,
        replaced: Sequence[tuple[str, str]] | None, *, compacted: bool = False, with_schema: bool = False,
    ) -> dict[str, Any]:
        """`commit_metadata` of this table."""
        return commit_metadata(self.properties.name, files, operation, schema, replaced, compacted=compacted,
                               with_schema=with_schema)

    # ----------------------------------------------- rows and partitions
    def _record_keys(self, data: pa.Table, prefer_meta: bool = False) -> list[str]:
        if prefer_meta and "_hoodie_record_key" in data.column_names:
            return [str(v) for v in data.column("_hoodie_record_key").to_pylist()]
        fields = self.properties.record_key_fields
        missing = [f for f in fields if f not in data.column_names]
        if missing:
            raise HudiTableError(f"{self.base_path}: data lacks record key field(s) {', '.join(missing)}")
        cols = [_as_strings(data.column(f)) for f in fields]
        if len(fields) == 1:
            return [NULL_PLACEHOLDER if v is None else v for v in cols[0]]
        # KeyGenUtils.getRecordKey: field:value joined by ",", null as __null__, "" as __empty__; a key whose
        # every field is null or empty is refused
        out = []
        for row in zip(*cols, strict=True):
            if all(v is None or v == "" for v in row):
                raise HudiTableError(f"{self.base_path}: record key fields {', '.join(fields)} are all null or "
                                     f"empty in a row")
            out.append(complex_key(fields, [NULL_PLACEHOLDER if v is None else v or EMPTY_PLACEHOLDER
                                            for v in row]))
        return out

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
        atomic_write(marker, text.encode("latin-1"))

    # -------------------------------------------------------- base files
    def _write_new_groups(self, data: pa.Table, instant: str, rows_per_file: int | None) -> list[NewFile]:
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
    ) -> NewFile:
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
        if self.bloom_filters:
            keys = data.column("_hoodie_record_key").to_pylist() if self.properties.populate_meta_fields \
                else self._record_keys(data)
            meta = dict(data.schema.metadata or {})
            meta.update({k.encode("utf-8"): v.encode("utf-8") for k, v in footer_entries(keys).items()})
            data = data.replace_schema_metadata(meta)
        buf = pa.BufferOutputStream()
        pq.write_table(data, buf)
        payload = buf.getvalue()
        with open(directory / name, "wb") as f:
            f.write(payload)
        size = payload.size
        return NewFile(partition, file_id, name, data.num_rows, size, prev_commit, prev_base_file, inserts, updates)

    # --------------------------------------------------------- log files
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
            as_avro = conform(with_meta, avro_to_arrow_schema(schema_json))
            return encode_block(BlockType.PARQUET_DATA, header, parquet_block_content(as_avro))
        return encode_block(BlockType.AVRO_DATA, header, avro_block_content(_avro_records(with_meta), avro))

    def _write_log_file(
        self, partition: str, file_id: str, s: FileSlice | None, instant: str, block: bytes,
        versions: LogVersions, *, rows: int = 0, inserts: int = 0, updates: int = 0, deletes: int = 0,
    ) -> NewFile:
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
        return NewFile(partition, file_id, name, rows, len(block), prev, None, inserts, updates, deletes,
                        log_version=version, base_file=base_file, log_files=log_files)


class LogVersions:
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
