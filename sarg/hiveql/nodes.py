"""The parsed HiveQL filter expression: what the grammar driver (``sarg.hiveql.grammar``) produces and the emitter
(``sarg.hiveql.emitter``) turns into builder calls.

Values: :class:`Column`, :class:`HqlLiteral` (a literal with its Hive type, a :class:`LiteralKind`) and
:class:`Opaque` (anything ConvertAstToSearchArg does not understand). Predicates: :class:`Compare`,
:class:`InList`, :class:`Between`, :class:`IsNull`, :class:`Like`. Logic: :class:`HqlLogic` (AND / OR) and :class:`HqlNot`.
The ``Hql`` prefix keeps these apart from the SearchArgument model's and hive_bridge's own nodes.
"""

from __future__ import annotations

import datetime as _dt
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum

from sarg.literals import Timestamp


class LiteralKind(Enum):
    """The Hive type of a literal (an ``ExprNodeConstantDesc``'s type)."""

    TINYINT = "tinyint"
    SMALLINT = "smallint"
    INT = "int"
    BIGINT = "bigint"
    FLOAT = "float"
    DOUBLE = "double"
    DECIMAL = "decimal"
    STRING = "string"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOLEAN = "boolean"
    NULL = "void"


INTEGRAL_KINDS = frozenset({LiteralKind.TINYINT, LiteralKind.SMALLINT, LiteralKind.INT, LiteralKind.BIGINT})
NUMERIC_KINDS = INTEGRAL_KINDS | {LiteralKind.FLOAT, LiteralKind.DOUBLE, LiteralKind.DECIMAL}

HqlLiteralValue = int | float | Decimal | str | _dt.date | Timestamp | bool | None


@dataclass(frozen=True)
class Column:
    """A column reference: its name parts (``t.a`` is ``("t", "a")``; a backquoted name is one part)."""

    parts: tuple[str, ...]
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)

    @property
    def name(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class HqlLiteral:
    """A literal: its Hive type and Python value (None for null).

    ``exact``: for a number written with a fraction and neither exponent nor suffix (``12.50``), its exact
    value. Hive 2's lexer types it a double; Hive 3+ (``HiveDecimal``) and Spark SQL read it as an exact decimal,
    and so does this reader wherever the exact value matters (a decimal or integer column, a cast to one): it
    never goes through a double there."""

    kind: LiteralKind
    value: HqlLiteralValue
    exact: Decimal | None = None
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


@dataclass(frozen=True)
class Opaque:
    """Anything ConvertAstToSearchArg does not understand (functions, arithmetic, CASE, LIKE...)."""

    what: str = "expression"
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


Value = Column | HqlLiteral | Opaque


@dataclass(frozen=True)
class Compare:
    op: str  # one of = <=> <> < <= > >=  (== and != are normalized)
    left: Value
    right: Value
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


@dataclass(frozen=True)
class InList:
    value: Value
    items: tuple[Value, ...]
    negated: bool
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


@dataclass(frozen=True)
class Between:
    value: Value
    low: Value
    high: Value
    negated: bool
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


@dataclass(frozen=True)
class IsNull:
    value: Value
    negated: bool
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


@dataclass(frozen=True)
class Like:
    """``value LIKE pattern`` (``op``: ``like``, ``rlike`` or ``regexp``, lower case). ConvertAstToSearchArg pushes
    none of them down; a top-level ``LIKE`` on a column still implies a prefix (:mod:`sarg.prefix`)."""

    value: Value
    pattern: Value
    op: str
    negated: bool
    span: tuple[int, int] | None = field(default=None, compare=False)  # where in the text (start, end)


@dataclass(eq=False)
class HqlLogic:
    """AND / OR with any number of children (nested ANDs and ORs are merged as they are parsed)."""

    op: str  # "and" | "or"
    children: deque[Expr]
    depth: int
    span: tuple[int, int] | None = None


@dataclass(eq=False)
class HqlNot:
    child: Expr
    depth: int
    span: tuple[int, int] | None = None


HqlPredicate = Compare | InList | Between | IsNull | Like
Expr = Column | HqlLiteral | Opaque | Compare | InList | Between | IsNull | Like | HqlLogic | HqlNot


__all__ = [
    "INTEGRAL_KINDS",
    "NUMERIC_KINDS",
    "Between",
    "Column",
    "Compare",
    "Expr",
    "HqlLiteral",
    "HqlLiteralValue",
    "HqlLogic",
    "HqlNot",
    "HqlPredicate",
    "InList",
    "IsNull",
    "Like",
    "LiteralKind",
    "Opaque",
    "Value",
]
