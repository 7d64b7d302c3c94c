"""TPC-H's 22 queries over Hudi tables through ``hudi-hive`` temp views, against Spark's own parquet reader over the
same latest files: results, files read, time, JVM heap.

The data: ``tpchgen-cli`` (the TPC-H generator of the DataFusion community, from PyPI) at ``--scale`` (default
0.1: 600,572 lineitem rows), every table written as a copy-on-write Hudi table by the test writer, ``lineitem``
sorted by ``l_shipdate`` and ``orders`` by ``o_orderdate`` (the layout a user picks for date-range queries; the
others in key order), ``--rows-per-file`` rows a base file.

Routes, each a temp view per table in one Spark session (local[2]):

- **hudi-hive**: ``spark.read.format("hudi-hive").load(table)`` (Spark's parquet reader under the relation's sound
  pushdown: only the filters that cannot lose a row are handed to row-group skipping);
- **hudi-hive, pushdown off**: the same with ``spark.sql.parquet.filterPushdown=false`` for the session (what
  ``register`` used to set for the whole session);
- **parquet**: ``spark.read.parquet(*latest base files)``, Spark's defaults (pushdown on).

The routes take turns per query (each query starts with another route). Per query and route: the median of ``--repeat`` runs after one warm-up, files read (the scans' ``numFiles``
metric, summed over the plan's scans, subqueries and reused exchanges included once each) and the JVM heap's peak.
Every route's rows must equal the parquet route's (sorted; the run fails otherwise). Printed: a table and the
totals; ``--json FILE`` also writes them.

    python benchmarks/bench_tpch.py [--scale 0.1] [--rows-per-file 20000] [--repeat 3] [--queries 1,3,6]
                                    [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tpch_queries import QUERIES, query

#: table -> (record key fields, sort column or None)
TABLES: dict[str, tuple[tuple[str, ...], str | None]] = {
    "lineitem": (("l_orderkey", "l_linenumber"), "l_shipdate"),
    "orders": (("o_orderkey",), "o_orderdate"),
    "customer": (("c_custkey",), None),
    "part": (("p_partkey",), None),
    "partsupp": (("ps_partkey", "ps_suppkey"), None),
    "supplier": (("s_suppkey",), None),
    "nation": (("n_nationkey",), None),
    "region": (("r_regionkey",), None),
}
ROUTES = ("hudi-hive", "hudi-hive, pushdown off", "parquet")


def generate(out: Path, scale: float) -> None:
    exe = Path(sys.executable).parent / "tpchgen-cli"
    if not exe.exists():
        raise SystemExit("tpchgen-cli is missing: pip install tpchgen-cli (the bench extra)")
    subprocess.run([str(exe), "parquet", "-s", str(scale), f"--output-dir={out}"], check=True,
                   stdout=subprocess.DEVNULL)


def write_tables(gen: Path, root: Path, rows_per_file: int) -> dict[str, Path]:
    """Each generated table as a copy-on-write Hudi table (string views as strings)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hive_bridge.testing.writer import HudiWriter

    out = {}
    for name, (keys, sort) in TABLES.items():
        data = pq.read_table(gen / f"{name}.parquet")
        data = data.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
                                    for f in data.schema]))
        if sort:
            data = data.sort_by([(sort, "ascending"), (keys[0], "ascending")])
        path = root / name
        HudiWriter(path, record_key_fields=keys, rows_per_file=rows_per_file, table_name=name,
                   version=8).insert(data)
        out[name] = path
    return out


def scan_files(df: Any) -> int:
    """Files the executed plan's scans read (``numFiles``), every scan once (AQE's stages, subqueries, reused
    exchanges followed)."""
    seen: set[int] = set()
    total = 0

    def walk(node: Any) -> None:
        nonlocal total
        ident = node.id()
        if ident in seen:
            return
        seen.add(ident)
        name = node.getClass().getSimpleName()
        if name == "FileSourceScanExec":
            metric = node.metrics().get("numFiles")
            if metric.isDefined():
                total += int(metric.get().value())
        if name == "AdaptiveSparkPlanExec":
            walk(node.executedPlan())
        elif name.endswith("QueryStageExec"):
            walk(node.plan())
        elif name == "ReusedExchangeExec":
            walk(node.child())
        subs = node.subqueries()
        for i in range(subs.size()):
            walk(subs.apply(i))
        children = node.children()
        for i in range(children.size()):
            walk(children.apply(i))

    walk(df._jdf.queryExecution().executedPlan())
    return total


class Heap:
    def __init__(self, spark: Any) -> None:
        self.pools = [p for p in spark._jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()
                      if str(p.getType().name()) == "HEAP"]

    def reset(self) -> None:
        for p in self.pools:
            p.resetPeakUsage()

    def peak_mib(self) -> float:
        return sum(int(p.getPeakUsage().getUsed()) for p in self.pools) / 2**20


