"""``hive-bridge serve`` against the same SQL in a PySpark driver, beside Spark's own Thrift Server overhead on
plain parquet tables.

One generated copy-on-write Hudi table (the test writer; ``--files`` base files of ``--rows`` rows, keys clustered,
partitioned hive-style by ``day``) and a small dimension table; the same selective queries (point, range,
partition, a join) timed four ways, each the median of ``--repeat`` runs after one warm-up run:

- **(a) serve**: pyhive against ``hive-bridge serve --lake`` (a server process of its own, as users start it);
- **(b) PySpark + hudi-hive**: the same SQL in a PySpark driver, tables created ``USING hudi-hive``;
- **(c) Spark Thrift Server, parquet**: pyhive against Spark's own ``HiveThriftServer2.startWithContext`` (a
  server process of its own, no hive-bridge) over the table's latest base files as a plain parquet table;
- **(d) PySpark, parquet**: the same SQL in a PySpark driver over that parquet table.

Printed per query: the four medians, the endpoint's added time (a - b) beside the Thrift Server's own overhead on
parquet (c - d); and the peak resident memory of each server process tree and of this driver.

    python benchmarks/bench_serve.py [--files 40] [--rows 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peak_memory import jvm_peak_mib, python_peak_mib

ROOT = Path(__file__).resolve().parent.parent

QUERIES = {
    "point": "SELECT id, amount FROM {f} WHERE id = 12345",
    "range": "SELECT count(*), sum(amount) FROM {f} WHERE id BETWEEN 30000 AND 30999",
    "partition": "SELECT city, count(*) FROM {f} WHERE day = '2024-01-03' GROUP BY city",
    "join": "SELECT d.region, count(*) FROM {f} f JOIN {d} d ON f.city = d.city "
            "WHERE f.id BETWEEN 50000 AND 50499 GROUP BY d.region",
}
CITIES = ["Lima", "Osaka", "Paris", "Seoul"]
DAYS = 8


def build(lake: Path, plain: Path, files: int, rows: int) -> None:
    from hive_bridge.testing.writer import write_hudi_table

    n = files * rows
    ids = list(range(n))
    per_day = n // DAYS
    facts = pa.table({"id": pa.array(ids, pa.int64()), "amount": pa.array([i * 0.5 for i in ids]),
                      "city": pa.array([CITIES[i % 4] for i in ids]),
                      "day": pa.array([f"2024-01-{min(i // per_day, DAYS - 1) + 1:02d}" for i in ids])})
    write_hudi_table(lake / "facts", facts, record_key_fields=("id",), rows_per_file=rows,
                     partition_fields=("day",))
    dims = pa.table({"city": pa.array(CITIES), "region": pa.array(["americas", "asia", "europe", "asia"])})
    write_hudi_table(lake / "dims", dims, record_key_fields=("city",))
    for name in ("facts", "dims"):  # the latest base files (one commit: all of them), as plain parquet
        out = plain / name
        out.mkdir(parents=True)
        for i, f in enumerate(sorted((lake / name).rglob("*.parquet"))):
            if ".hoodie" not in f.parts:
                shutil.copy(f, out / f"part-{i:05d}.parquet")


# -- the plain Thrift Server (a child process: python bench_serve.py --plain-server DIR PORT) ------------------

def plain_server(folder: str, port: int) -> None:
    from hive_bridge.spark import session

    spark = session("bench-plain-thrift", **{"spark.sql.shuffle.partitions": "2"})
    for name in ("facts", "dims"):
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{folder}/{name}'")
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in (("hive.server2.thrift.port", str(port)), ("hive.server2.thrift.bind.host", "127.0.0.1"),
                       ("hive.server2.transport.mode", "binary")):
        hadoop.set(key, value)
        spark.conf.set(key, value)
    server = spark._jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
        spark._jsparkSession.sqlContext())
    print("serving", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    stop.wait()
    server.stop()
    spark.stop()


# -- timing -------------------------------------------------------------------------------------------------------

def timed(run: Any, sql: str, repeat: int) -> tuple[float, Any]:
    got = run(sql)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(sql)
        times.append(time.perf_counter() - start)
    return statistics.median(times), got


def tree_peak_mib(pid: int) -> float:
    """The summed peak resident set (VmHWM) of a process and its descendants (Linux)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as fh:
                total += next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, StopIteration, ValueError):
            continue
    return total


