"""sarg.hiveql against the real thing: Hive 2.3.10's ConvertAstToSearchArg and Spark's OrcFilters (pyspark's jars).

``hiveql_oracle/HiveQlOracle.java`` is compiled once per module; one JVM answers every filter of a mode.

(b) Hive: each seeded random filter is rendered as HiveQL text in three styles (as Hive 3/4 prints filterExpr,
    as Hive 2 prints it, as people type it) and as an ExprNodeGenericFuncDesc tree of Hive's real GenericUDFs;
    the SearchArgument sarg.hiveql builds from every text must print exactly what ConvertAstToSearchArg builds.
    NOT BETWEEN goes to Hive as NOT(BETWEEN) (Hive's non-vectorized plans; 2.3.10's own flag is HIVE-24209).
(a) Spark: the same filter as Spark hands it to ORC (``gen.spark_view``: BETWEEN as >= AND <=, unpushable parts
    as a function) goes through OrcFilters.createFilter; sarg.hiveql on the view's text must print the same, and
    on the original filter be sound: on random rows, a row the filter accepts is never dropped.

The differences from Hive 2.3.10's boxLiteral are documented in sarg/hiveql/__init__.py and each one is asserted
below.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sarg.hiveql import parse_hiveql
from tests.sarg.hiveql_oracle import gen

pytestmark = pytest.mark.java

SOURCE = Path(__file__).with_name("hiveql_oracle") / "HiveQlOracle.java"
OPENS = ("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
         "java.util.concurrent", "sun.nio.ch", "sun.nio.cs", "sun.util.calendar")
SEED = 20261122
FILTERS = 400
ROWS = 40


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory, pyspark_jars: Path,
           java_tools: tuple[str, str]) -> Any:
    javac, java = java_tools
    out = tmp_path_factory.mktemp("hiveql_oracle")
    classpath = f"{pyspark_jars}/*"
    subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(out), str(SOURCE)],
                   check=True, capture_output=True, timeout=300)

    def run(mode: str, lines: list[str], *args: str) -> list[str]:
        cmd = [java, "-Duser.timezone=UTC", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
               *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in OPENS),
               "-cp", f"{classpath}:{out}", "HiveQlOracle", mode, *args]
        done = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True,
                              encoding="utf-8", timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        answers = [_unescape(line) for line in done.stdout.split("\n")[:-1]]
        assert len(answers) == len(lines), done.stderr[-3000:]
        return answers

    return run


def _unescape(line: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            out.append({"n": "\n", "r": "\r", "\\": "\\"}.get(line[i + 1], line[i + 1]))
            i += 2
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


@pytest.fixture(scope="module")
def filters() -> list[gen.Node]:
    rng = random.Random(SEED)
    return [gen.tree(rng) for _ in range(FILTERS)]


# -- (b) Hive's ConvertAstToSearchArg ----------------------------------------------------------------------

def test_every_style_reads_the_same_and_matches_hive(oracle: Any, filters: list[gen.Node]) -> None:
    answers = oracle("hive", [gen.dumps(gen.hive_json(node)) for node in filters])
    identical = 0
    kinds: Counter[str] = Counter()
    for n, (node, hive) in enumerate(zip(filters, answers, strict=True)):
        assert not hive.startswith("ERROR"), (n, hive)
        for style in gen.STYLES:
            text = gen.render(node, random.Random(n), style)
            ours = str(parse_hiveql(text, gen.SCHEMA))
            assert ours == hive, f"filter {n} ({style}):\n  {text}\n  ours: {ours}\n  hive: {hive}"
        identical += 1
        kinds["constant" if not hive.startswith(("leaf-", "(")) else "tree"] += 1
    assert identical == FILTERS
    # the generator must really exercise leaves, not only YES_NO_NULL
    assert kinds["tree"] > FILTERS * 0.6, kinds


# Where sarg.hiveql deliberately differs from Hive 2.3.10 (see sarg/hiveql/__init__.py): (filter JSON for Hive,
# HiveQL text, what Hive 2.3.10 builds, what we build)
C = {"col": "i", "type": "int"}
DOCUMENTED_DIFFERENCES = [
    pytest.param({"op": "between", "invert": True, "args": [C, {"const": "int", "value": "1"},
                                                             {"const": "int", "value": "5"}]},
                 "i NOT BETWEEN 1 AND 5", "leaf-(BETWEEN i 1 5)", "(not leaf-(BETWEEN i 1 5))",
                 id="HIVE-24209 NOT BETWEEN drops its NOT"),
    pytest.param({"op": "<", "args": [C, {"const": "double", "value": "5.5"}]},
                 "i < 5.5", "leaf-(LESS_THAN i 5)", "YES_NO_NULL", id="double truncated for an int column"),
    pytest.param({"op": "=", "args": [{"col": "d", "type": "double"}, {"const": "decimal", "value": "0.1"}]},
                 "d = 0.1BD", "leaf-(EQUALS d 0.10000000149011612)", "leaf-(EQUALS d 0.1)",
                 id="decimal rounded to float for a double column"),
    pytest.param({"op": "=", "args": [C, {"const": "string", "value": "7"}]},
                 "i = '7'", "YES_NO_NULL", "leaf-(EQUALS i 7)", id="string literal for an int column"),
    pytest.param({"op": "=", "args": [{"col": "s", "type": "string"}, {"const": "int", "value": "5"}]},
                 "s = 5", "leaf-(EQUALS s 5)", "YES_NO_NULL", id="number compared with a string column"),
    pytest.param({"op": "=", "args": [{"col": "ts", "type": "timestamp"}, {"const": "date", "value": "2020-01-02"}]},
                 "ts = DATE'2020-01-02'", "YES_NO_NULL", "leaf-(EQUALS ts 2020-01-02 00:00:00.0)",
                 id="date literal for a timestamp column"),
    pytest.param({"op": "=", "args": [{"col": "ts", "type": "timestamp"},
                                      {"const": "string", "value": "2020-01-02"}]},
                 "ts = '2020-01-02'", "YES_NO_NULL", "leaf-(EQUALS ts 2020-01-02 00:00:00.0)",
                 id="date-only string for a timestamp column"),
    pytest.param({"op": "<=>", "args": [C, {"const": "void", "value": None}]},
                 "i <=> NULL", "YES_NO_NULL", "leaf-(IS_NULL i)", id="<=> NULL is exactly IS NULL"),
    pytest.param({"op": "=", "args": [{"col": "dec", "type": "decimal(10,2)"},
                                      {"const": "double", "value": "1.00000000000000001"}]},
                 "dec = 1.00000000000000001", "leaf-(EQUALS dec 1)", "leaf-(EQUALS dec 1.00000000000000001)",
                 id="unsuffixed 1.00000000000000001 exact (Hive 3+ and Spark), not Hive 2's double"),
]


@pytest.fixture(scope="module")
def hive_on_differences(oracle: Any) -> dict[str, str]:
    """Hive's answers for every documented difference, from one JVM."""
    lines = [json.dumps(p.values[0]) for p in DOCUMENTED_DIFFERENCES]
    return dict(zip(lines, oracle("hive", lines), strict=True))


