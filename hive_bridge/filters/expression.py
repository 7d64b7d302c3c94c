"""HudiExpression: the filter hive_bridge prunes Hudi files with, translated from a Hive SearchArgument.

A HudiExpression is a small immutable tree: :class:`And`, :class:`Or`, :class:`Not`, :class:`Constant`
(a :class:`sarg.TruthValue`) and :class:`Predicate` leaves with an :class:`Op`, a column and typed literals.
Nodes negate themselves (``~expr``); a negation is pushed into a predicate only where the rewrite is exact under
SQL's three-valued logic with Spark's ordering (NaN equal to itself and above every number):

==========================  ===============================================================
``NOT (a = v)``             ``a <> v``   (NULL stays NULL, NaN <> NaN is false)
``NOT (a < v)``             ``a >= v``   (a total order: NaN included)
``NOT (a <= v)``            ``a > v``
``NOT (a IN (...))``        ``a NOT IN (...)`` (NULLs in the list keep their meaning)
``NOT (a BETWEEN x AND y)`` ``a NOT BETWEEN x AND y``
``NOT (a IS NULL)``         ``a IS NOT NULL``
``NOT (a STARTS WITH p)``   ``a NOT STARTS WITH p``
``NOT (a <=> v)``           stays a :class:`Not` node (there is no operator for it)
==========================  ===============================================================

A predicate whose literals were widened to a superset (an ambiguous IN list printed without quotes) is only
correct in positive position: negating it gives the constant YES_NO_NULL ("cannot prune"), never a wrong filter.
Anything the translator cannot type safely becomes ``Constant(YES_NO_NULL, unknown=True)``; it never disappears
from an OR (reference §7, apache/auron #2369).
"""

from __future__ import annotations

import datetime as _dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from typing import Generic, TypeVar

import sarg
from hive_bridge.errors import HiveBridgeError
from sarg import DoubleReading, ExpressionTree, Operator, PredicateLeaf, SearchArgument, TruthValue, Type
from sarg.literals import Literal, Timestamp, UnknownLiteral, literal_str
from sarg.schema import ColumnType, Schema, lookup, resolve_schema

T = TypeVar("T")

LiteralValue = int | float | str | _dt.date | Decimal | bool | Timestamp


class ExpressionError(HiveBridgeError):
    """A HudiExpression could not be built or evaluated (bad input, not a possible pruning result)."""


class Op(Enum):
    """Leaf operators: Hive's seven, the negations a NOT is pushed into, and STARTS WITH (a string prefix: what
    ``LIKE 'abc%'`` and Spark's ``StringStartsWith`` imply, carried beside a SearchArgument as
    :class:`sarg.PrefixCondition`) with its negation."""

    EQ = "="
    NULL_SAFE_EQ = "<=>"
    LT = "<"
    LTEQ = "<="
    GT = ">"
    GTEQ = ">="
    IN = "IN"
    BETWEEN = "BETWEEN"
    IS_NULL = "IS NULL"
    NOT_EQ = "<>"
    NOT_IN = "NOT IN"
    NOT_BETWEEN = "NOT BETWEEN"
    IS_NOT_NULL = "IS NOT NULL"
    STARTS_WITH = "STARTS WITH"
    NOT_STARTS_WITH = "NOT STARTS WITH"

    @property
    def negation(self) -> Op | None:
        """The operator that is exactly NOT of this one under SQL 3VL (None for NULL_SAFE_EQ)."""
        return _NEGATION.get(self)

    @property
    def positive(self) -> Op:
        """The operator whose verdict this one's is the negation of (itself for the positive ones)."""
        return _POSITIVE.get(self, self)

    @property
    def is_negated(self) -> bool:
        return self in _POSITIVE


