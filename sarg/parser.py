"""Read SearchArgument text (all three forms Hive prints) into the typed model.

Reading rules:
- Literals are typed by the schema when one is given (a mapping column -> type, or a Hive struct type
  string); otherwise by their text: integer, Java double text, ``yyyy-mm-dd``, the timestamp pattern with its
  space, ``true``/``false``, else string. Text that does not convert to the column's type, and
  ``DynamicValue(...)``, becomes an ``UnknownLiteral`` that the evaluator treats as unknown.
- Strings keep every character. IN and BETWEEN lists are split at single spaces; for STRING values that
  reading is ambiguous (a value may itself hold spaces), so such leaves are marked ``ambiguous`` and prune
  only with a superset of every reading. In lists ``null`` is null, except for STRING columns where the text is
  kept (safe for pruning either way).
- A leaf's literal text ends at the first ``)`` followed by what may follow a leaf; a STRING literal holding
  parentheses could have been cut differently by a printer that never escapes, so it is marked ambiguous too.
- In the inline form, leaves are numbered in order of first appearance; a leaf equal to an earlier one (as
  Hive's PredicateLeaf.equals has it: ``12.50`` and ``12.5`` are one DECIMAL leaf) gets the earlier number.
- Trees nest at most ``MAX_DEPTH`` levels, leaves counted (Hive's normalized trees have at most four). Deeper text
  gets a SargSyntaxError, never a RecursionError, as soon as its ``MAX_DEPTH``-th nested ``(and`` / ``(or`` /
  ``(not`` is read (the error points at that parenthesis; the rest of the text is not read).

How it runs: lark compiles ``sarg.lark`` (LALR, contextual lexer) once; a small driver (``_Engine``) runs lark's
parse table with one master regex per parser state, the rule callbacks building the typed model as it reduces.
Any lexing or parsing error and any error a callback raises is handed to lark's own parser with the same
callbacks, so errors are lark's, positions included. Nesting past the limit is found by both at the same token:
the driver counts the opening tokens on its stack, lark's parser is watched by a post-lexer (``_DepthGuard``).
Typed leaves are kept by their text in a bounded cache (``LEAF_CACHE_SIZE``; ``clear_cache()`` empties it): logs
repeat the same leaves.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from typing import Any

import lark
from lark import Lark, Token, Transformer
from lark.lark import PostLex

from sarg.errors import SargSyntaxError
from sarg.literals import Literal, Timestamp, UnknownLiteral, parse_decimal
from sarg.model import (
    ExpressionTree,
    Operator,
    PredicateLeaf,
    SearchArgument,
    TreeOperator,
    Type,
)
from sarg.schema import ColumnType, Schema, lookup, resolve_schema
from sarg.truth import TruthValue

MAX_DEPTH = 200
"""Most levels a tree may have, its leaves and constants counted (so at most MAX_DEPTH - 1 nested operators)."""

_LONG_RE = re.compile(r"-?\d+")
_DOUBLE_RE = re.compile(r"-?(?:\d+\.\d+(?:E-?\d+)?|Infinity)|NaN")
_NUMBER_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?Infinity|NaN")
_DECIMAL_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TS = r"\d{4,}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
_TS_RE = re.compile(_TS)
_TS_LIST_RE = re.compile(rf"(?:{_TS}|null)(?: (?:{_TS}|null))*")
_TS_TOKEN_RE = re.compile(rf"{_TS}|null")
_DYNAMIC_NAME_RE = re.compile(r"DynamicValue\(\w+\)")
_LEAF_RE = re.compile(r"\(([A-Z][A-Z_]*) ([^\s()]+)(?: (.*))?\)", re.S)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

_FRIENDLY = {
    "LEAF_NUM": "leaf-N", "INLINE_LEAF": "leaf-(OPERATOR column literal...)",
    "OLD_ENTRY": "leaf-N = (OPERATOR column literal...)", "AND_OPEN": "(and", "OR_OPEN": "(or",
    "NOT_OPEN": "(not", "CONSTANT": "a TruthValue such as YES_NO_NULL", "_RPAR": "')'", "EXPR": "expr =",
    "$END": "end of text",
}


def _friendly(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({_FRIENDLY.get(n, n) for n in names}))


# -- literal typing -----------------------------------------------------------------------------------------

_STRING, _LONG, _FLOAT, _DECIMAL = Type.STRING, Type.LONG, Type.FLOAT, Type.DECIMAL
_DATE, _TIMESTAMP, _BOOLEAN = Type.DATE, Type.TIMESTAMP, Type.BOOLEAN
_IS_NULL, _IN, _BETWEEN = Operator.IS_NULL, Operator.IN, Operator.BETWEEN


def convert(text: str, type_: Type) -> Literal:
    """One literal's text as a value of ``type_`` (an UnknownLiteral when it does not convert)."""
    if text.startswith("DynamicValue(") and text.endswith(")") and len(text) >= 14:  # DynamicValue(...)
        return UnknownLiteral(text, "a dynamic value (semijoin) is only known at run time")
    if type_ is _STRING:
        return text
    try:
        if type_ is _LONG:
            if not _LONG_RE.fullmatch(text):
                raise ValueError(f"not an integer: {text!r}")
            value = int(text)
            if not _LONG_MIN <= value <= _LONG_MAX:
                raise ValueError(f"out of the LONG range: {text}")
            return value
        if type_ is _FLOAT:
            if not _NUMBER_RE.fullmatch(text):
                raise ValueError(f"not a number: {text!r}")
            return float(text)
        if type_ is _DECIMAL:
            if not _DECIMAL_RE.fullmatch(text):
                raise ValueError(f"not a decimal: {text!r}")
            return parse_decimal(text)
        if type_ is _DATE:
            if not _DATE_RE.fullmatch(text):
                raise ValueError(f"not a date: {text!r}")
            return dt.date.fromisoformat(text)
        if type_ is _TIMESTAMP:
            return Timestamp.parse(text)
        if text == "true" or text == "false":
            return text == "true"
        raise ValueError(f"not a boolean: {text!r}")
    except (ValueError, ArithmeticError) as exc:
        return UnknownLiteral(text, str(exc))


