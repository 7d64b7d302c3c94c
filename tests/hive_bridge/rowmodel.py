"""Test support: random files of rows, their true statistics, random SearchArguments, and a row evaluator with
Spark SQL semantics (NULL unknown, NaN = NaN and above every number, -0.0 = 0.0).

Mixed-type comparisons are judged under two readings, both of which the evaluator must respect: exact values,
and Spark's implicit casts (an integer or decimal column against a double literal compares as double; a float
column against an integer literal as float/double). A UTC-adjusted timestamp column reads the wall-clock
literal in the session time zone with either DST offset.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
import zoneinfo
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

import sarg
from hive_bridge.stats.contract import ColumnStats, FileStats
from sarg import Operator, Timestamp, TruthValue, Type

DAY = 86_400 * 10**9
EPOCH_DATE = dt.date(1970, 1, 1)
NAN = float("nan")
INF = float("inf")


def f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


@dataclass(frozen=True)
class ColumnKind:
    name: str
    arrow_type: pa.DataType
    values: st.SearchStrategy[Any]
    literals: dict[Type, st.SearchStrategy[Any]]
    hive_type: str = ""
    char_length: int | None = None


_TS_BASE = 1_699_160_400 * 10**9  # 2023-11-05 05:00:00 UTC = 01:00 EST, the NY fall-back hour
_DATE_BASE = 19_000


def _ts_values(unit_nanos: int) -> st.SearchStrategy[int]:
    step = st.sampled_from([1, 999, 10**3, 10**6, 10**9, 1800 * 10**9, 3600 * 10**9, DAY])
    return st.builds(lambda k, s: (_TS_BASE + k * s) // unit_nanos, st.integers(-4, 4), step)


def _ts_literal() -> st.SearchStrategy[Timestamp]:
    step = st.sampled_from([1, 1000, 10**6, 10**9, 1800 * 10**9, 3600 * 10**9, DAY])
    return st.builds(lambda k, s: Timestamp.from_epoch_nanos(_TS_BASE + k * s), st.integers(-8, 8), step)


_STRINGS = ["", "a", "ab", "ab ", "ab  ", "ab\t", "abc", "b", "B", "é", "日本", "日本語", "a" * 40, "a" * 41,
            "null", "z" * 3, "\x00", "ab\x00"]
_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.0, 2.0, 2.5, 3.0, -3.0, 0.1, 1e300, -1e300, INF, -INF, NAN, 5e-324]


def _decimal_literals() -> st.SearchStrategy[Decimal]:
    return st.one_of(
        st.sampled_from([Decimal("1.5"), Decimal("1.50"), Decimal("1.505"), Decimal("0.1"), Decimal("0.10"),
                         Decimal("-0"), Decimal("0.00"), Decimal("3"), Decimal("2.999"), Decimal("1E+1")]),
        st.builds(lambda n, s: Decimal(n).scaleb(-s), st.integers(-500, 500), st.integers(0, 4)),
    )


KINDS: dict[str, ColumnKind] = {
    "i": ColumnKind("i", pa.int64(), st.integers(-6, 6) | st.sampled_from([2**62, -(2**62), 2**53 + 1]), {
        Type.LONG: st.integers(-8, 8) | st.sampled_from([2**63 - 1, -(2**63), 2**53 + 1, 2**62]),
        Type.FLOAT: st.sampled_from([*_FLOATS, 2.0**53, 2.0**62, 4.0]) | st.floats(-8, 8),
        Type.DECIMAL: _decimal_literals(),
    }, "bigint"),
    "i8": ColumnKind("i8", pa.int8(), st.integers(-128, 127), {
        Type.LONG: st.integers(-300, 300),
    }, "tinyint"),
    "f": ColumnKind("f", pa.float64(), st.sampled_from(_FLOATS) | st.floats(-4, 4), {
        Type.FLOAT: st.sampled_from(_FLOATS) | st.floats(-4, 4),
        Type.LONG: st.integers(-4, 4) | st.sampled_from([2**53 + 1, 2**63 - 1]),
        Type.DECIMAL: _decimal_literals(),
    }, "double"),
    "g": ColumnKind("g", pa.float32(), st.sampled_from([f32(x) for x in _FLOATS]) | st.floats(-4, 4, width=32)
              | st.just(16_777_216.0), {
        Type.FLOAT: st.sampled_from([*_FLOATS, f32(0.1), 16_777_216.0]) | st.floats(-4, 4, width=32),
        Type.LONG: st.integers(-4, 4) | st.just(16_777_217),
        Type.DECIMAL: _decimal_literals(),
    }, "float"),
    "s": ColumnKind("s", pa.string(), st.sampled_from(_STRINGS) | st.text(max_size=6), {
        Type.STRING: st.sampled_from(_STRINGS) | st.text(max_size=6),
    }, "string"),
    "c": ColumnKind("c", pa.string(), st.sampled_from(["", "a", "ab", "abc", "ab\t", "b"]), {
        Type.STRING: st.sampled_from(["", " ", "a", "ab", "ab ", "ab  ", "abc ", "ab\t", "b"]),
    }, "char(4)", 4),
    "d": ColumnKind("d", pa.decimal128(10, 2), st.builds(lambda n: Decimal(n).scaleb(-2), st.integers(-400, 400)), {
        Type.DECIMAL: _decimal_literals(),
        Type.LONG: st.integers(-5, 5),
        Type.FLOAT: st.sampled_from([0.1, 1.5, 0.3, -0.0, NAN, INF, 2.675]) | st.floats(-5, 5),
    }, "decimal(10,2)"),
    "D": ColumnKind("D", pa.decimal128(30, 3), st.builds(lambda n: Decimal(n).scaleb(-3), st.integers(-10**4, 10**4)
                                                   | st.sampled_from([10**29 - 1, -(10**29 - 1), 10**27 + 1])), {
        Type.DECIMAL: _decimal_literals() | st.sampled_from([Decimal(10**26), Decimal("1E+26") + Decimal("0.001"),
                                                             Decimal("99999999999999999999999999.999")]),
        Type.LONG: st.integers(-12, 12) | st.just(10**18),
        Type.FLOAT: st.sampled_from([0.1, 1.5, 1e26, NAN, -INF]) | st.floats(-12, 12),
    }, "decimal(30,3)"),
    "dt": ColumnKind("dt", pa.date32(), st.integers(_DATE_BASE - 3, _DATE_BASE + 3), {
        Type.DATE: st.builds(lambda k: EPOCH_DATE + dt.timedelta(days=_DATE_BASE + k), st.integers(-4, 4)),
        Type.TIMESTAMP: st.builds(lambda k, h: Timestamp.from_epoch_nanos((_DATE_BASE + k) * DAY + h),
                                  st.integers(-4, 4), st.sampled_from([0, 1, 12 * 3600 * 10**9, DAY - 1])),
    }, "date"),
    "ts": ColumnKind("ts", pa.timestamp("ns"), _ts_values(1), {
        Type.TIMESTAMP: _ts_literal(),
        Type.DATE: st.builds(lambda k: EPOCH_DATE + dt.timedelta(days=_TS_BASE // DAY + k), st.integers(-2, 2)),
    }, "timestamp"),
    "tu": ColumnKind("tu", pa.timestamp("us", "UTC"), _ts_values(1000), {
        Type.TIMESTAMP: _ts_literal(),
        Type.DATE: st.builds(lambda k: EPOCH_DATE + dt.timedelta(days=_TS_BASE // DAY + k), st.integers(-2, 2)),
    }, "timestamp"),
    "b": ColumnKind("b", pa.bool_(), st.booleans(), {Type.BOOLEAN: st.booleans()}, "boolean"),
}


# -- row semantics ------------------------------------------------------------------------------------------

def _is_nan(x: object) -> bool:
    return isinstance(x, float) and math.isnan(x)


def cmp_values(a: Any, b: Any) -> int:
    """Spark's order: NaN = NaN above everything; -0.0 = 0.0; numbers compared exactly."""
    an, bn = _is_nan(a), _is_nan(b)
    if an or bn:
        return (an > bn) - (an < bn)
    if isinstance(a, Decimal):
        a = Fraction(a)
    if isinstance(b, Decimal):
        b = Fraction(b)
    return int(a > b) - int(a < b)


