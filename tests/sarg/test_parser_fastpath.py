"""`sarg.parse` runs lark's LALR table with its own small driver (and a leaf cache); lark's own parser is the
reference. Both must agree on every text: the same SearchArgument (printed forms, typed leaves, ambiguity) or
the same SargSyntaxError."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from sarg import parser as sarg_parser
from sarg.schema import resolve_schema

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import corpus

SARGS = corpus.generate(300, seed=11)
TEXTS = [f(s) for s in SARGS for f in (str, sarg.SearchArgument.to_old_string,
                                       lambda s: s.to_old_string(separator="\n"))]
COLUMNS = resolve_schema(corpus.STRUCT)


def _outcome(fn, text: str):  # type: ignore[no-untyped-def]
    try:
        s = fn(text)
    except sarg.SargSyntaxError as exc:
        return ("error", str(exc), exc.line, exc.column)
    return ("ok", str(s), s.to_old_string(), s.ambiguous,
            tuple((leaf, leaf.type, leaf.texts, leaf.ambiguous, repr(leaf.literal), repr(leaf.literals))
                  for leaf in s.leaves))


def _both(text: str, columns: dict | None) -> None:  # type: ignore[type-arg]
    fast = _outcome(lambda t: sarg.parse(t, columns), text)
    sarg_parser.clear_cache()
    cold = _outcome(lambda t: sarg.parse(t, columns), text)
    reference = _outcome(lambda t: sarg_parser._parse_with_lark(t, columns or {}), text)
    assert fast == reference == cold, text


@pytest.mark.parametrize("typed", [True, False])
def test_fast_driver_equals_lark_on_the_corpus(typed: bool) -> None:
    for text in TEXTS:
        _both(text, COLUMNS if typed else None)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(TEXTS), st.data())
def test_fast_driver_equals_lark_on_corrupted_texts(text: str, data: st.DataObject) -> None:
    n = len(text)
    i = data.draw(st.integers(0, n))
    j = data.draw(st.integers(i, min(n, i + 6)))
    insert = data.draw(st.sampled_from(["", "(", ")", " ", "leaf-", "(and ", "x", ", ", "\n", "leaf-0", "="]))
    _both(text[:i] + insert + text[j:], data.draw(st.sampled_from([COLUMNS, None])))
