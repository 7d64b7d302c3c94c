"""TPC-H's LIKE conjuncts in a real event log (pyspark over Hudi tables of TPC-H's schema): a conjunct that cannot
prune (``NOT o_comment LIKE %special%requests%``, ``s_comment LIKE %Customer%Complaints%``, ``Contains``) is
unknown — counted and listed, its files kept — never an error; the other conjuncts of the same scan still prune,
and the files kept hold every row of each scan's own predicate."""

from __future__ import annotations

from typing import Any

import sarg
from hive_bridge.app.replay import verify_filter
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning.snapshot import SnapshotCache
from hive_bridge.workload import application_files, read_application
from hive_bridge.workload.eventlog import Problem
from tests.hive_bridge.workload.conftest import json_lines, run


def test_like_conjuncts_are_unknown_not_errors(tpch_eventlog: dict[str, Any]) -> None:
    code, out, err = run("replay", "--json", str(tpch_eventlog["logs"]))
    rows, summary = json_lines(out)
    assert code == 0, err
    assert "error" not in err
    assert summary["failed"] == 0 and summary["problems"] == 0 and summary["scans_unresolved"] == {}
    assert summary["failed_lines"] == 0
    by_table: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_table.setdefault(r["table"], []).append(r)
    tables = tpch_eventlog["tables"]
    unknown = {name: [t for r in by_table[path] for t in r["unknown_filter_texts"]] for name, path in tables.items()}
    assert any(t.startswith("NOT o_comment#") and t.endswith(" LIKE %special%requests%") for t in unknown["orders"])
    assert any(t.startswith("s_comment#") and t.endswith(" LIKE %Customer%Complaints%") for t in unknown["supplier"])
    assert any(t.startswith("Contains(p_name#") for t in unknown["part"])
    # beside the unknown LIKE, what the scan's other conjuncts say is kept, and prunes
    q13 = next(r for r in by_table[tables["orders"]] if r["unknown_filters"])
    assert q13["filter"] == "o_comment IS NOT NULL AND o_custkey IS NOT NULL"
    q9 = next(r for r in by_table[tables["part"]] if any("Contains(" in t for t in r["unknown_filter_texts"]))
    assert "p_size > 10" in q9["filter"] and q9["files_kept"] < q9["files_total"]
    # Q16's NOT LIKE of a prefix is Spark's NOT StartsWith: read (as NOT LIKE 'MEDIUM POLISHED%'), not unknown
    assert any("NOT p_type LIKE 'MEDIUM POLISHED%'" in (r["filter"] or "") for r in by_table[tables["part"]])


def test_files_kept_hold_every_row_of_each_scan(tpch_eventlog: dict[str, Any], spark: Any) -> None:
    code, out, err = run("replay", "--json", str(tpch_eventlog["logs"]))
    rows, _ = json_lines(out)
    assert code == 0, err
    problems: list[Problem] = []
    scans = [s for files in application_files(str(tpch_eventlog["logs"])) for s in read_application(files, problems)]
    assert problems == []
    description = {s.query: s.description for s in scans}
    by_path = {path: name for name, path in tpch_eventlog["tables"].items()}
    cache = SnapshotCache()
    checked = 0
    for r in rows:
        snap = cache.get(r["table"])
        parsed = sarg.parse_hiveql(r["filter"], table_sarg_schema(snap.table)) if r["filter"] else None
        listing = snap.plan(parsed, session_time_zone=r["time_zone"])
        assert listing.files_kept == r["files_kept"]
        for q in r["queries"]:
            predicate = tpch_eventlog["queries"][int(description[q][1:])][1].get(by_path[r["table"]])
            if predicate is None:       # a scan with no predicate of its own (a join's other side)
                continue
            same, detail = verify_filter(spark, snap.table, listing, predicate)
            assert same, (r["filter"], predicate, detail)
            checked += 1
    assert checked >= 4
