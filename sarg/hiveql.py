"""HiveQL filter text -> SearchArgument, with the rules of Hive's ``ConvertAstToSearchArg``.

Hive hands storage handlers the filter as readable text too (``hive.io.filter.text``; EXPLAIN prints it as
``filterExpr:``), e.g. ``((event_id = 1L) and (name) IN ('a', 'b'))``. :func:`parse_hiveql` reads that text (and
filters as people write them) with the LALR grammar in ``hiveql.lark`` and makes the same builder calls Hive's
``ConvertAstToSearchArg`` makes for the equivalent expression, so ``build()`` normalizes it the same way:

- ``a = 5`` EQUALS, ``a <> 5`` / ``a != 5`` NOT EQUALS, ``a <=> 5`` NULL_SAFE_EQUALS, ``a < 5`` LESS_THAN,
  ``a <= 5`` LESS_THAN_EQUALS, ``a > 5`` NOT LESS_THAN_EQUALS, ``a >= 5`` NOT LESS_THAN; a constant on the left
  is swapped (``5 < a`` is NOT(a <= 5)); ``a IN (...)`` IN, ``a NOT IN (...)`` NOT(IN); ``a BETWEEN x AND y``
  BETWEEN and ``a NOT BETWEEN x AND y`` NOT(BETWEEN) (the NOT is kept: HIVE-24209); ``a IS NULL`` IS_NULL,
  ``a IS NOT NULL`` NOT(IS_NULL); a bare boolean column ``b`` is ``(EQUALS b true)``; AND, OR, NOT.
- Anything else becomes the constant YES_NO_NULL: functions (LIKE, arithmetic, CASE, casts of columns), two
  columns or none in a comparison, a column that is not in the schema or whose type has no SARG type, and a
  literal that does not convert to the column's type.

Literal types follow Hive's lexer: ``5`` int, ``5L`` bigint, ``5S`` smallint, ``5Y`` tinyint, ``5.0`` / ``5D``
/ ``1e3`` double, ``5BD`` decimal, ``'x'`` / ``"x"`` string (backslash escapes as ``unescapeSQLString``;
adjacent strings are joined), ``DATE'2020-01-01'``, ``TIMESTAMP'2020-01-01 10:00:00'`` and, as Hive 2 prints
them, bare ``2020-01-01`` / ``2020-01-01 10:00:00.0``, ``true``/``false``, ``null``. ``CAST(<literal> AS
type)`` and Hive's ``UDFToLong(<literal>)``-style casts are folded into a literal of that type, as Hive's
constant folding does.

Literals are converted to the column's type (from ``schema``) as Hive's type checker and ``boxLiteral`` do:

============  ==================================================================================================
column        literal
============  ==================================================================================================
LONG          integers; decimals and doubles only when integral and in range; strings holding an integer
FLOAT         any number (``float`` columns take decimals as ``HiveDecimal.floatValue``, widened: 0.1 prints
              0.10000000149011612); strings holding a number
STRING        strings (``char(n)`` columns pad the literal with spaces to n, as ``HiveChar.getPaddedValue``)
DATE          DATE literals; strings ``yyyy-[m]m-[d]d``
TIMESTAMP     TIMESTAMP literals; strings ``yyyy-[m]m-[d]d[ hh:mm:ss[.fffffffff]]`` (or T); DATE literals (midnight)
DECIMAL       integers, decimals, doubles (their Java text, as ``new HiveDecimalWritable(lit.toString())``),
              strings holding a number
BOOLEAN       true / false
============  ==================================================================================================

Everything else is a failed conversion: that predicate is YES_NO_NULL. Where Hive's own ``boxLiteral`` would give
a leaf that can drop matching rows, we give YES_NO_NULL instead (a non-integral double against an integer
column, which Hive truncates; a number against a string column, which Hive compares as numbers); Hive 2.3's
rounding of a decimal literal to float for a double column (fixed in Hive 3) is not copied.

Without a schema, a leaf's type is the literal's (int/bigint LONG, double FLOAT, ...) and a bare column or
``IS NULL`` on a column with no literal cannot be typed (YES_NO_NULL for the former, STRING for the latter).

Column names: backquoted names may hold any character; a dotted name is looked up whole first (nested struct
fields, as ``sarg.schema`` names them), then without its first part when that part is not a column (a table
alias: ``t.event_id``). Lookups ignore case; leaves carry the schema's spelling.

A line copied from EXPLAIN (``filterExpr: ... (type: boolean)``, ``predicate: ...``) is read without its label
and type. Bad text raises :class:`sarg.SargSyntaxError` with line, column, a caret and the expected tokens. Logical
nesting deeper than ``MAX_DEPTH`` (after merging AND-in-AND, OR-in-OR and cancelling NOT NOT) is refused with
that error too; any depth of parentheses alone is fine. Nothing recurses on the input's depth.
"""

from __future__ import annotations

import datetime as _dt
import re
import struct
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import Enum
from importlib import resources
from typing import Any, cast

import lark
from lark import Lark, Token, Transformer

from sarg.builder import Builder
from sarg.errors import SargSyntaxError
from sarg.literals import Literal, Timestamp, decimal_str, java_double_str
from sarg.model import SearchArgument, Type
from sarg.schema import ColumnType, Schema, resolve_schema
from sarg.truth import TruthValue

MAX_DEPTH = 200
"""Deepest logical nesting accepted (Hive's builder normalizes recursively; so does ours)."""

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_HIVE_DECIMAL_MAX_DIGITS = 38


# -- the parsed expression ----------------------------------------------------------------------------------

class Kind(Enum):
    """The Hive type of a literal (an ``ExprNodeConstantDesc``'s type)."""

    TINYINT = "tinyint"
    SMALLINT = "smallint"
    INT = "int"
    BIGINT = "bigint"
    FLOAT = "float"
    DOUBLE = "double"
    DECIMAL = "decimal"
    STRING = "string"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOLEAN = "boolean"
    NULL = "void"


