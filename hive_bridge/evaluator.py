"""File verdicts: a HudiExpression judged against one file's column statistics with Hive's three-valued logic.

How a leaf is judged
--------------------
Every leaf gets the set of SQL outcomes (true / false / unknown) that some row of the file could still produce,
as a :class:`sarg.TruthValue`; parents combine them with Hive's and/or/not (Kleene logic lifted to sets). A file
is kept unless the root is NO, NULL or NO_NULL. Each outcome is a *may* question answered from the statistics
and always over-approximated: whatever is unknown (missing column, unknown null count, unknown or truncated
bound, a type that does not compare safely, NaN that parquet statistics do not show) makes more outcomes
possible, never fewer. This is ORC's ``evaluatePredicateRange`` (reference §6) computed from its definition, so
it extends to the negated operators: a negated leaf's verdict is the NOT of its positive leaf's verdict, which
is exact because those rewrites are exact under SQL 3VL.

Per file and column the facts are: *may have a value* (not known all-null), *may have a null* (null count
unknown or > 0), *may have NaN* (float columns, unless a ``nan_count`` of 0 says otherwise: parquet min/max
ignore NaN), and usable bounds ``min``/``max`` (not null, not NaN, not truncated). Spark's row semantics: NULL
is unknown, NaN equals NaN and sorts above every number (``x > 5`` is true for NaN, ``x = NaN`` only for NaN),
-0.0 equals 0.0.

Literal types and column types
------------------------------
A literal is compared in the column's domain without narrowing it: it becomes an exact range of domain values
(a single value in most cases) and the comparisons round outward to the values the column can hold.

- integer columns: LONG and DECIMAL literals exactly; a FLOAT literal covers every integer Spark's cast to
  double would make equal to it (its rounding interval), so ``2.5`` matches none and ``1e18`` several.
- decimal columns: LONG/DECIMAL literals by value whatever the scale; a FLOAT literal by its rounding interval
  (``0.1`` as a double still matches ``Decimal('0.1')``).
- float columns: FLOAT literals exactly (a float32 column's statistics are compared in float64); LONG/DECIMAL
  literals cover both their exact value and their rounding to float64 (and to float32 for float32 columns).
- date columns: DATE literals; a TIMESTAMP literal compares as a wall-clock instant against each date's
  midnight. Timestamp columns: a DATE literal is its midnight.
- timestamp columns: SearchArgument timestamps are wall-clock values. A naive column (arrow ``tz=None``) holds
  wall-clock values and compares directly. A UTC-adjusted column (any arrow ``tz``) holds instants: the
  literal is read as a wall-clock time in ``session_tz`` (default ``"UTC"``) and converted to UTC; a wall time
  that is ambiguous or skipped at a DST change covers both offsets. Nanoseconds are kept; a literal between two
  values of the column's unit rounds outward.
- string columns: STRING literals by code point (= UTF-8 byte order, Spark's). Equality and IN literals are
  widened to every trailing-space padding of the literal (CHAR values are space-padded in Hive and Spark, parquet
  may store them unpadded: HIVE-21407); an ordered comparison with a literal ending in a space, or on a column
  declared ``char(n)``, gives up.
- boolean columns: BOOLEAN literals (false < true).
- anything else (binary, nested, a STRING literal against a number, ...): YES_NO_NULL, except IS [NOT] NULL.

The plan a leaf compiles to (:func:`compile_leaf`) is shared with the vectorized evaluator, so the scalar and the
vectorized verdicts agree by construction; the tests check that they do on random inputs.
"""

from __future__ import annotations

import datetime as _dt
import math
import struct
import zoneinfo
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal
from enum import Enum
from fractions import Fraction
from functools import lru_cache
from typing import Protocol, TypeVar

import pyarrow as pa

from hive_bridge.expression import (
    And,
    Constant,
    ExpressionError,
    HudiExpression,
    Not,
    Op,
    Or,
    Predicate,
    translate,
)
from hive_bridge.stats_types import ColumnStats, FileStats, resolve_column
from sarg import SearchArgument, Timestamp, TruthValue, Type

# ---------------------------------------------------------------------------------------------------------
# Domains: how a column's values are compared.
# ---------------------------------------------------------------------------------------------------------

_EXACT = Context(prec=100)  # Decimal arithmetic without rounding (decimal128 has 38 digits)
_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DAY_NANOS = 86_400 * 10**9
_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_UTC = _dt.timezone(_dt.timedelta(0))


class Kind(Enum):
    """INT: exact integers (ints, booleans, dates in days, timestamps in ticks, decimals unscaled);
    FLOAT: float64 with NaN; STRING: Python str order (UTF-8 byte order)."""

    INT = "int"
    FLOAT = "float"
    STRING = "string"


@dataclass(frozen=True)
class Domain:
    """A column's comparison domain, derived from its arrow type."""

    kind: Kind
    family: str  # int, bool, date, timestamp, decimal, float, string
    low: int | None = None  # smallest / largest value the column can hold (INT kind)
    high: int | None = None
    unit_nanos: int = 1
    utc: bool = False
    scale: int = 0
    float32: bool = False
    arrow_type: pa.DataType | None = field(default=None, compare=False)


_INT_RANGES = {
    pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64,
}
_UINT_RANGES = {pa.uint8(): 8, pa.uint16(): 16, pa.uint32(): 32}


