"""Merge-on-read slices as parquet files Spark's parquet reader can read: hudi-rs merges a kept slice's base file
with its log files (or reads a base file of another format), the rows are conformed to the relation's data schema
and written once to a cache folder, named by the slice's identity (table, file group, base file, every log file
with its size): a slice that gains a log file, or is compacted, is another file. Only the slices a scan keeps are
merged, so a selective query on a large table merges a few slices, once."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hive_bridge import config
from hive_bridge.layout.fsview import FileSlice
from hive_bridge.spark.merge import conform, hudi_reader, merge_with_hudi
from hive_bridge.spark.sessions import SparkReadError
from hive_bridge.table.table import HudiTable


def merged_dir() -> Path:
    return config.settings().cache_root / "merged"


def slice_key(table: HudiTable, s: FileSlice, schema: pa.Schema) -> str:
    h = hashlib.sha256()
    base = s.base_file
    parts = [str(table.base_path), s.partition_path, s.file_id, s.base_instant,
             f"{base.path}:{base.size}:{base.mtime}" if base is not None else "-",
             *(f"{lf.path}:{lf.size}" for lf in s.log_files), schema.to_string()]
    h.update("\0".join(parts).encode())
    return h.hexdigest()[:32]


def merged_slice_file(table: HudiTable, s: FileSlice, schema: pa.Schema) -> str:
    """The path of the slice's merged rows as a parquet file in ``schema`` (written on first use)."""
    out = merged_dir() / f"{slice_key(table, s, schema)}.parquet"
    if out.exists():
        return str(out)
    base = s.base_file.path if s.base_file is not None else ""
    try:
        batches = merge_with_hudi(hudi_reader(str(table.base_path)), base, [lf.path for lf in s.log_files])
        rows = pa.Table.from_batches(batches) if batches else schema.empty_table()
        rows = conform(rows, schema, s.partition_values)
    except Exception as exc:
        raise SparkReadError(f"{table.base_path}: cannot merge file slice {s.partition_path}/{s.file_id} with "
                             f"hudi-rs ({type(exc).__name__}: {exc}); refusing to return stale or missing rows"
                             ) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(rows, tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return str(out)
