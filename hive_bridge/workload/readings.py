"""Every reading of a printed filter, without recursion: the parse nodes and the packrat driver that the readers of
Spark's printed filters (:mod:`hive_bridge.workload.printed_filters`) and of parquet's printed predicates
(:mod:`hive_bridge.workload.parquet`) share.

Printed literals are raw, so a text may read more than one way; a reader's rules return *every* reading from a
position (``(node, end)`` pairs). Rules are generators: a rule asks for the readings at another position by
yielding it (``for left, end in (yield pos + 1): ...``) and :meth:`Readings.expr` answers those requests from an
explicit stack, each position once (packrat memo), so no depth of nesting recurses in Python.

Nesting is measured as HiveQL measures it (``sarg.errors.MAX_DEPTH``, leaves counted): an AND in an AND (an OR in
an OR) is the same level and NOT NOT cancels, so a long chain ``((a OR b) OR c) ...`` is two levels whatever its
length. A reading nested deeper than the limit is refused with ``sarg.errors.too_deep``'s error as soon as it is
built. :func:`operands` and :func:`without_double_not` give a node's merged view, so code that walks the nodes
recurses only once per level.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from typing import Any

from sarg.errors import MAX_DEPTH, too_deep

LOGIC = frozenset({"and", "or"})
UNKNOWN_CALL = "unknown()"


class Node:
    """One parsed filter: ``kind`` and, by kind, its column, operator, raw literal(s) or children.

    Never changed once made (nodes are shared between readings), compared by value; the hash and the nesting ``depth`` (HiveQL's levels: leaves 1, an AND in an AND
    or an OR in an OR the same level, NOT NOT cancelled) are computed once, from the children's."""

    __slots__ = ("_hash", "children", "column", "column_ref", "depth", "kind", "op", "text", "values")

    kind: str  # "and", "or", "not", "unknown", or a reader's leaf kinds
    column: str
    op: str
    values: tuple[str, ...]
    children: tuple[Node, ...]
    text: str  # of an unknown node: what it was
    column_ref: str  # the attribute as printed (name#id), Catalyst only
    depth: int
    _hash: int

    def __init__(self, kind: str, column: str = "", op: str = "", values: tuple[str, ...] = (),
                 children: tuple[Node, ...] = (), text: str = "", column_ref: str = "") -> None:
        self.kind = kind
        self.column = column
        self.op = op
        self.values = values
        self.children = children
        self.text = text
        self.column_ref = column_ref
        self.depth = _depth(kind, children) if children else 1
        self._hash = hash((kind, column, op, values, text, column_ref,
                           tuple(c._hash for c in children) if children else ()))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node):
            return NotImplemented
        pairs = [(self, other)]
        while pairs:  # no recursion: a chain of ORs may be thousands of nodes deep
            a, b = pairs.pop()
            if a is b:
                continue
            if (a._hash != b._hash or len(a.children) != len(b.children)
                    or (a.kind, a.column, a.op, a.values, a.text, a.column_ref)
                    != (b.kind, b.column, b.op, b.values, b.text, b.column_ref)):
                return False
            pairs.extend(zip(a.children, b.children, strict=True))
        return True

    def __repr__(self) -> str:
        if self.kind in LOGIC or self.kind == "not":
            return f"Node({self.kind!r}, {len(self.children)} children, depth {self.depth})"
        return f"Node({self.kind!r}, column={self.column!r}, op={self.op!r}, values={self.values!r}, text={self.text!r})"


def _depth(kind: str, children: tuple[Node, ...]) -> int:
    if not children:
        return 1
    if kind == "not":
        child = children[0]
        return child.children[0].depth if child.kind == "not" else child.depth + 1  # NOT NOT x is x
    return max(c.depth if c.kind == kind else c.depth + 1 for c in children)


def operands(node: Node) -> list[Node]:
    """The operands of an AND / OR with the nested ANDs of an AND (ORs of an OR) merged, in order."""
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.kind == node.kind:
            stack.extend(reversed(n.children))
        else:
            out.append(n)
    return out


def without_double_not(node: Node) -> tuple[Node, bool]:
    """A node with its leading NOTs taken off, and whether an odd number of them was (NOT NOT x is x)."""
    negated = False
    while node.kind == "not":
        node, negated = node.children[0], not negated
    return node, negated


