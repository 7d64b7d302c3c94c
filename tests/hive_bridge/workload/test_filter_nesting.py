"""Nesting: every reader of filter text (HiveQL, SearchArgument text, Spark's Catalyst and V1 filters, parquet's
predicates, HiveServer2 statements) refuses a filter nested deeper than ``sarg.MAX_DEPTH`` levels with the same
error (never a RecursionError), accepts one of exactly that many, and reads a chain of thousands of ORs (an OR in
an OR is one level) without recursing."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

import sarg
from hive_bridge.app.cli import main
from hive_bridge.testing.writer import HudiWriter
from hive_bridge.workload.hiveserver2 import SqlError, table_filters
from hive_bridge.workload.parquet import predicate_to_hiveql
from hive_bridge.workload.printed_filters import translate_lists

REASON = f"expression nested deeper than {sarg.MAX_DEPTH} levels"
TYPES = {"a": "int"}


def alternating(operators: int, leaf: Callable[[int], str], node: Callable[[str, str, str], str],
                words: tuple[str, str]) -> str:
    """``operators`` nested operators, AND and OR by turns (``operators + 1`` levels with the leaves)."""
    text = leaf(0)
    for i in range(operators):
        text = node(words[i % 2], leaf(i + 1), text)
    return text


def hiveql(n: int) -> str:
    return alternating(n, lambda i: f"a = {i}", lambda w, x, y: f"{x} {w} ({y})", ("AND", "OR"))


def sarg_text(n: int) -> str:
    return alternating(n, lambda i: f"leaf-(EQUALS a {i})", lambda w, x, y: f"({w} {x} {y})", ("and", "or"))


def catalyst(n: int) -> str:
    return "[" + alternating(n, lambda i: f"(a#1 = {i})", lambda w, x, y: f"({x} {w} {y})", ("AND", "OR")) + "]"


def v1(n: int) -> str:
    return "[" + alternating(n, lambda i: f"EqualTo(a,{i})", lambda w, x, y: f"{w}({x},{y})", ("And", "Or")) + "]"


def parquet(n: int) -> str:
    return alternating(n, lambda i: f"eq(a, {i})", lambda w, x, y: f"{w}({x}, {y})", ("and", "or"))


def sql(n: int) -> str:
    return "SELECT * FROM t WHERE " + hiveql(n)


def _hiveql_error(text: str) -> str | None:
    try:
        sarg.parse_hiveql(text, TYPES)
    except sarg.SargSyntaxError as exc:
        return exc.reason
    return None


def _sarg_error(text: str) -> str | None:
    try:
        sarg.parse(text, TYPES)
    except sarg.SargSyntaxError as exc:
        return exc.reason
    return None


def _spark_error(text: str, v1_form: bool) -> str | None:
    tr = translate_lists([(text, v1_form)], TYPES)
    if tr.unread:
        return tr.unread_reasons[0]
    assert tr.hiveql is not None
    return _hiveql_error(tr.hiveql)  # what the replay reads next


def _parquet_error(text: str) -> str | None:
    try:
        out, _ = predicate_to_hiveql(text, TYPES)
    except sarg.SargSyntaxError as exc:
        return exc.reason
    assert out is not None
    return _hiveql_error(out)


def _sql_error(text: str) -> str | None:
    try:
        [found] = table_filters(text, "default", lambda name: TYPES)
    except SqlError as exc:
        return str(exc)
    assert found.hiveql is not None
    return _hiveql_error(found.hiveql)


READERS = [
    pytest.param(hiveql, _hiveql_error, id="HiveQL"),
    pytest.param(sarg_text, _sarg_error, id="SearchArgument"),
    pytest.param(catalyst, lambda t: _spark_error(t, False), id="Catalyst"),
    pytest.param(v1, lambda t: _spark_error(t, True), id="V1"),
    pytest.param(parquet, _parquet_error, id="parquet"),
    pytest.param(sql, _sql_error, id="HiveServer2 SQL"),
]


@pytest.mark.parametrize(("make", "error"), READERS)
def test_5000_levels_are_refused_with_the_same_error(make: Callable[[int], str],
                                                     error: Callable[[str], str | None]) -> None:
    message = error(make(5000))
    assert message is not None and REASON in message, message


@pytest.mark.parametrize(("make", "error"), [p for p in READERS if p.id != "HiveServer2 SQL"])
def test_the_limit_is_the_same_everywhere(make: Callable[[int], str], error: Callable[[str], str | None]) -> None:
    assert error(make(sarg.MAX_DEPTH - 1)) is None  # MAX_DEPTH levels, leaves counted
    assert error(make(sarg.MAX_DEPTH)) == REASON


def test_sql_refuses_brackets_as_deep_as_the_limit() -> None:
    assert _sql_error(sql(sarg.MAX_DEPTH // 2)) is None
    message = _sql_error(sql(sarg.MAX_DEPTH))
    assert message is not None and REASON in message


@pytest.mark.parametrize("form", ["hiveql", "catalyst", "v1", "parquet", "sql"])
def test_a_chain_of_5000_ors_is_one_level(form: str) -> None:
    n = 5000
    texts = {"hiveql": " OR ".join(f"a = {i}" for i in range(n)),
             "catalyst": "[" + "(" * (n - 1) + "(a#1 = 0)" + "".join(f" OR (a#1 = {i}))" for i in range(1, n)) + "]",
             "v1": "[" + "Or(" * (n - 1) + "EqualTo(a,0)" + "".join(f",EqualTo(a,{i}))" for i in range(1, n)) + "]",
             "parquet": "or(" * (n - 1) + "eq(a, 0)" + "".join(f", eq(a, {i}))" for i in range(1, n)),
             "sql": "SELECT * FROM t WHERE " + " OR ".join(f"a = {i}" for i in range(n))}
    text = texts[form]
    if form == "hiveql":
        out: str | None = text
    elif form in ("catalyst", "v1"):
        out = translate_lists([(text, form == "v1")], TYPES).hiveql
    elif form == "parquet":
        out, _ = predicate_to_hiveql(text, TYPES)
    else:
        [found] = table_filters(text, "default", lambda name: TYPES)
        out = found.hiveql
    assert out is not None
    parsed = sarg.parse_hiveql(out, TYPES)
    assert len(parsed.leaves) == n and str(parsed).startswith("(or leaf-(EQUALS a 0) leaf-(EQUALS a 1) ")


def test_replay_reports_a_too_deep_filter_and_goes_on(tmp_path: Path) -> None:
    table = tmp_path / "t"
    HudiWriter(table, rows_per_file=1).insert(pa.table({"id": pa.array([1, 2], pa.int64()),
                                                         "a": pa.array([1, 2], pa.int32())}))
    lines = []
    for pushed, post in [(v1(5000)[1:-1], catalyst(5000)[1:-1]), ("EqualTo(a,2)", "(a#1 = 2)")]:
        lines += ["26/11/27 02:57:42 INFO DataSourceStrategy: Pruning directories with: ",
                  f"26/11/27 02:57:42 INFO FileSourceStrategy: Pushed Filters: {pushed}",
                  f"26/11/27 02:57:42 INFO FileSourceStrategy: Post-Scan Filters: {post}"]
    log = tmp_path / "driver.log"
    log.write_text("\n".join(lines) + "\n")
    out, err = io.StringIO(), io.StringIO()
    main(["replay", "--json", "--table", str(table), str(log)], stdout=out, stderr=err)
    rows = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
    assert REASON in err.getvalue() and f"{log}:3" in err.getvalue(), err.getvalue()[-2000:]
    planned = {r["filter"]: r for r in rows if "filter" in r}
    assert planned["a = 2"]["files_kept"] == 1                       # the next scan is planned as usual
    assert planned[None]["files_kept"] == 2 and planned[None]["unknown_filters"] == 1   # kept, counted
