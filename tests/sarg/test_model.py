"""The sarg model without Hive: immutability, equality and hashing, TruthValue, literals, builder rules."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sarg
from sarg import ExpressionTree, Operator, PredicateLeaf, Timestamp, TruthValue, Type
from sarg.literals import decimal_str, java_double_str, literal_str

# -- immutability, equality, hashing ----------------------------------------------------------------------------


def test_model_is_immutable() -> None:
    s = sarg.parse("(and leaf-(EQUALS a 1) leaf-(IN b 1 2))")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.leaves[0].column = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.expression.children = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.leaves = ()  # type: ignore[misc]
    assert isinstance(s.leaves, tuple) and isinstance(s.expression.children, tuple)
    assert isinstance(s.leaves[1].literals, tuple)


def test_equal_leaves_are_equal_and_hash_alike() -> None:
    a = PredicateLeaf(Operator.EQUALS, Type.LONG, "x", 5)
    b = PredicateLeaf(Operator.EQUALS, Type.LONG, "x", 5, texts=("5",))
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    assert a != PredicateLeaf(Operator.EQUALS, Type.LONG, "y", 5)
    assert a != PredicateLeaf(Operator.LESS_THAN, Type.LONG, "x", 5)
    assert a != PredicateLeaf(Operator.EQUALS, Type.LONG, "x", 6)
    assert a != PredicateLeaf(Operator.IN, Type.LONG, "x", literals=(5,))


def test_leaf_equality_is_java_equality() -> None:
    zero = PredicateLeaf(Operator.EQUALS, Type.FLOAT, "f", 0.0)
    minus_zero = PredicateLeaf(Operator.EQUALS, Type.FLOAT, "f", -0.0)
    assert zero != minus_zero  # Double.equals: -0.0 is not 0.0
    nan1 = PredicateLeaf(Operator.EQUALS, Type.FLOAT, "f", math.nan)
    nan2 = PredicateLeaf(Operator.EQUALS, Type.FLOAT, "f", float("nan"))
    assert nan1 == nan2 and hash(nan1) == hash(nan2)  # Double.equals: NaN is NaN
    in_nan = PredicateLeaf(Operator.IN, Type.FLOAT, "f", literals=(math.nan, None))
    assert in_nan == PredicateLeaf(Operator.IN, Type.FLOAT, "f", literals=(float("nan"), None))
    d1 = PredicateLeaf(Operator.EQUALS, Type.DECIMAL, "d", Decimal("12.50"))
    d2 = PredicateLeaf(Operator.EQUALS, Type.DECIMAL, "d", Decimal("12.5"))
    assert d1 == d2 and hash(d1) == hash(d2)  # HiveDecimal: by value
    long_a = PredicateLeaf(Operator.EQUALS, Type.DECIMAL, "d", Decimal("1.00000000000000000000000000000001"))
    long_b = PredicateLeaf(Operator.EQUALS, Type.DECIMAL, "d", Decimal("1"))
    assert long_a != long_b  # more than 28 digits still count
    assert PredicateLeaf(Operator.EQUALS, Type.BOOLEAN, "b", True) != PredicateLeaf(
        Operator.EQUALS, Type.LONG, "b", 1)


def test_builder_merges_equal_leaves_like_hive() -> None:
    s = (sarg.builder().start_or().equals("f", Type.FLOAT, math.nan).equals("f", Type.FLOAT, math.nan)
         .equals("f", Type.FLOAT, 0.0).equals("f", Type.FLOAT, -0.0).end().build())
    assert len(s.leaves) == 3
    assert str(s) == "(or leaf-(EQUALS f NaN) leaf-(EQUALS f NaN) leaf-(EQUALS f 0.0) leaf-(EQUALS f -0.0))"
    assert s.to_old_string() == ("leaf-0 = (EQUALS f NaN), leaf-1 = (EQUALS f 0.0), leaf-2 = (EQUALS f -0.0), "
                                 "expr = (or leaf-0 leaf-0 leaf-1 leaf-2)")


def test_search_arguments_hash_and_compare() -> None:
    a = sarg.parse("(and leaf-(EQUALS a 1) (not leaf-(IS_NULL b)))")
    b = sarg.builder().equals("a", Type.LONG, 1).start_not().is_null("b", Type.STRING).end().build()
    assert a == b and hash(a) == hash(b)
    assert a != sarg.parse("(and leaf-(EQUALS a 2) (not leaf-(IS_NULL b)))")
    assert {a: 1}[b] == 1


def test_leaf_rejects_wrong_shapes_and_classes() -> None:
    with pytest.raises(TypeError):
        PredicateLeaf(Operator.EQUALS, Type.LONG, "x", 1.0)
    with pytest.raises(TypeError):
        PredicateLeaf(Operator.EQUALS, Type.LONG, "x", True)
    with pytest.raises(TypeError):
        PredicateLeaf(Operator.EQUALS, Type.DATE, "x", dt.datetime(2020, 1, 1))
    with pytest.raises(ValueError):
        PredicateLeaf(Operator.BETWEEN, Type.LONG, "x", literals=(1,))
    with pytest.raises(ValueError):
        PredicateLeaf(Operator.IS_NULL, Type.LONG, "x", 1)
    with pytest.raises(ValueError):
        PredicateLeaf(Operator.IN, Type.LONG, "x", literals=())
    with pytest.raises(sarg.SargBuildError):
        sarg.builder().equals("x", Type.FLOAT, 1)
    with pytest.raises(sarg.SargBuildError):
        sarg.builder().in_("x", Type.LONG)


def test_builder_structure_errors() -> None:
    with pytest.raises(sarg.SargBuildError):
        sarg.builder().end()
    with pytest.raises(sarg.SargBuildError):
        sarg.builder().start_or().end()
    with pytest.raises(sarg.SargBuildError):
        sarg.builder().start_not().is_null("a", Type.LONG).is_null("b", Type.LONG).end()
    with pytest.raises(sarg.SargBuildError):
        sarg.builder().start_and().is_null("a", Type.LONG).build()
    b = sarg.builder().is_null("a", Type.LONG)
    b.build()
    with pytest.raises(sarg.SargBuildError):
        b.build()
    assert issubclass(sarg.SargBuildError, ValueError)


def test_builder_normalization_examples() -> None:
    b = sarg.builder()
    s = (b.start_not().start_or().less_than("a", Type.LONG, 5).start_not().is_null("b", Type.LONG).end().end()
         .end().build())
    assert str(s) == "(and (not leaf-(LESS_THAN a 5)) leaf-(IS_NULL b))"
    maybe = sarg.builder().start_or().equals("a", Type.LONG, 1).literal(TruthValue.YES_NO_NULL).end().build()
    assert str(maybe) == "YES_NO_NULL" and maybe.leaves == ()
    null_lit = sarg.builder().equals("a", Type.LONG, None).equals(None, Type.LONG, 1).build()
    assert str(null_lit) == "YES_NO_NULL"
    assert str(sarg.builder().build()) == "YES_NO_NULL"
    cnf = (sarg.builder().start_or().start_and().is_null("a", Type.LONG).is_null("b", Type.LONG).end()
           .is_null("c", Type.LONG).end().build())
    assert str(cnf) == "(and (or leaf-(IS_NULL c) leaf-(IS_NULL a)) (or leaf-(IS_NULL c) leaf-(IS_NULL b)))"
    assert cnf.to_old_string() == ("leaf-0 = (IS_NULL c), leaf-1 = (IS_NULL a), leaf-2 = (IS_NULL b), "
                                   "expr = (and (or leaf-0 leaf-1) (or leaf-0 leaf-2))")
    assert sarg.builder().is_null("a", Type.LONG).build() == sarg.parse("leaf-(IS_NULL a)", {"a": "bigint"})


def test_expression_tree_walk_and_evaluate() -> None:
    leaf = PredicateLeaf(Operator.IS_NULL, Type.LONG, "a")
    tree = ExpressionTree.and_(ExpressionTree.of_leaf(leaf, 0),
                               ExpressionTree.not_(ExpressionTree.of_constant(TruthValue.YES_NULL)))
    assert [n.operator.name for n in tree.walk()] == ["AND", "LEAF", "NOT", "CONSTANT"]
    assert tree.evaluate([TruthValue.YES]) is TruthValue.NO_NULL
    assert str(tree) == "(and leaf-(IS_NULL a) (not YES_NULL))"
    assert tree.to_old_string() == "(and leaf-0 (not YES_NULL))"


# -- TruthValue ------------------------------------------------------------------------------------------------

def test_truth_value_reference_examples() -> None:
    assert TruthValue.YES_NULL.and_(TruthValue.NO_NULL) is TruthValue.NO_NULL
    assert TruthValue.NULL.and_(TruthValue.YES_NO) is TruthValue.NO_NULL
    assert TruthValue.NULL.or_(TruthValue.NO_NULL) is TruthValue.NULL
    assert TruthValue.YES_NULL.not_() is TruthValue.NO_NULL
    assert [tv.name for tv in TruthValue if not tv.is_needed()] == ["NO", "NULL", "NO_NULL"]
    assert TruthValue.YES_NO.with_nulls(True) is TruthValue.YES_NO_NULL
    assert TruthValue.NO.with_nulls(False) is TruthValue.NO
    assert TruthValue.of(True, False, True) is TruthValue.YES_NULL
    with pytest.raises(KeyError):
        TruthValue.of(False, False, False)


@given(a=st.sampled_from(list(TruthValue)), b=st.sampled_from(list(TruthValue)))
def test_truth_value_laws(a: TruthValue, b: TruthValue) -> None:
    assert a.and_(b) is b.and_(a) and a.or_(b) is b.or_(a)
    assert a.not_().not_() is a
    assert a.and_(b).not_() is a.not_().or_(b.not_())  # De Morgan holds in Kleene logic
    assert a.and_(TruthValue.YES) is a and a.or_(TruthValue.NO) is a


# -- literals ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "text"), [
    (5.0, "5.0"), (1e7, "1.0E7"), (1e-4, "1.0E-4"), (-0.0, "-0.0"), (0.0, "0.0"), (math.nan, "NaN"),
    (math.inf, "Infinity"), (-math.inf, "-Infinity"), (0.001, "0.001"), (9999999.0, "9999999.0"),
    (1e-7, "1.0E-7"), (123456.789, "123456.789"), (0.1, "0.1"), (1.5e300, "1.5E300"), (-2.5e-5, "-2.5E-5"),
])
def test_java_double_to_string(value: float, text: str) -> None:
    assert java_double_str(value) == text


@pytest.mark.parametrize(("value", "text"), [
    ("12.50", "12.5"), ("0.000", "0"), ("-0.10", "-0.1"), ("1E+3", "1000"), ("100", "100"),
    ("-9999999999999999999999999999.9999999999", "-9999999999999999999999999999.9999999999"),
    ("99999999999999999999999999999999999999", "99999999999999999999999999999999999999"),
    ("0.00000000000000000000000000000000000001", "0.00000000000000000000000000000000000001"),
])
def test_hive_decimal_to_string(value: str, text: str) -> None:
    assert decimal_str(Decimal(value)) == text


def test_timestamp_keeps_nanoseconds_and_orders() -> None:
    a = Timestamp.parse("2023-01-01 10:00:00.000000001")
    b = Timestamp.parse("2023-01-01 10:00:00.00000001")
    assert a.nanos == 1 and b.nanos == 10 and a < b
    assert str(a) == "2023-01-01 10:00:00.000000001"
    assert str(Timestamp.parse("2023-01-01 10:00:00")) == "2023-01-01 10:00:00.0"
    assert str(Timestamp.parse("0999-07-04 00:00:00.5")) == "0999-07-04 00:00:00.5"
    assert Timestamp.parse("1969-12-31 23:59:59.5").epoch_nanos == -500_000_000
    assert Timestamp.from_datetime(dt.datetime(2020, 5, 6, 7, 8, 9, 123456)) == Timestamp.parse(
        "2020-05-06 07:08:09.123456")
    with pytest.raises(ValueError):
        Timestamp(0, 1_000_000_000)


def test_literal_str_of_each_type() -> None:
    assert literal_str(None) == "null"
    assert literal_str(True) == "true"
    assert literal_str(dt.date(5, 1, 2)) == "0005-01-02"
    assert literal_str(-(2**63)) == "-9223372036854775808"
    assert literal_str(dt.datetime(2020, 1, 1)) == "2020-01-01 00:00:00.0"