def infer_type(texts: Sequence[str]) -> Type:
    """The SARG type the printed literals most plausibly have, without a schema."""
    values = [t for t in texts if t != "null"]
    if len(values) == 1:
        return _infer_one(values[0])
    if not values:
        return _STRING
    if all(_LONG_RE.fullmatch(t) for t in values):
        if all(_LONG_MIN <= int(t) <= _LONG_MAX for t in values):
            return _LONG
        return _DECIMAL
    if all(_DOUBLE_RE.fullmatch(t) or _LONG_RE.fullmatch(t) for t in values):
        return _FLOAT
    if all(_TS_RE.fullmatch(t) for t in values):
        return _TIMESTAMP
    if all(_DATE_RE.fullmatch(t) for t in values):
        return _DATE
    if all(t in ("true", "false") for t in values):
        return _BOOLEAN
    return _STRING  # DynamicValue(...) too


def _infer_one(text: str) -> Type:
    """``infer_type`` of one literal that is not ``null``."""
    if _LONG_RE.fullmatch(text):
        return _LONG if _LONG_MIN <= int(text) <= _LONG_MAX else _DECIMAL
    if _DOUBLE_RE.fullmatch(text):
        return _FLOAT
    if _TS_RE.fullmatch(text):
        return _TIMESTAMP
    if _DATE_RE.fullmatch(text):
        return _DATE
    if text == "true" or text == "false":
        return _BOOLEAN
    return _STRING


_leaf = PredicateLeaf.trusted


def make_leaf(op: Operator, column: str, region: str | None, column_type: ColumnType | None) -> PredicateLeaf:
    """Type one leaf's literal text (``region``: everything after ``column `` up to the closing parenthesis)."""
    declared = column_type.sarg_type if column_type is not None else None
    untyped = column_type is not None and declared is None  # a column whose type has no SARG type
    if op is _IS_NULL:
        if region is not None:
            raise ValueError("IS_NULL takes no literal")
        return _leaf(op, declared or _STRING, column)
    if op is not _IN and op is not _BETWEEN:
        if region is None:
            return _leaf(op, declared or _STRING, column)
        if untyped and column_type is not None:
            type_ = _STRING
            value: Literal = UnknownLiteral(region, f"column type {column_type.hive_type} has no SARG type")
        else:
            type_ = declared or (_STRING if region == "null" else _infer_one(region))
            value = convert(region, type_)
        ambiguous = type_ is _STRING and ("(" in region or ")" in region)
        return _leaf(op, type_, column, value, None, (region,), ambiguous)
    if region is None:
        raise ValueError(f"{op} needs literals")
    return _list_leaf(op, column, region, declared, untyped)


def _list_leaf(op: Operator, column: str, region: str, declared: Type | None, untyped: bool) -> PredicateLeaf:
    want = 2 if op is _BETWEEN else None
    if declared is _TIMESTAMP or (declared is None and not untyped and _TS_LIST_RE.fullmatch(region)):
        tokens = _TS_TOKEN_RE.findall(region) if _TS_LIST_RE.fullmatch(region) else region.split(" ")
        type_ = _TIMESTAMP
    else:
        tokens = region.split(" ")
        type_ = declared or infer_type(tokens)
    if untyped or (want is not None and len(tokens) != want and type_ is not _STRING):
        unknown = UnknownLiteral(region, "the list does not read as literals of the column's type")
        return _leaf(op, type_, column, None, (unknown,) * (want or 1), (region,))
    if type_ is _STRING:
        ambiguous = (len(tokens) > 1 if want is None else len(tokens) != want) or "(" in region or ")" in region
        literals: tuple[Literal | None, ...]
        if want is not None and len(tokens) != want:
            literals = (" ".join(tokens[:1]), " ".join(tokens[1:]))
        else:
            literals = tuple([convert(t, _STRING) for t in tokens])
        return _leaf(op, type_, column, None, literals, tuple(tokens), ambiguous)
    values = tuple([None if t == "null" else convert(t, type_) for t in tokens])
    return _leaf(op, type_, column, None, values, tuple(tokens))


# -- the parser ---------------------------------------------------------------------------------------------

