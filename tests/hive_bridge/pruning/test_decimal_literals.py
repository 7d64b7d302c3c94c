"""A decimal column's literal is a decimal, compared exactly (never through a double), in every form a filter
arrives in: HiveQL text (``12.50`` and ``12.50BD``), a printed SearchArgument, Spark's printed Catalyst and V1
filters. Random decimal(p, s) columns, literals with fewer or more digits than the scale (negative, huge, ties
for rounding), files of values around them: a file holding a row the filter matches — exactly, as Hive compares,
or after Spark's rounding of the literal (``decimal_model``) — is never skipped. The real tables and Spark's
own reading are in ``test_filter_forms_spark.py``."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.app.cli import main
from hive_bridge.pruning.scalar import evaluate
from hive_bridge.stats.contract import ColumnStats, FileStats
from hive_bridge.testing.writer import HudiWriter
from hive_bridge.workload.printed_filters import translate_lists
from tests.hive_bridge import decimal_model as dm

#: across the property's examples: files skipped, per form
SKIPPED: dict[str, int] = {}


def _stats(column: dm.Column, values: list[Decimal | None]) -> FileStats:
    present = [v for v in values if v is not None]
    cs = ColumnStats(min(present) if present else None, max(present) if present else None,
                     len(values) - len(present), True, True, None)
    return FileStats(len(values), {"d": cs}, {"d": pa.decimal128(column.precision, column.scale)})


def _readings(column: dm.Column, op: str, texts: list[str]) -> dict[str, sarg.SearchArgument]:
    """The filter read from each form it arrives in."""
    schema = {"d": column.hive_type}
    forms = {"hiveql": sarg.parse_hiveql(dm.hiveql(op, "d", texts), schema),
             "hiveql BD": sarg.parse_hiveql(dm.hiveql(op, "d", texts, "BD"), schema)}
    forms["printed SearchArgument"] = sarg.parse(str(forms["hiveql BD"]), schema)
    for name, text, is_v1 in (("catalyst", dm.catalyst(op, texts), False), ("v1", dm.v1(op, texts), True)):
        translated = translate_lists([(text, is_v1)], schema)
        forms[name] = sarg.parse_hiveql(translated.hiveql or "unknown()", schema)
    return forms


@st.composite
def cases(draw: Any) -> tuple[dm.Column, str, list[str], list[list[Decimal | None]]]:
    column = draw(dm.columns)
    op = draw(st.sampled_from(dm.OPS))
    first = draw(dm.literal_text(column))
    count = {"in": draw(st.integers(1, 3)), "not in": draw(st.integers(1, 3)), "between": 2, "not between": 2}
    texts = [first] + [draw(dm.literal_text(column, Decimal(first))) for _ in range(count.get(op, 1) - 1)]
    files = [draw(dm.values_near(column, texts)) for _ in range(draw(st.integers(1, 4)))]
    return column, op, texts, files


@settings(max_examples=300, deadline=None)
@given(case=cases())
def test_no_form_drops_a_file_with_a_matching_row(case: tuple[dm.Column, str, list[str],
                                                                list[list[Decimal | None]]]) -> None:
    column, op, texts, files = case
    for form, parsed in _readings(column, op, texts).items():
        for values in files:
            needed = any(dm.matches(column, op, v, texts) for v in values)
            verdict = evaluate(parsed, _stats(column, values))
            assert verdict.keep or not needed, (
                f"{form}: {dm.hiveql(op, 'd', texts)} on {column.hive_type} skipped a file holding {values}: "
                f"{parsed} ({verdict.reasons})")
            SKIPPED[form] = SKIPPED.get(form, 0) + (not verdict.keep)


def test_the_property_had_teeth() -> None:
    """Run after the property (file order): every form skipped files, so the property tested pruning."""
    if not SKIPPED:
        pytest.skip("the property did not run in this session")
    assert all(SKIPPED.get(form, 0) > 0 for form in ("hiveql", "hiveql BD", "printed SearchArgument", "catalyst",
                                                     "v1")), SKIPPED


@pytest.mark.parametrize(("text", "literal"), [
    ("d > 12345.678899999999999999999999", "12345.678899999999999999999999"),
    ("d > 12345.6788999999999999999999999999", "12345.6788999999999999999999999999"),
    ("d < -0.000000000000000000000001", "-1E-24"),
    ("d = 99999999999999.999999999999999999999999", "99999999999999.999999999999999999999999"),
    ("d IN (1.5, 12345.678899999999999999999999)", "12345.678899999999999999999999"),
    ("CAST(12345.678899999999999999999999 AS decimal(38,24)) < d", "12345.678899999999999999999999"),
])
def test_hiveql_decimal_literals_are_exact(text: str, literal: str) -> None:
    parsed = sarg.parse_hiveql(text, {"d": "decimal(38,24)"})
    values = [v for leaf in parsed.leaves for v in (leaf.literals or (leaf.literal,))]
    assert Decimal(literal) in values and all(isinstance(v, Decimal) for v in values), parsed


def test_double_literals_stay_doubles() -> None:
    """``1.5D`` and ``1e3`` are doubles (Hive and Spark compare them as doubles): boxed as Hive boxes them and
    marked, with or without ``spark_rows``, so pruning judges them as doubles (a double equals several
    decimals)."""
    schema = {"d": "decimal(38,24)"}
    parsed = sarg.parse_hiveql("d > 12345.678899999999999999999999D", schema)
    assert str(parsed) == "(not leaf-(LESS_THAN_EQUALS d 12345.6789))" and parsed.leaves[0].double is sarg.DoubleReading.DOUBLE
    spark = sarg.parse_hiveql("d > 1e3", schema, spark_rows=True)
    assert str(spark) == "(not leaf-(LESS_THAN_EQUALS d 1000))" and spark.leaves[0].double is sarg.DoubleReading.DOUBLE
    assert str(sarg.parse_hiveql("d > 12345.678899999999999999999999", schema, spark_rows=True)) == \
        "(not leaf-(LESS_THAN_EQUALS d 12345.678899999999999999999999))"


def _run(*argv: str) -> list[dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    assert main(list(argv), stdout=out, stderr=err) == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def test_driver_log_decimal_filters_keep_the_files_holding_matches(tmp_path: Path) -> None:
    """The reliability probe's case: Spark's driver log through replay against a real table written by the test
    writer (one value per file). ``GreaterThan(d,12345.678899999999999999999999)`` was read as 12345.6789 and
    skipped the file holding 12345.67890; ``LessThan(d,11111.222220000000000000000001)`` kept no file."""
    table = tmp_path / "t"
    values = [Decimal("11111.22222"), Decimal("12345.67890"), Decimal("99999.1")]
    HudiWriter(table, rows_per_file=1).insert(pa.table({"id": pa.array([1, 2, 3], pa.int64()),
                                                         "d": pa.array(values, pa.decimal128(38, 24))}))
    log = tmp_path / "driver.log"
    scans = [("GreaterThan(d,12345.678899999999999999999999)", "(d#1 > 12345.678899999999999999999999)"),
             ("LessThan(d,11111.222220000000000000000001)", "(d#1 < 11111.222220000000000000000001)"),
             ("GreaterThan(d,12345.678900000000000000000000)", "(d#1 > 12345.678900000000000000000000)")]
    lines = []
    for v1, catalyst in scans:
        lines += ["26/11/27 02:57:42 INFO DataSourceStrategy: Pruning directories with: ",
                  f"26/11/27 02:57:42 INFO FileSourceStrategy: Pushed Filters: IsNotNull(d),{v1}",
                  f"26/11/27 02:57:42 INFO FileSourceStrategy: Post-Scan Filters: isnotnull(d#1),{catalyst}"]
    log.write_text("\n".join(lines) + "\n")
    rows = {r["filter"]: r for r in _run("replay", "--json", "--table", str(table), str(log)) if "filter" in r}
    assert rows["d IS NOT NULL AND d > 12345.678899999999999999999999"]["files_kept"] == 2
    assert rows["d IS NOT NULL AND d < 11111.222220000000000000000001"]["files_kept"] == 1
    assert rows["d IS NOT NULL AND d > 12345.678900000000000000000000"]["files_kept"] == 1   # still prunes
    assert all(r["unknown_filters"] == 0 for r in rows.values())