_INTEGRAL = frozenset({Kind.TINYINT, Kind.SMALLINT, Kind.INT, Kind.BIGINT})


def _huge(value: float | Decimal) -> bool:
    """Beyond any LONG or Hive decimal (checked before int() or plain printing, which would be slow)."""
    if isinstance(value, Decimal):
        return value.is_finite() and value != 0 and value.adjusted() > 40
    return value != value or abs(value) > 1e40
_NUMERIC = _INTEGRAL | {Kind.FLOAT, Kind.DOUBLE, Kind.DECIMAL}

ConstValue = int | float | Decimal | str | _dt.date | Timestamp | bool | None


@dataclass(frozen=True)
class Column:
    """A column reference: its name parts (``t.a`` is ``("t", "a")``; a backquoted name is one part)."""

    parts: tuple[str, ...]

    @property
    def name(self) -> str:
        return ".".join(self.parts)


@dataclass(frozen=True)
class Const:
    """A literal: its Hive type and Python value (None for null)."""

    kind: Kind
    value: ConstValue


@dataclass(frozen=True)
class Opaque:
    """Anything ConvertAstToSearchArg does not understand (functions, arithmetic, CASE, LIKE...)."""

    what: str = "expression"


Value = Column | Const | Opaque


@dataclass(frozen=True)
class Compare:
    op: str  # one of = <=> <> < <= > >=  (== and != are normalized)
    left: Value
    right: Value


@dataclass(frozen=True)
class InList:
    value: Value
    items: tuple[Value, ...]
    negated: bool


@dataclass(frozen=True)
class Between:
    value: Value
    low: Value
    high: Value
    negated: bool


@dataclass(frozen=True)
class IsNull:
    value: Value
    negated: bool


@dataclass(eq=False)
class Logic:
    """AND / OR with any number of children (nested ANDs and ORs are merged as they are parsed)."""

    op: str  # "and" | "or"
    children: deque[Expr]
    depth: int


@dataclass(eq=False)
class Not:
    child: Expr
    depth: int


Predicate = Compare | InList | Between | IsNull
Expr = Column | Const | Opaque | Compare | InList | Between | IsNull | Logic | Not


def _depth(node: Expr) -> int:
    return node.depth if isinstance(node, (Logic, Not)) else 1


def _as_value(node: Expr) -> Value:
    """A node used as an operand: predicates and logic are then opaque expressions."""
    if isinstance(node, (Column, Const, Opaque)):
        return node
    return Opaque("a boolean expression used as a value")


# -- literal text ---------------------------------------------------------------------------------------------

def unescape_sql_string(text: str) -> str:
    """Hive's ``BaseSemanticAnalyzer.unescapeSQLString`` for one quoted literal (quotes included).

    ``\\0 \\' \\" \\b \\n \\r \\t \\Z \\\\`` as in MySQL, ``\\%`` and ``\\_`` keep their backslash, ``\\uXXXX``,
    three-digit octal ``\\[01][0-7][0-7]``, and any other escaped character stands for itself.
    """
    out: list[str] = []
    quote: str | None = None
    i = 0
    n = len(text)
    simple = {"0": "\0", "'": "'", '"': '"', "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a",
              "\\": "\\", "%": "\\%", "_": "\\_"}
    while i < n:
        ch = text[i]
        if quote is None:
            if ch in "'\"":
                quote = ch
            i += 1
            continue
        if ch == quote:
            quote = None
            i += 1
            continue
        if ch == "\\" and i + 6 < n and text[i + 1] == "u":
            code = 0
            for k in range(4):
                digit = _hex_digit(text[i + 2 + k])
                code = (code << 4) + digit
            out.append(chr(code & 0xFFFF))
            i += 6
            continue
        if ch == "\\" and i + 4 < n:
            a, b, c = text[i + 1], text[i + 2], text[i + 3]
            if a in "01" and b in "01234567" and c in "01234567":
                out.append(chr(int(a) * 64 + int(b) * 8 + int(c)))
                i += 4
                continue
        if ch == "\\" and i + 2 < n:
            nxt = text[i + 1]
            out.append(simple.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _hex_digit(ch: str) -> int:
    try:
        return int(ch, 16)
    except ValueError:
        return -1


_NUMBER_RE = re.compile(r"(?P<body>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(?P<suffix>[bB][dD]|[lLsSyYdD])?")
_INTEGER_TEXT_RE = re.compile(r"\d+")


def number_literal(text: str) -> Const:
    """A number token as Hive types it (suffix L bigint, S smallint, Y tinyint, D double, BD decimal; an
    integer without suffix is int, else bigint, else decimal; a fraction or exponent makes a double)."""
    m = _NUMBER_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a number: {text!r}")
    body, suffix = m.group("body"), (m.group("suffix") or "").upper()
    integral = _INTEGER_TEXT_RE.fullmatch(body) is not None
    if suffix in ("L", "S", "Y"):
        if not integral:
            raise ValueError(f"{text!r}: an {suffix} suffix needs an integer")
        value = int(body)
        kind, limit = {"L": (Kind.BIGINT, _LONG_MAX), "S": (Kind.SMALLINT, 2**15 - 1),
                       "Y": (Kind.TINYINT, 2**7 - 1)}[suffix]
        if value > limit + 1:  # + 1: the magnitude of the negative bound (-128Y, -9223372036854775808L)
            raise ValueError(f"{text!r} is out of the {kind.value} range")
        return Const(kind, value)
    if suffix == "BD":
        return Const(Kind.DECIMAL, Decimal(body))
    if suffix == "D" or not integral:
        return Const(Kind.DOUBLE, float(body))
    value = int(body)
    if value <= _INT_MAX:
        return Const(Kind.INT, value)
    if value <= _LONG_MAX + 1:  # 2**63 itself only as the magnitude of -2**63 (else out of range later)
        return Const(Kind.BIGINT, value)
    return Const(Kind.DECIMAL, Decimal(value))


def _negate(const: Const) -> Const | Opaque:
    value = const.value
    if const.kind not in _NUMERIC or value is None:
        return Opaque("minus of a non-number")
    assert isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
    negated = value.copy_negate() if isinstance(value, Decimal) else -value  # no context limits
    kind = const.kind
    if kind is Kind.BIGINT and isinstance(negated, int) and negated == _INT_MIN:
        kind = Kind.INT  # -2147483648 is an int
    return Const(kind, negated)


def _float32(value: float) -> float:
    """Java's (float) cast, widened back to double (``Float.doubleValue``)."""
    try:
        return float(struct.unpack("f", struct.pack("f", value))[0])
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


_DATE_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_TS_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,9}))?)?")
_JAVA_DOUBLE_RE = re.compile(r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[dDfF]?|NaN|Infinity)")
_JAVA_LONG_RE = re.compile(r"[+-]?\d+")


