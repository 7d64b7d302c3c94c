"""``<>`` and ``NOT IN`` skip a file whose every row holds one value in the list (min = max, no nulls, no NaN),
for every column type: integers, floats (-0.0 = 0.0; a NaN in the file keeps it), decimals (of any literal
scale), dates, timestamps (naive and UTC-adjusted), booleans and strings. Both evaluators, and the row model
says no row can make the filter true."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Context, Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.expression import translate
from hive_bridge.pruning.scalar import evaluate
from hive_bridge.pruning.vectorized import prune
from hive_bridge.stats.contract import FileStats, stats_table
from sarg import Timestamp, Type
from tests.hive_bridge.rowmodel import DAY, EPOCH_DATE, KINDS, modes, row_truth, schema_for, true_stats

#: each kind's literal type, and the literal equal to a column value
LITERAL: dict[str, tuple[Type, Any]] = {
    "i": (Type.LONG, lambda v: v),
    "i8": (Type.LONG, lambda v: v),
    "f": (Type.FLOAT, lambda v: v),
    "g": (Type.FLOAT, lambda v: v),
    "s": (Type.STRING, lambda v: v),
    "d": (Type.DECIMAL, lambda v: v),
    "D": (Type.DECIMAL, lambda v: v),
    "dt": (Type.DATE, lambda v: EPOCH_DATE + dt.timedelta(days=v)),
    "ts": (Type.TIMESTAMP, lambda v: Timestamp.from_epoch_nanos(v)),
    "tu": (Type.TIMESTAMP, lambda v: Timestamp.from_epoch_nanos(v * 1000)),
    "b": (Type.BOOLEAN, lambda v: v),
}


def _same(kind: str, v: Any) -> st.SearchStrategy[Any]:
    """Values Spark finds equal to ``v``: -0.0 beside 0.0, a decimal at another scale is the same value."""
    if kind in ("f", "g") and v == 0.0:
        return st.sampled_from([0.0, -0.0])
    return st.just(v)


@st.composite
def case(draw: Any) -> tuple[str, list[Any], Any, list[Any]]:
    kind = draw(st.sampled_from(sorted(LITERAL)))
    v = draw(KINDS[kind].values.filter(lambda x: not (isinstance(x, float) and math.isnan(x))))
    rows = draw(st.lists(_same(kind, v), min_size=1, max_size=4))
    t, make = LITERAL[kind]
    lit = make(v)
    if kind in ("f", "g") and lit == 0.0:
        lit = draw(st.sampled_from([0.0, -0.0]))
    if kind in ("d", "D"):
        lit = draw(st.sampled_from([lit, lit.quantize(Decimal(1).scaleb(-6), context=Context(prec=100))]))    # 1.5 and 1.500000
    others = draw(st.lists(KINDS[kind].literals[t], max_size=2))
    return kind, rows, (t, lit), others


@settings(max_examples=300)
@given(case(), st.booleans())
def test_a_file_of_one_listed_value_is_skipped(c: tuple[str, list[Any], Any, list[Any]], not_in: bool) -> None:
    kind, rows, (t, lit), others = c
    b = sarg.builder().start_not()
    b = b.in_(kind, t, lit, *others) if not_in else b.equals(kind, t, lit)
    s = b.end().build()
    fs = FileStats(len(rows), {kind: true_stats(KINDS[kind], rows)}, {kind: KINDS[kind].arrow_type})
    expr = translate(s, schema_for([kind]))
    verdict = evaluate(expr, fs)
    # no row makes it true (the row model), so the file is skipped
    for mode in modes("UTC"):
        assert not any(row_truth(s, KINDS, {kind: r}, mode).can_true for r in rows)
    assert not verdict.keep, f"{s}\n{rows}\n{verdict.explain()}"
    table = stats_table([fs], {kind: KINDS[kind].arrow_type})
    assert prune(expr, table).keep.to_pylist() == [False]


def test_a_nan_or_a_null_keeps_the_file() -> None:
    s = sarg.builder().start_not().equals("f", Type.FLOAT, 1.0).end().build()
    nan = FileStats(2, {"f": true_stats(KINDS["f"], [1.0, float("nan")])}, {"f": KINDS["f"].arrow_type})
    assert evaluate(translate(s), nan).keep                       # NaN <> 1.0 is true
    null = FileStats(2, {"f": true_stats(KINDS["f"], [1.0, None])}, {"f": KINDS["f"].arrow_type})
    assert not evaluate(translate(s), null).keep                   # NULL <> 1.0 is NULL: no row true
    days = FileStats(1, {"dt": true_stats(KINDS["dt"], [19_000])}, {"dt": KINDS["dt"].arrow_type})
    midnight = Timestamp.from_epoch_nanos(19_000 * DAY)
    s_ts = sarg.builder().start_not().equals("dt", Type.TIMESTAMP, midnight).end().build()
    assert not evaluate(translate(s_ts), days).keep                # a date is its midnight
