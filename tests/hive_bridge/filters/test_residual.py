"""The residual: a SearchArgument as Spark SQL selects exactly the rows SQL's three-valued logic says,
and a leaf that cannot be applied to rows widens (never narrows) the result."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import sarg
from hive_bridge.filters.residual import quote_identifier, sql_literal, sql_string, to_sql

pytestmark = pytest.mark.spark

ROWS = [
    (1, "a", 1.5, Decimal("12.50"), dt.date(2024, 1, 1), dt.datetime(2024, 1, 1, 10, 0, 0), True),
    (2, "it's", float("nan"), Decimal("0.10"), dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 10, 0, 0, 1), False),
    (3, "b\\c", -0.0, None, None, None, None),
    (None, None, None, Decimal("-3.00"), dt.date(2024, 1, 3), dt.datetime(2024, 1, 3), True),
]
SCHEMA = "struct<id:bigint,s:string,f:double,d:decimal(10,2),day:date,ts:timestamp,b:boolean>"


@pytest.fixture(scope="module")
def df(spark):  # type: ignore[no-untyped-def]
    from pyspark.sql.types import (
        BooleanType,
        DateType,
        DecimalType,
        DoubleType,
        LongType,
        StringType,
        StructField,
        StructType,
        TimestampNTZType,
    )

    schema = StructType([StructField("id", LongType()), StructField("s", StringType()),
                         StructField("f", DoubleType()), StructField("d", DecimalType(10, 2)),
                         StructField("day", DateType()), StructField("ts", TimestampNTZType()),
                         StructField("b", BooleanType())])
    return spark.createDataFrame(ROWS, schema)


CASES = [
    ("leaf-(EQUALS id 1)", {1}),
    ("(not leaf-(EQUALS id 1))", {2, 3}),  # NULL id: unknown, filtered out
    ("leaf-(NULL_SAFE_EQUALS id 2)", {2}),
    ("(not leaf-(IS_NULL id))", {1, 2, 3}),
    ("leaf-(IS_NULL id)", {None}),
    ("leaf-(IN s a it's)", {1, 2}),
    ("leaf-(EQUALS s b\\c)", {3}),
    ("leaf-(EQUALS f NaN)", {2}),  # Spark: NaN = NaN
    ("(not leaf-(LESS_THAN_EQUALS f 1.0))", {1, 2}),  # NaN sorts above every number
    ("leaf-(EQUALS f 0.0)", {3}),  # -0.0 = 0.0
    ("leaf-(EQUALS d 12.5)", {1}),
    ("leaf-(BETWEEN d -3 0.1)", {2, None}),
    ("leaf-(LESS_THAN day 2024-01-02)", {1}),
    ("leaf-(EQUALS ts 2024-01-02 10:00:00.000001)", {2}),
    ("leaf-(EQUALS b true)", {1, None}),
    ("(or leaf-(EQUALS id 1) leaf-(IS_NULL s))", {1, None}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_sql_selects_the_sql_rows(df, text: str, expected: set) -> None:  # type: ignore[no-untyped-def]
    s = sarg.parse(text, SCHEMA)
    got = {r[0] for r in df.where(to_sql(s)).select("id").collect()}
    assert got == expected, to_sql(s)


def test_unknown_leaves_widen_even_under_not(df) -> None:  # type: ignore[no-untyped-def]
    s = sarg.parse("(and leaf-(EQUALS id 1) (not leaf-(EQUALS id DynamicValue(RS_1_id_min))))", SCHEMA)
    assert to_sql(s) == "((`id` = CAST(1 AS BIGINT)) AND TRUE)"
    assert {r[0] for r in df.where(to_sql(s)).select("id").collect()} == {1}


def test_literals_and_identifiers() -> None:
    assert sql_string("it's \\ ok") == "'it\\'s \\\\ ok'"
    assert quote_identifier("a.b`c") == "`a`.`b``c`"
    assert sql_literal(None) == "NULL"
    assert sql_literal(2**40) == f"{2**40}L"
    assert sql_literal(float("-inf")) == "CAST('-Infinity' AS DOUBLE)"
    assert sql_literal(Decimal("0.0010")) == "CAST('0.0010' AS DECIMAL(4,4))"