def parse_date(text: str) -> _dt.date:
    """``java.sql.Date.valueOf``: ``yyyy-[m]m-[d]d``."""
    m = _DATE_RE.fullmatch(text)
    if m is None:
        raise ValueError(f"not a date: {text!r}")
    return _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))


def parse_timestamp(text: str, date_only: bool = True) -> Timestamp:
    """``java.sql.Timestamp.valueOf`` (``yyyy-[m]m-[d]d hh:mm:ss[.f...]``), and a date alone (midnight) as
    Hive 3's ``Timestamp.valueOf`` accepts it."""
    m = _TS_RE.fullmatch(text)
    if m is None or (m.group(4) is None and not date_only):
        raise ValueError(f"not a timestamp: {text!r}")
    y, mo, d, h, mi, s, frac = m.groups()
    moment = _dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
    return Timestamp.from_datetime(moment, int((frac or "0").ljust(9, "0")))


def _date_const(text: str) -> Const:
    return Const(Kind.DATE, parse_date(text.strip()))


def _timestamp_const(text: str) -> Const:
    return Const(Kind.TIMESTAMP, parse_timestamp(text.strip()))


# -- casts of literals (Hive's constant folding) --------------------------------------------------------------

_CAST_FUNCTIONS = {
    "udftobyte": "tinyint", "udftoshort": "smallint", "udftointeger": "int", "udftolong": "bigint",
    "udftofloat": "float", "udftodouble": "double", "udftostring": "string", "udftoboolean": "boolean",
}
_TYPE_PARAMS_RE = re.compile(r"(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")


def fold_cast(value: Value, type_text: str) -> Value:
    """``CAST(<literal> AS type)`` as a literal of that type, as Hive folds it; a cast of anything else (or one
    this module does not model exactly) is opaque. A literal the cast cannot convert is null, as in Hive."""
    if not isinstance(value, Const):
        return Opaque(f"CAST(... AS {type_text})")
    m = _TYPE_PARAMS_RE.fullmatch(type_text.strip())
    if m is None:
        return Opaque(f"CAST(... AS {type_text})")
    base = m.group(1).lower()
    p1 = int(m.group(2)) if m.group(2) else None
    p2 = int(m.group(3)) if m.group(3) else None
    try:
        return _fold(value, base, p1, p2)
    except (ValueError, ArithmeticError, OverflowError):
        return Opaque(f"CAST(... AS {type_text})")


def _fold(value: Const, base: str, p1: int | None, p2: int | None) -> Value:
    kind, v = value.kind, value.value
    limits = {"tinyint": (Kind.TINYINT, 7), "smallint": (Kind.SMALLINT, 15), "int": (Kind.INT, 31),
              "integer": (Kind.INT, 31), "bigint": (Kind.BIGINT, 63)}
    opaque = Opaque(f"CAST(... AS {base})")
    if base in limits:
        target, bits = limits[base]
        if v is None:
            return Const(target, None)
        number: int
        if kind in _INTEGRAL or kind is Kind.BOOLEAN:
            assert isinstance(v, int)
            number = int(v)
        elif kind in (Kind.DOUBLE, Kind.FLOAT, Kind.DECIMAL):
            assert isinstance(v, (float, Decimal))
            if _huge(v) or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
                return opaque
            number = int(v)  # truncation toward zero, as Hive's casts
        elif kind is Kind.STRING:
            assert isinstance(v, str)
            if not _JAVA_LONG_RE.fullmatch(v.strip()):
                return Const(target, None)
            number = int(v.strip())
        else:
            return opaque
        if not -(2**bits) <= number < 2**bits:
            return opaque  # Hive wraps around; never guess
        return Const(target, number)
    if base in ("double", "float"):
        target = Kind.DOUBLE if base == "double" else Kind.FLOAT
        if v is None:
            return Const(target, None)
        if kind in _NUMERIC:
            assert isinstance(v, (int, float, Decimal))
            f = float(v)
        elif kind is Kind.STRING:
            assert isinstance(v, str)
            if not _JAVA_DOUBLE_RE.fullmatch(v.strip()):
                return Const(target, None)
            f = float(v.strip().rstrip("dDfF"))
        else:
            return opaque
        return Const(target, _float32(f) if target is Kind.FLOAT else f)
    if base in ("decimal", "numeric"):
        precision, scale = (p1 or 10), (p2 or 0)
        if v is None:
            return Const(Kind.DECIMAL, None)
        if kind in _INTEGRAL:
            d = Decimal(int(v))  # type: ignore[arg-type]
        elif kind in (Kind.DOUBLE, Kind.FLOAT):
            assert isinstance(v, float)
            d = Decimal(java_double_str(v))
        elif kind is Kind.DECIMAL:
            assert isinstance(v, Decimal)
            d = v
        elif kind is Kind.STRING:
            assert isinstance(v, str)
            d = Decimal(v.strip())
        else:
            return opaque
        if not d.is_finite():
            return Const(Kind.DECIMAL, None)
        q = d.quantize(Decimal(1).scaleb(-scale), rounding="ROUND_HALF_UP")
        if len(q.as_tuple().digits) > precision and q != 0:
            return Const(Kind.DECIMAL, None)  # overflow: null
        return Const(Kind.DECIMAL, q)
    if base in ("string", "varchar", "char"):
        if v is None:
            return Const(Kind.STRING, None)
        if kind is Kind.STRING:
            assert isinstance(v, str)
            s = v
        elif kind in _INTEGRAL:
            s = str(v)
        elif kind is Kind.DECIMAL:
            assert isinstance(v, Decimal)
            if _huge(v) or v.as_tuple().exponent < -40:  # type: ignore[operator]
                return opaque
            s = decimal_str(v)
        elif kind is Kind.DATE:
            assert isinstance(v, _dt.date)
            s = v.isoformat()
        else:
            return opaque
        if base != "string":
            if p1 is None:
                return opaque
            s = s[:p1]
            if base == "char":
                s = s.rstrip(" ")
        return Const(Kind.STRING, s)
    if base == "date":
        if v is None:
            return Const(Kind.DATE, None)
        if kind is Kind.DATE:
            return value
        if kind is Kind.TIMESTAMP:
            assert isinstance(v, Timestamp)
            return Const(Kind.DATE, v.to_datetime().date())
        if kind is Kind.STRING:
            assert isinstance(v, str)
            try:
                return Const(Kind.DATE, parse_timestamp(v.strip()).to_datetime().date())
            except ValueError:
                return Const(Kind.DATE, None)
        return opaque
    if base == "timestamp":
        if v is None:
            return Const(Kind.TIMESTAMP, None)
        if kind is Kind.TIMESTAMP:
            return value
        if kind is Kind.DATE:
            assert isinstance(v, _dt.date)
            return Const(Kind.TIMESTAMP, Timestamp.from_datetime(_dt.datetime(v.year, v.month, v.day)))
        if kind is Kind.STRING:
            assert isinstance(v, str)
            try:
                return Const(Kind.TIMESTAMP, parse_timestamp(v.strip()))
            except ValueError:
                return Const(Kind.TIMESTAMP, None)
        return opaque
    if base == "boolean":
        if v is None:
            return Const(Kind.BOOLEAN, None)
        if kind is Kind.BOOLEAN:
            return value
        return opaque
    return opaque


