"""An incremental pull of the last commits against a full snapshot read: files, bytes, time.

A generated copy-on-write table (the test writer, table version 6): one insert of `--files` files of `--rows`
rows, then `--commits` upserts, each updating `--keys` random keys (a new slice of each file group holding one)
and inserting one new key. Then, without Spark (pyarrow reads the parquet files; the same files Spark would):

- the incremental pull of the last `--last` commits (`list_incremental`: Hudi's begin / end instants): files
  listed, bytes, planning time, read time of the files with the commit-time row filter applied;
- the full snapshot read of the latest state filtered to the same commit times (what a reader without
  incremental pulls does): files, bytes, time;
- the rows of both, checked equal.

    python benchmarks/bench_incremental.py [--files 1000] [--rows 20] [--commits 500] [--last 5] [--keys 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_bridge.layout.fsview import FileSlice
from hive_bridge.spark.reads import list_incremental
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter


def _data(ids: list[int], tag: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{tag}{i}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "p": [f"p{i % 10}" for i in ids]})


def _read(slices: list[FileSlice], begin: str, end: str) -> tuple[pa.Table, int, float]:
    """(rows with a commit time in (begin, end], bytes of the files, seconds)."""
    t0 = time.perf_counter()
    parts = []
    size = 0
    for s in slices:
        assert s.base_file is not None
        size += s.base_file.size
        t = pq.read_table(s.base_file.full_path, columns=["_hoodie_commit_time", "id", "name"])
        ct = t.column("_hoodie_commit_time")
        parts.append(t.filter(pc.and_(pc.greater(ct, begin), pc.less_equal(ct, end))))
    rows = pa.concat_tables(parts) if parts else pa.table({"_hoodie_commit_time": [], "id": [], "name": []})
    return rows, size, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=20)
    ap.add_argument("--commits", type=int, default=500)
    ap.add_argument("--last", type=int, default=5)
    ap.add_argument("--keys", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "t"
        w = HudiWriter(root, partition_fields=("p",), precombine_field="ts", rows_per_file=args.rows)
        t0 = time.perf_counter()
        n = args.files * args.rows
        w.insert(_data(list(range(n)), "n", 0))
        for k in range(1, args.commits + 1):
            w.upsert(_data([*rng.sample(range(n), args.keys), n], f"u{k}_", k))
            n += 1
        print(f"table: {args.files} files x {args.rows} rows, {args.commits} upserts of {args.keys} keys + 1 new: "
              f"written in {time.perf_counter() - t0:.1f} s")
        table = HudiTable.open(root)
        instants = [i.timestamp for i in table.timeline.completed_writes]
        begin, end = instants[-args.last - 1], instants[-1]
        t0 = time.perf_counter()
        _, listing, _ = list_incremental(str(root), None, begin=begin, end=end, stats_source="footers")
        plan_s = time.perf_counter() - t0
        inc_rows, inc_bytes, inc_s = _read(listing.slices, begin, end)
        latest = table.latest_file_slices()
        full_rows, full_bytes, full_s = _read(latest, begin, end)
        same = sorted(inc_rows.column("id").to_pylist()) == sorted(full_rows.column("id").to_pylist())
        print(f"incremental pull of the last {args.last} of {len(instants)} commits: {len(listing.slices)} files, "
              f"{inc_bytes:,} bytes, planning {plan_s * 1000:.0f} ms, read {inc_s * 1000:.0f} ms, "
              f"{inc_rows.num_rows} rows")
        print(f"full snapshot read, same row filter: {len(latest)} files, {full_bytes:,} bytes, "
              f"read {full_s * 1000:.0f} ms, {full_rows.num_rows} rows")
        print(f"files {len(latest) / max(1, len(listing.slices)):.0f}x fewer, bytes "
              f"{full_bytes / max(1, inc_bytes):.0f}x fewer, time {full_s / max(1e-9, plan_s + inc_s):.1f}x less; "
              f"same rows: {same}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