def domain_of(arrow_type: pa.DataType) -> Domain | None:
    """The comparison domain of an arrow type, or None when its values cannot be compared safely."""
    t = arrow_type
    if t in _INT_RANGES:
        bits = _INT_RANGES[t]
        return Domain(Kind.INT, "int", -(2 ** (bits - 1)), 2 ** (bits - 1) - 1, arrow_type=t)
    if t in _UINT_RANGES:
        return Domain(Kind.INT, "int", 0, 2 ** _UINT_RANGES[t] - 1, arrow_type=t)
    if pa.types.is_boolean(t):
        return Domain(Kind.INT, "bool", 0, 1, arrow_type=t)
    if pa.types.is_date32(t):
        return Domain(Kind.INT, "date", -(2**31), 2**31 - 1, arrow_type=t)
    if pa.types.is_timestamp(t):
        return Domain(Kind.INT, "timestamp", -(2**63), 2**63 - 1, unit_nanos=_NANOS[t.unit],
                      utc=t.tz is not None, arrow_type=t)
    if pa.types.is_decimal(t) and not isinstance(t, pa.Decimal32Type | pa.Decimal64Type) and t.scale >= 0:
        bound = 10**t.precision - 1
        return Domain(Kind.INT, "decimal", -bound, bound, scale=t.scale, arrow_type=t)
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        return Domain(Kind.FLOAT, "float", float32=pa.types.is_float32(t), arrow_type=t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return Domain(Kind.STRING, "string", arrow_type=t)
    return None


DomainValue = int | float | str


def to_domain(domain: Domain, value: object) -> DomainValue | None:
    """A statistics value (as pyarrow gives it, see stats_types) in the domain; None if it is not usable."""
    if value is None:
        return None
    fam = domain.family
    if fam == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        f = float(value)
        return None if math.isnan(f) else f
    if fam == "string":
        return value if isinstance(value, str) else None
    if fam == "bool":
        return int(value) if isinstance(value, bool) else None
    if fam == "date":
        if isinstance(value, _dt.datetime):
            return None
        if isinstance(value, _dt.date):
            return (value - _EPOCH_DATE).days
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if fam == "timestamp":
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(_UTC).replace(tzinfo=None)
            micros = (value - _EPOCH) // _dt.timedelta(microseconds=1)
            return _exact_div(micros * 1000, domain.unit_nanos)
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if fam == "decimal":
        if isinstance(value, Decimal):
            if not value.is_finite():
                return None
            scaled = Fraction(value) * 10**domain.scale
            return scaled.numerator if scaled.denominator == 1 else None
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _exact_div(a: int, b: int) -> int | None:
    q, r = divmod(a, b)
    return q if r == 0 else None


def domain_repr(domain: Domain, value: DomainValue) -> str:
    """A domain value as a reader would write it (for explanations)."""
    try:
        if domain.family == "date" and isinstance(value, int):
            return (_EPOCH_DATE + _dt.timedelta(days=value)).isoformat()
        if domain.family == "timestamp" and isinstance(value, int):
            ts = Timestamp.from_epoch_nanos(value * domain.unit_nanos)
            return str(ts) + (" UTC" if domain.utc else "")
        if domain.family == "decimal" and isinstance(value, int):
            return str(Decimal(value).scaleb(-domain.scale, _EXACT))
        if domain.family == "bool":
            return "true" if value else "false"
    except (OverflowError, ValueError):
        pass
    return repr(value)


# ---------------------------------------------------------------------------------------------------------
# Literals as exact ranges of domain values.
# ---------------------------------------------------------------------------------------------------------

Ext = Fraction | float | str  # numbers: Fraction or +-inf; strings: str


@dataclass(frozen=True)
class LitRange:
    """The domain values a literal may stand for: [low, high] (equal for an exact literal), or NaN."""

    low: Ext = 0.0
    high: Ext = 0.0
    nan: bool = False

    @property
    def exact(self) -> bool:
        return not self.nan and self.low == self.high


_NAN_LIT = LitRange(nan=True)
_INF = math.inf


def _rounding_interval(x: float) -> tuple[Ext, Ext]:
    """Every real number that rounds to the double x (ties included), as exact bounds."""
    if math.isinf(x):
        return (x, x)
    fx = Fraction(x)
    below, above = math.nextafter(x, -_INF), math.nextafter(x, _INF)
    low: Ext = -_INF if math.isinf(below) else (fx + Fraction(below)) / 2
    high: Ext = _INF if math.isinf(above) else (fx + Fraction(above)) / 2
    return low, high


def _float32(x: Fraction) -> Fraction | None:
    try:
        f = struct.unpack("f", struct.pack("f", float(x)))[0]
    except (OverflowError, struct.error):
        return None
    return None if math.isinf(f) else Fraction(f)


def _float64(x: Fraction) -> Fraction | None:
    try:
        f = float(x)
    except OverflowError:
        return None
    return None if math.isinf(f) else Fraction(f)


def _span(values: Iterable[Fraction | None]) -> LitRange | None:
    vals = list(values)
    if any(v is None for v in vals):
        return None
    nums = [v for v in vals if v is not None]
    return LitRange(min(nums), max(nums))


def _wall_nanos(value: object, type_: Type) -> int | None:
    if type_ is Type.TIMESTAMP and isinstance(value, Timestamp):
        return value.epoch_nanos
    if type_ is Type.DATE and isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return (value - _EPOCH_DATE).days * _DAY_NANOS
    return None


@lru_cache(maxsize=64)
def _zone(name: str) -> _dt.tzinfo:
    if name.upper() in ("UTC", "Z", "GMT", "+00:00"):
        return _UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ExpressionError(f"unknown session time zone {name!r}") from exc


def _utc_instants(wall_nanos: int, session_tz: str) -> tuple[int, int] | None:
    """The UTC instants (nanos) a wall-clock time in session_tz may be (two at a DST overlap or gap)."""
    zone = _zone(session_tz)
    seconds, frac = divmod(wall_nanos, 10**9)
    try:
        wall = _EPOCH + _dt.timedelta(seconds=seconds)
    except OverflowError:
        return None
    instants = []
    for fold in (0, 1):
        offset = wall.replace(tzinfo=zone, fold=fold).utcoffset()
        if offset is None:
            return None
        instants.append(wall_nanos - (offset // _dt.timedelta(microseconds=1)) * 1000)
    del frac
    return min(instants), max(instants)


def convert_literal(value: object, type_: Type, domain: Domain, session_tz: str = "UTC",
                    widen_padding: bool = False) -> LitRange | str:
    """The literal as a LitRange in the column's domain, or a reason string when it cannot be compared safely.

    ``widen_padding``: a STRING literal stands for every trailing-space padding of itself (equality tests)."""
    fam = domain.family
    if value is None:
        return "a NULL literal"
    if fam == "string":
        if type_ is not Type.STRING or not isinstance(value, str):
            return f"a {type_} literal against a string column"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "a literal that is not valid UTF-8"
        if widen_padding:
            base = value.rstrip(" ")
            return LitRange(base, base + " " * 256)
        return LitRange(value, value)
    if type_ is Type.FLOAT:
        if not isinstance(value, float):
            return "a FLOAT literal that is not a float"
        if fam not in ("int", "decimal", "float"):
            return f"a FLOAT literal against a {fam} column"
        if math.isnan(value):
            return _NAN_LIT
        if fam == "float":
            return LitRange(value, value) if math.isinf(value) else LitRange(Fraction(value), Fraction(value))
        low, high = _rounding_interval(value)
        scale = 10**domain.scale
        return LitRange(low * scale if isinstance(low, Fraction) else low,
                        high * scale if isinstance(high, Fraction) else high)
    if type_ in (Type.LONG, Type.DECIMAL):
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return f"a {type_} literal of the wrong class"
        if isinstance(value, Decimal) and not value.is_finite():
            return "a non-finite DECIMAL literal"
        exact = Fraction(value)
        if fam == "int":
            return LitRange(exact, exact)
        if fam == "decimal":
            scaled = exact * 10**domain.scale
            return LitRange(scaled, scaled)
        if fam == "float":
            candidates = [exact, _float64(exact)]
            if domain.float32:
                candidates.append(_float32(exact))
            span = _span(candidates)
            return span if span is not None else "a literal beyond the float range"
        return f"a {type_} literal against a {fam} column"
    if type_ is Type.BOOLEAN:
        if fam != "bool" or not isinstance(value, bool):
            return f"a BOOLEAN literal against a {fam} column"
        return LitRange(Fraction(int(value)), Fraction(int(value)))
    if type_ in (Type.DATE, Type.TIMESTAMP):
        wall = _wall_nanos(value, type_)
        if wall is None:
            return f"a {type_} literal of the wrong class"
        if fam == "date":
            if type_ is Type.DATE:
                days = Fraction(wall, _DAY_NANOS)
                return LitRange(days, days)
            return LitRange(Fraction(wall, _DAY_NANOS), Fraction(wall, _DAY_NANOS))
        if fam == "timestamp":
            if not domain.utc:
                ticks = Fraction(wall, domain.unit_nanos)
                return LitRange(ticks, ticks)
            instants = _utc_instants(wall, session_tz)
            if instants is None:
                return "a timestamp outside the supported range"
            return LitRange(Fraction(instants[0], domain.unit_nanos), Fraction(instants[1], domain.unit_nanos))
        return f"a {type_} literal against a {fam} column"
    return f"a {type_} literal against a {fam} column"


# ---------------------------------------------------------------------------------------------------------
# Formulas: the per-file questions a leaf's verdict is made of. Interpreted by this module (one file) and by
# hive_bridge.vectorized (all files at once).
# ---------------------------------------------------------------------------------------------------------

MIN_SIDE, MAX_SIDE = "min", "max"
VAR_MAY_VALUE, VAR_MAY_NULL, VAR_MAY_NAN = "may_value", "may_null", "may_nan"


def _short(value: object) -> str:
    text = repr(value)
    if isinstance(value, str) and len(value) > 40:
        stripped = value.rstrip(" ")
        if len(value) - len(stripped) > 8:
            return f"{stripped!r} + {len(value) - len(stripped)} spaces"
        return repr(value[:40]) + "..."
    return text


class Formula:
    """Base of the boolean formulas over one column's statistics in one file."""

    def render(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Const(Formula):
    value: bool

    def render(self) -> str:
        return "yes" if self.value else "no"


TRUE, FALSE = Const(True), Const(False)


@dataclass(frozen=True)
class Var(Formula):
    """``may_value`` (not known all-null), ``may_null``, ``may_nan``, ``min_ok`` / ``max_ok`` (usable)."""

    name: str

    def render(self) -> str:
        return self.name


@dataclass(frozen=True)
class Cmp(Formula):
    """``side op value`` when the bound is usable, else ``unknown``."""

    side: str
    op: str  # < <= > >= ==
    value: DomainValue
    unknown: bool

    def render(self) -> str:
        return f"{self.side} {self.op} {_short(self.value)}"


@dataclass(frozen=True)
class AnyIn(Formula):
    """Some range [lo, hi] has ``min <= hi`` and ``max >= lo`` (an unusable bound passes its test)."""

    ranges: tuple[tuple[DomainValue, DomainValue], ...]

    def render(self) -> str:
        return f"[min, max] meets one of {len(self.ranges)} literal(s)"


@dataclass(frozen=True)
class PointIn(Formula):
    """Both bounds usable, ``min == max`` and that value is one of ``points``."""

    points: tuple[DomainValue, ...]

    def render(self) -> str:
        return f"min = max in [{', '.join(_short(p) for p in self.points)}]"


@dataclass(frozen=True)
class AndF(Formula):
    items: tuple[Formula, ...]

    def render(self) -> str:
        return "(" + " and ".join(i.render() for i in self.items) + ")"


@dataclass(frozen=True)
class OrF(Formula):
    items: tuple[Formula, ...]

    def render(self) -> str:
        return "(" + " or ".join(i.render() for i in self.items) + ")"


@dataclass(frozen=True)
class NotF(Formula):
    item: Formula

    def render(self) -> str:
        return f"not {self.item.render()}"


def f_and(*items: Formula) -> Formula:
    out: list[Formula] = []
    for item in items:
        if item == FALSE:
            return FALSE
        if item != TRUE:
            out.extend(item.items if isinstance(item, AndF) else (item,))
    if not out:
        return TRUE
    return out[0] if len(out) == 1 else AndF(tuple(out))


def f_or(*items: Formula) -> Formula:
    out: list[Formula] = []
    for item in items:
        if item == TRUE:
            return TRUE
        if item != FALSE:
            out.extend(item.items if isinstance(item, OrF) else (item,))
    if not out:
        return FALSE
    return out[0] if len(out) == 1 else OrF(tuple(out))


def f_not(item: Formula) -> Formula:
    if isinstance(item, Const):
        return Const(not item.value)
    if isinstance(item, NotF):
        return item.item
    return NotF(item)


_OK_VAR = {MIN_SIDE: Var("min_ok"), MAX_SIDE: Var("max_ok")}


def _cmp(domain: Domain, side: str, op: str, value: DomainValue | float, unknown: bool) -> Formula:
    """``side op value`` folded to a constant where the domain decides it (infinite or out-of-range values)."""
    decided: bool | None = None
    if domain.kind is Kind.INT:
        low, high = domain.low, domain.high
        assert low is not None and high is not None
        if isinstance(value, float):  # +-inf
            above = value > 0
            decided = {"<": above, "<=": above, ">": not above, ">=": not above, "==": False}[op]
        elif isinstance(value, int):
            if value > high:
                decided = {"<": True, "<=": True, ">": False, ">=": False, "==": False}[op]
            elif value < low:
                decided = {"<": False, "<=": False, ">": True, ">=": True, "==": False}[op]
            elif (op == "<" and value == low) or (op == ">" and value == high):
                decided = False
            elif (op == "<=" and value == high) or (op == ">=" and value == low):
                decided = True
    elif domain.kind is Kind.FLOAT and isinstance(value, float) and math.isinf(value):
        # nothing is below -inf or above +inf (the vectorized evaluator relies on these being folded)
        if value < 0:
            decided = {"<": False, ">=": True}.get(op)
        else:
            decided = {">": False, "<=": True}.get(op)
    if decided is None:
        return Cmp(side, op, value, unknown)
    if decided == unknown:
        return Const(decided)
    ok = _OK_VAR[side]
    return ok if decided else f_not(ok)


def _floor(domain: Domain, x: Ext) -> DomainValue | float:
    """The largest domain value <= x (strings: x itself)."""
    if isinstance(x, str):
        return x
    if isinstance(x, float):
        return x  # +-inf
    if domain.kind is Kind.INT:
        return math.floor(x)
    f = _float_near(x)
    if isinstance(f, float) and not math.isinf(f) and Fraction(f) > x:
        f = math.nextafter(f, -_INF)
    return f


def _ceil(domain: Domain, x: Ext) -> DomainValue | float:
    """The smallest domain value >= x."""
    if isinstance(x, str):
        return x
    if isinstance(x, float):
        return x
    if domain.kind is Kind.INT:
        return math.ceil(x)
    f = _float_near(x)
    if isinstance(f, float) and not math.isinf(f) and Fraction(f) < x:
        f = math.nextafter(f, _INF)
    return f


def _float_near(x: Fraction) -> float:
    try:
        return float(x)
    except OverflowError:
        return _INF if x > 0 else -_INF


class _Builder:
    """Builds the formulas of one leaf over one domain."""

    def __init__(self, domain: Domain) -> None:
        self.d = domain
        self.nan: Formula = Var(VAR_MAY_NAN) if domain.kind is Kind.FLOAT else FALSE

    def may_lt(self, r: LitRange, upper: bool = True) -> Formula:
        """Some non-NaN value < x, x = r.high (upper) or r.low."""
        if r.nan:
            return TRUE
        return _cmp(self.d, MIN_SIDE, "<", self._ceil(r.high if upper else r.low), True)

    def may_le(self, r: LitRange, upper: bool = True) -> Formula:
        if r.nan:
            return TRUE
        return _cmp(self.d, MIN_SIDE, "<=", self._floor(r.high if upper else r.low), True)

    def may_gt(self, r: LitRange, upper: bool = False) -> Formula:
        if r.nan:
            return FALSE
        return _cmp(self.d, MAX_SIDE, ">", self._floor(r.high if upper else r.low), True)

    def may_ge(self, r: LitRange, upper: bool = False) -> Formula:
        if r.nan:
            return FALSE
        return _cmp(self.d, MAX_SIDE, ">=", self._ceil(r.high if upper else r.low), True)

    def _floor(self, x: Ext) -> DomainValue:
        return _floor(self.d, x)

    def _ceil(self, x: Ext) -> DomainValue:
        return _ceil(self.d, x)

    def grid_range(self, r: LitRange) -> tuple[DomainValue, DomainValue] | None:
        """[ceil(low), floor(high)]: the domain values r covers (None if none)."""
        lo, hi = self._ceil(r.low), self._floor(r.high)
        if isinstance(lo, str) != isinstance(hi, str):  # pragma: no cover - ranges are homogeneous
            return None
        return (lo, hi) if lo <= hi else None  # type: ignore[operator]

    def eq_true(self, r: LitRange) -> Formula:
        """Some value equals a value of r."""
        if r.nan:
            return self.nan
        grid = self.grid_range(r)
        if grid is None:
            return FALSE
        return f_and(_cmp(self.d, MIN_SIDE, "<=", grid[1], True), _cmp(self.d, MAX_SIDE, ">=", grid[0], True))

    def point(self, r: LitRange) -> DomainValue | None:
        """The single domain value an exact literal is (None for ranges, NaN, values the column can't hold)."""
        if not r.exact:
            return None
        grid = self.grid_range(r)
        if grid is None or grid[0] != grid[1]:
            return None
        v = grid[0]
        if isinstance(v, float) and math.isinf(v):
            return v if self.d.kind is Kind.FLOAT else None
        if self.d.kind is Kind.INT and isinstance(v, int):
            assert self.d.low is not None and self.d.high is not None
            if not self.d.low <= v <= self.d.high:
                return None
        return v

    def ne_possible(self, points: Sequence[DomainValue]) -> Formula:
        """Some non-NaN value differs from all points (exact points only)."""
        if not points:
            return TRUE
        return f_not(PointIn(tuple(sorted(set(points)))))


@dataclass(frozen=True)
class LeafPlan:
    """What a predicate asks of one column: three formulas (may be true / false / null) or a constant.

    ``uses_bounds``: the verdict depends on min/max (so unusable bounds mean missing information)."""

    predicate: Predicate | None
    column: str | None
    domain: Domain | None
    t: Formula = TRUE
    f: Formula = TRUE
    n: Formula = TRUE
    constant: TruthValue | None = None
    unknown: bool = False
    reason: str = ""
    uses_bounds: bool = True


def constant_plan(value: TruthValue, reason: str, unknown: bool, predicate: Predicate | None = None,
                  column: str | None = None) -> LeafPlan:
    return LeafPlan(predicate, column, None, constant=value, unknown=unknown, reason=reason, uses_bounds=False)


def _widen(pred: Predicate, op: Op) -> bool:
    return pred.type is Type.STRING and op in (Op.EQ, Op.NULL_SAFE_EQ, Op.IN)


def compile_leaf(pred: Predicate, column: str | None, arrow_type: pa.DataType | None,
                 session_tz: str = "UTC") -> LeafPlan:
    """The plan for one predicate against a statistics column (``column`` None: not in the statistics)."""
    if column is None or arrow_type is None:
        return constant_plan(TruthValue.YES_NO_NULL, f"column {pred.column!r} is not in the statistics",
                             True, pred)
    positive = pred.op.positive
    mv: Formula = Var(VAR_MAY_VALUE)
    mn: Formula = Var(VAR_MAY_NULL)
    if positive is Op.IS_NULL:
        if pred.op.is_negated:
            return LeafPlan(pred, column, domain_of(arrow_type), mv, mn, FALSE, uses_bounds=False)
        return LeafPlan(pred, column, domain_of(arrow_type), mn, mv, FALSE, uses_bounds=False)
    domain = domain_of(arrow_type)
    if domain is None:
        return constant_plan(TruthValue.YES_NO_NULL, f"column type {arrow_type} is not compared", True, pred,
                             column)
    if domain.kind is Kind.STRING and positive in (Op.LT, Op.LTEQ, Op.BETWEEN):
        if pred.char_length is not None:
            return constant_plan(TruthValue.YES_NO_NULL, "ordered comparison on a char(n) column (padding)",
                                 True, pred, column)
        if any(isinstance(v, str) and v.endswith(" ") for v in pred.literals):
            return constant_plan(TruthValue.YES_NO_NULL, "ordered comparison with a literal ending in a space "
                                 "(char padding)", True, pred, column)
    ranges: list[LitRange | None] = []
    for value in pred.literals:
        if value is None:
            ranges.append(None)
            continue
        converted = convert_literal(value, pred.type, domain, session_tz, widen_padding=_widen(pred, positive))
        if isinstance(converted, str):
            return constant_plan(TruthValue.YES_NO_NULL, f"{converted} ({arrow_type} column)", True, pred,
                                 column)
        ranges.append(converted)
    b = _Builder(domain)
    nan = b.nan
    t: Formula
    f: Formula
    n: Formula
    r: LitRange | None
    if positive in (Op.EQ, Op.NULL_SAFE_EQ):
        r = ranges[0]
        assert r is not None
        p = b.point(r)
        values_true = b.eq_true(r)
        values_false = TRUE if r.nan else f_or(b.ne_possible([p]) if p is not None else TRUE, nan)
        t = f_and(mv, values_true)
        if positive is Op.EQ:
            f, n = f_and(mv, values_false), mn
        else:
            f, n = f_or(f_and(mv, values_false), mn), FALSE
    elif positive is Op.LT:
        r = ranges[0]
        assert r is not None
        t = f_and(mv, b.may_lt(r, upper=True))
        f = f_and(mv, f_or(b.may_ge(r, upper=False), nan))
        n = mn
    elif positive is Op.LTEQ:
        r = ranges[0]
        assert r is not None
        t = f_and(mv, f_or(b.may_le(r, upper=True), nan if r.nan else FALSE))
        f = f_and(mv, f_or(b.may_gt(r, upper=False), FALSE if r.nan else nan))
        n = mn
    elif positive is Op.BETWEEN:
        lo, hi = ranges
        assert lo is not None and hi is not None
        if lo.nan:
            values_true = f_and(nan, Const(hi.nan))
        else:
            grid_ok = TRUE
            if not hi.nan:
                g_lo, g_hi = b._ceil(lo.low), b._floor(hi.high)
                grid_ok = Const(bool(g_lo <= g_hi))  # type: ignore[operator]
            values_true = f_or(f_and(grid_ok, b.may_ge(lo, upper=False), b.may_le(hi, upper=True)),
                               f_and(nan, Const(hi.nan)))
        values_false = f_or(b.may_lt(lo, upper=True), b.may_gt(hi, upper=False), f_and(nan, Const(not hi.nan)))
        t, f, n = f_and(mv, values_true), f_and(mv, values_false), mn
    elif positive is Op.IN:
        real = [r for r in ranges if r is not None]
        has_null = len(real) != len(ranges)
        grids: list[tuple[DomainValue, DomainValue]] = []
        for r in real:
            if not r.nan:
                g = b.grid_range(r)
                if g is not None:
                    grids.append(g)
        any_nan_lit = any(r.nan for r in real)
        values_true = f_or(_any_in(domain, grids), f_and(nan, Const(any_nan_lit)))
        points = [b.point(r) for r in real if not r.nan]
        exact_points = [p for p in points if p is not None]
        values_false = f_or(b.ne_possible(exact_points), f_and(nan, Const(not any_nan_lit)))
        t = f_and(mv, values_true)
        if pred.superset:
            f, n = mv, f_or(mn, mv)
        elif has_null:
            f, n = FALSE, f_or(mn, f_and(mv, values_false))
        elif pred.type is Type.STRING and "null" in pred.literals:
            # a printed STRING list keeps the text null, which may have been a SQL NULL: then a row that
            # matches nothing is NULL rather than false (keeping "false" too is safe either way)
            f, n = f_and(mv, values_false), f_or(mn, f_and(mv, values_false))
        else:
            f, n = f_and(mv, values_false), mn
    else:  # pragma: no cover - every positive operator is handled above
        raise ExpressionError(f"unexpected operator {pred.op}")
    if pred.op.is_negated:
        t, f = f, t
    return LeafPlan(pred, column, domain, t, f, n)


def _any_in(domain: Domain, grids: list[tuple[DomainValue, DomainValue]]) -> Formula:
    if not grids:
        return FALSE
    if len(grids) == 1:
        lo, hi = grids[0]
        return f_and(_cmp(domain, MIN_SIDE, "<=", hi, True), _cmp(domain, MAX_SIDE, ">=", lo, True))
    # out-of-range literals of an INT domain can be dropped or clamped without changing the answer
    kept: list[tuple[DomainValue, DomainValue]] = []
    for lo, hi in grids:
        if domain.kind is Kind.INT:
            assert domain.low is not None and domain.high is not None
            if (isinstance(hi, int | float) and hi < domain.low) or (isinstance(lo, int | float) and lo > domain.high):
                continue
            lo = max(lo, domain.low)
            hi = min(hi, domain.high)
            lo, hi = int(lo), int(hi)
        kept.append((lo, hi))
    if not kept:
        return FALSE
    return AnyIn(tuple(sorted(set(kept), key=lambda g: (g[1], g[0]))))


# ---------------------------------------------------------------------------------------------------------
# Scalar evaluation of one file.
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ColumnFacts:
    """The per-file facts a plan reads, for one column."""

    may_value: bool
    may_null: bool
    may_nan: bool
    min: DomainValue | None
    max: DomainValue | None
    info_missing: bool
    text: str

    @property
    def min_ok(self) -> bool:
        return self.min is not None

    @property
    def max_ok(self) -> bool:
        return self.max is not None


def _usable(exact: bool | None, domain: Domain) -> bool:
    if exact is None:
        return domain.kind is not Kind.STRING
    return exact


def column_facts(domain: Domain | None, stats: ColumnStats, num_rows: int | None) -> ColumnFacts:
    """Read one column's statistics into the facts formulas use (the vectorized evaluator mirrors this)."""
    nc = stats.null_count
    all_null = nc is not None and num_rows is not None and nc >= num_rows
    may_value = not all_null
    may_null = nc is None or nc > 0
    mn_v = mx_v = None
    if domain is not None:
        if _usable(stats.min_exact, domain):
            mn_v = to_domain(domain, stats.min)
        if _usable(stats.max_exact, domain):
            mx_v = to_domain(domain, stats.max)
    may_nan = False
    if domain is not None and domain.kind is Kind.FLOAT:
        may_nan = may_value and (stats.nan_count is None or stats.nan_count > 0)
    info_missing = nc is None or num_rows is None or (may_value and (mn_v is None or mx_v is None))

    def show(v: DomainValue | None, raw: object) -> str:
        if v is not None and domain is not None:
            return domain_repr(domain, v)
        return "unknown" if raw is None else f"{raw!r} (not usable)"

    text = (f"min={show(mn_v, stats.min)}, max={show(mx_v, stats.max)}, "
            f"null_count={'unknown' if nc is None else nc}, num_rows={'unknown' if num_rows is None else num_rows}"
            + (", NaN possible" if may_nan else ""))
    return ColumnFacts(may_value, may_null, may_nan, mn_v, mx_v, info_missing, text)


def eval_formula(formula: Formula, facts: ColumnFacts) -> bool:
    """A formula's value for one file."""
    if isinstance(formula, Const):
        return formula.value
    if isinstance(formula, Var):
        return bool(getattr(facts, formula.name))
    if isinstance(formula, Cmp):
        bound = facts.min if formula.side == MIN_SIDE else facts.max
        if bound is None:
            return formula.unknown
        return _compare(bound, formula.op, formula.value)
    if isinstance(formula, AnyIn):
        return any((facts.min is None or facts.min <= hi) and  # type: ignore[operator]
                   (facts.max is None or facts.max >= lo)  # type: ignore[operator]
                   for lo, hi in formula.ranges)
    if isinstance(formula, PointIn):
        return facts.min is not None and facts.max is not None and facts.min == facts.max and \
            facts.min in formula.points
    if isinstance(formula, AndF):
        return all(eval_formula(i, facts) for i in formula.items)
    if isinstance(formula, OrF):
        return any(eval_formula(i, facts) for i in formula.items)
    if isinstance(formula, NotF):
        return not eval_formula(formula.item, facts)
    raise ExpressionError(f"unknown formula {formula!r}")  # pragma: no cover


def _compare(a: DomainValue, op: str, b: DomainValue) -> bool:
    if op == "<":
        return a < b  # type: ignore[operator]
    if op == "<=":
        return a <= b  # type: ignore[operator]
    if op == ">":
        return a > b  # type: ignore[operator]
    if op == ">=":
        return a >= b  # type: ignore[operator]
    return a == b


@dataclass(frozen=True)
class LeafVerdict:
    """One leaf's verdict for one file, and why."""

    leaf: str
    truth: TruthValue
    unknown: bool
    reason: str


@dataclass(frozen=True)
class Verdict:
    """A file's verdict: the root TruthValue, whether the file is kept, and the reasons (one per leaf, plus
    file-level ones). ``kept_because_unknown``: kept only because some leaf could not be judged for lack of
    information (see :func:`evaluate`)."""

    truth: TruthValue
    keep: bool
    reasons: tuple[str, ...]
    leaves: tuple[LeafVerdict, ...] = ()
    kept_because_unknown: bool = False

    def explain(self) -> str:
        head = f"{'KEEP' if self.keep else 'SKIP'} {self.truth}"
        return "\n".join([head, *("  " + r for r in self.reasons)])


def plan_leaves(expr: HudiExpression, columns: Mapping[str, pa.DataType], session_tz: str = "UTC"
                ) -> dict[Predicate | Constant, LeafPlan]:
    """Compile every leaf (predicate or constant) of ``expr`` against the statistics columns."""
    _zone(session_tz)  # fail early on a bad zone name
    plans: dict[Predicate | Constant, LeafPlan] = {}
    for node in expr.walk():
        if isinstance(node, Constant):
            plans.setdefault(node, constant_plan(node.value, node.reason or "a constant", node.unknown))
        elif isinstance(node, Predicate) and node not in plans:
            name = resolve_column(columns, node.column)
            plans[node] = compile_leaf(node, name, None if name is None else columns[name], session_tz)
    return plans


def as_expression(expr: HudiExpression | SearchArgument) -> HudiExpression:
    if isinstance(expr, SearchArgument):
        return translate(expr)
    if not isinstance(expr, HudiExpression):
        raise ExpressionError(f"expected a HudiExpression or a SearchArgument, not {type(expr).__name__}")
    return expr


class Logic(Protocol):
    """A three-valued truth that combines as Hive's TruthValue does (TruthValue itself, or a vector of them)."""

    def and_(self: _L, other: _L, /) -> _L: ...

    def or_(self: _L, other: _L, /) -> _L: ...

    def not_(self: _L) -> _L: ...


_L = TypeVar("_L", bound=Logic)


def combine(expr: HudiExpression, leaf_value: Callable[[Predicate | Constant, bool], _L]) -> _L:
    """Hive's and/or/not over the tree, iteratively; ``leaf_value(leaf, negative_polarity)`` gives each leaf's
    truth (a TruthValue for one file, a Triple of arrays for many)."""
    stack: list[tuple[HudiExpression, bool, bool]] = [(expr, False, False)]
    results: dict[int, _L] = {}
    while stack:
        node, negative, done = stack.pop()
        if isinstance(node, Predicate | Constant):
            results[id(node)] = leaf_value(node, negative)
            continue
        kid_negative = not negative if isinstance(node, Not) else negative
        if not done:
            stack.append((node, negative, True))
            stack.extend((kid, kid_negative, False) for kid in node.children)
            continue
        values = [results[id(kid)] for kid in node.children]
        if isinstance(node, Not):
            results[id(node)] = values[0].not_()
        else:
            value = values[0]
            for other in values[1:]:
                value = value.and_(other) if isinstance(node, And) else value.or_(other)
            assert isinstance(node, And | Or)
            results[id(node)] = value
    return results[id(expr)]


def evaluate(expr: HudiExpression | SearchArgument, stats: FileStats, session_tz: str = "UTC") -> Verdict:
    """The verdict for one file: Hive's TruthValue of ``expr`` over the file's statistics, and why.

    Kept unless the root is NO, NULL or NO_NULL; a file with log files is always kept; a file with
    ``num_rows == 0`` has no rows and is NO. ``kept_because_unknown``: kept, yet it would have been skipped had
    every leaf judged YES_NO_NULL for lack of information (missing column, unknown null count or row count,
    unusable bound, untypable literal) instead said "no row matches" in its position."""
    expression = as_expression(expr)
    plans = plan_leaves(expression, stats.types, session_tz)
    leaf_results: dict[Predicate | Constant, tuple[TruthValue, bool, str]] = {}
    for leaf, plan in plans.items():
        leaf_results[leaf] = _leaf_verdict(plan, stats)
    truth = combine(expression, lambda leaf, _neg: leaf_results[leaf][0])
    replaced = combine(expression, lambda leaf, neg: (
        (TruthValue.YES if neg else TruthValue.NO) if leaf_results[leaf][1] else leaf_results[leaf][0]))
    reasons: list[str] = []
    leaves = tuple(LeafVerdict(str(leaf), v, u, r) for leaf, (v, u, r) in leaf_results.items())
    for lv in leaves:
        reasons.append(f"{lv.leaf}: {lv.truth}{' (unknown)' if lv.unknown else ''} - {lv.reason}")
    if stats.num_rows == 0:
        truth = TruthValue.NO
        replaced = TruthValue.NO
        reasons.insert(0, "empty file (num_rows = 0): no row can match")
    keep = truth.is_needed()
    because_unknown = keep and not replaced.is_needed()
    if stats.has_log_files:
        reasons.insert(0, "file slice has log files: always kept")
        keep, because_unknown = True, False
    elif keep:
        reasons.insert(0, f"root is {truth}: some row may match" + (
            " (only because of missing information)" if because_unknown else ""))
    else:
        reasons.insert(0, f"root is {truth}: no row can match")
    return Verdict(truth, keep, tuple(reasons), leaves, because_unknown)


def _leaf_verdict(plan: LeafPlan, stats: FileStats) -> tuple[TruthValue, bool, str]:
    if plan.constant is not None:
        return plan.constant, plan.unknown and plan.constant is TruthValue.YES_NO_NULL, plan.reason
    assert plan.column is not None
    col = stats.columns.get(plan.column)
    if col is None:
        return TruthValue.YES_NO_NULL, True, f"no statistics for column {plan.column!r} in this file"
    facts = column_facts(plan.domain, col, stats.num_rows)
    t, f, n = (eval_formula(x, facts) for x in (plan.t, plan.f, plan.n))
    if not (t or f or n):
        t = f = n = True  # an impossible answer (contradictory statistics): cannot prune
    truth = TruthValue.of(t, f, n)
    missing = facts.info_missing if plan.uses_bounds else (
        col.null_count is None or stats.num_rows is None)
    # judged "anything goes" for lack of information (IS [NOT] NULL is never NULL: true and false suffice)
    unknown_leaf = missing and t and f and (n or not plan.uses_bounds)
    why = (f"{facts.text}; can be true: {'yes' if t else 'no'} [{plan.t.render()}], "
           f"false: {'yes' if f else 'no'} [{plan.f.render()}], null: {'yes' if n else 'no'} [{plan.n.render()}]")
    return truth, unknown_leaf, why


__all__ = [
    "ColumnFacts",
    "Domain",
    "Kind",
    "LeafPlan",
    "LeafVerdict",
    "LitRange",
    "Verdict",
    "as_expression",
    "column_facts",
    "combine",
    "compile_leaf",
    "convert_literal",
    "domain_of",
    "eval_formula",
    "evaluate",
    "plan_leaves",
    "to_domain",
]