# -- literal -> column type (Hive's type checker + boxLiteral) ------------------------------------------------

class _Fail(Exception):
    """The literal does not convert to the column's type: the predicate becomes YES_NO_NULL."""


def box_literal(const: Const, sarg_type: Type, column_type: ColumnType | None = None) -> Literal | None:
    """The value of ``const`` as a literal of a ``sarg_type`` column (None for null); ValueError when it does
    not convert (see the module's table)."""
    try:
        return _box(const, sarg_type, column_type)
    except _Fail as exc:
        raise ValueError(str(exc) or f"{const.kind.value} literal for a {sarg_type} column") from None


def _box(const: Const, sarg_type: Type, column_type: ColumnType | None) -> Literal | None:
    kind, v = const.kind, const.value
    if v is None or kind is Kind.NULL:
        return None
    hive = (column_type.hive_type.strip().lower() if column_type is not None else "")
    if sarg_type is Type.LONG:
        if kind in _INTEGRAL:
            assert isinstance(v, int)
            number = int(v)
        elif kind in (Kind.DECIMAL, Kind.DOUBLE, Kind.FLOAT):
            assert isinstance(v, (Decimal, float))
            if _huge(v) or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
                raise _Fail(f"{v} is out of the LONG range")
            if v != int(v):
                raise _Fail(f"{v} is not an integer")
            number = int(v)
        elif kind is Kind.STRING:
            assert isinstance(v, str)
            if not _JAVA_LONG_RE.fullmatch(v.strip()):
                raise _Fail(f"{v!r} is not an integer")
            number = int(v.strip())
        else:
            raise _Fail()
        if not _LONG_MIN <= number <= _LONG_MAX:
            raise _Fail(f"{number} is out of the LONG range")
        return number
    if sarg_type is Type.FLOAT:
        if kind in _INTEGRAL or kind in (Kind.DOUBLE, Kind.FLOAT):
            assert isinstance(v, (int, float))
            return float(v)
        if kind is Kind.DECIMAL:
            assert isinstance(v, Decimal)
            return _float32(float(v)) if hive == "float" else float(v)
        if kind is Kind.STRING:
            assert isinstance(v, str)
            text = v.strip()
            if not _JAVA_DOUBLE_RE.fullmatch(text):
                raise _Fail(f"{v!r} is not a number")
            return float(text.rstrip("dDfF"))
        raise _Fail()
    if sarg_type is Type.STRING:
        if kind is not Kind.STRING:
            raise _Fail("only a string literal compares with a string column as a string")
        assert isinstance(v, str)
        length = column_type.char_length if column_type is not None else None
        if length is not None:
            stripped = v.rstrip(" ")
            if len(stripped) > length:
                raise _Fail(f"{v!r} is longer than {column_type.hive_type if column_type else 'the column'}")
            return stripped.ljust(length)
        return v
    if sarg_type is Type.DATE:
        if kind is Kind.DATE:
            assert isinstance(v, _dt.date)
            return v
        if kind is Kind.STRING:
            assert isinstance(v, str)
            try:
                return parse_date(v)
            except ValueError:
                raise _Fail(f"{v!r} is not a date") from None
        raise _Fail()
    if sarg_type is Type.TIMESTAMP:
        if kind is Kind.TIMESTAMP:
            assert isinstance(v, Timestamp)
            return v
        if kind is Kind.DATE:
            assert isinstance(v, _dt.date)
            return Timestamp.from_datetime(_dt.datetime(v.year, v.month, v.day))
        if kind is Kind.STRING:
            assert isinstance(v, str)
            try:
                return parse_timestamp(v)
            except ValueError:
                raise _Fail(f"{v!r} is not a timestamp") from None
        raise _Fail()
    if sarg_type is Type.DECIMAL:
        if kind in _INTEGRAL:
            assert isinstance(v, int)
            d = Decimal(v)
        elif kind is Kind.DECIMAL:
            assert isinstance(v, Decimal)
            d = v
        elif kind in (Kind.DOUBLE, Kind.FLOAT):
            assert isinstance(v, float)
            if v != v or v in (float("inf"), float("-inf")):
                raise _Fail("not a finite number")
            d = Decimal(java_double_str(v))
        elif kind is Kind.STRING:
            assert isinstance(v, str)
            try:
                d = Decimal(v.strip())
            except InvalidOperation:
                raise _Fail(f"{v!r} is not a decimal") from None
            if not d.is_finite():
                raise _Fail(f"{v!r} is not a decimal")
        else:
            raise _Fail()
        exponent = d.as_tuple().exponent
        assert isinstance(exponent, int)
        if d != 0 and (d.adjusted() >= _HIVE_DECIMAL_MAX_DIGITS or exponent < -_HIVE_DECIMAL_MAX_DIGITS
                       or len(d.as_tuple().digits) - max(0, _trailing_zeros(d)) > _HIVE_DECIMAL_MAX_DIGITS):
            raise _Fail("beyond what a Hive decimal holds (38 digits)")
        return d
    if sarg_type is Type.BOOLEAN:
        if kind is Kind.BOOLEAN:
            assert isinstance(v, bool)
            return v
        raise _Fail()
    raise _Fail()  # pragma: no cover - every Type is handled above


