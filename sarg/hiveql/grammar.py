"""The grammar driver: HiveQL filter text -> the parsed expression (``sarg.hiveql.nodes``), with lark's LALR
parser over the grammar in ``sarg/hiveql.lark`` and the rule callbacks below, which build the nodes as the parser
reduces (no recursion over the input's depth). AND-in-AND and OR-in-OR are merged and NOT NOT cancelled as they
are parsed; logical nesting deeper than ``MAX_DEPTH`` after that is refused. A line copied from EXPLAIN
(``filterExpr: ... (type: boolean)``) is read without its label and type. Bad text raises
:class:`sarg.SargSyntaxError`.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import replace
from importlib import resources
from typing import Any, cast

import lark
from lark import Lark, Token, Transformer

from sarg.errors import MAX_DEPTH, SargSyntaxError, too_deep
from sarg.hiveql.lexing import (
    CAST_FUNCTIONS,
    fold_cast,
    hql_date,
    hql_timestamp,
    negate_literal,
    number_literal,
    unescape_sql_string,
)
from sarg.hiveql.nodes import (
    NUMERIC_KINDS,
    Between,
    Column,
    Compare,
    Expr,
    HqlLiteral,
    HqlLogic,
    HqlNot,
    InList,
    IsNull,
    Like,
    LiteralKind,
    Opaque,
    Value,
)
from sarg.lark_build import build_lark


def _depth(node: Expr) -> int:
    return node.depth if isinstance(node, (HqlLogic, HqlNot)) else 1


def _as_value(node: Expr) -> Value:
    """A node used as an operand: predicates and logic are then opaque expressions."""
    if isinstance(node, (Column, HqlLiteral, Opaque)):
        return node
    return Opaque("a boolean expression used as a value", span=node.span)


_FROZEN_NODES = (Column, HqlLiteral, Opaque, Compare, InList, Between, IsNull, Like)


def _span(items: Sequence[Any]) -> tuple[int, int] | None:
    """Where the text a rule reduced lies: from its first token or node to its last."""
    start: int | None = None
    end: int | None = None
    todo = list(items)
    while todo:
        item = todo.pop()
        if isinstance(item, Token):
            here: tuple[int, int] | None = (item.start_pos or 0, item.end_pos or 0)
        elif isinstance(item, list):
            todo.extend(item)
            continue
        else:
            here = getattr(item, "span", None)
        if here is not None:
            start = here[0] if start is None else min(start, here[0])
            end = here[1] if end is None else max(end, here[1])
    return None if start is None or end is None else (start, end)


def _spanned(callback: Any) -> Any:
    """A rule callback whose node knows where in the text it was read (``span``)."""
    def call(items: list[Any]) -> Any:
        node = callback(items)
        if isinstance(node, (HqlLogic, HqlNot)):
            node.span = _span(items)
        elif isinstance(node, _FROZEN_NODES) and node.span is None:
            node = replace(node, span=_span(items))
        return node
    return call


_FRIENDLY = {
    "OR": "OR", "AND": "AND", "NOT": "NOT", "IS": "IS", "IN": "IN", "NULL": "NULL", "TRUE": "TRUE",
    "FALSE": "FALSE", "BETWEEN": "BETWEEN", "LIKE_OP": "LIKE", "CAST": "CAST", "AS": "AS", "CASE": "CASE",
    "WHEN": "WHEN", "THEN": "THEN", "ELSE": "ELSE", "END": "END", "DISTINCT": "DISTINCT", "FROM": "FROM",
    "DATE_KW": "DATE'...'", "TIMESTAMP_KW": "TIMESTAMP'...'", "CONST_KW": "const", "COMP_OP": "a comparison",
    "ADD_OP": "an operator", "MUL_OP": "an operator", "MINUS": "'-'", "PLUS": "'+'", "TILDE": "'~'",
    "BANG": "'!'", "STAR": "'*'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "COMMA": "','",
    "DOT": "'.'", "NUMBER": "a number", "STRING": "a quoted string", "NAME": "a column name",
    "QUOTED_NAME": "a `quoted name`", "RAW_DATE": "a date", "RAW_TIMESTAMP": "a timestamp",
    "$END": "end of text",
}
_OPERATORS = {"==": "=", "!=": "<>"}


def _friendly(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({_FRIENDLY.get(n, n) for n in names}))


def _tok(items: Sequence[Any], *types: str) -> list[Token]:
    return [t for t in items if isinstance(t, Token) and t.type in types]


def _exprs(items: Sequence[Any]) -> list[Expr]:
    return [t for t in items if not isinstance(t, Token)]


class _Callbacks(Transformer[Token, Any]):
    """Rule callbacks the LALR parser runs as it reduces."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""
        for name in _SPANNED_RULES:  # the instance's own attribute is what the parser calls
            setattr(self, name, _spanned(getattr(self, name)))

    def _fail(self, message: str, token: Token | None) -> SargSyntaxError:
        pos = (token.start_pos or 0) if token is not None else 0
        return SargSyntaxError(message, self.text, pos)

    # logic
    def _logic(self, op: str, items: list[Any]) -> HqlLogic:
        left, token, right = items[0], items[1], items[2]
        kids: deque[Expr]
        if isinstance(left, HqlLogic) and left.op == op:
            kids = left.children
            depth = left.depth
            if isinstance(right, HqlLogic) and right.op == op:
                kids.extend(right.children)
                depth = max(depth, right.depth)
            else:
                kids.append(right)
                depth = max(depth, _depth(right) + 1)
            node = left
            node.depth = depth
        elif isinstance(right, HqlLogic) and right.op == op:
            right.children.appendleft(left)
            right.depth = max(right.depth, _depth(left) + 1)
            node = right
        else:
            node = HqlLogic(op, deque([left, right]), 1 + max(_depth(left), _depth(right)))
        if node.depth > MAX_DEPTH:
            raise too_deep(self.text, token.start_pos or 0)
        return node

    def or_(self, items: list[Any]) -> HqlLogic:
        return self._logic("or", items)

    def and_(self, items: list[Any]) -> HqlLogic:
        return self._logic("and", items)

    def not_(self, items: list[Any]) -> Expr:
        token, child = items[0], items[1]
        if isinstance(child, HqlNot):
            return child.child  # NOT NOT x is x (Hive's builder cancels them too)
        depth = _depth(child) + 1
        if depth > MAX_DEPTH:
            raise too_deep(self.text, token.start_pos or 0)
        return HqlNot(child, depth)

    # predicates
    def compare(self, items: list[Any]) -> Compare:
        op = str(items[1])
        return Compare(_OPERATORS.get(op, op), _as_value(items[0]), _as_value(items[2]))

    def is_null(self, items: list[Any]) -> IsNull:
        return IsNull(_as_value(items[0]), negated=False)

    def is_not_null(self, items: list[Any]) -> IsNull:
        return IsNull(_as_value(items[0]), negated=True)

    def like(self, items: list[Any]) -> Like:
        return Like(_as_value(items[0]), _as_value(items[2]), str(items[1]).lower(), negated=False)

    def not_like(self, items: list[Any]) -> Like:
        return Like(_as_value(items[0]), _as_value(items[3]), str(items[2]).lower(), negated=True)

    # ``a IS NOT DISTINCT FROM b`` is ``a <=> b`` (SQL's spelling, sqlglot's too); IS DISTINCT FROM its NOT
    def not_distinct(self, items: list[Any]) -> Compare:
        return Compare("<=>", _as_value(items[0]), _as_value(items[5]))

    def distinct(self, items: list[Any]) -> HqlNot:
        return HqlNot(Compare("<=>", _as_value(items[0]), _as_value(items[4]), span=_span(items)), 2)

    # ``b IS [NOT] TRUE|FALSE`` is exactly ``[NOT] (b <=> true|false)``: never NULL, and IS NOT TRUE holds for NULL
    def _is_bool(self, items: list[Any], truth: bool, negated: bool) -> Expr:
        test = Compare("<=>", _as_value(items[0]), HqlLiteral(LiteralKind.BOOLEAN, truth), span=_span(items))
        return HqlNot(test, 2) if negated else test

    def is_true(self, items: list[Any]) -> Expr:
        return self._is_bool(items, True, False)

    def is_false(self, items: list[Any]) -> Expr:
        return self._is_bool(items, False, False)

    def is_not_true(self, items: list[Any]) -> Expr:
        return self._is_bool(items, True, True)

    def is_not_false(self, items: list[Any]) -> Expr:
        return self._is_bool(items, False, True)

    def in_(self, items: list[Any]) -> InList:
        args = items[3]
        return InList(_as_value(items[0]), tuple(_as_value(a) for a in args), negated=False)

    def not_in(self, items: list[Any]) -> InList:
        args = items[4]
        return InList(_as_value(items[0]), tuple(_as_value(a) for a in args), negated=True)

    def between(self, items: list[Any]) -> Between:
        return Between(_as_value(items[0]), _as_value(items[2]), _as_value(items[4]), negated=False)

    def not_between(self, items: list[Any]) -> Between:
        return Between(_as_value(items[0]), _as_value(items[3]), _as_value(items[5]), negated=True)

    # values
    def opaque_op(self, items: list[Any]) -> Opaque:
        return Opaque("an operator or function")

    def negate(self, items: list[Any]) -> Value:
        value = _as_value(items[1])
        if isinstance(value, HqlLiteral):
            return negate_literal(value)
        return Opaque("unary minus")

    def plus(self, items: list[Any]) -> Value:
        value = _as_value(items[1])
        if isinstance(value, HqlLiteral) and value.kind in NUMERIC_KINDS:
            return value
        return Opaque("unary plus")

    def paren(self, items: list[Any]) -> Expr:
        inner: Expr = items[1]
        return inner

    def dotted(self, items: list[Any]) -> Column:
        parts: list[str] = []
        for tok in _tok(items, "NAME", "QUOTED_NAME"):
            text = str(tok)
            parts.append(text[1:-1].replace("``", "`") if tok.type == "QUOTED_NAME" else text)
        return Column(tuple(parts))

    def column(self, items: list[Any]) -> Column:
        column: Column = items[0]
        return column

    def function(self, items: list[Any]) -> Expr:
        parts: tuple[str, ...] = items[0].parts
        args = [a for a in items[1:] if isinstance(a, list)]
        name = parts[-1].lower() if len(parts) == 1 else ""
        arg = _as_value(args[0][0]) if args and len(args[0]) == 1 else None
        target = CAST_FUNCTIONS.get(name)
        if target is not None and arg is not None:
            return fold_cast(arg, target)
        if name in ("isnull", "isnotnull") and isinstance(arg, Column):  # Hive's and Spark's IS [NOT] NULL
            return IsNull(arg, negated=name == "isnotnull")
        if name == "isnan" and isinstance(arg, Column):
            # Spark's isnan(x): true for NaN only, false for NULL: exactly x <=> NaN (NaN equals NaN in Spark)
            return Compare("<=>", arg, HqlLiteral(LiteralKind.DOUBLE, float("nan")))
        return Opaque(f"function {'.'.join(parts)}")

    def args(self, items: list[Any]) -> list[Expr]:
        return _exprs(items)

    def cast(self, items: list[Any]) -> Value:
        return fold_cast(_as_value(items[2]), items[4])

    def type_name(self, items: list[Any]) -> str:
        base = str(items[0])
        numbers = [str(t) for t in _tok(items, "NUMBER")]
        return f"{base}({','.join(numbers)})" if numbers else base

    def case(self, items: list[Any]) -> Opaque:
        return Opaque("CASE")

    # literals
    def number(self, items: list[Token]) -> HqlLiteral:
        try:
            return number_literal(str(items[0]))
        except ValueError as exc:
            raise self._fail(str(exc), items[0]) from None

    def string(self, items: list[Token]) -> HqlLiteral:
        return HqlLiteral(LiteralKind.STRING, "".join(unescape_sql_string(str(t)) for t in items))

    def date_literal(self, items: list[Token]) -> HqlLiteral:
        text = unescape_sql_string(str(items[1]))
        try:
            return hql_date(text)
        except ValueError:
            raise self._fail(f"invalid DATE literal {text!r} (expected yyyy-mm-dd)", items[1]) from None

    def timestamp_literal(self, items: list[Token]) -> HqlLiteral:
        text = unescape_sql_string(str(items[1]))
        try:
            return hql_timestamp(text)
        except ValueError:
            raise self._fail(f"invalid TIMESTAMP literal {text!r} (expected yyyy-mm-dd hh:mm:ss[.fffffffff])",
                             items[1]) from None

    def raw_date(self, items: list[Token]) -> HqlLiteral:
        try:
            return hql_date(str(items[0]))
        except ValueError:
            raise self._fail(f"invalid date {str(items[0])!r}", items[0]) from None

    def raw_timestamp(self, items: list[Token]) -> HqlLiteral:
        try:
            return hql_timestamp(str(items[0]))
        except ValueError:
            raise self._fail(f"invalid timestamp {str(items[0])!r}", items[0]) from None

    def true(self, items: list[Token]) -> HqlLiteral:
        return HqlLiteral(LiteralKind.BOOLEAN, True)

    def false(self, items: list[Token]) -> HqlLiteral:
        return HqlLiteral(LiteralKind.BOOLEAN, False)

    def null(self, items: list[Token]) -> HqlLiteral:
        return HqlLiteral(LiteralKind.NULL, None)


