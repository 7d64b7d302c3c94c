"""sarg: Hive SearchArguments read from every printed form, printed back exactly, built as Hive builds them.

Pure Python, no I/O::

    >>> import sarg
    >>> s = sarg.parse("leaf-0 = (EQUALS event_id 1), expr = leaf-0", schema={"event_id": "bigint"})
    >>> str(s)
    'leaf-(EQUALS event_id 1)'
"""

from sarg.builder import Builder
from sarg.detect import looks_like_sarg
from sarg.errors import MAX_DEPTH, SargBuildError, SargError, SargSyntaxError
from sarg.hiveql import parse_hiveql
from sarg.literals import Literal, Timestamp, UnknownLiteral
from sarg.model import (
    DoubleReading,
    ExpressionTree,
    Operator,
    PredicateLeaf,
    PrefixCondition,
    SearchArgument,
    TreeOperator,
    TreeVisitor,
    Type,
    UnknownPart,
    post_order,
    visit,
)
from sarg.parser import parse
from sarg.schema import ColumnType, Schema, resolve_schema
from sarg.truth import TruthValue


def read_filter(text: str, schema: Schema = None) -> SearchArgument:
    """A SearchArgument from SearchArgument text in any printed form, or from HiveQL filter text."""
    if looks_like_sarg(text):
        return parse(text, schema)
    return parse_hiveql(text, schema)


def builder() -> Builder:
    """A new builder with Hive's normalization (``SearchArgumentFactory.newBuilder()``)."""
    return Builder()


__all__ = [
    "MAX_DEPTH",
    "Builder",
    "ColumnType",
    "DoubleReading",
    "ExpressionTree",
    "Literal",
    "Operator",
    "PredicateLeaf",
    "PrefixCondition",
    "SargBuildError",
    "SargError",
    "SargSyntaxError",
    "SearchArgument",
    "Timestamp",
    "TreeOperator",
    "TreeVisitor",
    "TruthValue",
    "Type",
    "UnknownLiteral",
    "UnknownPart",
    "builder",
    "looks_like_sarg",
    "parse",
    "parse_hiveql",
    "post_order",
    "read_filter",
    "resolve_schema",
    "visit",
]
