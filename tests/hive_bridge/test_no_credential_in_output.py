"""No credential in any output of hive-bridge, end to end: every command run as the real program (a subprocess)
against a Hudi table on a local S3 server (moto, :mod:`tests.hive_bridge.s3_server`) named by a URI whose user
info holds the credentials (a secret key with ``/``, ``+``, ``@``, ``=`` and ``%2F``), succeeding and failing; an
event log whose scans' locations hold user info; credentials given as storage options. Standard output, standard
error, the HTML pages and JSON written, the scan reports, the local cache (folder names and file contents) and the
bucket's objects are searched for every piece of the secrets: none may be there."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from tests.hive_bridge.s3_server import S3Server, free_port
from tests.hive_bridge.workload.conftest import write_shared_log_table

pytest.importorskip("moto")
pytest.importorskip("boto3")

ROOT = Path(__file__).resolve().parents[2]
EVENT_LOG = Path(os.environ.get("HIVE_BRIDGE_WORKLOAD_LOGS", "/work/shared/data/workload-logs")) \
    / "spark-eventlogs" / "3.5.8" / "evlog" / "local-1795748232830"
BUCKET = "lake"
ACCESS_KEY = "AKIATESTKEYID0001"
#: in the table URI: '/', '+', '@', '=' and an URL-encoded '/' (URL-decoded, it is the secret key used)
URI_SECRET = "Zx9/Kq+Wm@Lt=Pv%2FRb7Hs"
#: given as --storage-option values
OPTION_SECRET = "Qw3/Er+Ty=Ui%2FOpAs"
TOKEN_SECRET = "IQoJb3JpZ2luX2VjE/Df+Gh=="
#: in an https:// and a thrift:// URI
PASSWORD = "Pa55/w0rd+Mx"
TABLE_PATH = f"{BUCKET}/warehouse/t"
URI = f"s3://{ACCESS_KEY}:{URI_SECRET}@{TABLE_PATH}"


def _fragments(*secrets: str) -> list[str]:
    """Every secret as given and URL-decoded, and each of its pieces between separators (3+ characters): a
    secret shown in part is shown."""
    out: set[str] = set()
    for secret in secrets:
        for form in (secret, unquote(secret)):
            out.add(form)
            for sep in "/+=@%":
                form = form.replace(sep, " ")
            out.update(p for p in form.split() if len(p) >= 3 and p not in ("2F",))
    return sorted(out)


FRAGMENTS = _fragments(URI_SECRET, OPTION_SECRET, TOKEN_SECRET, PASSWORD)


@dataclass
class World:
    s3: S3Server
    tmp: Path
    events: Path        # event logs whose scans' locations hold user info
    filters: Path       # a text file of filters, one a line
    env: dict[str, str]

    @property
    def options(self) -> list[str]:
        return ["--storage-option", f"endpoint_override={self.s3.endpoint}", "--storage-option", "region=us-east-1",
                "--storage-option", "request_timeout=60", "--storage-option", "connect_timeout=30"]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    if not EVENT_LOG.is_file():
        pytest.skip(f"shared event log not found: {EVENT_LOG}")
    tmp = tmp_path_factory.mktemp("no-credential")
    table = write_shared_log_table(tmp / "t")
    events = tmp / "events"
    events.mkdir()
    # the real log's scans read file:/data/lake/…: here they read the table through a URI holding credentials
    (events / "app-1").write_text(EVENT_LOG.read_text().replace(
        "file:/data/lake/", f"s3a://{ACCESS_KEY}:{URI_SECRET}@{BUCKET}/warehouse/"))
    filters = tmp / "filters.txt"
    filters.write_text("id > 10\nname = 'n5'\ndt = '2024-01-02' and price < 20\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(PYTHONPATH=str(ROOT), AWS_EC2_METADATA_DISABLED="true", HIVE_BRIDGE_CACHE=str(tmp / "cache"),
               HIVE_BRIDGE_SCAN_REPORTS=str(tmp / "reports"))
    with S3Server() as s3:
        s3.upload_folder(table, BUCKET, "warehouse/t")
        yield World(s3, tmp, events, filters, env)


@dataclass
class Run:
    code: int
    out: str
    err: str


def _hive_bridge(world: World, *args: str, timeout: float = 300) -> Run:
    proc = subprocess.run([sys.executable, "-m", "hive_bridge", *args], env=world.env, capture_output=True,
                          text=True, timeout=timeout, cwd=world.tmp)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _leaks(text: str) -> list[str]:
    return [f for f in FRAGMENTS if f in text]


def _assert_no_leak(world: World, run: Run, *written: Path) -> None:
    """Nothing printed, nothing written (files named, the cache, the scan reports, the bucket) holds a secret."""
    assert not _leaks(run.out), f"stdout shows {_leaks(run.out)}:\n{run.out[-3000:]}"
    assert not _leaks(run.err), f"stderr shows {_leaks(run.err)}:\n{run.err[-3000:]}"
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert not _leaks(text), f"{path} holds {_leaks(text)}"
    for folder in (world.tmp / "cache", world.tmp / "reports"):
        for path in folder.rglob("*") if folder.is_dir() else ():
            assert not _leaks(str(path.relative_to(folder))), f"a cache path holds a secret: {path}"
            if path.is_file():
                data = path.read_bytes()
                assert not [f for f in FRAGMENTS if f.encode() in data], f"{path} holds a secret"
    client = world.s3.client()
    for obj in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        assert not _leaks(obj["Key"]), obj["Key"]
        data = client.get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read()
        assert not [f for f in FRAGMENTS if f.encode() in data], f"s3://{BUCKET}/{obj['Key']} holds a secret"


# ----------------------------------------------------------------------------------- commands that succeed


SUCCEEDING = {
    "explain": ["explain", "--table", URI, "id > 10"],
    "explain --json": ["explain", "--table", URI, "--json", "id > 10"],
    "index": ["index", "--table", URI],
    "replay filters": ["replay", "--table", URI, "{filters}"],
    "replay filters --json": ["replay", "--table", URI, "--json", "{filters}"],
    "replay event log": ["replay", "--table", URI, "{events}"],
    "replay event log --json --html": ["replay", "--table", URI, "--json", "--html", "{html}", "{events}"],
    "advise": ["advise", "--table", URI, "{events}"],
    "advise --json --html": ["advise", "--table", URI, "--json", "--html", "{html}", "{events}"],
}


@pytest.mark.parametrize("name", list(SUCCEEDING))
def test_command_on_s3_with_credentials_in_the_uri(world: World, name: str) -> None:
    html = world.tmp / f"{name.replace(' ', '_')}.html"
    args = [a.format(filters=world.filters, events=world.events, html=html) for a in SUCCEEDING[name]]
    run = _hive_bridge(world, *args, *world.options)
    assert run.code == 0, run.err
    _assert_no_leak(world, run, *([html] if "--html" in args else []))
    shown = run.out + run.err + (html.read_text() if html.is_file() else "")
    assert f"s3://{TABLE_PATH}" in shown or name.startswith(("explain", "index", "replay filters")), shown[-2000:]
    assert run.out.strip()


@pytest.mark.spark
def test_read_on_s3_with_credentials_in_the_uri(world: World) -> None:
    run = _hive_bridge(world, "read", "--table", URI, "--filter", "id > 10", *world.options, timeout=600)
    assert run.code == 0, run.err
    assert "read " in run.err and "pyarrow.fs in Spark's Python workers" in run.err
    _assert_no_leak(world, run)


@pytest.mark.spark
def test_data_source_scan_report_holds_no_credential(spark: Any, world: World) -> None:
    """The ``hudi-hive-python`` data source loaded with the URI itself: its scan report (written by the Python
    worker that plans the scan) names the table without the credentials, and is found by the URI."""
    from hive_bridge.spark import PYTHON_SOURCE, last_scan_report, register
    from hive_bridge.spark.reports import report_file

    register(spark)
    reader = spark.read.format(PYTHON_SOURCE)
    for value in world.options[1::2]:       # the --storage-option values, as data source options
        name, _, setting = value.partition("=")
        reader = reader.option(f"storage.{name}", setting)
    assert reader.load(URI).count() == 50
    report = last_scan_report(URI)
    assert report is not None and report["path"] == f"s3://{TABLE_PATH}" and report["storage"] == "s3"
    for name in (report_file(), report_file() + ".1"):
        text = Path(name).read_text() if os.path.isfile(name) else ""
        assert not _leaks(text), f"{name} holds {_leaks(text)}"


# -------------------------------------------------------------------------------------- commands that fail


def _failing() -> dict[str, list[str]]:
    closed = f"http://127.0.0.1:{free_port()}"      # nothing listens there: every request fails at once
    at_closed = ["--storage-option", f"endpoint_override={closed}", "--storage-option", "connect_timeout=1",
                 "--storage-option", "request_timeout=1"]
    as_options = ["--storage-option", f"access_key={ACCESS_KEY}", "--storage-option", f"secret_key={OPTION_SECRET}",
                  "--storage-option", f"session_token={TOKEN_SECRET}"]
    plain = f"s3://{TABLE_PATH}"
    return {
        "explain": ["explain", "--table", URI, "id > 10", *at_closed],
        "index": ["index", "--table", URI, *at_closed],
        "read": ["read", "--table", URI, "--filter", "id > 10", *at_closed],
        "replay --json --html": ["replay", "--table", URI, "--json", "--html", "{html}", "{events}", *at_closed],
        "advise --json --html": ["advise", "--table", URI, "--json", "--html", "{html}", "{events}", *at_closed],
        "explain, options": ["explain", "--table", plain, "id > 10", *at_closed, *as_options],
        "replay, options": ["replay", "--table", plain, "--json", "{filters}", *at_closed, *as_options],
        "unknown option": ["explain", "--table", plain, "id > 10", "--storage-option",
                           f"secret_access_key={OPTION_SECRET}"],
        "option without key": ["explain", "--table", plain, "id > 10", "--storage-option", OPTION_SECRET],
        "option not a boolean": ["explain", "--table", plain, "id > 10", "--storage-option",
                                 f"anonymous={OPTION_SECRET}"],
        "https": ["explain", "--table", f"https://user:{PASSWORD}@127.0.0.1:1/t", "id > 10"],
        "metastore": ["read", "--metastore", f"thrift://hive:{PASSWORD}@127.0.0.1:{free_port()}", "--table",
                      "db.t"],
        "no such command": ["explian", "--table", URI],
        "unrecognized argument": ["explain", "--table", plain, "id > 10", f"--secret-key={OPTION_SECRET}"],
    }


FAILING = _failing()


@pytest.mark.parametrize("name", list(FAILING))
def test_failing_command_shows_no_credential(world: World, name: str) -> None:
    html = world.tmp / f"failing-{name.replace(' ', '_').replace(',', '')}.html"
    args = [a.format(filters=world.filters, events=world.events, html=html) for a in FAILING[name]]
    run = _hive_bridge(world, *args)
    assert run.code != 0 or name.startswith(("replay", "advise")), run.out + run.err
    assert run.err.strip(), "a failure says why"
    _assert_no_leak(world, run, *([html] if html.is_file() else []))
    if name in ("explain", "index", "read", "explain, options"):
        assert f"s3://{TABLE_PATH}" in run.err   # the table is still named, without its credentials
    if name == "metastore":
        assert "cannot reach the Hive Metastore at thrift://127.0.0.1:" in run.err


# ------------------------------------------------------------------------- scans whose location has user info


@pytest.mark.parametrize("command", ["replay", "advise"])
def test_unresolved_scan_locations_show_no_user_info(world: World, command: str) -> None:
    html = world.tmp / f"unresolved-{command}.html"
    run = _hive_bridge(world, command, "--json", "--html", str(html), str(world.events))
    _assert_no_leak(world, run, html)
    if command == "replay":
        assert run.code == 0, run.err
        assert f"s3a://{BUCKET}/warehouse/3.5.8_plain/data/t" in run.out    # listed, without its user info
        assert f"s3a://{BUCKET}/warehouse/3.5.8_plain/data/t" in html.read_text()
