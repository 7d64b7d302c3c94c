"""The merged-slice store, and merges run as a Spark job: the merge-on-read slices a scan keeps are merged by
hudi-rs and written, as parquet, where Spark's parquet reader reads them on every executor.

The store is the session's ``spark.hive_bridge.mergedStore`` (:data:`STORE_CONF`), read when the file index is
attached (:func:`hive_bridge.spark.register`): a URI every executor can read (``s3a://bucket/tmp/merged``,
``hdfs://…``, ``file:///shared/folder``). Unset, a local session (master ``local*``) uses the local merged-slice
cache (:mod:`hive_bridge.spark.merged_cache`: bounded, least recently used files evicted, files of recent scans
spared); a cluster session without it is refused at ``register`` (its executors cannot open the driver's local
files). Files are named by :func:`~hive_bridge.spark.merged_cache.slice_key` under one folder per table in either
case, so a slice merged once is reused by every later scan that keeps it, and files of slices gone from a table's
latest state are deleted (:func:`drop_stale`). A relation read as of an earlier instant (time travel) merges its
slices up to that instant (hudi-rs skips later log blocks, in the driver and in the executors alike) into files
whose key includes the instant: never read for another instant or for the latest state. A store given by URI is not bounded: nothing there is evicted
(clear it with the store's own lifecycle rules, an S3 expiry for instance).

Who merges: a scan whose slices to merge are at most ``spark.hive_bridge.mergeInDriverMax``
(:data:`DRIVER_MAX_CONF`, default :data:`DRIVER_MAX_DEFAULT`) merges them in the driver, one after another; more
are merged by one Spark job (``sc.parallelize(descriptors).mapPartitions(merge_and_write)``) whose tasks run
hudi-rs in the executors' Python workers and write to the store. The job is started from the planner's py4j
callback: py4j's pinned-thread client server carries the Python side's calls back to the JVM thread that is
waiting for the planner's answer (Spark's query planning thread), which runs the job and returns. A slice that
cannot be merged is returned by its task as an error (a task does not fail, so Spark does not retry it) and fails
the query with the slice named.

Writes go through ``pyarrow.fs`` (:class:`~hive_bridge.storage.core.Storage`) with, for ``s3a://``, the endpoint
and credentials derived from the session's Hadoop settings (:mod:`hive_bridge.spark.hadoop`); every merged file's
parquet key-value metadata records who wrote it (:data:`MERGED_BY_KEY`: host and process id).
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from hive_bridge.layout.fsview import FileSlice
from hive_bridge.spark.merge import conform, hudi_reader, merge_with_hudi
from hive_bridge.spark.merged_cache import CACHE, SUFFIX, merged_dir, slice_key, table_dir
from hive_bridge.spark.sessions import SparkReadError
from hive_bridge.storage.core import LOCAL_SCHEMES, Storage, split_uri
from hive_bridge.table.table import HudiTable

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["DRIVER_MAX_CONF", "DRIVER_MAX_DEFAULT", "MERGED_BY_KEY", "STORE_CONF", "MergedStore", "configure",
           "drop_stale", "merge_and_write", "merged_files", "store"]

#: the session conf naming the merged-slice store (a URI every executor reads)
STORE_CONF = "spark.hive_bridge.mergedStore"
#: the session conf: up to this many slices to merge in one scan are merged in the driver, more by a Spark job
DRIVER_MAX_CONF = "spark.hive_bridge.mergeInDriverMax"
#: measured: see docs/spark.md ("Merged slices on a cluster")
DRIVER_MAX_DEFAULT = 1000
#: the parquet key-value metadata key of a merged file saying who wrote it (``host:pid``)
MERGED_BY_KEY = "hive_bridge.merged_by"


@dataclass(frozen=True)
class MergedStore:
    """Where merged slices go. ``uri`` None: the local merged-slice cache folder (bounded, evicting); else the
    store's URI as Spark reads it (``file:`` stores as a local path), and the storage options pyarrow writes it
    with (never shown)."""

    uri: str | None = None
    options: Mapping[str, str] = field(default_factory=dict, repr=False)
    driver_max: int = DRIVER_MAX_DEFAULT

    @property
    def local_cache(self) -> bool:
        return self.uri is None

    def root(self) -> str:
        return str(merged_dir()) if self.uri is None else self.uri

    def folder(self, table: HudiTable) -> str:
        if self.uri is None:
            return str(table_dir(table))
        return f"{self.uri.rstrip('/')}/{table_dir(table).name}"

    def location(self, table: HudiTable, s: FileSlice, schema: pa.Schema, as_of: str | None = None) -> str:
        """Where the slice merged in ``schema`` (as of the merge bound ``as_of``, or latest) is stored."""
        return f"{self.folder(table)}/{slice_key(table, s, schema, as_of)}{SUFFIX}"

    def storage(self) -> Storage:
        return Storage.for_uri(self.root(), self.options or None)

    def listing(self, table: HudiTable) -> dict[str, tuple[int, int]]:
        """The table folder's merged files: location -> (size, mtime in ms); one listing."""
        storage = self.storage()
        folder = self.folder(table)
        try:
            infos = storage.list_infos(folder)
        except FileNotFoundError:
            return {}
        out: dict[str, tuple[int, int]] = {}
        for info in infos:
            if info.path.endswith(SUFFIX) and info.type == pafs.FileType.File:
                mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
                out[storage.location(info.path) if not storage.is_local else info.path] = (info.size or 0, mtime)
        return out