def _trailing_zeros(d: Decimal) -> int:
    digits = d.as_tuple().digits
    count = 0
    for digit in reversed(digits):
        if digit != 0:
            break
        count += 1
    return count


_INFERRED = {
    Kind.TINYINT: Type.LONG, Kind.SMALLINT: Type.LONG, Kind.INT: Type.LONG, Kind.BIGINT: Type.LONG,
    Kind.FLOAT: Type.FLOAT, Kind.DOUBLE: Type.FLOAT, Kind.DECIMAL: Type.DECIMAL, Kind.STRING: Type.STRING,
    Kind.DATE: Type.DATE, Kind.TIMESTAMP: Type.TIMESTAMP, Kind.BOOLEAN: Type.BOOLEAN,
}


# -- the parser -----------------------------------------------------------------------------------------------

_FRIENDLY = {
    "OR": "OR", "AND": "AND", "NOT": "NOT", "IS": "IS", "IN": "IN", "NULL": "NULL", "TRUE": "TRUE",
    "FALSE": "FALSE", "BETWEEN": "BETWEEN", "LIKE_OP": "LIKE", "CAST": "CAST", "AS": "AS", "CASE": "CASE",
    "WHEN": "WHEN", "THEN": "THEN", "ELSE": "ELSE", "END": "END", "DISTINCT": "DISTINCT",
    "DATE_KW": "DATE'...'", "TIMESTAMP_KW": "TIMESTAMP'...'", "CONST_KW": "const", "COMP_OP": "a comparison",
    "ADD_OP": "an operator", "MUL_OP": "an operator", "MINUS": "'-'", "PLUS": "'+'", "TILDE": "'~'",
    "BANG": "'!'", "STAR": "'*'", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'", "COMMA": "','",
    "DOT": "'.'", "NUMBER": "a number", "STRING": "a quoted string", "NAME": "a column name",
    "QUOTED_NAME": "a `quoted name`", "RAW_DATE": "a date", "RAW_TIMESTAMP": "a timestamp",
    "$END": "end of text",
}
_OPERATORS = {"==": "=", "!=": "<>"}


def _friendly(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({_FRIENDLY.get(n, n) for n in names}))


def _tok(items: Sequence[Any], *types: str) -> list[Token]:
    return [t for t in items if isinstance(t, Token) and t.type in types]


def _exprs(items: Sequence[Any]) -> list[Expr]:
    return [t for t in items if not isinstance(t, Token)]


