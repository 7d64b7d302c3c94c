"""The ORC table the integration tests create through HiveServer2, and the queries they run against it.

Every SearchArgument type (bigint, int, double, string, varchar, date, timestamp, decimal, boolean) has a column,
every column holds nulls somewhere, and the rows go in as three INSERTs with clustered values (so several files
with distinct min/max ranges: what a replay against a Hudi table with the same rows can prune).
Each query names the SQL operators it exercises and the leaves its SearchArgument must hold.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

DATABASE = "hive_bridge_it"
TABLE = "sarg_types"
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "bigint"), ("n", "int"), ("x", "double"), ("s", "string"), ("v", "varchar(10)"), ("d", "date"),
    ("ts", "timestamp"), ("amount", "decimal(10,2)"), ("flag", "boolean"),
)
# The schema as Spark's ORC reader logs it for these files (varchar is a string in the file).
STRUCT_SCHEMA = ("struct<id:bigint,n:int,x:double,s:string,v:string,d:date,ts:timestamp,amount:decimal(10,2),"
                 "flag:boolean>")

Row = tuple[Any, ...]
D, T, M = dt.date, dt.datetime, Decimal
# Three batches, one INSERT each: ids 1-4, 5-8, 9-12 (and a null id).
BATCHES: tuple[tuple[Row, ...], ...] = (
    (
        (1, 10, 0.5, "alpha", "a1", D(2024, 1, 1), T(2024, 1, 1, 8, 0), M("1.25"), True),
        (2, 20, 1.5, "bravo", "b2", D(2024, 1, 10), T(2024, 1, 10, 9, 30, 0, 500000), M("2.50"), False),
        (3, None, 2.5, "two words", "c3", D(2024, 1, 20), T(2024, 1, 20, 10, 0, 0, 123456), M("3.75"), None),
        (4, 40, None, None, "d4", None, None, None, True),
    ),
    (
        (5, 50, 10.0, "echo", "m5", D(2024, 3, 1), T(2024, 3, 1), M("10.50"), False),
        (6, 60, 12.5, "foxtrot", None, D(2024, 3, 15), T(2024, 3, 15, 12), M("12.50"), True),
        (7, 7, 15.0, "golf", "q7", D(2024, 4, 1), None, M("15.00"), None),
        (8, None, 17.5, "", "r8", D(2024, 4, 15), T(2024, 4, 15, 23, 59, 59, 999000), M("20.25"), False),
    ),
    (
        (9, 90, 1.0e7, "hotel", "x9", D(2024, 6, 1), T(2024, 6, 1, 6), M("100.00"), True),
        (10, -5, -3.25, "india", "y10", D(2024, 6, 15), T(2024, 6, 15, 18), M("-7.50"), False),
        (11, 110, None, "juliet", "z11", D(2024, 7, 1), T(2024, 7, 1, 0, 0, 0, 1), M("99999999.99"), True),
        (None, 120, 20.0, "kilo", "zz", D(2024, 7, 31), T(2024, 7, 31, 12, 34, 56), M("0.01"), None),
    ),
)
ROWS: tuple[Row, ...] = tuple(row for batch in BATCHES for row in batch)

SQL_OPERATORS = frozenset({"=", "<=>", "<", "<=", ">", ">=", "<>", "IN", "NOT IN", "BETWEEN", "NOT BETWEEN",
                           "IS NULL", "IS NOT NULL", "AND", "OR", "NOT"})


@dataclass(frozen=True)
class Query:
    """One WHERE clause; ``leaves``: alternatives, each ``;``-separated leaf signatures (``~`` = under a NOT)."""

    name: str
    where: str
    sql_operators: frozenset[str]
    leaves: tuple[str, ...]

    @property
    def sql(self) -> str:
        return f"SELECT * FROM {DATABASE}.{TABLE} WHERE {self.where}"

    def alternatives(self) -> list[frozenset[str]]:
        return [frozenset(part.strip() for part in alt.split(";")) for alt in self.leaves]


def _q(name: str, where: str, ops: str, *leaves: str) -> Query:
    return Query(name, where, frozenset(o.strip() for o in ops.split(",")), leaves)


QUERIES: tuple[Query, ...] = (
    _q("eq_bigint", "id = 3", "=", "EQUALS id"),
    _q("nullsafe_int", "n <=> 7", "<=>", "NULL_SAFE_EQUALS n"),
    _q("lt_double", "x < 2.5", "<", "LESS_THAN x"),
    _q("le_string", "s <= 'delta'", "<=", "LESS_THAN_EQUALS s"),
    _q("gt_varchar", "v > 'm'", ">", "~LESS_THAN_EQUALS v"),
    _q("ge_date", "d >= date '2024-03-01'", ">=", "~LESS_THAN d"),
    # Spark pushes a timestamp equality as a BETWEEN over the literal's millisecond (ORC keeps millis in stats).
    _q("ne_timestamp", "ts <> timestamp '2024-03-01 00:00:00'", "<>", "~EQUALS ts", "~BETWEEN ts"),
    _q("in_decimal", "amount in (10.50, 20.25, 3.75)", "IN", "IN amount"),
    _q("not_in_bigint", "id not in (1, 2, 3)", "NOT IN", "~IN id"),
    _q("between_date", "d between date '2024-01-05' and date '2024-03-01'", "BETWEEN",
       "BETWEEN d", "~LESS_THAN d; LESS_THAN_EQUALS d"),
    _q("not_between_decimal", "amount not between 2 and 15", "NOT BETWEEN",
       "~BETWEEN amount", "LESS_THAN amount; ~LESS_THAN_EQUALS amount"),
    _q("is_null_string", "s is null", "IS NULL", "IS_NULL s"),
    _q("is_not_null_timestamp", "ts is not null", "IS NOT NULL", "~IS_NULL ts"),
    _q("bare_boolean", "flag", "=", "EQUALS flag"),
    _q("eq_false_boolean", "flag = false", "=", "EQUALS flag", "~EQUALS flag"),
    _q("not_boolean", "not flag", "NOT", "~EQUALS flag"),
    _q("and_or", "(id < 3 or id > 10) and s is not null", "AND, OR, <, >, IS NOT NULL",
       "LESS_THAN id; ~LESS_THAN_EQUALS id; ~IS_NULL s"),
    _q("not_and", "not (x >= 1.0 and v = 'q7')", "NOT, AND, >=, =", "LESS_THAN x; ~EQUALS v"),
    _q("or_types", "d = date '2024-04-01' or ts = timestamp '2024-01-10 09:30:00.5' or n in (10, 20)",
       "OR, =, IN", "EQUALS d; EQUALS ts; IN n", "EQUALS d; BETWEEN ts; IN n"),
    _q("string_with_space", "s = 'two words'", "=", "EQUALS s"),
    _q("empty_string", "s = ''", "=", "EQUALS s"),
    _q("nullsafe_string", "s <=> 'golf'", "<=>", "NULL_SAFE_EQUALS s"),
    _q("double_exponent", "x >= 1.0E7", ">=", "~LESS_THAN x"),
    _q("decimal_trailing_zero", "amount = 12.50", "=", "EQUALS amount"),
    _q("between_timestamp",
       "ts between timestamp '2024-01-01 00:00:00' and timestamp '2024-04-15 23:59:59.999'", "BETWEEN",
       "BETWEEN ts", "~LESS_THAN ts; LESS_THAN_EQUALS ts"),
    _q("in_varchar", "v in ('a1', 'q7', 'zz')", "IN", "IN v"),
    _q("not_in_date", "d not in (date '2024-01-01', date '2024-07-31')", "NOT IN", "~IN d"),
    _q("in_double", "x in (0.5, 20.0)", "IN", "IN x"),
    _q("lt_negative_int", "n < -1", "<", "LESS_THAN n"),
    _q("le_decimal_or_null", "amount <= 2.5 or amount is null", "<=, OR, IS NULL",
       "LESS_THAN_EQUALS amount; IS_NULL amount"),
)


def sql_literal(value: Any, hive_type: str) -> str:
    """A HiveQL literal for one value of a column of ``hive_type``."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return f"timestamp '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"date '{value.isoformat()}'"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return repr(value) if isinstance(value, float) else str(value)