def frames(spark: Any, tables: dict[str, Path], route: str) -> dict[str, Any]:
    """One DataFrame per table for a route (made once, reused by every query as users do)."""
    from hive_bridge.pruning.snapshot import default_cache
    from hive_bridge.spark.file_index import relation_schemas

    out = {}
    for name, path in tables.items():
        if route == "parquet":
            snap = default_cache().get(str(path))
            latest = [s.base_file.full_path for s in snap.slices if s.base_file is not None]
            schema, _, _ = relation_schemas(snap.table)
            out[name] = spark.read.schema(schema).parquet(*latest)
        else:
            out[name] = spark.read.format("hudi-hive").load(str(path))
    return out


def run_query(spark: Any, sql: str, heap: Heap, repeat: int) -> dict[str, Any]:
    spark.sql(sql).collect()   # warm-up (hudi-hive: the first scan of a filter is planned here)
    times, files, peak = [], 0, 0.0
    rows: list[Any] = []
    for _ in range(repeat):
        heap.reset()
        t0 = time.perf_counter()
        df = spark.sql(sql)
        rows = df.collect()
        times.append(time.perf_counter() - t0)
        files = scan_files(df)
        peak = max(peak, heap.peak_mib())
    return {"seconds": statistics.median(times), "files": files, "heap_mib": peak,
            "rows": sorted((tuple(r) for r in rows), key=repr)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--rows-per-file", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--queries", default=",".join(str(q) for q in QUERIES), help="comma-separated numbers")
    ap.add_argument("--keep", type=Path, help="generate and write the tables here (re-used if present)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    numbers = [int(q) for q in args.queries.split(",")]
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-tpch-"))
    os.environ.setdefault("HIVE_BRIDGE_CACHE", str(work / "cache"))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    try:
        root = work / f"sf{args.scale:g}_{args.rows_per_file}"
        if not all((root / t / ".hoodie" / "hoodie.properties").is_file() for t in TABLES):
            shutil.rmtree(root, ignore_errors=True)
            t0 = time.perf_counter()
            generate(work / f"gen_sf{args.scale:g}", args.scale)
            write_tables(work / f"gen_sf{args.scale:g}", root, args.rows_per_file)
            print(f"generated and wrote scale {args.scale:g} in {time.perf_counter() - t0:.1f} s")
        tables = {t: root / t for t in TABLES}
        print(run(tables, numbers, args.scale, args.repeat, args.json))
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def run(tables: dict[str, Path], numbers: list[int], scale: float, repeat: int, json_out: Path | None) -> str:
    from hive_bridge.spark import register, session

    spark = session("bench-tpch", **{"spark.sql.parquet.filterPushdown": "true",
                                     "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "4"})
    register(spark)
    heap = Heap(spark)
    results: dict[int, dict[str, Any]] = {n: {} for n in numbers}
    try:
        dfs = {route: frames(spark, tables, route) for route in ROUTES}
        for i, n in enumerate(numbers):
            # the routes in turn, each query starting with another one (JIT warm-up and caches shared fairly)
            for route in ROUTES[i % len(ROUTES):] + ROUTES[:i % len(ROUTES)]:
                spark.conf.set("spark.sql.parquet.filterPushdown", "false" if route.endswith("off") else "true")
                for name, df in dfs[route].items():
                    df.createOrReplaceTempView(name)
                results[n][route] = run_query(spark, query(n, scale), heap, repeat)
    finally:
        spark.stop()
    total_files = {name: sum(1 for _ in (path).rglob("*.parquet") if ".hoodie" not in _.parts)
                   for name, path in tables.items()}
    lines = ["tables: " + ", ".join(f"{k} {v} files" for k, v in total_files.items()),
             f"{'query':>5} {'rows':>5} | " + " | ".join(f"{r[:22]:>22}" for r in ROUTES),
             f"{'':>5} {'':>5} | " + " | ".join(f"{'median':>8} {'files':>5} {'heap':>6}" for _ in ROUTES)]
    totals = {r: 0.0 for r in ROUTES}
    files = {r: 0 for r in ROUTES}
    wrong = []
    for n in numbers:
        want = results[n]["parquet"]["rows"]
        for r in ROUTES:
            if results[n][r]["rows"] != want:
                wrong.append((n, r))
            totals[r] += results[n][r]["seconds"]
            files[r] += results[n][r]["files"]
        lines.append(f"{'Q' + str(n):>5} {len(want):5d} | " + " | ".join(
            f"{results[n][r]['seconds'] * 1000:6.0f}ms {results[n][r]['files']:5d} {results[n][r]['heap_mib']:4.0f}M"
            for r in ROUTES))
    lines.append(f"{'total':>5} {'':>5} | " + " | ".join(f"{totals[r]:7.2f}s {files[r]:5d} {'':>6}" for r in ROUTES))
    lines.append(f"hudi-hive / parquet: {totals['hudi-hive'] / totals['parquet']:.2f}x time, "
                 f"{files['hudi-hive'] / max(files['parquet'], 1):.2f}x files; pushdown on / off (hudi-hive): "
                 f"{totals['hudi-hive'] / totals['hudi-hive, pushdown off']:.2f}x time")
    if json_out:
        json_out.write_text(json.dumps({str(n): {r: {k: v for k, v in d.items() if k != "rows"}
                                                 for r, d in res.items()} for n, res in results.items()}, indent=1))
    if wrong:
        raise SystemExit("\n".join(lines) + f"\nWRONG RESULTS: {wrong}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
