"""``hive-bridge serve``: one server per module (a subprocess, as users start it) over a lake folder of tables
written here (copy-on-write, merge-on-read with log files, partitioned) and over a Hudi table registered in a real
Hive metastore by Hudi-style Hive sync; real clients: pyhive and pyspark's own beeline. The settings and the
discovery are tested without Spark first."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive_bridge.app import serve
from hive_bridge.app.cli import main
from hive_bridge.testing.writer import HudiWriter, write_hudi_table

REPO = Path(__file__).resolve().parents[3]
KEYS = list(range(40))
#: the module server's users (--auth PASSWORD); each one's password is f"{user}-pw"
USERS = ("alice", "bob", "carol", "dave", *(f"user{i}" for i in range(8)))


def _password(user: str) -> str:
    return f"{user}-pw"


def _rows(keys: list[int], v: float = 1.0, ts: int = 0) -> pa.Table:
    return pa.table({"k": pa.array(keys, pa.int64()), "v": pa.array([v * k for k in keys]),
                     "p": pa.array(["a" if k < 20 else "b" for k in keys]),
                     "ts": pa.array([ts] * len(keys), pa.int64())})


def _lake(root: Path) -> dict[str, Any]:
    """cow (4 files of 10 keys), nested/mor (keys 1 and 21 moved by a log file), part (partitioned by p)."""
    write_hudi_table(root / "cow", _rows(KEYS), record_key_fields=("k",), rows_per_file=10)
    mor = HudiWriter(root / "nested" / "mor", record_key_fields=("k",), precombine_field="ts", rows_per_file=10,
                     table_type="MERGE_ON_READ")
    mor.insert(_rows(KEYS))
    mor.upsert(_rows([1, 21], v=-1.0, ts=1))
    write_hudi_table(root / "part", _rows(KEYS), record_key_fields=("k",), rows_per_file=10,
                     partition_fields=("p",))
    return {"mor": mor}


# ---------------------------------------------------------------------------------------- without Spark


def test_a_bind_beyond_loopback_needs_an_authentication_mode() -> None:
    for mode in serve.OPEN_MODES:
        with pytest.raises(serve.ServeError, match="--auth PASSWORD, LDAP or CUSTOM"):
            serve.check_bind("0.0.0.0", mode)
        serve.check_bind("127.0.0.1", mode)
        serve.check_bind("::1", mode)
    serve.check_bind("0.0.0.0", "LDAP")
    serve.check_bind("0.0.0.0", "PASSWORD")
    serve.check_bind("10.1.2.3", "custom")


def test_raw_path_sql_stays_off_whatever_the_conf() -> None:
    args = argparse.Namespace(bind="0.0.0.0")
    assert serve.session_settings(args, {})["spark.sql.runSQLOnFiles"] == "false"
    assert "spark.driver.bindAddress" not in serve.session_settings(args, {})  # the driver's RPC: loopback
    assert serve.session_settings(args, {})["spark.sql.filesourceTableRelationCacheSize"] == "0"
    with pytest.raises(serve.ServeError, match="runSQLOnFiles"):
        serve.session_settings(args, {"spark.sql.runSQLOnFiles": "true"})


def test_jdbc_urls_and_server_settings() -> None:
    assert serve.jdbc_url("127.0.0.1", 10001, "lake") == "jdbc:hive2://127.0.0.1:10001/lake"
    assert serve.jdbc_url("0.0.0.0", 1, http_path="/hs2/", auth="NOSASL") == \
        "jdbc:hive2://127.0.0.1:1/default;transportMode=http;httpPath=hs2;auth=noSasl"
    args = argparse.Namespace(bind="127.0.0.1", port=10005, http="web", auth="ldap")
    got = serve.server_settings(args)
    assert (got["hive.server2.transport.mode"], got["hive.server2.thrift.http.port"],
            got["hive.server2.thrift.http.path"], got["hive.server2.authentication"]) == ("http", "10005", "web",
                                                                                          "LDAP")


def test_a_lake_is_every_folder_holding_hoodie_below_it(tmp_path: Path) -> None:
    _lake(tmp_path / "Sales Lake")
    (tmp_path / "Sales Lake" / "notes").mkdir()
    assert serve.parse_lake(f"s={tmp_path}/x") == ("s", f"{tmp_path}/x")
    db, root = serve.parse_lake(str(tmp_path / "Sales Lake"))
    assert db == "sales_lake"
    found = serve.lake_tables(db, root)
    assert [(t.qualified, t.location) for t in found.tables] == [
        ("sales_lake.cow", f"{root}/cow"), ("sales_lake.part", f"{root}/part"),
        ("sales_lake.nested_mor", f"{root}/nested/mor")]
    assert found.skipped == []
    # a table itself given as the lake is refused with why; two folders of one name: the first one served
    assert "is itself a Hudi table" in serve.lake_tables("x", f"{root}/cow").skipped[0]
    write_hudi_table(tmp_path / "Sales Lake" / "nested_mor", _rows([1]), record_key_fields=("k",))
    again = serve.lake_tables(db, root)
    assert [t.name for t in again.tables].count("nested_mor") == 1
    assert any("not served" in why and "nested_mor" in why for why in again.skipped)


def test_check_prints_what_would_be_served_and_refuses_an_open_bind(tmp_path: Path) -> None:
    _lake(tmp_path / "lake")
    out, err = io.StringIO(), io.StringIO()
    assert main(["serve", "--lake", f"books={tmp_path / 'lake'}", "--port", "10099", "--check"], out, err) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].split()[:2] == ["books.cow", "snapshot"]
    assert lines[-1] == "3 tables; endpoint jdbc:hive2://127.0.0.1:10099/default"
    out, err = io.StringIO(), io.StringIO()
    assert main(["serve", "--lake", str(tmp_path / "lake"), "--bind", "0.0.0.0"], out, err) == 2
    assert "--auth PASSWORD, LDAP or CUSTOM" in err.getvalue() and "Traceback" not in err.getvalue()


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=30).filter(lambda t: "\n" not in t and "\r" not in t))
def test_a_password_line_is_a_salted_pbkdf2_hash_python_can_check(password: str) -> None:
    import base64
    import hashlib

    line = serve.password_line("alice", password, iterations=50)
    user, _, stored = line.rpartition(":")
    scheme, iterations, salt, digest = stored.split("$")
    assert (user, scheme, iterations) == ("alice", "pbkdf2-sha256", "50")
    assert base64.b64decode(digest) == hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), 50)
    assert serve.password_line("alice", password, iterations=50) != line  # a fresh salt each time


def test_hash_password_writes_a_line_and_a_bad_password_file_is_named_with_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("correct horse\n"))
    out, err = io.StringIO(), io.StringIO()
    assert main(["serve", "--hash-password", "erin"], out, err) == 0, err.getvalue()
    line = out.getvalue().strip()
    assert line.startswith(f"erin:pbkdf2-sha256${serve.PASSWORD_ITERATIONS}$") and "correct horse" not in line
    good = tmp_path / "users"
    good.write_text(f"# users\n{line}\n\n")
    assert serve.check_password_file(str(good)) == 1
    bad = tmp_path / "bad"
    bad.write_text(f"{line}\nmallory:hunter2\n")
    for argv, want in ([["--auth", "PASSWORD", "--password-file", str(bad)], f"{bad}, line 2: not of the form"],
                       [["--auth", "PASSWORD"], "--auth PASSWORD needs --password-file"],
                       [["--password-file", str(good)], "read by --auth PASSWORD only"]):
        out, err = io.StringIO(), io.StringIO()
        assert main(["serve", "--lake", str(tmp_path), "--check", *argv], out, err) == 2
        assert want in err.getvalue() and "hunter2" not in err.getvalue() and "Traceback" not in err.getvalue()
    args = argparse.Namespace(bind="0.0.0.0", port=1, http=None, auth="PASSWORD")
    got = serve.server_settings(args)
    assert (got["hive.server2.authentication"], got[serve.CUSTOM_CLASS]) == ("CUSTOM", serve.PASSWORD_PROVIDER)


def test_replay_reports_a_serve_scan_line_it_cannot_read(tmp_path: Path) -> None:
    from hive_bridge.workload.eventlog import Problem
    from hive_bridge.workload.textlogs import file_occurrences

    problems: list[Problem] = []
    lines = ['{"event": "hive-bridge-serve-scan", "time": "t"}',
             '{"event": "hive-bridge-serve-scan", "statement_id": "s1", "path": "/t", "sarg": null, '
             '"files_kept": 2, "bytes_kept": 10}']
    got = list(file_occurrences("scans.jsonl", lines, problems=problems))
    assert [(o.query, o.locations, o.hiveql, o.spark_files) for o in got] == [("s1", ["/t"], None, 2)]
    assert problems and problems[0].line == 1 and "path" in str(problems[0])


# ---------------------------------------------------------------------------------------- one server


@dataclass
class Served:
    port: int
    lake: Path
    proc: subprocess.Popen[str]
    out: list[str]
    scan_log: Path
    metastore: str
    hms_table: Path
    ui_port: int


def _pump(stream: Any, into: list[str]) -> None:
    for line in stream:
        into.append(line.rstrip("\n"))


def _plain_table(client: Any, db: str, name: str, where: Path) -> None:
    """A text table (not Hudi) in the metastore: never served."""
    from hmsclient.genthrift.hive_metastore import ttypes

    where.mkdir(parents=True)
    sd = ttypes.StorageDescriptor(
        cols=[ttypes.FieldSchema("a", "int", "")], location=where.as_uri(),
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", compressed=False,
        numBuckets=-1, serdeInfo=ttypes.SerDeInfo(name=None, parameters={},
                                                  serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
        bucketCols=[], sortCols=[], parameters={}, storedAsSubDirectories=False)
    client._client.create_table(ttypes.Table(tableName=name, dbName=db, owner="test", createTime=0,
                                             lastAccessTime=0, retention=0, sd=sd, partitionKeys=[],
                                             parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    pytest.importorskip("pyhive.hive")
    from hive_bridge.hive import MetastoreClient
    from hive_bridge.testing import servers

    found = servers.find_java()
    if found is None or found[1] is None:
        pytest.skip("serve needs Java 17+ with javac")
    work = tmp_path_factory.mktemp("serve")
    lake = work / "lake"
    _lake(lake)
    hms_table = work / "registered" / "trips"
    trips = HudiWriter(hms_table, record_key_fields=("k",), precombine_field="ts", rows_per_file=10,
                       table_type="MERGE_ON_READ", table_name="trips")
    trips.insert(_rows(KEYS))
    trips.upsert(_rows([5], v=-1.0, ts=1))
    with contextlib.ExitStack() as stack:
        hms = stack.enter_context(servers.start_metastore(work / "metastore", timeout=300))
        with MetastoreClient(hms.uri) as client:
            client.create_database("hmsdb")
            client.sync_hudi_table(str(hms_table), "hmsdb", "trips")
            _plain_table(client, "hmsdb", "plain", work / "plain")
        port, ui_port = servers.free_port(), servers.free_port()
        env = dict(os.environ, PYTHONPATH=str(REPO), HIVE_BRIDGE_SCAN_REPORTS=str(work / "reports"),
                   PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
        scan_log = work / "served.jsonl"
        users = work / "users"  # few iterations: every connection of the module logs in
        users.write_text("".join(serve.password_line(u, _password(u), iterations=1000) + "\n" for u in USERS))
        proc = subprocess.Popen(
            [sys.executable, "-m", "hive_bridge", "serve", "--lake", f"lake={lake}", "--metastore", hms.uri,
             "--port", str(port), "--refresh-seconds", "1", "--scan-log", str(scan_log),
             "--auth", "PASSWORD", "--password-file", str(users),
             "--conf", "spark.sql.shuffle.partitions=2",
             # Spark's status API (the driver's REST API) tells the tests which jobs run
             "--conf", "spark.ui.enabled=true", "--conf", f"spark.ui.port={ui_port}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=work)
        out: list[str] = []
        for stream in (proc.stdout, proc.stderr):
            threading.Thread(target=_pump, args=(stream, out), daemon=True).start()
        stack.callback(lambda: proc.poll() is None and proc.kill())
        deadline = time.monotonic() + 600
        while not any(line.startswith("serving ") for line in out):
            assert proc.poll() is None, "\n".join(out[-40:])
            assert time.monotonic() < deadline, "\n".join(out[-40:])
            time.sleep(1)
        yield Served(port, lake, proc, out, scan_log, hms.uri, hms_table, ui_port)


def _cursor(served: Served, user: str = "alice", database: str = "lake", password: str | None = None) -> Any:
    from pyhive import hive

    return hive.connect(host="127.0.0.1", port=served.port, username=user, database=database, auth="CUSTOM",
                        password=_password(user) if password is None else password).cursor()


def _beeline(served: Served, user: str, password: str, sql: str) -> subprocess.CompletedProcess[str]:
    from hive_bridge.testing import servers

    beeline = servers.pyspark_home() / "bin" / "beeline"
    return subprocess.run([str(beeline), "-u", f"jdbc:hive2://127.0.0.1:{served.port}/lake", "-n", user,
                           "-p", password, "--silent=true", "--outputformat=csv2", "-e", sql],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, SPARK_HOME=""))


def _query(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return [tuple(r) for r in cursor.fetchall()]


@pytest.mark.spark
@pytest.mark.integration
def test_startup_prints_the_jdbc_url_and_every_table(served: Served) -> None:
    assert f"serving 6 tables at jdbc:hive2://127.0.0.1:{served.port}/default" in served.out
    c = _cursor(served)
    assert sorted(r[1] for r in _query(c, "SHOW TABLES IN lake")) == ["cow", "nested_mor", "part"]
    assert sorted(r[1] for r in _query(c, "SHOW TABLES IN hmsdb")) == ["trips", "trips_ro", "trips_rt"]
    why = [line for line in served.out if "hmsdb.plain" in line]
    assert why == ["hive-bridge serve: hmsdb.plain: not served: not a Hudi table (input format "
                   "org.apache.hadoop.mapred.TextInputFormat, spark.sql.sources.provider=unset)"]


@pytest.mark.spark
@pytest.mark.integration
def test_rows_are_the_latest_files_rows_pruned_per_scan(served: Served) -> None:
    c = _cursor(served)
    assert _query(c, "SELECT k, v FROM cow WHERE k BETWEEN 12 AND 14 ORDER BY k") == [(12, 12.0), (13, 13.0),
                                                                                      (14, 14.0)]
    merged = dict(_query(c, "SELECT k, v FROM nested_mor"))
    assert merged == {k: (-float(k) if k in (1, 21) else float(k)) for k in KEYS}
    assert _query(c, "SELECT p, count(*), sum(k) FROM part WHERE p = 'b' GROUP BY p") == [("b", 20, sum(KEYS[20:]))]
    # a join and a CTE over two tables, as Spark computes them
    assert _query(c, "WITH m AS (SELECT k, v FROM nested_mor WHERE v < 0) "
                     "SELECT m.k, c.v FROM m JOIN cow c ON m.k = c.k ORDER BY m.k") == [(1, 1.0), (21, 21.0)]


@pytest.mark.spark
@pytest.mark.integration
def test_metastore_tables_read_as_hive_sync_registered_them(served: Served) -> None:
    c = _cursor(served, database="hmsdb")
    assert _query(c, "SELECT v FROM trips_rt WHERE k = 5") == [(-5.0,)]
    assert _query(c, "SELECT v FROM trips WHERE k = 5") == [(-5.0,)]
    assert _query(c, "SELECT v FROM trips_ro WHERE k = 5") == [(5.0,)]  # base files only


@pytest.mark.spark
@pytest.mark.integration
def test_beeline_from_pyspark_reads_the_served_tables(served: Served) -> None:
    done = _beeline(served, "bob", _password("bob"), "SELECT k, v FROM nested_mor WHERE k < 3 ORDER BY k")
    assert done.returncode == 0, done.stderr[-2000:]
    prompt = f"0: jdbc:hive2://127.0.0.1:{served.port}/lake> "
    lines = [line.removeprefix(prompt) for line in done.stdout.splitlines()]
    assert [line for line in lines if line.strip() and not line.startswith(prompt.strip())] == \
        ["k,v", "0,0.0", "1,-1.0", "2,2.0"]


@pytest.mark.spark
@pytest.mark.integration
def test_a_commit_and_a_new_table_are_seen_without_restart_on_an_open_connection(served: Served) -> None:
    c = _cursor(served, user="carol")
    assert _query(c, "SELECT count(*) FROM cow") == [(40,)]
    HudiWriter(served.lake / "cow", record_key_fields=("k",), rows_per_file=10).insert(_rows([100, 101]))
    assert _query(c, "SELECT count(*) FROM cow") == [(42,)]
    write_hudi_table(served.lake / "late", _rows([7]), record_key_fields=("k",))
    deadline = time.monotonic() + 120
    while ("lake", "late", False) not in _query(c, "SHOW TABLES IN lake"):
        assert time.monotonic() < deadline, "the new table was never served"
        time.sleep(0.5)
    assert _query(c, "SELECT k FROM late") == [(7,)]


@pytest.mark.spark
@pytest.mark.integration
def test_eight_concurrent_sessions_get_their_own_rows(served: Served) -> None:
    def one(i: int) -> list[tuple[Any, ...]]:
        c = _cursor(served, user=f"user{i}")
        return _query(c, f"SELECT k, v FROM part WHERE k = {i * 4}")

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(one, range(8)))
    assert got == [[(i * 4, float(i * 4))] for i in range(8)]


@pytest.mark.spark
@pytest.mark.integration
def test_a_bad_query_gets_its_message_and_sqlstate_and_the_server_goes_on(served: Served) -> None:
    from pyhive.exc import OperationalError

    c = _cursor(served)
    with pytest.raises(OperationalError) as bad:
        c.execute("SELECT nope FROM cow")
    status = bad.value.args[0].status
    assert status.sqlState == "42703" and "UNRESOLVED_COLUMN" in status.errorMessage
    # the message and SQLSTATE only: Hive's encoded stack trace (infoMessages) is not sent, the log keeps it
    assert not status.infoMessages and "at org.apache" not in status.errorMessage
    deadline = time.monotonic() + 30
    while not any("UNRESOLVED_COLUMN" in line for line in served.out) and time.monotonic() < deadline:
        time.sleep(0.2)
    logged = served.out[next(i for i, line in enumerate(served.out) if "UNRESOLVED_COLUMN" in line):]
    assert any(line.startswith("\tat org.apache.spark.") for line in logged)
    with pytest.raises(OperationalError) as raw:
        c.execute(f"SELECT * FROM parquet.`{served.lake}/cow`")  # SQL on the driver's files: off
    assert "TABLE_OR_VIEW_NOT_FOUND" in raw.value.args[0].status.errorMessage
    assert _query(c, "SELECT count(*) FROM part") == [(40,)]


@pytest.mark.spark
@pytest.mark.integration
def test_beeline_gets_no_server_stack_trace_even_verbose(served: Served) -> None:
    """beeline runs statements asynchronously: the error comes with the operation's status, cut before its
    first stack frame."""
    from hive_bridge.testing import servers

    beeline = servers.pyspark_home() / "bin" / "beeline"
    done = subprocess.run([str(beeline), "-u", f"jdbc:hive2://127.0.0.1:{served.port}/lake", "-n", "bob",
                           "-p", _password("bob"), "--verbose=true", "-e", "SELECT nope FROM cow"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, SPARK_HOME=""))
    assert done.returncode != 0 and "UNRESOLVED_COLUMN" in done.stderr, done.stderr[-2000:]
    assert "42703" in done.stderr
    # beeline prints its own (client) frames with --verbose; none of the server's
    assert "at org.apache.spark" not in done.stderr and "at org.apache.hive.service" not in done.stderr


def _jobs(served: Served) -> list[dict[str, Any]]:
    """The driver's jobs, from Spark's status API (the REST API of its UI; its first answers can be slow on a
    busy machine: asked again)."""
    import urllib.request

    base = f"http://127.0.0.1:{served.ui_port}/api/v1/applications"
    for attempt in range(6):
        try:
            with urllib.request.urlopen(base, timeout=30) as r:
                app = json.load(r)[0]["id"]
            with urllib.request.urlopen(f"{base}/{app}/jobs", timeout=30) as r:
                return list(json.load(r))
        except OSError:
            if attempt == 5:
                raise
            time.sleep(1)
    raise AssertionError("unreachable")


#: a pyhive client in a process of its own: a statement that runs far longer than any test waits
_SLOW_CLIENT = """
import sys
from pyhive import hive
c = hive.connect(host="127.0.0.1", port=int(sys.argv[1]), username="user6", password="user6-pw",
                 database="lake", auth="CUSTOM").cursor()