def insert_sql(batch: Sequence[Row]) -> str:
    values = ", ".join("(" + ", ".join(sql_literal(v, t) for v, (_, t) in zip(row, COLUMNS, strict=True)) + ")"
                       for row in batch)
    return f"INSERT INTO {DATABASE}.{TABLE} VALUES {values}"


def create_sql() -> str:
    cols = ", ".join(f"{name} {typ}" for name, typ in COLUMNS)
    # Not transactional: Hive 4 could otherwise make a managed ORC table ACID (delta folders, no plain ORC scans).
    return f"CREATE TABLE {DATABASE}.{TABLE} ({cols}) STORED AS ORC TBLPROPERTIES ('transactional'='false')"


def normalize(value: Any, hive_type: str) -> Any:
    """A value as HiveServer2 returned it (pyhive gives dates, sometimes timestamps/decimals, as text) -> Python."""
    if value is None:
        return None
    if hive_type == "date" and isinstance(value, str):
        return dt.date.fromisoformat(value)
    if hive_type == "timestamp" and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if hive_type.startswith("decimal") and not isinstance(value, Decimal):
        return Decimal(str(value))
    if hive_type in ("double", "float") and isinstance(value, int | str):
        return float(value)
    return value


def normalize_row(row: Sequence[Any]) -> Row:
    return tuple(normalize(v, t) for v, (_, t) in zip(row, COLUMNS, strict=True))


def sort_key(row: Row) -> tuple[Any, ...]:
    """Rows ordered by id, null id last (for comparing result sets)."""
    return (row[0] is None, row[0] if row[0] is not None else 0, repr(row))