class _Callbacks(Transformer[Token, Any]):
    """Rule callbacks run by the LALR parser as it reduces (no recursion over the finished tree)."""

    def __init__(self) -> None:
        super().__init__()
        self.reset("", None)

    def reset(self, text: str, schema: dict[str, ColumnType] | None) -> None:
        self.text = text
        self.schema = schema or {}
        self.leaf_ids: dict[str | PredicateLeaf, int] = {}
        self.leaves: list[PredicateLeaf] = []
        self.entries: dict[int, PredicateLeaf] = {}
        self.entry_order: list[int] = []

    def _fail(self, message: str, pos: int, expected: tuple[str, ...] = ()) -> SargSyntaxError:
        return SargSyntaxError(message, self.text, pos, expected)

    def _leaf(self, body: str, pos: int) -> PredicateLeaf:
        return _read_leaf(self.text, self.schema, body, pos)

    # Nesting depth is checked before these run, at the opening token (see _DepthGuard).
    def and_node(self, items: list[Any]) -> ExpressionTree:
        return ExpressionTree(TreeOperator.AND, tuple(items[1:]))

    def or_node(self, items: list[Any]) -> ExpressionTree:
        return ExpressionTree(TreeOperator.OR, tuple(items[1:]))

    def not_node(self, items: list[Any]) -> ExpressionTree:
        return ExpressionTree(TreeOperator.NOT, tuple(items[1:]))

    def constant(self, items: list[Token]) -> ExpressionTree:
        return ExpressionTree.of_constant(TruthValue[items[0].lstrip()])

    def inline_leaf(self, items: list[Token]) -> ExpressionTree:
        token = items[0]
        body = token.lstrip()
        pos = (token.start_pos or 0) + len(token) - len(body) + len("leaf-")
        body = body[len("leaf-"):]
        leaf = self._leaf(body, pos)
        leaf_id = _number(self.leaf_ids, self.leaves, body, leaf)
        return ExpressionTree.of_leaf(leaf, leaf_id)

    def old_entry(self, items: list[Token]) -> None:
        token = items[0]
        name, body, body_at = _split_entry(str(token))
        leaf_id = int(name[5:])
        if leaf_id in self.entries:
            raise self._fail(f"{name} is defined twice", _start(token))
        self.entries[leaf_id] = self._leaf(body, (token.start_pos or 0) + body_at)
        self.entry_order.append(leaf_id)

    def leaf_ref(self, items: list[Token]) -> ExpressionTree:
        token = items[0]
        leaf_id = int(token.lstrip()[len("leaf-"):])
        leaf = self.entries.get(leaf_id)
        if leaf is None:
            raise self._fail(f"{token.lstrip()} is not defined before expr", _start(token))
        return ExpressionTree.of_leaf(leaf, leaf_id)

    def old_form(self, items: list[Any]) -> SearchArgument:
        expected = list(range(len(self.entry_order)))
        if self.entry_order != expected:
            raise self._fail("old-form leaves must be numbered leaf-0, leaf-1, ... in order", 0)
        tree: ExpressionTree = items[-1]
        if any(n.operator is TreeOperator.LEAF and n.leaf is None for n in tree.walk()):
            raise self._fail("a leaf in expr is not defined", 0)  # pragma: no cover - caught by leaf_ref
        if self.leaves:  # expr holds inline leaves: they are the leaves, if there are no entries
            if expected:
                expr = next(item for item in items if isinstance(item, Token))
                raise self._fail("expr mixes leaf-N references with inline leaves", _start(expr))
            leaves = tuple(self.leaves)
        else:
            leaves = tuple(self.entries[i] for i in expected)
        return SearchArgument(leaves, tree, _misreadable(leaves))

    def start(self, items: list[Any]) -> SearchArgument:
        item = items[0]
        if isinstance(item, SearchArgument):
            return item
        leaves = tuple(self.leaves)
        return SearchArgument(leaves, item, _misreadable(leaves))


def _misreadable(leaves: Sequence[PredicateLeaf]) -> bool:
    """Whether some literal text holds a parenthesis (other than a ``DynamicValue(...)``): then the text may
    have been cut at the wrong ``)`` and every leaf of the reading is in doubt."""
    return any(_leaf_misreadable(leaf) for leaf in leaves)


def _leaf_misreadable(leaf: PredicateLeaf) -> bool:
    for text in leaf.texts or ():
        if ("(" in text or ")" in text) and not all(
                _DYNAMIC_NAME_RE.fullmatch(t) for t in text.split(" ") if "(" in t or ")" in t):
            return True
    return False


_SCAN_LIMIT = 16  # up to this many leaves, a new body is compared with the earlier leaves; past it, hashed


def _number(leaf_ids: dict[str | PredicateLeaf, int], leaves: list[PredicateLeaf], body: str,
            leaf: PredicateLeaf) -> int:
    """The id of an inline leaf: a body seen before keeps its id (a dict of str, cheap); a new body that reads
    as a leaf equal to an earlier one (another spelling) gets that one's id; else the next id."""
    leaf_id = leaf_ids.get(body)
    if leaf_id is None:
        n = len(leaves)
        if n < _SCAN_LIMIT:  # few leaves: compare with the earlier ones of the same column and operator
            column, operator = leaf.column, leaf.operator
            for i, other in enumerate(leaves):
                if other.column == column and other.operator is operator and other == leaf:
                    leaf_id = i
                    break
        else:  # many: by hash (a leaf's hash costs more than a few comparisons)
            if n == _SCAN_LIMIT:
                for i, other in enumerate(leaves):
                    leaf_ids.setdefault(other, i)
            leaf_id = leaf_ids.get(leaf)
        if leaf_id is None:
            leaf_id = n
            leaves.append(leaf)
            if n >= _SCAN_LIMIT:
                leaf_ids[leaf] = n
        leaf_ids[body] = leaf_id
    return leaf_id


