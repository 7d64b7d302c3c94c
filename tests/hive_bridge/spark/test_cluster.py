"""``format("hudi-hive")`` on a real standalone Spark cluster: a Master and two Workers started with pyspark's own
launcher (``bin/spark-class``, separate JVM processes, one core and one executor each), a driver in a child
process (:mod:`tests.hive_bridge.spark.cluster_driver`) whose merge-on-read slices are merged by a Spark job in the
executors' Python workers into a ``file://`` merged-slice store (all processes share this machine's disk, which
stands for a shared file system here).

Proven: ``register`` on a cluster session without a store says what to set; merge-on-read snapshot rows equal the
truth (the table was written with known values) and, like copy-on-write rows, the same queries in the test run's
local session; every merged file was written by another process than the driver (its parquet metadata records
the writer) and lies in the store; a new relation over the same slices reuses them (no job); a corrupted log file
fails the query with its slice named. The cluster's processes are killed at teardown.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hive_bridge.testing import HudiWriter
from tests.conftest import REPO, SHARED_TABLES

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

COW = "sample_table.cow.v9_txns_simple_nometa"
MOR = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
GROUPS = 12
S3_BUCKET = "hive-bridge-cluster"
FILTERS = {"gen": ["k >= 30 AND k < 60", "v < 0"], MOR: ["fare > 30", "city = 'san_francisco'"],
           COW: ["amount > 100", "region = 'APAC'"]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unzip(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(SHARED_TABLES / f"{name}.zip") as zf:
        zf.extractall(dest, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    (root,) = [p.parent.parent for p in dest.glob("*/.hoodie/hoodie.properties")]
    return root


def _generated(root: Path) -> dict[int, float]:
    """A merge-on-read table of GROUPS file groups (keys 10g..10g+9), each slice with a log file moving one key's
    ``v``; the expected ``v`` of every key."""
    writer = HudiWriter(root, record_key_fields=("k",), precombine_field="ts", rows_per_file=10,
                        table_type="MERGE_ON_READ")
    ks = list(range(GROUPS * 10))
    writer.insert(pa.table({"k": pa.array(ks, pa.int64()), "v": pa.array([float(k) for k in ks]),
                            "ts": pa.array([0] * len(ks), pa.int64())}))
    moved = [g * 10 + 1 for g in range(GROUPS)]
    writer.upsert(pa.table({"k": pa.array(moved, pa.int64()), "v": pa.array([-float(k) for k in moved]),
                            "ts": pa.array([1] * len(moved), pa.int64())}))
    return {k: (-float(k) if k in moved else float(k)) for k in ks}


def _corrupt_a_log(root: Path) -> str:
    """Scramble one log file's bytes after its header (its size kept); the file's name."""
    log = sorted(root.rglob(".*.log.*"))[0]
    data = bytearray(log.read_bytes())
    for i in range(40, len(data) - 10):
        data[i] = (data[i] * 7 + 13) & 0xFF
    log.write_bytes(bytes(data))
    return log.name


@dataclass
class Cluster:
    master: str
    procs: list[subprocess.Popen[bytes]]
    logs: Path


def _wait_for_workers(ui: int, want: int, procs: list[subprocess.Popen[bytes]], logs: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        for p in procs:
            if p.poll() is not None:
                tail = "".join(f.read_text()[-2000:] for f in sorted(logs.glob("*.log")))
                pytest.fail(f"a cluster process exited ({p.args}):\n{tail}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                state = json.loads(r.read())
            if sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE") >= want:
                return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail("the standalone cluster's workers did not register within 90 s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    import pyspark

    home = Path(pyspark.__file__).parent
    work = tmp_path_factory.mktemp("cluster")
    logs, conf = work / "logs", work / "conf"
    logs.mkdir()
    conf.mkdir()   # no user-level spark-defaults or spark-env
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_CONF_DIR": str(conf),
           "SPARK_WORKER_DIR": str(work / "worker"), "PYSPARK_PYTHON": sys.executable,
           "PYTHONPATH": str(REPO), "SPARK_NO_DAEMONIZE": "1"}
    port, ui = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    commands = [["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                 "--webui-port", str(ui)]]
    for i in range(2):
        commands.append(["org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1", "--cores", "1",
                         "--memory", "1g", "--port", str(_free_port()), "--webui-port", str(_free_port()),
                         "--work-dir", str(work / f"worker{i}")])
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for n, cmd in enumerate(commands):
            with open(logs / f"{n}.log", "wb") as log:
                procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *cmd], env=env, stdout=log,
                                              stderr=subprocess.STDOUT, start_new_session=True))
            if n == 0:
                _wait_for_workers(ui, 0, procs, logs)   # the master answers before workers register
        _wait_for_workers(ui, 2, procs, logs)
        yield Cluster(master, procs, logs)
    finally:
        for p in procs:   # each launcher's own process group: the JVM and anything it started
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


@dataclass
class Run:
    out: dict[str, Any]
    truth: dict[int, float]
    paths: dict[str, str]
    store: Path
    bad_log: str
    corrupted: Path
    procs: list[subprocess.Popen[bytes]]
    stdout: str = ""
    stderr: str = ""
    reports: str = ""
    secret: str = ""
    work: Path = Path()
    replay: str = ""
    cluster_work: Path = Path()


def _s3a_jars() -> list[str] | None:
    """The S3A connector's jars (fetched when missing), None when they cannot be had here (outside CI)."""
    sys.path.insert(0, str(REPO / "tools"))
    import s3a_jars

    why = s3a_jars.fetch()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the S3A connector's jars could not be fetched: {why}")
        return None
    return [str(j) for j in s3a_jars.jar_paths()]


