"""``hudi-hive`` on object storage against Spark's own parquet reader over the same files: S3 requests, bytes,
wall time and memory per query.

The table: ``bench_spark_sql.py``'s copy-on-write table (the test writer; `--files` base files of `--rows` rows,
keys clustered, so a key filter matches ~0-2 % of the files: the workload with the most pruning to show), with a
metadata table (files + column_stats, the test MDT writer) unless `--no-mdt`. It is uploaded to a moto S3 server
on 127.0.0.1 (``tests/hive_bridge/s3_server.py``); a counting reverse proxy (``hive_bridge/testing/
counting_proxy.py``) stands in front of it and counts every request by client (the planner's pyarrow, Spark's
S3A: told apart by User-Agent) and kind (GET object, GET range, HEAD, LIST), with the bytes answered.

One Spark session (local[2], Hadoop's S3A connector from ``tools/s3a_jars.py``, pointed at the proxy; parquet
filter pushdown on, Spark's default: hudi-hive hands the reader only the filters that cannot lose a row) runs every query of ``bench_spark_sql.queries`` as
``count(*), sum(amount), sum(event_id)`` two ways:

- **hudi-hive**: ``spark.read.format("hudi-hive").load("s3a://...")``, one DataFrame reused (``.where(q)``);
- **parquet**: ``spark.read.schema(...).parquet(*latest)``, the table's latest base files (the snapshot's file
  list as paths, not the folder: a folder would also hold older versions once the table is updated), one
  DataFrame reused.

Per query and route: the first run (hudi-hive: the filter is planned then) and the median of `--repeat` more,
the requests of the first run and of one repeated run (the median run's), bytes, and the JVM heap's peak during
the query (``MemoryPoolMXBean`` peak usage of the heap pools, reset before each). Each route's DataFrame creation
(listing) is measured once. The results must be equal (the run fails otherwise). Printed: a table, the totals and
the ratio of total time hudi-hive / parquet; ``--json FILE`` also writes them.

    python benchmarks/bench_s3.py [--files 300] [--rows 500] [--repeat 3] [--no-mdt] [--input-stream classic]
                                  [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import s3a_jars
from bench_spark_sql import queries
from peak_memory import jvm_peak_mib, python_peak_mib

from hive_bridge.testing.counting_proxy import CLIENTS, Count, CountingProxy
from hive_bridge.testing.mdt_writer import write_metadata_table
from tests.hive_bridge.s3_server import S3Server

BUCKET = "bench-s3"
ROUTES = ("hudi-hive", "parquet")


def build(root: Path, files: int, rows: int) -> None:
    """bench_spark_sql's copy-on-write table, written as table version 8 (the MDT writer's version)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from hive_bridge.testing.writer import HudiWriter

    n = files * rows
    ids = pa.array(range(n), pa.int64())
    HudiWriter(root, record_key_fields=("event_id",), precombine_field="ts", rows_per_file=rows,
               table_type="COPY_ON_WRITE", version=8, table_name="events").insert(pa.table({
                   "event_id": ids,
                   "city": pa.array(["Lima", "Osaka", "Paris", "Seoul"] * (n // 4) + ["Lima"] * (n % 4)),
                   "amount": pc.multiply(pc.cast(ids, pa.float64()), 0.5),
                   "ts": pa.array([0] * n, pa.int64())}))


def upload(s3: S3Server, root: Path, prefix: str, threads: int = 8) -> int:
    from concurrent.futures import ThreadPoolExecutor

    client = s3.client()
    client.create_bucket(Bucket=BUCKET)
    files = [p for p in root.rglob("*") if p.is_file()]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda p: client.upload_file(str(p), BUCKET, f"{prefix}/{p.relative_to(root).as_posix()}"),
                      files))
    return len(files)


def spark_session(endpoint: str, work: Path, input_stream: str | None = None) -> Any:
    from hive_bridge.spark import register, session

    why = s3a_jars.fetch()
    if why is not None:
        raise SystemExit(f"the S3A connector's jars are missing ({why}); `make s3a-jars` fetches them")
    jars = ":".join(str(j) for j in s3a_jars.jar_paths())
    spark = session("bench-s3", **{
        "spark.driver.extraClassPath": jars, "spark.executor.extraClassPath": jars,
        "spark.local.dir": str(work / "tmp"), "spark.sql.warehouse.dir": str(work / "warehouse"),
        "spark.hadoop.fs.s3a.endpoint": endpoint.removeprefix("http://"),
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.access.key": "test", "spark.hadoop.fs.s3a.secret.key": "test",
        # Spark's default (hive-bridge's session helper turns it off for the truth): parquet skips row groups by
        # their statistics, hudi-hive under its sound pushdown
        "spark.sql.parquet.filterPushdown": "true",
        # S3A's input stream (Hadoop 3.5: classic, prefetch, analytics); None: Hadoop's default
        **({"spark.hadoop.fs.s3a.input.stream.type": input_stream} if input_stream else {})})
    register(spark)
    return spark


