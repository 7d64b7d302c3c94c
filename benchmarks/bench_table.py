"""Benchmark of hive_bridge.table: column-statistics index build and the listing + index load of big tables.

1. A real 10,000-file copy-on-write table (written by HudiWriter, 100 partitions x 100 files x 20 rows):
   index build from footers (target >= 2,000 files/s), load from the persisted index, and an incremental
   refresh after an upsert.
2. A synthesized 100,000-file table (one commit, zero-byte base files, index segment synthesized in the index's
   own format): open + latest file slices + index load through the real code path (target <= 1 s), best and
   median of 7 runs; peers in the same run: hudi-rs's `get_file_slices()` on the same table, and a bare
   `os.scandir` + stat of every file (the floor any listing that reads file sizes pays).

Run: `.venv/bin/python benchmarks/bench_table.py [--files 10000] [--big 100000] [--keep DIR]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
import uuid
from decimal import Decimal
from pathlib import Path

import hudi
import pyarrow as pa
from hudi import HudiTableBuilder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_bridge.stats.contract import bound_columns, has_nan_count
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION, stats_schema
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

RUNS = 7


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _data(n: int, start: int, partitions: int) -> pa.Table:
    ids = list(range(start, start + n))
    base = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([f"name-{i:08d}" for i in ids], pa.string()),
        "value": pa.array([i * 0.5 for i in ids], pa.float64()),
        "flag": pa.array([i % 2 == 0 for i in ids], pa.bool_()),
        "amount": pa.array([Decimal(i) / 100 for i in ids], pa.decimal128(12, 2)),
        "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 365) for i in ids], pa.date32()),
        "ts": pa.array([base + dt.timedelta(seconds=i) for i in ids], pa.timestamp("us", tz="UTC")),
        "part": pa.array([(i // (n // partitions or 1)) % partitions for i in range(n)], pa.int32()),
    })


def bench_real(root: Path, files: int) -> None:
    partitions = 100
    rows_per_file = 20
    path = root / "real"
    t0 = time.perf_counter()
    writer = HudiWriter(path, table_name="bench_real", partition_fields=["part"], rows_per_file=rows_per_file)
    writer.insert(_data(files * rows_per_file, 0, partitions))
    write_s = time.perf_counter() - t0
    table = HudiTable.open(path)
    n = len(table.latest_file_slices())
    print(f"[real] wrote {n} base files ({files * rows_per_file} rows) in {write_s:.1f} s")

    gc.collect()
    rss0 = _rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    index = ColumnStatsIndex(HudiTable.open(path))
    stats = index.load()
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"[real] index build: {stats.num_rows} files, {stats.num_columns} columns in {build_s:.2f} s "
          f"(cpu {build_cpu:.2f} s) = {stats.num_rows / build_s:,.0f} files/s (target >= 2,000); footers read "
          f"{index.last.files_from_footers}; peak RSS +{_rss_mb() - rss0:.0f} MB")

    t0 = time.perf_counter()
    index2 = ColumnStatsIndex(HudiTable.open(path))
    stats2 = index2.load()
    load_s = time.perf_counter() - t0
    assert stats2.equals(stats)
    print(f"[real] open + list + index load: {load_s:.3f} s; from index {index2.last.files_from_index}, "
          f"from footers {index2.last.files_from_footers}")

    upd = _data(30, 0, partitions).slice(0, 30)
    writer.upsert(upd)
    t0 = time.perf_counter()
    stats3 = index2.refresh()
    refresh_s = time.perf_counter() - t0
    print(f"[real] refresh after an upsert: {refresh_s:.3f} s; footers read {index2.last.files_from_footers}, "
          f"from index {index2.last.files_from_index} ({stats3.num_rows} rows)")


def _synthesize_big(path: Path, files: int, partitions: int) -> None:
    instant = "20240101000000000"
    hoodie = path / ".hoodie"
    hoodie.mkdir(parents=True)
    (hoodie / "hoodie.properties").write_text(
        "hoodie.table.name=bench_big\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\n"
        "hoodie.timeline.layout.version=1\nhoodie.table.recordkey.fields=id\nhoodie.table.partition.fields=part\n"
        "hoodie.datasource.write.hive_style_partitioning=true\n"
    )
    schema = {"type": "record", "name": "bench_big_record", "namespace": "hoodie.bench_big", "fields": [
        {"name": "id", "type": ["null", "long"]}, {"name": "name", "type": ["null", "string"]},
        {"name": "value", "type": ["null", "double"]}, {"name": "part", "type": ["null", "int"]}]}
    (hoodie / f"{instant}.commit.requested").write_bytes(b"")
    (hoodie / f"{instant}.inflight").write_text("{}")
    (hoodie / f"{instant}.commit").write_text(json.dumps({
        "partitionToWriteStats": {}, "compacted": False, "operationType": "INSERT",
        "extraMetadata": {"schema": json.dumps(schema)}}))
    per = files // partitions
    paths: list[str] = []
    parts: list[str] = []
    for p in range(partitions):
        d = path / f"part={p}"
        d.mkdir()
        for _ in range(per):
            name = f"{uuid.uuid4()}-0_0-1-1_{instant}.parquet"
            (d / name).touch()
            paths.append(f"part={p}/{name}")
            parts.append(f"part={p}")
    # the index segment, in the index's own format (what a previous build would have persisted)
    table = HudiTable.open(path)
    index = ColumnStatsIndex(table)
    leaves = index.target_leaves()
    n = len(paths)
    cols: dict[str, pa.Array] = {
        "path": pa.array(paths, pa.string()), "partition": pa.array(parts, pa.string()),
        "file_size": pa.array([0] * n, pa.int64()), "instant": pa.array([instant] * n, pa.string()),
        "num_rows": pa.array([1000] * n, pa.int64()),
    }
    for leaf in leaves:
        if pa.types.is_string(leaf.type):
            lo, hi = pa.array([f"a{i}" for i in range(n)]), pa.array([f"z{i}" for i in range(n)])
        elif pa.types.is_floating(leaf.type):
            lo, hi = pa.array([float(i) for i in range(n)]), pa.array([float(i + 1) for i in range(n)])
        else:
            lo, hi = pa.array(range(n), pa.int64()), pa.array(range(1, n + 1), pa.int64())
        nans = pa.array([0] * n, pa.int64()) if has_nan_count(leaf.type) else None
        cols.update(bound_columns(leaf.name, leaf.type, lo.cast(leaf.type), hi.cast(leaf.type),
                                  pa.array([0] * n, pa.int64()), nan_counts=nans))
    seg = pa.table(cols).cast(stats_schema(leaves, with_has_log_files=False))
    seg = seg.replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})
    assert index._write_segment(seg) is not None


def bench_big(root: Path, files: int) -> None:
    path = root / "big"
    t0 = time.perf_counter()
    _synthesize_big(path, files, 100)
    print(f"[big] synthesized {files} zero-byte base files + index segment in {time.perf_counter() - t0:.1f} s")
    for freeze in (False, True):
        _big_runs(path, files, freeze)
    tracemalloc.start()
    table = HudiTable.open(path)
    table.latest_file_slices()
    ColumnStatsIndex(table).load()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"[big] peak Python allocations (tracemalloc) {peak / 2**20:.0f} MB; process peak RSS {_rss_mb():.0f} MB")
    # peers in the same run: hudi-rs listing the same table, and the bare stat of every file the listing needs
    peer: list[float] = []
    for _ in range(3):
        gc.collect()
        t0 = time.perf_counter()
        n = len(HudiTableBuilder.from_base_uri(str(path)).build().get_file_slices())
        peer.append(time.perf_counter() - t0)
        assert n == files, n
    print(f"[big] peer: hudi-rs {hudi.__version__} HudiTable.get_file_slices() of the same table: best "
          f"{min(peer):.3f} s of 3 (file slices only, no statistics)")
    t0 = time.perf_counter()
    stat_count = sum(1 for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")
                     for e in os.scandir(p) if e.stat(follow_symlinks=False).st_size >= 0)
    print(f"[big] floor: os.scandir + stat of the {stat_count:,} files in one thread: "
          f"{time.perf_counter() - t0:.3f} s (what listing costs before any Hudi logic)")


def _big_runs(path: Path, files: int, freeze: bool) -> None:
    """Timed runs of open + latest slices + index load; ``freeze``: the opt-in collector freeze of the listing."""
    label = "freeze_listing=True" if freeze else "default (collector untouched)"
    totals: list[float] = []
    for attempt in range(RUNS):
        gc.collect()
        t0, c0 = time.perf_counter(), time.process_time()
        table = HudiTable.open(path, freeze_listing=freeze)
        slices = table.latest_file_slices()
        t1, c1 = time.perf_counter(), time.process_time()
        index = ColumnStatsIndex(table)
        stats = index.load()
        t2, c2 = time.perf_counter(), time.process_time()
        assert len(slices) == files and stats.num_rows == files, (len(slices), stats.num_rows)
        assert index.last.files_from_index == files and index.last.files_from_footers == 0, index.last
        totals.append(t2 - t0)
        print(f"[big] {label} run {attempt + 1}: open + latest slices {t1 - t0:.3f} s (cpu {c1 - c0:.3f}), index load "
              f"{t2 - t1:.3f} s (cpu {c2 - c1:.3f}), total {t2 - t0:.3f} s (cpu {c2 - c0:.3f}; target <= 1 s)")
        del table, slices, index, stats
    print(f"[big] {label}: open + latest slices + index load of {files:,} files: best {min(totals):.3f} s, median "
          f"{statistics.median(totals):.3f} s of {RUNS} runs (target <= 1 s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--big", type=int, default=100_000)
    ap.add_argument("--keep", type=Path, default=None, help="work folder to keep (default: a temp folder)")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench_table_"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, pyarrow {pa.__version__}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.1f}, work folder {root}")
    try:
        bench_real(root, args.files)
        bench_big(root, args.big)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
