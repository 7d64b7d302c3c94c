"""The HTML report of a workload replay: what each section holds (per table, per filter, per column, per file),
escaping of log texts, the advisor's what-if section drawn from plain data, and a workload of 10,000 distinct
filters over 50 tables staying a page of at most 5 MB."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from hive_bridge.pruning import ListStatusResult
from hive_bridge.pruning.pruner import FileStatus
from hive_bridge.pruning.snapshot import SnapshotCache, TableSnapshot
from hive_bridge.testing.workloads import SAMPLE_ADVICE, synthetic_slices, synthetic_workload
from hive_bridge.workload.eventlog import Problem
from hive_bridge.workload.htmlreport import render_report
from hive_bridge.workload.insights import TOP_FILTERS, column_usage, read_heat, workload_insights
from hive_bridge.workload.runner import FilterEntry, TableState
from tests.hive_bridge.workload.conftest import SHARED, run, write_shared_log_table

MB = 1_000_000


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> TableSnapshot:
    """A real small Hudi table's snapshot (its slices are replaced by the synthetic workloads)."""
    path = write_shared_log_table(tmp_path_factory.mktemp("html") / "t")
    return SnapshotCache().get(str(path))


def test_sections_from_a_workload(snapshot: TableSnapshot) -> None:
    work = synthetic_workload(snapshot, tables=2, filters=60)
    d = workload_insights(work, 0, [Problem("app.log", 7, "a filter list in a form not understood")], top=10)
    a, b = d["tables"]
    assert len(a["filters_top"]) == 10 and a["filters_left_out"] == 20
    costs = [r["cost"] for r in a["filters_top"]]
    assert costs == sorted(costs, reverse=True)
    state = next(iter(work.tables.values()))
    best = max(state.entries.values(), key=lambda e: e.listing.bytes_kept * e.occurrences if e.listing else 0)
    assert a["filters_top"][0]["filter"] == best.hiveql
    assert a["hive_bridge_bytes_kept"] == sum(e.listing.bytes_kept * e.occurrences
                                              for e in state.entries.values() if e.listing)
    assert d["not_read"]["problems"] == 1 and d["not_read"]["scans_unresolved"] == [
        {"name": "file:/lake/other", "scans": 3}]
    # a table of one partition (900 files) laid out as runs of files, one of 30 partitions by partition
    assert not a["heat"]["partitioned"]
    assert b["heat"]["partitioned"] and b["heat"]["partitions"] == 30 and len(b["heat"]["rows"]) == 24
    assert len(a["heat"]["rows"]) == 24 and sum(a["heat"]["cells"]["files"]) == 900 and sum(b["heat"]["cells"]["files"]) == 1200


def test_hudi_figures_unopened_tables_and_failed_filters(snapshot: TableSnapshot) -> None:
    work = synthetic_workload(snapshot, tables=1, filters=4)
    state = next(iter(work.tables.values()))
    first, second, *_ = state.entries.values()
    first.hudi_scans, first.hudi_candidates = 2, 30
    second.error, second.listing = "cannot compare a string column with 1", None
    work.tables["s3://key:secret@bucket/gone"] = TableState("s3://key:secret@bucket/gone", error="no .hoodie here",
                                                            scans=4)
    d = workload_insights(work, 1, [])
    t, gone = d["tables"]
    assert first.listing is not None
    assert (t["hudi_scans_measured"], t["hudi_candidate_files"]) == (2, 30)
    assert t["hive_bridge_files_kept_hudi_measured"] == 2 * first.listing.files_kept
    assert t["failed_filters"] == 1 and gone["error"] == "no .hoodie here"
    assert d["not_read"]["tables_unopened"] == [{"table": "s3://bucket/gone", "scans": 4, "error": "no .hoodie here"}]
    assert d["not_read"]["failed_messages"][0]["error"] == "cannot compare a string column with 1"
    page = render_report(work, 1, [])
    assert "not opened: no .hoodie here" in page and "cannot compare a string column with 1" in page
    assert "30 vs " in page and "secret" not in page


def test_heat_counts_each_kept_file_by_occurrences(snapshot: TableSnapshot) -> None:
    slices = synthetic_slices(3, 4)
    state = TableState("/t", dataclasses.replace(snapshot, slices=slices))
    size = {s.file_id: s.base_file.size for s in slices if s.base_file}
    for text, kept, occ in (("a = 1", slices[0:2], 3), ("a = 2", slices[1:5], 2)):
        e = state.entries[(text, "UTC", "snapshot")] = FilterEntry("/t", text, "UTC", "x", occurrences=occ,
                                                                   columns=("a",))
        e.listing = ListStatusResult([FileStatus(s.file_id, size[s.file_id], 0) for s in kept], kept,
                                     files_total=12, bytes_total=sum(size.values()))
    heat = read_heat(state)
    assert heat is not None
    # partition 0: files 0..3 read 3, 5, 2, 2 times; partition 1: file 4 read twice
    assert heat["cells"]["reads"][:5] == [3, 5, 2, 2, 2] and heat["reads"] == 3 * 2 + 2 * 4
    assert heat["partition_reads"][0] == {"partition": slices[0].partition_path, "files": 4, "scans": 5,
                                          "reads": 12}
    files = pytest.approx((2 / 12 * 3 + 4 / 12 * 2) / 5)
    total = sum(size.values())
    kept_bytes = pytest.approx((sum(size[s.file_id] for s in slices[0:2]) / total * 3
                                + sum(size[s.file_id] for s in slices[1:5]) / total * 2) / 5)
    assert column_usage(state) == [{"column": "a", "filters": 2, "occurrences": 5, "kept_files": files,
                                    "kept_bytes": kept_bytes, "filters_with_unknown": 0, "alone_occurrences": 5,
                                    "alone_kept_files": files, "alone_kept_bytes": kept_bytes}]