_STORE = MergedStore()
_STORE_LOCK = threading.Lock()


def store() -> MergedStore:
    """The store the planner merges into (the one :func:`configure` set last; the local cache before)."""
    with _STORE_LOCK:
        return _STORE


def configure(spark: SparkSession) -> MergedStore:
    """Read the store and the driver's line from ``spark``'s conf (called by ``register``): a cluster session
    without a store is refused with what to set; a store Spark's Hadoop file systems cannot open is refused with
    what is missing."""
    global _STORE
    from hive_bridge.spark.hadoop import session_hadoop_conf, spark_storage

    text = (spark.conf.get(STORE_CONF, None) or "").strip()
    line_text = (spark.conf.get(DRIVER_MAX_CONF, None) or "").strip()
    try:
        driver_max = int(line_text) if line_text else DRIVER_MAX_DEFAULT
    except ValueError:
        raise SparkReadError(f"{DRIVER_MAX_CONF}={line_text!r} is not a whole number") from None
    master = str(spark.sparkContext.master)
    if not text:
        if not master.startswith("local"):
            raise SparkReadError(
                f"hudi-hive on the cluster {master}: merge-on-read slices are merged into files every executor "
                f"must read, and the driver's local cache folder is not shared; set {STORE_CONF} to a URI all "
                "executors reach (s3a://bucket/tmp/merged, hdfs://namenode/tmp/merged, file:///shared/folder) "
                "when the session starts, or with spark.conf.set before register(spark)")
        found = MergedStore(None, {}, driver_max)
    else:
        scheme, _ = split_uri(text)
        if scheme in LOCAL_SCHEMES:
            path = text.removeprefix("file://").removeprefix("file:")
            if not os.path.isabs(path):
                raise SparkReadError(f"{STORE_CONF}={text!r}: a local store must be an absolute path or file:///…")
            found = MergedStore(path.rstrip("/") or "/", {}, driver_max)
        else:
            try:
                uri, options = spark_storage(text.rstrip("/"), {}, session_hadoop_conf(spark))
            except SparkReadError as exc:
                raise SparkReadError(f"{STORE_CONF}: {exc}") from None
            found = MergedStore(uri, options, driver_max)
    with _STORE_LOCK:
        _STORE = found
    return found


# -- merging: the descriptors, the task, the driver's side -------------------------------------------------------

def _descriptor(table: HudiTable, s: FileSlice, schema: pa.Schema, out: str, target: MergedStore,
                as_of: str | None = None) -> dict[str, Any]:
    return {"root": str(table.base_path), "table_options": dict(table.storage.options), "as_of": as_of,
            "base": s.base_file.path if s.base_file is not None else "", "logs": [lf.path for lf in s.log_files],
            "partition_values": dict(s.partition_values), "slice": f"{s.partition_path}/{s.file_id}",
            "schema": schema.serialize().to_pybytes(), "out": out, "store": target.root(),
            "store_options": dict(target.options)}


def merge_and_write(items: Iterable[dict[str, Any]]) -> Iterator[tuple[str, str, Any, int, str]]:
    """Merge each described slice with hudi-rs and write it to the store (runs in executors' Python workers, or in
    the driver): ``("OK", location, size, mtime ms, writer)`` or ``("ERR", location, message, 0, writer)``. A
    descriptor's ``as_of`` (the merge bound of a state read by time travel) makes the merge skip the log blocks of
    later instants."""
    writer = f"{socket.gethostname()}:{os.getpid()}"
    readers: dict[tuple[str, str | None], Any] = {}
    stores: dict[str, Storage] = {}
    for d in items:
        try:
            which = (d["root"], d.get("as_of"))
            reader = readers.get(which)
            if reader is None:
                reader = readers[which] = hudi_reader(d["root"], d["table_options"], which[1])
            schema = pa.ipc.read_schema(pa.py_buffer(d["schema"]))
            batches = merge_with_hudi(reader, d["base"], d["logs"])
            rows = pa.Table.from_batches(batches) if batches else schema.empty_table()
            rows = conform(rows, schema, d["partition_values"])
        except Exception as exc:
            yield ("ERR", d["out"], f"{d['root']}: cannot merge file slice {d['slice']} with hudi-rs "
                   f"({type(exc).__name__}: {exc}); refusing to return stale or missing rows", 0, writer)
            continue
        rows = rows.replace_schema_metadata({**(rows.schema.metadata or {}), MERGED_BY_KEY: writer})
        try:
            storage = stores.get(d["store"])
            if storage is None:
                storage = stores[d["store"]] = Storage.for_uri(d["store"], d["store_options"] or None)
            size = _write(storage, d["out"], rows)
        except Exception as exc:
            yield ("ERR", d["out"], f"{d['root']}: cannot write the merged file slice {d['slice']} to "
                   f"{d['out']} ({type(exc).__name__}: {exc})", 0, writer)
            continue
        yield ("OK", d["out"], size, int(time.time() * 1000), writer)


