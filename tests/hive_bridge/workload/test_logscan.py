"""The log miner finds every filter in every log format it claims, once per distinct filter."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

import sarg
from hive_bridge.workload.logscan import distinct_filters, scan_lines

SCHEMA = "struct<event_id:bigint,name:string,ts:timestamp>"


def _spark_line(sarg_text: str, part: int = 0) -> str:
    return (f"24/11/22 06:40:01 DEBUG ReaderImpl: Reading ORC rows from file:/w/t/part-{part:05d}.orc with "
            f"{{include: [true, true, true], offset: 0, length: 556, sarg: {sarg_text}, schema: {SCHEMA}, "
            "includeAcidColumns: true}")


def test_spark_orc_reader_lines_give_sarg_and_schema() -> None:
    text = "(or leaf-(EQUALS event_id 5) leaf-(IN name a, b c))"
    [found] = list(scan_lines([_spark_line(text)]))
    assert found.text == text
    assert found.schema == SCHEMA
    assert found.source == "spark-orc"
    parsed = sarg.parse(found.text, found.schema)
    assert str(parsed) == text


def test_one_line_per_file_is_deduplicated_with_counts() -> None:
    lines = [_spark_line("leaf-(EQUALS event_id 1)", i) for i in range(5)]
    lines.insert(2, _spark_line("leaf-(EQUALS event_id 2)"))
    found = distinct_filters(lines)
    assert [(f.text, f.occurrences) for f in found] == [("leaf-(EQUALS event_id 1)", 5),
                                                       ("leaf-(EQUALS event_id 2)", 1)]
    assert found[0].lines == [1, 2, 4, 5, 6]


def test_hive_pushdown_old_form_spanning_lines() -> None:
    lines = [
        "2024-01-01T00:00:00,000 INFO [main] OrcInputFormat: ORC pushdown predicate: leaf-0 = (EQUALS x 1)",
        "leaf-1 = (IS_NULL y)",
        "expr = (and leaf-0 (not leaf-1))",
        "2024-01-01T00:00:01,000 INFO [main] something else",
    ]
    [found] = distinct_filters(lines)
    assert found.text == "leaf-0 = (EQUALS x 1)\nleaf-1 = (IS_NULL y)\nexpr = (and leaf-0 (not leaf-1))"
    assert found.line == 1
    assert str(sarg.parse(found.text)) == "(and leaf-(EQUALS x 1) (not leaf-(IS_NULL y)))"


def test_hive_pushdown_new_and_comma_forms() -> None:
    lines = ["x ORC pushdown predicate: (and leaf-(EQUALS x 1) YES_NO_NULL)",
             "x ORC pushdown predicate: leaf-0 = (EQUALS x 1), expr = leaf-0"]
    assert [f.text for f in distinct_filters(lines)] == ["(and leaf-(EQUALS x 1) YES_NO_NULL)",
                                                         "leaf-0 = (EQUALS x 1), expr = leaf-0"]


def test_explain_filter_expr_and_jobconf_text_are_hiveql() -> None:
    lines = ["      filterExpr: ((event_id = 1) and (name) IN ('a', 'b')) (type: boolean)",
             "hive.io.filter.text=(event_id > 5)"]
    found = distinct_filters(lines)
    assert [(f.kind, f.text) for f in found] == [("hiveql", "((event_id = 1) and (name) IN ('a', 'b'))"),
                                                 ("hiveql", "(event_id > 5)")]


def test_plain_files_one_filter_per_line_and_log_noise() -> None:
    lines = ["leaf-(EQUALS a 1)", "", "# comment", "2024-01-01 10:00:00 INFO unrelated log line",
             "(and leaf-(EQUALS a 1) leaf-(EQUALS b 2))", "a = 1 and b < 3", "YES_NO_NULL"]
    found = distinct_filters(lines)
    assert [(f.kind, f.text) for f in found] == [
        ("sarg", "leaf-(EQUALS a 1)"), ("sarg", "(and leaf-(EQUALS a 1) leaf-(EQUALS b 2))"),
        ("hiveql", "a = 1 and b < 3"), ("sarg", "YES_NO_NULL")]


def test_bundled_sample_log_filters_all_parse_with_the_demo_schema() -> None:
    text = resources.files("hive_bridge").joinpath("data", "sample.log").read_text(encoding="utf-8")
    found = distinct_filters(text.splitlines())
    kinds = {f.source for f in found}
    assert kinds == {"spark-orc", "hive-orc", "explain"}
    for f in found:
        if f.kind == "sarg":
            parsed = sarg.parse(f.text, f.schema)
            assert parsed.leaves


_SHARED = Path("/work/shared/data/workload-logs")


@pytest.mark.skipif(not _SHARED.is_dir(), reason="the shared real logs are not here")
def test_real_logs_lines_that_are_not_filters_are_never_taken_for_filters() -> None:
    """Hive 2.3.9's output (multi-line statements, OK, stack traces, JSON schemas), Spark drivers' output and the
    bytes of event logs: the only bare filter is EXPLAIN's filterExpr."""
    hive = _SHARED / "hive" / "hive-2.3.9-driver-in-spark.log"
    found = distinct_filters(hive.read_text(encoding="utf-8").splitlines())
    assert [f.source for f in found] == ["explain"]
    assert found[0].text.startswith("((id > 1) and (name) IN ('a', 'b')")
    for log in [*(_SHARED / "spark-driver-logs").glob("*.log"), _SHARED / "hive" / "hive-2.3.9-parquet-reader.log"]:
        assert distinct_filters(log.read_text(encoding="utf-8").splitlines()) == [], log
    for log in (_SHARED / "spark-eventlogs").rglob("events_*"):  # zstd bytes and JSON lines
        with open(log, encoding="utf-8", errors="replace") as fh:
            assert distinct_filters(fh) == [], log


def test_status_lines_statements_and_json_are_not_filters() -> None:
    lines = ["2024-01-01T10:00:00,123  INFO [main] ql.Driver: Compiling command(queryId=q1): SELECT id,",
             "  name", "FROM hp", "WHERE id > 1 AND name = 'c,d'", "OK", "Time taken: 1.2 seconds",
             '{"Event":"SparkListenerLogStart","Spark Version":"3.5.8"}', "Dictionary is true",
             "Number of reduce tasks is set to 0 since there's no reduce operator"]
    assert distinct_filters(lines) == []
    assert distinct_filters(['{"Event":"SparkListenerLogStart"}', "id = 5"]) == []
    assert [f.text for f in distinct_filters(["id = 5", "OK", "name IN ('a')"])] == ["id = 5", "name IN ('a')"]


def test_null_safe_equality_is_a_comparison_not_key_value() -> None:
    """``<=>`` is not the ``=>`` of a key-value line: a bare ``qty <=> NULL`` in a log is a filter."""
    lines = ["2024-01-01 10:00:00 INFO Main: started", "qty <=> NULL", "price <=> 37.94D", "key => value"]
    assert [f.text for f in distinct_filters(lines)] == ["qty <=> NULL", "price <=> 37.94D"]