_NEGATION: dict[Op, Op] = {
    Op.EQ: Op.NOT_EQ, Op.NOT_EQ: Op.EQ,
    Op.LT: Op.GTEQ, Op.GTEQ: Op.LT,
    Op.LTEQ: Op.GT, Op.GT: Op.LTEQ,
    Op.IN: Op.NOT_IN, Op.NOT_IN: Op.IN,
    Op.BETWEEN: Op.NOT_BETWEEN, Op.NOT_BETWEEN: Op.BETWEEN,
    Op.IS_NULL: Op.IS_NOT_NULL, Op.IS_NOT_NULL: Op.IS_NULL,
    Op.STARTS_WITH: Op.NOT_STARTS_WITH, Op.NOT_STARTS_WITH: Op.STARTS_WITH,
}
_POSITIVE: dict[Op, Op] = {Op.NOT_EQ: Op.EQ, Op.GTEQ: Op.LT, Op.GT: Op.LTEQ, Op.NOT_IN: Op.IN,
                           Op.NOT_BETWEEN: Op.BETWEEN, Op.IS_NOT_NULL: Op.IS_NULL,
                           Op.NOT_STARTS_WITH: Op.STARTS_WITH}
LIST_OPS = frozenset({Op.IN, Op.NOT_IN, Op.BETWEEN, Op.NOT_BETWEEN})
NULL_OPS = frozenset({Op.IS_NULL, Op.IS_NOT_NULL})


class HudiExpression(ABC):
    """Base of every node. Immutable; ``~e`` is the exact negation, ``e & f`` and ``e | f`` combine."""

    @abstractmethod
    def negate(self) -> HudiExpression:
        """The expression that is NOT of this one under SQL three-valued logic."""

    def __invert__(self) -> HudiExpression:
        return self.negate()

    def __and__(self, other: HudiExpression) -> HudiExpression:
        return And((self, other))

    def __or__(self, other: HudiExpression) -> HudiExpression:
        return Or((self, other))

    @property
    def children(self) -> tuple[HudiExpression, ...]:
        return ()

    def walk(self) -> Iterator[HudiExpression]:
        """Every node, depth first, parents before children."""
        stack: list[HudiExpression] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def predicates(self) -> tuple[Predicate, ...]:
        """The distinct predicates, in first-appearance order."""
        seen: dict[Predicate, None] = {}
        for node in self.walk():
            if isinstance(node, Predicate):
                seen.setdefault(node, None)
        return tuple(seen)


@dataclass(frozen=True)
class And(HudiExpression):
    """Kleene AND of two or more children."""

    parts: tuple[HudiExpression, ...]

    def __post_init__(self) -> None:
        if len(self.parts) < 1:
            raise ExpressionError("AND needs at least one child")

    @property
    def children(self) -> tuple[HudiExpression, ...]:
        return self.parts

    def negate(self) -> HudiExpression:
        return Or(tuple(p.negate() for p in self.parts))

    def __str__(self) -> str:
        return "(" + " AND ".join(map(str, self.parts)) + ")"


@dataclass(frozen=True)
class Or(HudiExpression):
    """Kleene OR of two or more children."""

    parts: tuple[HudiExpression, ...]

    def __post_init__(self) -> None:
        if len(self.parts) < 1:
            raise ExpressionError("OR needs at least one child")

    @property
    def children(self) -> tuple[HudiExpression, ...]:
        return self.parts

    def negate(self) -> HudiExpression:
        return And(tuple(p.negate() for p in self.parts))

    def __str__(self) -> str:
        return "(" + " OR ".join(map(str, self.parts)) + ")"


@dataclass(frozen=True)
class Not(HudiExpression):
    """NOT of a child that cannot negate itself exactly into a leaf (``NOT (a <=> v)``)."""

    child: HudiExpression

    @property
    def children(self) -> tuple[HudiExpression, ...]:
        return (self.child,)

    def negate(self) -> HudiExpression:
        return self.child

    def __str__(self) -> str:
        return f"(NOT {self.child})"


@dataclass(frozen=True)
class Constant(HudiExpression):
    """A TruthValue. ``unknown`` marks a constant that stands for something the translator could not judge
    (counted as "kept because unknown"); ``reason`` says what."""

    value: TruthValue
    reason: str = field(default="", compare=False)
    unknown: bool = False

    def negate(self) -> HudiExpression:
        return Constant(self.value.not_(), self.reason, self.unknown)

    def __str__(self) -> str:
        return str(self.value)


MAYBE = Constant(TruthValue.YES_NO_NULL)


def unknown(reason: str) -> Constant:
    """The constant YES_NO_NULL for something that cannot be judged."""
    return Constant(TruthValue.YES_NO_NULL, reason, unknown=True)


_DOUBLE_EXACT = 2**53  # every integer of smaller magnitude is its own double, shared with no other integer


