"""Writes four small Hudi tables of TPC-H's schema (customer, orders, part, supplier) with the project's test
writer and runs TPC-H queries 13, 14 and 16 (and Q9's part filter) over them with pyspark, the event log on:
their ``LIKE`` conjuncts (``o_comment NOT LIKE '%special%requests%'``, ``p_type NOT LIKE 'MEDIUM POLISHED%'``,
``s_comment LIKE '%Customer%Complaints%'``, ``p_name LIKE '%green%'``) are what Spark prints them as. Writes
``tables.json`` (name -> path) and ``queries.json`` (each query with each table's own predicate in it). Run as a
script (a separate process: the event log is a SparkContext setting)::

    python make_tpch_eventlog.py OUT_DIR
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pyarrow as pa

from hive_bridge.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

COMMENTS = ["carefully final deposits", "special requests sleep", "the special packages requests nag",
            "furiously ironic", "blithely special accounts", "requests about the special"]
TYPES = ["MEDIUM POLISHED BRASS", "PROMO ANODIZED TIN", "STANDARD BRUSHED STEEL", "PROMO PLATED COPPER",
         "ECONOMY POLISHED NICKEL"]

#: (query, each table's own predicate in it: the truth a scan of that table must keep every row of)
QUERIES = [
    ("SELECT c_count, count(*) AS custdist FROM (SELECT c_custkey, count(o_orderkey) AS c_count FROM customer "
     "LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%' "
     "GROUP BY c_custkey) c_orders GROUP BY c_count ORDER BY custdist DESC, c_count DESC",
     {"orders": "o_comment NOT LIKE '%special%requests%'", "customer": None}),
    ("SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN 1 ELSE 0 END) / count(*) FROM orders, part "
     "WHERE o_orderkey = p_partkey AND o_orderdate >= DATE '1995-09-01' AND o_orderdate < DATE '1995-10-01'",
     {"orders": "o_orderdate >= DATE '1995-09-01' AND o_orderdate < DATE '1995-10-01'", "part": None}),
    ("SELECT p_type, p_size, count(DISTINCT s_suppkey) FROM part, supplier WHERE p_partkey = s_suppkey "
     "AND p_type NOT LIKE 'MEDIUM POLISHED%' AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9) "
     "AND s_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%') "
     "GROUP BY p_type, p_size",
     {"part": "p_type NOT LIKE 'MEDIUM POLISHED%' AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9)",
      "supplier": None}),
    ("SELECT count(*) FROM part WHERE p_name LIKE '%green%' AND p_size > 10", {"part": "p_size > 10"}),
]


def tables() -> dict[str, pa.Table]:
    n = 60
    return {
        "customer": pa.table({"c_custkey": pa.array(range(n), pa.int64()),
                              "c_name": pa.array([f"Customer#{i:09d}" for i in range(n)])}),
        "orders": pa.table({
            "o_orderkey": pa.array(range(2 * n), pa.int64()),
            "o_custkey": pa.array([i % n for i in range(2 * n)], pa.int64()),
            "o_orderdate": pa.array([dt.date(1995, 8, 1) + dt.timedelta(days=i) for i in range(2 * n)]),
            "o_comment": pa.array([COMMENTS[i % len(COMMENTS)] for i in range(2 * n)])}),
        "part": pa.table({
            "p_partkey": pa.array(range(n), pa.int64()),
            "p_name": pa.array([("green " if i % 4 == 0 else "blue ") + f"part {i}" for i in range(n)]),
            "p_type": pa.array([TYPES[i % len(TYPES)] for i in range(n)]),
            "p_size": pa.array([i // 3 for i in range(n)], pa.int32())}),
        "supplier": pa.table({
            "s_suppkey": pa.array(range(n), pa.int64()),
            "s_comment": pa.array(["Customer slow Complaints" if i % 9 == 0 else "quick" for i in range(n)])}),
    }


def write_tables(root: Path) -> dict[str, Path]:
    paths = {}
    for name, data in tables().items():
        paths[name] = root / "lake" / name
        HudiWriter(paths[name], rows_per_file=15, record_key_fields=(data.column_names[0],)).insert(data)
    return paths


def run(root: Path) -> None:
    from pyspark.sql import SparkSession

    paths = write_tables(root)
    out = root / "eventlogs"
    out.mkdir(parents=True, exist_ok=True)
    spark = (SparkSession.builder.master("local[1]").appName("tpch")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.warehouse.dir", str(root / "wh"))
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", out.as_uri())
             .config("spark.eventLog.compress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for name, path in paths.items():
        table = HudiTable.open(path)
        files = [s.base_file.full_path for s in table.latest_file_slices() if s.base_file is not None]
        spark.read.parquet(*files).createOrReplaceTempView(name)
    for i, (q, _) in enumerate(QUERIES):
        spark.sparkContext.setJobDescription(f"q{i}")
        spark.sql(q).collect()
    spark.stop()
    (root / "tables.json").write_text(json.dumps({k: str(v) for k, v in paths.items()}))
    (root / "queries.json").write_text(json.dumps(QUERIES))


if __name__ == "__main__":
    run(Path(sys.argv[1]))
