"""The typed, immutable SearchArgument model: PredicateLeaf, ExpressionTree and SearchArgument, and the one way to
walk a tree bottom-up (:class:`TreeVisitor`, :func:`visit`, :func:`post_order`).

It mirrors Hive's storage-api (``org.apache.hadoop.hive.ql.io.sarg``) after HIVE-24458: the tree holds its
leaves, ``str()`` prints the normalized tree with leaves inline and ``to_old_string()`` the older
``leaf-0 = (...), expr = ...`` form. The model imports nothing else of sarg but its literals and TruthValue
(``sarg.builder`` builds on it, not the other way round).
"""

from __future__ import annotations

import datetime as _dt
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum
from typing import Generic, TypeVar

from sarg.literals import Literal, Timestamp, UnknownLiteral, literal_key, literal_str
from sarg.truth import TruthValue

T = TypeVar("T")
N = TypeVar("N")


class Operator(Enum):
    """``PredicateLeaf.Operator``: Hive has no >, >=, <> or NOT IN; they are NOT of these."""

    EQUALS = "EQUALS"
    NULL_SAFE_EQUALS = "NULL_SAFE_EQUALS"
    LESS_THAN = "LESS_THAN"
    LESS_THAN_EQUALS = "LESS_THAN_EQUALS"
    IN = "IN"
    BETWEEN = "BETWEEN"
    IS_NULL = "IS_NULL"

    def __str__(self) -> str:
        return self.value


class Type(Enum):
    """``PredicateLeaf.Type`` and the Python class of its literals."""

    LONG = "LONG"
    FLOAT = "FLOAT"
    STRING = "STRING"
    DATE = "DATE"
    DECIMAL = "DECIMAL"
    TIMESTAMP = "TIMESTAMP"
    BOOLEAN = "BOOLEAN"

    @property
    def python_type(self) -> type:
        return _PYTHON_TYPES[self]

    def __str__(self) -> str:
        return self.value


_PYTHON_TYPES: dict[Type, type] = {
    Type.LONG: int,
    Type.FLOAT: float,
    Type.STRING: str,
    Type.DATE: _dt.date,
    Type.DECIMAL: Decimal,
    Type.TIMESTAMP: Timestamp,
    Type.BOOLEAN: bool,
}

class DoubleReading(Enum):
    """How a LONG or DECIMAL leaf's literals compare with the rows (``PredicateLeaf.double``)."""

    NONE = "none"      #: exactly (an integer or decimal literal)
    DOUBLE = "double"  #: as doubles (a double literal Hive's builder boxed exactly; rows compare as doubles)
    EITHER = "either"  #: either way (printed text, which does not say; or equal leaves of both kinds, merged)

    def merge(self, other: DoubleReading) -> DoubleReading:
        """The reading of two equal leaves merged into one."""
        return self if self is other else DoubleReading.EITHER


LITERAL_OPERATORS = frozenset({Operator.EQUALS, Operator.NULL_SAFE_EQUALS, Operator.LESS_THAN,
                               Operator.LESS_THAN_EQUALS})
LIST_OPERATORS = frozenset({Operator.IN, Operator.BETWEEN})


def check_literal(operator: Operator, type_: Type, value: Literal | None) -> None:
    """Hive's checkLiteralType: a literal must be exactly the type's class (None and unknown pass)."""
    if value is None or isinstance(value, UnknownLiteral):
        return
    expected = type_.python_type
    ok = isinstance(value, expected)
    if expected is int:
        ok = ok and not isinstance(value, bool)
    if expected is _dt.date:
        ok = ok and not isinstance(value, _dt.datetime)
    if not ok:
        raise TypeError(f"Wrong value class {type(value).__name__} for {type_}.{operator} leaf")