def start(argv: list[str], env: dict[str, str], ready: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(ready):
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            return proc
    raise SystemExit(f"{argv[:4]} did not start")


def _drain(stream: Any) -> None:
    for _ in stream:
        pass


def over_thrift(port: int, database: str, queries: dict[str, str], repeat: int) -> dict[str, tuple[float, Any]]:
    from pyhive import hive

    cursor = hive.connect(host="127.0.0.1", port=port, database=database).cursor()

    def run(sql: str) -> Any:
        cursor.execute(sql)
        return sorted(map(tuple, cursor.fetchall()))

    return {name: timed(run, sql, repeat) for name, sql in queries.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--plain-server", nargs=2, metavar=("DIR", "PORT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plain_server:
        plain_server(args.plain_server[0], int(args.plain_server[1]))
        return 0
    from hive_bridge.spark import register, session
    from hive_bridge.testing.servers import free_port

    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    lake, plain = work / "lake", work / "plain"
    build(lake, plain, args.files, args.rows)
    hudi_q = {k: q.format(f="facts", d="dims") for k, q in QUERIES.items()}
    env = dict(os.environ, PYTHONPATH=str(ROOT), HIVE_BRIDGE_SCAN_REPORTS=str(work / "reports"))
    results: dict[str, dict[str, tuple[float, Any]]] = {}

    port = free_port()
    served = start([sys.executable, "-m", "hive_bridge", "serve", "--lake", f"bench={lake}", "--port", str(port),
                    "--conf", "spark.sql.shuffle.partitions=2"], env, "serving ")
    results["a"] = over_thrift(port, "bench", hudi_q, args.repeat)
    serve_mib = tree_peak_mib(served.pid)
    served.send_signal(signal.SIGTERM)
    served.wait(120)

    port = free_port()
    thrift = start([sys.executable, __file__, "--plain-server", str(plain), str(port)], env, "serving")
    results["c"] = over_thrift(port, "default", hudi_q, args.repeat)
    thrift_mib = tree_peak_mib(thrift.pid)
    thrift.send_signal(signal.SIGTERM)
    thrift.wait(120)

    spark = session("bench-serve-driver", **{"spark.sql.shuffle.partitions": "2"})
    register(spark)
    spark.sql("CREATE DATABASE bench")
    spark.sql("CREATE DATABASE plain")
    for name in ("facts", "dims"):
        spark.sql(f"CREATE TABLE bench.{name} USING `hudi-hive` LOCATION '{lake / name}'")
        spark.sql(f"CREATE TABLE plain.{name} USING parquet LOCATION '{plain / name}'")

    def in_driver(database: str) -> Any:
        def run(sql: str) -> Any:
            spark.sql(f"USE {database}")
            return sorted(tuple(r) for r in spark.sql(sql).collect())
        return run

    results["b"] = {k: timed(in_driver("bench"), q, args.repeat) for k, q in hudi_q.items()}
    results["d"] = {k: timed(in_driver("plain"), q, args.repeat) for k, q in hudi_q.items()}
    driver_mib = python_peak_mib() + jvm_peak_mib(spark)
    spark.stop()

    print(f"{args.files} base files x {args.rows} rows ({args.files * args.rows:,} rows, {DAYS} day partitions), "
          f"median of {args.repeat} runs (s)")
    print(f"{'query':<10} {'(a) serve':>10} {'(b) pyspark':>12} {'a-b':>7} {'(c) STS pq':>11} {'(d) pyspark pq':>15}"
          f" {'c-d':>7}  rows")
    for k in QUERIES:
        a, b, c, d = (results[x][k][0] for x in "abcd")
        same = all(str(results[x][k][1]) == str(results["d"][k][1]) for x in "abc")
        print(f"{k:<10} {a:>10.3f} {b:>12.3f} {a - b:>7.3f} {c:>11.3f} {d:>15.3f} {c - d:>7.3f}  "
              f"{'same' if same else 'DIFFER'}")
    print(f"peak memory (MiB): serve process tree {serve_mib:.0f}; Spark Thrift Server tree {thrift_mib:.0f}; "
          f"this driver (Python + JVM) {driver_mib:.0f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
