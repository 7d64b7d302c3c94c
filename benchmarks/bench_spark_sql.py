"""Spark's own query path over ``hudi-hive``: selective SQL on one reused DataFrame / temp view, against Spark
reading exactly the files that hold a match and against Spark's plain scan of every latest file.

Two generated tables (the test writer; keys clustered, `--rows` rows a file): a copy-on-write table of `--files`
base files and a merge-on-read table of `--files` file slices, every slice with a log file (an upsert touching
every file group moves `amount` of a few rows out of its base file's range). Queries match at most ~2 % of the
files. Per query, the median of `--repeat` runs (after one warm-up run) of ``count(*), sum(amount)``:

- **hudi-hive**: one ``spark.read.format("hudi-hive").load(path)`` reused (``.where(q)``) and a temp view of it
  (``spark.sql``); the planner's time per scan (the py4j callback's Python side) is printed too;
- **(a) ideal**: Spark's parquet reader over exactly the files that hold a match (for merge-on-read: the merged
  slices, as hudi-hive reads them), one DataFrame reused; target hudi-hive <= 1.2x this;
- **(b) full scan**: Spark's parquet reader over every latest base file, one DataFrame reused (for merge-on-read
  a lower bound on any full read: no merging at all); target hudi-hive >= 10x faster.

The merge-on-read table's first query merges its kept slices with hudi-rs into cached parquet files (printed as
"first query"); later queries over the same slices read the cache. Spark local[2], the session's parquet filter
pushdown ``--pushdown on`` (Spark's default; every reader gets it, hudi-hive's scans only the filters that cannot
lose a row: ``SoundParquetFileFormat``) or ``off``. Peak memory: this process's and the JVM's maximum resident set.

The planner's time per scan is printed twice: for a filter's first scan (translated and pruned) and for the
timed runs (the relation remembers its answers by filters). ``--big N`` adds the per-scan cost of the route at N
files (e.g. 100,000; a synthesized table as ``bench_table.py`` builds it, zero-byte files: listing only, no rows
read): ``FileIndex.listFiles`` called through py4j as Spark calls it, for a selective filter and for no filter
(every file's status crosses from Python to the JVM), against Spark's own ``InMemoryFileIndex`` over the same
folders.

    python benchmarks/bench_spark_sql.py [--files 2000] [--rows 200] [--repeat 5] [--keep DIR] [--big 100000]
                                         [--only-big]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_table import _synthesize_big
from peak_memory import jvm_peak_mib, python_peak_mib

from hive_bridge.testing.writer import HudiWriter


def build(root: Path, files: int, rows: int, mor: bool) -> None:
    n = files * rows
    ids = pa.array(range(n), pa.int64())
    data = pa.table({"event_id": ids,
                     "city": pa.array(["Lima", "Osaka", "Paris", "Seoul"] * (n // 4) + ["Lima"] * (n % 4)),
                     "amount": pc.multiply(pc.cast(ids, pa.float64()), 0.5),
                     "ts": pa.array([0] * n, pa.int64())})
    w = HudiWriter(root, record_key_fields=("event_id",), precombine_field="ts", rows_per_file=rows,
                   table_type="MERGE_ON_READ" if mor else "COPY_ON_WRITE")
    w.insert(data)
    if mor:  # every file group gets a log file: two rows each, amount moved far below the base file's range
        keys = [g * rows + r for g in range(files) for r in (1, rows // 2)]
        w.upsert(pa.table({"event_id": pa.array(keys, pa.int64()),
                           "city": pa.array(["Lima"] * len(keys)),
                           "amount": pa.array([-float(k) for k in keys]),
                           "ts": pa.array([1] * len(keys), pa.int64())}))


def queries(n: int, rows: int) -> list[str]:
    k = n // 2
    return [f"event_id = {k + 3}",
            f"event_id BETWEEN {k} AND {k + rows * 20}",                   # ~1 % of the files
            f"event_id IN (7, {n // 3}, {n // 2 + 1})",
            f"event_id > {n - n // 60}",
            f"amount < {-(n - n // 100)}.0",                               # only in log files (merge-on-read)
            f"city = 'Osaka' AND event_id < {rows * 30}"]


def timed(fn: Any, repeat: int) -> tuple[float, Any]:
    out = fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def agg(df: Any) -> tuple[int, float]:
    from pyspark.sql import functions as F

    row = df.agg(F.count("*"), F.sum("amount")).collect()[0]
    return int(row[0]), float(row[1] or 0.0)


def warm_up(spark: Any, root: Path, files: int, rows: int) -> None:
    """One untimed pass of every query through every route (the JVM compiles the scan and aggregation code paths
    on first use: measured cold, the first table's figures would include it)."""
    df = spark.read.format("hudi-hive").load(str(root))
    plain = spark.read.parquet(str(root))
    for q in queries(files * rows, rows):
        for _ in range(2):
            agg(df.where(q))
            agg(plain.where(q))


def run(spark: Any, root: Path, files: int, rows: int, repeat: int, mor: bool) -> None:
    from pyspark.sql import functions as F

    from hive_bridge.pruning.snapshot import default_cache
    from hive_bridge.spark import pin_of
    from hive_bridge.spark.file_index import relation_schemas

    kind = "merge-on-read" if mor else "copy-on-write"
    snap = default_cache().get(str(root))
    table = snap.table
    latest = [s.base_file.full_path for s in snap.slices if s.base_file is not None]
    data_schema, _, _ = relation_schemas(table)
    full = spark.read.schema(data_schema).parquet(*latest)
    t0 = time.perf_counter()
    df = spark.read.format("hudi-hive").load(str(root))
    load_s = time.perf_counter() - t0
    view = f"bench_{'mor' if mor else 'cow'}"
    df.createOrReplaceTempView(view)
    print(f"\n{kind}: {len(snap.slices)} latest file slices, {files * rows:,} rows; load {load_s * 1000:.0f} ms")
    header = (f"{'query':44} {'match':>5} {'rows':>6} {'hudi-hive':>10} {'view SQL':>9} {'plan/scan':>9} "
              f"{'(a) ideal':>10} {'(b) full':>9} {'vs (a)':>7} {'vs (b)':>7}")
    print(header)
    ratios_a, ratios_b, plans, firsts = [], [], [], []
    for q in queries(files * rows, rows):
        t0 = time.perf_counter()
        agg(df.where(q))  # the first scan with this filter: planned (merge-on-read: kept slices merged), untimed
        first = time.perf_counter() - t0
        firsts.append(pin_of(df).last_plan_seconds)  # type: ignore[union-attr]
        if mor:  # the merged rows decide which slices hold a match: read them all once (untimed) through hudi-hive
            merged_files = list(pin_of(df).last_kept)  # type: ignore[union-attr]
            holders = [f for f in merged_files
                       if spark.read.schema(data_schema).parquet(f).where(q).limit(1).count()]
        else:
            holders = sorted({r[0] for r in full.where(q).select(F.input_file_name()).distinct().collect()})
        ideal_df = spark.read.schema(data_schema).parquet(*holders) if holders else None
        t_df, got = timed(lambda q=q: agg(df.where(q)), repeat)
        pin = pin_of(df)
        plans.append(pin.last_plan_seconds if pin else 0.0)
        t_sql, got_sql = timed(lambda q=q: agg(spark.sql(f"SELECT * FROM {view} WHERE {q}")), repeat)
        t_a, want = timed(lambda q=q, d=ideal_df: agg(d.where(q)) if d is not None else (0, 0.0), repeat)
        t_b, _ = timed(lambda q=q: agg(full.where(q)), repeat)
        assert got == got_sql == want, (q, got, got_sql, want)
        if holders:  # no file holds a match: (a) reads nothing, and there is no ratio to take
            ratios_a.append(t_df / t_a)
        ratios_b.append(t_b / t_df)
        extra = f"  (first query, merging kept slices: {first:.2f} s)" if mor else ""
        print(f"{q:44} {len(holders):5d} {got[0]:6d} {t_df * 1000:8.0f}ms {t_sql * 1000:7.0f}ms "
              f"{plans[-1] * 1000:7.1f}ms {t_a * 1000:8.0f}ms {t_b * 1000:7.0f}ms {t_df / t_a if holders else 0:6.2f}x "
              f"{ratios_b[-1]:6.1f}x{extra}")
    print(f"median: hudi-hive / ideal {statistics.median(ratios_a):.2f}x (target <= 1.2x); full scan / hudi-hive "
          f"{statistics.median(ratios_b):.1f}x (target >= 10x); planner {statistics.median(plans) * 1000:.2f} ms "
          f"a scan (the filter's first scan: {statistics.median(firsts) * 1000:.2f} ms)")


def run_big(spark: Any, work: Path, files: int, repeat: int) -> None:
    """The per-scan cost of the route at ``files`` files (a synthesized table: zero-byte base files in 100
    partitions and a statistics index, as benchmarks/bench_table.py builds; listing only, no rows are read):
    ``FileIndex.listFiles`` called through py4j as Spark calls it, for a selective filter (first scan and again)
    and for no filter (every file crosses the callback); Spark's InMemoryFileIndex over the same folders as the
    peer (its listing is paid when a DataFrame is made, its listFiles per scan is in memory)."""
    from pyspark.sql import functions as F

    root = work / f"big_{files}"
    if not (root / ".hoodie").exists():
        t0 = time.perf_counter()
        _synthesize_big(root, files, 100)
        print(f"synthesized {root} in {time.perf_counter() - t0:.1f} s")
    lo = files // 2
    q = f"id BETWEEN {lo} AND {lo + 2}"

    def scan_of(df: Any) -> Any:
        return df.where(q).agg(F.count("*"))._jdf.queryExecution().sparkPlan().collectLeaves().head()

    def per_call(fn: Any, n: int) -> float:
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    from hive_bridge.spark import pin_of

    t0 = time.perf_counter()
    df = spark.read.format("hudi-hive").load(str(root))
    load_s = time.perf_counter() - t0
    scan = scan_of(df)
    loc, pf, dfl = scan.relation().location(), scan.partitionFilters(), scan.dataFilters()
    jvm: Any = spark._jvm
    convert = jvm.scala.jdk.javaapi.CollectionConverters
    empty = convert.asScala(jvm.java.util.ArrayList()).toList()
    t0 = time.perf_counter()
    kept = loc.listFiles(pf, dfl)
    first = time.perf_counter() - t0
    first_plan = pin_of(df).last_plan_seconds  # type: ignore[union-attr]
    again = per_call(lambda: loc.listFiles(pf, dfl), repeat * 4)
    t0 = time.perf_counter()
    every = loc.listFiles(empty, empty)
    all_first = time.perf_counter() - t0
    all_again = per_call(lambda: loc.listFiles(empty, empty), max(repeat // 2, 1))
    n_kept = sum(d.files().size() for d in convert.asJava(kept))
    n_all = sum(d.files().size() for d in convert.asJava(every))
    t0 = time.perf_counter()
    plain = spark.read.schema("id long, name string, value double, part int").option("basePath", str(root)).parquet(*[str(p) for p in sorted(root.glob("part=*"))])
    plain_load = time.perf_counter() - t0
    pscan = scan_of(plain)
    ploc, ppf, pdf = pscan.relation().location(), pscan.partitionFilters(), pscan.dataFilters()
    plain_scan = per_call(lambda: ploc.listFiles(ppf, pdf), repeat * 4)
    print(f"\n{files:,} files ({q}): hudi-hive load {load_s * 1000:.0f} ms; listFiles selective ({n_kept} kept) "
          f"first {first * 1000:.1f} ms (planner {first_plan * 1000:.1f} ms), again {again * 1000:.2f} ms; "
          f"no filter ({n_all:,} files) first {all_first * 1000:.0f} ms, again {all_again * 1000:.0f} ms")
    print(f"  peer: Spark's InMemoryFileIndex over the same folders: DataFrame made (listing) in "
          f"{plain_load * 1000:.0f} ms, listFiles per scan {plain_scan * 1000:.2f} ms (no pruning by statistics)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", help="build the tables here (re-used if present) instead of a temporary folder")
    ap.add_argument("--big", type=int, default=0, help="also time the per-scan cost at this many files "
                    "(a synthesized table, listing only; e.g. 100000)")
    ap.add_argument("--only-big", action="store_true", help="only the --big case")
    ap.add_argument("--pushdown", choices=("on", "off"), default="on",
                    help="the session's spark.sql.parquet.filterPushdown (on: Spark's default; hudi-hive's scans "
                    "then get only the filters that cannot lose a row)")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-spark-sql-"))
    os.environ.setdefault("HIVE_BRIDGE_CACHE", str(work / "cache"))
    from hive_bridge.spark import register, session

    for name, mor in (("cow", False), ("mor", True)):
        root = work / f"{name}_{args.files}x{args.rows}"
        if args.only_big:
            break
        if not (root / ".hoodie").exists():
            t0 = time.perf_counter()
            build(root, args.files, args.rows, mor)
            print(f"built {root} in {time.perf_counter() - t0:.1f} s")
    spark = session("bench-spark-sql")
    spark.conf.set("spark.sql.parquet.filterPushdown", "true" if args.pushdown == "on" else "false")
    print(f"parquet filter pushdown {args.pushdown}")
    register(spark)
    if not args.only_big:
        t0 = time.perf_counter()
        warm_up(spark, work / f"cow_{args.files}x{args.rows}", args.files, args.rows)
        print(f"warm-up {time.perf_counter() - t0:.1f} s")
        for name, mor in (("cow", False), ("mor", True)):
            run(spark, work / f"{name}_{args.files}x{args.rows}", args.files, args.rows, args.repeat, mor)
    if args.big:
        run_big(spark, work, args.big, args.repeat)
    jvm_peak = jvm_peak_mib(spark)
    print(f"\npeak memory: python {python_peak_mib():.0f} MiB, "
          f"JVM {jvm_peak:.0f} MiB")
    spark.stop()


if __name__ == "__main__":
    main()