@dataclass(frozen=True, eq=False)
class PredicateLeaf:
    """One ``(OPERATOR column literal…)`` predicate.

    ``literal`` is set for EQUALS, NULL_SAFE_EQUALS, LESS_THAN and LESS_THAN_EQUALS (None prints nothing);
    ``literals`` is a tuple for IN and BETWEEN. Equality follows Hive's ``PredicateLeafImpl.equals``
    (operator, type, column, literal(s); Java equality of values), so equal leaves are merged.

    ``texts`` keeps the literal text as it was read, so a parsed SearchArgument prints back byte for byte;
    ``ambiguous`` marks a list whose printed form has more than one reading (STRING values split at spaces):
    ``in_candidates()`` and ``between_bounds()`` then give a safe superset for pruning.

    ``double`` says how a LONG or DECIMAL leaf's literals compare with rows (:class:`DoubleReading`): Hive's
    builder boxes a double literal compared with a bigint or decimal column exactly (``amount = 1e9`` prints
    ``(EQUALS amount 1000000000)``), while rows compare as doubles, so 999999999.999999999999999999 matches too.
    The HiveQL reader marks such literals DOUBLE; the SearchArgument text reader marks every LONG and DECIMAL leaf
    EITHER (the text does not say where a literal came from). Like ``texts`` it is not part of the leaf's
    identity and does not print; merged leaves that read differently read EITHER.
    """

    operator: Operator
    type: Type
    column: str
    literal: Literal | None = None
    literals: tuple[Literal | None, ...] | None = None
    texts: tuple[str, ...] | None = field(default=None, repr=False)
    ambiguous: bool = field(default=False, repr=False)
    double: DoubleReading = field(default=DoubleReading.NONE, repr=False)

    def __post_init__(self) -> None:
        if self.operator in LIST_OPERATORS:
            if self.literals is None or self.literal is not None:
                raise ValueError(f"{self.operator} takes a list of literals")
            if self.operator is Operator.BETWEEN and len(self.literals) != 2:
                raise ValueError("BETWEEN takes exactly two literals")
            if not self.literals:
                raise ValueError("Can't create in expression with no arguments")
            for value in self.literals:
                check_literal(self.operator, self.type, value)
        else:
            if self.literals is not None:
                raise ValueError(f"{self.operator} takes no list of literals")
            if self.operator is Operator.IS_NULL and self.literal is not None:
                raise ValueError("IS_NULL takes no literal")
            check_literal(self.operator, self.type, self.literal)

    @classmethod
    def trusted(cls, operator: Operator, type_: Type, column: str, literal: Literal | None = None,
                literals: tuple[Literal | None, ...] | None = None, texts: tuple[str, ...] | None = None,
                ambiguous: bool = False, double: DoubleReading = DoubleReading.NONE) -> PredicateLeaf:
        """Construct without validation, for readers that already produce well-typed leaves."""
        leaf = object.__new__(cls)
        object.__setattr__(leaf, "__dict__", {
            "operator": operator, "type": type_, "column": column, "literal": literal, "literals": literals,
            "texts": texts, "ambiguous": ambiguous, "double": double})
        return leaf

    def _key(self) -> tuple[object, ...]:
        key: tuple[object, ...] | None = self.__dict__.get("_cached_key")
        if key is None:
            lits = None if self.literals is None else tuple([literal_key(v) for v in self.literals])
            key = (self.operator, self.type, self.column, literal_key(self.literal), lits)
            object.__setattr__(self, "_cached_key", key)
        return key

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PredicateLeaf):
            return NotImplemented
        return self is other or self._key() == other._key()

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_cached_hash", None)  # str hashes differ between processes
        return state

    def __hash__(self) -> int:
        value: int | None = self.__dict__.get("_cached_hash")  # the parser de-duplicates leaves in a dict
        if value is None:
            value = hash(self._key())
            object.__setattr__(self, "_cached_hash", value)
        return value

    @property
    def values(self) -> tuple[Literal | None, ...]:
        """All literals of the leaf, whatever the operator (empty for IS_NULL)."""
        if self.literals is not None:
            return self.literals
        return () if self.operator is Operator.IS_NULL else (self.literal,)

    @property
    def has_unknown_literal(self) -> bool:
        return any(isinstance(v, UnknownLiteral) for v in self.values)

    def in_candidates(self) -> tuple[Literal | None, ...]:
        """The IN values to prune with: for an ambiguous STRING list, every contiguous run of the printed
        tokens joined by single spaces (a superset of every possible reading)."""
        if self.literals is None:
            raise ValueError("not a list leaf")
        if not self.ambiguous or self.texts is None:
            return self.literals
        tokens = self.texts
        return tuple(" ".join(tokens[i:j]) for i in range(len(tokens)) for j in range(i + 1, len(tokens) + 1))

    def between_bounds(self) -> tuple[Literal | None, Literal | None]:
        """(low, high) to prune with; for an ambiguous STRING BETWEEN, the widest bounds of every reading."""
        if self.operator is not Operator.BETWEEN or self.literals is None:
            raise ValueError("not a BETWEEN leaf")
        if not self.ambiguous or self.texts is None:
            return self.literals[0], self.literals[1]
        tokens = self.texts
        lows = [" ".join(tokens[:k]) for k in range(1, len(tokens))]
        highs = [" ".join(tokens[k:]) for k in range(1, len(tokens))]
        if not lows:
            return None, None
        return min(lows), max(highs)

    def _literal_texts(self) -> Iterator[str]:
        if self.texts is not None:
            yield from self.texts
            return
        if self.literals is not None:
            for value in self.literals:
                yield literal_str(value)
        elif self.literal is not None:
            yield literal_str(self.literal)

    def __str__(self) -> str:
        parts = [f"({self.operator.value} {self.column}"]
        for text in self._literal_texts():
            parts.append(" ")
            parts.append(text)
        parts.append(")")
        return "".join(parts)