c.execute("SELECT count(*) FROM cow CROSS JOIN range(0, 100000000000) AS slow_client_marker")
print(c.fetchall())
"""


@pytest.mark.spark
@pytest.mark.integration
def test_a_client_killed_mid_query_frees_its_work(served: Served) -> None:
    client = subprocess.Popen([sys.executable, "-c", _SLOW_CLIENT, str(served.port)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        mine: list[dict[str, Any]] = []
        while not mine:
            assert client.poll() is None, client.communicate()
            assert time.monotonic() < deadline, "the client's statement never started a job"
            time.sleep(0.5)
            mine = [j for j in _jobs(served) if j["status"] == "RUNNING"
                    and "slow_client_marker" in str(j.get("description", ""))]
        time.sleep(2)  # well inside the statement: 40 x 10^11 rows
    finally:
        client.kill()  # SIGKILL: the client cannot say goodbye
        client.wait(timeout=30)
    killed = time.monotonic()
    job = mine[0]["jobId"]
    deadline = killed + 30  # the statement alone would run for hours
    while True:
        state = next(j["status"] for j in _jobs(served) if j["jobId"] == job)
        if state != "RUNNING":
            break
        assert time.monotonic() < deadline, "the killed client's job still runs"
        time.sleep(0.2)
    print(f"job {job} of the killed client ended ({state}) {time.monotonic() - killed:.1f} s after the kill")
    assert state in ("FAILED", "UNKNOWN")  # cancelled: Spark's status API calls a cancelled job FAILED
    assert _query(_cursor(served, user="user6"), "SELECT count(*) FROM part") == [(40,)]  # and serving goes on


@pytest.mark.spark
@pytest.mark.integration
def test_a_table_whose_files_cannot_be_read_fails_that_query_only(served: Served) -> None:
    from pyhive.exc import OperationalError

    write_hudi_table(served.lake / "broken", _rows(KEYS), record_key_fields=("k",), rows_per_file=10)
    c = _cursor(served, user="carol")
    deadline = time.monotonic() + 120
    while ("lake", "broken", False) not in _query(c, "SHOW TABLES IN lake"):
        assert time.monotonic() < deadline, "the table was never served"
        time.sleep(0.5)
    assert _query(c, "SELECT count(*) FROM broken") == [(40,)]
    victim = sorted((served.lake / "broken").glob("*.parquet"))[0]
    victim.write_bytes(b"not a parquet file\n" * 64)  # a base file overwritten: unreadable
    with pytest.raises(OperationalError) as bad:
        c.execute("SELECT count(*) FROM broken")
    message = bad.value.args[0].status.errorMessage
    assert victim.name in message and "\tat " not in message and "Traceback" not in message
    # the same connection goes on, on the other tables
    assert _query(c, "SELECT count(*) FROM part") == [(40,)]
    assert _query(c, "SELECT k FROM cow WHERE k = 3") == [(3,)]


@pytest.mark.spark
@pytest.mark.integration
def test_each_scan_is_logged_with_its_statement_and_replay_reads_the_log(served: Served) -> None:
    c = _cursor(served, user="dave")
    _query(c, "SELECT k FROM cow WHERE k = 33")
    deadline = time.monotonic() + 60
    mine: list[dict[str, Any]] = []
    while not mine:
        assert time.monotonic() < deadline, "no scan-log line for dave's query"
        lines = [json.loads(x) for x in served.scan_log.read_text().splitlines()]
        mine = [x for x in lines if x["user"] == "dave"]
        time.sleep(0.2)
    line = mine[-1]
    assert line["tables"] == ["lake.cow"] and line["statement_id"] and line["session"]
    assert "EQUALS k 33" in line["sarg"] and line["files_kept"] < line["files_total"]
    assert 0 < line["bytes_kept"] < line["bytes_total"] and line["time"].endswith("+00:00")
    out, err = io.StringIO(), io.StringIO()
    assert main(["replay", str(served.scan_log), "--json"], out, err) == 0, err.getvalue()
    records = [json.loads(x) for x in out.getvalue().splitlines()]
    cow = [r for r in records if str(r.get("table", "")).endswith("/cow") and r.get("sarg")
           and "33" in r["sarg"]]
    assert cow and cow[0]["files_kept"] == line["files_kept"]


@pytest.mark.spark
@pytest.mark.integration
def test_a_wrong_password_and_an_unknown_user_are_refused(served: Served) -> None:
    for user, password in (("alice", "wrongpass"), ("mallory", "wrongpass"), ("alice", _password("bob"))):
        with pytest.raises(Exception) as refused:
            _query(_cursor(served, user=user, password=password), "SELECT count(*) FROM cow")
        assert "count" not in str(refused.value)  # refused at the login, not by the statement
    done = _beeline(served, "mallory", "wrongpass", "SELECT count(*) FROM cow")
    assert done.returncode != 0 and "40" not in done.stdout
    assert "Error validating the login" in done.stderr or "Could not open client transport" in done.stderr
    assert _query(_cursor(served, user="bob"), "SELECT count(*) FROM part") == [(40,)]  # the right one gets in


@pytest.mark.spark
@pytest.mark.integration
def test_sigterm_stops_the_server(served: Served) -> None:
    """Last: the module's server is stopped by the signal a service manager sends, a statement running."""
    from pyhive.exc import OperationalError

    c = _cursor(served, user="bob")
    outcome: list[Any] = []

    def slow() -> None:  # far more rows than the test waits for
        try:
            outcome.append(_query(c, "SELECT count(*) FROM cow CROSS JOIN range(0, 100000000000)"))
        except Exception as exc:
            outcome.append(exc)

    runner = threading.Thread(target=slow, daemon=True)
    runner.start()
    deadline = time.monotonic() + 120
    while not any("cow" in line for line in served.scan_log.read_text().splitlines()[-3:]) \
            and time.monotonic() < deadline:
        time.sleep(0.2)  # the statement has planned its scan
    time.sleep(1)
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(timeout=60) == 0
    deadline = time.monotonic() + 10
    while "stopped" not in served.out and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "stopped" in served.out
    runner.join(timeout=60)
    assert outcome and not isinstance(outcome[0], list), outcome  # the running statement was ended, not answered
    assert isinstance(outcome[0], (OperationalError, OSError)) or "TTransport" in type(outcome[0]).__name__
    # no password, right or wrong, in what the server printed or logged
    logged = "\n".join(served.out) + served.scan_log.read_text()
    for secret in ("wrongpass", *(_password(u) for u in USERS)):
        assert secret not in logged