class Heap:
    """The JVM heap's peak use between ``reset`` and ``peak`` (the heap memory pools' peak usage, summed)."""

    def __init__(self, spark: Any) -> None:
        jvm = spark._jvm
        self.pools = [p for p in jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
                      if str(p.getType().toString()) == "Heap memory"]

    def reset(self) -> None:
        for p in self.pools:
            p.resetPeakUsage()

    def peak(self) -> int:
        return sum(int(p.getPeakUsage().getUsed()) for p in self.pools)


def answer(df: Any, q: str) -> tuple[int, float, int]:
    from pyspark.sql import functions as F

    row = df.where(q).agg(F.count("*"), F.sum("amount"), F.sum("event_id")).collect()[0]
    return int(row[0]), float(row[1] or 0.0), int(row[2] or 0)


def totals(counts: dict[tuple[str, str], Count]) -> dict[str, Any]:
    """Requests by client and kind, GETs by client, bytes."""
    out: dict[str, Any] = {"by": {f"{c}/{k}": v.requests for (c, k), v in sorted(counts.items())}}
    for client in CLIENTS:
        out[f"{client}_gets"] = sum(v.requests for (c, k), v in counts.items() if c == client and k.startswith("GET"))
        out[f"{client}_requests"] = sum(v.requests for (c, _), v in counts.items() if c == client)
    out["bytes"] = sum(v.bytes for v in counts.values())
    return out


def measure(fn: Any, proxy: CountingProxy, heap: Heap) -> dict[str, Any]:
    heap.reset()
    proxy.take()
    t0 = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "result": result, **totals(proxy.take()), "heap": heap.peak()}


