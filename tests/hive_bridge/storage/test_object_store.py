"""Hudi tables on object storage: a real S3-compatible server (moto's server mode) on 127.0.0.1, fixture tables
uploaded there, listed, indexed, replayed, explained and read with the same results as their local copies; a
bucket that refuses writes; an object deleted between listing and reading; requests counted (the Storage
counter is compared with what the server saw)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import sarg
from hive_bridge.app.cli import main as cli_main
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning.pruner import plan_slices
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.storage.core import Storage, StorageError, parse_storage_options
from hive_bridge.table.table import HudiTable
from tests.conftest import SHARED_TABLES
from tests.hive_bridge.s3_server import S3Server

pytest.importorskip("moto")
pytest.importorskip("boto3")

MOR = "sample_table.mor.avro.v9_txns_simple_meta"   # merge-on-read, partitioned, with a metadata table
COW = "sample_table.cow.v9_txns_simple_meta"         # copy-on-write, partitioned, with a metadata table
BUCKET = "hive-bridge-tables"
CREDENTIALS = {"access_key": "test", "secret_key": "test", "region": "us-east-1"}


def _unzip(name: str, dest: Path) -> Path:
    with zipfile.ZipFile(SHARED_TABLES / f"{name}.zip") as zf:
        zf.extractall(dest, [m for m in zf.namelist() if not m.startswith("__MACOSX/") and "/._" not in m])
    (root,) = [p.parent.parent for p in dest.glob("*/.hoodie/hoodie.properties")]
    return root


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    with S3Server() as server:
        yield server


@pytest.fixture(scope="module")
def tables(s3: S3Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """name -> (local copy, its URI on the server)."""
    if not (SHARED_TABLES / f"{MOR}.zip").is_file():
        pytest.skip(f"shared Hudi tables not found in {SHARED_TABLES}")
    out = {}
    for name in (MOR, COW):
        local = _unzip(name, tmp_path_factory.mktemp(name))
        s3.upload_folder(local, BUCKET, f"warehouse/{name}")
        out[name] = (local, f"s3://{BUCKET}/warehouse/{name}")
    return out


def _options(s3: S3Server, **more: str) -> dict[str, str]:
    # generous timeouts: a loaded 2-core machine can keep the server busy for seconds
    return {"endpoint_override": s3.endpoint, "request_timeout": "60", "connect_timeout": "30",
            **CREDENTIALS, **more}


def _slices(table: HudiTable) -> list[tuple[Any, ...]]:
    return [(s.file_id, s.partition_path, s.base_instant,
             None if s.base_file is None else (s.base_file.path, s.base_file.size),
             tuple((lf.path, lf.size) for lf in s.log_files)) for s in table.latest_file_slices()]


def _server_kinds(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if v and k != "total"}


# ------------------------------------------------------------------------------------------------ storage


def test_uri_and_options() -> None:
    local = Storage.for_uri("relative/table")
    assert local.is_local and local.uri == str(Path("relative/table").absolute())
    assert Storage.for_uri("file:///tmp/t").root == "/tmp/t"
    st = Storage.for_uri("s3a://bucket/a/b/", {"endpoint_override": "http://127.0.0.1:1", **CREDENTIALS})
    assert (st.scheme, st.root, st.uri) == ("s3a", "bucket/a/b", "s3a://bucket/a/b")
    assert st.fs_path("s3a://bucket/a/b/p/f.parquet") == "bucket/a/b/p/f.parquet"
    assert st.location("bucket/a/b/p/f.parquet") == "s3a://bucket/a/b/p/f.parquet"
    assert not st.spark_readable and local.spark_readable
    assert parse_storage_options(["region=eu-west-1", "secret_key=a=b"]) == {"region": "eu-west-1",
                                                                            "secret_key": "a=b"}
    with pytest.raises(StorageError, match="expected KEY=VALUE"):
        parse_storage_options(["region"])
    with pytest.raises(StorageError, match="unknown S3 storage option"):
        Storage.for_uri("s3://bucket/t", {"no_such_option": "1"})
    with pytest.raises(StorageError, match="not a boolean"):
        Storage.for_uri("s3://bucket/t", {"anonymous": "maybe"})
    with pytest.raises(StorageError, match="no bucket"):
        Storage.for_uri("s3:///t")
    with pytest.raises(StorageError, match="not a local folder"):
        Storage.for_uri("/tmp/t", {"region": "x"})


def test_not_a_table_on_s3(s3: S3Server, tables: dict[str, tuple[Path, str]]) -> None:
    from hive_bridge.errors import HudiTableError

    with pytest.raises(HudiTableError, match=r"not a Hudi table: there is no \.hoodie/hoodie\.properties"):
        HudiTable.open(f"s3://{BUCKET}/warehouse/nothing-here", storage_options=_options(s3))


# ------------------------------------------------------------------------------------------------ listing


@pytest.mark.parametrize("name", [MOR, COW])
@pytest.mark.parametrize("listing", ["folders", "auto"])
def test_listed_like_the_local_copy(s3: S3Server, tables: dict[str, tuple[Path, str]], name: str,
                                    listing: str) -> None:
    local, uri = tables[name]
    s3.reset()
    remote = HudiTable.open(uri, listing=listing, storage_options=_options(s3))
    mine = HudiTable.open(local, listing=listing)
    assert _slices(remote) == _slices(mine) and _slices(mine)
    assert remote.listing_source == mine.listing_source == ("folders" if listing == "folders" else "mdt")
    assert all(s.base_file is None or s.base_file.full_path.startswith(uri + "/")
               for s in remote.latest_file_slices())
    assert remote.arrow_schema() == mine.arrow_schema()
    # the counter tells the truth: exactly the requests the server received
    assert _server_kinds(remote.storage.requests.counts()) == _server_kinds(s3.requests())
    if listing == "folders":
        # one listing request per folder (the timeline, the table root, each partition): no HEAD per data file
        partitions = len(mine.partition_paths())
        assert remote.storage.requests.list == 2 + partitions


def test_metadata_table_hfiles_read_in_ranges_on_s3(s3: S3Server, tables: dict[str, tuple[Path, str]],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """HFiles above the whole-read size are read in ranges (one HEAD, the tail, the blocks a lookup needs): the
    metadata table's listing and statistics are the local copy's, and the counter still tells the truth."""
    from hive_bridge.config import clear_caches
    from hive_bridge.formats.hfile import reader as hfile

    monkeypatch.setattr(hfile, "_WHOLE_FILE_MAX", 0)
    monkeypatch.setattr(hfile, "_TAIL_READ", 4096 + 64)
    clear_caches()
    local, uri = tables[MOR]
    s3.reset()
    remote = HudiTable.open(uri, listing="mdt", storage_options=_options(s3))
    stats = ColumnStatsIndex(remote, source="mdt", persist=False).table()
    mine = HudiTable.open(local, listing="mdt")
    assert remote.listing_source == "mdt" and _slices(remote) == _slices(mine) and _slices(mine)
    assert stats.equals(ColumnStatsIndex(mine, source="mdt", persist=False).table())
    assert _server_kinds(remote.storage.requests.counts()) == _server_kinds(s3.requests())
    assert remote.storage.requests.get > remote.storage.requests.head > 0
    clear_caches()


# ------------------------------------------------------------------------------------------------ index


def test_index_persisted_in_the_bucket(s3: S3Server, tables: dict[str, tuple[Path, str]],
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    local, _ = tables[COW]
    uri = f"s3://{BUCKET}/writable/{COW}"
    s3.upload_folder(local, BUCKET, f"writable/{COW}")
    remote = HudiTable.open(uri, storage_options=_options(s3))
    index = ColumnStatsIndex(remote, source="footers")
    stats = index.load()
    files = len(remote.latest_file_slices())
    assert index.last.files_from_footers == files and index.last.persisted and index.last.segments_written == 1
    expected = ColumnStatsIndex(HudiTable.open(local), source="footers", persist=False).load()
    assert stats.equals(expected)
    keys = [o["Key"] for o in s3.client().list_objects_v2(
        Bucket=BUCKET, Prefix=f"writable/{COW}/.hoodie/.hive_bridge/column_stats/").get("Contents", [])]
    assert len(keys) == 1 and keys[0].endswith(".arrow")
    assert not (tmp_path / "cache").exists()  # the bucket was writable: nothing cached locally
    # a new process: the index is read from the bucket (one listing, one HEAD + GET), no footer is read
    again = HudiTable.open(uri, storage_options=_options(s3))
    again.latest_file_slices(), again.arrow_schema()     # listed and its schema read: what is left is the index
    before = again.storage.requests.counts()
    index2 = ColumnStatsIndex(again, source="footers")
    assert index2.load().equals(expected)
    assert index2.last.files_from_index == files and index2.last.files_from_footers == 0
    made = again.storage.requests.since(before)
    assert (made["list"], made["head"], made["get"], made["put"]) == (1, 1, 1, 0)


@contextmanager
def _read_only_server() -> Iterator[tuple[S3Server, dict[str, str]]]:
    """A server whose IAM authorization is on, and the credentials of a user allowed to read only."""
    with S3Server() as server:
        iam = __import__("boto3").client("iam", endpoint_url=server.endpoint, aws_access_key_id="test",
                                         aws_secret_access_key="test", region_name="us-east-1")
        keys = {}
        for user, actions in (("admin", ["s3:*"]), ("reader", ["s3:GetObject", "s3:ListBucket"])):
            iam.create_user(UserName=user)
            policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions,
                                                             "Resource": "*"}]}
            iam.put_user_policy(UserName=user, PolicyName="p", PolicyDocument=json.dumps(policy))
            key = iam.create_access_key(UserName=user)["AccessKey"]
            keys[user] = (key["AccessKeyId"], key["SecretAccessKey"])
        yield server, {"admin": keys["admin"][0] + ":" + keys["admin"][1],
                       "reader": keys["reader"][0] + ":" + keys["reader"][1]}


def test_read_only_bucket_keeps_the_index_in_the_local_cache(tables: dict[str, tuple[Path, str]],
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    local, _ = tables[COW]
    with _read_only_server() as (server, keys):
        server.upload_folder(local, BUCKET, COW)
        # from now on moto checks every request's signature and the user's policy
        urllib.request.urlopen(urllib.request.Request(f"{server.endpoint}/moto-api/reset-auth", data=b"0",
                                                      headers={"Content-Type": "text/plain"}, method="POST"),
                               timeout=30).close()
        access, secret = keys["reader"].split(":")
        opts = _options(server, access_key=access, secret_key=secret)
        uri = f"s3://{BUCKET}/{COW}"
        table = HudiTable.open(uri, storage_options=opts)
        with pytest.raises(PermissionError, match="access denied"):
            table.storage.write_bytes(f"{uri}/probe", b"x")
        index = ColumnStatsIndex(table, source="footers")
        stats = index.load()
        files = len(table.latest_file_slices())
        assert index.last.files_from_footers == files and index.last.persisted
        cached = list((tmp_path / "cache" / "index").glob("*/column_stats/seg-*.arrow"))
        assert len(cached) == 1
        # nothing was written into the bucket
        admin_access, admin_secret = keys["admin"].split(":")
        listed = server.client(admin_access, admin_secret).list_objects_v2(
            Bucket=BUCKET, Prefix=f"{COW}/.hoodie/.hive_bridge/").get("KeyCount", 0)
        assert listed == 0
        again = ColumnStatsIndex(HudiTable.open(uri, storage_options=opts), source="footers")
        assert again.load().equals(stats) and again.last.files_from_footers == 0
        assert again.last.files_from_index == files


# ------------------------------------------------------------------------------------------ lost objects


def test_object_deleted_between_listing_and_reading_is_kept(s3: S3Server, tables: dict[str, tuple[Path, str]],
                                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    local, _ = tables[COW]
    prefix = f"deleted/{COW}"
    s3.upload_folder(local, BUCKET, prefix)
    table = HudiTable.open(f"s3://{BUCKET}/{prefix}", storage_options=_options(s3))
    slices = table.latest_file_slices()
    gone = slices[0].base_file
    assert gone is not None
    s3.client().delete_object(Bucket=BUCKET, Key=f"{prefix}/{gone.path}")
    index = ColumnStatsIndex(table, source="footers", persist=False)
    # a filter no row matches: every file whose statistics were read is dropped, the unreadable one is kept
    filt = sarg.parse("leaf-0 = (EQUALS txn_id no-such-id), expr = leaf-0", table_sarg_schema(table))
    result = plan_slices(table, index, slices, filt, session_time_zone="UTC")
    kept = [f.path for f in result.files]
    assert kept == [gone.full_path] and result.kept_unknown == 1
    assert any(gone.full_path in e and "not found" in e for e in index.errors), index.errors


# ------------------------------------------------------------------------------------------------ the CLI


def _cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(argv, stdout=out)
    return code, out.getvalue()


def test_replay_json_counts_the_requests_of_each_query(s3: S3Server, tables: dict[str, tuple[Path, str]],
                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    local, _ = tables[MOR]
    prefix = f"replay/{MOR}"
    s3.upload_folder(local, BUCKET, prefix)
    log = tmp_path / "filters.log"
    log.write_text("leaf-0 = (EQUALS txn_id TXN-001), expr = leaf-0\n(not leaf-(IS_NULL txn_id))\n")
    options = [a for k, v in _options(s3).items() for a in ("--storage-option", f"{k}={v}")]
    s3.reset()
    s3.set_latency(0.01)   # every request waits: what a query costs is its number of requests
    try:
        code, text = _cli(["replay", "--table", f"s3://{BUCKET}/{prefix}", "--json", "--listing", "folders",
                           *options, str(log)])
    finally:
        s3.set_latency(0)
    seen = s3.requests()
    assert code == 0, text
    *rows, summary = [json.loads(line) for line in text.splitlines()]
    assert summary["summary"] is True and summary["filters"] == 2 and summary["failed"] == 0
    code, local_text = _cli(["replay", "--table", str(local), "--json", "--listing", "folders", str(log)])
    *local_rows, _ = [json.loads(line) for line in local_text.splitlines()]
    assert [r["kept"] for r in rows] == [r["kept"] for r in local_rows]
    assert [r["files_kept"] for r in rows] == [r["files_kept"] for r in local_rows]
    # the first query read what the index lacked (metadata table, footers, log files), the second read nothing
    assert rows[0]["requests"]["get"] > 0, [r["requests"] for r in rows]
    assert rows[1]["requests"]["total"] == 0
    assert _server_kinds(rows[-1]["requests_total"]) == _server_kinds(seen)


def test_explain_on_s3_matches_the_local_copy(s3: S3Server, tables: dict[str, tuple[Path, str]],
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    local, uri = tables[MOR]
    options = [a for k, v in _options(s3).items() for a in ("--storage-option", f"{k}={v}")]
    filt = "leaf-0 = (EQUALS txn_id TXN-001), expr = leaf-0"
    code, text = _cli(["explain", "--table", uri, "--json", "--stats-source", "auto", *options, filt])
    assert code == 0, text
    code, local_text = _cli(["explain", "--table", str(local), "--json", "--stats-source", "auto", filt])
    doc, local_doc = json.loads(text), json.loads(local_text)
    for key in ("files_total", "files_kept", "listing_source", "summary"):
        assert doc[key] == local_doc[key], key
    assert [(f["path"], f["kept"]) for f in doc["files"]] == [(f["path"], f["kept"]) for f in local_doc["files"]]
    assert doc["requests"]["total"] > 0 and doc["requests"]["put"] == 0   # explain reads, never writes


def test_bad_storage_option_is_a_usage_error(s3: S3Server, tables: dict[str, tuple[Path, str]]) -> None:
    err = io.StringIO()
    code = cli_main(["explain", "--table", tables[COW][1], "--storage-option", "endpoint_override",
                     "leaf-0 = (IS_NULL txn_id), expr = leaf-0"], stdout=io.StringIO(), stderr=err)
    assert code == 2 and "expected KEY=VALUE" in err.getvalue()


# ------------------------------------------------------------------------------------------------ Spark


@pytest.mark.spark
def test_spark_reads_the_table_on_s3_through_python_workers(spark: Any, s3: S3Server,
                                                           tables: dict[str, tuple[Path, str]],
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hive_bridge.spark import (
        PYTHON_SOURCE,
        ROUTE_SPARK,
        ROUTE_WORKERS,
        last_scan_report,
        read_hudi,
        register,
    )

    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    local, _ = tables[COW]
    prefix = f"spark/{COW}"
    s3.upload_folder(local, BUCKET, prefix)
    uri = f"s3://{BUCKET}/{prefix}"
    opts = _options(s3)
    filt = "(txn_id IN ('TXN-001', 'TXN-002', 'TXN-003')) OR amount > 100"
    remote = read_hudi(spark, uri, filt, storage_options=opts)
    mine = read_hudi(spark, str(local), filt)
    assert remote.route == ROUTE_WORKERS and mine.route == ROUTE_SPARK
    assert remote.listing.files_kept == mine.listing.files_kept
    rows, local_rows = sorted(map(tuple, remote.df.collect())), sorted(map(tuple, mine.df.collect()))
    assert rows == local_rows and rows
    # the Python data source itself (hudi-hive-python: `hudi-hive` is the JVM file index, which reads only what
    # Spark's Hadoop file systems open), with the storage options as `storage.` options
    register(spark)
    with pytest.raises(Exception, match="hudi-hive-python"):
        spark.read.format("hudi-hive").options(**{f"storage.{k}": v for k, v in opts.items()}).load(uri)
    reader = spark.read.format(PYTHON_SOURCE)
    for k, v in opts.items():
        reader = reader.option(f"storage.{k}", v)
    df = reader.load(uri)
    assert df.count() == spark.read.format("hudi-hive").load(str(local)).count()
    report = last_scan_report(uri)
    assert report is not None and report["storage"] == "s3" and report["route"] == ROUTE_WORKERS
    # a base file deleted after planning: a clear error, never fewer rows
    planned = read_hudi(spark, uri, None, storage_options=opts)
    victim = next(s.base_file for s in planned.listing.slices if s.base_file is not None)
    s3.client().delete_object(Bucket=BUCKET, Key=f"{prefix}/{victim.path}")
    with pytest.raises(Exception, match="the base file is gone"):
        planned.df.collect()


def test_the_handler_lists_a_partition_of_a_table_on_s3(s3: S3Server, tables: dict[str, tuple[Path, str]],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hive's input format gets a partition folder's URI: the handler finds the table root above it on S3 and
    lists that partition's slices, as it does for the local copy."""
    from hive_bridge.hive.handler import INPUT_DIR, HoodieParquetInputFormat

    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", CREDENTIALS["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", CREDENTIALS["secret_key"])
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    local, uri = tables[COW]
    partition = next(p for p in HudiTable.open(local).partition_paths() if p)
    want = HoodieParquetInputFormat().list_status({INPUT_DIR: f"{local}/{partition}"})
    got = HoodieParquetInputFormat().list_status({INPUT_DIR: f"{uri}/{partition}"})
    assert want.files_total > 0
    assert sorted(s.file_id for s in got.slices) == sorted(s.file_id for s in want.slices)
    assert all(f.path.startswith(f"{uri}/{partition}/") for f in got.files)
    with pytest.raises(Exception, match="not inside a Hudi table"):
        HoodieParquetInputFormat().list_status({INPUT_DIR: f"s3://{BUCKET}/warehouse/nothing-here"})