@dataclass(frozen=True)
class Predicate(HudiExpression):
    """``column op literal(s)``.

    - ``type``: the SearchArgument literal type (sarg.Type); literals are Python values of that type
      (int, float, str, date, Decimal, sarg.Timestamp, bool). ``None`` in an IN list is SQL NULL.
    - ``literals``: one value for the comparison operators, any number for IN/NOT_IN, (low, high) for
      BETWEEN/NOT_BETWEEN, none for IS_NULL/IS_NOT_NULL.
    - ``superset``: the literals are a superset of the real ones (an ambiguous printed IN list, the widest
      bounds of an ambiguous BETWEEN): only correct un-negated, so ``negate()`` gives YES_NO_NULL.
    - ``char_length``: the column is ``char(n)`` (its values are space-padded in Hive and Spark).
    - ``source``: the SearchArgument leaf it came from, for explanations.
    - ``derived``: not in the filter but implied by it (the record key a conjunction of equalities on every key
      field fixes, :mod:`hive_bridge.pruning.record_keys`): statistics say nothing of it (YES_NO), only Hudi's
      key indexes narrow it.
    - ``double``: how LONG or DECIMAL literals compare with rows (``PredicateLeaf.double``): DOUBLE, a double
      literal boxed exactly (rows compare it as a double); EITHER, either way. Statistics judge the literal by
      that reading; key indexes, which look values up exactly, answer only where it matches the value alone
      (:attr:`exact_values`).
    """

    op: Op
    column: str
    type: Type
    literals: tuple[LiteralValue | None, ...] = ()
    superset: bool = False
    char_length: int | None = None
    source: str = field(default="", compare=False)
    derived: bool = False
    double: DoubleReading = DoubleReading.NONE

    def __post_init__(self) -> None:
        if self.op in NULL_OPS:
            if self.literals:
                raise ExpressionError(f"{self.op.name} takes no literal")
        elif self.op in (Op.BETWEEN, Op.NOT_BETWEEN):
            if len(self.literals) != 2 or None in self.literals:
                raise ExpressionError(f"{self.op.name} takes two non-null literals")
        elif self.op in (Op.IN, Op.NOT_IN):
            if not self.literals:
                raise ExpressionError(f"{self.op.name} takes at least one literal")
        elif len(self.literals) != 1 or self.literals[0] is None:
            raise ExpressionError(f"{self.op.name} takes one non-null literal")
        for value in self.literals:
            if isinstance(value, UnknownLiteral):
                raise ExpressionError("an unknown literal cannot be a predicate literal; use unknown()")

    @property
    def literal(self) -> LiteralValue:
        """The single literal of a comparison operator."""
        value = self.literals[0]
        assert value is not None
        return value

    @property
    def exact_values(self) -> bool:
        """Whether the rows matching the literals are exactly those equal to them: read exactly, or LONG
        literals below 2**53 in magnitude (whose doubles no other integer shares)."""
        if self.double is DoubleReading.NONE:
            return True
        return self.type is Type.LONG and all(
            isinstance(v, int) and abs(v) < _DOUBLE_EXACT for v in self.literals)

    def negate(self) -> HudiExpression:
        negated = self.op.negation
        if self.superset:
            return unknown(f"NOT of {self} whose literals are a superset of an ambiguous list")
        if negated is None:
            return Not(self)
        return Predicate(negated, self.column, self.type, self.literals, self.superset, self.char_length,
                         self.source, self.derived, self.double)

    def __str__(self) -> str:
        def show(v: LiteralValue | None) -> str:
            if v is None:
                return "NULL"
            if isinstance(v, str):
                return repr(v)
            return literal_str(v)

        if self.op in NULL_OPS:
            return f"{self.column} {self.op.value}"
        if self.op in (Op.BETWEEN, Op.NOT_BETWEEN):
            return f"{self.column} {self.op.value} {show(self.literals[0])} AND {show(self.literals[1])}"
        if self.op in (Op.IN, Op.NOT_IN):
            return f"{self.column} {self.op.value} ({', '.join(show(v) for v in self.literals)})"
        return f"{self.column} {self.op.value} {show(self.literals[0])}"


