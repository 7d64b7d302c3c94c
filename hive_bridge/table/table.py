"""HudiTable: properties + timeline + file-system view of one Hudi table folder."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from itertools import compress
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError, MetadataTableError
from hive_bridge.formats.avro_schema import avro_to_arrow_schema
from hive_bridge.layout.archived import with_archived
from hive_bridge.layout.asof import AsOf, TimeTravelError, check_not_cleaned, resolve_as_of, timeline_for
from hive_bridge.layout.fsview import FileSlice, FileSystemView, get_base_file, get_base_instant
from hive_bridge.layout.incremental import (
    FALLBACK_OPTION,
    IncrementalQueryError,
    IncrementalRange,
    default_fallback,
    incremental_range,
    touched_file_groups,
)
from hive_bridge.layout.properties import TableProperties
from hive_bridge.layout.timeline import Instant, Timeline, normalize_timestamp
from hive_bridge.mdt.keys import FILES
from hive_bridge.mdt.table import MetadataTable
from hive_bridge.storage.core import Storage

#: where a table's file listing comes from (see HudiTable.open)
LISTING_SOURCES = ("folders", "auto", "mdt")

META_FIELDS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)


class HudiTable:
    """A Hudi table opened from its folder: `HudiTable.open(path)`."""

    def __init__(self, properties: TableProperties, timeline: Timeline, *, freeze_listing: bool = False) -> None:
        self.properties = properties
        self.timeline = timeline
        self.base_path = properties.base_path
        self._fsview = FileSystemView(properties, timeline, freeze_listing=freeze_listing)
        self._schema: pa.Schema | None = None
        #: the slice whose base file gave the schema (None: the timeline's schema)
        self._schema_slice: FileSlice | None = None
        self._latest: list[FileSlice] | None = None
        self._freeze = freeze_listing
        #: where the file listing comes from ("folders" or "mdt": the metadata table's files partition), and
        #: why the metadata table was not used when it was asked for
        self.listing_source = "folders"
        self.listing_problems: list[str] = []
        self._listing = "folders"
        self._metadata: Any = None

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, freeze_listing: bool = False,
             listing: str = "folders", storage_options: Mapping[str, str] | None = None,
             storage: Storage | None = None) -> HudiTable:
        """``freeze_listing``: pause the garbage collector while listing and move the listing's objects straight
        to its oldest generation (:func:`~hive_bridge.layout.fsview.gc_paused`): faster for a process that lists
        100,000s of files, but it touches the whole process's collector, so it is opt-in (a Spark driver or a
        notebook may not want that); ``benchmarks/bench_table.py`` measures what it buys.

        ``listing``: ``folders`` (list the partition folders), ``mdt`` or ``auto`` (the metadata table's
        ``files`` partition when it is ready, readable and covers every completed instant of the data timeline;
        otherwise the folders, with the reason in ``listing_problems``; ``mdt`` only differs in that the reason
        is also a warning).

        ``path``: a local folder, or a URI (``s3://bucket/path``, ``gs://``, ``hdfs://``, ``file:``);
        ``storage_options``: credentials, endpoint, region of object storage (see
        :mod:`hive_bridge.storage.core`); ``storage``: an already made Storage (its request counter is shared).
        A local table's ``base_path`` is its absolute path, any other's its URI."""
        if listing not in LISTING_SOURCES:
            raise HudiTableError(f"unknown listing source {listing!r}: use {', '.join(LISTING_SOURCES)}")
        if storage is None:
            storage = Storage.for_uri(path, storage_options)
        properties = TableProperties.load(storage.uri, storage)
        timeline = Timeline.load(properties)
        table = cls(properties, timeline, freeze_listing=freeze_listing)
        table._listing = listing
        if listing != "folders":
            table._list_from_metadata(warn=listing == "mdt")
        return table

    def metadata_table(self) -> Any:
        """This table's metadata table (`hive_bridge.mdt.table.MetadataTable`), opened once and shared by
        the listing, the statistics index and the key indexes; its `status` says what it can be trusted for."""
        if self._metadata is None:
            self._metadata = MetadataTable.open(self)
        return self._metadata

    def _list_from_metadata(self, warn: bool) -> None:
        """Take the listing from the metadata table's files partition, if it can be trusted whole."""
        why: str | None = None
        if FILES not in self.properties.metadata_partitions:
            why = "the table has no ready files partition in its metadata table"
        else:
            mdt = self.metadata_table()
            if FILES not in mdt.status.partitions:
                why = "; ".join(mdt.status.problems) or "the metadata table's files partition is not usable"
            elif mdt.status.lagging_instants:
                why = (f"the metadata table lags the data timeline ({len(mdt.status.lagging_instants)} completed "
                       f"instants not in it, first {mdt.status.lagging_instants[0]})")
            else:
                try:
                    files: dict[str, dict[str, int]] = {}
                    for partition in (mdt.all_partitions() if self.properties.is_partitioned else [""]):
                        listed = mdt.files(partition)
                        if listed is None:
                            raise MetadataTableError(f"no files record for partition {partition!r}")
                        files[partition] = listed
                except MetadataTableError as exc:
                    why = f"the metadata table's files partition is not readable: {exc}"
                else:
                    self._fsview.use_listing(files, identity=(mdt.slice_identity(FILES),
                                                              self.properties.is_partitioned))
                    self.listing_source = "mdt"
        if why is not None:
            self.listing_problems.append(why)
            if warn:
                import warnings

                warnings.warn(f"{self.base_path}: listing the folders: {why}", RuntimeWarning, stacklevel=3)

    def reload(self) -> HudiTable:
        """A fresh view of the same folder (new commits, new files), listed from the same source."""
        return HudiTable.open(self.base_path, freeze_listing=self._freeze, listing=self._listing,
                              storage=self.storage)

    @property
    def storage(self) -> Storage:
        """Where the table's files are read from, and the requests made there (``storage.requests``)."""
        return self.properties.store

    @property
    def name(self) -> str:
        return self.properties.name

    @property
    def base_file_format(self) -> str:
        """`hoodie.table.base.file.format`, upper case: PARQUET, ORC, HFILE or LANCE (others are refused)."""
        return self.properties.base_file_format

    @property
    def base_files_are_parquet(self) -> bool:
        """Whether the base files are parquet. Only then do they have footer statistics (the index gives other
        formats' files unknown statistics: kept) and a schema of their own (other formats take the schema from
        commit metadata / hoodie.table.create.schema); a reader of the files must check this."""
        return self.properties.base_files_are_parquet

    def latest_file_slices(self, as_of: str | Instant | None = None) -> list[FileSlice]:
        """The latest committed file slice of every live file group, now or as of an instant (time travel)."""
        if as_of is None:
            if self._latest is None:
                self._latest = self._fsview.latest_file_slices(None)
            return list(self._latest)
        ts = as_of.timestamp if isinstance(as_of, Instant) else normalize_timestamp(as_of)
        return self._fsview.latest_file_slices(ts)

    def time_travel(self, as_of: str | AsOf, *, where: str = "") -> tuple[AsOf, list[FileSlice]]:
        """The state of the table as of an instant or time, checked by Hudi's rules (:mod:`hive_bridge.layout.asof`):
        (the checked as-of, the file slices of that state). A state that cannot be read exactly raises
        :class:`~hive_bridge.layout.asof.TimeTravelError` naming the instant and the table; ``where`` names what
        gave the value (an option, a command-line flag) in a format error."""
        checked = resolve_as_of(self.timeline, as_of, self.base_path, where=where)
        slices = self._view_for(timeline_for(self.timeline, checked.instant)).latest_file_slices(checked.instant)
        check_not_cleaned(self.timeline, checked, self.base_path,
                          ((s.partition_path, s.file_id, s.base_instant) for s in slices))
        return checked, slices

    def incremental(self, begin: str | None, end: str | None = None, *,
                    fallback: bool | None = None) -> tuple[IncrementalRange, list[FileSlice]]:
        """An incremental query's range and the slices it reads (:mod:`hive_bridge.layout.incremental`): the
        file groups the commits in (begin, end] wrote to, as of ``end``; the latest state whole when the range
        cannot be read and ``fallback`` allows the full scan (None: the table version's default,
        :func:`~hive_bridge.layout.incremental.default_fallback`)."""
        if fallback is None:
            fallback = default_fallback(self.timeline)
        rng = incremental_range(self.timeline, self.base_path, begin, end, fallback=fallback)
        if rng.full_scan:
            return rng, self.latest_file_slices()
        if not rng.commits:
            return rng, []
        timeline = with_archived(self.timeline) if rng.archived else self.timeline
        slices = self._view_for(timeline).latest_file_slices(rng.state_instant)
        try:
            check_not_cleaned(timeline, AsOf(rng.state_instant, rng.end), self.base_path,
                              ((s.partition_path, s.file_id, s.base_instant) for s in slices))
        except TimeTravelError as exc:
            if not fallback:
                raise IncrementalQueryError(f"{exc}; set {FALLBACK_OPTION}=true to read the latest state filtered "
                                            "by commit time instead") from None
            return replace(rng, full_scan=True, why_full_scan=str(exc)), self.latest_file_slices()
        touched = touched_file_groups(timeline, rng.commits)
        return rng, [s for s in slices if (s.partition_path, s.file_id) in touched]

    def _view_for(self, timeline: Timeline) -> FileSystemView:
        """The file-system view against ``timeline`` (the table's, or it with the archived instants)."""
        return self._fsview if timeline is self.timeline else self._fsview.with_timeline(timeline)

    def base_files_written_by(self, instants: list[str]) -> list[FileSlice]:
        """Per file group, its newest base file written by one of ``instants`` (incremental queries; see
        :meth:`~hive_bridge.layout.fsview.FileSystemView.base_files_written_by`)."""
        return self._fsview.base_files_written_by(instants)

    def partition_paths(self) -> list[str]:
        return self._fsview.partition_paths()

    def arrow_schema(self, include_meta_fields: bool = True) -> pa.Schema:
        """The table's schema: the latest base file's parquet schema, else (no readable parquet base file, or base
        files of another format) the commit metadata / create schema, with the meta columns the table has.

        Partition columns dropped from the files (`drop_partition_columns`) are appended as strings.
        """
        schema = self.file_schema()
        names = set(schema.names)
        missing = [f for f in self.properties.partition_fields if f not in names]
        if missing:
            declared = self._declared_schema()
            extra = [
                declared.field(f) if declared is not None and declared.get_field_index(f) >= 0
                else pa.field(f, pa.string())
                for f in missing
            ]
            schema = pa.schema(list(schema) + extra)
        if not include_meta_fields:
            schema = pa.schema([f for f in schema if f.name not in META_FIELDS], metadata=schema.metadata)
        return schema

    def _declared_schema(self) -> pa.Schema | None:
        """The writer's schema from commit metadata or hoodie.properties (types of path-only columns)."""
        avro = self.timeline.latest_schema_json() or self.properties.create_schema
        if avro is None:
            return None
        try:
            return avro_to_arrow_schema(avro)
        except HudiTableError:
            return None

    def file_schema(self) -> pa.Schema:
        """The schema of the data files (without partition columns that live only in paths)."""
        if self._schema is None:
            self._schema = self._resolve_schema()
        return self._schema

    def follow_schema(self, old: HudiTable, touched: list[FileSlice]) -> None:
        """Resolve the schema from ``old``'s (the same table opened before new instants) and the slices of the
        partitions those instants touched, instead of looking at every slice: the newest base file is the
        newest of the touched ones, or ``old``'s when none is newer and its partition was not touched."""
        if not self.base_files_are_parquet or old._schema is None:
            return
        newest = max(compress(touched, map(get_base_file, touched)), key=get_base_instant, default=None)
        previous = old._schema_slice
        if newest is not None and (previous is None or newest.base_instant >= previous.base_instant):
            self._schema = self._resolve_schema(newest)
        elif previous is not None and previous.partition_path not in {s.partition_path for s in touched}:
            self._schema, self._schema_slice = old._schema, previous

    def _resolve_schema(self, latest: FileSlice | None = None) -> pa.Schema:
        schema: pa.Schema | None = None
        if latest is None and self.base_files_are_parquet:
            # the newest base file (first of the newest); C-speed passes, tables can have 100,000s of slices
            slices = self.latest_file_slices()
            latest = max(compress(slices, map(get_base_file, slices)), key=get_base_instant, default=None)
        self._schema_slice = latest
        if latest is not None and latest.base_file is not None:
            try:
                if self.storage.is_local:
                    schema = pq.read_schema(latest.base_file.full_path)
                else:
                    schema = self.storage.parquet_metadata(latest.base_file.full_path,
                                                           latest.base_file.size).schema.to_arrow_schema()
            except Exception:  # damaged / placeholder file: fall back to the timeline's schema
                schema = None
        if schema is None:
            avro = self.timeline.latest_schema_json() or self.properties.create_schema
            if avro is None:
                no_file = "no readable base file" if self.base_files_are_parquet else \
                    f"{self.base_file_format} base files (only parquet files' schemas are read)"
                raise HudiTableError(
                    f"{self.base_path}: no schema: {no_file}, no schema in commit metadata or hoodie.properties"
                )
            schema = avro_to_arrow_schema(avro)
            if self.properties.populate_meta_fields and not any(f.name in META_FIELDS for f in schema):
                schema = pa.schema([pa.field(n, pa.string()) for n in META_FIELDS] + list(schema))
        return schema.remove_metadata()