def _split_entry(value: str) -> tuple[str, str, int]:
    """An OLD_ENTRY token ``leaf-N = (body), ``: (``leaf-N``, the body, where the body starts in the token)."""
    body_at = value.index("(")  # the first parenthesis: ``leaf-N =`` holds none
    end = value.rstrip().rstrip(",").rstrip()
    return value[:value.index("=")].strip(), end[body_at:], body_at


def _start(token: Token) -> int:
    """Where a token's text starts, past the whitespace the terminal absorbed."""
    return (token.start_pos or 0) + len(token) - len(token.lstrip())


# -- nesting depth ------------------------------------------------------------------------------------------
# A text is refused as soon as the parser takes its MAX_DEPTH-th nested ``(and`` / ``(or`` / ``(not``: every
# operator holds at least one leaf or constant, so whatever follows, that tree has more than MAX_DEPTH levels,
# and the rest of the text is not read. Both parsers count the opening tokens their LALR parser has taken and
# not yet closed (a ``)`` the parser takes always closes one), so both stop at the same token; text before it that
# does not parse is reported first, as usual.

_OPENS = frozenset({"AND_OPEN", "OR_OPEN", "NOT_OPEN"})


class _TooDeep(Exception):
    """Raised by either parser at the first opening token past the limit (``pos``: its parenthesis)."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


def _too_deep(text: str, pos: int) -> SargSyntaxError:
    return SargSyntaxError(f"expression nested deeper than {MAX_DEPTH} levels", text, pos)


class _DepthGuard(PostLex):
    """The count for lark's parser, as a post-lexer: lark's LALR parser pulls one token at a time and asks for the
    next only once it has taken the last (its reductions, then its shift), so the code after ``yield`` sees only
    tokens the parser accepted, in order."""

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for token in stream:
            yield token
            kind = token.type
            if kind in _OPENS:
                depth += 1
                if depth >= MAX_DEPTH:
                    raise _TooDeep(_start(token))
            elif kind == "_RPAR":
                depth -= 1


def _nesting(values: list[Any]) -> int:
    """The count for the fast driver: opening tokens on its value stack, less the ``)`` on it."""
    depth = 0
    for value in values:
        if type(value) is re.Match:
            kind = value.lastgroup
            if kind in _OPENS:
                depth += 1
            elif kind == "_RPAR":
                depth -= 1
    return depth


_OPERATORS: dict[str, Operator] = dict(Operator.__members__)
_OPERATOR_NAMES = tuple(o.value for o in Operator)
LEAF_CACHE_SIZE = 8192
_Entry = tuple[str, ColumnType | None, PredicateLeaf, dict[int, ExpressionTree], bool]
_leaf_cache: dict[str, _Entry] = {}


def _cached_leaf(text: str, schema: dict[str, ColumnType], body: str, pos: int) -> _Entry:
    """The leaf cache's entry for one ``(OPERATOR column literal...)`` body that starts at ``pos`` in ``text``:
    (column, its type, the typed leaf, LEAF tree nodes of that leaf by leaf id, whether its text may have been
    misread: see ``_misreadable``).

    Typed leaves are kept by body text (with the column and its type, checked on every hit): logs repeat the
    same leaves, and leaves and trees are immutable. At most LEAF_CACHE_SIZE bodies (emptied when full)."""
    hit = _leaf_cache.get(body)
    if hit is not None:
        column_type = (schema.get(hit[0]) or lookup(schema, hit[0])) if schema else None
        if column_type is hit[1] or column_type == hit[1]:
            return hit
    m = _LEAF_RE.fullmatch(body)
    if m is None:  # pragma: no cover - the grammar only lets well-formed bodies through
        raise SargSyntaxError("malformed leaf", text, pos)
    op_name, column, region = m.groups()
    op = _OPERATORS.get(op_name)
    if op is None:
        raise SargSyntaxError(f"unknown operator {op_name}", text, pos + 1, _OPERATOR_NAMES)
    column_type = lookup(schema, column) if schema else None
    try:
        leaf = make_leaf(op, column, region, column_type)
    except ValueError as exc:
        raise SargSyntaxError(str(exc), text, pos) from None
    if len(_leaf_cache) >= LEAF_CACHE_SIZE:
        _leaf_cache.clear()
    misread = region is not None and ("(" in region or ")" in region) and _leaf_misreadable(leaf)
    entry = _leaf_cache[body] = (column, column_type, leaf, {}, misread)
    return entry


def _read_leaf(text: str, schema: dict[str, ColumnType], body: str, pos: int) -> PredicateLeaf:
    """The typed leaf of one ``(OPERATOR column literal...)`` body that starts at ``pos`` in ``text``."""
    return _cached_leaf(text, schema, body, pos)[2]


def clear_cache() -> None:
    """Forget the typed leaves kept from earlier parses (benchmarks use it to measure the cold path)."""
    _leaf_cache.clear()


# -- the fast driver ----------------------------------------------------------------------------------------
# lark compiles sarg.lark into its LALR(1) table and terminals; this loop runs that same table with the same
# contextual lexing (one master regex per parser state, terminals in lark's order) but without lark's
# per-token objects and callback wrappers. Any lexing or parsing error sends the text through lark's own
# parser (``_parse_with_lark``), so errors are exactly lark's; errors raised by the rule callbacks are the
# same in both (same tokens, same reductions, same order).

_END = "$END"


class _Run:
    """One parse's state for the fast driver's rule callbacks."""

    __slots__ = ("entries", "leaf_ids", "leaves", "misread", "schema", "text")

    def __init__(self, text: str, schema: dict[str, ColumnType]) -> None:
        self.text = text
        self.schema = schema
        self.leaf_ids: dict[str | PredicateLeaf, int] = {}  # by body text, and by leaf (equality)
        self.leaves: list[PredicateLeaf] = []
        self.entries: list[_Entry] = []  # old-form entries, by leaf id
        self.misread = False  # some leaf's text may have been misread (see _misreadable)


def _mstart(m: re.Match[str]) -> int:
    """Where a matched token's text starts, past the whitespace the terminal absorbed."""
    value = m.group()
    return m.start() + len(value) - len(value.lstrip())