@pytest.mark.spark
def test_spark_reads_merged_slices_on_s3(spark: Any, s3: S3Server, tables: dict[str, tuple[Path, str]],
                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge-on-read table on S3: its merged slices (base file + log files) are read in the Python workers
    with the same rows as the local copy, snapshot and read-optimized."""
    from hive_bridge.spark import read_hudi

    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    name = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"       # latest slices with log files
    if not (SHARED_TABLES / f"{name}.zip").is_file():
        pytest.skip(f"{name} not found in {SHARED_TABLES}")
    local = _unzip(name, tmp_path / "local")
    s3.upload_folder(local, BUCKET, f"mor/{name}")
    uri = f"s3://{BUCKET}/mor/{name}"
    opts = _options(s3)
    for query_type in ("snapshot", "read_optimized"):
        remote = read_hudi(spark, uri, None, storage_options=opts, query_type=query_type)
        mine = read_hudi(spark, str(local), None, query_type=query_type)
        if query_type == "snapshot":
            assert any(s.log_files for s in remote.listing.slices)
        rows = sorted(map(tuple, remote.df.drop(*[c for c in remote.df.columns if c.startswith("_hoodie")]).collect()))
        want = sorted(map(tuple, mine.df.drop(*[c for c in mine.df.columns if c.startswith("_hoodie")]).collect()))
        assert rows == want and rows, query_type


def test_hudi_rs_gets_the_endpoint_and_credentials_pyarrow_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    from hive_bridge.spark import hudi_rs_storage_options

    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(var, raising=False)
    got = hudi_rs_storage_options("s3://b/t", {"endpoint_override": "http://127.0.0.1:9000", "access_key": "a",
                                               "secret_key": "s", "region": "eu-west-1", "request_timeout": "60"})
    assert got == {"aws_endpoint": "http://127.0.0.1:9000", "aws_allow_http": "true", "aws_access_key_id": "a",
                   "aws_secret_access_key": "s", "aws_region": "eu-west-1", "aws_skip_signature": "false"}
    assert hudi_rs_storage_options("s3a://b/t", {"endpoint_override": "minio:9000", "scheme": "http"}) == {
        "aws_endpoint": "http://minio:9000", "aws_allow_http": "true"}
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "env-key")
    monkeypatch.setenv("AWS_REGION", "us-east-2")
    assert hudi_rs_storage_options("s3://b/t", {"region": "eu-west-1"}) == {
        "aws_access_key_id": "env-key", "aws_region": "eu-west-1", "aws_skip_signature": "false"}
    assert hudi_rs_storage_options("gs://b/t", {"region": "x"}) == {}