class _Callbacks(Transformer[Token, Any]):
    """Rule callbacks the LALR parser runs as it reduces."""

    def __init__(self) -> None:
        super().__init__()
        self.text = ""

    def _fail(self, message: str, token: Token | None) -> SargSyntaxError:
        pos = (token.start_pos or 0) if token is not None else 0
        return SargSyntaxError(message, self.text, pos)

    # logic
    def _logic(self, op: str, items: list[Any]) -> Logic:
        left, token, right = items[0], items[1], items[2]
        kids: deque[Expr]
        if isinstance(left, Logic) and left.op == op:
            kids = left.children
            depth = left.depth
            if isinstance(right, Logic) and right.op == op:
                kids.extend(right.children)
                depth = max(depth, right.depth)
            else:
                kids.append(right)
                depth = max(depth, _depth(right) + 1)
            node = left
            node.depth = depth
        elif isinstance(right, Logic) and right.op == op:
            right.children.appendleft(left)
            right.depth = max(right.depth, _depth(left) + 1)
            node = right
        else:
            node = Logic(op, deque([left, right]), 1 + max(_depth(left), _depth(right)))
        if node.depth > MAX_DEPTH:
            raise self._fail(f"expression nested deeper than {MAX_DEPTH} levels", token)
        return node

    def or_(self, items: list[Any]) -> Logic:
        return self._logic("or", items)

    def and_(self, items: list[Any]) -> Logic:
        return self._logic("and", items)

    def not_(self, items: list[Any]) -> Expr:
        token, child = items[0], items[1]
        if isinstance(child, Not):
            return child.child  # NOT NOT x is x (Hive's builder cancels them too)
        depth = _depth(child) + 1
        if depth > MAX_DEPTH:
            raise self._fail(f"expression nested deeper than {MAX_DEPTH} levels", token)
        return Not(child, depth)

    # predicates
    def compare(self, items: list[Any]) -> Compare:
        op = str(items[1])
        return Compare(_OPERATORS.get(op, op), _as_value(items[0]), _as_value(items[2]))

    def is_null(self, items: list[Any]) -> IsNull:
        return IsNull(_as_value(items[0]), negated=False)

    def is_not_null(self, items: list[Any]) -> IsNull:
        return IsNull(_as_value(items[0]), negated=True)

    def opaque_bool(self, items: list[Any]) -> Opaque:
        return Opaque("a predicate Hive does not push down")

    def in_(self, items: list[Any]) -> InList:
        args = items[3]
        return InList(_as_value(items[0]), tuple(_as_value(a) for a in args), negated=False)

    def not_in(self, items: list[Any]) -> InList:
        args = items[4]
        return InList(_as_value(items[0]), tuple(_as_value(a) for a in args), negated=True)

    def between(self, items: list[Any]) -> Between:
        return Between(_as_value(items[0]), _as_value(items[2]), _as_value(items[4]), negated=False)

    def not_between(self, items: list[Any]) -> Between:
        return Between(_as_value(items[0]), _as_value(items[3]), _as_value(items[5]), negated=True)

    # values
    def opaque_op(self, items: list[Any]) -> Opaque:
        return Opaque("an operator or function")

    def negate(self, items: list[Any]) -> Value:
        value = _as_value(items[1])
        if isinstance(value, Const):
            return _negate(value)
        return Opaque("unary minus")

    def plus(self, items: list[Any]) -> Value:
        value = _as_value(items[1])
        if isinstance(value, Const) and value.kind in _NUMERIC:
            return value
        return Opaque("unary plus")

    def paren(self, items: list[Any]) -> Expr:
        inner: Expr = items[1]
        return inner

    def dotted(self, items: list[Any]) -> tuple[str, ...]:
        parts: list[str] = []
        for tok in _tok(items, "NAME", "QUOTED_NAME"):
            text = str(tok)
            parts.append(text[1:-1].replace("``", "`") if tok.type == "QUOTED_NAME" else text)
        return tuple(parts)

    def column(self, items: list[Any]) -> Column:
        return Column(items[0])

    def function(self, items: list[Any]) -> Value:
        parts: tuple[str, ...] = items[0]
        args = [a for a in items[1:] if isinstance(a, list)]
        target = _CAST_FUNCTIONS.get(parts[-1].lower()) if len(parts) == 1 else None
        if target is not None and args and len(args[0]) == 1:
            return fold_cast(_as_value(args[0][0]), target)
        return Opaque(f"function {'.'.join(parts)}")

    def args(self, items: list[Any]) -> list[Expr]:
        return _exprs(items)

    def cast(self, items: list[Any]) -> Value:
        return fold_cast(_as_value(items[2]), items[4])

    def type_name(self, items: list[Any]) -> str:
        base = str(items[0])
        numbers = [str(t) for t in _tok(items, "NUMBER")]
        return f"{base}({','.join(numbers)})" if numbers else base

    def case(self, items: list[Any]) -> Opaque:
        return Opaque("CASE")

    # literals
    def number(self, items: list[Token]) -> Const:
        try:
            return number_literal(str(items[0]))
        except ValueError as exc:
            raise self._fail(str(exc), items[0]) from None

    def string(self, items: list[Token]) -> Const:
        return Const(Kind.STRING, "".join(unescape_sql_string(str(t)) for t in items))

    def date_literal(self, items: list[Token]) -> Const:
        text = unescape_sql_string(str(items[1]))
        try:
            return _date_const(text)
        except ValueError:
            raise self._fail(f"invalid DATE literal {text!r} (expected yyyy-mm-dd)", items[1]) from None

    def timestamp_literal(self, items: list[Token]) -> Const:
        text = unescape_sql_string(str(items[1]))
        try:
            return _timestamp_const(text)
        except ValueError:
            raise self._fail(f"invalid TIMESTAMP literal {text!r} (expected yyyy-mm-dd hh:mm:ss[.fffffffff])",
                             items[1]) from None

    def raw_date(self, items: list[Token]) -> Const:
        try:
            return _date_const(str(items[0]))
        except ValueError:
            raise self._fail(f"invalid date {str(items[0])!r}", items[0]) from None

    def raw_timestamp(self, items: list[Token]) -> Const:
        try:
            return _timestamp_const(str(items[0]))
        except ValueError:
            raise self._fail(f"invalid timestamp {str(items[0])!r}", items[0]) from None

    def true(self, items: list[Token]) -> Const:
        return Const(Kind.BOOLEAN, True)

    def false(self, items: list[Token]) -> Const:
        return Const(Kind.BOOLEAN, False)

    def null(self, items: list[Token]) -> Const:
        return Const(Kind.NULL, None)


_local = threading.local()


def _parser() -> tuple[Lark, _Callbacks]:
    state = getattr(_local, "state", None)
    if state is None:
        grammar = resources.files("sarg").joinpath("hiveql.lark").read_text(encoding="utf-8")
        callbacks = _Callbacks()
        parser = Lark(grammar, parser="lalr", lexer="contextual", transformer=callbacks,
                      maybe_placeholders=False, propagate_positions=False)
        state = _local.state = (parser, callbacks)
    return state


_EXPLAIN_HEAD_RE = re.compile(r"\A\s*(?:filterExpr|predicate)\s*:", re.IGNORECASE)
_EXPLAIN_TAIL_RE = re.compile(r"\(type:\s*boolean\)\s*\Z", re.IGNORECASE)


def _blank_explain_decorations(text: str) -> str:
    """EXPLAIN prints ``filterExpr: <expr> (type: boolean)``: blank the label and the type (same length, so error
    positions stay those of the original text)."""
    head = _EXPLAIN_HEAD_RE.match(text)
    if head is not None:
        text = " " * head.end() + text[head.end():]
    tail = _EXPLAIN_TAIL_RE.search(text)
    if tail is not None:
        text = text[:tail.start()] + " " * (len(text) - tail.start())
    return text


