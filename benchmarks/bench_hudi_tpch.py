"""TPC-H's 22 queries through Hudi's own Spark reader against ``hudi-hive``: the workload ``tpch`` of
``bench_hudi_reader.py`` (``python benchmarks/bench_hudi_reader.py --workload tpch [--scale 0.1]
[--rows-per-file 20000] [--repeat 2] [--json OUT]``).

The tables: ``tpchgen-cli`` at ``--scale`` (as ``bench_tpch.py``), every table written by **Hudi's own Spark
writer** (Hudi 1.1.1, copy-on-write, one ``bulk_insert``, metadata table with column stats; ``lineitem``
range-partitioned by ``l_shipdate`` and ``orders`` by ``o_orderdate``, the others by their first key column, into
files of about ``--rows-per-file`` rows). The same SQL per query (``tpch_queries.py``) over temp views:

- **Hudi's reader**: ``spark.read.format("hudi")`` with data skipping on (``hoodie.metadata.enable``,
  ``hoodie.enable.data.skipping``), in Hudi's driver (pyspark 3.5.9, ``hudi_peer.Session``, kept alive for the run);
- **hudi-hive**: ``spark.read.format("hudi-hive")`` in the product's pyspark;
- **the truth**: Spark's parquet reader over the latest base files, pushdown off, in the product's session.

Interleaved per query (which side goes first alternates). Per query and reader: the median of ``--repeat`` runs
after a warm-up run (``spark.sql`` to ``collect``, planning included), files read (the scans' ``numFiles``,
every scan of the plan once, :func:`bench_tpch.scan_files`). Rows are compared as sorted tuples, numbers to ten
significant digits (decimals and doubles alike: the two Spark versions type some decimal results differently);
a reader whose rows differ from the truth's fails the run.
"""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import hudi_peer
from bench_tpch import TABLES, Heap, frames, generate, run_query
from hudi_peer_driver import plain
from peak_memory import jvm_peak_mib, python_peak_mib
from tpch_queries import QUERIES, query


def spark_type(t: Any) -> str:
    """The Spark SQL type of an Arrow type of tpchgen's tables."""
    import pyarrow as pa

    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    names = {pa.int64(): "bigint", pa.int32(): "int", pa.float64(): "double", pa.date32(): "date",
             pa.string(): "string", pa.large_string(): "string", pa.string_view(): "string"}
    if t not in names:
        raise SystemExit(f"tpchgen's column type {t} has no Spark type here")
    return names[t]