@pytest.mark.parametrize(("hive_json", "text", "hive_builds", "we_build"), DOCUMENTED_DIFFERENCES)
def test_documented_differences_from_hive_2_3(hive_on_differences: dict[str, str], hive_json: dict[str, Any],
                                              text: str, hive_builds: str, we_build: str) -> None:
    assert hive_on_differences[json.dumps(hive_json)] == hive_builds
    assert str(parse_hiveql(text, gen.SCHEMA)) == we_build


# -- (a) Spark's OrcFilters ------------------------------------------------------------------------------------

def test_spark_orc_conversion_agrees(oracle: Any, filters: list[gen.Node]) -> None:
    views = [gen.spark_view(node) for node in filters]
    answers = oracle("spark", [gen.dumps(gen.spark_json(node)) for node in filters], gen.SPARK_DDL)
    figures: Counter[str] = Counter()
    exact = [gen.fully_supported(node) for node in filters]
    rng = random.Random(SEED + 1)
    rows = [gen.random_row(rng) for _ in range(ROWS)]
    for n, (node, view, spark) in enumerate(zip(filters, views, answers, strict=True)):
        assert not spark.startswith("ERROR"), (n, spark)
        ours = parse_hiveql(gen.render(node, random.Random(n), "hive3"), gen.SCHEMA)
        on_view = None if view is None else parse_hiveql(gen.render(view, random.Random(n), "hive3"), gen.SCHEMA)
        # Spark pushes nothing exactly when it cannot convert the filter, or Hive's builder ends with YES_NO_NULL
        expected = "NONE" if on_view is None or str(on_view) == "YES_NO_NULL" else str(on_view)
        shown = "nothing" if view is None else gen.render(view, random.Random(n), "hive3")
        assert spark == expected, f"filter {n}: Spark's view: {shown}"
        if spark == str(ours) or (spark == "NONE" and str(ours) == "YES_NO_NULL"):
            figures["identical"] += 1
        elif spark == "NONE":
            figures["Spark pushes nothing (an unpushable part under OR/NOT)"] += 1
        else:
            figures["differs (Spark's BETWEEN, timestamp widening or dropped parts)"] += 1
        for row in rows:
            truth = gen.sql_truth(node, row)
            if truth is True:
                assert gen.sarg_truth(ours, row).is_needed(), (n, row)
                assert on_view is None or gen.sarg_truth(on_view, row).is_needed(), (n, row)
            if exact[n]:
                # every part of the filter became a leaf: the SearchArgument is the filter itself
                outcome = gen.sarg_truth(ours, row)
                assert (outcome.can_true, outcome.can_false, outcome.can_null) == (
                    truth is True, truth is False, truth is None), (n, row, truth, outcome)
    assert figures["identical"] > FILTERS * 0.5, figures
    assert sum(exact) > FILTERS * 0.2, sum(exact)
    print(f"\nSpark OrcFilters vs sarg.hiveql over {FILTERS} filters: {dict(figures)}; "
          f"{sum(exact)} filters fully pushed, checked row by row for the exact SQL truth")


