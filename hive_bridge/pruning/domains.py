"""Domains and literals: how a column's values compare, and a SearchArgument literal as an exact range of them.

See :mod:`hive_bridge.pruning` for how literal types meet column types (integer, decimal, float, date,
timestamp, string and boolean columns); nothing here looks at statistics.
"""

from __future__ import annotations

import datetime as _dt
import math
import struct
import zoneinfo
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Context, Decimal
from enum import Enum
from fractions import Fraction
from functools import lru_cache

import pyarrow as pa

from hive_bridge.filters.expression import (
    ExpressionError,
)
from sarg import DoubleReading, Timestamp, Type

# ---------------------------------------------------------------------------------------------------------
# Domains: how a column's values are compared.
# ---------------------------------------------------------------------------------------------------------

_EXACT = Context(prec=100)  # Decimal arithmetic without rounding (decimal128 has 38 digits)
_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_DAY_NANOS = 86_400 * 10**9
_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1)
_UTC = _dt.timezone(_dt.timedelta(0))


class DomainKind(Enum):
    """INT: exact integers (ints, booleans, dates in days, timestamps in ticks, decimals unscaled);
    FLOAT: float64 with NaN; STRING: Python str order (UTF-8 byte order)."""

    INT = "int"
    FLOAT = "float"
    STRING = "string"


@dataclass(frozen=True)
class Domain:
    """A column's comparison domain, derived from its arrow type."""

    kind: DomainKind
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
        return Domain(DomainKind.INT, "int", -(2 ** (bits - 1)), 2 ** (bits - 1) - 1, arrow_type=t)
    if t in _UINT_RANGES:
        return Domain(DomainKind.INT, "int", 0, 2 ** _UINT_RANGES[t] - 1, arrow_type=t)
    if pa.types.is_boolean(t):
        return Domain(DomainKind.INT, "bool", 0, 1, arrow_type=t)
    if pa.types.is_date32(t):
        return Domain(DomainKind.INT, "date", -(2**31), 2**31 - 1, arrow_type=t)
    if pa.types.is_timestamp(t):
        return Domain(DomainKind.INT, "timestamp", -(2**63), 2**63 - 1, unit_nanos=_NANOS[t.unit],
                      utc=t.tz is not None, arrow_type=t)
    if pa.types.is_decimal(t) and not isinstance(t, pa.Decimal32Type | pa.Decimal64Type) and t.scale >= 0:
        bound = 10**t.precision - 1
        return Domain(DomainKind.INT, "decimal", -bound, bound, scale=t.scale, arrow_type=t)
    if pa.types.is_float32(t) or pa.types.is_float64(t):
        return Domain(DomainKind.FLOAT, "float", float32=pa.types.is_float32(t), arrow_type=t)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return Domain(DomainKind.STRING, "string", arrow_type=t)
    return None


DomainValue = int | float | str