def specs(gen: Path, root: Path, rows_per_file: int) -> list[dict[str, Any]]:
    """A spec for Hudi's writer per table: its generated parquet file with string views as strings (Spark 3.5
    reads no views), ``bulk_insert`` into files of about ``rows_per_file`` rows ranged by the sort column."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = []
    (root / "source").mkdir(parents=True)
    for name, (keys, sort) in TABLES.items():
        data = pq.read_table(gen / f"{name}.parquet")
        data = data.cast(pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type)
                                    for f in data.schema]))
        src = root / "source" / f"{name}.parquet"
        pq.write_table(data, src)
        out.append({"path": str(root / name), "name": name, "type": "COPY_ON_WRITE", "key": ",".join(keys),
                    "ordering": keys[0], "partition": None,
                    "schema": ", ".join(f"{f.name} {spark_type(f.type)}" for f in data.schema),
                    "commits": [{"op": "bulk_insert", "parquet": str(src), "sort": sort or keys[0],
                                 "files": max(1, math.ceil(data.num_rows / rows_per_file))}],
                    "metadata": {"column_stats": True, "partition_stats": False, "record_index": False},
                    "options": {"hoodie.parquet.max.file.size": str(1 << 30)}})
    return out


def canon(rows: list[Any]) -> list[tuple[Any, ...]]:
    """Rows as sorted tuples of :func:`hudi_peer_driver.plain` values, numbers to ten significant digits."""
    def one(v: Any) -> Any:
        v = plain(v)
        return f"{float(v):.10g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    return sorted((tuple(one(v) for v in r) for r in rows), key=repr)


def run_tpch(scale: float, rows_per_file: int, repeat: int, json_out: str | None,
             numbers: list[int] | None = None) -> None:
    why = hudi_peer.setup()
    if why is not None:
        raise SystemExit(f"the Hudi peer could not be set up: {why}")
    work = Path(tempfile.mkdtemp(prefix="bench-hudi-tpch-"))
    os.environ.setdefault("HIVE_BRIDGE_CACHE", str(work / "cache"))
    try:
        t0 = time.perf_counter()
        generate(work / "gen", scale)
        table_specs = specs(work / "gen", work / "tables", rows_per_file)
        print(f"generated scale {scale:g} in {time.perf_counter() - t0:.0f} s")
        _run(table_specs, scale, repeat, json_out, numbers or sorted(QUERIES))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(table_specs: list[dict[str, Any]], scale: float, repeat: int, json_out: str | None,
         numbers: list[int]) -> None:
    from hive_bridge.spark import register, session

    t0 = time.perf_counter()
    views = {s["name"]: s["path"] for s in table_specs}
    results: dict[int, dict[str, Any]] = {}
    with hudi_peer.Session({"write": table_specs, "driver_memory": "2g"}) as peer:
        written = peer.started
        wrote = sum(c["seconds"] for w in written["written"] for c in w["commits"])
        print(f"Hudi's writer ({written['versions']['hudi']}, Spark {written['versions']['spark']}) wrote "
              f"{len(table_specs)} tables in {wrote:.0f} s")
        spark = session("bench-hudi-tpch", **{"spark.sql.parquet.filterPushdown": "true",
                                              "spark.driver.memory": "2g", "spark.sql.shuffle.partitions": "4"})
        register(spark)
        heap = Heap(spark)
        tables = {name: Path(path) for name, path in views.items()}
        dfs = {route: frames(spark, tables, route) for route in ("hudi-hive", "parquet")}

        def ours(sql: str) -> dict[str, Any]:
            spark.conf.set("spark.sql.parquet.filterPushdown", "false")    # the truth: every row of every file
            for name, df in dfs["parquet"].items():
                df.createOrReplaceTempView(name)
            want = canon(spark.sql(sql).collect())
            spark.conf.set("spark.sql.parquet.filterPushdown", "true")
            for name, df in dfs["hudi-hive"].items():
                df.createOrReplaceTempView(name)
            got = run_query(spark, sql, heap, repeat)
            return {"truth": want, "seconds": got["seconds"], "files": got["files"], "rows": canon(got["rows"])}

        def hudi(sql: str) -> dict[str, Any]:
            got = peer.sql({"sql": sql, "views": views, "skipping": True, "repeat": repeat + 1})
            return {"seconds": statistics.median(got["seconds_runs"][1:]), "files": got["files"],
                    "rows": canon(got["rows"])}

        for i, n in enumerate(numbers):
            sql = query(n, scale)
            t1 = time.perf_counter()
            if i % 2 == 0:
                theirs, mine = hudi(sql), ours(sql)
            else:
                mine, theirs = ours(sql), hudi(sql)
            results[n] = {"hudi": theirs, "hudi-hive": mine}
            print(f"[{i + 1}/{len(numbers)}] Q{n}: measured in {time.perf_counter() - t1:.0f} s")
        jvm_peak = jvm_peak_mib(spark)
        spark.stop()
    total_s = time.perf_counter() - t0
    files_total = {name: sum(1 for p in Path(path).glob("*.parquet")) for name, path in views.items()}
    print("tables: " + ", ".join(f"{k} {v} files" for k, v in files_total.items()))
    print(f"{'query':>5} {'rows':>5} | {'Hudi (skipping on)':>20} | {'hudi-hive':>20} | rows")
    print(f"{'':>5} {'':>5} | {'ms':>12} {'files':>7} | {'ms':>12} {'files':>7} |")
    wrong = []
    for n, r in results.items():
        truth = r["hudi-hive"]["truth"]
        verdicts = {side: r[side]["rows"] == truth for side in ("hudi", "hudi-hive")}
        wrong += [f"Q{n} {side}" for side, ok in verdicts.items() if not ok]
        say = "both = truth" if all(verdicts.values()) else \
            "; ".join(f"{side} DIFFERS" for side, ok in verdicts.items() if not ok)
        print(f"{'Q' + str(n):>5} {len(truth):5d} | {r['hudi']['seconds'] * 1000:12.0f} {r['hudi']['files']:7d} | "
              f"{r['hudi-hive']['seconds'] * 1000:12.0f} {r['hudi-hive']['files']:7d} | {say}")
    tot = {side: sum(r[side]["seconds"] for r in results.values()) for side in ("hudi", "hudi-hive")}
    files = {side: sum(r[side]["files"] for r in results.values()) for side in ("hudi", "hudi-hive")}
    faster = sum(1 for r in results.values() if r["hudi-hive"]["seconds"] <= r["hudi"]["seconds"])
    fewer = sum(1 for r in results.values() if r["hudi-hive"]["files"] < r["hudi"]["files"])
    more = sum(1 for r in results.values() if r["hudi-hive"]["files"] > r["hudi"]["files"])
    print(f"{'total':>5} {'':>5} | {tot['hudi']:11.2f}s {files['hudi']:7d} | {tot['hudi-hive']:11.2f}s "
          f"{files['hudi-hive']:7d} |")
    print(f"hudi-hive / Hudi's reader: {tot['hudi-hive'] / tot['hudi']:.2f}x time (faster on {faster} of "
          f"{len(results)} queries), {files['hudi-hive'] / max(files['hudi'], 1):.2f}x files (fewer on {fewer}, "
          f"more on {more}); rows equal to the truth: Hudi {sum(r['hudi']['rows'] == r['hudi-hive']['truth'] for r in results.values())}"
          f" of {len(results)}, hudi-hive "
          f"{sum(r['hudi-hive']['rows'] == r['hudi-hive']['truth'] for r in results.values())} of {len(results)}")
    peer_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{total_s:.0f} s in all (Hudi's writes {wrote:.0f} s); peak memory: python {python_peak_mib():.0f} MiB, "
          f"JVM {jvm_peak:.0f} MiB; Hudi's side (largest child process) {peer_rss:.0f} MiB; load average at the end "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    if json_out:
        Path(json_out).write_text(json.dumps({"versions": written["versions"], "tables": files_total, "queries": {
            str(n): {side: {k: v for k, v in r[side].items() if k not in ("rows", "truth")} | {"rows": len(r[side]["rows"])}
                     for side in ("hudi", "hudi-hive")} for n, r in results.items()}}, indent=1))
    if wrong:
        raise SystemExit(f"ROWS DIFFER from the truth: {', '.join(wrong)}")