# -- forms Hive has, read as Hive reads them (Hive 2.3.10 has no IS TRUE: its equivalent <=> is asked) ----------

B = {"col": "b", "type": "boolean"}
DBL = {"col": "d", "type": "double"}
DD = {"col": "dd", "type": "decimal(38,24)"}
FORMS_SCHEMA = {**gen.SCHEMA, "dd": "decimal(38,24)"}


def _not(node: dict[str, Any]) -> dict[str, Any]:
    return {"op": "not", "args": [node]}


def _const(kind: str, value: str) -> dict[str, Any]:
    return {"const": kind, "value": value}


SAME_AS_HIVE = [
    pytest.param({"op": "<=>", "args": [B, _const("boolean", "false")]}, ["b <=> false", "b IS FALSE"], id="false"),
    pytest.param({"op": "<=>", "args": [B, _const("boolean", "true")]}, ["b <=> true", "b IS TRUE"], id="true"),
    pytest.param(_not({"op": "<=>", "args": [B, _const("boolean", "true")]}),
                 ["NOT (b <=> true)", "b IS NOT TRUE", "b IS DISTINCT FROM true"], id="not true (NULL too)"),
    pytest.param(_not({"op": "<=>", "args": [B, _const("boolean", "false")]}), ["b IS NOT FALSE"], id="not false"),
    pytest.param(B, ["b"], id="bare boolean"),
    pytest.param(_not(B), ["NOT b", "!b"], id="not boolean"),
    pytest.param({"op": "<=>", "args": [DBL, _const("double", "37.94")]},
                 ["d <=> 37.94D", "d IS NOT DISTINCT FROM 37.94D"], id="null-safe double"),
    pytest.param({"op": "<=>", "args": [DBL, _const("double", "NaN")]}, ["isnan(d)", "d <=> double('NaN')"],
                 id="isnan"),
    pytest.param({"op": "=", "args": [DBL, _const("double", "NaN")]},
                 ["d = double('NaN')", "d = cast('NaN' as double)", "d = CAST('NaN' AS DOUBLE)"], id="NaN"),
    pytest.param({"op": "isnull", "args": [C]}, ["isnull(i)", "i IS NULL"], id="isnull"),
    pytest.param({"op": ">", "args": [DD, _const("decimal(29,24)", "12345.678899999999999999999999")]},
                 ["dd > 12345.678899999999999999999999", "dd > 12345.678899999999999999999999BD"],
                 id="decimal exact"),
    pytest.param({"op": ">", "args": [DD, _const("decimal(34,28)", "12345.6788999999999999999999999999")]},
                 ["dd > 12345.6788999999999999999999999999"], id="decimal with more scale than the column"),
    pytest.param({"op": "in", "args": [DD, _const("decimal(2,1)", "1.5"), _const("decimal(25,24)",
                                                                                     "-0.000000000000000000000001")]},
                 ["dd IN (1.5, -0.000000000000000000000001)"], id="decimal IN"),
]


