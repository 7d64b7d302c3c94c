"""Spark event logs replayed: the shared real logs of pyspark 3.3–4.3 (every version and codec) and logs pyspark
writes over Hudi tables here (COW and MOR, partitioned, joins with dynamic partition pruning, AQE on, every
codec): every scan found once, its filters and table; the files kept hold every row the scan's filter passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import sarg
from hive_bridge.app.replay import verify_filter
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning.snapshot import SnapshotCache
from hive_bridge.workload import application_files, read_application
from hive_bridge.workload.eventlog import Problem
from tests.hive_bridge.workload.conftest import SHARED, json_lines, run, write_shared_log_table

EVLOGS = SHARED / "spark-eventlogs"
VERSIONS = {"3.3.4": 10, "3.5.8": 11, "4.0.1": 11, "4.3.0": 11}


def scans_of(path: Path) -> tuple[list[Any], list[Problem]]:
    problems: list[Problem] = []
    scans = [s for files in application_files(str(path)) for s in read_application(files, problems)]
    return scans, problems


@pytest.mark.parametrize("version", sorted(VERSIONS))
def test_shared_logs_every_scan_once_from_metadata(version: str) -> None:
    scans, problems = scans_of(EVLOGS / version / "evlog")
    assert problems == []
    assert len(scans) == VERSIONS[version]
    t = [s for s in scans if s.location.endswith("/data/t")]
    dim = [s for s in scans if s.location.endswith("/data/dim")]
    assert len(dim) == 1 and len(t) == len(scans) - 1     # AQE re-plans and the reused broadcast: once each
    first = min(t, key=lambda s: s.execution_id)
    assert "(name#" in first.data_filters and "a,b[c] d)" in first.data_filters  # complete, never simpleString
    assert first.spark_files == 6 and first.spark_bytes and first.spark_bytes > 10_000
    dpp = [s for s in t if "dynamicpruning" in s.partition_filters]
    assert len(dpp) == 1 and dpp[0].spark_files == 2    # what Spark really read after dynamic pruning
    assert all(s.time_zone == "Etc/UTC" for s in scans)


@pytest.mark.parametrize("folder", ["zstd", "rolling", "structured-4.0.1"])
def test_shared_codec_logs(folder: str) -> None:
    scans, problems = scans_of(EVLOGS / "codecs" / folder / "evlog")
    assert problems == []
    assert [(s.data_filters, s.spark_files) for s in scans] == [(scans[0].data_filters, 1)]
    assert "= 3)" in scans[0].data_filters


def test_history_server_folder_of_many_applications() -> None:
    scans, problems = scans_of(EVLOGS)   # every version's and codec's application under one folder
    assert problems == []
    assert len(scans) == sum(VERSIONS.values()) + 3
    assert len({s.app for s in scans}) == 7


def test_shared_log_replayed_against_hudi_tables_of_its_schema(tmp_path: Path) -> None:
    """The real 3.5.8 log's `t` mapped (by its location) onto a Hudi table with the same columns: its filters
    are found and typed; the other table (`dim`) has no Hudi table and is reported with its scans."""
    write_shared_log_table(tmp_path / "t")
    log = EVLOGS / "3.5.8" / "evlog"
    code, out, err = run("replay", "--json", "--table", f"/data/lake/3.5.8_plain/data/t={tmp_path / 't'}", str(log))
    rows, summary = json_lines(out)
    assert code == 0, err
    filters = {r["filter"]: r for r in rows}
    assert "id IS NOT NULL AND name IS NOT NULL AND id = 5 AND name = 'a,b[c] d'" in filters
    assert ("id > 1 AND price >= 100.5 AND amount < 10.25 AND d = DATE '2024-01-03' AND ts > TIMESTAMP "
            "'2024-01-01 10:00:00'") in next(f for f in filters if f and "price >= 100.5" in f)
    # the 40 values of INSET and the quoted name; the IN of strings x,y,z holds every way the commas may split
    assert any(f and "id IN (0, 1, 10" in f and "name = 'its \"q\"'" in f for f in filters)
    assert any(f and "'y,z'" in f for f in filters)
    # StartsWith is a LIKE of its prefix: a conjunct prunes as a prefix, inside an OR it is kept as written
    assert any(f and f.endswith("AND id = 5 AND name LIKE 'ab%'") for f in filters)
    assert "((id IN (1, 2, 3) OR name LIKE 'ab%') OR unknown())" in filters
    assert all(r["files_kept"] <= r["files_total"] for r in rows)
    assert summary["scans_unresolved"] == {"file:/data/lake/3.5.8_plain/data/dim": 1}
    assert summary["scans"] == 11
    # the cast comparison, the binary and nested leaves are unknown, never guessed
    unknown = [t for r in rows for t in r["unknown_filter_texts"]]
    assert any("cast(" in t for t in unknown) and any("0x0102" in t for t in unknown)


def test_every_codec_written_by_pyspark(hudi_eventlogs: dict[str, Any]) -> None:
    logs = hudi_eventlogs["logs"]
    assert set(logs) == {"none", "zstd", "lz4", "snappy", "lzf"}
    found = {}
    for codec, folder in logs.items():
        scans, problems = scans_of(folder)
        assert problems == [], codec
        found[codec] = [(s.description, s.data_filters.split("#")[0]) for s in scans]
    assert found["lz4"] == found["snappy"] == found["lzf"] == found["none"][: len(found["lz4"])]
    assert len(found["none"]) == len(found["zstd"]) == 10


def test_hudi_workload_keeps_every_row(hudi_eventlogs: dict[str, Any], spark: Any) -> None:
    """Every table and filter of every codec's log replayed (one run, tables found by location); for every
    scan, the kept files hold every row passing that scan's own predicate (truth: Spark over all latest files,
    pushdown off), and what Spark read is beside it."""
    code, out, err = run("replay", "--json", str(hudi_eventlogs["root"] / "eventlogs"))
    assert code == 0, err
    rows, summary = json_lines(out)
    tables = {name: str(Path(p)) for name, p in hudi_eventlogs["tables"].items()}
    assert {r["table"] for r in rows} == set(tables.values())
    assert summary["scans_unresolved"] == {} and summary["failed"] == 0
    assert summary["scans"] == 2 * 10 + 3 * 2
    scans, _ = scans_of(hudi_eventlogs["root"] / "eventlogs")
    description = {s.query: s.description for s in scans}
    by_name = {v: k for k, v in tables.items()}
    cache = SnapshotCache()
    checked = 0
    for r in rows:
        assert r["spark_scans_measured"] == r["occurrences"]
        name = by_name[r["table"]]
        snap = cache.get(r["table"])
        parsed = sarg.parse_hiveql(r["filter"], table_sarg_schema(snap.table)) if r["filter"] else None
        listing = snap.plan(parsed, session_time_zone=r["time_zone"])
        assert listing.files_kept == r["files_kept"]
        for q in r["queries"]:   # each occurrence's own query (its job description is q<i>)
            predicate = hudi_eventlogs["queries"][int(description[q][1:])][1][name]
            same, detail = verify_filter(spark, snap.table, listing, predicate)
            assert same, (r["filter"], predicate, detail)
            checked += 1
    assert checked == summary["scans"]


def test_report_and_verify(hudi_eventlogs: dict[str, Any], spark: Any) -> None:
    """The table report (Spark's figures beside hive-bridge's) and --verify reading every filter pruned and
    unpruned."""
    code, out, err = run("replay", "--verify", str(hudi_eventlogs["logs"]["lz4"]))
    assert code == 0, err
    assert "Spark read" in out and "rows identical" in out and "DIFFERENT" not in out
    assert "of the 2 scans Spark measured, Spark read" in out


def test_spark_executors_read_the_same(spark: Any, tmp_path: Path) -> None:
    """--spark: a History Server folder's applications parsed by Spark executors: the same result."""
    base = ["replay", "--json", "--table", f"/data/lake/3.5.8_plain/data/t={tmp_path / 'none'}", str(EVLOGS)]
    code_a, out_a, _ = run(*base)
    code_b, out_b, _ = run(*base, "--spark", "--master", "local[2]")
    assert code_a == code_b
    rows_a, summary_a = json_lines(out_a)
    rows_b, summary_b = json_lines(out_b)
    assert summary_a == summary_b and summary_a["scans"] == sum(VERSIONS.values()) + 3
    assert sorted(map(str, rows_a)) == sorted(map(str, rows_b))
