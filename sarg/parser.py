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
- Trees nest at most ``MAX_DEPTH`` levels (Hive's normalized trees have at most four); deeper text gets a
  SargSyntaxError, never a RecursionError.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Sequence
from importlib import resources
from typing import Any

import lark
from lark import Lark, Token, Transformer

from sarg.errors import SargSyntaxError
from sarg.literals import Literal, Timestamp, UnknownLiteral, parse_decimal
from sarg.model import (
    LIST_OPERATORS,
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

_LONG_RE = re.compile(r"-?\d+")
_DOUBLE_RE = re.compile(r"-?(?:\d+\.\d+(?:E-?\d+)?|Infinity)|NaN")
_NUMBER_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?Infinity|NaN")
_DECIMAL_RE = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TS = r"\d{4,}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,9})?"
_TS_RE = re.compile(_TS)
_TS_LIST_RE = re.compile(rf"(?:{_TS}|null)(?: (?:{_TS}|null))*")
_TS_TOKEN_RE = re.compile(rf"{_TS}|null")
_DYNAMIC_RE = re.compile(r"DynamicValue\(.*\)", re.S)
_DYNAMIC_NAME_RE = re.compile(r"DynamicValue\(\w+\)")
_LEAF_RE = re.compile(r"\(([A-Z][A-Z_]*) ([^\s()]+)(?: (.*))?\)", re.S)
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1

_FRIENDLY = {
    "LEAF_NUM": "leaf-N", "INLINE_LEAF": "leaf-(OPERATOR column literal...)",
    "LEAF_BODY": "(OPERATOR column literal...)", "AND_OPEN": "(and", "OR_OPEN": "(or", "NOT_OPEN": "(not",
    "CONSTANT": "a TruthValue such as YES_NO_NULL", "_RPAR": "')'", "EXPR": "expr", "_EQ": "'='",
    "_COMMA": "','", "$END": "end of text",
}


def _friendly(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({_FRIENDLY.get(n, n) for n in names}))


# -- literal typing -----------------------------------------------------------------------------------------

def convert(text: str, type_: Type) -> Literal:
    """One literal's text as a value of ``type_`` (an UnknownLiteral when it does not convert)."""
    try:
        return _convert(text, type_)
    except (ValueError, ArithmeticError) as exc:
        return UnknownLiteral(text, str(exc))


def _convert(text: str, type_: Type) -> Literal:
    if _DYNAMIC_RE.fullmatch(text):
        return UnknownLiteral(text, "a dynamic value (semijoin) is only known at run time")
    if type_ is Type.STRING:
        return text
    if type_ is Type.LONG:
        if not _LONG_RE.fullmatch(text):
            raise ValueError(f"not an integer: {text!r}")
        value = int(text)
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise ValueError(f"out of the LONG range: {text}")
        return value
    if type_ is Type.FLOAT:
        if not _NUMBER_RE.fullmatch(text):
            raise ValueError(f"not a number: {text!r}")
        return float(text)
    if type_ is Type.DECIMAL:
        if not _DECIMAL_RE.fullmatch(text):
            raise ValueError(f"not a decimal: {text!r}")
        return parse_decimal(text)
    if type_ is Type.DATE:
        if not _DATE_RE.fullmatch(text):
            raise ValueError(f"not a date: {text!r}")
        return dt.date.fromisoformat(text)
    if type_ is Type.TIMESTAMP:
        return Timestamp.parse(text)
    if text in ("true", "false"):
        return text == "true"
    raise ValueError(f"not a boolean: {text!r}")


def infer_type(texts: Sequence[str]) -> Type:
    """The SARG type the printed literals most plausibly have, without a schema."""
    values = [t for t in texts if t != "null"]
    if not values:
        return Type.STRING
    if all(_LONG_RE.fullmatch(t) for t in values):
        if all(_LONG_MIN <= int(t) <= _LONG_MAX for t in values):
            return Type.LONG
        return Type.DECIMAL
    if all(_DOUBLE_RE.fullmatch(t) or _LONG_RE.fullmatch(t) for t in values):
        return Type.FLOAT
    if all(_TS_RE.fullmatch(t) for t in values):
        return Type.TIMESTAMP
    if all(_DATE_RE.fullmatch(t) for t in values):
        return Type.DATE
    if all(t in ("true", "false") for t in values):
        return Type.BOOLEAN
    if all(_DYNAMIC_RE.fullmatch(t) for t in values):
        return Type.STRING
    return Type.STRING


def make_leaf(op: Operator, column: str, region: str | None, column_type: ColumnType | None) -> PredicateLeaf:
    """Type one leaf's literal text (``region``: everything after ``column `` up to the closing parenthesis)."""
    declared = column_type.sarg_type if column_type is not None else None
    untyped = column_type is not None and declared is None  # a column whose type has no SARG type
    if op is Operator.IS_NULL:
        if region is not None:
            raise ValueError("IS_NULL takes no literal")
        return PredicateLeaf.trusted(op, declared or Type.STRING, column)
    if op not in LIST_OPERATORS:
        if region is None:
            return PredicateLeaf.trusted(op, declared or Type.STRING, column)
        type_ = declared or infer_type([region])
        value: Literal = (UnknownLiteral(region, f"column type {column_type.hive_type} has no SARG type")
                          if untyped and column_type is not None else convert(region, type_))
        ambiguous = type_ is Type.STRING and ("(" in region or ")" in region)
        return PredicateLeaf.trusted(op, type_, column, literal=value, texts=(region,), ambiguous=ambiguous)
    if region is None:
        raise ValueError(f"{op} needs literals")
    return _list_leaf(op, column, region, declared, untyped)


def _list_leaf(op: Operator, column: str, region: str, declared: Type | None, untyped: bool) -> PredicateLeaf:
    want = 2 if op is Operator.BETWEEN else None
    if declared is Type.TIMESTAMP or (declared is None and not untyped and _TS_LIST_RE.fullmatch(region)):
        tokens = _TS_TOKEN_RE.findall(region) if _TS_LIST_RE.fullmatch(region) else region.split(" ")
        type_ = Type.TIMESTAMP
    else:
        tokens = region.split(" ")
        type_ = declared or infer_type(tokens)
    if untyped or (want is not None and len(tokens) != want and type_ is not Type.STRING):
        unknown = UnknownLiteral(region, "the list does not read as literals of the column's type")
        return PredicateLeaf.trusted(op, type_, column, literals=(unknown,) * (want or 1), texts=(region,))
    if type_ is Type.STRING:
        ambiguous = (len(tokens) > 1 if want is None else len(tokens) != want) or "(" in region or ")" in region
        literals: tuple[Literal | None, ...]
        if want is not None and len(tokens) != want:
            literals = (" ".join(tokens[:1]), " ".join(tokens[1:]))
        else:
            literals = tuple(convert(t, Type.STRING) for t in tokens)
        return PredicateLeaf.trusted(op, type_, column, literals=literals, texts=tuple(tokens), ambiguous=ambiguous)
    values = tuple(None if t == "null" else convert(t, type_) for t in tokens)
    return PredicateLeaf.trusted(op, type_, column, literals=values, texts=tuple(tokens))


# -- the parser ---------------------------------------------------------------------------------------------

class _Node:
    """A tree node while parsing, with its nesting depth."""

    __slots__ = ("depth", "tree")

    def __init__(self, tree: ExpressionTree, depth: int) -> None:
        self.tree = tree
        self.depth = depth


class _Callbacks(Transformer[Token, Any]):
    """Rule callbacks run by the LALR parser as it reduces (no recursion over the finished tree)."""

    def __init__(self) -> None:
        super().__init__()
        self.reset("", None)

    def reset(self, text: str, schema: dict[str, ColumnType] | None) -> None:
        self.text = text
        self.schema = schema or {}
        self.leaf_ids: dict[PredicateLeaf, int] = {}
        self.leaves: list[PredicateLeaf] = []
        self.entries: dict[int, PredicateLeaf] = {}
        self.entry_order: list[int] = []

    def _fail(self, message: str, pos: int, expected: tuple[str, ...] = ()) -> SargSyntaxError:
        return SargSyntaxError(message, self.text, pos, expected)

    def _leaf(self, body: str, pos: int) -> PredicateLeaf:
        m = _LEAF_RE.fullmatch(body)
        if m is None:  # pragma: no cover - the grammar only lets well-formed bodies through
            raise self._fail("malformed leaf", pos)
        op_name, column, region = m.groups()
        try:
            op = Operator[op_name]
        except KeyError:
            raise self._fail(f"unknown operator {op_name}", pos + 1,
                             tuple(o.value for o in Operator)) from None
        try:
            return make_leaf(op, column, region, lookup(self.schema, column))
        except ValueError as exc:
            raise self._fail(str(exc), pos) from None

    def _nest(self, token: Token, op: TreeOperator, kids: list[_Node]) -> _Node:
        depth = 1 + max(k.depth for k in kids)
        if depth > MAX_DEPTH:
            raise self._fail(f"expression nested deeper than {MAX_DEPTH} levels", _start(token))
        return _Node(ExpressionTree(op, tuple(k.tree for k in kids)), depth)

    def and_node(self, items: list[Any]) -> _Node:
        return self._nest(items[0], TreeOperator.AND, items[1:])

    def or_node(self, items: list[Any]) -> _Node:
        return self._nest(items[0], TreeOperator.OR, items[1:])

    def not_node(self, items: list[Any]) -> _Node:
        return self._nest(items[0], TreeOperator.NOT, items[1:])

    def constant(self, items: list[Token]) -> _Node:
        return _Node(ExpressionTree.of_constant(TruthValue[items[0].lstrip()]), 1)

    def inline_leaf(self, items: list[Token]) -> _Node:
        token = items[0]
        body = token.lstrip()
        pos = (token.start_pos or 0) + len(token) - len(body) + len("leaf-")
        leaf = self._leaf(body[len("leaf-"):], pos)
        leaf_id = self.leaf_ids.get(leaf)
        if leaf_id is None:
            leaf_id = self.leaf_ids[leaf] = len(self.leaves)
            self.leaves.append(leaf)
        return _Node(ExpressionTree.of_leaf(leaf, leaf_id), 1)

    def old_entry(self, items: list[Token]) -> None:
        num, body = items[0], items[1]
        leaf_id = int(num.lstrip()[len("leaf-"):])
        if leaf_id in self.entries:
            raise self._fail(f"{num.lstrip()} is defined twice", _start(num))
        self.entries[leaf_id] = self._leaf(body.lstrip(), _start(body))
        self.entry_order.append(leaf_id)

    def leaf_ref(self, items: list[Token]) -> _Node:
        token = items[0]
        leaf_id = int(token.lstrip()[len("leaf-"):])
        leaf = self.entries.get(leaf_id)
        if leaf is None:
            raise self._fail(f"{token.lstrip()} is not defined before expr", _start(token))
        return _Node(ExpressionTree.of_leaf(leaf, leaf_id), 1)

    def old_form(self, items: list[Any]) -> SearchArgument:
        expected = list(range(len(self.entry_order)))
        if self.entry_order != expected:
            raise self._fail("old-form leaves must be numbered leaf-0, leaf-1, ... in order", 0)
        node: _Node = items[-1]
        if any(n.operator is TreeOperator.LEAF and n.leaf is None for n in node.tree.walk()):
            raise self._fail("a leaf in expr is not defined", 0)  # pragma: no cover - caught by leaf_ref
        leaves = tuple(self.entries[i] for i in expected)
        return SearchArgument(leaves, node.tree, _misreadable(leaves))

    def start(self, items: list[Any]) -> SearchArgument:
        item = items[0]
        if isinstance(item, SearchArgument):
            return item
        leaves = tuple(self.leaves)
        return SearchArgument(leaves, item.tree, _misreadable(leaves))


def _misreadable(leaves: Sequence[PredicateLeaf]) -> bool:
    """Whether some literal text holds a parenthesis (other than a ``DynamicValue(...)``): then the text may
    have been cut at the wrong ``)`` and every leaf of the reading is in doubt."""
    for leaf in leaves:
        for text in leaf.texts or ():
            if ("(" in text or ")" in text) and not all(
                    _DYNAMIC_NAME_RE.fullmatch(t) for t in text.split(" ") if "(" in t or ")" in t):
                return True
    return False


def _start(token: Token) -> int:
    """Where a token's text starts, past the whitespace the terminal absorbed."""
    return (token.start_pos or 0) + len(token) - len(token.lstrip())


_local = threading.local()


def _parser() -> tuple[Lark, _Callbacks]:
    state = getattr(_local, "state", None)
    if state is None:
        grammar = resources.files("sarg").joinpath("sarg.lark").read_text(encoding="utf-8")
        callbacks = _Callbacks()
        parser = Lark(grammar, parser="lalr", lexer="contextual", transformer=callbacks,
                      maybe_placeholders=False)
        state = _local.state = (parser, callbacks)
    return state


def parse(text: str, schema: Schema = None) -> SearchArgument:
    """Read a SearchArgument printed by Hive in any of its forms; literals typed by ``schema`` if given."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes a str, not {type(text).__name__}")
    columns = resolve_schema(schema)
    parser, callbacks = _parser()
    callbacks.reset(text, columns)
    try:
        result = parser.parse(text.rstrip())
    except SargSyntaxError:
        raise
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
    start = pos + 5 if rest.startswith("leaf-(") else pos
    m = re.match(r"\((\w+)", text[start:])
    if m and (start > pos or "LEAF_BODY" in (exc.allowed or ())):
        if m.group(1) not in Operator.__members__:
            return SargSyntaxError(f"unknown operator {m.group(1)}", text, start + 1,
                                   tuple(o.value for o in Operator))
        return SargSyntaxError("malformed leaf: expected (OPERATOR column literal...) followed by ')', "
                               "another tree or the end", text, start, ())
    shown = rest[:20].split("\n")[0]
    return SargSyntaxError(f"unexpected text {shown!r}", text, pos, _friendly(sorted(exc.allowed or ())))


__all__ = ["MAX_DEPTH", "convert", "infer_type", "make_leaf", "parse"]