_new = object.__new__
_set = object.__setattr__


def _tree(op: TreeOperator, children: tuple[ExpressionTree, ...], leaf: PredicateLeaf | None = None,
          leaf_id: int | None = None) -> ExpressionTree:
    """ExpressionTree(op, children, leaf, leaf_id) without the dataclass __init__'s keyword handling."""
    node: ExpressionTree = _new(ExpressionTree)
    _set(node, "operator", op)
    _set(node, "children", children)
    _set(node, "leaf", leaf)
    _set(node, "leaf_id", leaf_id)
    _set(node, "constant", None)
    return node


# Nesting depth is checked by the driver as it shifts an opening token (see _nesting), not here.
# and/or/not take the rule's values as they are on the stack (no child filtering): [open token, the list of
# ``tree+`` or the one tree, the ')' token]; _Rule checks the rules still have that shape.
def _f_and(run: _Run, kids: list[Any]) -> ExpressionTree:
    return _tree(TreeOperator.AND, tuple(kids[1]))


def _f_or(run: _Run, kids: list[Any]) -> ExpressionTree:
    return _tree(TreeOperator.OR, tuple(kids[1]))


def _f_not(run: _Run, kids: list[Any]) -> ExpressionTree:
    return _tree(TreeOperator.NOT, (kids[1],))


_CONSTANT_TREES = {t.name: ExpressionTree.of_constant(t) for t in TruthValue}


def _f_constant(run: _Run, m: re.Match[str]) -> ExpressionTree:
    return _CONSTANT_TREES[m.group().lstrip()]


# The fast driver's tokens are regex matches; ``m.lastindex`` is the terminal's own group (it closes last), the
# groups sarg.lark puts inside a terminal follow it.
def _f_inline_leaf(run: _Run, m: re.Match[str]) -> ExpressionTree:
    group = m.lastindex + 1  # type: ignore[operator]
    body = m.group(group)
    _, _, leaf, trees, misread = _cached_leaf(run.text, run.schema, body, m.start(group))
    if misread:
        run.misread = True
    leaf_id = run.leaf_ids.get(body)
    if leaf_id is None:
        leaf_id = _number(run.leaf_ids, run.leaves, body, leaf)
    node = trees.get(leaf_id)
    if node is None:  # the LEAF node of this leaf and id, shared by every parse that numbers the leaf so
        node = trees[leaf_id] = _tree(TreeOperator.LEAF, (), leaf, leaf_id)
    return node


# In the fast driver, old-form entries are kept in a list: leaf-N must be the Nth entry (anything else is an
# error, which the lark parser then reports in full: "defined twice", "numbered in order").
def _f_old_entry(run: _Run, m: re.Match[str]) -> None:
    num = m.lastindex + 1  # type: ignore[operator]
    entries = run.entries
    if int(m.group(num)) != len(entries):
        raise SargSyntaxError("old-form leaves must be numbered leaf-0, leaf-1, ... in order", run.text, 0)
    entry = _cached_leaf(run.text, run.schema, m.group(num + 1), m.start(num + 1))
    entries.append(entry)
    if entry[4]:
        run.misread = True


def _f_leaf_ref(run: _Run, m: re.Match[str]) -> ExpressionTree:
    num = m.group(m.lastindex + 1)  # type: ignore[operator]
    leaf_id = int(num)
    if leaf_id >= len(run.entries):
        raise SargSyntaxError(f"leaf-{num} is not defined before expr", run.text, _mstart(m))
    entry = run.entries[leaf_id]
    trees = entry[3]
    node = trees.get(leaf_id)
    if node is None:
        node = trees[leaf_id] = _tree(TreeOperator.LEAF, (), entry[2], leaf_id)
    return node


def _f_old_form(run: _Run, kids: list[Any]) -> SearchArgument:
    if run.leaves:  # inline leaves in expr (lark's callbacks decide what that means)
        raise SargSyntaxError("inline leaves in an old-form expr", run.text, 0)
    return _search_argument(tuple([entry[2] for entry in run.entries]), kids[-1], run.misread)


def _f_start(run: _Run, item: Any) -> SearchArgument:
    if type(item) is SearchArgument:
        return item
    return _search_argument(tuple(run.leaves), item, run.misread)


def _search_argument(leaves: tuple[PredicateLeaf, ...], tree: ExpressionTree, ambiguous: bool) -> SearchArgument:
    """SearchArgument(leaves, tree, ambiguous) without the dataclass __init__'s keyword handling."""
    result: SearchArgument = _new(SearchArgument)
    _set(result, "leaves", leaves)
    _set(result, "expression", tree)
    _set(result, "ambiguous", ambiguous)
    return result


