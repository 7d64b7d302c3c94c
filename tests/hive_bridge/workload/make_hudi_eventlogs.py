"""Writes Hudi tables with the project's test writer, queries them with pyspark with the event log on (one
application per codec), and writes ``queries.json``: each query and the tables it reads. Run as a script (a
separate process: the event log is a SparkContext setting)::

    python make_hudi_eventlogs.py OUT_DIR
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from hive_bridge.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

CODECS = ("none", "zstd", "lz4", "snappy", "lzf")

#: (query, each table's own predicate in it: the truth a scan of that table must keep every row of); the views
#: are named after the tables
QUERIES = [
    ("SELECT * FROM orders WHERE id = 5 AND name = 'n,5 [x]'", {"orders": "id = 5 AND name = 'n,5 [x]'"}),
    ("SELECT id FROM orders WHERE id > 40 AND price >= 10.5 AND dt = '2024-01-02'",
     {"orders": "id > 40 AND price >= 10.5 AND dt = '2024-01-02'"}),
    ("SELECT id FROM orders WHERE id IN (1, 2, 3) OR name LIKE 'n1%'",
     {"orders": "id IN (1, 2, 3) OR name LIKE 'n1%'"}),
    ("SELECT id FROM orders WHERE d = DATE'2024-01-03' AND ts > TIMESTAMP'2024-01-01 10:00:00'",
     {"orders": "d = DATE'2024-01-03' AND ts > TIMESTAMP'2024-01-01 10:00:00'"}),
    ("SELECT id FROM orders WHERE amount < 3.25 OR NOT (id <= 55)", {"orders": "amount < 3.25 OR NOT (id <= 55)"}),
    ("SELECT c.cid FROM customers c WHERE c.region = 'eu' AND c.cid >= 7",
     {"customers": "region = 'eu' AND cid >= 7"}),
    ("SELECT o.id FROM orders o JOIN days k ON o.dt = k.dt WHERE k.flag = 1",
     {"orders": "dt IS NOT NULL", "days": "flag = 1 AND dt IS NOT NULL"}),
    ("SELECT o.id, c.region FROM orders o JOIN customers c ON o.id = c.cid WHERE c.region = 'us' AND o.price < 20",
     {"orders": "price < 20 AND id IS NOT NULL", "customers": "region = 'us' AND cid IS NOT NULL"}),
]


def orders() -> pa.Table:
    n = 60
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "name": pa.array([f"n,{i} [x]" if i % 7 == 5 else f"n{i}" for i in range(n)], pa.string()),
        "price": pa.array([i * 0.5 for i in range(n)], pa.float64()),
        "amount": pa.array([Decimal(i) + Decimal("0.25") for i in range(n)], pa.decimal128(10, 2)),
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i % 5) for i in range(n)], pa.date32()),
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i % 24) for i in range(n)], pa.timestamp("us")),
        "dt": pa.array([f"2024-01-0{1 + i // 20}" for i in range(n)], pa.string()),
    })


def customers() -> pa.Table:
    n = 30
    return pa.table({
        "cid": pa.array(range(n), pa.int64()),
        "region": pa.array(["eu" if i < 10 else "us" if i < 20 else "apac" for i in range(n)], pa.string()),
    })


def days() -> pa.Table:
    return pa.table({"dt": pa.array(["2024-01-01", "2024-01-02"]), "flag": pa.array([1, 0], pa.int64())})


def write_tables(root: Path) -> dict[str, Path]:
    paths = {"orders": root / "lake" / "orders", "customers": root / "lake" / "customers",
             "days": root / "lake" / "days"}
    HudiWriter(paths["orders"], partition_fields=("dt",), rows_per_file=10).insert(orders())
    w = HudiWriter(paths["customers"], table_type="MERGE_ON_READ", rows_per_file=10, record_key_fields=("cid",))
    w.insert(customers())
    w.upsert(pa.table({"cid": pa.array([3, 25], pa.int64()), "region": pa.array(["us", "eu"])}))
    HudiWriter(paths["days"], rows_per_file=10, record_key_fields=("dt",)).insert(days())
    return paths


def run(root: Path) -> None:
    from pyspark.sql import SparkSession

    paths = write_tables(root)
    logs = root / "eventlogs"
    for codec in CODECS:
        out = logs / codec
        out.mkdir(parents=True, exist_ok=True)
        b = (SparkSession.builder.master("local[1]").appName(f"replay-{codec}")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.adaptive.enabled", "true")
             .config("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly", "false")
             .config("spark.sql.warehouse.dir", str(root / "wh"))
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", out.as_uri()))
        if codec != "none":
            b = b.config("spark.eventLog.compress", "true").config("spark.eventLog.compression.codec", codec)
        else:
            b = b.config("spark.eventLog.compress", "false")
        spark = b.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        for name, path in paths.items():
            table = HudiTable.open(path)
            files = [s.base_file.full_path for s in table.latest_file_slices() if s.base_file is not None]
            spark.read.option("basePath", str(path)).parquet(*files).createOrReplaceTempView(name)
        queries = QUERIES if codec in ("none", "zstd") else QUERIES[:2]
        for i, (q, _) in enumerate(queries):
            spark.sparkContext.setJobDescription(f"q{i}")
            spark.sql(q).collect()
        spark.stop()
    (root / "queries.json").write_text(json.dumps({"tables": {k: str(v) for k, v in paths.items()},
                                                   "queries": QUERIES}))


if __name__ == "__main__":
    run(Path(sys.argv[1]))