class ExpressionVisitor(ABC, Generic[T]):
    """The one walk over a HudiExpression (:func:`visit`): bottom-up, iterative (no recursion limit on deep
    trees), each parent handed its children's results in order. Leaves are told their polarity: ``negated`` is
    True when an odd number of NOTs stand above them (what a leaf means for the root)."""

    @abstractmethod
    def visit_and(self, node: And, results: list[T]) -> T: ...

    @abstractmethod
    def visit_or(self, node: Or, results: list[T]) -> T: ...

    @abstractmethod
    def visit_not(self, node: Not, result: T) -> T: ...

    @abstractmethod
    def visit_predicate(self, node: Predicate, negated: bool) -> T: ...

    @abstractmethod
    def visit_constant(self, node: Constant, negated: bool) -> T: ...


def visit(expr: HudiExpression, visitor: ExpressionVisitor[T]) -> T:
    """Run ``visitor`` over ``expr`` (see :class:`ExpressionVisitor`)."""
    results: dict[int, T] = {}
    stack: list[tuple[HudiExpression, bool, bool]] = [(expr, False, False)]
    while stack:
        node, negated, done = stack.pop()
        if isinstance(node, Predicate):
            results[id(node)] = visitor.visit_predicate(node, negated)
            continue
        if isinstance(node, Constant):
            results[id(node)] = visitor.visit_constant(node, negated)
            continue
        if not done:
            stack.append((node, negated, True))
            kid_negated = not negated if isinstance(node, Not) else negated
            stack.extend((kid, kid_negated, False) for kid in node.children)
            continue
        kids = [results[id(kid)] for kid in node.children]
        if isinstance(node, And):
            results[id(node)] = visitor.visit_and(node, kids)
        elif isinstance(node, Or):
            results[id(node)] = visitor.visit_or(node, kids)
        elif isinstance(node, Not):
            results[id(node)] = visitor.visit_not(node, kids[0])
        else:  # pragma: no cover - every node type is handled above
            raise ExpressionError(f"unknown node {node!r}")
    return results[id(expr)]


# -- translation ------------------------------------------------------------------------------------------

def translate(source: SearchArgument | ExpressionTree, schema: Schema = None) -> HudiExpression:
    """The HudiExpression of a SearchArgument (or one of its ExpressionTrees), AND the STARTS WITH predicates of
    the prefix conditions it carries (:attr:`sarg.SearchArgument.prefixes`).

    ``schema`` (optional, as for ``sarg.parse``) tells which columns are ``char(n)``: their values are
    space-padded, so string comparisons on them are widened or given up (HIVE-21407).

    Leaves that cannot be judged safely become ``Constant(YES_NO_NULL, unknown=True)``: an unknown literal
    (``DynamicValue(...)``, text that did not convert), a NULL literal where SQL makes the leaf NULL for every
    row, an ambiguous single STRING literal, a negated ambiguous list.
    """
    if isinstance(source, SearchArgument) and source.ambiguous:
        return unknown("the SearchArgument text has more than one reading (a string literal holds parentheses, "
                       "which Hive prints without escaping): the whole filter is unknown")
    tree = source.expression if isinstance(source, SearchArgument) else source
    columns = resolve_schema(schema)
    expression = sarg.visit(tree, _Translate(columns))
    if isinstance(source, SearchArgument) and source.prefixes:
        prefixes = tuple(translate_prefix(p, columns) for p in source.prefixes)
        parts = expression.parts if isinstance(expression, And) else (expression,)
        expression = And((*parts, *prefixes))
    return expression


def translate_prefix(condition: sarg.PrefixCondition, columns: Mapping[str, ColumnType] | None = None
                     ) -> HudiExpression:
    """A prefix condition the filter implies as a STARTS WITH predicate (its negation for ``negated``)."""
    col_type = lookup(columns, condition.column) if columns else None
    pred = Predicate(Op.STARTS_WITH, condition.column, Type.STRING, (condition.prefix,),
                     char_length=col_type.char_length if col_type is not None else None, source=str(condition))
    return pred.negate() if condition.negated else pred


