"""Benchmark: the layout advisor on a 100,000-file table from a 10,000-filter workload.

The table is synthesized as ``bench_table.py``'s big table is (one commit, 100 partitions, the index segment
written in the index's own format), except that its base files are real parquet files (100 rows each: ``id``
ascending through the table, so today's layout is sorted by ``id``; ``a`` and ``b`` uniformly random), since
the advisor reads rows from a sample of them. The workload is a file of 10,000 distinct HiveQL filters: 7,000
ranges on ``a``, 2,000 point lookups on ``id``, 1,000 ranges on ``b`` and ``a``.

Measured in one process, each step timed with its peak RSS (``ru_maxrss``) after it:

- reading the workload and opening the table (list 100,000 files, load the index);
- **peer**: planning the filters once with the real pruner on today's table (each listing dropped once
  counted) — what ``hive-bridge replay`` does for them. The pruner lists every kept file (a Python object per
  file), so a filter keeping most of 100,000 files takes a good part of a second: the peer plans every 20th
  filter (500, the same mix) and the time for all 10,000 is extrapolated from them (``--peer-every 1`` plans
  every one);
- **advise**: the advisor — 3 samples of up to 1,000 files (stratified over the 100 partitions), the simulated
  files' statistics of every candidate layout, each filter judged once over all of them with the vectorized
  evaluator, and the calibration (the heaviest filters planned with the real pruner: 20 at 100,000 files).

Target (the advisor's issue): advise <= 2 minutes on 2 cores. The table is written under ``--root`` (default: a
temporary folder in ``/dev/shm`` when it exists, where 100,000 small files are quick to make) and removed
afterwards unless ``--keep``.

Run: ``.venv/bin/python benchmarks/bench_advise.py [--files 100000] [--filters 10000] [--root DIR] [--keep]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sarg
from hive_bridge.advisor import advise_workload
from hive_bridge.app.replay import load_workload
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.rows import FORMAT_KEY, FORMAT_VERSION, stats_schema
from hive_bridge.table.table import HudiTable
from hive_bridge.workload.tables import TableResolver

ROWS_PER_FILE = 100
PARTITIONS = 100
INSTANT = "20240101000000000"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def build(path: Path, files: int, seed: int = 1) -> None:
    """``files`` real parquet base files in 100 partitions, and the index segment of their statistics."""
    rng = np.random.default_rng(seed)
    hoodie = path / ".hoodie"
    hoodie.mkdir(parents=True)
    (hoodie / "hoodie.properties").write_text(
        "hoodie.table.name=bench_advise\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\n"
        "hoodie.timeline.layout.version=1\nhoodie.table.recordkey.fields=id\nhoodie.table.partition.fields=part\n"
        "hoodie.datasource.write.hive_style_partitioning=true\n")
    schema = {"type": "record", "name": "bench_advise_record", "namespace": "hoodie.bench_advise", "fields": [
        {"name": "id", "type": ["null", "long"]}, {"name": "a", "type": ["null", "long"]},
        {"name": "b", "type": ["null", "double"]}, {"name": "part", "type": ["null", "int"]}]}
    (hoodie / f"{INSTANT}.commit.requested").write_bytes(b"")
    (hoodie / f"{INSTANT}.inflight").write_text("{}")
    (hoodie / f"{INSTANT}.commit").write_text(json.dumps({
        "partitionToWriteStats": {}, "compacted": False, "operationType": "INSERT",
        "extraMetadata": {"schema": json.dumps(schema)}}))
    n = files * ROWS_PER_FILE
    ids = np.arange(n, dtype=np.int64).reshape(files, ROWS_PER_FILE)
    a = rng.integers(0, 10**9, (files, ROWS_PER_FILE))
    b = rng.random((files, ROWS_PER_FILE))
    per = files // PARTITIONS
    paths, parts, sizes = [], [], []
    for k in range(files):
        p = min(k // per, PARTITIONS - 1)
        d = path / f"part={p}"
        if k % per == 0:
            d.mkdir(exist_ok=True)
        name = f"{uuid.uuid4()}-0_0-1-1_{INSTANT}.parquet"
        buf = io.BytesIO()
        pq.write_table(pa.table({"id": ids[k], "a": a[k], "b": b[k],
                                 "part": pa.array(np.full(ROWS_PER_FILE, p, dtype=np.int32))}), buf)
        data = buf.getvalue()
        (d / name).write_bytes(data)
        paths.append(f"part={p}/{name}")
        parts.append(f"part={p}")
        sizes.append(len(data))
    table = HudiTable.open(path)
    index = ColumnStatsIndex(table)
    leaves = index.target_leaves()
    cols: dict[str, pa.Array] = {
        "path": pa.array(paths), "partition": pa.array(parts), "file_size": pa.array(sizes, pa.int64()),
        "instant": pa.array([INSTANT] * files), "num_rows": pa.array(np.full(files, ROWS_PER_FILE, np.int64)),
    }
    values = {"id": ids, "a": a, "b": b,
              "part": np.repeat(np.minimum(np.arange(files) // per, PARTITIONS - 1), 1)[:, None]}
    for leaf in leaves:
        v = values[leaf.name]
        cols[f"{leaf.name}::min"] = pa.array(v.min(axis=1)).cast(leaf.type)
        cols[f"{leaf.name}::max"] = pa.array(v.max(axis=1)).cast(leaf.type)
        cols[f"{leaf.name}::null_count"] = pa.array(np.zeros(files, np.int64))
        cols[f"{leaf.name}::min_exact"] = pa.array(np.ones(files, bool))
        cols[f"{leaf.name}::max_exact"] = pa.array(np.ones(files, bool))
    seg = pa.table(cols).cast(stats_schema(leaves, with_has_log_files=False))
    seg = seg.replace_schema_metadata({FORMAT_KEY: FORMAT_VERSION})
    assert index._write_segment(seg) is not None


def workload(path: Path, count: int, files: int, seed: int = 2) -> None:
    """``count`` distinct filters, one per line: 70 % ranges on a, 20 % id lookups, 10 % ranges on b and a."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(count):
        kind = i % 10
        if kind < 7:
            lo = int(rng.integers(0, 10**9 - 10**6))
            lines.append(f"a >= {lo} and a < {lo + int(rng.integers(1, 10**6))}")
        elif kind < 9:
            lines.append(f"id = {int(rng.integers(0, files * ROWS_PER_FILE))}")
        else:
            lo, alo = float(rng.random()) * 0.99, int(rng.integers(0, 9 * 10**8))
            lines.append(f"b >= {lo:.6f} and b < {lo + 0.01:.6f} and a > {alo}")
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--filters", type=int, default=10_000)
    ap.add_argument("--root", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--peer-every", type=int, default=20, help="the peer plans every Nth filter (default 20)")
    args = ap.parse_args()
    base = args.root or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    root = Path(tempfile.mkdtemp(prefix="bench-advise-", dir=base))
    try:
        table = root / "t"
        t0 = time.perf_counter()
        build(table, args.files)
        log = root / "filters.txt"
        workload(log, args.filters, args.files)
        print(f"synthesized {args.files:,} parquet files + index segment and {args.filters:,} filters in "
              f"{time.perf_counter() - t0:.1f} s ({root})")
        print(f"load average before: {os.getloadavg()}")
        t0 = time.perf_counter()
        work, problems = load_workload([str(log)], TableResolver({}, str(table)))
        assert not problems, problems[:3]
        loaded = time.perf_counter() - t0
        print(f"read the workload and opened the table: {loaded:.1f} s; peak RSS {_rss_mb():.0f} MiB")
        state = work.tables[str(table)]
        assert state.snapshot is not None
        entries = list(state.entries.values())
        planned = entries[::args.peer_every]
        t0 = time.perf_counter()
        kept = 0
        for e in planned:       # each listing dropped once counted (kept, 10,000 of them hold gigabytes)
            kept += state.snapshot.plan(sarg.read_filter(e.hiveql, state.types),
                                          session_time_zone=e.time_zone).files_kept
        peer = time.perf_counter() - t0
        print(f"peer: planned {len(planned):,} of the {len(entries):,} distinct filters with the pruner on today's "
              f"{args.files:,} files in {peer:.1f} s ({peer / len(planned) * 1000:.0f} ms a filter, {kept:,} files "
              f"kept in all): all {len(entries):,} would take {peer / len(planned) * len(entries):.0f} s; "
              f"peak RSS {_rss_mb():.0f} MiB")
        t0 = time.perf_counter()
        # at today's file size (the benchmark's files are small: the default would cut files of Hudi's 120 MiB)
        sizes = [sl.base_file.size for sl in state.snapshot.slices if sl.base_file is not None]
        advice, errors = advise_workload(work, [str(table)], target_file_bytes=round(sum(sizes) / len(sizes)))
        took = time.perf_counter() - t0
        assert not errors, errors
        (a,) = advice
        print(f"advise: {took:.1f} s (target <= 120 s) for {a.filters:,} filters, {len(a.candidates)} layouts, "
              f"{a.samples} samples of {a.sample_rows:,} rows; peak RSS {_rss_mb():.0f} MiB")
        for c in a.candidates:
            print(f"  {c.layout:24s} files read {c.files_read:14,.0f}  bytes {c.bytes_read / 2**30:9.2f} GiB "
                  f"[{c.bytes_low / 2**30:.2f} - {c.bytes_high / 2**30:.2f}]  saving {c.saving:+.1%}")
        print(f"  calibration ({a.calibration_filters} heaviest filters): engine on today's files "
              f"{a.engine_bytes_read / 2**30:.2f} GiB, today simulated {a.simulated_bytes_read / 2**30:.2f} GiB")
        print(f"  recommended: {a.recommended['layout'] if a.recommended else 'keep today'}")
        for note in a.notes:
            print(f"  note: {note}")
        print(f"load average after: {os.getloadavg()}")
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
