"""Literal values of a SearchArgument: their Python types and how Hive prints them (Java ``toString``)."""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Context, Decimal, InvalidOperation

from sarg.javadouble import java_format, jdk17_digits, shortest_digits

_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_ORDINAL = _EPOCH.toordinal()
_NANOS_PER_SECOND = 1_000_000_000
_TS_PATTERN = re.compile(r"(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")


@dataclass(frozen=True, order=True, slots=True)
class Timestamp:
    """A wall-clock timestamp with nanosecond precision, as ``java.sql.Timestamp`` carries it.

    ``seconds`` counts wall-clock seconds since 1970-01-01 00:00:00 (no time zone: SearchArgument timestamps are
    local wall-clock values); ``nanos`` is the fraction, 0..999,999,999. Ordering is chronological.
    """

    seconds: int
    nanos: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.nanos < _NANOS_PER_SECOND:
            raise ValueError(f"nanos out of range: {self.nanos}")

    @classmethod
    def parse(cls, text: str) -> Timestamp:
        """Read ``yyyy-mm-dd hh:mm:ss[.fffffffff]`` (``java.sql.Timestamp.valueOf``); a field out of range (month
        13, hour 24, a year past 9999) is a ValueError."""
        m = _TS_PATTERN.fullmatch(text)
        if m is None:
            raise ValueError(f"not a timestamp: {text!r}")
        y, mo, d, h, mi, s, frac = m.groups()
        days = _dt.date(int(y), int(mo), int(d)).toordinal() - _EPOCH_ORDINAL  # checks the date
        hours, minutes, secs = int(h), int(mi), int(s)
        if hours > 23 or minutes > 59 or secs > 59:
            raise ValueError(f"time out of range: {text!r}")
        ts: Timestamp = object.__new__(cls)  # fields are in range: no __post_init__ check needed
        object.__setattr__(ts, "seconds", days * 86400 + hours * 3600 + minutes * 60 + secs)
        object.__setattr__(ts, "nanos", int(frac.ljust(9, "0")) if frac else 0)
        return ts

    @classmethod
    def from_datetime(cls, value: _dt.datetime, nanos: int | None = None) -> Timestamp:
        """From a naive datetime (an aware one is taken as its own wall clock); ``nanos`` overrides microseconds."""
        naive = value.replace(tzinfo=None, microsecond=0)
        seconds = (naive - _EPOCH) // _dt.timedelta(seconds=1)
        return cls(seconds, value.microsecond * 1000 if nanos is None else nanos)

    @classmethod
    def from_epoch_nanos(cls, nanos: int) -> Timestamp:
        seconds, frac = divmod(nanos, _NANOS_PER_SECOND)
        return cls(seconds, frac)

    @property
    def epoch_nanos(self) -> int:
        """Wall-clock nanoseconds since 1970-01-01 00:00:00."""
        return self.seconds * _NANOS_PER_SECOND + self.nanos

    def to_datetime(self) -> _dt.datetime:
        """The naive wall-clock datetime, truncated to microseconds."""
        return _EPOCH + _dt.timedelta(seconds=self.seconds, microseconds=self.nanos // 1000)

    def __str__(self) -> str:
        dt = _EPOCH + _dt.timedelta(seconds=self.seconds)
        frac = f"{self.nanos:09d}".rstrip("0") or "0"
        return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d} "
                f"{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}.{frac}")


@dataclass(frozen=True)
class UnknownLiteral:
    """A literal that could not be typed (``DynamicValue(RS_7_x_min)``, text that does not convert to the
    column's type). The evaluator treats any leaf holding one as unknown (YES_NO_NULL)."""

    text: str
    reason: str = ""

    def __str__(self) -> str:
        return self.text


Literal = int | float | str | _dt.date | Decimal | bool | Timestamp | UnknownLiteral


def java_double_str(value: float) -> str:
    """``Double.toString`` as Java 8 to 18 print it (the Javas Hive deployments run on: 8, 11, 17): plain for
    1e-3 <= |x| < 1e7, else ``d.dddE±n``; ``NaN``, ``Infinity``, ``-0.0``.

    Those Javas print more digits than needed for about 0.3% of doubles (``2e23`` prints
    ``1.9999999999999998E23``, ``1e23`` prints ``9.999999999999999E22``): see :mod:`sarg.javadouble`. Java 19+
    prints the shortest digits instead (JDK-4511638): :func:`java_double_str_shortest`. Both read back to the
    same double, and a parsed leaf keeps its original text, so printing a parsed SARG back is exact either way."""
    return _java_double(value, jdk17_digits)


def java_double_str_shortest(value: float) -> str:
    """``Double.toString`` as Java 19+ prints it: the shortest digits that read back (the closest of them to
    the double; the closest of one or two digits when one would do, so ``Double.MIN_VALUE`` is ``4.9E-324``),
    laid out like :func:`java_double_str`."""
    return _java_double(value, shortest_digits)


def _java_double(value: float, digits_of: Callable[[float], tuple[str, int]]) -> str:
    """NaN, infinities and zeros as Java prints them; any other double from its digits (``digits_of(|x|)``)."""
    if value != value:
        return "NaN"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    mag = abs(value)
    if mag == math.inf:
        return "Infinity" if value > 0 else "-Infinity"
    digits, exp = digits_of(mag)
    return java_format(value < 0, digits, exp)


def decimal_str(value: Decimal) -> str:
    """``HiveDecimal.toString``: plain digits, trailing zeros stripped (``12.50`` prints ``12.5``)."""
    if value == 0:
        return "0"
    return format(_strip_zeros(value), "f")


def _strip_zeros(value: Decimal) -> Decimal:
    """Trailing zeros removed without rounding (``Decimal.normalize()`` alone rounds to the context's 28 digits)."""
    return value.normalize(Context(prec=max(1, len(value.as_tuple().digits))))


def literal_str(value: Literal | None) -> str:
    """How Java prints a literal of any SearchArgument type (``null`` for None)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_str(value)
    if isinstance(value, Decimal):
        return decimal_str(value)
    if isinstance(value, _dt.datetime):
        return str(Timestamp.from_datetime(value))
    if isinstance(value, _dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    return str(value)


def literal_key(value: Literal | None) -> object:
    """An equality key with Java's semantics: Double.equals treats NaN as equal to NaN and -0.0 as unlike 0.0;
    HiveDecimal compares by value whatever the scale (as Python's Decimal does: ``1.0 == 1.00``, same hash)."""
    kind = type(value)
    if kind is str:
        return ("str", value)
    if kind is int:
        return ("i", value)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, float):
        if math.isnan(value):
            return ("f", "NaN")
        return ("f", value, math.copysign(1.0, value))
    if isinstance(value, Decimal):
        return ("d", value)
    if isinstance(value, int):
        return ("i", value)
    return (type(value).__name__, value)


def parse_decimal(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a decimal: {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"not a finite decimal: {text!r}")
    return value