@pytest.fixture(scope="module")
def hive_on_forms(oracle: Any) -> dict[str, str]:
    lines = [json.dumps(p.values[0]) for p in SAME_AS_HIVE]
    return dict(zip(lines, oracle("hive", lines), strict=True))


@pytest.mark.parametrize(("hive_json", "texts"), SAME_AS_HIVE)
def test_forms_read_as_hive_reads_them(hive_on_forms: dict[str, str], hive_json: dict[str, Any],
                                       texts: list[str]) -> None:
    hive = hive_on_forms[json.dumps(hive_json)]
    assert "leaf" in hive, hive  # Hive has the form: a leaf, not YES_NO_NULL
    for text in texts:
        assert str(parse_hiveql(text, FORMS_SCHEMA)) == hive, text


# -- decimal literals against Hive, one JVM asked line by line --------------------------------------------------

@pytest.fixture(scope="module")
def hive_live(tmp_path_factory: pytest.TempPathFactory, pyspark_jars: Path,
              java_tools: tuple[str, str]) -> Iterator[Callable[[dict[str, Any]], str]]:
    javac, java = java_tools
    out = tmp_path_factory.mktemp("hiveql_oracle_live")
    classpath = f"{pyspark_jars}/*"
    subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(out), str(SOURCE)],
                   check=True, capture_output=True, timeout=300)
    proc = subprocess.Popen([java, "-Duser.timezone=UTC", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                             *(f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in OPENS),
                             "-cp", f"{classpath}:{out}", "HiveQlOracle", "hive"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            encoding="utf-8", bufsize=1)
    assert proc.stdin is not None and proc.stdout is not None

    def ask(node: dict[str, Any]) -> str:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(node) + "\n")
        proc.stdin.flush()
        return _unescape(proc.stdout.readline().rstrip("\n"))

    try:
        yield ask
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def _decimal_type(text: str) -> str:
    """The type Hive 3's lexer gives a decimal literal (``HiveDecimal``: trailing zeros do not count)."""
    _, digits, exponent = Decimal(text).normalize(Context(prec=100)).as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    return f"decimal({max(len(digits) + max(0, exponent), scale, 1)},{scale})"


@st.composite
def _decimal_filters(draw: Any) -> tuple[str, str, str, list[str]]:
    precision = draw(st.integers(1, 38))
    column_type = f"decimal({precision},{draw(st.integers(0, precision))})"
    op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">=", "<=>", "in", "between"]))
    integral = draw(st.integers(0, 20))
    texts = []
    for _ in range({"in": draw(st.integers(1, 3)), "between": 2}.get(op, 1)):
        head = draw(st.text("0123456789", min_size=integral, max_size=integral)).lstrip("0") or "0"
        tail = draw(st.text("0123456789", min_size=0, max_size=38 - max(len(head), 1)))
        texts.append(("-" if draw(st.booleans()) else "") + head + ("." + tail if tail else ".0"))
    return column_type, op, draw(st.sampled_from(["", "BD"])), texts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_decimal_filters())
def test_decimal_literals_as_hive_reads_decimals(hive_live: Callable[[dict[str, Any]], str],
                                                 case: tuple[str, str, str, list[str]]) -> None:
    """A decimal column against a decimal literal of at most 38 digits (``12.5``, as Hive 3+ types it, and
    ``12.5BD``): exactly Hive's SearchArgument, whatever the column's and the literal's precision and scale."""
    column_type, op, suffix, texts = case
    col = {"col": "x", "type": column_type}
    consts = [_const(_decimal_type(t), t) for t in texts]
    node: dict[str, Any] = {"op": op, "args": [col, *consts]}
    if op == "between":
        node["invert"] = False
    lits = [t + suffix for t in texts]
    text = (f"x IN ({', '.join(lits)})" if op == "in" else f"x BETWEEN {lits[0]} AND {lits[1]}"
            if op == "between" else f"x {op} {lits[0]}")
    hive = hive_live(node)
    assert not hive.startswith("ERROR"), (node, hive)
    assert str(parse_hiveql(text, {"x": column_type})) == hive, text
