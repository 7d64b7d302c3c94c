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

How it runs (one module each):

- ``sarg.grammar``: ``sarg.lark`` (LALR, contextual lexer) and lark's own parser over it, the rule callbacks
  building the typed model as it reduces: the reference. Its errors are the ones ``parse`` raises, positions
  included; nesting past the limit is found by a post-lexer.
- ``sarg.fastpath``: a small driver running lark's parse table for the same grammar, with one master regex per
  parser state and the model built field by field. Any lexing or parsing error, and any error a callback raises,
  sends the text to lark's parser; nesting past the limit is found at the same token.
- ``sarg.leaves``: typing each leaf's literal text, shared by both; typed leaves are kept by their text in a
  bounded cache (``LEAF_CACHE_SIZE``; ``clear_cache()`` empties it): logs repeat the same leaves.

The fast driver is the default. ``SARG_PARSER=lark`` in the environment (read when ``sarg`` is imported) makes
lark's own parser read everything; ``SARG_PARSER=fast`` is the default. The answers are the same either way.
"""

from __future__ import annotations

import functools
import os

from sarg import fastpath
from sarg.grammar import MAX_DEPTH, TooDeep, parse_with_lark, too_deep
from sarg.leaves import LEAF_CACHE_SIZE, clear_cache, convert, infer_type, make_leaf
from sarg.model import SearchArgument
from sarg.schema import ColumnType, Schema, resolve_schema

DRIVERS = ("fast", "lark")


def _driver_from_environment() -> str:
    value = os.environ.get("SARG_PARSER", "").strip().lower() or "fast"
    if value not in DRIVERS:
        raise ValueError(f"SARG_PARSER must be one of {', '.join(DRIVERS)}, not {value!r}")
    return value


DRIVER = _driver_from_environment()
"""Which reader ``parse`` uses: "fast" (``sarg.fastpath``, falling back to lark's parser on any error) or
"lark" (lark's own parser only). From ``SARG_PARSER``; tests may set it."""


def parse(text: str, schema: Schema = None) -> SearchArgument:
    """Read a SearchArgument printed by Hive in any of its forms; literals typed by ``schema`` if given."""
    if not isinstance(text, str):
        raise TypeError(f"parse() takes a str, not {type(text).__name__}")
    columns = _struct_columns(schema) if isinstance(schema, str) else resolve_schema(schema)
    if DRIVER == "fast":
        try:
            result = fastpath.parse(text, columns)
        except TooDeep as exc:  # lark's parser would stop at the same token (its callbacks ran the same)
            raise too_deep(text, exc.pos) from None
        if result is not None:
            return result
    return parse_with_lark(text, columns)  # lark reads it (with the fast driver: a lexing or parsing error)


@functools.lru_cache(maxsize=32)
def _struct_columns(schema: str) -> dict[str, ColumnType]:
    """A struct type string's columns, kept: a log replay passes the same schema text with every filter (the
    dict is only read)."""
    return resolve_schema(schema)


__all__ = ["DRIVER", "LEAF_CACHE_SIZE", "MAX_DEPTH", "clear_cache", "convert", "infer_type", "make_leaf", "parse"]