class TreeOperator(Enum):
    """``ExpressionTree.Operator``."""

    OR = "OR"
    AND = "AND"
    NOT = "NOT"
    LEAF = "LEAF"
    CONSTANT = "CONSTANT"


@dataclass(frozen=True, slots=True)
class ExpressionTree:
    """A node of the expression: AND/OR with children, NOT with one child, a LEAF, or a TruthValue CONSTANT.

    A LEAF holds its PredicateLeaf and the leaf id it is printed with in the old form."""

    operator: TreeOperator
    children: tuple[ExpressionTree, ...] = ()
    leaf: PredicateLeaf | None = None
    leaf_id: int | None = None
    constant: TruthValue | None = None

    @staticmethod
    def and_(*children: ExpressionTree) -> ExpressionTree:
        return ExpressionTree(TreeOperator.AND, tuple(children))

    @staticmethod
    def or_(*children: ExpressionTree) -> ExpressionTree:
        return ExpressionTree(TreeOperator.OR, tuple(children))

    @staticmethod
    def not_(child: ExpressionTree) -> ExpressionTree:
        return ExpressionTree(TreeOperator.NOT, (child,))

    @staticmethod
    def of_leaf(leaf: PredicateLeaf, leaf_id: int) -> ExpressionTree:
        return ExpressionTree(TreeOperator.LEAF, leaf=leaf, leaf_id=leaf_id)

    @staticmethod
    def of_constant(value: TruthValue) -> ExpressionTree:
        return ExpressionTree(TreeOperator.CONSTANT, constant=value)

    def evaluate(self, leaf_values: Sequence[TruthValue]) -> TruthValue:
        """Hive's ExpressionTree.evaluate: the TruthValue of the tree given one TruthValue per leaf id."""
        return visit(self, _Evaluator(leaf_values))

    def _build(self, old: bool, out: list[str]) -> None:
        op = self.operator
        if op is TreeOperator.LEAF:
            out.append("leaf-")
            out.append(str(self.leaf_id) if old else str(self.leaf))
        elif op is TreeOperator.CONSTANT:
            out.append(str(self.constant))
        elif op is TreeOperator.NOT:
            out.append("(not ")
            self.children[0]._build(old, out)
            out.append(")")
        else:
            out.append("(and" if op is TreeOperator.AND else "(or")
            for child in self.children:
                out.append(" ")
                child._build(old, out)
            out.append(")")

    def __str__(self) -> str:
        out: list[str] = []
        self._build(False, out)
        return "".join(out)

    def to_old_string(self) -> str:
        out: list[str] = []
        self._build(True, out)
        return "".join(out)

    def walk(self) -> Iterator[ExpressionTree]:
        """Every node, depth first, parents before children."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


@dataclass(frozen=True)
class PrefixCondition:
    """``column`` starts with ``prefix`` (``negated``: does not): a conjunct a filter implies that Hive's
    SearchArgument has no leaf for (``col LIKE 'abc%'``, Spark's ``StringStartsWith``). NULL for a NULL value,
    case-sensitive, compared by code point (= UTF-8 bytes)."""

    column: str
    prefix: str
    negated: bool = False

    def __str__(self) -> str:
        return f"{self.column} {'NOT ' if self.negated else ''}STARTS WITH {self.prefix!r}"


@dataclass(frozen=True)
class UnknownPart:
    """A part of a filter its reader could not turn into a leaf (it is YES_NO_NULL in the SearchArgument, or
    folded away with it): keeps files. ``text`` is the part as written, ``reason`` why."""

    text: str
    reason: str

    def __str__(self) -> str:
        return f"{self.text} ({self.reason})"


@dataclass(frozen=True)
class SearchArgument:
    """A filter as Hive hands it to a storage handler: leaves in leaf-id order and an expression over them."""

    leaves: tuple[PredicateLeaf, ...]
    expression: ExpressionTree
    ambiguous: bool = field(default=False, compare=False)
    """True when the printed text this was read from has more than one reading: Hive prints string literals
    without escaping, so a literal holding parentheses may have been cut at the wrong ``)``, and then any leaf
    (not only the one holding the parenthesis) may be misread. Pruning treats such a filter as unknown."""
    prefixes: tuple[PrefixCondition, ...] = ()
    """Prefix conditions the filter also implies (top-level conjuncts Hive's SearchArgument cannot hold: they are
    a constant YES_NO_NULL in ``expression``, folded away as Hive folds it). The filter implies ``expression AND
    every prefix condition``; pruning judges both. Not printed: ``str()`` is Hive's text of ``expression``."""
    unknowns: tuple[UnknownPart, ...] = field(default=(), compare=False)
    """The parts of the filter text its reader could not turn into leaves (HiveQL: a function, ``LIKE``, two
    columns, a literal that does not convert...), in text order: each keeps files. Not printed."""
    unknown_columns: tuple[str, ...] = field(default=(), compare=False)
    """Columns the filter text names that the schema it was read with does not have, as the text spells them
    (HiveQL text: their conditions became YES_NO_NULL, so they keep every file). Not printed."""

    def __str__(self) -> str:
        """Hive's current ``toString()``: the tree with leaves inline."""
        return str(self.expression)

    def to_old_string(self, separator: str = ", ") -> str:
        """Hive's ``toOldString()`` (``separator="\\n"`` gives the Hive 0.13-1.x newline-separated form)."""
        parts = [f"leaf-{i} = {leaf}{separator}" for i, leaf in enumerate(self.leaves)]
        parts.append("expr = ")
        parts.append(self.expression.to_old_string())
        return "".join(parts)

    def evaluate(self, leaf_values: Sequence[TruthValue]) -> TruthValue:
        return self.expression.evaluate(leaf_values)


