"""``format("hudi-hive")`` on S3 through Hadoop's S3A connector: a real S3 server (moto's) on 127.0.0.1 that checks
every request's signature, real fixture tables uploaded there (copy-on-write partitioned, merge-on-read with log
files, one listed through its metadata table), read by a Spark session whose Hadoop configuration has the S3A
connector (``tools/s3a_jars.py``'s jars on its class path) pointed at that server (path style, no SSL) and holds
the only copy of the credentials: the Python planner must reach the same endpoint with the same credentials
(a per-bucket secret overriding a wrong global one) or nothing is read.

That session runs in a child process (:mod:`tests.hive_bridge.spark.s3a_driver`; one session for the module, its
JVM started with the connector's jars, which the test run's shared session has not); the tests judge what it
wrote. Rows equal the truth (Spark's parquet reader over the latest files, pushdown off; for merge-on-read the
local copy merged by hudi-rs), each scan read exactly the files the planner kept, on one DataFrame reused and
through a SQL temp view. An object deleted after planning is an error naming it; a scheme without a connector
says what is missing; the secret appears nowhere in the child's output, the scan reports or the errors. The
shared session (no connector) gets the clear message for ``s3://``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from tests.conftest import REPO, SHARED_TABLES
from tests.hive_bridge.s3_server import S3Server

pytest.importorskip("moto")
pytest.importorskip("boto3")
sys.path.insert(0, str(REPO / "tools"))
import s3a_jars

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

BUCKET = "hive-bridge-s3a"
COW = "sample_table.cow.v9_txns_simple_nometa"
META = "sample_table.cow.v9_txns_simple_meta"
MOR = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
TXN_FILTERS = ["amount > 100", "txn_id IN ('TXN-001', 'TXN-002', 'TXN-003')", "currency = 'EUR' OR amount < 20",
               "region = 'APAC'", "txn_id = 'no-such-id'"]
ENV_BUCKET = "hive-bridge-s3a-env"
#: a wrong secret key given as a storage option and in a URI's user info (the planner's error shows it nowhere)
WRONG_SECRET = "Wr0ng/Secret+Key=Given%2FThere"
TABLES = {
    COW: ({}, TXN_FILTERS, False),
    META: ({"hoodie.metadata.enable": "true"}, TXN_FILTERS, False),
    MOR: ({}, ["fare > 30", "city = 'san_francisco'", "rider = 'rider-A' OR fare < 10", "fare > 1e9"], True),
}


def _unzip(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(SHARED_TABLES / f"{name}.zip") as zf:
        zf.extractall(dest, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    (root,) = [p.parent.parent for p in dest.glob("*/.hoodie/hoodie.properties")]
    return root


def _jars() -> list[Path]:
    why = s3a_jars.fetch()   # a no-op when the jars are there (make test fetched them)
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the S3A connector's jars could not be fetched: {why}")
        pytest.skip(f"the S3A connector's jars could not be fetched ({why}); make s3a-jars fetches them")
    return s3a_jars.jar_paths()


@dataclass
class Run:
    out: dict[str, Any]
    stdout: str
    stderr: str
    reports: str
    secret: str
    config: dict[str, Any]
    secrets: list[str]
    events: str
    cache: str


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    for name in TABLES:
        if not (SHARED_TABLES / f"{name}.zip").is_file():
            pytest.skip(f"shared Hudi table {name} not found in {SHARED_TABLES}")
    jars = _jars()
    work = tmp_path_factory.mktemp("s3a")
    with S3Server() as s3:
        tables = []
        for name, (options, filters, mor) in TABLES.items():
            local = _unzip(name, work / "local" / name)
            s3.upload_folder(local, BUCKET, f"warehouse/{name}")
            tables.append({"name": name, "uri": f"s3://{BUCKET}/warehouse/{name}",
                           "s3a": f"s3a://{BUCKET}/warehouse/{name}", "local": str(local), "options": options,
                           "filters": filters, "mor": mor})
        cow = next(t for t in tables if t["name"] == COW)
        s3.upload_folder(Path(cow["local"]), ENV_BUCKET, f"warehouse/{COW}")
        (access, secret), options, env_user, uri = s3.signed_users("spark", "options", "env", "uri")
        routes = {"options": options, "uri": uri, "env_bucket": ENV_BUCKET, "wrong": WRONG_SECRET}
        config = {"endpoint": s3.endpoint, "bucket": BUCKET, "access_key": access, "secret_key": secret,
                  "jars": [str(j) for j in jars], "work": str(work), "tables": tables, "routes": routes,
                  "events": str(work / "events")}
        (work / "events").mkdir()
        config_file, out_file = work / "config.json", work / "out.json"
        config_file.write_text(json.dumps(config))
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({"PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                    "HIVE_BRIDGE_CACHE": str(work / "cache"), "HIVE_BRIDGE_SCAN_REPORTS": str(work / "reports"),
                    "AWS_EC2_METADATA_DISABLED": "true",
                    # the credentials of the environment (the env bucket's, as its S3A settings say)
                    "AWS_ACCESS_KEY_ID": env_user[0], "AWS_SECRET_ACCESS_KEY": env_user[1]})
        proc = subprocess.run([sys.executable, "-m", "tests.hive_bridge.spark.s3a_driver", str(config_file),
                               str(out_file)], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800,
                              check=False)
        assert proc.returncode == 0, f"the S3A driver failed:\n{proc.stderr[-6000:]}"
        reports = "".join(p.read_text() for p in sorted((work / "reports").glob("scans.jsonl*")))
        events = "".join(f"{p}\n{p.read_text(errors='replace')}" for p in sorted((work / "events").rglob("*"))
                         if p.is_file())
        cache = "".join(f"{p}\n" for p in sorted((work / "cache").rglob("*")))
        yield Run(json.loads(out_file.read_text()), proc.stdout, proc.stderr, reports, secret, config,
                  [secret, options[1], env_user[1], uri[1], WRONG_SECRET], events, cache)


@pytest.mark.parametrize("name", list(TABLES))
def test_rows_are_the_truth_and_each_scan_reads_what_the_planner_kept(run: Run, name: str) -> None:
    got = run.out["tables"][name]
    # s3:// is read as s3a://, through the session's S3A connector
    assert got["pin_path"] == f"s3a://{BUCKET}/warehouse/{name}"
    assert got["all"]["rows"] == got["all"]["truth"] and got["all"]["rows"]
    pruned = 0
    for q, seen in got["filters"].items():
        assert seen["rows"] == seen["truth"], f"{name}: {q}"
        assert seen["sql_rows"] == seen["truth"], f"{name}: {q} (temp view)"
        assert seen["files_read"] == len(seen["kept"]), f"{name}: {q}"
        # base files handed to Spark as s3a://; merged slices from the local merged-slice cache
        assert all(k.startswith(f"s3a://{BUCKET}/warehouse/{name}/") or (TABLES[name][2] and "/merged/" in k)
                   for k in seen["kept"]), seen["kept"]
        pruned += seen["files_read"] < seen["files_total"]
    # the filters prune: the statistics were read from the bucket with the session's credentials
    assert pruned, name
    if name == META:
        assert got["listing_source"] == "mdt"


def test_merge_on_read_slices_with_log_files_are_merged(run: Run) -> None:
    local = Path(next(t["local"] for t in run.config["tables"] if t["name"] == MOR))
    assert list(local.rglob("*.log.*")), "the merge-on-read fixture has no log files"
    assert run.out["tables"][MOR]["all"]["rows"] == run.out["tables"][MOR]["all"]["truth"]


def test_an_object_deleted_after_planning_is_an_error_naming_it(run: Run) -> None:
    victim, error = run.out["deleted"], run.out["errors"]["deleted"]
    assert error, "the query read fewer files without failing"
    assert victim.rsplit("/", 1)[1] in error


def test_a_scheme_without_a_connector_says_what_is_missing(run: Run) -> None:
    error = run.out["errors"]["gs"]
    assert "cannot open gs://" in error and "spark.jars" in error and "hudi-hive-python" in error


def test_credentials_given_as_storage_options_in_the_uri_or_by_the_environment_are_used(run: Run) -> None:
    """Storage options and a URI's user info: the planner's credentials (a wrong secret given so fails the query),
    Spark's S3A reader keeping the session's; the environment: both sides' for a bucket whose S3A settings take
    their credentials from it (the session's global secret is wrong)."""
    got, truth = run.out["routes"], run.out["tables"][COW]
    for way in ("options", "uri", "env"):
        assert not got[way]["error"], (way, got[way]["error"])
        assert got[way]["rows"] == truth["all"]["truth"], way
        assert got[way]["filtered"] == truth["filters"][TXN_FILTERS[0]]["truth"], way
    for way in ("options_wrong", "uri_wrong"):
        assert got[way]["error"] and "rows" not in got[way], way


def test_the_secrets_given_every_way_are_shown_nowhere(run: Run) -> None:
    """The Hadoop settings' secret, a storage option's, the environment's, a URI's (and a wrong one given as an
    option and in a URI): not in stdout, stderr (Spark's log at INFO), the event log, the scan reports, the errors
    or the local cache's keys."""
    pieces = sorted({p for secret in run.secrets for form in (secret, unquote(secret), quote(secret, safe=""))
                     for p in (form, *(form[i:i + 12] for i in range(0, len(form) - 11, 6)))})
    assert " INFO " in run.stderr and "DAGScheduler" in run.stderr   # Spark's log at INFO was captured
    assert "SparkListenerSQLExecutionStart" in run.events
    for where, text in (("stdout", run.stdout), ("stderr", run.stderr), ("event log", run.events),
                        ("scan reports", run.reports), ("errors", json.dumps([run.out["errors"], run.out["routes"]])),
                        ("local cache", run.cache)):
        assert not [p for p in pieces if p in text], where
    assert run.reports.count('"route"') > len(TABLES)   # the reports were written


def test_a_session_without_the_connector_gets_a_clear_message(spark: Any, tmp_path: Path) -> None:
    from hive_bridge.spark import register

    jvm: Any = spark._jvm
    conf = spark._jsparkSession.sessionState().newHadoopConf()
    try:
        jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass("s3a", conf).getName()
        if conf.getClassByNameOrNull("software.amazon.awssdk.services.s3.S3Client") is not None:
            pytest.skip("the shared session has the S3A connector")
    except Exception:   # no S3A file system: what this test is about
        pass
    register(spark)
    with pytest.raises(Exception) as info:
        spark.read.format("hudi-hive").load(f"s3://{BUCKET}/warehouse/t").count()
    text = str(info.value)
    assert "cannot open s3a://" in text
    assert "org.apache.hadoop:hadoop-aws:3.5.0" in text and "software.amazon.awssdk:bundle:2.35.4" in text
    assert "spark.jars" in text and "read_hudi" in text and "hudi-hive-python" in text