_Callback = Callable[[_Run, Any], Any]
_RAW_CALLBACKS: dict[str, tuple[_Callback, tuple[int, ...], tuple[bool, ...]]] = {
    # rule -> callback over the raw values, and the (kept, spliced) children shape it expects
    "and_node": (_f_and, (0, 1), (False, True)), "or_node": (_f_or, (0, 1), (False, True)),
    "not_node": (_f_not, (0, 1), (False, False)),
}
_LAST_CHILD_CALLBACKS: dict[str, _Callback] = {"old_form": _f_old_form}  # they read only the last value
_ONE_CHILD_CALLBACKS: dict[str, _Callback] = {  # rules of one child: the callback takes it, not a list
    "constant": _f_constant, "inline_leaf": _f_inline_leaf, "leaf_ref": _f_leaf_ref, "old_entry": _f_old_entry,
    "start": _f_start,
}


# How the driver reduces a rule (lark's child filtering: terminals named ``_X`` dropped, the lists of the
# helper rules lark makes for ``x*``/``x+`` spliced into their parent, ``?rule`` with one child passed through).
_PASS, _CALL_ONE, _CALL_RAW, _LIST_NEW, _LIST_APPEND, _LIST = range(6)
_SHIFT, _APPEND = -1, -2  # the fast driver's shifts: push a state, or add an item to the list on top


class _Rule:
    """One grammar rule as the fast driver reduces it."""

    __slots__ = ("callback", "goto", "keep", "mode", "size", "splice")

    def __init__(self, rule: Any) -> None:
        expansion = rule.expansion
        self.size: int = len(expansion)
        self.goto: str = str(rule.origin.name)
        keep: list[int] = []
        splice: list[bool] = []
        for i, sym in enumerate(expansion):
            if sym.is_term and sym.filter_out:
                continue
            keep.append(i)
            splice.append(not sym.is_term and sym.name.startswith("_"))
        self.keep = tuple(keep)
        self.splice = tuple(splice)
        name: str = rule.alias or rule.origin.name
        plain = keep == list(range(self.size)) and not any(splice)  # children are the values as they are
        self.callback: _Callback | None = None
        if name.startswith("_"):
            if plain and self.size == 1:
                self.mode = _LIST_NEW
            elif keep == [0, 1] and self.size == 2 and splice == [True, False]:
                self.mode = _LIST_APPEND
            else:
                self.mode = _LIST
        elif rule.options.expand1 and not rule.alias and self.size == 1 and plain:
            self.mode = _PASS
        elif name in _ONE_CHILD_CALLBACKS:
            if not (plain and self.size == 1):
                raise TypeError(f"rule {name} changed shape: it should have one child")
            self.callback = _ONE_CHILD_CALLBACKS[name]
            self.mode = _CALL_ONE
        elif name in _RAW_CALLBACKS:
            self.callback, want_keep, want_splice = _RAW_CALLBACKS[name]
            if (self.size, self.keep, self.splice) != (3, want_keep, want_splice):
                raise TypeError(f"rule {name} changed shape")
            self.mode = _CALL_RAW
        else:
            self.callback = _LAST_CHILD_CALLBACKS[name]
            if not keep or keep[-1] != self.size - 1 or splice[-1]:
                raise TypeError(f"rule {name} changed shape: its last child should be kept as it is")
            self.mode = _CALL_RAW

    def children(self, values: list[Any]) -> list[Any]:
        keep, splice = self.keep, self.splice
        if splice and splice[0]:  # a left-recursive helper list: extended in place, as lark does
            out: list[Any] = values[keep[0]]
            start = 1
        else:
            out = []
            start = 0
        for j in range(start, len(keep)):
            if splice[j]:
                out.extend(values[keep[j]])
            else:
                out.append(values[keep[j]])
        return out


_Match = Callable[[str, int], "re.Match[str] | None"]
_Unit = Callable[[_Run, Any], Any]
_UNIT_MODES = (_PASS, _CALL_ONE, _LIST_NEW)


def _listed(run: _Run, value: Any) -> list[Any]:
    return [value]


def _compose(units: Sequence[tuple[int, _Callback | None]]) -> _Unit | None:
    """One function applying a chain of one-child reductions to a value (None when they all pass it on)."""
    fns = [callback if mode == _CALL_ONE else _listed for mode, callback in units if mode != _PASS]
    if not fns:
        return None
    if len(fns) == 1:
        return fns[0]

    def chain(run: _Run, value: Any) -> Any:
        for fn in fns:
            value = fn(run, value)  # type: ignore[misc]
        return value
    return chain