def _write(storage: Storage, location: str, rows: pa.Table) -> int:
    if storage.is_local:  # a unique temporary name renamed into place: concurrent writers of one slice agree
        folder = os.path.dirname(location)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        os.close(fd)
        try:
            pq.write_table(rows, tmp)
            os.replace(tmp, location)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return os.stat(location).st_size
    sink = pa.BufferOutputStream()
    pq.write_table(rows, sink)
    data = sink.getvalue().to_pybytes()
    storage.write_bytes(location, data)
    return len(data)


#: what the last merges of this process did: slices merged in the driver, by jobs, and the jobs run (reports)
STATS = {"driver": 0, "job": 0, "jobs": 0}


def _run(descriptors: list[dict[str, Any]], target: MergedStore) -> list[tuple[str, str, Any, int, str]]:
    """Merge in the driver up to the line, else as a Spark job on the executors."""
    if len(descriptors) <= target.driver_max:
        STATS["driver"] += len(descriptors)
        return list(merge_and_write(descriptors))
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        STATS["driver"] += len(descriptors)
        return list(merge_and_write(descriptors))
    slots = max(1, sc.defaultParallelism)
    parts = min(len(descriptors), slots * 4)
    sc.setJobDescription(f"hive-bridge: merge {len(descriptors)} merge-on-read file slices")
    try:
        out = sc.parallelize(descriptors, parts).mapPartitions(merge_and_write).collect()
    finally:
        sc.setJobDescription(None)  # type: ignore[arg-type]
    STATS["job"] += len(descriptors)
    STATS["jobs"] += 1
    return out


def merged_files(table: HudiTable, slices: Sequence[FileSlice], schema: pa.Schema,
                 hold: list[str] | None = None, as_of: str | None = None
                 ) -> dict[tuple[str, str], tuple[str, int, int]]:
    """Each slice's merged file in the store (merged now when the store has none): by (partition path, file id),
    (location, size, mtime ms). ``hold``: the caller's in-use list, to which every location is added before
    the store is looked at (no eviction deletes it between its merge and the scan). ``as_of``: the merge bound
    of a state read by time travel (:func:`hive_bridge.layout.asof.merge_bound`): the slices are merged up to it,
    under keys of their own (:func:`~hive_bridge.spark.merged_cache.slice_key`)."""
    target = store()
    if not slices:
        return {}
    where = {(s.partition_path, s.file_id): target.location(table, s, schema, as_of) for s in slices}
    if hold is not None:
        hold.extend(where.values())
    found: dict[str, tuple[int, int]]
    if target.local_cache:
        found = {}
        for loc in where.values():
            try:
                st = os.stat(loc)
            except FileNotFoundError:
                continue
            found[loc] = (st.st_size, int(st.st_mtime * 1000))
    else:
        found = target.listing(table)
    missing = [(s, where[(s.partition_path, s.file_id)]) for s in slices
               if where[(s.partition_path, s.file_id)] not in found]
    if missing:
        results = _run([_descriptor(table, s, schema, loc, target, as_of) for s, loc in missing], target)
        errors = [r for r in results if r[0] == "ERR"]
        if errors:
            more = f" (and {len(errors) - 1} more slices)" if len(errors) > 1 else ""
            raise SparkReadError(f"{errors[0][2]}{more}")
        for _, loc, size, mtime, _ in results:
            found[loc] = (int(size), int(mtime))
    if target.local_cache:
        for loc in where.values():
            CACHE.record(loc, found[loc][0])
        if missing:
            CACHE.evict(keep=where.values())
    return {k: (loc, *found[loc]) for k, loc in where.items()}


def drop_stale(table: HudiTable, live: Iterable[tuple[FileSlice, pa.Schema]]) -> list[str]:
    """Delete ``table``'s merged files in the store that belong to none of the ``live`` slices (the latest
    state's: files merged as of earlier instants go too) and that no scan may still read; the deleted
    locations."""
    target = store()
    if target.local_cache:
        return CACHE.drop_stale(table, live)
    keep = {target.location(table, s, schema) for s, schema in live}
    in_use = CACHE.in_use()
    storage = target.storage()
    deleted = []
    for loc in target.listing(table):
        if loc not in keep and loc not in in_use:
            storage.delete(loc)
            deleted.append(loc)
    return deleted
