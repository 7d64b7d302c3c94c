"""A SearchArgument as a Spark SQL row filter: the residual Spark applies to the rows of the files kept.

Leaves map one to one (EQUALS ``=``, NULL_SAFE_EQUALS ``<=>``, LESS_THAN ``<``, LESS_THAN_EQUALS ``<=``, IN, BETWEEN,
IS_NULL), NOT/AND/OR keep SQL's three-valued logic. An ambiguous STRING list is applied as read (split at
spaces): pruning keeps every file a wider reading could match, so pruned and unpruned reads still agree. A leaf whose literal is unknown (a semijoin ``DynamicValue``,
text that did not convert) cannot be applied to rows: it becomes TRUE wherever it stands (NOT included), so the
residual keeps a superset of the matching rows and never loses one. TruthValue constants become TRUE too, except
the ones that can never be true (NO, NULL, NO_NULL), which become FALSE. The SearchArgument's prefix conditions
(``LIKE 'ab%'`` conjuncts it cannot hold as leaves) are ANDed on as ``LIKE``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

import sarg
from sarg import Operator, TruthValue
from sarg.literals import Literal, Timestamp, java_double_str
from sarg.prefix import like_pattern


def quote_identifier(column: str) -> str:
    """A (possibly dotted, nested) column name as Spark SQL backquoted identifiers."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in column.split("."))


def sql_string(value: str) -> str:
    """A Spark SQL string literal (backslash escapes on, the Spark default)."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def sql_literal(value: Literal | None) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"CAST({value} AS BIGINT)" if -(2**31) <= value < 2**31 else f"{value}L"
    if isinstance(value, float):
        return f"CAST('{java_double_str(value)}' AS DOUBLE)"
    if isinstance(value, Decimal):  # exactly: its own precision and scale (1E+3 is 1000, four digits)
        text = format(value, "f")
        _, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        scale = max(0, -exponent)
        precision = min(38, max(len(digits) + max(0, exponent), scale, 1))
        return f"CAST('{text}' AS DECIMAL({precision},{min(scale, precision)}))"
    if isinstance(value, Timestamp):
        return f"TIMESTAMP {sql_string(str(value))}"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, str):
        return sql_string(value)
    raise TypeError(f"no SQL literal for {value!r}")


def _leaf_sql(leaf: sarg.PredicateLeaf) -> str | None:
    """The leaf as SQL, or None when it cannot be applied to rows."""
    if leaf.has_unknown_literal:
        return None
    col = quote_identifier(leaf.column)
    op = leaf.operator
    if op is Operator.IS_NULL:
        return f"({col} IS NULL)"
    if op is Operator.IN:
        assert leaf.literals is not None
        return f"({col} IN ({', '.join(sql_literal(v) for v in leaf.literals)}))"
    if op is Operator.BETWEEN:
        assert leaf.literals is not None
        lo, hi = leaf.literals
        return f"({col} BETWEEN {sql_literal(lo)} AND {sql_literal(hi)})"
    symbol = {Operator.EQUALS: "=", Operator.NULL_SAFE_EQUALS: "<=>", Operator.LESS_THAN: "<",
              Operator.LESS_THAN_EQUALS: "<="}[op]
    return f"({col} {symbol} {sql_literal(leaf.literal)})"


def prefix_sql(condition: sarg.PrefixCondition) -> str:
    """A prefix condition as Spark SQL: ``(col LIKE 'ab%')`` (the prefix's wildcards escaped), or its NOT."""
    like = f"({quote_identifier(condition.column)} LIKE {sql_string(like_pattern(condition.prefix))})"
    return f"(NOT {like})" if condition.negated else like


def to_sql(arg: sarg.SearchArgument | sarg.ExpressionTree) -> str:
    """The SearchArgument as a Spark SQL boolean expression (see the module doc for unknown leaves), AND its
    prefix conditions (pruning judged them: the rows must be filtered by them too)."""
    tree = arg.expression if isinstance(arg, sarg.SearchArgument) else arg
    sql = sarg.visit(tree, _ToSql()).sql
    if isinstance(arg, sarg.SearchArgument) and arg.prefixes:
        sql = "(" + " AND ".join([sql, *map(prefix_sql, arg.prefixes)]) + ")"
    return sql


@dataclass(frozen=True)
class _Sql:
    sql: str
    unknown: bool  # the subtree holds a leaf or constant that is not a plain YES/NO


class _ToSql(sarg.TreeVisitor[_Sql]):
    """A NOT over anything unknown is TRUE (the rows it would exclude are not known); an unknown leaf is TRUE."""

    def visit_leaf(self, leaf: sarg.PredicateLeaf, leaf_id: int | None) -> _Sql:
        sql = _leaf_sql(leaf)
        return _Sql(sql or "TRUE", sql is None)

    def visit_constant(self, value: TruthValue) -> _Sql:
        return _Sql("TRUE" if value.is_needed() else "FALSE", value not in (TruthValue.YES, TruthValue.NO))

    def visit_not(self, child: _Sql) -> _Sql:
        return _Sql("TRUE" if child.unknown else f"(NOT {child.sql})", child.unknown)

    def visit_and(self, children: list[_Sql]) -> _Sql:
        return _Sql("(" + " AND ".join(c.sql for c in children) + ")", any(c.unknown for c in children))

    def visit_or(self, children: list[_Sql]) -> _Sql:
        return _Sql("(" + " OR ".join(c.sql for c in children) + ")", any(c.unknown for c in children))