# -- walking a tree -----------------------------------------------------------------------------------------------
# After PyIceberg's BooleanExpressionVisitor: a visitor says what each kind of node is worth given its children's
# results; visit() walks post-order with an explicit stack, so no tree is too deep (the parser reads trees up to
# sarg.parser.MAX_DEPTH levels, a builder makes any). AND and OR are n-ary, as in Hive.

def post_order(root: N, children: Callable[[N], Sequence[N]], combine: Callable[[N, list[T]], T]) -> T:
    """The walk itself, for any tree: ``combine(node, [results of its children])`` for every node, children first
    (left to right), without recursion; returns the root's result. ``children`` gives a node's children (empty
    for a leaf). Nodes may be pairs ``(node, state)`` that hand each child its own state, e.g. whether it sits
    under an odd number of NOTs. A subtree shared by several parents is walked once per parent."""
    stack: list[tuple[N, Sequence[N], list[T]]] = [(root, children(root), [])]
    while True:
        node, kids, results = stack[-1]
        done = len(results)
        if done < len(kids):
            kid = kids[done]
            stack.append((kid, children(kid), []))
            continue
        value = combine(node, results)
        stack.pop()
        if not stack:
            return value
        stack[-1][2].append(value)


class TreeVisitor(ABC, Generic[T]):
    """What each kind of ExpressionTree node is worth, given its children's results (see :func:`visit`)."""

    @abstractmethod
    def visit_leaf(self, leaf: PredicateLeaf, leaf_id: int | None) -> T:
        """A LEAF node: its predicate and its leaf id."""

    @abstractmethod
    def visit_constant(self, value: TruthValue) -> T:
        """A CONSTANT node: its TruthValue."""

    @abstractmethod
    def visit_not(self, child: T) -> T:
        """A NOT node, given its child's result."""

    @abstractmethod
    def visit_and(self, children: list[T]) -> T:
        """An AND node, given its children's results (one or more, in order)."""

    @abstractmethod
    def visit_or(self, children: list[T]) -> T:
        """An OR node, given its children's results (one or more, in order)."""


def _tree_children(node: ExpressionTree) -> tuple[ExpressionTree, ...]:
    return node.children


def visit(tree: ExpressionTree, visitor: TreeVisitor[T]) -> T:
    """The visitor's result for ``tree``: every node visited after its children (left to right), iteratively."""

    def combine(node: ExpressionTree, results: list[T]) -> T:
        op = node.operator
        if op is TreeOperator.LEAF:
            assert node.leaf is not None
            return visitor.visit_leaf(node.leaf, node.leaf_id)
        if op is TreeOperator.CONSTANT:
            assert node.constant is not None
            return visitor.visit_constant(node.constant)
        if op is TreeOperator.NOT:
            return visitor.visit_not(results[0])
        if op is TreeOperator.AND:
            return visitor.visit_and(results)
        return visitor.visit_or(results)

    return post_order(tree, _tree_children, combine)


class _Evaluator(TreeVisitor[TruthValue]):
    """Hive's ``ExpressionTree.evaluate``: Hive's and/or/not tables over one TruthValue per leaf id."""

    def __init__(self, leaf_values: Sequence[TruthValue]) -> None:
        self.leaf_values = leaf_values

    def visit_leaf(self, leaf: PredicateLeaf, leaf_id: int | None) -> TruthValue:
        assert leaf_id is not None
        return self.leaf_values[leaf_id]

    def visit_constant(self, value: TruthValue) -> TruthValue:
        return value

    def visit_not(self, child: TruthValue) -> TruthValue:
        return child.not_()

    def visit_and(self, children: list[TruthValue]) -> TruthValue:
        result = children[0]
        for value in children[1:]:
            result = result.and_(value)
        return result

    def visit_or(self, children: list[TruthValue]) -> TruthValue:
        result = children[0]
        for value in children[1:]:
            result = result.or_(value)
        return result