class _Engine:
    """lark's LALR table and per-state lexers for sarg.lark, in plain dicts and compiled regexes.

    One step further than lark's own loop: a state whose every action reduces by the same one-child rule (the
    state after a leaf token, a ``?tree`` pass-through, the first item of a ``tree+`` list) needs no lookahead, so
    the reductions that follow a shift or a goto into it are chained ahead of time: one table entry gives the
    state the chain ends in and one function that applies the chain's callbacks. Tokens are still lexed with the
    lexer of the state lark lexes them in (the state right after the shift), so tokens are lark's."""

    def __init__(self, parser: Lark) -> None:
        table = parser.parser.parser.parser.parse_table  # lark's ParsingFrontend -> LALR_Parser -> _Parser
        terminals = {t.name: t for t in parser.terminals}
        flags = parser.lexer_conf.g_regex_flags
        rule_index: dict[Any, int] = {}
        self.rules: list[tuple[int, int, str, _Callback | None, _Rule]] = []

        def index(rule: Any) -> int:
            if rule not in rule_index:
                rule_index[rule] = len(self.rules)
                r = _Rule(rule)
                self.rules.append((r.mode, r.size, r.goto, r.callback, r))
            return rule_index[rule]

        lexers: dict[Any, _Match | None] = {}
        by_terms: dict[frozenset[str], _Match | None] = {}
        default: dict[Any, int] = {}  # state -> the one-child rule it reduces by whatever comes next
        appends: set[Any] = set()  # states that reduce ``list: list item`` whatever comes next
        for state, acts in table.states.items():
            names = frozenset(n for n in acts if n in terminals)  # as lark's ContextualLexer picks them
            if names not in by_terms:
                terms = sorted((terminals[n] for n in names),  # as lark's BasicLexer orders them
                               key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
                by_terms[names] = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in terms),
                                             flags).match if terms else None
            lexers[state] = by_terms[names]
            reduces = {arg for action, arg in acts.values() if action.name != "Shift"}
            if acts and len(reduces) == 1 and all(action.name != "Shift" for action, _ in acts.values()):
                r = index(next(iter(reduces)))
                if self.rules[r][0] in _UNIT_MODES and self.rules[r][1] == 1:
                    default[state] = r
                elif self.rules[r][0] == _LIST_APPEND:
                    appends.add(state)
        self.start_state = table.start_states["start"]
        self.end_state = table.end_states["start"]

        def settle(base: Any, target: Any) -> tuple[Any, _Unit | None, bool]:
            """Where a push of ``target`` over ``base`` ends after its lookahead-free one-child reductions, and
            whether it then ends as an item of the list held in ``base``: reducing ``list: list item`` pops the
            item and the list and goes from the state under them on ``list``, which is ``base`` again."""
            units: list[tuple[int, _Callback | None]] = []
            while target in default and target != self.end_state:
                mode, _, goto, callback, _ = self.rules[default[target]]
                units.append((mode, callback))
                target = table.states[base][goto][1]
            if target in appends:
                return base, _compose(units), True
            return target, _compose(units), False

        # actions[state][terminal] = (state to push, unit chain, how: _SHIFT or _APPEND, or the rule to reduce
        # by, lexer of the next token); gotos[state][rule name] = (state to push, unit chain, whether to append)
        self.actions: dict[Any, dict[str, tuple[Any, _Unit | None, int, _Match | None]]] = {}
        self.gotos: dict[Any, dict[str, tuple[Any, _Unit | None, bool]]] = {}
        for state, acts in table.states.items():
            encoded: dict[str, tuple[Any, _Unit | None, int, _Match | None]] = {}
            gotos: dict[str, tuple[Any, _Unit | None, bool]] = {}
            for symbol, (action, arg) in acts.items():
                name = str(symbol)  # plain str keys: lark's are Tokens, slower to compare
                if action.name != "Shift":
                    encoded[name] = (None, None, index(arg), None)
                elif name in terminals:
                    target, chain, append = settle(state, arg)
                    encoded[name] = (target, chain, _APPEND if append else _SHIFT, lexers[arg])
                else:
                    gotos[name] = settle(state, arg)
            self.actions[state] = encoded
            self.gotos[state] = gotos
        self.first_lexer = lexers[self.start_state]

    def parse(self, text: str, run: _Run) -> SearchArgument | None:
        """The SearchArgument of ``text`` (already right-stripped), or None at a lexing or parsing error; _TooDeep at
        the first opening token past the nesting limit."""
        actions = self.actions
        gotos = self.gotos
        rules = self.rules
        end_state = self.end_state
        states: list[Any] = [self.start_state]
        values: list[Any] = []
        size = len(text)
        lexer = self.first_lexer
        pos = 0
        while True:
            if pos < size:  # the next token, lexed in the state right after the last shift (as lark does)
                m = lexer(text, pos) if lexer is not None else None
                if m is None:
                    return None
                kind: str = m.lastgroup  # type: ignore[assignment]
                pos = m.end()
            else:
                kind = _END
                m = None
            while True:
                act = actions[states[-1]].get(kind)
                if act is None:
                    return None
                target, chain, r, lexer = act
                if r < 0:  # shift, then the chain of lookahead-free reductions
                    value: Any = m if chain is None else chain(run, m)
                    if r == _APPEND:  # ... that ends as the next item of the list on top
                        values[-1].append(value)
                        break
                    if target == end_state:
                        return value if pos >= size else None
                    states.append(target)
                    values.append(value)
                    # MAX_DEPTH nested opening tokens put at least MAX_DEPTH + 1 states on the stack: only then count
                    if len(states) > MAX_DEPTH and kind in _OPENS and _nesting(values) >= MAX_DEPTH:
                        raise _TooDeep(_mstart(m))  # type: ignore[arg-type]
                    break
                mode, n, goto, callback, rule = rules[r]
                if mode == _PASS:
                    del states[-1]
                    value = values.pop()
                elif mode == _CALL_ONE:
                    del states[-1]
                    value = callback(run, values.pop())  # type: ignore[misc]
                elif mode == _LIST_APPEND:
                    del states[-2:]
                    value = values.pop()
                    values[-1].append(value)
                    value = values.pop()
                else:
                    kids = values[-n:]
                    del states[-n:]
                    del values[-n:]
                    if mode == _CALL_RAW:
                        value = callback(run, kids)  # type: ignore[misc]
                    elif mode == _LIST_NEW:
                        value = kids
                    else:
                        value = rule.children(kids)
                target, chain, append = gotos[states[-1]][goto]
                if chain is not None:
                    value = chain(run, value)
                if append:
                    values[-1].append(value)
                    continue
                if target == end_state:
                    return value if kind == _END else None
                states.append(target)
                values.append(value)


