"""The archived timeline: instants moved out of the active timeline, with their metadata.

Read only when a request needs an instant before the active timeline (:func:`with_archived`); a request inside the
active timeline never opens it.

Table version 6 (timeline layout 1): ``.hoodie/<hoodie.archivelog.folder, "archived">/.commits_.archive.N_<token>``
are Hudi log files (:mod:`hive_bridge.formats.logfile`) whose Avro data blocks hold ``HoodieArchivedMetaEntry``
records in the block's SCHEMA header: ``commitTime``, ``actionType``, ``actionState`` (absent before Hudi 0.11:
completed) and the instant's metadata in the field for its action (``hoodieCommitMetadata`` for commits and delta
commits, ``hoodieReplaceCommitMetadata``, ``hoodieCleanMetadata``, ``hoodieRollbackMetadata``, ...): the same
records the active timeline's files hold.

Table versions 8 and 9 (timeline layout 2): the LSM timeline in ``.hoodie/timeline/<hoodie.timeline.history.path,
"history">/``: ``_version_`` names the latest snapshot version ``N``, ``manifest_N`` (JSON ``{"files": [{"fileName",
"fileLen"}]}``) the valid parquet files ``<min instant>_<max instant>_<layer>.parquet``, whose rows
(``HoodieLSMTimelineInstant``) hold ``instantTime``, ``completionTime``, ``action`` and ``metadata`` (the bytes of
the completed instant file). Only completed instants are archived there. Without a ``_version_`` file the highest
``manifest_N`` is read, as Hudi's ``LSMTimeline.latestSnapshotVersion`` falls back to.

A damaged file (not a log file or parquet file, a block or record that does not decode, a manifest that is not
the JSON Hudi writes, a file the manifest names that is missing) is an :class:`ArchivedTimelineError` naming the
file; nothing is skipped silently, as a missing archived instant would make an earlier state wrong.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.properties import HOODIE_DIR, TableProperties
from hive_bridge.layout.timeline import Instant, State, Timeline, decode_instant_bytes
from hive_bridge.storage.core import StorageError

__all__ = ["ArchivedTimeline", "ArchivedTimelineError", "archive_location", "read_archived_timeline", "with_archived"]

#: ``HoodieArchivedMetaEntry``'s field holding an instant's metadata, by action (Hudi's ``MetadataConversionUtils``)
_METADATA_FIELDS = {
    "commit": "hoodieCommitMetadata", "deltacommit": "hoodieCommitMetadata",
    "replacecommit": "hoodieReplaceCommitMetadata", "clean": "hoodieCleanMetadata",
    "rollback": "hoodieRollbackMetadata", "savepoint": "hoodieSavePointMetadata",
    "compaction": "hoodieCompactionPlan", "clustering": "hoodieRequestedReplaceMetadata",
}
_STATES = {"COMPLETED": State.COMPLETED, "INFLIGHT": State.INFLIGHT, "REQUESTED": State.REQUESTED}
_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}
_ARCHIVE_FILE = re.compile(r"^\.commits_\.archive\.(\d+)(?:_[0-9]+-[0-9]+-[0-9]+)?$")
_LSM_FILE = re.compile(r"^(\d+)_(\d+)_(\d+)\.parquet$")
_MANIFEST = re.compile(r"^manifest_(\d+)$")
_LSM_COLUMNS = ("instantTime", "completionTime", "action", "metadata")


class ArchivedTimelineError(HudiTableError):
    """The archived timeline cannot be read (the message names the file and what is wrong)."""


@dataclass(frozen=True)
class ArchivedTimeline:
    """The archived instants (each in its most advanced state) and the metadata of the completed ones."""

    location: str
    instants: tuple[Instant, ...]
    #: instant time -> the completed instant's metadata (as the active timeline's files decode)
    metadata: dict[str, dict[str, Any]]
    #: the files read (for error messages and the tests' count)
    files: tuple[str, ...]


def archive_location(properties: TableProperties) -> str:
    """The archived timeline's folder: layout 1 ``.hoodie/archived`` (``hoodie.archivelog.folder``), layout 2
    ``.hoodie/timeline/history`` (``hoodie.timeline.history.path``)."""
    store = properties.store
    if properties.timeline_layout_version >= 2:
        history = properties.raw.get("hoodie.timeline.history.path") or "history"
        return store.join(properties.timeline_location, history)
    folder = properties.raw.get("hoodie.archivelog.folder") or "archived"
    return store.join(store.join(properties.base_path, HOODIE_DIR), folder)


def with_archived(timeline: Timeline) -> Timeline:
    """The table's archived instants and ``timeline``'s as one timeline: the archive is read on the first call for
    a timeline, once (an unreadable archive raises :class:`ArchivedTimelineError` naming the file)."""
    if timeline.is_merged_with_archive:
        return timeline
    merged = timeline.merged_archive
    if merged is None:
        archived = read_archived_timeline(timeline.properties)
        merged = timeline.merge_archived(archived.instants, archived.metadata, archived.location)
    return merged


def read_archived_timeline(properties: TableProperties) -> ArchivedTimeline:
    """Every archived instant of the table (an empty timeline when nothing was archived)."""
    location = archive_location(properties)
    try:
        names = properties.store.file_names(location)
    except FileNotFoundError:
        names = []
    except (OSError, StorageError) as exc:
        raise ArchivedTimelineError(f"{location}: cannot list the archived timeline: {exc}") from None
    if properties.timeline_layout_version >= 2:
        return _read_lsm(properties, location, names)
    return _read_log_archive(properties, location, names)


# ------------------------------------------------------------------------------------ layout 2: LSM timeline
def _read_lsm(properties: TableProperties, location: str, names: list[str]) -> ArchivedTimeline:
    store = properties.store
    versions = sorted(int(m.group(1)) for m in map(_MANIFEST.match, names) if m is not None)
    if not versions:
        return ArchivedTimeline(location, (), {}, ())
    version = versions[-1]
    if "_version_" in names:
        path = store.join(location, "_version_")
        text = _read(store, path).decode("utf-8", "replace").strip()
        if not text.isdigit():
            raise ArchivedTimelineError(f"{path}: not a snapshot version: {text[:40]!r}")
        version = int(text)
    manifest = store.join(location, f"manifest_{version}")
    if f"manifest_{version}" not in names:
        raise ArchivedTimelineError(f"{manifest}: missing (named by {store.join(location, '_version_')})")
    try:
        entries = json.loads(_read(store, manifest))["files"]
        files = [str(e["fileName"]) for e in entries]
    except (ValueError, KeyError, TypeError) as exc:
        raise ArchivedTimelineError(f"{manifest}: not an LSM timeline manifest ({type(exc).__name__}: "
                                    f"{exc})") from None
    instants: list[Instant] = []
    metadata: dict[str, dict[str, Any]] = {}
    read: list[str] = [manifest]
    for name in sorted(files):
        path = store.join(location, name)
        if _LSM_FILE.match(name) is None:
            raise ArchivedTimelineError(f"{manifest}: names {name!r}, not an LSM timeline file "
                                        "(<min>_<max>_<layer>.parquet)")
        read.append(path)
        for ts, completion, action, meta in _lsm_rows(store, path):
            if ts in metadata:
                continue                     # a row in an older layer's file and a newer one: the same instant
            instants.append(Instant(ts, action, State.COMPLETED, completion or None, ""))
            metadata[ts] = decode_instant_bytes(meta or b"", f"{path} (instant {ts} {action})")
    return ArchivedTimeline(location, tuple(sorted(instants)), metadata, tuple(read))


def _lsm_rows(store: Any, path: str) -> Iterator[tuple[str, str, str, bytes | None]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = _read(store, path)
    try:
        table = pq.read_table(io.BytesIO(data), columns=list(_LSM_COLUMNS))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise ArchivedTimelineError(f"{path}: not a readable LSM timeline file: {exc}") from None
    cols = [table.column(c).to_pylist() for c in _LSM_COLUMNS]
    for i, (ts, completion, action, meta) in enumerate(zip(*cols, strict=True)):
        if not isinstance(ts, str) or not ts.isdigit() or not isinstance(action, str):
            raise ArchivedTimelineError(f"{path}: row {i}: no instant time or action ({ts!r}, {action!r})")
        yield ts, str(completion or ""), action, meta


# --------------------------------------------------------------------------- layout 1: archive log files
def _read_log_archive(properties: TableProperties, location: str, names: list[str]) -> ArchivedTimeline:
    from hive_bridge.formats.logfile import BlockType, read_log_file

    store = properties.store
    archives = sorted((int(m.group(1)), name) for name in names if (m := _ARCHIVE_FILE.match(name)) is not None)
    best: dict[str, Instant] = {}
    metadata: dict[str, dict[str, Any]] = {}
    read: list[str] = []
    for _, name in archives:
        path = store.join(location, name)
        read.append(path)
        contents = read_log_file(path, _read(store, path))
        if contents.problems:
            raise ArchivedTimelineError(f"{path}: damaged archive file: {contents.problems[0]}")
        for block in contents.blocks:
            if block.block_type != BlockType.AVRO_DATA:
                continue
            for i, entry in enumerate(_avro_records(block, path)):
                where = f"{path}: block at byte {block.offset}: record {i}"
                ts, action = entry.get("commitTime"), entry.get("actionType")
                if not isinstance(ts, str) or not ts.isdigit() or not isinstance(action, str):
                    raise ArchivedTimelineError(f"{where}: no commit time or action ({ts!r}, {action!r})")
                state = _STATES.get(str(entry.get("actionState") or "COMPLETED").upper())
                if state is None:
                    raise ArchivedTimelineError(f"{where}: unknown action state {entry.get('actionState')!r}")
                prev = best.get(ts)
                if prev is None or _RANK[state] >= _RANK[prev.state]:
                    best[ts] = Instant(ts, action, state, None, "")
                if state is State.COMPLETED:
                    meta = entry.get(_METADATA_FIELDS.get(action, ""))
                    metadata[ts] = meta if isinstance(meta, dict) else {}
    return ArchivedTimeline(location, tuple(sorted(best.values())), metadata, tuple(read))


def _avro_records(block: Any, path: str) -> Iterator[dict[str, Any]]:
    """The records of an Avro data block, decoded with the block's SCHEMA header (the framing read by
    :func:`hive_bridge.formats.logfile.avro_block_records`)."""
    import fastavro

    from hive_bridge.formats.logfile import HeaderKey, LogFormatError, avro_block_records

    where = f"{path}: block at byte {block.offset}"
    schema_json = block.header.get(HeaderKey.SCHEMA)
    if schema_json is None:
        raise ArchivedTimelineError(f"{where}: Avro data block has no SCHEMA header")
    try:
        schema = fastavro.parse_schema(json.loads(schema_json))
    except Exception as exc:  # JSON's and fastavro's parsers raise their own types
        raise ArchivedTimelineError(f"{where}: Avro data block schema not usable: {exc}") from None
    try:
        records = avro_block_records(block, path, schema)
    except LogFormatError as exc:
        raise ArchivedTimelineError(str(exc)) from None
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            raise ArchivedTimelineError(f"{where}: record {i} is not a HoodieArchivedMetaEntry")
        yield record


def _read(store: Any, path: str) -> bytes:
    try:
        data: bytes = store.read_bytes(path)
    except (OSError, StorageError) as exc:
        raise ArchivedTimelineError(f"{path}: cannot read the archived timeline file: "
                                    f"{getattr(exc, 'strerror', None) or exc}") from None
    return data