def test_log_texts_are_escaped_and_uris_redacted(snapshot: TableSnapshot) -> None:
    work = synthetic_workload(snapshot, tables=1, filters=3)
    state = next(iter(work.tables.values()))
    entry = next(iter(state.entries.values()))
    entry.hiveql = "name = '</script><script>alert(1)</script>'"
    entry.queries = ["<img src=x onerror=alert(2)>"]
    work.unresolved["s3://AKIAKEY:secret@bucket/x"] = 1
    page = render_report(work, 0, [Problem("s3://user:pw@host/log", 1, "<b>bad</b> line")])
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>bad" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page and "&lt;img src=x" in page
    assert "secret" not in page and "pw@" not in page and "s3://bucket/x" in page


def test_advice_rendered_from_plain_data(snapshot: TableSnapshot) -> None:
    work = synthetic_workload(snapshot, tables=1, filters=5)
    page = render_report(work, 0, [], advice=SAMPLE_ADVICE)
    assert "hoodie.clustering.plan.strategy.sort.columns=city,event_id\nhoodie.layout.optimize.strategy=z-order" \
           in page
    assert "z-order(city,event_id)" in page and "+81.0%" in page and "-8.0%" in page
    assert "&lt;b&gt;city&lt;/b&gt;" in page and "too few filters to advise on" in page
    assert "No layout is recommended" in page and "was not run" not in page
    # one what-if chart: the table with candidates (its Whisker spread among the document's models)
    assert page.count('"name":"Whisker"') == 1
    none = render_report(work, 0, [])
    assert "was not run" in none and "hive-bridge advise --table URI LOGS" in none


def test_ten_thousand_filters_over_fifty_tables_stay_small(snapshot: TableSnapshot) -> None:
    work = synthetic_workload(snapshot, tables=50, filters=10_000)
    assert sum(len(s.entries) for s in work.tables.values()) == 10_000
    page = render_report(work, 0, [], advice=SAMPLE_ADVICE)
    size = len(page.encode())
    print(f"10,000 filters over 50 tables: {size / MB:.2f} MB")
    assert size <= 5 * MB
    assert page.count("more filters of this table are left out") == 50
    assert len(re.findall(r"<h3 id=heat-\d+>", page)) == 50
    assert not re.search(r"""<(script|link)[^>]+(src|href)=["']?https?:""", page)
    assert TOP_FILTERS * 50 <= page.count("<span class=f>")


def test_cli_writes_the_page_or_says_why_not(tmp_path: Path) -> None:
    table = write_shared_log_table(tmp_path / "t")
    log = SHARED / "spark-eventlogs" / "3.5.8" / "evlog"
    page = tmp_path / "r.html"
    code, out, err = run("replay", "--table", f"/data/lake/3.5.8_plain/data/t={table}", "--html", str(page),
                         str(log))
    assert code == 0, err
    assert "distinct filters" in out and f"HTML report written to {page}" in err
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and "name = &#x27;a,b[c] d&#x27;" in text
    assert "file:/data/lake/3.5.8_plain/data/dim" in text   # the scan without a Hudi table is listed
    code, _, err = run("replay", "--table", f"/data/lake/3.5.8_plain/data/t={table}", "--html",
                       str(tmp_path / "missing" / "r.html"), str(log))
    assert code == 1 and "cannot write the HTML report" in err and "Traceback" not in err
    # one table and a file of filters (the filter-by-filter replay's input) take the workload replay with --html
    filters = tmp_path / "filters.txt"
    filters.write_text("id = 5\nid < 3 and price > 1.5\nid = 5\n")
    code, out, err = run("replay", "--table", str(table), "--html", str(page), str(filters))
    assert code == 0, err
    text = page.read_text()
    assert "id = 5" in text and "<code>price</code>" in text
    assert "distinct filters<b>2</b>" in text and "occurrences<b>3</b>" in text


def test_advice_sql_and_warnings_rendered(snapshot: TableSnapshot) -> None:
    """The recommended layout's Spark SQL is on the page to copy, the advice's warnings listed first."""
    import dataclasses

    work = synthetic_workload(snapshot, tables=1, filters=5)
    first = SAMPLE_ADVICE[0]
    assert first.recommended is not None
    call = "CALL run_clustering(path => '/t', order => 'a', order_strategy => 'linear', options => 'k=v')"
    advice = dataclasses.replace(first, recommended={**first.recommended, "sql": ["SET x=1", call]},
                                 warnings=["files of 1.0 KiB are below Hudi's small-file limit"])
    page = render_report(work, 0, [], advice=[advice])
    assert "SET x=1;\nCALL run_clustering(path =&gt; &#x27;/t&#x27;" in page
    assert "<li>warning: files of 1.0 KiB are below Hudi&#x27;s small-file limit</li>" in page