_local = threading.local()
_grammar_lock = threading.Lock()
_engine: _Engine | None = None
_engine_failed = False


def _grammar() -> str:
    return resources.files("sarg").joinpath("sarg.lark").read_text(encoding="utf-8")


def _parser() -> tuple[Lark, _Callbacks]:
    """lark's own parser, with the callbacks as its transformer (per thread: the callbacks hold state)."""
    state = getattr(_local, "state", None)
    if state is None:
        callbacks = _Callbacks()
        parser = Lark(_grammar(), parser="lalr", lexer="contextual", transformer=callbacks,
                      maybe_placeholders=False, postlex=_DepthGuard())
        state = _local.state = (parser, callbacks)
    return state


def _fast() -> _Engine | None:
    """The fast driver, or None when this lark's internals are not the ones it reads (then lark parses)."""
    global _engine, _engine_failed
    if _engine is None and not _engine_failed:
        with _grammar_lock:
            if _engine is None and not _engine_failed:
                parser = Lark(_grammar(), parser="lalr", lexer="contextual", maybe_placeholders=False)
                try:
                    _engine = _Engine(parser)
                except (AttributeError, KeyError, TypeError, ValueError):  # pragma: no cover - another lark
                    _engine_failed = True
    return _engine


def parse(text: str, schema: Schema = None) -> SearchArgument:
    """Read a SearchArgument printed by Hive in any of its forms; literals typed by ``schema`` if given."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes a str, not {type(text).__name__}")
    columns = _struct_columns(schema) if isinstance(schema, str) else resolve_schema(schema)
    engine = _engine or _fast()
    if engine is not None:
        try:
            result = engine.parse(text.rstrip(), _Run(text, columns))
        except SargSyntaxError:  # a callback ran before lark would have seen a syntax error: lark decides
            result = None
        except _TooDeep as exc:  # lark's parser would stop at the same token (its callbacks ran the same)
            raise _too_deep(text, exc.pos) from None
        if result is not None:
            return result
    return _parse_with_lark(text, columns)  # a lexing or parsing error: lark reports it


@functools.lru_cache(maxsize=32)
def _struct_columns(schema: str) -> dict[str, ColumnType]:
    """A struct type string's columns, kept: a log replay passes the same schema text with every filter (the
    dict is only read)."""
    return resolve_schema(schema)


def _parse_with_lark(text: str, columns: dict[str, ColumnType]) -> SearchArgument:
    parser, callbacks = _parser()
    callbacks.reset(text, columns)
    try:
        result = parser.parse(text.rstrip())
    except SargSyntaxError:
        raise
    except _TooDeep as exc:
        raise _too_deep(text, exc.pos) from None
    except lark.exceptions.UnexpectedCharacters as exc:
        raise _lexer_error(text, exc) from None
    except lark.exceptions.UnexpectedEOF as exc:
        raise SargSyntaxError("unexpected end of text", text, len(text), _friendly(sorted(exc.expected))) from None
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        pos = len(text) if tok.type == "$END" else _start(tok)
        what = "unexpected end of text" if tok.type == "$END" else f"unexpected {tok.strip()[:40]!r}"
        raise SargSyntaxError(what, text, pos, _friendly(sorted(exc.expected))) from None
    except lark.exceptions.VisitError as exc:  # pragma: no cover - callbacks raise SargSyntaxError directly
        if isinstance(exc.orig_exc, SargSyntaxError):
            raise exc.orig_exc from None
        raise
    finally:
        callbacks.reset("", None)
    assert isinstance(result, SearchArgument)
    return result


def _lexer_error(text: str, exc: lark.exceptions.UnexpectedCharacters) -> SargSyntaxError:
    pos = exc.pos_in_stream or 0
    rest = text[pos:]
    pos += len(rest) - len(rest.lstrip())
    rest = rest.lstrip()
    if not rest.strip():
        return SargSyntaxError("unexpected end of text", text, pos, _friendly(sorted(exc.allowed or ())))
    # a leaf that does not read: leaf-(..., leaf-N = (..., or the = (... after a leaf-N the lexer took alone
    at = re.match(r"leaf-(?=\()|(?:leaf-\d+\s*)?=\s*(?=\()", rest)
    start = pos + at.end() if at else pos
    m = re.match(r"\((\w+)", text[start:])
    if m and at:
        if m.group(1) not in Operator.__members__:
            return SargSyntaxError(f"unknown operator {m.group(1)}", text, start + 1,
                                   tuple(o.value for o in Operator))
        return SargSyntaxError("malformed leaf: expected (OPERATOR column literal...) followed by ')', "
                               "another tree or the end", text, start, ())
    shown = rest[:20].split("\n")[0]
    return SargSyntaxError(f"unexpected text {shown!r}", text, pos, _friendly(sorted(exc.allowed or ())))


__all__ = ["LEAF_CACHE_SIZE", "MAX_DEPTH", "clear_cache", "convert", "infer_type", "make_leaf", "parse"]