def _instant(wall_nanos: int, tz: str, fold: int) -> int:
    zone = dt.timezone.utc if tz == "UTC" else zoneinfo.ZoneInfo(tz)
    seconds = wall_nanos // 10**9
    wall = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds)
    offset = wall.replace(tzinfo=zone, fold=fold).utcoffset()
    assert offset is not None
    return wall_nanos - int(offset.total_seconds()) * 10**9


@dataclass(frozen=True)
class Mode:
    spark_casts: bool
    fold: int
    session_tz: str


def row_pair(kind: ColumnKind, v: Any, type_: Type, lit: Any, mode: Mode) -> tuple[Any, Any]:
    """(column value, literal) made comparable under one reading."""
    name = kind.name
    if name in ("dt", "ts", "tu"):
        if name == "dt":
            a = v * DAY
        elif name == "ts":
            a = v
        else:
            a = v * 1000
        b = lit.epoch_nanos if isinstance(lit, Timestamp) else (lit - EPOCH_DATE).days * DAY
        if name == "tu":
            b = _instant(b, mode.session_tz, mode.fold)
        return a, b
    if name == "c":
        width = max(kind.char_length or 0, len(v), len(lit))
        return v.ljust(width), lit.ljust(width)
    if name == "b":
        return int(v), int(lit)
    if mode.spark_casts:
        if name in ("i", "i8", "d", "D") and type_ is Type.FLOAT:
            return float(v), lit
        if name == "f" and type_ in (Type.LONG, Type.DECIMAL):
            return v, float(lit)
        if name == "g" and type_ is Type.LONG:
            return v, f32(float(lit))
        if name == "g" and type_ is Type.DECIMAL:
            return v, float(lit)
    return v, lit


