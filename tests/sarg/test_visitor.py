"""The one way to walk an ExpressionTree bottom-up (sarg.TreeVisitor, sarg.visit, sarg.post_order): post-order, left
to right, without recursion, and ExpressionTree.evaluate is a visitor."""

from __future__ import annotations

import itertools
import sys

import sarg
from sarg import ExpressionTree, PredicateLeaf, TreeOperator, TreeVisitor, TruthValue, Type, post_order, visit


class _Text(TreeVisitor[str]):
    def visit_leaf(self, leaf: PredicateLeaf, leaf_id: int | None) -> str:
        return f"{leaf.column}#{leaf_id}"

    def visit_constant(self, value: TruthValue) -> str:
        return value.name

    def visit_not(self, child: str) -> str:
        return f"!{child}"

    def visit_and(self, children: list[str]) -> str:
        return "&(" + ",".join(children) + ")"

    def visit_or(self, children: list[str]) -> str:
        return "|(" + ",".join(children) + ")"


def test_visit_is_post_order_left_to_right() -> None:
    s = sarg.parse("(and (or leaf-(EQUALS a 1) leaf-(IS_NULL b)) (not leaf-(EQUALS c 2)) YES_NO_NULL)")
    assert visit(s.expression, _Text()) == "&(|(a#0,b#1),!c#2,YES_NO_NULL)"


def test_a_deep_tree_is_walked_without_recursion() -> None:
    leaf = PredicateLeaf(sarg.Operator.IS_NULL, Type.LONG, "a")
    depth = sys.getrecursionlimit() * 20
    tree = ExpressionTree.of_leaf(leaf, 0)
    for i in range(depth):
        tree = ExpressionTree.not_(tree) if i % 2 else ExpressionTree.and_(tree, ExpressionTree.of_constant(
            TruthValue.YES))
    assert tree.evaluate([TruthValue.YES_NULL]) is TruthValue.YES_NULL  # an even number of NOTs
    assert tree.evaluate([TruthValue.NO]) is TruthValue.NO
    assert visit(tree, _Text()).count("!") == depth // 2


def test_evaluate_is_hives_and_or_not() -> None:
    leaf = PredicateLeaf(sarg.Operator.IS_NULL, Type.LONG, "a")
    values = list(TruthValue)
    for x, y in itertools.product(values, values):
        a, b = ExpressionTree.of_leaf(leaf, 0), ExpressionTree.of_leaf(leaf, 1)
        assert ExpressionTree.and_(a, b).evaluate([x, y]) is x.and_(y)
        assert ExpressionTree.or_(a, b, ExpressionTree.not_(b)).evaluate([x, y]) is x.or_(y).or_(y.not_())


def test_post_order_carries_state_down_in_pairs() -> None:
    """Which leaves sit under an odd number of NOTs: walk (node, negated) pairs."""
    s = sarg.parse("(and (not (or leaf-(EQUALS a 1) (not leaf-(EQUALS b 2)))) leaf-(EQUALS c 3))")

    def children(pair: tuple[ExpressionTree, bool]) -> list[tuple[ExpressionTree, bool]]:
        node, negated = pair
        flip = node.operator is TreeOperator.NOT
        return [(kid, negated != flip) for kid in node.children]

    def combine(pair: tuple[ExpressionTree, bool], results: list[list[str]]) -> list[str]:
        node, negated = pair
        if node.leaf is not None:
            return [f"{'-' if negated else '+'}{node.leaf.column}"]
        return [name for result in results for name in result]

    assert post_order((s.expression, False), children, combine) == ["-a", "+b", "+c"]
