"""``sarg.lark`` and lark's own LALR parser over it, with the rule callbacks that build the typed model as it
reduces: the reference reader of SearchArgument text (``sarg.fastpath`` runs the same tables faster and hands
every error to this one). The reading rules are in ``sarg.parser``'s doc; leaves are typed by ``sarg.leaves``.

Nesting is limited here for both readers (``sarg.errors.MAX_DEPTH``): the opening tokens counted (``OPENS``),
``TooDeep``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from importlib import resources
from typing import Any

import lark
from lark import Lark, Token, Transformer
from lark.lark import PostLex

from sarg.errors import MAX_DEPTH, SargSyntaxError, too_deep
from sarg.lark_build import build_lark
from sarg.leaves import misreadable, number_leaf, read_leaf
from sarg.model import ExpressionTree, Operator, PredicateLeaf, SearchArgument, TreeOperator
from sarg.schema import ColumnType
from sarg.truth import TruthValue

_FRIENDLY = {
    "LEAF_NUM": "leaf-N", "INLINE_LEAF": "leaf-(OPERATOR column literal...)",
    "OLD_ENTRY": "leaf-N = (OPERATOR column literal...)", "AND_OPEN": "(and", "OR_OPEN": "(or",
    "NOT_OPEN": "(not", "CONSTANT": "a TruthValue such as YES_NO_NULL", "_RPAR": "')'", "EXPR": "expr =",
    "$END": "end of text",
}


def _friendly(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({_FRIENDLY.get(n, n) for n in names}))



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
        return read_leaf(self.text, self.schema, body, pos)

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
        leaf_id = number_leaf(self.leaf_ids, self.leaves, body, leaf)
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
        return SearchArgument(leaves, tree, misreadable(leaves))

    def start(self, items: list[Any]) -> SearchArgument:
        item = items[0]
        if isinstance(item, SearchArgument):
            return item
        leaves = tuple(self.leaves)
        return SearchArgument(leaves, item, misreadable(leaves))



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

OPENS = frozenset({"AND_OPEN", "OR_OPEN", "NOT_OPEN"})


class TooDeep(Exception):
    """Raised by either parser at the first opening token past the limit (``pos``: its parenthesis)."""

    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class _DepthGuard(PostLex):
    """The count for lark's parser, as a post-lexer: lark's LALR parser pulls one token at a time and asks for the
    next only once it has taken the last (its reductions, then its shift), so the code after ``yield`` sees only
    tokens the parser accepted, in order."""

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for token in stream:
            yield token
            kind = token.type
            if kind in OPENS:
                depth += 1
                if depth >= MAX_DEPTH:
                    raise TooDeep(_start(token))
            elif kind == "_RPAR":
                depth -= 1



_local = threading.local()


def grammar_text() -> str:
    """The text of ``sarg.lark``."""
    return resources.files("sarg").joinpath("sarg.lark").read_text(encoding="utf-8")


def _parser() -> tuple[Lark, _Callbacks]:
    """lark's own parser, with the callbacks as its transformer (per thread: the callbacks hold state)."""
    state = getattr(_local, "state", None)
    if state is None:
        callbacks = _Callbacks()
        parser = build_lark(grammar_text(), parser="lalr", lexer="contextual", transformer=callbacks,
                      maybe_placeholders=False, postlex=_DepthGuard())
        state = _local.state = (parser, callbacks)
    return state


def parse_with_lark(text: str, columns: dict[str, ColumnType]) -> SearchArgument:
    """Read ``text`` with lark's own parser (``columns``: resolved, as ``sarg.parser.parse`` makes them)."""
    parser, callbacks = _parser()
    callbacks.reset(text, columns)
    try:
        result = parser.parse(text.rstrip())
    except SargSyntaxError:
        raise
    except TooDeep as exc:
        raise too_deep(text, exc.pos) from None
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


__all__ = ["MAX_DEPTH", "OPENS", "TooDeep", "grammar_text", "parse_with_lark", "too_deep"]
