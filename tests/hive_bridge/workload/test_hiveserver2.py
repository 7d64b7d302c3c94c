"""HiveServer2 logs: a multi-table workload (joins, an outer join, a subquery, a CTE, USE, a multi-line statement,
a statement that cannot be read); each table's pushed filter is checked, on the table's rows, against the filter
Spark's own optimizer pushes to that scan for the same query (EXPLAIN FORMATTED through the session)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import sarg
from hive_bridge.filters.residual import to_sql
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.table import HudiTable
from hive_bridge.workload.hiveserver2 import table_filters
from tests.hive_bridge.workload.conftest import SHARED, json_lines, run
from tests.hive_bridge.workload.make_hudi_eventlogs import write_tables

QUERIES = {
    "q1": "SELECT o.id FROM orders o JOIN customers c ON o.id = c.cid AND c.region = 'eu'\n"
          "WHERE o.price < 10 AND o.dt = '2024-01-01'",
    "q2": "SELECT o.id FROM orders o LEFT JOIN customers c ON o.id = c.cid AND c.cid > 5\n"
          "WHERE o.amount > 3 AND (c.region = 'us' OR c.region IS NULL)",
    "q3": "WITH big AS (SELECT * FROM orders WHERE price >= 20) SELECT * FROM big WHERE id < 50",
    "q4": "SELECT id FROM orders WHERE id IN (SELECT cid FROM customers WHERE region = 'apac')\n"
          "  AND d >= date '2024-01-05' - interval '2' day",
    "q5": "SELECT k.flag, o.name FROM days k RIGHT JOIN orders o ON k.dt = o.dt AND k.flag = 1 WHERE o.id <= 3",
}


def hs2_log(queries: dict[str, str]) -> str:
    lines = ["2024-01-01T10:00:00,001  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: Compiling "
             "command(queryId=hive_use): USE sales",
             "2024-01-01T10:00:00,002  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: Completed "
             "compiling command(queryId=hive_use); Time taken: 0.01 seconds"]
    for qid, sql in queries.items():
        for kind in ("Compiling", "Executing"):
            lines.append(f"2024-01-01T10:00:01,000  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: "
                         f"{kind} command(queryId={qid}): {sql}")
            lines.append("2024-01-01T10:00:01,100  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: OK")
    lines.append("2024-01-01T10:00:02,000  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: Compiling "
                 "command(queryId=bad): SELEC id FRM orders WHERE")
    lines.append("2024-01-01T10:00:02,001  INFO [main] ql.Driver: OK")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_tables(tmp_path_factory.mktemp("hs2"))


def spark_pushed(spark: Any, sql: str, views: dict[str, Any]) -> dict[str, list[str]]:
    """Per table (by location), the filter Spark's optimizer pushes to each of its scans (partition and data
    filters of each FileSourceScanExec of the physical plan), as Spark SQL."""
    plan = spark.sql(sql)._jdf.queryExecution().sparkPlan()
    leaves = plan.collectLeaves()
    out: dict[str, list[str]] = {}
    for i in range(leaves.size()):
        leaf = leaves.apply(i)
        if leaf.nodeName() != "Scan parquet" and not leaf.nodeName().startswith("Scan parquet"):
            continue
        location = leaf.metadata().get("Location").get()
        loc = next((p for p in views if p in location), None)
        assert loc is not None, location
        exprs = [leaf.partitionFilters(), leaf.dataFilters()]
        parts = [e.apply(k).sql() for e in exprs for k in range(e.size())]
        out.setdefault(loc, []).append(" AND ".join(f"({p})" for p in parts) if parts else "true")
    return out


def test_sql_pushdown_rules() -> None:
    got = {(f.table, f.hiveql) for f in table_filters(QUERIES["q2"], "sales")}
    assert got == {("sales.orders", "amount > 3"), ("sales.customers", "cid > 5")}
    got = {(f.table, f.hiveql) for f in table_filters(QUERIES["q5"], "sales")}
    assert got == {("sales.days", "flag = 1"), ("sales.orders", "id <= 3")}
    got = {(f.table, f.hiveql) for f in table_filters(QUERIES["q4"], "sales")}
    assert got == {("sales.orders", "d >= CAST('2024-01-03' AS DATE)"), ("sales.customers", "region = 'apac'")}
    full = table_filters("SELECT * FROM a FULL OUTER JOIN b ON a.x = b.x AND b.y = 1 WHERE a.z = 2")
    assert {f.hiveql for f in full} == {None}


def test_hiveserver2_workload_matches_sparks_pushdown(tables: dict[str, Path], spark: Any,
                                                     tmp_path: Path) -> None:
    log = tmp_path / "hiveserver2.log"
    log.write_text(hs2_log(QUERIES))
    args = [f"--table=sales.{name}={path}" for name, path in tables.items()]
    code, out, err = run("replay", "--json", *args, str(log))
    rows, summary = json_lines(out)
    assert code == 1 and "query bad: SQL not read" in err and f"{log}:" in err   # reported, the run went on
    assert summary["problems"] == 1
    ours: dict[tuple[str, str], list[str | None]] = {}
    for r in rows:
        assert r["source"] == "hiveserver2"
        for q in r["queries"]:
            ours.setdefault((q, r["table"]), []).append(r["filter"])
    assert {q for q, _ in ours} == set(QUERIES)          # each statement once (compiling and executing)
    assert sum(r["occurrences"] for r in rows) == 9     # q3 reads orders once (its outer SELECT reads the CTE)
    views: dict[str, dict[str, str]] = {}
    for name, path in tables.items():
        table = HudiTable.open(path)
        files = [s.base_file.full_path for s in table.latest_file_slices() if s.base_file is not None]
        spark.read.option("basePath", str(path)).parquet(*files).createOrReplaceTempView(name)
        views[str(path)] = table_sarg_schema(table)
    for qid, sql in QUERIES.items():
        pushed = spark_pushed(spark, sql, views)
        for loc, spark_filters in pushed.items():
            mine = ours[(qid, loc)]
            assert len(mine) == 1
            name = Path(loc).name
            mine_sql = to_sql(sarg.read_filter(mine[0], views[loc])) if mine[0] else "true"
            for theirs_sql in spark_filters:
                theirs = theirs_sql = re.sub(r"\b[A-Za-z_]\w*\.(?=[`A-Za-z_])", "", theirs_sql)  # o.id -> id
                # every row Spark's pushed filter passes, ours passes too (ours is never narrower)
                lost = spark.sql(f"SELECT count(*) FROM {name} WHERE ({theirs_sql}) AND NOT coalesce({mine_sql}, "
                                 "false)").collect()[0][0]
                assert lost == 0, (qid, loc, mine, theirs)
                if qid in ("q1", "q2", "q4", "q5"):      # and no wider (Spark adds only null checks there)
                    extra = spark.sql(f"SELECT count(*) FROM {name} WHERE ({mine_sql}) AND NOT "
                                      f"coalesce({theirs_sql}, false)").collect()[0][0]
                    assert extra == 0, (qid, loc, mine, theirs)


@pytest.mark.skipif(not (SHARED / "hive").is_dir(), reason="the shared real logs are not here")
def test_real_hive_log_statements(tmp_path: Path) -> None:
    code, out, err = run("replay", "--json", str(SHARED / "hive" / "hive-2.3.9-driver-in-spark.log"))
    _, summary = json_lines(out)
    assert summary["scans_unresolved"] == {"default.hp": 2, "(explain lines: no table named)": 1}
    assert code == 0, err


def test_read_optimized_name_reads_base_files_only(tables: dict[str, Path], tmp_path: Path) -> None:
    """Hive sync's customers_ro is the merge-on-read table read as its base files only; customers_rt and
    customers are snapshot reads (base files merged with log files)."""
    log = tmp_path / "hs2.log"
    log.write_text(hs2_log({"ro": "SELECT cid FROM customers_ro WHERE cid = 3",
                            "rt": "SELECT cid FROM Customers_RT WHERE cid = 3"}))
    code, out, err = run("replay", "--json", f"--table=Sales.Customers={tables['customers']}", str(log))
    rows, _ = json_lines(out)
    assert code == 1 and err.count("error:") == 1 and "query bad" in err   # hs2_log's unreadable statement
    assert {(r["queries"][0], r["query_type"]) for r in rows} == {("ro", "read_optimized"), ("rt", "snapshot")}
