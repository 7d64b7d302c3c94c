"""Merge-on-read slices merged in the driver vs by a Spark job on two executors (``hudi-hive`` file index).

A generated merge-on-read table (the test writer): ``--groups`` file groups of ``--rows`` rows, every group with
one log file (an upsert moving one key per group), so a full scan keeps ``--groups`` slices that need merging.
Each mode runs in its own driver process (a fresh peak memory) against ``--master`` (default
``local-cluster[2,1,1024]``: two executor JVMs, one core each, as separate processes) with an empty
``file://`` merged-slice store:

- ``driver``: ``spark.hive_bridge.mergeInDriverMax`` above the slice count: the planner merges every slice in
  the driver process, one after another;
- ``executors``: ``mergeInDriverMax=0``: one Spark job merges them in the executors' Python workers.

Printed per mode: the first full scan's wall time (planning with the merges, then Spark reading the merged
files), a second scan's (every merged file reused), the driver process's peak RSS, and the sum of the rows.

    python benchmarks/bench_merge_cluster.py [--groups 2000] [--rows 10] [--master local-cluster[2,1,1024]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent


def build(root: Path, groups: int, rows: int) -> None:
    import pyarrow as pa

    from hive_bridge.testing import HudiWriter

    writer = HudiWriter(root, record_key_fields=("k",), precombine_field="ts", rows_per_file=rows,
                        table_type="MERGE_ON_READ")
    ks = list(range(groups * rows))
    writer.insert(pa.table({"k": pa.array(ks, pa.int64()), "v": pa.array([float(k) for k in ks]),
                            "ts": pa.array([0] * len(ks), pa.int64())}))
    moved = [g * rows + 1 for g in range(groups)]
    writer.upsert(pa.table({"k": pa.array(moved, pa.int64()), "v": pa.array([-float(k) for k in moved]),
                            "ts": pa.array([1] * len(moved), pa.int64())}))


def child(table: str, store: str, master: str, mode: str, work: str) -> dict[str, float]:
    import pyspark
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from hive_bridge.spark import merge_job, register
    from hive_bridge.spark.jar import jar_path

    os.environ.setdefault("SPARK_HOME", str(Path(pyspark.__file__).parent))
    spark = (SparkSession.builder.master(master).appName(f"bench-merge-{mode}")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.jars", str(jar_path())).config("spark.executor.memory", "768m")
             .config("spark.pyspark.python", sys.executable).config("spark.executorEnv.PYTHONPATH", str(REPO))
             .config("spark.local.dir", work)
             .config(merge_job.STORE_CONF, Path(store).as_uri())
             .config(merge_job.DRIVER_MAX_CONF, "0" if mode == "executors" else str(10**9))
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    spark.range(4).repartition(4).count()   # executors up before timing
    df = spark.read.format("hudi-hive").load(table)
    started = time.perf_counter()
    total = df.agg(F.sum("v")).collect()[0][0]
    first = time.perf_counter() - started
    started = time.perf_counter()
    again = spark.read.format("hudi-hive").load(table).agg(F.sum("v")).collect()[0][0]
    second = time.perf_counter() - started
    assert again == total
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"first_s": first, "second_s": second, "driver_peak_mib": peak, "sum_v": total,
           "merged_in_driver": merge_job.STATS["driver"], "merged_by_jobs": merge_job.STATS["job"]}
    spark.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=10)
    parser.add_argument("--master", default="local-cluster[2,1,1024]")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-merge-cluster-") as tmp:
        root = Path(tmp) / "t"
        started = time.perf_counter()
        build(root, args.groups, args.rows)
        print(f"table: {args.groups} file groups x {args.rows} rows, one log file each "
              f"(written in {time.perf_counter() - started:.1f} s); master {args.master}")
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable,
               "SPARK_LOCAL_IP": "127.0.0.1", "HIVE_BRIDGE_CACHE": str(Path(tmp) / "cache")}
        for mode in ("driver", "executors"):
            store = Path(tmp) / f"store-{mode}"
            proc = subprocess.run([sys.executable, __file__, "--child", str(root), str(store), args.master, mode,
                                   str(Path(tmp) / "spark")], env=env, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                print(f"{mode}: failed\n{proc.stderr[-4000:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"{mode:9}  first scan {r['first_s']:6.1f} s  second scan {r['second_s']:5.1f} s  "
                  f"driver peak RSS {r['driver_peak_mib']:6.0f} MiB  merged in driver {r['merged_in_driver']}, "
                  f"by jobs {r['merged_by_jobs']}  sum(v) {r['sum_v']}")


if __name__ == "__main__":
    main()
