"""An incremental pull of the last commits against a full snapshot read, by three readers: files, bytes, rows, time.

A generated copy-on-write table (the test writer, table version 6): one insert of `--files` files of `--rows`
rows, then `--commits` upserts, each updating `--keys` random keys (a new slice of each file group holding one)
and inserting one new key. Two queries, each read by each reader:

- the incremental pull of the last `--last` commits: Hudi's begin / end instants (on version 6 both are requested
  instant times, the timeline's commit times; begin exclusive, end inclusive); rows with `_hoodie_commit_time` in
  (begin, end] of the file groups those commits wrote;
- the full snapshot read of the latest state filtered to the same commit times (what a reader without
  incremental pulls does).

Readers: **hive-bridge, pyarrow** (``list_incremental`` plans, pyarrow reads the kept files and applies the row
filter in this process; the snapshot reads every latest file); **Hudi 1.1.1's Spark reader** (``tools/hudi_peer.py``:
pyspark 3.5 with Hudi's bundle in its own environment, one JVM; ``hoodie.datasource.query.type=incremental`` with
``hoodie.datasource.read.begin.instanttime`` / ``end.instanttime``, and a snapshot read with the row filter in
``where``; metadata table and data skipping off; files and bytes: its scan's "number of files read" and "size of
files read"); **hive-bridge through Spark** (``read_hudi(spark, path, begin_instant=..., end_instant=...)`` in the
product's pyspark, local[2]; the snapshot ``read_hudi(spark, path)`` with the row filter in ``where``; files and
bytes: what its listStatus kept). Times: planning (hive-bridge's listing; Hudi's relation and physical plan with its
file index's listing) and reading (collecting the rows). Each reader runs the incremental pull twice: the first
run cold (its total shown as ``cold s``: a fresh JVM, caches empty), the second measured; then the snapshot read,
once. Peak memory: the resident set's peak during each read
(Linux's VmHWM reset before it): this Python process for pyarrow, the driver JVM for the Spark readers. Rows: the
count and a digest (SHA-256 of the sorted ``to_json`` rows of the data columns) of every read, checked equal.

    python benchmarks/bench_incremental.py [--files 5000] [--rows 20] [--commits 500] [--last 5] [--keys 3]
        [--no-spark]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import hudi_peer
from peak_memory import jvm_pid, peak_mib, reset_peak

from hive_bridge.layout.fsview import FileSlice
from hive_bridge.spark.reads import list_incremental
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

INC, SNAP = "incremental", "full snapshot"


def _data(ids: list[int], tag: str, ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{tag}{i}" for i in ids],
                     "ts": pa.array([ts] * len(ids), pa.int64()), "p": [f"p{i % 10}" for i in ids]})


def digest(rows: list[str]) -> str:
    """The digest every reader's rows are compared by: SHA-256 of the sorted ``to_json`` rows."""
    return hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest()[:16]


def _json_rows(t: pa.Table) -> list[str]:
    """Spark's ``to_json(struct(data columns, sorted by name))`` of each row."""
    cols = sorted(c for c in t.column_names if not c.startswith("_hoodie"))
    return [json.dumps({c: r[c] for c in cols}, separators=(",", ":")) for r in t.select(cols).to_pylist()]


def _read(slices: list[FileSlice], begin: str, end: str) -> tuple[list[str], int, float]:
    """(the ``to_json`` rows with a commit time in (begin, end], bytes of the files, seconds)."""
    t0 = time.perf_counter()
    rows: list[str] = []
    size = 0
    for s in slices:
        assert s.base_file is not None
        size += s.base_file.size
        t = pq.read_table(s.base_file.full_path)
        ct = t.column("_hoodie_commit_time")
        rows += _json_rows(t.filter(pc.and_(pc.greater(ct, begin), pc.less_equal(ct, end))))
    return rows, size, time.perf_counter() - t0


def _result(files: int, nbytes: int, rows: list[str], plan: float, read: float, peak: float) -> dict[str, Any]:
    return {"files": files, "bytes": nbytes, "count": len(rows), "digest": digest(rows), "plan": plan,
            "read": read, "peak": peak}


def by_pyarrow(root: Path, begin: str, end: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for _ in range(2):    # the first run cold (its total kept), the second measured
        reset_peak()
        t0 = time.perf_counter()
        _, listing, _ = list_incremental(str(root), None, begin=begin, end=end, stats_source="footers")
        plan = time.perf_counter() - t0
        rows, nbytes, read = _read(listing.slices, begin, end)
        cold = out[INC]["plan"] + out[INC]["read"] if out else None
        out[INC] = {**_result(len(listing.slices), nbytes, rows, plan, read, peak_mib()), "cold": cold}
    reset_peak()
    t0 = time.perf_counter()
    latest = HudiTable.open(root).latest_file_slices()
    plan = time.perf_counter() - t0
    rows, nbytes, read = _read(latest, begin, end)
    out[SNAP] = _result(len(latest), nbytes, rows, plan, read, peak_mib())
    return out


def by_hudi(root: Path, begin: str, end: str, row_filter: str) -> tuple[dict[str, dict[str, Any]], str]:
    why = hudi_peer.setup()
    if why is not None:
        raise SystemExit(f"the Hudi peer could not be set up: {why}")
    inc = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": begin,
           "hoodie.datasource.read.end.instanttime": end}
    incremental = {"path": str(root), "filters": ["true"], "skipping": [False], "rows": False, "options": inc}
    out = hudi_peer.run({"driver_memory": "2g", "read": [   # the incremental pull cold, then measured
        incremental, incremental, {"path": str(root), "filters": [row_filter], "skipping": [False], "rows": False}]})
    got = {}
    totals: list[float] = []
    for query, r in zip((INC, INC, SNAP), out["reads"], strict=True):
        (x,) = r["results"]
        got[query] = {"files": x["files"], "bytes": x["bytes"], "count": x["count"], "digest": x["digest"],
                      "plan": r["load_seconds"] + x["planning_seconds"], "read": x["query_seconds"],
                      "peak": x["jvm_peak_mib"], "cold": totals[0] if query == INC and totals else None}
        totals.append(got[query]["plan"] + got[query]["read"])
    return got, f"Spark {out['versions']['spark']}"


