"""`.hoodie/hoodie.properties`: the table's configuration, parsed the way java.util.Properties reads it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import javaproperties

from hive_bridge.errors import HudiTableError
from hive_bridge.storage.core import Storage

HOODIE_DIR = ".hoodie"
PROPERTIES_FILE = "hoodie.properties"
SUPPORTED_VERSIONS = (6, 8, 9)
TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
#: base file formats (`hoodie.table.base.file.format`, Hudi's HoodieFileFormat) -> their file name extension.
#: A format missing here is refused when the table is opened: its files would not be listed, and a table whose
#: files are not listed reads as empty.
BASE_FILE_EXTENSIONS = {"PARQUET": ".parquet", "ORC": ".orc", "HFILE": ".hfile", "LANCE": ".lance"}

def parse_java_properties(text: str, where: Path | str = "<properties>") -> dict[str, str]:
    """The entries of a java ``.properties`` text (comments, ``\\`` continuations, ``=``/``:`` separators, escapes),
    read by the ``javaproperties`` package (equal to the project's former parser on every fixture's
    ``hoodie.properties``). A malformed ``\\u`` escape is a HudiTableError naming ``where``."""
    try:
        return dict(javaproperties.loads(text))
    except javaproperties.InvalidUEscapeError as exc:
        raise HudiTableError(f"{where}: not a properties file: {exc}") from None


def _unsupported_format(base_format: str, table: str, where: Path | str) -> str:
    return (
        f"{where}: table {table!r} has base file format {base_format!r} (hoodie.table.base.file.format), which "
        f"this reader does not know (known: {', '.join(BASE_FILE_EXTENSIONS)}): its data files cannot be listed, "
        "and the table is refused rather than read as empty"
    )


def _split_fields(value: str | None) -> list[str]:
    if not value:
        return []
    return [f.strip() for f in value.split(",") if f.strip()]


def _bool(value: str | None, default: bool) -> bool:
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() == "true"


#: Hudi's record merge strategies that keep one whole record (event time, commit time) and the ones that defer
#: to the payload class (eeb8d96f is event time in 1.x and the payload-based default merger in 0.x: with a
#: whole-record payload, both keep whole records)
PAYLOAD_MERGE_STRATEGY = "00000000-0000-0000-0000-000000000000"
WHOLE_RECORD_MERGE_STRATEGIES = frozenset({
    "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",  # EVENT_TIME_BASED_MERGE_STRATEGY_UUID
    "ce9acb64-bde0-424c-9b91-f6ebba25356d",  # COMMIT_TIME_BASED_MERGE_STRATEGY_UUID
    "53ce6957-2a07-4c95-bf1e-548663905b70",  # EVENT_TIME_BASED_MERGE_STRATEGY_UUID of some 1.0 snapshots
    PAYLOAD_MERGE_STRATEGY,
})
#: payload classes whose merge returns one of the records whole (or deletes it)
WHOLE_RECORD_PAYLOADS = frozenset({
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload",
    "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    "org.apache.hudi.common.model.EventTimeAvroPayload",
})



@dataclass(frozen=True)
class TableProperties:
    """What the file-system view and the index need from hoodie.properties (`raw` keeps every key)."""

    name: str
    table_type: str
    version: int
    partition_fields: list[str]
    record_key_fields: list[str]
    hive_style_partitioning: bool
    drop_partition_columns: bool
    base_path: str
    timeline_layout_version: int
    timeline_path: str
    urlencode_partitions: bool
    populate_meta_fields: bool
    precombine_field: str | None
    base_file_format: str
    create_schema: str | None
    raw: dict[str, str] = field(repr=False, compare=False)
    #: where the table's files are read from (None: the local folder ``base_path``)
    storage: Storage | None = field(default=None, repr=False, compare=False)

    @property
    def store(self) -> Storage:
        """The table's storage (a local one for a table loaded from a folder without one)."""
        if self.storage is None:
            object.__setattr__(self, "storage", Storage.local(self.base_path))
        assert self.storage is not None
        return self.storage

    @property
    def is_partitioned(self) -> bool:
        return bool(self.partition_fields)

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def base_file_extension(self) -> str:
        """The name extension of the table's base files (`.parquet`, `.lance`, ...)."""
        extension = BASE_FILE_EXTENSIONS.get(self.base_file_format)
        if extension is None:  # only a TableProperties built by hand gets here: from_mapping refuses the format
            raise HudiTableError(_unsupported_format(self.base_file_format, self.name, self.base_path))
        return extension

    @property
    def metadata_partitions(self) -> list[str]:
        """The metadata table's ready partitions: ``hoodie.table.metadata.partitions`` without those still in
        ``hoodie.table.metadata.partitions.inflight`` (being built: never to be used)."""
        inflight = {p.strip() for p in (self.raw.get("hoodie.table.metadata.partitions.inflight") or "").split(",")}
        return [p.strip() for p in (self.raw.get("hoodie.table.metadata.partitions") or "").split(",")
                if p.strip() and p.strip() not in inflight]

    @property
    def whole_record_merge(self) -> bool:
        """Whether merging a file slice keeps whole records: each merged row is one record of one of the slice's
        files (the base file's or a log block's), as Hudi's overwrite-with-latest, event-time and commit-time
        merges do. False for custom merge modes, payload classes that combine fields of several records
        (partial updates, "non-defaults" or Debezium-style payloads) and partial-update modes: then only the
        union of the files' ranges bounds a merged row."""
        raw = self.raw
        partial = raw.get("hoodie.table.partial.update.mode", "NONE").strip().upper()
        if partial not in ("", "NONE"):
            return False
        mode = raw.get("hoodie.record.merge.mode", "").strip().upper()
        if mode in ("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"):
            return True
        if mode not in ("", "CUSTOM"):
            return False
        strategy = (raw.get("hoodie.record.merge.strategy.id")
                    or raw.get("hoodie.compaction.record.merger.strategy") or "").strip()
        if strategy and strategy not in WHOLE_RECORD_MERGE_STRATEGIES:
            return False
        if mode == "CUSTOM" and strategy != PAYLOAD_MERGE_STRATEGY:
            return False
        payload = (raw.get("hoodie.compaction.payload.class") or raw.get("hoodie.table.legacy.payload.class")
                   or raw.get("hoodie.datasource.write.payload.class") or "").strip()
        return payload in ("", *WHOLE_RECORD_PAYLOADS)

    @property
    def base_files_are_parquet(self) -> bool:
        """Whether the base files are parquet: what the column-statistics index (footers), the schema reader
        and Spark's `.parquet()` read. Other formats (ORC, HFILE, LANCE) are listed but have no statistics."""
        return self.base_file_format == "PARQUET"

    @property
    def timeline_dir(self) -> Path:
        """Folder holding the active timeline's instant files (a local table's; see `timeline_location`)."""
        return Path(self.timeline_location)

    @property
    def timeline_location(self) -> str:
        """Location (local path or URI) of the folder holding the active timeline's instant files."""
        base = self.store.join(self.base_path, HOODIE_DIR)
        return self.store.join(base, self.timeline_path) if self.timeline_layout_version >= 2 else base

    @classmethod
    def load(cls, base_path: str | os.PathLike[str], storage: Storage | None = None) -> TableProperties:
        """``storage``: where the table lives (default: the local folder ``base_path``); for object storage
        ``base_path`` is the table's URI."""
        if storage is not None and not storage.is_local:
            return cls._load_remote(os.fspath(base_path), storage)
        base = Path(base_path)
        if not base.is_dir():
            why = "it is not a folder" if base.exists() else "the folder does not exist"
            raise HudiTableError(f"{base}: not a Hudi table: {why}")
        hoodie = base / HOODIE_DIR
        if not hoodie.is_dir():
            raise HudiTableError(f"{base}: not a Hudi table: it has no {HOODIE_DIR}/ folder")
        prop_file = hoodie / PROPERTIES_FILE
        try:
            data = prop_file.read_bytes()
        except FileNotFoundError:
            raise HudiTableError(f"{prop_file}: missing: a Hudi table needs its hoodie.properties") from None
        except OSError as exc:
            raise HudiTableError(f"{prop_file}: unreadable: {exc.strerror or exc}") from None
        try:
            text = data.decode("latin-1")
        except UnicodeDecodeError as exc:  # pragma: no cover - latin-1 decodes every byte
            raise HudiTableError(f"{prop_file}: not a properties file: {exc}") from None
        props = cls.from_mapping(parse_java_properties(text, prop_file), base, prop_file)
        if storage is not None:
            object.__setattr__(props, "storage", storage)
        return props

    @classmethod
    def _load_remote(cls, uri: str, storage: Storage) -> TableProperties:
        """hoodie.properties of a table on object storage: read directly (a folder on object storage is only a
        key prefix, so there is no folder to check first)."""
        prop_file = storage.join(uri, HOODIE_DIR, PROPERTIES_FILE)
        try:
            data = storage.read_bytes(prop_file)
        except FileNotFoundError:
            raise HudiTableError(f"{uri}: not a Hudi table: there is no {HOODIE_DIR}/{PROPERTIES_FILE} "
                                 f"({prop_file} not found)") from None
        except OSError as exc:
            raise HudiTableError(f"{prop_file}: unreadable: {exc}") from None
        props = cls.from_mapping(parse_java_properties(data.decode("latin-1"), prop_file), uri, prop_file)
        object.__setattr__(props, "storage", storage)
        return props

    @classmethod
    def from_mapping(cls, raw: dict[str, str], base: Path | str,
                     source: Path | str = "hoodie.properties") -> TableProperties:
        name = raw.get("hoodie.table.name")
        if not name:
            raise HudiTableError(f"{source}: hoodie.table.name is missing: not a valid Hudi table")
        version_text = raw.get("hoodie.table.version")
        if version_text is None:
            raise HudiTableError(f"{source}: hoodie.table.version is missing")
        try:
            version = int(version_text.strip())
        except ValueError:
            raise HudiTableError(f"{source}: hoodie.table.version is not a number: {version_text!r}") from None
        if version not in SUPPORTED_VERSIONS:
            raise HudiTableError(
                f"{source}: unsupported table version {version} (supported: "
                f"{', '.join(map(str, SUPPORTED_VERSIONS))})"
            )
        table_type = raw.get("hoodie.table.type", "COPY_ON_WRITE").strip().upper()
        if table_type not in TABLE_TYPES:
            raise HudiTableError(f"{source}: unknown hoodie.table.type {table_type!r}")
        layout_text = raw.get("hoodie.timeline.layout.version")
        default_layout = 2 if version >= 8 else 1
        try:
            layout = int(layout_text) if layout_text else default_layout
        except ValueError:
            raise HudiTableError(
                f"{source}: hoodie.timeline.layout.version is not a number: {layout_text!r}"
            ) from None
        if layout not in (0, 1, 2):
            raise HudiTableError(f"{source}: unknown timeline layout version {layout}")
        base_format = (raw.get("hoodie.table.base.file.format") or "PARQUET").strip().upper() or "PARQUET"
        if base_format not in BASE_FILE_EXTENSIONS:
            raise HudiTableError(_unsupported_format(base_format, name, source))
        record_keys = _split_fields(raw.get("hoodie.table.recordkey.fields"))
        # timestamp key generators may add a type suffix like `field:TIMESTAMP`
        partition_fields = [f.split(":", 1)[0] for f in _split_fields(raw.get("hoodie.table.partition.fields"))]
        return cls(
            name=name,
            table_type=table_type,
            version=version,
            partition_fields=partition_fields,
            record_key_fields=record_keys,
            hive_style_partitioning=_bool(raw.get("hoodie.datasource.write.hive_style_partitioning"), False),
            drop_partition_columns=_bool(raw.get("hoodie.datasource.write.drop.partition.columns"), False),
            base_path=str(base),
            timeline_layout_version=max(layout, 1),
            timeline_path=raw.get("hoodie.timeline.path", "timeline") or "timeline",
            urlencode_partitions=_bool(raw.get("hoodie.datasource.write.partitionpath.urlencode"), False),
            populate_meta_fields=_bool(raw.get("hoodie.populate.meta.fields"), True),
            precombine_field=raw.get("hoodie.table.precombine.field") or raw.get("hoodie.table.ordering.fields"),
            base_file_format=base_format,
            create_schema=raw.get("hoodie.table.create.schema"),
            raw=dict(raw),
        )
