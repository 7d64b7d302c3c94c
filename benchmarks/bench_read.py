"""Pruned Hive-on-Spark reads against Spark's own scan of the same latest files.

A generated copy-on-write table of 2,000 base files (5,000 rows each would be 10M rows; 500 keeps the build quick —
the scan cost is per file), keys clustered (each file holds a narrow `event_id` range), and selective filters
(at most 2 % of files hold a match). For each filter:
- hive-bridge: listStatus over the persisted statistics index, then Spark's parquet reader on the kept files;
- Spark alone: Spark's parquet reader on all 2,000 latest files with its own filter pushdown;
both with `count()` and the same rows checked. Also printed: files kept vs the files that truly hold a match.

    python benchmarks/bench_read.py [--files 2000] [--rows 500]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sarg
from hive_bridge.filters.residual import to_sql
from hive_bridge.pruning import Pruner
from hive_bridge.spark import PARQUET_PUSHDOWN, read_slices, session, spark_schema
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

FILTERS = [
    "leaf-(EQUALS event_id 123456)",
    "leaf-(BETWEEN event_id 500000 515000)",
    "(and leaf-(IN event_id 7 77 777 7777) (not leaf-(IS_NULL city)))",
    "(or leaf-(EQUALS event_id 42) leaf-(EQUALS event_id 900042))",
    "(not leaf-(LESS_THAN_EQUALS event_id 995000))",
    "leaf-(EQUALS event_id -5)",
]


def build(root: Path, files: int, rows: int) -> None:
    n = files * rows
    ids = pa.array(range(n), pa.int64())
    cities = pa.array(["Lima", "Osaka", "Paris", "Seoul"] * (n // 4) + ["Lima"] * (n % 4))
    data = pa.table({"event_id": ids, "city": cities,
                     "amount": pc.multiply(pc.cast(ids, pa.float64()), 0.5)})
    HudiWriter(root, record_key_fields=("event_id",), rows_per_file=rows).insert(data)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hb-bench-read-"))
    root = work / "events"
    t0 = time.perf_counter()
    build(root, args.files, args.rows)
    print(f"table: {args.files} files × {args.rows} rows, keys clustered, built in {time.perf_counter() - t0:.1f} s")
    table = HudiTable.open(root)
    index = ColumnStatsIndex(table)
    t0 = time.perf_counter()
    index.load()
    print(f"statistics index built in {time.perf_counter() - t0:.2f} s")
    slices = table.latest_file_slices()
    pruner = Pruner(table, index, slices)
    spark = session("bench-read", **{"spark__driver__memory": "2g"})
    # the peer: what a user runs without hive-bridge (Spark's parquet scan, with its filter pushdown, which this
    # table's data -- no NaN, no -0.0 -- does not trip); hive-bridge's reads run with it off
    paths = [sl.base_file.full_path for sl in slices if sl.base_file is not None]
    file_schema = spark_schema(table.file_schema())
    spark.conf.set("spark.sql.sources.parallelPartitionDiscovery.threshold", str(len(paths) + 1))
    print(f"{'filter':58} {'kept':>5} {'ideal':>5} {'pruned s':>9} {'spark s':>8} {'speed-up':>8} rows")
    speedups = []
    for text in FILTERS:
        s = sarg.parse(text, {"event_id": "bigint", "city": "string", "amount": "double"})
        residual = to_sql(s)

        def pruned_read(s: sarg.SearchArgument = s, residual: str = residual) -> int:  # a query: table listing, index load, pruning, then Spark
            t = HudiTable.open(root)
            listing = Pruner(t, ColumnStatsIndex(t), t.latest_file_slices()).run(s)
            return read_slices(spark, table, listing.slices).where(residual).count()

        def spark_read(residual: str = residual) -> int:  # Spark's own scan of every latest file, its pushdown on
            spark.conf.set(PARQUET_PUSHDOWN, "true")
            try:
                return spark.read.schema(file_schema).parquet(*paths).where(residual).count()
            finally:
                spark.conf.set(PARQUET_PUSHDOWN, "false")

        pruned_read(), spark_read()  # warm-up
        pruned_times, spark_times = [], []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            pruned_rows = pruned_read()
            pruned_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            spark_rows = spark_read()
            spark_times.append(time.perf_counter() - t0)
        assert pruned_rows == spark_rows, (text, pruned_rows, spark_rows)
        kept = pruner.run(s).files_kept
        ideal = sum(1 for sl in slices if sl.base_file is not None and
                    pq.read_table(sl.base_file.full_path, columns=["event_id", "city"]).filter(
                        _arrow_filter(text)).num_rows)
        p, q = statistics.median(pruned_times), statistics.median(spark_times)
        speedups.append(q / p)
        print(f"{text[:58]:58} {kept:5d} {ideal:5d} {p:9.3f} {q:8.3f} {q / p:7.1f}× {pruned_rows}")
    print(f"median speed-up {statistics.median(speedups):.1f}× (min {min(speedups):.1f}×); "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB (driver Python)")
    spark.stop()


def _arrow_filter(text: str) -> pc.Expression:
    e = pc.field("event_id")
    return {
        FILTERS[0]: e == 123456,
        FILTERS[1]: (e >= 500000) & (e <= 515000),
        FILTERS[2]: e.isin([7, 77, 777, 7777]) & pc.field("city").is_valid(),
        FILTERS[3]: (e == 42) | (e == 900042),
        FILTERS[4]: e > 995000,
        FILTERS[5]: e == -5,
    }[text]


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    main()