def parse_expression(text: str) -> Expr:
    """The parsed filter expression (before any schema is applied)."""
    if not isinstance(text, str):
        raise TypeError(f"parse_hiveql() takes a str, not {type(text).__name__}")
    parser, callbacks = _parser()
    callbacks.text = text
    try:
        result = cast(Expr, parser.parse(_blank_explain_decorations(text)))
    except SargSyntaxError:
        raise
    except lark.exceptions.UnexpectedCharacters as exc:
        pos = exc.pos_in_stream or 0
        rest = text[pos:]
        if rest[:1] in "'\"":
            raise SargSyntaxError("unterminated string", text, pos, ()) from None
        if rest[:1] == "`":
            raise SargSyntaxError("unterminated `quoted name`", text, pos, ()) from None
        shown = rest[:20].split("\n")[0]
        raise SargSyntaxError(f"unexpected text {shown!r}", text, pos, _friendly(exc.allowed or ())) from None
    except lark.exceptions.UnexpectedEOF as exc:
        raise SargSyntaxError("unexpected end of text", text, len(text), _friendly(exc.expected)) from None
    except lark.exceptions.UnexpectedToken as exc:
        tok = exc.token
        at_end = tok.type == "$END"
        pos = len(text) if at_end else (tok.start_pos or 0)
        what = "unexpected end of text" if at_end else f"unexpected {str(tok)[:40]!r}"
        raise SargSyntaxError(what, text, pos, _friendly(exc.expected)) from None
    except ArithmeticError as exc:  # pragma: no cover - defense in depth: literals are range-checked
        raise SargSyntaxError(f"a number this reader cannot hold: {exc!r}", text, 0) from None
    except lark.exceptions.VisitError as exc:  # pragma: no cover - callbacks raise SargSyntaxError directly
        if isinstance(exc.orig_exc, SargSyntaxError):
            raise exc.orig_exc from None
        raise
    finally:
        callbacks.text = ""
    return result


# -- builder calls, as ConvertAstToSearchArg makes them --------------------------------------------------------

@dataclass
class _Emitter:
    builder: Builder
    columns: Mapping[str, ColumnType] | None  # None: no schema, types come from the literals
    notes: list[str] = field(default_factory=list)

    def maybe(self, why: str) -> None:
        self.notes.append(why)
        self.builder.literal(TruthValue.YES_NO_NULL)

    def resolve(self, column: Column) -> tuple[str, ColumnType | None]:
        """(leaf column name, its type) — type None when unknown (or when there is no schema)."""
        if self.columns is None:
            return column.name, None
        found = _lookup(self.columns, column.name)
        if found is None and len(column.parts) > 1 and _lookup(self.columns, column.parts[0]) is None:
            found = _lookup(self.columns, ".".join(column.parts[1:]))  # a table alias in front
        if found is None:
            return column.name, None
        return found

    def emit(self, node: Expr) -> None:
        b = self.builder
        if isinstance(node, Logic):
            b.start_and() if node.op == "and" else b.start_or()
            for kid in node.children:
                self.emit(kid)
            b.end()
        elif isinstance(node, Not):
            b.start_not()
            self.emit(node.child)
            b.end()
        elif isinstance(node, Column):
            name, ctype = self.resolve(node)
            if ctype is not None and ctype.sarg_type is Type.BOOLEAN and _is_plain_boolean(ctype):
                b.equals(name, Type.BOOLEAN, True)
            else:
                self.maybe(f"column {node.name} is not a boolean column")
        elif isinstance(node, (Const, Opaque)):
            self.maybe("not a predicate on a column")
        elif isinstance(node, Compare):
            self.compare(node)
        elif isinstance(node, InList):
            self.wrap_not(node.negated, lambda: self.in_list(node))
        elif isinstance(node, Between):
            self.wrap_not(node.negated, lambda: self.between(node))
        else:
            self.wrap_not(node.negated, lambda: self.is_null(node))

    def wrap_not(self, negated: bool, body: Callable[[], None]) -> None:
        if negated:
            self.builder.start_not()
        body()
        if negated:
            self.builder.end()

    def _column_type(self, name: str, ctype: ColumnType | None, consts: Sequence[Const]) -> Type | None:
        if self.columns is not None:
            return ctype.sarg_type if ctype is not None else None
        for const in consts:
            if const.kind in _INFERRED:
                return _INFERRED[const.kind]
        return None

    def compare(self, node: Compare) -> None:
        op = node.op
        if op == "<>":
            self.wrap_not(True, lambda: self.compare(Compare("=", node.left, node.right)))
            return
        if op == ">":
            self.wrap_not(True, lambda: self.compare(Compare("<=", node.left, node.right)))
            return
        if op == ">=":
            self.wrap_not(True, lambda: self.compare(Compare("<", node.left, node.right)))
            return
        sides = (node.left, node.right)
        columns = [i for i, side in enumerate(sides) if isinstance(side, Column)]
        if len(columns) != 1:
            self.maybe("a comparison needs exactly one column")
            return
        variable = columns[0]
        column = sides[variable]
        other = sides[1 - variable]
        assert isinstance(column, Column)
        name, ctype = self.resolve(column)
        consts = [other] if isinstance(other, Const) else []
        sarg_type = self._column_type(name, ctype, consts)
        if sarg_type is None:
            self.maybe(f"column {column.name} has no SARG type")
            return
        swap = variable != 0 and op in ("<", "<=")
        if swap:  # 5 < a is NOT (a <= 5); 5 <= a is NOT (a < 5)
            op = "<=" if op == "<" else "<"
            self.builder.start_not()
        try:
            value = box_literal(other, sarg_type, ctype) if isinstance(other, Const) else None
        except ValueError as exc:
            self.maybe(str(exc))
        else:
            method = {"=": self.builder.equals, "<=>": self.builder.null_safe_equals,
                      "<": self.builder.less_than, "<=": self.builder.less_than_equals}[op]
            if value is None:
                self.notes.append("no literal to compare with")
            method(name, sarg_type, value)
        if swap:
            self.builder.end()

    def in_list(self, node: InList) -> None:
        if not isinstance(node.value, Column):
            self.maybe("IN needs a column on its left")
            return
        name, ctype = self.resolve(node.value)
        consts = [item for item in node.items if isinstance(item, Const)]
        sarg_type = self._column_type(name, ctype, consts)
        if sarg_type is None:
            self.maybe(f"column {node.value.name} has no SARG type")
            return
        if len(consts) != len(node.items):
            self.maybe("IN with a value that is not a literal")
            return
        try:
            values = [box_literal(c, sarg_type, ctype) for c in consts]
        except ValueError as exc:
            self.maybe(str(exc))
            return
        self.builder.in_(name, sarg_type, *values)

    def between(self, node: Between) -> None:
        if not isinstance(node.value, Column):
            self.maybe("BETWEEN needs a column on its left")
            return
        name, ctype = self.resolve(node.value)
        consts = [v for v in (node.low, node.high) if isinstance(v, Const)]
        sarg_type = self._column_type(name, ctype, consts)
        if sarg_type is None:
            self.maybe(f"column {node.value.name} has no SARG type")
            return
        try:
            low = box_literal(node.low, sarg_type, ctype) if isinstance(node.low, Const) else None
            high = box_literal(node.high, sarg_type, ctype) if isinstance(node.high, Const) else None
        except ValueError as exc:
            self.maybe(str(exc))
            return
        self.builder.between(name, sarg_type, low, high)

    def is_null(self, node: IsNull) -> None:
        if not isinstance(node.value, Column):
            self.maybe("IS NULL needs a column")
            return
        name, ctype = self.resolve(node.value)
        sarg_type = ctype.sarg_type if ctype is not None else (Type.STRING if self.columns is None else None)
        if sarg_type is None:
            self.maybe(f"column {node.value.name} has no SARG type")
            return
        self.builder.is_null(name, sarg_type)