def walk(node: Node) -> Iterator[Node]:
    """Every node, parents first (no recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def render(root: Node, leaf: Callable[[Node], str | None], unknowns: list[str] | None = None,
           describe: Callable[[Node], str] | None = None) -> str | None:
    """A parsed filter as text, its leaves by ``leaf`` (None: unknown), with the tree's own brackets, NOTs and
    binary AND / OR (HiveQL merges the levels back): None when every leaf is unknown; an unknown part of an AND
    or OR is written ``unknown()`` (a call HiveQL reads as "maybe") and, given ``unknowns``, listed there as
    ``describe`` writes it. No recursion: a printed chain of ORs may be thousands of nodes deep."""
    known: dict[int, bool] = {}
    texts: dict[int, str | None] = {}
    for n in reversed(list(walk(root))):  # children before their parents
        if n.kind in LOGIC:
            known[id(n)] = any(known[id(c)] for c in n.children)
        elif n.kind == "not":
            known[id(n)] = known[id(n.children[0])]
        else:
            texts[id(n)] = text = leaf(n)
            known[id(n)] = text is not None
    if not known[id(root)]:
        return None
    out: list[str] = []
    todo: list[Node | str] = [root]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            out.append(item)
        elif item.kind in LOGIC:
            pieces: list[Node | str] = ["("]
            for i, child in enumerate(item.children):
                if i:
                    pieces.append(f" {item.kind.upper()} ")
                if known[id(child)]:
                    pieces.append(child)
                else:
                    pieces.append(UNKNOWN_CALL)
                    if unknowns is not None and describe is not None:
                        unknowns.append(describe(child))
            pieces.append(")")
            todo.extend(reversed(pieces))
        elif item.kind == "not":
            todo += [item.children[0], "NOT "]
        else:
            text = texts[id(item)]
            assert text is not None
            out.append(text)
    return "".join(out)


Alternatives = list[tuple[Node, int]]
Rule = Generator[int, Alternatives, Alternatives]


class Readings:
    """The packrat driver: :meth:`expr` runs the reader's :meth:`rule` at a position, answering the positions its
    generators yield from an explicit stack. ``text`` is what positions index; ``shown`` (the text errors quote)
    holds it at ``offset``."""

    max_readings = 32

    def __init__(self, text: str, shown: str | None = None, offset: int = 0) -> None:
        self.text = text
        self.shown = text if shown is None else shown
        self.offset = offset
        self.memo: dict[int, Alternatives] = {}

    def rule(self, pos: int) -> Rule:
        """Every reading of a filter starting at ``pos`` (a generator: see the module doc)."""
        raise NotImplementedError
        yield pos  # pragma: no cover - makes this a generator

    def expr(self, pos: int) -> Alternatives:
        memo = self.memo
        hit = memo.get(pos)
        if hit is not None:
            return hit
        memo[pos] = []  # a left-recursive probe (the same position again) finds nothing
        stack: list[tuple[int, Rule]] = [(pos, self.rule(pos))]
        answer: Any = None
        while stack:
            at, gen = stack[-1]
            try:
                wanted = gen.send(answer)
            except StopIteration as done:
                stack.pop()
                answer = memo[at] = self._dedupe(done.value)
                continue
            known = memo.get(wanted)
            if known is not None:
                answer = known
            else:
                memo[wanted] = []
                stack.append((wanted, self.rule(wanted)))
                answer = None
        return memo[pos]

    def _dedupe(self, alts: Alternatives) -> Alternatives:
        seen: dict[tuple[Node, int], None] = {}
        for a in alts:
            seen.setdefault(a, None)
            if len(seen) >= self.max_readings:
                break
        return list(seen)

    def node(self, kind: str, children: tuple[Node, ...], pos: int) -> Node:
        """A logic node read at ``pos``, refused past ``MAX_DEPTH`` levels."""
        made = Node(kind, children=children)
        if made.depth > MAX_DEPTH:
            raise too_deep(self.shown, self.offset + pos)
        return made

    def closes(self, start: int, closer: str = ")") -> list[int]:
        """Positions of ``closer`` at or after ``start``: as many as a position keeps readings."""
        out: list[int] = []
        text = self.text
        i = text.find(closer, start)
        while i >= 0 and len(out) < self.max_readings:
            out.append(i)
            i = text.find(closer, i + 1)
        return out


__all__ = ["LOGIC", "UNKNOWN_CALL", "Alternatives", "Node", "Readings", "Rule", "operands", "render", "walk",
           "without_double_not"]
