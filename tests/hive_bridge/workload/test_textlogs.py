"""Spark driver logs (3.3–4.3, INFO): each scan's Pruning directories / Pushed Filters / Post-Scan Filters lines
become one filter of the --table they are replayed against; nothing else in them is taken for a filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_bridge.workload.parquet import predicate_to_hiveql
from hive_bridge.workload.printed_filters import translate_lists
from hive_bridge.workload.textlogs import file_occurrences
from tests.hive_bridge.workload.conftest import SHARED

DRIVER = SHARED / "spark-driver-logs"
TYPES = {"id": "int", "name": "string", "price": "double", "amount": "decimal(10,2)", "d": "date",
         "ts": "timestamp", "dt": "string", "k": "int"}


@pytest.mark.parametrize("version", ["3.3.4", "3.5.8", "4.0.1", "4.3.0"])
def test_driver_log_scans(version: str) -> None:
    log = DRIVER / f"spark-{version}-driver.log"
    everything = list(file_occurrences(str(log), log.read_text(encoding="utf-8").splitlines()))
    assert {o.source for o in everything} == {"spark-driver", "parquet-filtercompat"}
    occ = [o for o in everything if o.source == "spark-driver"]
    assert len(occ) == 13
    filters = [translate_lists(o.lists, TYPES).hiveql for o in occ]
    assert "id IS NOT NULL AND name IS NOT NULL AND id = 5 AND name = 'a,b[c] d'" in filters
    assert any(f and "d = DATE '2024-01-03'" in f and "ts > TIMESTAMP '2024-01-01 10:00:00'" in f for f in filters)
    assert any(f and "dt = '2024-01-01'" in f for f in filters)      # Pruning directories with: (partition)
    # the V1 timestamp (JVM zone) is never read: only the Catalyst one
    assert not any(f and "10:00:00.0" in f for f in filters)


def test_driver_lines_of_one_scan_group(tmp_path: Path) -> None:
    lines = ["24/01/01 10:00:00 INFO DataSourceStrategy: Pruning directories with: Set(isnotnull(dt#1), "
             "(dt#1 = 2024-01-02))",
             "24/01/01 10:00:00 INFO FileSourceStrategy: Pushed Filters: IsNotNull(id),GreaterThan(id,7)",
             "24/01/01 10:00:00 INFO FileSourceStrategy: Post-Scan Filters: Set(isnotnull(id#2), (id#2 > 7))",
             "24/01/01 10:00:01 INFO FileSourceStrategy: Pushed Filters: ",
             "24/01/01 10:00:01 INFO FileSourceStrategy: Post-Scan Filters: "]
    occ = list(file_occurrences("driver.log", lines))
    assert [translate_lists(o.lists, TYPES).hiveql for o in occ] == [
        "id IS NOT NULL AND id > 7 AND dt IS NOT NULL AND dt = '2024-01-02'", None]
    assert [o.query for o in occ] == ["driver.log:3", "driver.log:5"]
    # a list no reading fits is reported with its file and line (kept as unknown), the run goes on
    cut = ["24/01/01 10:00:00 INFO FileSourceStrategy: Post-Scan Filters: isnotnull(id#2),(id#2 > "]
    (o,) = file_occurrences("cut.log", cut)
    tr = translate_lists(o.lists, TYPES)
    assert tr.hiveql == "id IS NOT NULL" or tr.unread


def test_parquet_filtercompat_lines_collapsed_form_preferred() -> None:
    log = SHARED / "hive" / "hive-2.3.9-parquet-reader.log"
    occ = list(file_occurrences(str(log), log.read_text(encoding="utf-8").splitlines()))
    assert [o.source for o in occ] == ["parquet-filtercompat"] * 2
    types = {"id": "int", "name": "string", "price": "double"}
    got = [predicate_to_hiveql(o.parquet or "", types) for o in occ]
    assert got == [("((id > 1 AND name = 'c,d') AND price < 5.0)", 0),
                   ("(((name = 'a' OR name = 'b') AND (price < 1.0 OR price > 2.0)) AND id IS NULL)", 0)]


def test_parquet_physical_values_typed_back() -> None:
    types = {"d": "date", "amount": "decimal(10,2)", "ts": "timestamp", "id": "bigint", "name": "string"}
    assert predicate_to_hiveql("eq(d, 19725)", types) == ("d = DATE '2024-01-03'", 0)
    assert predicate_to_hiveql("lt(amount, 1025)", types) == ("amount < 10.25", 0)
    assert predicate_to_hiveql("gt(ts, 1704103200000000)", types) == (None, 1)   # the unit is not printed
    assert predicate_to_hiveql("noteq(id, 3)", types) == ("(NOT id = 3 OR id IS NULL)", 0)
    assert predicate_to_hiveql("userdefinedbyinstance(id, f)", types) == (None, 1)


def test_hudi_file_index_line_paired_with_its_scan() -> None:
    lines = ["24/01/01 10:00:00 INFO HoodieFileIndex: Total file slices: 200; candidate file slices after data "
             "skipping: 30; skipping percentage 0.85",
             "24/01/01 10:00:00 INFO FileSourceStrategy: Pushed Filters: IsNotNull(id),GreaterThan(id,7)",
             "24/01/01 10:00:00 INFO FileSourceStrategy: Post-Scan Filters: isnotnull(id#2),(id#2 > 7)"]
    (occ,) = file_occurrences("driver.log", lines)
    assert occ.hudi_candidates == 30


def test_one_table_and_text_logs_with_new_line_forms_replay_as_a_workload(tmp_path: Path) -> None:
    """`--table URI` with a Spark driver log (or HiveServer2 / FilterCompat lines): every filter goes to that
    table through the workload replay; the ORC-era forms alone keep the earlier filter-by-filter replay."""
    import pyarrow as pa

    from hive_bridge.testing.writer import HudiWriter
    from tests.hive_bridge.workload.conftest import json_lines, run

    table = tmp_path / "t"
    HudiWriter(table, rows_per_file=10).insert(pa.table({"id": pa.array(range(40), pa.int32()),
                                                         "name": [f"n{i}" for i in range(40)]}))
    code, out, err = run("replay", "--json", "--table", str(table), str(DRIVER / "spark-3.5.8-driver.log"))
    rows, summary = json_lines(out)
    assert code == 0, err
    # a literal holding a newline: the filter line goes on over the next line, read whole
    assert any(r["filter"] == "name IS NOT NULL AND name = 'multi\nline'" for r in rows)
    assert {r["table"] for r in rows} == {str(table)} and summary["scans_unresolved"] == {}
    first = next(r for r in rows if r["source"] == "spark-driver")
    assert first["filter"] == "id IS NOT NULL AND name IS NOT NULL AND id = 5 AND name = 'a,b[c] d'"
    assert first["files_kept"] == 0 and first["files_total"] == 4


def test_statement_or_filter_line_running_over_many_lines_is_bounded() -> None:
    """A HiveServer2 statement or a driver filter line whose continuation lines run past 8 MiB is reported with
    the line it started on and not read; the log's next scan is."""
    from hive_bridge.workload.eventlog import Problem

    for first in ["2024-01-01T10:00:00,123 INFO [main] ql.Driver: Compiling command(queryId=q1): SELECT * FROM t",
                  "24/01/01 10:00:00 INFO FileSourceStrategy: Post-Scan Filters: isnotnull(id#2),(name#3 = a"]:
        lines = ["24/01/01 09:00:00 INFO x: start", first, *(["WHERE " + "b" * 80] * 110_000), ")",
                 "24/01/01 10:00:01 INFO FileSourceStrategy: Pushed Filters: IsNotNull(id)",
                 "24/01/01 10:00:01 INFO FileSourceStrategy: Post-Scan Filters: isnotnull(id#2),(id#2 > 7)"]
        problems: list[Problem] = []
        occ = list(file_occurrences("big.log", lines, problems=problems))
        assert [(p.line, p.message.split(" of over")[0]) for p in problems] == \
            [(2, "a statement" if "Compiling" in first else "a filter line")]
        assert [translate_lists(o.lists, TYPES).hiveql for o in occ] == ["id IS NOT NULL AND id > 7"]