_SPANNED_RULES = (
    "or_", "and_", "not_", "compare", "not_distinct", "distinct", "is_null", "is_not_null", "like", "not_like", "is_true", "is_false",
    "is_not_true", "is_not_false", "in_", "not_in", "between", "not_between", "opaque_op", "negate", "plus",
    "dotted", "function", "cast", "case", "number", "string", "date_literal", "timestamp_literal", "raw_date",
    "raw_timestamp", "true", "false", "null",
)

_local = threading.local()


def _parser() -> tuple[Lark, _Callbacks]:
    state = getattr(_local, "state", None)
    if state is None:
        grammar = resources.files("sarg").joinpath("hiveql.lark").read_text(encoding="utf-8")
        callbacks = _Callbacks()
        parser = build_lark(grammar, parser="lalr", lexer="contextual", transformer=callbacks,
                      maybe_placeholders=False, propagate_positions=False)
        state = _local.state = (parser, callbacks)
    return state


_EXPLAIN_HEAD_RE = re.compile(r"\A\s*(?:filterExpr|predicate)\s*:", re.IGNORECASE)
_EXPLAIN_TAIL_RE = re.compile(r"\(type:\s*boolean\)\s*\Z", re.IGNORECASE)


def _blank_explain_decorations(text: str) -> str:
    """EXPLAIN prints ``filterExpr: <expr> (type: boolean)``: blank the label and the type (same length, so error
    positions stay those of the original text)."""
    head = _EXPLAIN_HEAD_RE.match(text)
    if head is not None:
        text = " " * head.end() + text[head.end():]
    tail = _EXPLAIN_TAIL_RE.search(text)
    if tail is not None:
        text = text[:tail.start()] + " " * (len(text) - tail.start())
    return text