def run(spark: Any, proxy: CountingProxy, uri: str, files: int, rows: int, repeat: int, mdt: bool,
        log: Any = print) -> dict[str, Any]:
    from hive_bridge.spark import pin_of
    from hive_bridge.spark.file_index import relation_schemas

    heap = Heap(spark)
    reader = spark.read.format("hudi-hive")
    if mdt:
        reader = reader.option("hoodie.metadata.enable", "true")
    load_hh = measure(lambda: reader.load(uri), proxy, heap)
    df = load_hh.pop("result")
    pin = pin_of(df)
    assert pin is not None
    snap = pin.snapshot
    latest = sorted(s.base_file.full_path.replace("s3://", "s3a://", 1) for s in snap.slices
                    if s.base_file is not None)
    data_schema, _, _ = relation_schemas(snap.table)
    load_pq = measure(lambda: spark.read.schema(data_schema).parquet(*latest), proxy, heap)
    plain = load_pq.pop("result")
    log(f"{len(latest)} latest base files, {files * rows:,} rows; listing {snap.table.listing_source}; "
        f"DataFrame made: hudi-hive {load_hh['seconds'] * 1000:.0f} ms ({load_hh['planner_requests']} planner "
        f"requests), parquet {load_pq['seconds'] * 1000:.0f} ms ({load_pq['spark_requests']} S3A requests)")
    head = (f"{'query':44} {'rows':>6} {'kept':>5} | {'route':9} {'first':>8} {'median':>8} {'GETs first':>10} "
            f"{'(plan+S3A)':>11} {'GETs rep':>8} {'KiB rep':>8} {'heap MiB':>8}")
    log(head)
    out: dict[str, Any] = {"files": len(latest), "rows": files * rows, "listing": snap.table.listing_source,
                           "load": {"hudi-hive": load_hh, "parquet": load_pq}, "queries": []}
    for q in queries(files * rows, rows):
        entry: dict[str, Any] = {"query": q}
        for route, frame in zip(ROUTES, (df, plain), strict=True):
            first = measure(lambda f=frame, q=q: answer(f, q), proxy, heap)
            reps = [measure(lambda f=frame, q=q: answer(f, q), proxy, heap) for _ in range(repeat)]
            med = sorted(reps, key=lambda r: r["seconds"])[len(reps) // 2]
            for r in (first, *reps):
                entry.setdefault("results", {}).setdefault(route, set()).add(r.pop("result"))
            entry[route] = {"first": first, "median": med, "median_s": statistics.median(r["seconds"] for r in reps),
                            "heap": max(r["heap"] for r in (first, *reps))}
        results = entry.pop("results")
        if len(results["hudi-hive"] | results["parquet"]) != 1:
            raise SystemExit(f"RESULTS DIFFER for {q}: hudi-hive {results['hudi-hive']}, parquet {results['parquet']}")
        (entry["answer"],) = results["hudi-hive"]
        entry["kept"] = len(pin.last_kept)
        for route in ROUTES:
            r = entry[route]
            f, m = r["first"], r["median"]
            lead = f"{q:44} {entry['answer'][0]:6d} {entry['kept']:5d}" if route == ROUTES[0] else " " * 57
            log(f"{lead} | {route:9} {f['seconds'] * 1000:6.0f}ms {r['median_s'] * 1000:6.0f}ms {f['planner_gets'] + f['spark_gets']:10d} "
                f"{'(' + str(f['planner_gets']) + '+' + str(f['spark_gets']) + ')':>11} "
                f"{m['planner_gets'] + m['spark_gets']:8d} {m['bytes'] / 1024:8.0f} {r['heap'] / 2**20:8.0f}")
        out["queries"].append(entry)
    summary: dict[str, Any] = {}
    for route in ROUTES:
        qs = [e[route] for e in out["queries"]]
        summary[route] = {
            "first_s": sum(r["first"]["seconds"] for r in qs), "median_s": sum(r["median_s"] for r in qs),
            "gets_first": sum(r["first"]["planner_gets"] + r["first"]["spark_gets"] for r in qs),
            "planner_gets_first": sum(r["first"]["planner_gets"] for r in qs),
            "gets_repeated": sum(r["median"]["planner_gets"] + r["median"]["spark_gets"] for r in qs),
            "bytes_first": sum(r["first"]["bytes"] for r in qs), "bytes_repeated": sum(r["median"]["bytes"] for r in qs),
            "heap_peak": max(r["heap"] for r in qs)}
    hh, pq = summary["hudi-hive"], summary["parquet"]
    summary["ratio_first"] = (hh["first_s"] + load_hh["seconds"]) / (pq["first_s"] + load_pq["seconds"])
    summary["ratio_repeated"] = hh["median_s"] / pq["median_s"]
    out["summary"] = summary
    for route in ROUTES:
        s = summary[route]
        log(f"total {route:9}: first runs {s['first_s']:.2f} s, repeated {s['median_s']:.2f} s; GETs first "
            f"{s['gets_first']:,} (planner {s['planner_gets_first']:,}), repeated {s['gets_repeated']:,}; "
            f"{s['bytes_first'] / 2**20:.1f} / {s['bytes_repeated'] / 2**20:.1f} MiB; heap peak "
            f"{s['heap_peak'] / 2**20:.0f} MiB")
    log(f"time hudi-hive / parquet: first runs (with DataFrame creation) {summary['ratio_first']:.2f}x, "
        f"repeated {summary['ratio_repeated']:.2f}x (target <= 1.0)")
    return out


def peaks(spark: Any) -> dict[str, float]:
    return {"python_rss_mib": python_peak_mib(), "jvm_rss_mib": jvm_peak_mib(spark)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-mdt", action="store_true", help="no metadata table: the planner lists folders and "
                    "reads footers")
    ap.add_argument("--input-stream", choices=("classic", "prefetch", "analytics"),
                    help="S3A's input stream (fs.s3a.input.stream.type; default: Hadoop's). `classic` opens one "
                    "GET per read range, so the request counts are the reads' own; `analytics` may serve a "
                    "repeated read from its JVM-wide cache")
    ap.add_argument("--keep", type=Path, help="build the table here (re-used if present)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-s3-"))
    os.environ["HIVE_BRIDGE_CACHE"] = str(work / "cache")
    mdt = not args.no_mdt
    root = work / f"cow_{args.files}x{args.rows}{'_mdt' if mdt else ''}"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    try:
        if not (root / ".hoodie" / "hoodie.properties").is_file():
            shutil.rmtree(root, ignore_errors=True)
            t0 = time.perf_counter()
            build(root, args.files, args.rows)
            if mdt:
                write_metadata_table(root)
            print(f"built {root} in {time.perf_counter() - t0:.1f} s")
        with S3Server() as s3, CountingProxy(s3.endpoint) as proxy:
            t0 = time.perf_counter()
            n = upload(s3, root, "cow")
            size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
            print(f"uploaded {n:,} objects ({size / 2**20:.1f} MiB) in {time.perf_counter() - t0:.1f} s")
            spark = spark_session(proxy.endpoint, work, args.input_stream)
            try:
                out = run(spark, proxy, f"s3a://{BUCKET}/cow", args.files, args.rows, args.repeat, mdt)
                out["memory"] = peaks(spark)
                out["objects"], out["mib"] = n, size / 2**20
                print(f"peak memory: python {out['memory']['python_rss_mib']:.0f} MiB, JVM RSS "
                      f"{out['memory']['jvm_rss_mib']:.0f} MiB")
            finally:
                spark.stop()
        if args.json:
            args.json.write_text(json.dumps(out, indent=1, default=list))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
