"""The Spark driver of ``test_s3a.py``: run in a child process (a session with Hadoop's S3A connector needs a JVM
started with its jars; the test run's shared session has none), it reads Hudi tables on a local S3 server through
``format("hudi-hive")`` with S3A configured to that server and writes what it saw as JSON for the tests to judge.

    python -m tests.hive_bridge.spark.s3a_driver CONFIG.json OUT.json

CONFIG: endpoint, bucket, access key and secret (S3A's, given through the session's Hadoop configuration only),
the connector's jars, the tables (name, URI, local copy, options, filters). OUT: per table and filter the rows
read through hudi-hive and the truth's rows (``to_json(struct(*))`` strings), the files Spark read and the planner
kept; the errors seen (their text)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.hive_bridge.spark.child_driver import error_of, info_log, json_rows, sorted_rows


def _truth(spark: Any, table: dict[str, Any]) -> Any:
    """Spark's own parquet reader over the latest files (pushdown off) for copy-on-write tables; hudi-rs's merge of
    the local copy (``read_hudi`` without a filter, through the driver) for merge-on-read ones."""
    from hive_bridge.spark import read_hudi
    from hive_bridge.table.table import HudiTable

    if table["mor"]:
        return read_hudi(spark, table["local"], None, prune=False).df
    local = HudiTable.open(table["local"])
    files = [f"{table['s3a']}/{s.base_file.path}" for s in local.latest_file_slices() if s.base_file is not None]
    return spark.read.option("mergeSchema", "false").parquet(*files)


def _routes(spark: Any, config: dict[str, Any], hadoop: Any) -> dict[str, Any]:
    """The copy-on-write table read with credentials given each other way (Spark's S3A reader keeps the
    session's where the way is the planner's only), and with a wrong secret given that way (the planner's
    credentials are those: its error); per way the rows of the table and of its first filter, or the error."""
    from urllib.parse import quote

    routes, cow = config["routes"], config["tables"][0]
    rest = cow["uri"].split("://", 1)[1]
    q = cow["filters"][0]

    def read(uri: str, **options: str) -> dict[str, Any]:
        def rows() -> dict[str, Any]:
            reader = spark.read.format("hudi-hive")
            for k, v in options.items():
                reader = reader.option(k, v)
            df = reader.load(uri)
            return {"rows": sorted_rows(df), "filtered": sorted_rows(df.where(q))}
        got: dict[str, Any] = {}
        got["error"] = error_of(lambda: got.update(rows()))
        return got

    out: dict[str, Any] = {}
    for name, secret in (("options", routes["options"][1]), ("options_wrong", routes["wrong"])):
        out[name] = read(cow["uri"], **{"storage.access_key": routes["options"][0], "storage.secret_key": secret})
    for name, secret in (("uri", routes["uri"][1]), ("uri_wrong", routes["wrong"])):
        out[name] = read(f"s3a://{routes['uri'][0]}:{quote(secret, safe='')}@{rest}")
    # the environment: the session's S3A takes a bucket's credentials from it when told so, as the planner then does
    env_bucket = routes["env_bucket"]
    hadoop.set(f"fs.s3a.bucket.{env_bucket}.aws.credentials.provider",
               "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider")
    out["env"] = read(f"s3://{env_bucket}/{rest.split('/', 1)[1]}")
    return out


def main(config_path: str, out_path: str) -> None:
    config = json.loads(Path(config_path).read_text())
    from pyspark.sql import SparkSession

    from hive_bridge.spark import pin_of, register
    from hive_bridge.spark.jar import JVM_PACKAGE

    jars = ":".join(config["jars"])
    spark = (SparkSession.builder.master("local[2]").appName("hive-bridge-s3a")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.extraClassPath", jars).config("spark.executor.extraClassPath", jars)
             .config("spark.sql.warehouse.dir", config["work"] + "/warehouse")
             .config("spark.local.dir", config["work"] + "/tmp")
             .config("spark.hadoop.fs.s3a.endpoint", config["endpoint"].removeprefix("http://"))
             .config("spark.hadoop.fs.s3a.path.style.access", "true")
             .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
             .config("spark.hadoop.fs.s3a.endpoint.region", "us-east-1")
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", config["events"])
             .config("spark.eventLog.compress", "false")   # searched as text
             .getOrCreate())
    info_log(spark, config["work"])   # Spark's log at INFO: searched for the credentials
    # the credentials through the Hadoop configuration only (a per-bucket secret overriding a wrong global one)
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop.set("fs.s3a.access.key", config["access_key"])
    hadoop.set("fs.s3a.secret.key", "wrong-global-secret-key-0000")
    hadoop.set(f"fs.s3a.bucket.{config['bucket']}.secret.key", config["secret_key"])
    register(spark)
    jvm: Any = spark._jvm
    out: dict[str, Any] = {"tables": {}, "errors": {}}
    for table in config["tables"]:
        got: dict[str, Any] = {"filters": {}}
        reader = spark.read.format("hudi-hive")
        for k, v in table["options"].items():
            reader = reader.option(k, v)
        df = reader.load(table["uri"])     # one DataFrame, reused for every filter
        truth = _truth(spark, table)
        spark.conf.set("spark.sql.parquet.filterPushdown", "false")
        pin = pin_of(df)
        got["pin_path"] = None if pin is None else pin.path
        got["listing_source"] = None if pin is None else pin.snapshot.table.listing_source
        got["all"] = {"rows": sorted_rows(df), "truth": sorted_rows(truth)}
        df.createOrReplaceTempView("t")
        for q in table["filters"]:
            scan = json_rows(df.where(q))
            rows = sorted(r[0] for r in scan.collect())
            read = int(getattr(jvm, JVM_PACKAGE).Planner.filesRead(scan._jdf.queryExecution().executedPlan()))
            kept = list(pin.last_kept) if pin is not None else []
            sql_rows = sorted_rows(spark.sql(f"SELECT * FROM t WHERE {q}"))
            got["filters"][q] = {"rows": rows, "sql_rows": sql_rows, "truth": sorted_rows(truth.where(q)),
                                 "files_read": read, "kept": kept,
                                 "files_total": None if pin is None else len(pin.snapshot.slices)}
        out["tables"][table["name"]] = got
    out["routes"] = _routes(spark, config, hadoop)
    # an object deleted after the table state was pinned and planned: Spark's reader names it
    victim_table = config["tables"][0]
    df = spark.read.format("hudi-hive").load(victim_table["uri"])
    df.count()
    pin = pin_of(df)
    assert pin is not None
    victim = sorted(p for p in pin.last_kept if p.startswith("s3a://"))[0]
    import boto3

    client = boto3.client("s3", endpoint_url=config["endpoint"], aws_access_key_id=config["access_key"],
                          aws_secret_access_key=config["secret_key"], region_name="us-east-1")
    client.delete_object(Bucket=config["bucket"], Key=victim.split(f"s3a://{config['bucket']}/", 1)[1])
    out["deleted"] = victim
    out["errors"]["deleted"] = error_of(lambda: df.count())
    # a scheme the session has no file system for: the message says what is missing
    out["errors"]["gs"] = error_of(lambda: spark.read.format("hudi-hive").load(f"gs://{config['bucket']}/t").count())
    Path(out_path).write_text(json.dumps(out))
    spark.stop()


if __name__ == "__main__":
    sys.path.insert(0, os.getcwd())
    main(sys.argv[1], sys.argv[2])