def _with_s3(work: Path, paths: dict[str, str]) -> Iterator[dict[str, Any] | None]:
    """The S3 server with the tables uploaded and a user checked on every request: the driver's ``s3`` config
    (None without moto or the S3A jars: the S3 tests skip)."""
    jars = _s3a_jars()
    try:
        import boto3  # noqa: F401
        import moto  # noqa: F401
    except ImportError:
        jars = None
    if jars is None:
        yield None
        return
    from tests.hive_bridge.s3_server import S3Server

    with S3Server() as s3:
        tables = []
        for name, path in paths.items():
            s3.upload_folder(Path(path), S3_BUCKET, f"warehouse/{name}")
            tables.append({"name": name, "path": f"s3a://{S3_BUCKET}/warehouse/{name}", "filters": FILTERS[name]})
        access, secret = s3.signed_user()
        yield {"endpoint": s3.endpoint, "bucket": S3_BUCKET, "access_key": access, "secret_key": secret,
               "jars": jars, "tables": tables, "store": f"s3a://{S3_BUCKET}/tmp/merged"}


@pytest.fixture(scope="module")
def run(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    from hive_bridge.spark.jar import jar_path

    for name in (COW, MOR):
        if not (SHARED_TABLES / f"{name}.zip").is_file():
            pytest.skip(f"shared Hudi table {name} not found in {SHARED_TABLES}")
    work = tmp_path_factory.mktemp("cluster-driver")
    truth = _generated(work / "gen")
    corrupted = work / "corrupted"
    shutil.copytree(work / "gen", corrupted)
    bad_log = _corrupt_a_log(corrupted)
    paths = {"gen": str(work / "gen"), MOR: str(_unzip(MOR, work / "mor")), COW: str(_unzip(COW, work / "cow"))}
    store = work / "store"
    config = {"master": cluster.master, "store": store.as_uri(), "store_path": str(store), "jar": str(jar_path()),
              "repo": str(REPO), "work": str(work), "corrupted": str(corrupted),
              "tables": [{"name": n, "path": p, "filters": FILTERS[n]} for n, p in paths.items()]}
    config_file, out_file = work / "config.json", work / "out.json"
    # the driver's log at INFO, its event log kept: both are searched for the secret
    config.update({"info_log": True, "event_log": str(work / "events")})
    (work / "events").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"PYTHONPATH": str(REPO), "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                "HIVE_BRIDGE_CACHE": str(work / "cache"), "HIVE_BRIDGE_SCAN_REPORTS": str(work / "reports"),
                "SPARK_LOCAL_IP": "127.0.0.1", "AWS_EC2_METADATA_DISABLED": "true"})
    for s3 in _with_s3(work, paths):
        config["s3"] = s3
        config_file.write_text(json.dumps(config))
        proc = subprocess.run([sys.executable, "-m", "tests.hive_bridge.spark.cluster_driver", str(config_file),
                               str(out_file)], cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
                              check=False)
        replay = ""
        if s3 is not None and proc.returncode == 0:   # the HTML report of the run's event log, tables on S3
            options = [f"access_key={s3['access_key']}", f"secret_key={s3['secret_key']}",
                       f"endpoint_override={s3['endpoint']}", "region=us-east-1"]
            done = subprocess.run([sys.executable, "-m", "hive_bridge", "replay", "--html", str(work / "report.html"),
                                   *(a for o in options for a in ("--storage-option", o)), str(work / "events")],
                                  cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
            replay = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert proc.returncode == 0, f"the cluster driver failed:\n{proc.stderr[-6000:]}"
    reports = "".join(p.read_text() for p in sorted((work / "reports").glob("scans.jsonl*")))
    yield Run(json.loads(out_file.read_text()), truth, paths, store, bad_log, corrupted, cluster.procs,
              proc.stdout, proc.stderr, reports, (s3 or {}).get("secret_key", ""), work, replay,
              cluster.logs.parent)


def test_a_cluster_session_without_a_store_is_refused_saying_what_to_set(run: Run) -> None:
    text = run.out["no_store"]
    assert "spark.hive_bridge.mergedStore" in text and "spark://127.0.0.1:" in text, text
    assert run.out["executors"] == 2


def test_merge_on_read_rows_are_the_truth(run: Run) -> None:
    got = run.out["tables"]["gen"]
    rows = {json.loads(r)["k"]: json.loads(r)["v"] for r in got[""]["rows"]}
    assert rows == run.truth
    lo = {json.loads(r)["k"]: json.loads(r)["v"] for r in got["k >= 30 AND k < 60"]["rows"]}
    assert lo == {k: v for k, v in run.truth.items() if 30 <= k < 60}
    neg = {json.loads(r)["k"] for r in got["v < 0"]["rows"]}
    assert neg == {k for k, v in run.truth.items() if v < 0} and len(neg) == GROUPS


def test_slices_are_merged_by_the_executors_into_the_store(run: Run) -> None:
    driver = run.out["driver_pid"]
    merged: dict[str, str] = {}
    for name in ("gen", MOR):
        for got in run.out["tables"][name].values():
            merged.update(got["writers"])
    gen_all = run.out["tables"]["gen"][""]
    assert len(gen_all["kept"]) == GROUPS and set(gen_all["kept"]) <= set(merged)   # every slice merged
    assert all(Path(p).is_file() and Path(p).is_relative_to(run.store) for p in merged)
    pids = {int(w.rsplit(":", 1)[1]) for w in merged.values()}
    assert pids and driver not in pids, (driver, pids)
    assert run.out["stats"]["driver"] == 0 and run.out["stats"]["jobs"] >= 1
    # a new relation over the same slices: the same files, no merge job
    assert sorted(run.out["again_kept"]) == sorted(gen_all["kept"]) and run.out["jobs_for_again"] == 0
    assert run.out["again_rows"] == gen_all["rows"]


def test_a_corrupted_log_file_fails_the_query_naming_its_slice(run: Run) -> None:
    text = run.out["corrupted"]
    file_id = run.bad_log.lstrip(".").split("_", 1)[0]
    assert f"hudi-hive {run.corrupted}" in text and f"cannot merge file slice /{file_id}" in text, text
    assert "refusing to return stale or missing rows" in text


@pytest.mark.parametrize("name", [MOR, COW, "gen"])
def test_queries_equal_the_same_queries_in_local_mode(run: Run, spark: Any, name: str) -> None:
    from pyspark.sql import functions as F

    from hive_bridge.spark import register

    register(spark)
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    df = spark.read.format("hudi-hive").load(run.paths[name])
    cols = sorted(c for c in df.columns if not c.startswith("_hoodie"))

    def rows(d: Any) -> list[str]:
        return sorted(r[0] for r in d.select(F.to_json(F.struct(*[F.col(f"`{c}`") for c in cols]))).collect())

    got = run.out["tables"][name]
    on_s3 = run.out.get("s3", {}).get("tables", {}).get(name)   # the same table on S3, merged store on S3
    assert got[""]["rows"] == rows(df) and got[""]["rows"]
    assert on_s3 is None or on_s3[""]["rows"] == got[""]["rows"]
    for q in FILTERS[name]:
        assert got[q]["rows"] == rows(df.where(q)), q
        assert on_s3 is None or on_s3[q]["rows"] == got[q]["rows"], q


def _s3(run: Run) -> dict[str, Any]:
    if "s3" not in run.out:
        pytest.skip("no S3 server (moto) or S3A connector jars here")
    return run.out["s3"]  # type: ignore[no-any-return]


def test_on_s3_merge_on_read_slices_are_merged_by_the_executors_into_the_s3_store(run: Run) -> None:
    s3 = _s3(run)
    gen = s3["tables"]["gen"][""]
    assert {json.loads(r)["k"]: json.loads(r)["v"] for r in gen["rows"]} == run.truth
    merged: dict[str, str] = {}
    for name in ("gen", MOR):
        for got in s3["tables"][name].values():
            merged.update(got["writers"])
            # base files read from the bucket, merged slices from the store on S3
            assert all(k.startswith((f"s3a://{S3_BUCKET}/warehouse/{name}/", f"s3a://{S3_BUCKET}/tmp/merged/"))
                       for k in got["kept"]), got["kept"]
    assert len(gen["kept"]) == GROUPS and set(gen["kept"]) <= set(merged)   # every slice merged
    assert all(p.startswith(f"s3a://{S3_BUCKET}/tmp/merged/") for p in merged)
    assert set(merged) <= set(s3["store_files"])   # the objects are in the bucket
    pids = {int(w.rsplit(":", 1)[1]) for w in merged.values()}
    assert pids and run.out["driver_pid"] not in pids, (run.out["driver_pid"], pids)
    assert s3["stats"]["driver"] == 0 and s3["stats"]["jobs"] >= 1
    # a new relation over the same slices reads the same objects of the store: no merge job
    assert sorted(s3["again"]["kept"]) == sorted(gen["kept"]) and s3["again"]["jobs"] == 0
    assert s3["again"]["rows"] == gen["rows"]


def test_on_s3_copy_on_write_base_files_are_read_from_the_bucket(run: Run) -> None:
    got = _s3(run)["tables"][COW]
    assert all(k.startswith(f"s3a://{S3_BUCKET}/warehouse/{COW}/") for q in got for k in got[q]["kept"])
    assert not any(got[q]["writers"] for q in got)


def _texts(folder: Path) -> str:
    """Every file's name and text under ``folder``."""
    return "".join(f"{p}\n{p.read_bytes().decode(errors='replace')}\n" for p in sorted(folder.rglob("*"))
                   if p.is_file())


def test_the_secret_in_the_hadoop_settings_is_shown_nowhere_by_the_cluster_run(run: Run) -> None:
    """The driver's stdout and stderr (Spark's log at INFO), the executors' logs, the event log, the HTML report
    made from it, the scan reports, the errors, the merged stores' paths (on S3 and local) and the local cache's
    keys and files: no piece of the secret."""
    s3 = _s3(run)
    secret = run.secret
    pieces = [secret, *(secret[i:i + 12] for i in range(0, len(secret) - 11, 6))]
    assert " INFO " in run.stderr and "DAGScheduler" in run.stderr   # Spark's log at INFO was captured
    executors = "".join(_texts(run.cluster_work / f"worker{i}") for i in range(2))
    assert "Executor" in executors   # the executors' own logs
    assert "SparkListenerSQLExecutionStart" in _texts(run.work / "events")   # the event log, as text
    html = (run.work / "report.html").read_text() if (run.work / "report.html").is_file() else ""
    assert html, run.replay
    for where, text in (("stdout", run.stdout), ("stderr", run.stderr), ("executors' logs", executors),
                        ("event log", _texts(run.work / "events")), ("HTML report", html),
                        ("replay's output", run.replay), ("scan reports", run.reports),
                        ("errors", run.out["no_store"] + run.out["corrupted"]),
                        ("the S3 store's objects", json.dumps(s3["store_files"])),
                        ("kept files", json.dumps(s3["tables"])), ("local cache and store", _texts(run.work / "cache")
                                                                   + _texts(run.store))):
        assert not [p for p in pieces if p in text], where
    assert run.reports.count("s3a://") >= len(FILTERS)   # the reports of the S3 scans were written


def test_the_cluster_processes_are_running_until_teardown(run: Run) -> None:
    assert all(p.poll() is None for p in run.procs)


def test_a_local_session_merges_by_a_job_into_the_local_cache(spark: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """No store set in local mode: the local cache folder, here filled by a merge job (the line at 0), its files
    known to the cache's bound; a line that is not a number is refused at register."""
    import pyarrow.parquet as pq

    from hive_bridge.spark import merge_job, pin_of, register
    from hive_bridge.spark.merged_cache import CACHE

    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    CACHE.clear()
    truth = _generated(tmp_path / "t")
    spark.conf.unset(merge_job.STORE_CONF)
    spark.conf.set(merge_job.DRIVER_MAX_CONF, "many")
    try:
        with pytest.raises(Exception, match=re.escape("spark.hive_bridge.mergeInDriverMax='many' is not a whole number")):
            register(spark)
        spark.conf.set(merge_job.DRIVER_MAX_CONF, "0")
        register(spark)
        assert merge_job.store().local_cache
        jobs = merge_job.STATS["jobs"]
        df = spark.read.format("hudi-hive").load(str(tmp_path / "t"))
        assert {int(r[0]): float(r[1]) for r in df.select("k", "v").collect()} == truth
        assert merge_job.STATS["jobs"] == jobs + 1
        pin = pin_of(df)
        assert pin is not None and len(pin.last_kept) == GROUPS
        for path in pin.last_kept:
            assert Path(path).is_relative_to(tmp_path / "cache" / "merged")
            writer = (pq.read_metadata(path).metadata or {})[merge_job.MERGED_BY_KEY.encode()].decode()
            assert int(writer.rsplit(":", 1)[1]) != os.getpid()   # a Python worker of the local session
        assert CACHE.total_bytes() == sum(Path(p).stat().st_size for p in pin.last_kept)
    finally:
        spark.conf.unset(merge_job.DRIVER_MAX_CONF)
        register(spark)
    assert merge_job.store().driver_max == merge_job.DRIVER_MAX_DEFAULT