def parse_expression(text: str) -> Expr:
    """The parsed filter expression (before any schema is applied)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_hiveql() takes a str, not {type(text).__name__}")
    parser, callbacks = _parser()
    callbacks.text = text
    try:
        result = cast(Expr, parser.parse(_blank_explain_decorations(text)))
    except SargSyntaxError:
        raise
    except lark.exceptions.UnexpectedCharacters as exc:
        pos = exc.pos_in_stream or 0
        rest = text[pos:]
        if rest[:1] in "'\"":
            raise SargSyntaxError("unterminated string", text, pos, ()) from None
        if rest[:1] == "`":
            raise SargSyntaxError("unterminated `quoted name`", text, pos, ()) from None
        shown = rest[:20].split("\n")[0]
        raise SargSyntaxError(f"unexpected text {shown!r}", text, pos, _friendly(exc.allowed or ())) from None
    except lark.exceptions.UnexpectedEOF as exc:
        raise SargSyntaxError("unexpected end of text", text, len(text), _friendly(exc.expected)) from None
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        at_end = tok.type == "$END"
        pos = len(text) if at_end else (tok.start_pos or 0)
        what = "unexpected end of text" if at_end else f"unexpected {str(tok)[:40]!r}"
        raise SargSyntaxError(what, text, pos, _friendly(exc.expected)) from None
    except ArithmeticError as exc:  # pragma: no cover - defense in depth: literals are range-checked
        raise SargSyntaxError(f"a number this reader cannot hold: {exc!r}", text, 0) from None
    except lark.exceptions.VisitError as exc:  # pragma: no cover - callbacks raise SargSyntaxError directly
        if isinstance(exc.orig_exc, SargSyntaxError):
            raise exc.orig_exc from None
        raise
    finally:
        callbacks.text = ""
    return result


__all__ = ["MAX_DEPTH", "parse_expression"]