def leaf_outcome(kind: ColumnKind, leaf: sarg.PredicateLeaf, v: Any, mode: Mode) -> str:
    """'T', 'F' or 'N' for one row."""
    op = leaf.operator
    if op is Operator.IS_NULL:
        return "T" if v is None else "F"

    def c(lit: Any) -> int:
        a, b = row_pair(kind, v, leaf.type, lit, mode)
        return cmp_values(a, b)

    if op is Operator.NULL_SAFE_EQUALS:
        if v is None or leaf.literal is None:
            return "T" if v is None and leaf.literal is None else "F"
        return "T" if c(leaf.literal) == 0 else "F"
    if v is None:
        return "N"
    if op is Operator.EQUALS:
        return "T" if c(leaf.literal) == 0 else "F"
    if op is Operator.LESS_THAN:
        return "T" if c(leaf.literal) < 0 else "F"
    if op is Operator.LESS_THAN_EQUALS:
        return "T" if c(leaf.literal) <= 0 else "F"
    assert leaf.literals is not None
    if op is Operator.IN:
        if any(lit is not None and c(lit) == 0 for lit in leaf.literals):
            return "T"
        return "N" if any(lit is None for lit in leaf.literals) else "F"
    lo, hi = leaf.literals
    first = "T" if c(lo) >= 0 else "F"
    second = "T" if c(hi) <= 0 else "F"
    return "T" if first == second == "T" else "F"


_TV = {"T": TruthValue.YES, "F": TruthValue.NO, "N": TruthValue.NULL}


def row_truth(s: sarg.SearchArgument, kinds: dict[str, ColumnKind], row: dict[str, Any], mode: Mode) -> TruthValue:
    """The set of outcomes the filter can have for one row (constants in the tree are sets themselves)."""
    values = [_TV[leaf_outcome(kinds[leaf.column], leaf, row[leaf.column], mode)] for leaf in s.leaves]
    return s.evaluate(values)


def modes(session_tz: str) -> list[Mode]:
    return [Mode(sc, fold, session_tz) for sc in (False, True) for fold in (0, 1)]


# -- files and statistics -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class RandomFile:
    rows: list[dict[str, Any]]
    stats: FileStats


def true_stats(kind: ColumnKind, values: Sequence[Any]) -> ColumnStats:
    present = [v for v in values if v is not None and not _is_nan(v)]
    nulls = sum(v is None for v in values)
    nans = sum(_is_nan(v) for v in values)
    if not present:
        return ColumnStats(None, None, nulls, True, True, nans)
    lo = hi = present[0]
    for v in present[1:]:
        if cmp_values(v, lo) < 0:
            lo = v
        if cmp_values(v, hi) > 0:
            hi = v
    return ColumnStats(lo, hi, nulls, True, True, nans)


def damage(draw: Callable[[st.SearchStrategy[Any]], Any], kind: ColumnKind, cs: ColumnStats) -> ColumnStats:
    """Make statistics less informative in the ways real ones are (never wrong)."""
    mn, mx, nc = cs.min, cs.max, cs.null_count
    mn_ex, mx_ex, nan = cs.min_exact, cs.max_exact, cs.nan_count
    what = draw(st.sets(st.sampled_from(["nc", "min", "max", "nan", "trunc", "exact_none", "widen"]), max_size=3))
    if "nc" in what:
        nc = None
    if "min" in what:
        mn = None
    if "max" in what:
        mx = None
    if "nan" in what or kind.arrow_type not in (pa.float32(), pa.float64()):
        nan = None
    if "trunc" in what and isinstance(mn, str) and isinstance(mx, str):
        if len(mn) > 1:
            mn, mn_ex = mn[:1], False
        if mx:
            mx, mx_ex = mx[:1] + "\U0010ffff", False
    if "exact_none" in what:
        mn_ex = mx_ex = None
    if "widen" in what and isinstance(mn, int) and isinstance(mx, int) and not isinstance(mn, bool) \
            and kind.name in ("i", "ts", "tu", "dt"):
        mn, mx = mn - 1, mx + 1
    return ColumnStats(mn, mx, nc, mn_ex, mx_ex, nan)


