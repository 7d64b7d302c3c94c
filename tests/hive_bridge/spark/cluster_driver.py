"""The Spark driver of ``test_cluster.py``: run in a child process (the test run's own session is a local one, and a
process has one SparkContext), it connects to a standalone Spark cluster, reads Hudi tables through
``format("hudi-hive")`` with merge-on-read slices merged by the executors into a ``file://`` merged-slice store,
and writes what it saw as JSON for the tests to judge.

    python -m tests.hive_bridge.spark.cluster_driver CONFIG.json OUT.json

CONFIG: the master URL, the store, the product jar, the work folder, the tables (name, path, filters) and a copy of
a merge-on-read table with a corrupted log file. OUT: the error ``register`` gave before a store was set; per
table and filter the rows (``to_json(struct(*))`` strings) and the kept files with, for merged ones, the writer
their parquet metadata records; the driver's pid; the merges done in the driver and by jobs; the corrupted
table's error."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.hive_bridge.spark.child_driver import error_of, info_log, sorted_rows


def _scan(spark: Any, tables: list[dict[str, Any]], store: str, metadata: Any) -> dict[str, Any]:
    """Per table and filter (none first): the rows, the files the planner kept and, for merged slices (those in
    ``store``), the writer their parquet metadata records (read with ``metadata(location)``)."""
    from hive_bridge.spark import merge_job, pin_of

    out: dict[str, Any] = {}
    for table in tables:
        df = spark.read.format("hudi-hive").load(table["path"])
        pin = pin_of(df)
        got: dict[str, Any] = {}
        for q in [None, *table["filters"]]:
            rows = sorted_rows(df if q is None else df.where(q))
            kept = list(pin.last_kept) if pin is not None else []
            writers = {p: (metadata(p).metadata or {}).get(merge_job.MERGED_BY_KEY.encode(), b"").decode()
                       for p in kept if p.startswith(store)}
            got[q or ""] = {"rows": rows, "kept": kept, "writers": writers}
        out[table["name"]] = got
    return out


def _again(spark: Any, path: str) -> dict[str, Any]:
    """A new relation over a table read before: its rows, kept files and the merge jobs it ran."""
    from hive_bridge.spark import merge_job, pin_of

    jobs_before = merge_job.STATS["jobs"]
    again = spark.read.format("hudi-hive").load(path)
    rows = sorted_rows(again)
    return {"rows": rows, "kept": list(pin_of(again).last_kept),  # type: ignore[union-attr]
            "jobs": merge_job.STATS["jobs"] - jobs_before}


def _on_s3(spark: Any, s3: dict[str, Any]) -> dict[str, Any]:
    """The same tables uploaded to the S3 server, read as s3a:// with the merged-slice store on S3: the
    credentials in the session's Hadoop settings only (a per-bucket secret over a wrong global one)."""
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    from hive_bridge.spark import merge_job, register

    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("fs.s3a.access.key", s3["access_key"])
    hadoop.set("fs.s3a.secret.key", "wrong-global-secret-key-0000")
    hadoop.set(f"fs.s3a.bucket.{s3['bucket']}.secret.key", s3["secret_key"])
    spark.conf.set(merge_job.STORE_CONF, s3["store"])
    register(spark)
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    fs = pafs.S3FileSystem(access_key=s3["access_key"], secret_key=s3["secret_key"], region="us-east-1",
                           endpoint_override=s3["endpoint"], allow_bucket_creation=False)

    def metadata(location: str) -> Any:
        return pq.read_metadata(location.split("://", 1)[1], filesystem=fs)

    stats = dict(merge_job.STATS)
    out: dict[str, Any] = {"tables": _scan(spark, s3["tables"], s3["store"], metadata)}
    out["again"] = _again(spark, s3["tables"][0]["path"])
    out["stats"] = {k: merge_job.STATS[k] - stats[k] for k in stats}
    prefix = s3["store"].split("://", 1)[1]
    out["store_files"] = sorted(f"s3a://{i.path}" for i in fs.get_file_info(pafs.FileSelector(prefix, recursive=True))
                                if i.type == pafs.FileType.File)
    return out


def main(config_path: str, out_path: str) -> None:
    config = json.loads(Path(config_path).read_text())
    import pyarrow.parquet as pq
    from pyspark.sql import SparkSession

    from hive_bridge.spark import merge_job, register

    builder = SparkSession.builder
    s3 = config.get("s3")
    if s3:   # Hadoop's S3A connector on the driver's and the executors' class paths, pointed at the S3 server
        jars = ":".join(s3["jars"])
        builder = (builder.config("spark.driver.extraClassPath", jars).config("spark.executor.extraClassPath", jars)
                   .config("spark.hadoop.fs.s3a.endpoint", s3["endpoint"].removeprefix("http://"))
                   .config("spark.hadoop.fs.s3a.path.style.access", "true")
                   .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
                   .config("spark.hadoop.fs.s3a.endpoint.region", "us-east-1"))
    if config.get("event_log"):
        builder = (builder.config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", config["event_log"])
                   .config("spark.eventLog.compress", "false"))   # searched as text
    spark = (builder.master(config["master"]).appName("hive-bridge-cluster")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.jars", config["jar"])
             .config("spark.executor.memory", "512m").config("spark.executor.cores", "1")
             .config("spark.cores.max", "2")
             .config("spark.pyspark.python", sys.executable)
             .config("spark.executorEnv.PYTHONPATH", config["repo"])
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.warehouse.dir", config["work"] + "/warehouse")
             .config("spark.local.dir", config["work"] + "/tmp")
             .config(merge_job.DRIVER_MAX_CONF, "0")   # every merge a job on the executors
             .getOrCreate())
    if config.get("info_log"):   # Spark's log at INFO, searched for the credentials
        info_log(spark, config["work"])
    else:
        spark.sparkContext.setLogLevel("ERROR")
    out: dict[str, Any] = {"driver_pid": os.getpid(), "tables": {}}
    out["no_store"] = error_of(lambda: register(spark))   # a cluster session without a store: refused
    spark.conf.set(merge_job.STORE_CONF, config["store"])
    register(spark)
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    out["tables"] = _scan(spark, config["tables"], config["store_path"], pq.read_metadata)
    again = _again(spark, config["tables"][0]["path"])   # a new relation, same slices
    out["again_rows"], out["again_kept"], out["jobs_for_again"] = again["rows"], again["kept"], again["jobs"]
    out["stats"] = dict(merge_job.STATS)
    # the executors that ran (the driver's block manager counted out)
    out["executors"] = int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1
    out["corrupted"] = error_of(lambda: spark.read.format("hudi-hive").load(config["corrupted"]).collect())
    if config.get("s3"):
        out["s3"] = _on_s3(spark, config["s3"])
    Path(out_path).write_text(json.dumps(out))
    spark.stop()


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(sys.argv[1], sys.argv[2])
