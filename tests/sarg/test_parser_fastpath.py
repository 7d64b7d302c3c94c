"""`sarg.parse` runs lark's LALR table with its own small driver (sarg.fastpath, and a leaf cache); lark's own
parser (sarg.grammar) is the reference. Both must agree on every text: the same SearchArgument (printed forms,
typed leaves, ambiguity) or the same SargSyntaxError. These tests compare the fast driver with lark's parser
whatever SARG_PARSER says; the switch itself is tested at the end."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from sarg import fastpath
from sarg import parser as sarg_parser
from sarg.grammar import parse_with_lark
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


@contextlib.contextmanager
def _driver(name: str) -> Iterator[None]:
    old = sarg_parser.DRIVER
    sarg_parser.DRIVER = name
    try:
        yield
    finally:
        sarg_parser.DRIVER = old


def _both(text: str, columns: dict | None) -> None:  # type: ignore[type-arg]
    with _driver("fast"):
        fast = _outcome(lambda t: sarg.parse(t, columns), text)
        sarg_parser.clear_cache()
        cold = _outcome(lambda t: sarg.parse(t, columns), text)
    reference = _outcome(lambda t: parse_with_lark(t, columns or {}), text)
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


# -- nesting depth: both stop at the same opening token, the first past the limit ----------------------------------

LEAF = "leaf-(EQUALS a 1)"
LIMIT = sarg_parser.MAX_DEPTH


def _nested(ops: str, depth: int, inner: str = LEAF, sep: str = " ") -> str:
    """``depth`` nested operators cycling through ``ops`` ("a" and, "o" or, "n" not) around ``inner``."""
    names = [{"a": "and", "o": "or", "n": "not"}[ops[i % len(ops)]] for i in range(depth)]
    return "".join(f"({name}{sep}" for name in names) + inner + ")" * depth


DEEP_TEXTS = [
    *(_nested(ops, depth) for ops in ("a", "o", "n", "aon", "na")
      for depth in (LIMIT - 2, LIMIT - 1, LIMIT, LIMIT + 1, 100_000)),
    _nested("n", LIMIT - 1, "YES"), _nested("n", LIMIT, "YES_NO_NULL"), _nested("a", 100_000, f"{LEAF} {LEAF}", "\n"),
    "leaf-0 = (EQUALS a 1), expr = " + _nested("ao", LIMIT - 1, "leaf-0"),
    "leaf-0 = (EQUALS a 1)\nexpr = " + _nested("ao", LIMIT, "leaf-0", "\n"),
    "leaf-0 = (EQUALS a 1), expr = " + _nested("n", 100_000, "leaf-0"),
    *(f"(and {LEAF} " * depth + LEAF + ")" * depth for depth in (LIMIT - 1, LIMIT)),  # two stack entries a level
    "(and " + " ".join([_nested("n", LIMIT - 2)] * 4) + ")",  # closed levels do not count
    "(and " + _nested("n", LIMIT - 2) + " " + _nested("n", LIMIT - 1) + ")",
    _nested("n", 100_000, LEAF + " ?"),  # a malformed leaf past the limit: never read
    _nested("a", LIMIT - 1, "?"), _nested("a", LIMIT // 2, "?" + "(and " * 100_000),  # before it: reported
    _nested("a", LIMIT - 1, "leaf-7 (not " * 3),  # an undefined leaf-N just before the limit: reported
    _nested("a", LIMIT - 1, f"{LEAF} (not YES) (not " * 3),
    "(not " * (LIMIT - 1) + LEAF, "(not " * LIMIT + LEAF,  # never closed
    "(not " * (LIMIT - 1) + "(not", "(not " * (LIMIT - 1) + "(notx " + LEAF,
    "(and " * (LIMIT - 1) + ")" * 3 + "(and " * LIMIT,  # ')' where a tree must come first
]


@pytest.mark.parametrize("text", DEEP_TEXTS, ids=range(len(DEEP_TEXTS)))
def test_fast_driver_equals_lark_on_deep_texts(text: str) -> None:
    _both(text, None)


def test_fast_driver_stops_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    def lark_parser(text: str, columns: object) -> None:
        raise AssertionError("the fast driver handed the text to lark's parser")

    monkeypatch.setattr(sarg_parser, "parse_with_lark", lark_parser)
    monkeypatch.setattr(sarg_parser, "DRIVER", "fast")
    for text in (_nested("a", 100_000), _nested("on", LIMIT), "leaf-0 = (EQUALS a 1), expr = " + _nested(
            "n", LIMIT, "leaf-0")):
        with pytest.raises(sarg.SargSyntaxError) as info:
            sarg.parse(text)
        assert info.value.reason == f"expression nested deeper than {LIMIT} levels"
        assert info.value.pos == [i for i, ch in enumerate(text) if ch == "("][LIMIT - 1 + text.startswith("leaf-0")]
    assert str(sarg.parse(_nested("on", LIMIT - 1))) == _nested("on", LIMIT - 1)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from("aon"), st.integers(LIMIT - 3, LIMIT + 2), st.data())
def test_fast_driver_equals_lark_on_corrupted_deep_texts(ops: str, depth: int, data: st.DataObject) -> None:
    inner = data.draw(st.sampled_from([LEAF, f"{LEAF} {LEAF}", "YES", f"(not {LEAF}) {LEAF}"]))
    text = _nested(data.draw(st.sampled_from([ops, "ao", "na", "aon"])), depth, inner)
    n = len(text)
    i = data.draw(st.integers(0, n))
    j = data.draw(st.integers(i, min(n, i + 6)))
    insert = data.draw(st.sampled_from(["", "(", ")", " ", ") ", "(and ", "(not ", "(or (or ", "x", "leaf-0", LEAF]))
    _both(text[:i] + insert + text[j:], None)


# -- the switch: SARG_PARSER=lark makes lark's own parser read everything ------------------------------------------

@pytest.mark.parametrize("driver", sarg_parser.DRIVERS)
def test_parse_follows_the_driver_setting(driver: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    fast_parse = fastpath.parse

    def spy(text: str, columns: dict) -> sarg.SearchArgument | None:  # type: ignore[type-arg]
        calls.append(text)
        return fast_parse(text, columns)

    monkeypatch.setattr(fastpath, "parse", spy)
    monkeypatch.setattr(sarg_parser, "DRIVER", driver)
    for text in [*TEXTS[:60], *DEEP_TEXTS[:5], "(and leaf-(EQUALS a 1)", "leaf-0 = (NOPE a 1), expr = leaf-0"]:
        for columns in (COLUMNS, None):
            got = _outcome(lambda t, columns=columns: sarg.parse(t, columns), text)
            assert got == _outcome(lambda t, columns=columns: parse_with_lark(t, columns or {}), text), text
    assert bool(calls) is (driver == "fast")


def _run_with(env_value: str, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SARG_PARSER": env_value}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2], check=False)


def test_sarg_parser_environment_variable() -> None:
    code = ("import sarg, sarg.parser, sarg.fastpath\n"
            "s = sarg.parse('(and leaf-(EQUALS a 1) (not leaf-(IS_NULL b)))')\n"
            "print(sarg.parser.DRIVER, sarg.fastpath._engine is None, s)")
    lark_run = _run_with("lark", code)
    assert lark_run.stdout.split(" ", 2) == ["lark", "True", "(and leaf-(EQUALS a 1) (not leaf-(IS_NULL b)))\n"]
    fast_run = _run_with("fast", code)
    assert fast_run.stdout.split(" ", 2) == ["fast", "False", "(and leaf-(EQUALS a 1) (not leaf-(IS_NULL b)))\n"]
    bad = _run_with("lalr", "import sarg")
    assert bad.returncode != 0 and "SARG_PARSER must be one of fast, lark, not 'lalr'" in bad.stderr