def _is_plain_boolean(ctype: ColumnType) -> bool:
    """Hive tests ``getTypeString().equals("boolean")``; SARG type names count too."""
    return ctype.hive_type.strip().lower() in ("boolean", "bool")


def _lookup(columns: Mapping[str, ColumnType], name: str) -> tuple[str, ColumnType] | None:
    found = columns.get(name)
    if found is not None:
        return name, found
    low = name.lower()
    for key, value in columns.items():
        if key.lower() == low:
            return key, value
    return None


def build_search_argument(expr: Expr, schema: Schema = None) -> SearchArgument:
    """The SearchArgument Hive builds for a parsed expression."""
    columns = resolve_schema(schema) if schema is not None else None
    emitter = _Emitter(Builder(), columns)
    emitter.emit(expr)
    return emitter.builder.build()


def parse_hiveql(text: str, schema: Schema = None) -> SearchArgument:
    """Read HiveQL filter text (``hive.io.filter.text``, EXPLAIN's ``filterExpr:``) into the SearchArgument
    Hive's ``ConvertAstToSearchArg`` builds for it. ``schema``: a mapping column -> Hive type, or a Hive
    struct type string (``struct<a:int,b:string>``); without one, literals give the types."""
    return build_search_argument(parse_expression(text), schema)


def columns_from_hive(names: str, types: str) -> dict[str, str]:
    """A schema from Hive's ``columns`` (comma-separated) and ``columns.types`` (colon-separated, commas inside
    ``decimal(10,2)`` and ``<...>`` kept) job properties."""
    name_list = [n.strip() for n in names.split(",")] if names.strip() else []
    type_list = _split_types(types)
    if len(name_list) != len(type_list):
        raise SargSyntaxError(f"{len(name_list)} columns but {len(type_list)} types", types, 0)
    return dict(zip(name_list, type_list, strict=True))


def _split_types(types: str) -> list[str]:
    out: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(types):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch in ":," and depth == 0:
            out.append(types[start:i].strip())
            start = i + 1
    tail = types[start:].strip()
    if tail or out:
        out.append(tail)
    return [t for t in out if t]


# -- SARG text or HiveQL? -------------------------------------------------------------------------------------

_TRUTH = r"(?:YES_NO_NULL|YES_NULL|NO_NULL|YES_NO|YES|NO|NULL)"
_SARG_TREE = rf"(?:leaf-|\((?:and|or)[\s)]|{_TRUTH}(?![\w-]))"
_SARG_START_RE = re.compile(
    rf"\s*(?:\(not\s+)*(?:{_SARG_TREE}|\((?:and|or)\b|leaf-\d+\s*=|expr\s*=\s*(?:\(not\s+)*{_SARG_TREE})")
_BARE_TRUTH_RE = re.compile(rf"\s*(?:expr\s*=\s*)?{_TRUTH}\s*")


def looks_like_sarg(text: str) -> bool:
    """True when ``text`` is a printed SearchArgument rather than HiveQL: it starts with ``leaf-``, ``(and``,
    ``(or``, ``(not`` followed by a SARG tree, ``expr = `` followed by one, or is a bare TruthValue constant.
    ``(not (a = 1))`` and ``expr = 5`` are HiveQL."""
    if _BARE_TRUTH_RE.fullmatch(text):
        return True
    return _SARG_START_RE.match(text) is not None


__all__ = [
    "MAX_DEPTH",
    "Between",
    "Column",
    "Compare",
    "Const",
    "InList",
    "IsNull",
    "Kind",
    "Logic",
    "Not",
    "Opaque",
    "box_literal",
    "build_search_argument",
    "columns_from_hive",
    "fold_cast",
    "looks_like_sarg",
    "number_literal",
    "parse_expression",
    "parse_hiveql",
    "unescape_sql_string",
]
