"""Hive's ``SearchArgumentImpl.BuilderImpl``: the same calls produce the same normalized SearchArgument.

``build()`` pushes NOT down to the leaves, drops YES_NO_NULL from ANDs (and lets it swallow an OR), flattens,
expands to CNF (an OR whose expansion would exceed 256 combinations becomes YES_NO_NULL), flattens again, and
numbers the leaves in depth-first order of the final tree. Equal leaves are merged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from sarg.errors import SargBuildError
from sarg.literals import Literal
from sarg.model import (
    DoubleReading,
    ExpressionTree,
    Operator,
    PredicateLeaf,
    SearchArgument,
    TreeOperator,
    Type,
)
from sarg.truth import TruthValue

CNF_COMBINATIONS_THRESHOLD = 256


class _Node:
    """A mutable node while building (Hive's builder mutates its tree in place)."""

    __slots__ = ("children", "constant", "leaf", "op")

    def __init__(self, op: TreeOperator, children: list[_Node] | None = None,
                 leaf: PredicateLeaf | None = None, constant: TruthValue | None = None) -> None:
        self.op = op
        self.children: list[_Node] | None = (
            children if children is not None else ([] if op in _PARENTS else None))
        self.leaf = leaf
        self.constant = constant

    def copy(self) -> _Node:
        kids = None if self.children is None else [kid.copy() for kid in self.children]
        return _Node(self.op, kids, self.leaf, self.constant)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        if self.op is TreeOperator.LEAF:
            return f"leaf-{self.leaf}"
        if self.op is TreeOperator.CONSTANT:
            return str(self.constant)
        return f"({self.op.value.lower()} {' '.join(map(repr, self.children or []))})"


_PARENTS = frozenset({TreeOperator.AND, TreeOperator.OR, TreeOperator.NOT})


def _const(value: TruthValue) -> _Node:
    return _Node(TreeOperator.CONSTANT, constant=value)


class Builder:
    """Build a SearchArgument call by call, exactly as Hive's builder does."""

    def __init__(self) -> None:
        self._root = _Node(TreeOperator.AND)
        self._stack: list[_Node] = [self._root]
        self._leaves: dict[PredicateLeaf, PredicateLeaf] = {}
        self._swapped: dict[int, PredicateLeaf] = {}  # id of a leaf -> the merged leaf that replaces it
        self._built = False

    # -- structure ---------------------------------------------------------------------------------------
    def _start(self, op: TreeOperator) -> Builder:
        node = _Node(op)
        self._parent().append(node)
        self._stack.append(node)
        return self

    def _parent(self) -> list[_Node]:
        children = self._stack[-1].children
        assert children is not None
        return children

    def start_and(self) -> Builder:
        return self._start(TreeOperator.AND)

    def start_or(self) -> Builder:
        return self._start(TreeOperator.OR)

    def start_not(self) -> Builder:
        return self._start(TreeOperator.NOT)

    def end(self) -> Builder:
        if len(self._stack) == 1:
            raise SargBuildError("end() without a matching start_and/start_or/start_not")
        current = self._stack.pop()
        assert current.children is not None
        if not current.children:
            raise SargBuildError(f"Can't create {current.op.value.lower()} expression with no children.")
        if current.op is TreeOperator.NOT and len(current.children) != 1:
            raise SargBuildError("Can't create not expression with more than 1 child.")
        return self

    # -- leaves ------------------------------------------------------------------------------------------
    def _add(self, leaf: PredicateLeaf) -> Builder:
        shared = self._leaves.setdefault(leaf, leaf)
        if leaf.double is not shared.double:
            # equal leaves whose literals read differently (a double and an exact decimal): judged both ways
            merged = dataclasses.replace(shared, double=shared.double.merge(leaf.double))
            self._leaves[leaf] = merged
            self._swapped[id(shared)] = merged
            shared = merged
        self._parent().append(_Node(TreeOperator.LEAF, leaf=shared))
        return self

    def _maybe(self) -> Builder:
        self._parent().append(_const(TruthValue.YES_NO_NULL))
        return self

    def _single(self, op: Operator, column: str | None, type_: Type, literal: Literal | None,
                double: DoubleReading) -> Builder:
        if column is None or literal is None:
            return self._maybe()
        return self._add(_leaf(op, type_, column, literal=literal, double=double))

    # ``double``: how a LONG or DECIMAL literal compares with rows (PredicateLeaf.double); not printed
    def equals(self, column: str | None, type_: Type, literal: Literal | None, *,
               double: DoubleReading = DoubleReading.NONE) -> Builder:
        return self._single(Operator.EQUALS, column, type_, literal, double)

    def null_safe_equals(self, column: str | None, type_: Type, literal: Literal | None, *,
                         double: DoubleReading = DoubleReading.NONE) -> Builder:
        return self._single(Operator.NULL_SAFE_EQUALS, column, type_, literal, double)

    def less_than(self, column: str | None, type_: Type, literal: Literal | None, *,
                  double: DoubleReading = DoubleReading.NONE) -> Builder:
        return self._single(Operator.LESS_THAN, column, type_, literal, double)

    def less_than_equals(self, column: str | None, type_: Type, literal: Literal | None, *,
                         double: DoubleReading = DoubleReading.NONE) -> Builder:
        return self._single(Operator.LESS_THAN_EQUALS, column, type_, literal, double)

    def in_(self, column: str | None, type_: Type, *literals: Literal | None, double: DoubleReading = DoubleReading.NONE) -> Builder:
        if column is None:
            return self._maybe()
        if not literals:
            raise SargBuildError("Can't create in expression with no arguments")
        return self._add(_leaf(Operator.IN, type_, column, literals=tuple(literals), double=double))

    def between(self, column: str | None, type_: Type, lower: Literal | None, upper: Literal | None, *,
                double: DoubleReading = DoubleReading.NONE) -> Builder:
        if column is None or lower is None or upper is None:
            return self._maybe()
        return self._add(_leaf(Operator.BETWEEN, type_, column, literals=(lower, upper), double=double))

    def is_null(self, column: str | None, type_: Type) -> Builder:
        if column is None:
            return self._maybe()
        return self._add(_leaf(Operator.IS_NULL, type_, column))

    def literal(self, truth: TruthValue) -> Builder:
        self._parent().append(_const(truth))
        return self

    def add_leaf(self, leaf: PredicateLeaf) -> Builder:
        """Add an already made leaf (as the parser does)."""
        return self._add(leaf)

    # -- build -------------------------------------------------------------------------------------------
    def build(self) -> SearchArgument:
        if len(self._stack) != 1:
            raise SargBuildError(f"Failed to end {len(self._stack)} operations.")
        if self._built:
            raise SargBuildError("build() was already called on this builder")
        self._built = True
        optimized = _flatten(_fold_maybe(_push_down_not(self._root)))
        expanded = _flatten(_convert_to_cnf(optimized.copy()))
        ids: dict[int, int] = {}
        leaves: list[PredicateLeaf] = []
        tree = _freeze(expanded, ids, leaves, self._swapped)
        return SearchArgument(tuple(leaves), tree)


def _leaf(op: Operator, type_: Type, column: str, literal: Literal | None = None,
          literals: tuple[Literal | None, ...] | None = None, double: DoubleReading = DoubleReading.NONE) -> PredicateLeaf:
    try:
        return PredicateLeaf(op, type_, column, literal, literals, double=double)
    except (TypeError, ValueError) as exc:
        raise SargBuildError(str(exc)) from None


def _freeze(node: _Node, ids: dict[int, int], leaves: list[PredicateLeaf],
            swapped: dict[int, PredicateLeaf]) -> ExpressionTree:
    """Immutable tree; leaf ids in depth-first order of first appearance (Hive's compactLeaves); a leaf in
    ``swapped`` is replaced by the merged leaf (``Builder._add``)."""
    if node.op is TreeOperator.LEAF:
        assert node.leaf is not None
        leaf = swapped.get(id(node.leaf), node.leaf)
        key = id(leaf)
        if key not in ids:
            ids[key] = len(leaves)
            leaves.append(leaf)
        return ExpressionTree.of_leaf(leaf, ids[key])
    if node.op is TreeOperator.CONSTANT:
        assert node.constant is not None
        return ExpressionTree.of_constant(node.constant)
    assert node.children is not None
    return ExpressionTree(node.op, tuple(_freeze(kid, ids, leaves, swapped) for kid in node.children))


def _push_down_not(root: _Node) -> _Node:
    if root.op is TreeOperator.NOT:
        assert root.children is not None
        child = root.children[0]
        if child.op is TreeOperator.NOT:
            assert child.children is not None
            return _push_down_not(child.children[0])
        if child.op is TreeOperator.CONSTANT:
            assert child.constant is not None
            return _const(child.constant.not_())
        if child.op in (TreeOperator.AND, TreeOperator.OR):
            assert child.children is not None
            flipped = TreeOperator.OR if child.op is TreeOperator.AND else TreeOperator.AND
            return _Node(flipped, [_push_down_not(_Node(TreeOperator.NOT, [kid])) for kid in child.children])
        return root
    if root.children is not None:
        root.children[:] = [_push_down_not(kid) for kid in root.children]
    return root


def _fold_maybe(expr: _Node) -> _Node:
    kids = expr.children
    if kids is None:
        return expr
    i = 0
    while i < len(kids):
        child = _fold_maybe(kids[i])
        if child.constant is TruthValue.YES_NO_NULL:
            if expr.op is TreeOperator.AND:
                del kids[i]
                continue
            if expr.op is TreeOperator.OR:
                return child
            raise SargBuildError(f"Got a maybe as child of {expr.op.value}")
        kids[i] = child
        i += 1
    if not kids:
        return _const(TruthValue.YES_NO_NULL)
    return expr


def _flatten(root: _Node) -> _Node:
    kids = root.children
    if kids is None:
        return root
    i = 0
    while i < len(kids):
        child = _flatten(kids[i])
        if child.op is root.op and child.op is not TreeOperator.NOT:
            assert child.children is not None
            grandkids = child.children
            kids[i:i + 1] = grandkids
            i += len(grandkids)
        else:
            kids[i] = child
            i += 1
    if root.op in (TreeOperator.AND, TreeOperator.OR) and len(kids) == 1:
        return kids[0]
    return root


def _convert_to_cnf(root: _Node) -> _Node:
    kids = root.children
    if kids is None:
        return root
    kids[:] = [_convert_to_cnf(kid) for kid in kids]
    if root.op is not TreeOperator.OR:
        return root
    non_and: list[_Node] = []
    and_list: list[_Node] = []
    for child in kids:
        if child.op is TreeOperator.AND:
            and_list.append(child)
        elif child.op is TreeOperator.OR:
            assert child.children is not None
            non_and.extend(child.children)
        else:
            non_and.append(child)
    if not and_list:
        return root
    if not _within_threshold(and_list):
        return _const(TruthValue.YES_NO_NULL)
    return _Node(TreeOperator.AND, _all_combinations(and_list, non_and))


def _within_threshold(and_list: Iterable[_Node]) -> bool:
    combinations = 1
    for tree in and_list:
        assert tree.children is not None
        combinations *= len(tree.children)
        if combinations > CNF_COMBINATIONS_THRESHOLD:
            return False
    return True


def _all_combinations(and_list: list[_Node], non_and: list[_Node]) -> list[_Node]:
    result: list[_Node] = []
    for position, and_node in enumerate(and_list):
        assert and_node.children is not None
        if position == 0:
            for kid in and_node.children:
                result.append(_Node(TreeOperator.OR, [node.copy() for node in non_and] + [kid]))
        else:
            work = result
            result = []
            for kid in and_node.children:
                for or_node in work:
                    copy = or_node.copy()
                    assert copy.children is not None
                    copy.children.append(kid)
                    result.append(copy)
    return result