@st.composite
def random_file(draw: Callable[[st.SearchStrategy[Any]], Any], columns: Sequence[str],
                allow_damage: bool = True) -> RandomFile:
    n = draw(st.integers(0, 6))
    rows: list[dict[str, Any]] = [{} for _ in range(n)]
    stats: dict[str, ColumnStats] = {}
    for name in columns:
        kind = KINDS[name]
        absent = draw(st.integers(0, 9)) == 0  # the file's schema lacks the column: all null
        null_rate = draw(st.sampled_from([0.0, 0.3, 1.0])) if not absent else 1.0
        values = kind.values
        if kind.arrow_type in (pa.float32(), pa.float64()) and draw(st.integers(0, 3)) == 0:
            values = st.just(NAN)   # a float column holding no number: only NaN (and nulls), often
        cell = st.none() if null_rate >= 1.0 else values | st.none() if null_rate > 0 else values
        vals = draw(st.lists(cell, min_size=n, max_size=n))
        for row, v in zip(rows, vals, strict=True):
            row[name] = v
        cs = true_stats(kind, vals)
        if absent:
            cs = ColumnStats(None, None, n, None, None, None)
        elif allow_damage and draw(st.booleans()):
            cs = damage(draw, kind, cs)
        stats[name] = cs
    num_rows = n if not allow_damage or draw(st.integers(0, 7)) else None
    types = {name: KINDS[name].arrow_type for name in columns}
    return RandomFile(rows, FileStats(num_rows, stats, types))


def random_leaf(draw: Callable[[st.SearchStrategy[Any]], Any], b: Any, name: str, kind: ColumnKind,
                null_values: bool = True) -> None:
    """One random leaf on column `name` added to builder `b`: any operator, a literal of any type the column's
    kind takes (with `null_values`, now and then a NULL literal for a comparison)."""
    type_ = draw(st.sampled_from(list(kind.literals)))
    lits = kind.literals[type_]
    op = draw(st.sampled_from(list(Operator)))
    if op is Operator.IS_NULL:
        b.is_null(name, type_)
    elif op is Operator.IN:
        values = draw(st.lists(lits | st.none(), min_size=1, max_size=4))
        b.in_(name, type_, *values)
    elif op is Operator.BETWEEN:
        b.between(name, type_, draw(lits), draw(lits))
    else:
        value = draw(lits | st.none()) if null_values and draw(st.integers(0, 15)) == 0 else draw(lits)
        {Operator.EQUALS: b.equals, Operator.NULL_SAFE_EQUALS: b.null_safe_equals,
         Operator.LESS_THAN: b.less_than, Operator.LESS_THAN_EQUALS: b.less_than_equals}[op](name, type_, value)


@st.composite
def random_sarg(draw: Callable[[st.SearchStrategy[Any]], Any], columns: Sequence[str],
                max_depth: int = 3, kinds: Mapping[str, ColumnKind] | None = None) -> sarg.SearchArgument:
    """A random SearchArgument over `columns`, whose kinds are looked up in `kinds` (default: KINDS)."""
    b = sarg.builder()
    all_kinds = KINDS if kinds is None else kinds

    def node(depth: int) -> None:
        choice = draw(st.integers(0, 9)) if depth < max_depth else 0
        if choice <= 4:
            name = draw(st.sampled_from(list(columns)))
            random_leaf(draw, b, name, all_kinds[name])
        elif choice == 5:
            b.literal(draw(st.sampled_from(list(TruthValue))))
        elif choice == 6:
            b.start_not()
            node(depth + 1)
            b.end()
        else:
            (b.start_and if choice <= 7 else b.start_or)()
            for _ in range(draw(st.integers(1, 3))):
                node(depth + 1)
            b.end()

    node(0)
    if draw(st.booleans()):
        node(0)
    return b.build()


def schema_for(columns: Sequence[str]) -> dict[str, str]:
    return {name: KINDS[name].hive_type for name in columns}


def arrow_column(kind: ColumnKind, values: Sequence[Any]) -> pa.Array:
    if pa.types.is_timestamp(kind.arrow_type):
        return pa.array(values, pa.int64()).view(kind.arrow_type)
    if pa.types.is_date32(kind.arrow_type):
        return pa.array(values, pa.int32()).view(pa.date32())
    return pa.array(values, kind.arrow_type)