def by_spark(root: Path, begin: str, end: str, row_filter: str) -> tuple[dict[str, dict[str, Any]], str]:
    from pyspark.sql import functions as F

    from hive_bridge.spark import read_hudi
    from hive_bridge.spark.sessions import session

    spark = session("bench-incremental")
    pid = jvm_pid(spark)
    out: dict[str, dict[str, Any]] = {}
    try:
        for query in (INC, INC, SNAP):     # the incremental pull cold (its total kept), then measured
            reset_peak(pid)
            t0 = time.perf_counter()
            if query == INC:
                read = read_hudi(spark, str(root), begin_instant=begin, end_instant=end)
                df = read.df
            else:
                read = read_hudi(spark, str(root))
                df = read.df.where(row_filter)
            cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))
            q = df.select(F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols])).alias("j"))
            t1 = time.perf_counter()
            rows = [r[0] for r in q.collect()]
            t2 = time.perf_counter()
            cold = out[INC]["plan"] + out[INC]["read"] if query == INC and out else None
            out[query] = {**_result(len(read.listing.slices), read.listing.bytes_kept, rows, t1 - t0, t2 - t1,
                                    peak_mib(pid)), "cold": cold}
        version = spark.version
    finally:
        spark.stop()
    return out, f"Spark {version}"


def report(readers: dict[str, dict[str, dict[str, Any]]]) -> bool:
    """Print the figures; True when every read returned the same rows."""
    print(f"{'reader':36} {'query':14} {'files':>6} {'bytes':>12} {'rows':>5} {'plan s':>7} {'read s':>7} "
          f"{'total s':>8} {'cold s':>7} {'peak MiB':>9}  digest")
    for reader, queries in readers.items():
        for query, r in queries.items():
            cold = f"{r['cold']:7.2f}" if r.get("cold") is not None else f"{'':7}"
            print(f"{reader:36} {query:14} {r['files']:6d} {r['bytes']:12,d} {r['count']:5d} {r['plan']:7.2f} "
                  f"{r['read']:7.2f} {r['plan'] + r['read']:8.2f} {cold} {r['peak']:9.0f}  {r['digest']}")
    answers = {(r["count"], r["digest"]) for queries in readers.values() for r in queries.values()}
    reads = sum(len(q) for q in readers.values())
    if len(answers) == 1:
        ((count, dig),) = answers
        print(f"rows agree: all {reads} reads return the same {count} rows (digest {dig})")
        return True
    print(f"ROWS DISAGREE: {len(answers)} different answers among {reads} reads (see the table)")
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--rows", type=int, default=20)
    ap.add_argument("--commits", type=int, default=500)
    ap.add_argument("--last", type=int, default=5)
    ap.add_argument("--keys", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-spark", action="store_true", help="hive-bridge with pyarrow only")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)   # type: ignore[union-attr]
    rng = random.Random(args.seed)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("HIVE_BRIDGE_CACHE", str(Path(tmp) / "cache"))
        root = Path(tmp) / "t"
        w = HudiWriter(root, partition_fields=("p",), precombine_field="ts", rows_per_file=args.rows)
        t0 = time.perf_counter()
        n = args.files * args.rows
        w.insert(_data(list(range(n)), "n", 0))
        for k in range(1, args.commits + 1):
            w.upsert(_data([*rng.sample(range(n), args.keys), n], f"u{k}_", k))
            n += 1
        table = HudiTable.open(root)
        instants = [i.timestamp for i in table.timeline.completed_writes]
        begin, end = instants[-args.last - 1], instants[-1]
        row_filter = f"_hoodie_commit_time > '{begin}' AND _hoodie_commit_time <= '{end}'"
        print(f"table: {args.files} files x {args.rows} rows, {args.commits} upserts of {args.keys} keys + 1 new "
              f"(copy-on-write, version {table.properties.version}, {len(table.latest_file_slices())} latest "
              f"files): written in {time.perf_counter() - t0:.1f} s")
        print(f"incremental pull of the last {args.last} of {len(instants)} commits: begin {begin} (exclusive), "
              f"end {end}; full snapshot read: {row_filter}")
        readers = {"hive-bridge, pyarrow": by_pyarrow(root, begin, end)}
        if not args.no_spark:
            hudi, hudi_version = by_hudi(root, begin, end, row_filter)
            readers[f"Hudi {hudi_peer.HUDI_VERSION}'s reader ({hudi_version})"] = hudi
            spark, spark_version = by_spark(root, begin, end, row_filter)
            readers[f"hive-bridge through Spark ({spark_version})"] = spark
        same = report(readers)
        for reader, queries in readers.items():
            inc, snap = queries[INC], queries[SNAP]
            print(f"{reader}: the incremental pull reads {snap['files'] / max(1, inc['files']):.0f}x fewer files, "
                  f"{snap['bytes'] / max(1, inc['bytes']):.0f}x fewer bytes, in "
                  f"{(snap['plan'] + snap['read']) / max(1e-9, inc['plan'] + inc['read']):.1f}x less time than its "
                  f"full snapshot read")
        print(f"whole run {time.perf_counter() - start:.0f} s")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