def display(domain: Domain, value: DomainValue | Fraction) -> str:
    """A domain value as the column's own type prints it (``100.00`` for a decimal(10,2), ``2024-01-16`` for a
    date, ``2024-01-16 10:00:00`` for a timestamp, with ``Z`` when the column holds UTC instants): for
    explain's reasons, never for comparing."""
    fam = domain.family
    try:
        if isinstance(value, float):      # an infinity of an integer domain, or a float bound
            return repr(value)
        if fam == "float":
            return repr(float(value))
        if fam == "bool":
            return "true" if value else "false"
        if fam == "decimal":
            unscaled = Fraction(value)
            if unscaled.denominator == 1:
                return str(Decimal(int(unscaled)).scaleb(-domain.scale))
            return f"~{float(unscaled / 10**domain.scale)!r}"     # between two values of the column's scale
        if fam == "date" and Fraction(value).denominator == 1:
            return (_EPOCH_DATE + _dt.timedelta(days=int(value))).isoformat()
        if fam == "timestamp" and Fraction(value).denominator == 1:
            nanos = int(value) * domain.unit_nanos
            moment = _EPOCH + _dt.timedelta(microseconds=nanos // 1000)
            text = moment.isoformat(sep=" ")
            if nanos % 1000:
                text += f"+{nanos % 1000}ns"
            return text + ("Z" if domain.utc else "")
    except (OverflowError, ValueError, ArithmeticError):
        pass
    return repr(value)


_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


def prefix_upper(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix``, in code-point order (= UTF-8 byte
    order, Spark's string order), or None when there is none (``prefix`` is empty or all U+10FFFF: every string
    >= ``prefix`` starts with it). The last code point below U+10FFFF is incremented (skipping the surrogates,
    which no UTF-8 string holds) and everything after it dropped: ``'ab'`` -> ``'ac'``, ``'a\U0010ffff'`` ->
    ``'b'``, ``'\uffff'`` -> ``'\U00010000'``, ``'\ud7ff'`` -> ``'\ue000'``. So a string ``s`` starts with
    ``prefix`` exactly when ``prefix <= s`` and (no upper bound or ``s < prefix_upper(prefix)``)."""
    for i in range(len(prefix) - 1, -1, -1):
        code = ord(prefix[i])
        if code < _MAX_CODE_POINT:
            code += 1
            if code in _SURROGATES:
                code = _SURROGATES.stop
            return prefix[:i] + chr(code)
    return None


def to_domain(domain: Domain, value: object) -> DomainValue | None:
    """A statistics value (as pyarrow gives it, see hive_bridge.stats.contract) in the domain; None if it is not usable."""
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
    """The domain values a literal may stand for: [low, high] (equal for an exact literal), or NaN.

    ``equal``: the literal is one value that every domain value in [low, high] equals (a double against a
    decimal column: the values whose double it is), so values below the range compare below it and values above
    compare above; without it, the literal is some value of the range, which one unknown."""

    low: Ext = 0.0
    high: Ext = 0.0
    nan: bool = False
    equal: bool = False

    @property
    def exact(self) -> bool:
        return not self.nan and self.low == self.high


_NAN_LIT = LitRange(nan=True)
INF = math.inf


def _rounding_interval(x: float) -> tuple[Ext, Ext]:
    """Every real number that rounds to the double x (ties included), as exact bounds."""
    if math.isinf(x):
        return (x, x)
    fx = Fraction(x)
    below, above = math.nextafter(x, -INF), math.nextafter(x, INF)
    low: Ext = -INF if math.isinf(below) else (fx + Fraction(below)) / 2
    high: Ext = INF if math.isinf(above) else (fx + Fraction(above)) / 2
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


def _spark_digits(value: object) -> tuple[int, int] | None:
    """(integer digits, scale) of a literal's decimal type in Spark, at most: a decimal's own; an integer may be
    an int (decimal(10,0)) or a bigint (decimal(20,0)) or, beyond, a decimal of its digits."""
    if isinstance(value, Decimal) and value.is_finite():
        _, digits, exponent = value.as_tuple()
        assert isinstance(exponent, int)
        scale = max(0, -exponent)
        return max(len(digits) + max(0, exponent), scale) - scale, scale
    if isinstance(value, int) and not isinstance(value, bool):
        return max(20, len(str(abs(value)))), 0
    return None


def _spark_rounded(value: int | Decimal, domain: Domain, peers: Sequence[object] = ()) -> Fraction | None:
    """A decimal literal as Spark 4 compares it with a decimal(P, S) column (in the column's domain units), where
    that is not its exact value, else None. Spark casts every side (a comparison's two, an IN's column and all
    its values: ``peers``) to their wider decimal type; when that needs more than 38 digits it keeps the integer
    digits: the scale becomes ``38 - integer digits`` (never below S) and the literal is rounded half up to it,
    so ``d = 3.1399`` matches 3.14 in a decimal(38,2) column (measured with pyspark 4.3; Spark 3 casts without
    rounding). In an IN, whose values' Spark types are not all known here (``5`` may be an int or a bigint), the
    literal stands for its rounding to S instead, which covers the rounding to any scale between."""
    own = _spark_digits(value)
    if own is None or own[1] <= domain.scale:
        return None
    precision = len(str(domain.high))
    integral, scale = max(precision - domain.scale, own[0]), max(domain.scale, own[1])
    for peer in peers:
        digits = _spark_digits(peer)
        if digits is not None:
            integral, scale = max(integral, digits[0]), max(scale, digits[1])
    if integral + scale <= 38:
        return None
    kept = max(38 - integral, domain.scale) if not peers else domain.scale  # an IN: any scale down to S
    if kept >= own[1]:
        return None
    step = 10**kept
    magnitude = math.floor(abs(Fraction(value)) * step + Fraction(1, 2))  # half up: away from zero
    rounded: Fraction = Fraction(-magnitude if value < 0 else magnitude, step) * 10**domain.scale
    return rounded


def _wall_nanos(value: object, type_: Type) -> int | None:
    if type_ is Type.TIMESTAMP and isinstance(value, Timestamp):
        return value.epoch_nanos
    if type_ is Type.DATE and isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return (value - _EPOCH_DATE).days * _DAY_NANOS
    return None


@lru_cache(maxsize=64)
def zone_of(name: str) -> _dt.tzinfo:
    if name.upper() in ("UTC", "Z", "GMT", "+00:00"):
        return _UTC
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ExpressionError(f"unknown session time zone {name!r}") from exc


def _utc_instants(wall_nanos: int, session_tz: str) -> tuple[int, int] | None:
    """The UTC instants (nanos) a wall-clock time in session_tz may be (two at a DST overlap or gap)."""
    zone = zone_of(session_tz)
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


def as_double_range(x: float, domain: Domain) -> LitRange:
    """A double literal against an integer or decimal column (Spark and Hive compare the two as doubles): the
    column values (in domain units) whose double is ``x``, as [lowest, highest]; where none is, the exact point
    halfway between the two neighbours that round below and above ``x`` (no value equals it, and every value
    compares with it as with ``x``). The cast of a decimal to double is monotone and correctly rounded (half
    even, as Java's ``BigDecimal.doubleValue`` and Python's ``float(Decimal)``), so ``v < x`` as doubles exactly
    when v is below the range, ``v > x`` exactly when above it: the bounds decide every operator."""
    if math.isinf(x):
        return LitRange(x, x)
    low, high = _rounding_interval(x)  # every real number that rounds to x lies in [low, high]
    scale = 10**domain.scale

    def double(n: int) -> float:
        return float(Fraction(n, scale))  # correctly rounded (a Fraction's float is n / scale, rounded once)

    lo: Ext = low
    hi: Ext = high
    if isinstance(low, Fraction):
        n = math.ceil(low * scale)
        lo = Fraction(n if double(n) >= x else n + 1)  # a tie at the bound may round away from x
    if isinstance(high, Fraction):
        n = math.floor(high * scale)
        hi = Fraction(n if double(n) <= x else n - 1)
    if isinstance(lo, Fraction) and isinstance(hi, Fraction) and lo > hi:
        between = (lo + hi) / 2  # no value's double is x: the point between the neighbours (lo == hi + 1)
        return LitRange(between, between)
    return LitRange(lo, hi, equal=True)


def _read(exact: LitRange, value: int | Decimal, domain: Domain, double: DoubleReading) -> LitRange:
    """A LONG or DECIMAL literal against an integer or decimal column as ``double`` says rows compare it: exactly
    (``exact``), as its double (:func:`as_double_range`), or either way: the hull of the two ranges (every
    bound formula is monotone in a range's ends, so the hull keeps the rows of both readings)."""
    if double is DoubleReading.NONE:
        return exact
    as_double = as_double_range(float(value), domain)
    if double is DoubleReading.DOUBLE:
        return as_double
    return LitRange(min(exact.low, as_double.low), max(exact.high, as_double.high))


def convert_literal(value: object, type_: Type, domain: Domain, session_tz: str = "UTC",
                    widen_padding: bool = False, peers: Sequence[object] = (),
                    double: DoubleReading = DoubleReading.NONE) -> LitRange | str:
    """The literal as a LitRange in the column's domain, or a reason string when it cannot be compared safely.

    ``widen_padding``: a STRING literal stands for every trailing-space padding of itself (equality tests).
    ``peers``: the other literals of an IN list (Spark types a list's values together). ``double``: how a
    LONG or DECIMAL literal compares with rows (a double boxed exactly compares as a double): against an integer
    or decimal column, exactly, as its double (:func:`as_double_range`) or either way (:func:`_read`); a float
    column compares it as a double anyway."""
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
        return as_double_range(value, domain)
    if type_ in (Type.LONG, Type.DECIMAL):
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return f"a {type_} literal of the wrong class"
        if isinstance(value, Decimal) and not value.is_finite():
            return "a non-finite DECIMAL literal"
        exact = Fraction(value)
        if fam == "int":
            return _read(LitRange(exact, exact), value, domain, double)
        if fam == "decimal":
            scaled = exact * 10**domain.scale
            spark = _spark_rounded(value, domain, peers) if scaled.denominator != 1 else None
            if spark is None:
                return _read(LitRange(scaled, scaled), value, domain, double)
            # Hive compares exactly; Spark rounds this literal first: either reading's rows are kept
            return _read(LitRange(min(scaled, spark), max(scaled, spark)), value, domain, double)
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