class _Translate(sarg.TreeVisitor[HudiExpression]):
    def __init__(self, columns: Mapping[str, ColumnType] | None) -> None:
        self.columns = columns

    def visit_leaf(self, leaf: PredicateLeaf, leaf_id: int | None) -> HudiExpression:
        return translate_leaf(leaf, self.columns)

    def visit_constant(self, value: TruthValue) -> HudiExpression:
        if value is TruthValue.YES_NO_NULL:
            return unknown("a YES_NO_NULL constant in the SearchArgument")
        return Constant(value, "a constant")

    def visit_not(self, child: HudiExpression) -> HudiExpression:
        return child.negate()

    def visit_and(self, children: list[HudiExpression]) -> HudiExpression:
        if not children:
            raise ExpressionError("and node without children")
        return children[0] if len(children) == 1 else And(tuple(children))

    def visit_or(self, children: list[HudiExpression]) -> HudiExpression:
        if not children:
            raise ExpressionError("or node without children")
        return children[0] if len(children) == 1 else Or(tuple(children))


_SARG_OPS = {
    Operator.EQUALS: Op.EQ, Operator.NULL_SAFE_EQUALS: Op.NULL_SAFE_EQ, Operator.LESS_THAN: Op.LT,
    Operator.LESS_THAN_EQUALS: Op.LTEQ, Operator.IN: Op.IN, Operator.BETWEEN: Op.BETWEEN,
    Operator.IS_NULL: Op.IS_NULL,
}


def translate_leaf(leaf: PredicateLeaf, columns: Mapping[str, ColumnType] | None = None) -> HudiExpression:
    """One SearchArgument leaf as a Predicate, or the unknown constant when it cannot be typed safely."""
    source = str(leaf)
    col_type = lookup(columns, leaf.column) if columns else None
    char_length = col_type.char_length if col_type is not None else None
    op = _SARG_OPS[leaf.operator]
    if leaf.has_unknown_literal:
        bad = next(v for v in leaf.values if isinstance(v, UnknownLiteral))
        return unknown(f"{source}: literal {bad.text!r} cannot be typed ({bad.reason or 'unknown'})")

    def make(op_: Op, literals: tuple[LiteralValue | None, ...], superset: bool = False) -> Predicate:
        return Predicate(op_, leaf.column, leaf.type, literals, superset, char_length, source,
                         double=leaf.double if leaf.type in (Type.LONG, Type.DECIMAL) else DoubleReading.NONE)

    if op is Op.IS_NULL:
        return make(op, ())
    if leaf.operator in (Operator.IN, Operator.BETWEEN):
        if leaf.ambiguous and leaf.texts is not None and any("(" in t or ")" in t for t in leaf.texts):
            return unknown(f"{source}: a STRING list holding parentheses may have been cut differently")
        if op is Op.IN:
            values = leaf.in_candidates() if leaf.ambiguous else leaf.values
            return make(op, tuple(_checked(v) for v in values), superset=leaf.ambiguous)
        low, high = leaf.between_bounds()
        if low is None or high is None:
            return unknown(f"{source}: BETWEEN with a NULL or unreadable bound")
        return make(op, (_checked(low), _checked(high)), superset=leaf.ambiguous)
    value = leaf.literal
    if leaf.ambiguous:
        return unknown(f"{source}: a STRING literal holding parentheses may have been cut differently")
    if value is None:
        if op is Op.NULL_SAFE_EQ:
            return make(Op.IS_NULL, ())
        return unknown(f"{source}: a NULL literal")
    return make(op, (_checked(value),))


def _checked(value: Literal | None) -> LiteralValue | None:
    if isinstance(value, UnknownLiteral):  # pragma: no cover - caught by has_unknown_literal
        raise ExpressionError(f"unknown literal {value.text!r}")
    return value


def from_builder(build: Callable[[sarg.Builder], sarg.Builder], schema: Schema = None) -> HudiExpression:
    """Convenience: ``from_builder(lambda b: b.equals("a", Type.LONG, 5))``."""
    return translate(build(sarg.builder()).build(), schema)


__all__ = [
    "LIST_OPS",
    "MAYBE",
    "NULL_OPS",
    "And",
    "Constant",
    "ExpressionError",
    "ExpressionVisitor",
    "HudiExpression",
    "LiteralValue",
    "Not",
    "Op",
    "Or",
    "Predicate",
    "from_builder",
    "translate",
    "translate_leaf",
    "translate_prefix",
    "unknown",
    "visit",
]
