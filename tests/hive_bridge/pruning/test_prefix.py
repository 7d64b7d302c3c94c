"""String prefixes (``LIKE 'abc%'``, Spark's ``StringStartsWith``) judged by min/max: the upper bound of a prefix,
LIKE patterns read as prefixes, and both evaluators against the rows on random files (multi-byte characters,
U+FFFF, U+10FFFF, empty strings, nulls, truncated and inexact bounds)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.app.cli import main
from hive_bridge.filters.expression import Op, Predicate, translate
from hive_bridge.filters.residual import to_sql
from hive_bridge.pruning.domains import prefix_upper
from hive_bridge.pruning.scalar import evaluate
from hive_bridge.pruning.vectorized import StatsTable, prune
from hive_bridge.stats.contract import ColumnStats, FileStats, stats_table
from hive_bridge.testing.writer import HudiWriter
from sarg import PrefixCondition, SearchArgument, TruthValue, Type
from sarg.prefix import like_pattern, like_prefix

#: characters that make prefixes hard: multi-byte ones, the largest of each UTF-8 length, the code points around
#: the surrogates, and ones that sort around ASCII letters
CHARS = st.sampled_from(["a", "b", "z", "A", " ", "\x00", "\x7f", "\x80", "é", "\u07ff", "\u0800", "\ud7ff",
                         "\ue000", "\uffff", "\U00010000", "\U0010fffe", "\U0010ffff", "%", "_", "\\"])
TEXT = st.text(CHARS, max_size=5)


def _utf8_less(a: str, b: str) -> bool:
    return a.encode() < b.encode()


@pytest.mark.parametrize(("prefix", "upper"), [
    ("ab", "ac"),
    ("a", "b"),
    ("", None),
    ("a\U0010ffff", "b"),
    ("\U0010ffff", None),
    ("\U0010ffff\U0010ffff", None),
    ("\uffff", "\U00010000"),
    ("a\uffff\U0010ffff", "a\U00010000"),
    ("\ud7ff", "\ue000"),
    ("z\x7f", "z\x80"),
    ("\U0010fffe", "\U0010ffff"),
])
def test_prefix_upper_edge_cases(prefix: str, upper: str | None) -> None:
    assert prefix_upper(prefix) == upper


@given(TEXT, TEXT)
def test_a_prefix_is_exactly_its_range(prefix: str, value: str) -> None:
    upper = prefix_upper(prefix)
    in_range = prefix <= value and (upper is None or value < upper)
    assert value.startswith(prefix) == in_range
    # the same in UTF-8 byte order (Spark's and parquet's string order)
    in_bytes = not _utf8_less(value, prefix) and (upper is None or _utf8_less(value, upper))
    assert value.encode().startswith(prefix.encode()) == in_bytes


@pytest.mark.parametrize(("pattern", "prefix", "exact"), [
    ("abc%", "abc", True),
    ("abc%%", "abc", True),
    ("abc", "abc", False),
    ("a_c%", "a", False),
    ("ab%c", "ab", False),
    ("%", "", True),
    ("%abc", "", False),
    ("", "", False),
    ("a\\%b%", "a%b", True),
    ("a\\_%", "a_", True),
    ("a\\\\%", "a\\", True),
    ("a\\x%", "a", False),
    ("a\\", "a", False),
    ("ABC%", "ABC", True),
])
def test_like_prefix(pattern: str, prefix: str, exact: bool) -> None:
    assert like_prefix(pattern) == (prefix, exact)


@given(TEXT)
def test_like_pattern_reads_back(prefix: str) -> None:
    assert like_prefix(like_pattern(prefix)) == (prefix, True)


SCHEMA = {"s": "string", "x": "int", "c": "char(4)"}


@pytest.mark.parametrize(("text", "prefixes"), [
    ("s LIKE 'ab%'", (PrefixCondition("s", "ab"),)),
    ("x = 1 AND s LIKE 'a_%'", (PrefixCondition("s", "a"),)),
    ("s NOT LIKE 'ab%' AND x = 1", (PrefixCondition("s", "ab", negated=True),)),
    ("NOT (s LIKE 'ab%')", (PrefixCondition("s", "ab", negated=True),)),
    ("NOT (s NOT LIKE 'ab%')", (PrefixCondition("s", "ab"),)),
    ("s NOT LIKE 'a_%'", ()),         # NOT of a wider condition implies nothing
    ("s NOT LIKE 'abc'", ()),
    ("s LIKE 'ab%' OR x = 1", ()),     # not a conjunct of the whole filter: unknown
    ("s RLIKE 'ab.*'", ()),
    ("x LIKE '1%'", ()),               # a number's text: not a string column
    ("c LIKE 'ab%'", ()),              # char(n): padded values
    ("'ab%' LIKE s", ()),
])
def test_hiveql_like_becomes_a_prefix_condition(text: str, prefixes: tuple[PrefixCondition, ...]) -> None:
    parsed = sarg.parse_hiveql(text, SCHEMA)
    assert parsed.prefixes == prefixes
    # the SearchArgument itself is Hive's: LIKE is a YES_NO_NULL constant there
    assert "LIKE" not in str(parsed) and "STARTS" not in str(parsed)


def test_the_prefix_is_part_of_the_filter_identity() -> None:
    a = sarg.parse_hiveql("x = 1 AND s LIKE 'ab%'", SCHEMA)
    b = sarg.parse_hiveql("x = 1 AND s LIKE 'cd%'", SCHEMA)
    assert str(a) == str(b) and a != b and hash(a) != hash(b)


def _file(values: list[str | None], bounds: str) -> FileStats:
    """A file's statistics of column ``s``: exact, truncated as parquet-java truncates (a prefix of the minimum,
    an incremented prefix of the maximum: still true bounds), or marked inexact."""
    present = [v for v in values if v is not None]
    lo = min(present) if present else None
    hi = max(present) if present else None
    exact: bool | None = True
    if bounds == "truncated" and lo is not None and hi is not None:
        lo = lo[:1]
        cut = hi[:1]
        bumped = prefix_upper(cut)
        hi = bumped if bumped is not None and len(hi) > 1 else hi
    elif bounds == "inexact":
        exact = False
    elif bounds == "unknown exactness":
        exact = None
    col = ColumnStats(lo, hi, values.count(None), exact, exact)
    return FileStats(len(values), {"s": col}, {"s": pa.string()})


FILES = st.lists(st.tuples(st.lists(st.one_of(st.none(), TEXT), min_size=0, max_size=5),
                           st.sampled_from(["exact", "exact", "truncated", "inexact", "unknown exactness"])),
                 min_size=1, max_size=4)


def _row_truth(value: str | None, prefix: str, negated: bool) -> str:
    if value is None:
        return "N"
    return "T" if value.startswith(prefix) != negated else "F"


@settings(max_examples=400)
@given(FILES, TEXT, st.booleans(), st.booleans())
def test_both_evaluators_keep_every_file_with_a_match(files: list[tuple[list[str | None], str]], prefix: str,
                                                      negated: bool, under_not: bool) -> None:
    cond = PrefixCondition("s", prefix, negated)
    expr = translate(SearchArgument((), sarg.builder().literal(TruthValue.YES_NO_NULL).build().expression,
                                    prefixes=(cond,)))
    if under_not:
        expr = ~expr
    stats = [_file(values, bounds) for values, bounds in files]
    table = stats_table(stats, {"s": pa.string()})
    result = prune(expr, table)
    ranked = prune(expr, StatsTable(table, rank_strings=True))
    for i, ((values, _), fs) in enumerate(zip(files, stats, strict=True)):
        verdict = evaluate(expr, fs)
        outcomes = {_row_truth(v, prefix, negated != under_not) for v in values}
        got = {o for o, flag in zip("TFN", verdict.truth.value, strict=True) if flag}
        assert outcomes <= got, f"{outcomes} not within {verdict.explain()}"
        if "T" in outcomes:
            assert verdict.keep
        assert result.truth[i] == verdict.truth == ranked.truth[i]
        assert result.unknown[i].as_py() == verdict.kept_because_unknown == ranked.unknown[i].as_py()


def _judge(prefix: str, values: list[str | None], negated: bool = False) -> TruthValue:
    pred = Predicate(Op.STARTS_WITH, "s", Type.STRING, (prefix,))
    return evaluate(pred.negate() if negated else pred, _file(values, "exact")).truth


def test_verdicts_on_the_edges() -> None:
    # a file whose values all start with the prefix is kept even though its minimum is above the prefix
    # (apache/hudi#18791 pruned it)
    assert _judge("abc", ["abc123", "abc345"]) is TruthValue.YES
    assert _judge("abc", ["abd", "b"]) is TruthValue.NO
    assert _judge("abc", ["ab", "abb"]) is TruthValue.NO
    assert _judge("abc", ["ab", "abd"]) is TruthValue.YES_NO
    assert _judge("abc", ["ABC", "ABCD"]) is TruthValue.NO                 # case-sensitive
    assert _judge("é", ["e", "f"]) is TruthValue.NO                        # 'é' sorts above ASCII
    assert _judge("\uffff", ["\U00010000", "\U0010ffff"]) is TruthValue.NO
    assert _judge("\U0010ffff", ["\U0010ffff", "\U0010ffffa"]) is TruthValue.YES      # no upper bound
    assert _judge("\U0010ffff", ["a", "\U0010fffe"]) is TruthValue.NO
    assert _judge("", ["", None]) is TruthValue.YES_NULL                   # every non-null string
    assert _judge("", [None, None]) is TruthValue.NULL                     # all null: skipped
    assert _judge("ab", ["ab", "abz"], negated=True) is TruthValue.NO      # NOT LIKE: all start with it
    assert _judge("ab", ["ab", "abz", None], negated=True) is TruthValue.NO_NULL
    assert _judge("ab", ["a", "abz"], negated=True) is TruthValue.YES_NO


def test_a_truncated_bound_is_never_read_as_exact() -> None:
    pred = Predicate(Op.STARTS_WITH, "s", Type.STRING, ("abc",))
    exact = FileStats(3, {"s": ColumnStats("b", "c", 0, True, True)}, {"s": pa.string()})
    assert not evaluate(pred, exact).keep
    inexact = FileStats(3, {"s": ColumnStats("b", "c", 0, False, False)}, {"s": pa.string()})
    verdict = evaluate(pred, inexact)
    assert verdict.keep and verdict.truth is TruthValue.YES_NO and "not usable" in verdict.explain()


def test_a_prefix_on_a_column_it_cannot_order_is_unknown() -> None:
    pred = Predicate(Op.STARTS_WITH, "n", Type.STRING, ("1",))
    fs = FileStats(3, {"n": ColumnStats(5, 9, 0)}, {"n": pa.int64()})
    verdict = evaluate(pred, fs)
    assert verdict.keep and verdict.kept_because_unknown
    char = Predicate(Op.STARTS_WITH, "s", Type.STRING, ("ab",), char_length=4)
    assert evaluate(char, FileStats(1, {"s": ColumnStats("x", "y", 0, True, True)}, {"s": pa.string()})).keep


def test_explain_names_the_prefix_leaf_and_its_bounds() -> None:
    parsed = sarg.parse_hiveql("s LIKE 'ab%'", SCHEMA)
    verdict = evaluate(translate(parsed, SCHEMA), _file(["b", "c"], "exact"))
    assert not verdict.keep
    text = verdict.explain()
    assert "s STARTS WITH 'ab'" in text and "max >= 'ab'" in text and "min < 'ac'" in text




def test_explain_on_a_table_shows_the_prefix_leaf_and_each_files_verdict(tmp_path: Path) -> None:
    words = sorted(["aa", "ab", "abc", "abd", "ac", "b", "ba", "bb"])
    HudiWriter(tmp_path / "t", record_key_fields=("k",), rows_per_file=2).insert(
        pa.table({"k": pa.array(range(len(words)), pa.int64()), "s": pa.array(words)}))
    out, err = io.StringIO(), io.StringIO()
    code = main(["explain", "--table", str(tmp_path / "t"), "--json", "s LIKE 'ab%' AND k >= 0"],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    doc = json.loads(out.getvalue())
    assert "s STARTS WITH 'ab'" in doc["hudi_expression"]
    assert doc["files_total"] == 4 and doc["files_kept"] == 2      # ["aa", "ab"], ["abc", "abd"]
    for f in doc["files"]:
        assert "s STARTS WITH 'ab': " in f["reason"]
        assert ("max >= 'ab'" in f["reason"]) and ("min < 'ac'" in f["reason"])
    skipped = [f for f in doc["files"] if not f["kept"]]
    assert skipped and all("s STARTS WITH 'ab': NO" in f["reason"] for f in skipped)


def test_the_residual_of_a_searchargument_applies_its_prefixes() -> None:
    parsed = sarg.parse_hiveql("x = 1 AND s LIKE 'a%b\\\\_%' AND NOT s LIKE 'ab\\\\%%'", SCHEMA)
    assert parsed.prefixes == (PrefixCondition("s", "a"), PrefixCondition("s", "ab%", negated=True))
    assert to_sql(parsed) == ("((`x` = CAST(1 AS BIGINT)) AND (`s` LIKE 'a%') AND "
                              "(NOT (`s` LIKE 'ab\\\\%%')))")
