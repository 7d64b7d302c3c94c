"""Filter forms the readers take or list as unknown, without Spark: Spark's printed LIKE / RLIKE / boolean / NaN /
decimal forms as they appear in real plans (pyspark 4.3), HiveQL parts that cannot prune listed with their text,
files of filters with boolean forms, and replay's listing of unknown parts (the rows' truth is in
``test_filter_forms_spark.py``)."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

import sarg
from hive_bridge.app.cli import main
from hive_bridge.filters.residual import sql_literal
from hive_bridge.testing.writer import HudiWriter
from hive_bridge.workload.logscan import distinct_filters
from hive_bridge.workload.printed_filters import translate_lists

TYPES = {"id": "bigint", "qty": "int", "price": "double", "flag": "boolean", "s": "string", "d": "decimal(38,24)"}

#: (DataFilters, PushedFilters) as pyspark 4.3 printed them for a query, and what is read from them
SPARK_PLANS = [
    ("[isnotnull(qty#1), isnotnull(s#4), (qty#1 > 1), s#4 LIKE %special%requests%]",
     "[IsNotNull(qty), IsNotNull(s), GreaterThan(qty,1)]",
     "qty IS NOT NULL AND s IS NOT NULL AND qty > 1", ["s#4 LIKE %special%requests%"]),
    ("[isnotnull(s#4), RLIKE(s#4, a.*b)]", "[IsNotNull(s)]", "s IS NOT NULL", ["RLIKE(s#4, a.*b)"]),
    ("[isnotnull(s#4), Contains(lower(s#4), a)]", "[IsNotNull(s)]", "s IS NOT NULL", ["Contains(lower(s#4), a)"]),
    ("[isnotnull(s#4), Contains(s#4, x)]", "[IsNotNull(s), StringContains(s,x)]", "s IS NOT NULL",
     ["Contains(s#4, x)"]),
    ("[isnan(price#2)]", "[]", "isnan(price)", []),
    ("[isnotnull(flag#3), NOT flag#3]", "[IsNotNull(flag), Not(EqualTo(flag,true))]",
     "flag IS NOT NULL AND NOT flag AND NOT flag = true", []),
    ("[NOT (flag#3 <=> true)]", "[Not(EqualNullSafe(flag,true))]", "NOT flag <=> true", []),
    ("[isnotnull(price#2), (price#2 = NaN)]", "[IsNotNull(price), EqualTo(price,NaN)]",
     "price IS NOT NULL AND price = CAST('NaN' AS DOUBLE)", []),
    ("[isnotnull(price#2), (price#2 > Infinity)]", "[IsNotNull(price), GreaterThan(price,Infinity)]",
     "price IS NOT NULL AND price > CAST('Infinity' AS DOUBLE)", []),
    ("[isnotnull(d#5), (d#5 = 1.00000000000000000E-7)]", "[IsNotNull(d), EqualTo(d,1.00000000000000000E-7)]",
     "d IS NOT NULL AND d = 0.000000100000000000000000", []),
    ("[isnotnull(d#5), (cast(d#5 as double) > 1.5)]", "[IsNotNull(d)]", "d IS NOT NULL",
     ["(cast(d#5 as double) > 1.5)"]),
    ("[isnotnull(d#5), (cast(d#5 as decimal(38,28)) > 12345.6788999999999999999999999999)]", "[IsNotNull(d)]",
     "d IS NOT NULL AND d > 12345.6788999999999999999999999999", []),
]


def test_spark_plans_read_with_their_unknown_parts_listed() -> None:
    for data, pushed, hiveql, unknown in SPARK_PLANS:
        tr = translate_lists([(data, False), (pushed, True)], TYPES)
        assert (tr.hiveql, tr.unknown_texts, tr.unread) == (hiveql, unknown, []), data
        sarg.parse_hiveql(hiveql, TYPES)


def test_unknown_parts_inside_an_or_are_listed_and_driver_log_separators_end_patterns() -> None:
    tr = translate_lists([("[(s#4 LIKE %a, b% OR (qty#1 = 1)), (qty#1 > 0)]", False)], TYPES)
    assert (tr.hiveql, tr.unknown_texts) == ("(unknown() OR qty = 1) AND qty > 0", ["s#4 LIKE %a, b%"])
    tr = translate_lists([("[isnotnull(flag#3),flag#3,s#4 LIKE %a,b%,(qty#1 > 0)]", False, ",")], TYPES)
    assert (tr.hiveql, tr.unknown_texts) == ("flag IS NOT NULL AND flag AND qty > 0", ["s#4 LIKE %a,b%"])
    # a cast of a decimal column to less scale rounds: not the column's value
    assert translate_lists([("[(cast(d#5 as decimal(38,2)) > 1.5)]", False)], TYPES).hiveql is None


def test_hiveql_parts_that_cannot_prune_are_listed_with_their_text() -> None:
    parsed = sarg.parse_hiveql("qty > 3 AND s LIKE '%special%requests%' AND upper(s) = 'X' AND qty = 'q'", TYPES)
    assert str(parsed) == "(not leaf-(LESS_THAN_EQUALS qty 3))"
    assert [(u.text, u.reason) for u in parsed.unknowns] == [
        ("s LIKE '%special%requests%'", "LIKE has no SearchArgument leaf"),
        ("upper(s) = 'X'", "a comparison needs exactly one column"), ("qty = 'q'", "'q' is not an integer")]
    # an exact prefix prunes (a prefix condition): not unknown
    assert sarg.parse_hiveql("s LIKE 'abc%' AND qty = 1", TYPES).unknowns == ()


def test_files_of_filters_take_boolean_forms_and_logs_do_not() -> None:
    forms = ["flag", "NOT flag", "c IS NOT TRUE", "isnan(price)", "qty <=> NULL", "isnull(qty)", "!flag"]
    assert [f.text for f in distinct_filters(forms)] == forms
    in_log = ["2024-01-01 10:00:00 INFO main: started", "flag", "Dictionary is true", "qty <=> NULL"]
    assert [f.text for f in distinct_filters(in_log)] == ["qty <=> NULL"]


def test_residual_decimal_literals_keep_their_digits() -> None:
    assert sql_literal(Decimal("1E+3")) == "CAST('1000' AS DECIMAL(4,0))"
    assert sql_literal(Decimal("12345.678899999999999999999999")) == \
        "CAST('12345.678899999999999999999999' AS DECIMAL(29,24))"


def _run(*argv: str) -> list[dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    assert main(list(argv), stdout=out, stderr=err) == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def test_replay_lists_unknown_parts(tmp_path: Path) -> None:
    table = tmp_path / "t"
    HudiWriter(table, rows_per_file=1).insert(pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), "qty": pa.array([1, 4, None], pa.int32()),
        "s": pa.array(["a special requests", "special x requests", None])}))
    filters = tmp_path / "filters.txt"
    filters.write_text("qty > 3 AND s LIKE '%special%requests%'\nqty <=> NULL\n")
    *records, summary = _run("replay", "--json", "--table", str(table), str(filters))
    assert summary["summary"] is True and summary["filters"] == 2
    rows = {r["filter"]: r for r in records}
    like = rows["qty > 3 AND s LIKE '%special%requests%'"]
    assert like["files_kept"] == 1 and like["unknown_parts"] == [
        "s LIKE '%special%requests%' (LIKE has no SearchArgument leaf)"]
    assert rows["qty <=> NULL"]["files_kept"] == 1 and rows["qty <=> NULL"]["unknown_parts"] == []


def test_hiveserver2_statements_list_what_their_filter_cannot_say(tmp_path: Path) -> None:
    table = tmp_path / "t"
    HudiWriter(table, rows_per_file=1).insert(pa.table({
        "id": pa.array([1, 2, 3], pa.int64()), "qty": pa.array([1, 4, None], pa.int32()),
        "s": pa.array(["a special requests", "special x requests", None])}))
    log = tmp_path / "hiveserver2.log"
    log.write_text("2024-01-01T10:00:00,123  INFO [HiveServer2-Background-Pool: Thread-45] ql.Driver: Compiling "
                   "command(queryId=hive_1): SELECT id FROM t\nWHERE qty > 3 AND s LIKE '%special%requests%' "
                   "AND NOT (qty <=> NULL)\n"
                   "2024-01-01T10:00:01,001  INFO [x] ql.Driver: Completed compiling command(queryId=hive_1)\n")
    [row] = [r for r in _run("replay", "--json", "--table", f"t={table}", str(log)) if "filter" in r]
    assert row["files_kept"] == 1 and row["unknown_filters"] == 1, row
    assert row["unknown_filter_texts"] == ["s LIKE '%special%requests%' (LIKE has no SearchArgument leaf)"]
