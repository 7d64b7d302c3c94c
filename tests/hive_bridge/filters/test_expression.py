"""Translation of SearchArguments to HudiExpression: exact NOT push-down, unknown leaves, frozen nodes."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest

import sarg
from hive_bridge.filters.expression import (
    And,
    Constant,
    ExpressionError,
    ExpressionVisitor,
    HudiExpression,
    Not,
    Op,
    Or,
    Predicate,
    from_builder,
    translate,
    visit,
)
from sarg import DoubleReading, TruthValue, Type

EITHER = DoubleReading.EITHER  # how a printed LONG or DECIMAL leaf reads (PredicateLeaf.double)
SCHEMA = {"a": "bigint", "s": "string", "c": "char(4)", "f": "double", "d": "decimal(10,2)"}


def tr(text: str) -> HudiExpression:
    return translate(sarg.parse(text, SCHEMA), SCHEMA)


@pytest.mark.parametrize(("text", "op"), [
    ("(not leaf-(LESS_THAN_EQUALS a 5))", Op.GT),
    ("(not leaf-(LESS_THAN a 5))", Op.GTEQ),
    ("(not leaf-(EQUALS a 5))", Op.NOT_EQ),
    ("(not leaf-(IN a 1 2 3))", Op.NOT_IN),
    ("(not leaf-(BETWEEN a 1 9))", Op.NOT_BETWEEN),  # HIVE-24209: the NOT must not be lost
    ("(not leaf-(IS_NULL a))", Op.IS_NOT_NULL),
    ("leaf-(LESS_THAN a 5)", Op.LT),
    ("leaf-(LESS_THAN_EQUALS a 5)", Op.LTEQ),
])
def test_not_is_pushed_into_leaves_where_exact(text: str, op: Op) -> None:
    expr = tr(text)
    assert isinstance(expr, Predicate)
    assert expr.op is op
    assert expr.column == "a"


def test_greater_than_reads_as_sql() -> None:
    assert str(tr("(not leaf-(LESS_THAN_EQUALS a 5))")) == "a > 5"
    assert str(tr("leaf-0 = (LESS_THAN_EQUALS a 5), expr = (not leaf-0)")) == "a > 5"


def test_not_of_null_safe_equals_stays_a_not_node() -> None:
    expr = tr("(not leaf-(NULL_SAFE_EQUALS a 5))")
    assert isinstance(expr, Not)
    assert isinstance(expr.child, Predicate) and expr.child.op is Op.NULL_SAFE_EQ
    assert ~expr == expr.child


def test_negation_is_an_involution_and_de_morgan() -> None:
    p = Predicate(Op.LT, "a", Type.LONG, (5,))
    q = Predicate(Op.IN, "s", Type.STRING, ("x", None))
    assert ~~p == p
    assert ~(p & q) == Or((~p, ~q))
    assert ~(p | q) == And((~p, ~q))
    for op in Op:
        if op.negation is not None:
            assert op.negation.negation is op


def test_not_over_and_from_a_lenient_parse() -> None:
    expr = tr("(not (and leaf-(LESS_THAN a 5) leaf-(EQUALS s x)))")
    # a printed LONG literal may be a double Hive's builder boxed: it reads EITHER way
    assert expr == Or((Predicate(Op.GTEQ, "a", Type.LONG, (5,), double=EITHER),
                       Predicate(Op.NOT_EQ, "s", Type.STRING, ("x",))))


def test_unknown_literal_becomes_maybe_and_stays_in_the_or() -> None:
    # apache/auron #2369: dropping an unsupported disjunct from an OR loses rows
    expr = tr("(or leaf-(EQUALS a DynamicValue(RS_7_a_min)) leaf-(EQUALS a 3))")
    assert isinstance(expr, Or)
    unknown = expr.parts[0]
    assert isinstance(unknown, Constant)
    assert unknown.value is TruthValue.YES_NO_NULL and unknown.unknown
    assert "dynamic" in unknown.reason.lower() or "DynamicValue" in unknown.reason


def test_constants_are_kept_and_negated() -> None:
    expr = tr("(and leaf-(EQUALS a 1) YES_NO_NULL)")
    assert isinstance(expr, And)
    assert isinstance(expr.parts[1], Constant) and expr.parts[1].unknown
    assert ~Constant(TruthValue.YES_NULL) == Constant(TruthValue.NO_NULL)
    assert tr("(not YES)") == Constant(TruthValue.NO)


def test_untypable_literal_against_the_schema() -> None:
    expr = tr("leaf-(EQUALS a abc)")
    assert isinstance(expr, Constant) and expr.value is TruthValue.YES_NO_NULL


def test_null_literals() -> None:
    assert isinstance(tr("leaf-(EQUALS a)"), Constant)
    expr = tr("leaf-(NULL_SAFE_EQUALS a)")
    assert isinstance(expr, Predicate) and expr.op is Op.IS_NULL
    expr = tr("leaf-(IN a 1 null)")
    assert isinstance(expr, Predicate) and expr.literals == (1, None)


def test_ambiguous_string_list_is_a_superset_and_not_negatable() -> None:
    expr = tr("leaf-(IN s a b c)")
    assert isinstance(expr, Predicate) and expr.superset
    assert {"a", "b", "c", "a b", "b c", "a b c"} <= set(expr.literals)  # type: ignore[arg-type]
    negated = tr("(not leaf-(IN s a b c))")
    assert isinstance(negated, Constant) and negated.value is TruthValue.YES_NO_NULL and negated.unknown


def test_string_literal_with_parentheses_is_unknown() -> None:
    expr = tr("leaf-(EQUALS s a)b)")
    assert isinstance(expr, Constant) and expr.value is TruthValue.YES_NO_NULL


def test_char_columns_carry_their_length() -> None:
    expr = tr("leaf-(EQUALS c ab)")
    assert isinstance(expr, Predicate) and expr.char_length == 4


def test_builder_and_decimal_scale_survive() -> None:
    expr = from_builder(lambda b: b.start_not().between("d", Type.DECIMAL, Decimal("1.50"), Decimal("3")).end())
    assert isinstance(expr, Predicate) and expr.op is Op.NOT_BETWEEN
    assert expr.literals == (Decimal("1.50"), Decimal("3"))


def test_nodes_are_frozen_and_hashable() -> None:
    p = Predicate(Op.EQ, "a", Type.LONG, (1,))
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.column = "b"  # type: ignore[misc]
    assert hash(p) == hash(Predicate(Op.EQ, "a", Type.LONG, (1,)))
    assert len({p, Predicate(Op.EQ, "a", Type.LONG, (1,))}) == 1


def test_predicate_validation() -> None:
    with pytest.raises(ExpressionError):
        Predicate(Op.BETWEEN, "a", Type.LONG, (1,))
    with pytest.raises(ExpressionError):
        Predicate(Op.EQ, "a", Type.LONG, (None,))
    with pytest.raises(ExpressionError):
        Predicate(Op.IS_NULL, "a", Type.LONG, (1,))


class _Count(ExpressionVisitor[int]):
    def visit_and(self, node: And, results: list[int]) -> int:
        return 1 + sum(results)

    def visit_or(self, node: Or, results: list[int]) -> int:
        return 1 + sum(results)

    def visit_not(self, node: Not, result: int) -> int:
        return 1 + result

    def visit_constant(self, node: Constant, negated: bool) -> int:
        return 1

    def visit_predicate(self, node: Predicate, negated: bool) -> int:
        return 1


def test_visitor_and_walk() -> None:
    expr = tr("(and (or leaf-(EQUALS a 1) leaf-(EQUALS s x)) (not leaf-(NULL_SAFE_EQUALS a 2)) YES_NO_NULL)")
    assert visit(expr, _Count()) == len(list(expr.walk())) == 7
    assert [str(p) for p in expr.predicates()] == ["a = 1", "s = 'x'", "a <=> 2"]


def test_deep_trees_translate_without_recursion_errors() -> None:
    text = "(not " * 150 + "leaf-(EQUALS a 1)" + ")" * 150
    expr = tr(text)
    assert expr == Predicate(Op.EQ, "a", Type.LONG, (1,), double=EITHER)


def test_all_printed_forms_translate_alike() -> None:
    new = tr("(and leaf-(LESS_THAN a 5) (not leaf-(EQUALS s hi)))")
    old = tr("leaf-0 = (LESS_THAN a 5), leaf-1 = (EQUALS s hi), expr = (and leaf-0 (not leaf-1))")
    older = tr("leaf-0 = (LESS_THAN a 5)\nleaf-1 = (EQUALS s hi)\nexpr = (and leaf-0 (not leaf-1))")
    assert new == old == older == And((Predicate(Op.LT, "a", Type.LONG, (5,), double=EITHER),
                                       Predicate(Op.NOT_EQ, "s", Type.STRING, ("hi",))))


def test_visit_evaluates_bottom_up_with_polarity() -> None:
    expr = tr("(or (and leaf-(EQUALS a 1) YES) (not leaf-(NULL_SAFE_EQUALS a 2)))")
    negated_leaves: list[str] = []

    class Truth(ExpressionVisitor[TruthValue]):
        def visit_and(self, node: And, results: list[TruthValue]) -> TruthValue:
            out = results[0]
            for v in results[1:]:
                out = out.and_(v)
            return out

        def visit_or(self, node: Or, results: list[TruthValue]) -> TruthValue:
            out = results[0]
            for v in results[1:]:
                out = out.or_(v)
            return out

        def visit_not(self, node: Not, result: TruthValue) -> TruthValue:
            return result.not_()

        def visit_constant(self, node: Constant, negated: bool) -> TruthValue:
            return node.value

        def visit_predicate(self, node: Predicate, negated: bool) -> TruthValue:
            if negated:
                negated_leaves.append(str(node))
            return TruthValue.YES_NULL

    assert visit(expr, Truth()) is TruthValue.YES_NULL.or_(TruthValue.NO_NULL)
    assert negated_leaves == ["a <=> 2"]  # <=> has no negated operator: the NOT stays above it
    deep = Not(Not(Predicate(Op.EQ, "a", Type.LONG, (1,))))
    negated_leaves.clear()
    visit(deep, Truth())
    assert negated_leaves == []
    visit(Not(Predicate(Op.EQ, "a", Type.LONG, (1,))), Truth())
    assert negated_leaves == ["a = 1"]
