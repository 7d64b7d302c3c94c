"""The vectorized evaluator: bitwise three-valued logic, the statistics-table contract, PruneResult."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.expression import Op, Predicate, translate
from hive_bridge.pruning.scalar import evaluate
from hive_bridge.pruning.vectorized import CODE_OF, TRUTH_CODES, StatsTable, Triple, kept_paths, prune
from hive_bridge.stats.contract import ColumnStats, FileStats, file_stats_from_table, stats_table
from sarg import TruthValue, Type


def _bits(values: list[TruthValue]) -> Triple:
    return Triple(pa.array([v.can_true for v in values]), pa.array([v.can_false for v in values]),
                  pa.array([v.can_null for v in values]))


def _values(t: Triple, n: int) -> list[TruthValue]:
    def full(x: object) -> list[bool]:
        return [x] * n if isinstance(x, bool) else x.to_pylist()  # type: ignore[attr-defined]

    return [TruthValue.of(a, b, c) for a, b, c in zip(full(t.t), full(t.f), full(t.n), strict=True)]


def test_bitwise_and_or_not_are_hives_tables() -> None:
    pairs = list(itertools.product(TruthValue, TruthValue))
    left = _bits([a for a, _ in pairs])
    right = _bits([b for _, b in pairs])
    assert _values(left.and_(right), len(pairs)) == [a.and_(b) for a, b in pairs]
    assert _values(left.or_(right), len(pairs)) == [a.or_(b) for a, b in pairs]
    assert _values(_bits(list(TruthValue)).not_(), 7) == [v.not_() for v in TruthValue]
    # constants mix with arrays
    for tv in TruthValue:
        assert _values(Triple.of(tv).and_(right), len(pairs)) == [tv.and_(b) for _, b in pairs]


def test_truth_codes_round_trip() -> None:
    assert len(TRUTH_CODES) == 7
    for tv in TruthValue:
        assert TRUTH_CODES[CODE_OF[tv]] is tv
        assert bool(CODE_OF[tv] & 4) == tv.can_true


def _table() -> pa.Table:
    types = {"a": pa.int64(), "s": pa.string()}
    files = [
        FileStats(10, {"a": ColumnStats(1, 5, 0), "s": ColumnStats("a", "c", 0, True, True)}, types, "f0"),
        FileStats(10, {"a": ColumnStats(6, 9, 0), "s": ColumnStats("d", "f", 0, True, True)}, types, "f1"),
        FileStats(10, {"a": ColumnStats(None, None, None), "s": ColumnStats(None, None, None)}, types, "f2"),
        FileStats(0, {"a": ColumnStats(None, None, 0), "s": ColumnStats(None, None, 0)}, types, "f3"),
        FileStats(10, {"a": ColumnStats(6, 9, 0), "s": ColumnStats("x", "y", 0, True, True)}, types, "f4", True),
    ]
    return stats_table(files)


def test_prune_result_counts_and_paths() -> None:
    table = _table()
    expr = translate(sarg.parse("leaf-(LESS_THAN a 3)", {"a": "bigint"}))
    result = prune(expr, table)
    assert result.keep.to_pylist() == [True, False, True, False, True]
    assert result.truth_values() == [TruthValue.YES_NO, TruthValue.NO, TruthValue.YES_NO_NULL, TruthValue.NO,
                                     TruthValue.NO]
    assert (result.files, result.kept, result.dropped) == (5, 3, 2)
    assert result.kept_because_unknown == 1 and result.unknown.to_pylist() == [False, False, True, False, False]
    assert result.kept_log_files == 1 and result.empty_files == 1
    assert kept_paths(result, table) == ["f0", "f2", "f4"]
    assert result.truth[1] is TruthValue.NO and len(result.truth) == 5
    assert result.truth.counts()[TruthValue.NO] == 3
    assert result.kept_indices() == [0, 2, 4]
    assert "not" not in result.summary().lower() or "skipped" in result.summary()
    assert "max=9" in result.reason(1) and "log files" in result.reason(4)
    assert result.truth_codes.type == pa.uint8()


def test_prune_accepts_sargs_chunked_tables_and_prepared_stats() -> None:
    table = _table()
    s = sarg.parse("leaf-(IN s b e)", {"s": "string"})
    chunked = pa.concat_tables([table.slice(0, 2), table.slice(2)])
    prepared = StatsTable(chunked).prepare_all()
    first = prune(s, table)
    assert prune(s, chunked).keep.to_pylist() == first.keep.to_pylist()
    assert prune(s, prepared).keep.to_pylist() == first.keep.to_pylist()
    assert prune(s, prepared).keep.to_pylist() == first.keep.to_pylist()  # reused


def test_partition_only_table_keeps_everything_as_unknown() -> None:
    base = _table().select(["path", "partition", "file_size", "instant", "num_rows", "has_log_files"])
    result = prune(Predicate(Op.EQ, "a", Type.LONG, (99,)), base)
    assert result.keep.to_pylist() == [True, True, True, False, True]
    assert result.kept_because_unknown == 3


def test_bad_session_zone() -> None:
    from hive_bridge.filters.expression import ExpressionError

    with pytest.raises(ExpressionError):
        prune(Predicate(Op.EQ, "a", Type.LONG, (1,)), _table(), session_tz="Mars/Olympus")


def test_empty_table() -> None:
    table = _table().slice(0, 0)
    result = prune(Predicate(Op.EQ, "a", Type.LONG, (1,)), table)
    assert result.files == 0 and result.keep.to_pylist() == []


def test_file_stats_round_trip_through_the_table() -> None:
    table = _table()
    files = file_stats_from_table(table)
    assert files[0].columns["a"] == ColumnStats(1, 5, 0, None, None, None)
    assert files[4].has_log_files and files[4].path == "f4"
    assert stats_table(files).to_pylist() == table.to_pylist()


_WORDS = st.sampled_from(["", "a", "ab", "b", "é", "日本", "zz", "a" * 30]) | st.text(max_size=4)


@st.composite
def _string_files(draw: st.DrawFn) -> list[FileStats]:
    out = []
    for _ in range(draw(st.integers(1, 8))):
        lo, hi = sorted([draw(_WORDS), draw(_WORDS)])
        exact = draw(st.sampled_from([True, False, None]))
        cs = ColumnStats(draw(st.sampled_from([lo, None])), draw(st.sampled_from([hi, None])),
                         draw(st.sampled_from([0, 2, None])), exact, True)
        out.append(FileStats(draw(st.sampled_from([5, None])), {"s": cs}, {"s": pa.large_string()}))
    return out


@settings(max_examples=max(settings().max_examples, 300))
@given(_string_files(), st.sampled_from(list(Op)), st.lists(_WORDS, min_size=1, max_size=4))
def test_ranked_strings_agree_with_direct_comparisons(files: list[FileStats], op: Op, words: list[str]) -> None:
    if op in (Op.IS_NULL, Op.IS_NOT_NULL):
        words = []
    elif op in (Op.BETWEEN, Op.NOT_BETWEEN):
        words = (words * 2)[:2]
    elif op not in (Op.IN, Op.NOT_IN):
        words = words[:1]
    expr = Predicate(op, "s", Type.STRING, tuple(words))
    table = stats_table(files)
    direct = prune(expr, StatsTable(table, rank_strings=False))
    ranked = prune(expr, StatsTable(table, rank_strings=True))
    scalar = [evaluate(expr, f).truth for f in files]
    assert direct.truth_values() == ranked.truth_values() == scalar


@pytest.mark.parametrize("t", [pa.decimal128(30, 4), pa.decimal256(40, 4), pa.decimal128(9, 4)])
def test_decimal_wide_precision_uses_arrow_decimals(t: pa.DataType) -> None:
    files = [FileStats(3, {"d": ColumnStats(Decimal("1.5"), Decimal("2.5"), 0)}, {"d": t}),
             FileStats(3, {"d": ColumnStats(Decimal("10.5"), Decimal("10.5"), None)}, {"d": t})]
    table = stats_table(files)
    for lit, want in ((Decimal("2"), [True, False]), (Decimal("10.50"), [False, True])):
        expr = Predicate(Op.EQ, "d", Type.DECIMAL, (lit,))
        result = prune(expr, table)
        assert result.keep.to_pylist() == want
        assert result.truth_values() == [evaluate(expr, f).truth for f in files]


def test_keep_is_a_boolean_array() -> None:
    result = prune(Predicate(Op.IS_NULL, "a", Type.LONG, ()), _table())
    assert isinstance(result.keep, pa.BooleanArray)
    assert pc.sum(result.keep).as_py() == result.kept


def _answering(table: pa.Table, leaf: Predicate, mask: pa.BooleanArray) -> StatsTable:
    """``table`` with an index's answer for ``leaf``'s column and values (the statistics contract's membership)."""
    view = StatsTable(table).answering({(leaf.column, leaf.literals): mask})
    assert view.may_contain(leaf.column, leaf.literals) is mask and StatsTable(table).may_contain(leaf.column,
                                                                                                leaf.literals) is None
    return view


def test_index_answers_through_the_statistics_narrow_equality_leaves() -> None:
    """An index's answer (file may / cannot hold the literal), given to the statistics table, narrows `=`, `IN` and their negations: where it
    says "cannot", `=` is never true and `<>` never false; other leaves and other files are untouched."""
    files = [FileStats(10, {"id": ColumnStats(0, 9, 0, True, True)}, {"id": pa.int64()}, path=f"f{i}")
             for i in range(3)]
    table = stats_table(files)
    mask = pa.array([True, False, True])
    eq = translate(sarg.parse("leaf-(EQUALS id 5)", {"id": "bigint"}), {"id": "bigint"})
    assert isinstance(eq, Predicate)
    assert prune(eq, table).keep.to_pylist() == [True, True, True]
    masked = prune(eq, _answering(table, eq, mask))
    assert masked.keep.to_pylist() == [True, False, True]
    assert masked.truth[1] is TruthValue.NO and not masked.unknown.to_pylist()[1]
    in_ = translate(sarg.parse("leaf-(IN id 5 6)", {"id": "bigint"}), {"id": "bigint"})
    assert prune(in_, _answering(table, in_, mask)).keep.to_pylist() == [True, False, True]
    ne = translate(sarg.parse("(not leaf-(EQUALS id 5))", {"id": "bigint"}), {"id": "bigint"})
    assert isinstance(ne, Predicate) and ne.op is Op.NOT_EQ
    ne_result = prune(ne, _answering(table, ne, mask))
    assert ne_result.keep.to_pylist() == [True, True, True]
    assert ne_result.truth[1] is TruthValue.YES  # no row of file 1 is 5: every row is <> 5
    lt = translate(sarg.parse("leaf-(LESS_THAN id 5)", {"id": "bigint"}), {"id": "bigint"})
    assert prune(lt, _answering(table, lt, mask)).keep.to_pylist() == [True, True, True]  # not an equality
    both = translate(sarg.parse("(or leaf-(EQUALS id 5) leaf-(LESS_THAN id 1))", {"id": "bigint"}), {"id": "bigint"})
    eq_leaf = next(n for n in both.walk() if isinstance(n, Predicate) and n.op is Op.EQ)
    assert prune(both, _answering(table, eq_leaf, mask)).keep.to_pylist() == [True, True, True]  # OR: kept


def test_unscaled_decimals_read_from_the_buffer() -> None:
    """Decimal bounds with 18 digits or fewer compare as their unscaled int64 values, read straight from the
    decimal128 buffer: equal to scaling by 10**scale in Python, with nulls, negative values, sliced arrays."""
    import random
    from decimal import Decimal

    from hive_bridge.pruning.vectorized import _unscaled_int64

    rnd = random.Random(7)
    for precision, scale in ((18, 0), (18, 6), (12, 2), (5, 5), (1, 0)):
        limit = 10**precision - 1
        values = [None if rnd.random() < 0.2 else Decimal(rnd.randint(-limit, limit)).scaleb(-scale)
                  for _ in range(300)]
        arr = pa.array(values, pa.decimal128(precision, scale))
        for start, stop in ((0, 300), (17, 250), (299, 300), (5, 5)):
            part = arr.slice(start, stop - start)
            want = [None if v is None else int(v.scaleb(scale)) for v in values[start:stop]]
            assert _unscaled_int64(part).to_pylist() == want
        chunked = pa.chunked_array([arr.slice(0, 100), arr.slice(100)])
        assert _unscaled_int64(chunked).to_pylist() == [None if v is None else int(v.scaleb(scale)) for v in values]
