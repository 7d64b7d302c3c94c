"""HiveQL literals: their text as Hive's lexer types it, casts of literals folded as Hive's constant folding does,
and a literal boxed to a column's SARG type as Hive's type checker and ``boxLiteral`` do (the table is in
``sarg.hiveql``'s doc).

- :func:`unescape_sql_string` (``BaseSemanticAnalyzer.unescapeSQLString``), :func:`number_literal` (the type of a
  number token: suffixes L S Y D BD), :func:`parse_date` / :func:`parse_timestamp` (``java.sql`` ``valueOf``);
- :func:`fold_cast`: ``CAST(<literal> AS type)`` (and ``UDFToLong(<literal>)``-style casts, ``CAST_FUNCTIONS``);
- :func:`box_literal`: an :class:`~sarg.hiveql.nodes.HqlLiteral` as a literal of a column's SARG type.
"""

from __future__ import annotations

import datetime as _dt
import re
import struct
from decimal import Context, Decimal, InvalidOperation

from sarg.hiveql.nodes import INTEGRAL_KINDS, NUMERIC_KINDS, HqlLiteral, LiteralKind, Opaque, Value
from sarg.literals import Literal, Timestamp, decimal_str, java_double_str
from sarg.model import Type
from sarg.schema import ColumnType

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_HIVE_DECIMAL_MAX_DIGITS = 38
_WIDE = Context(prec=100)  # decimal arithmetic without rounding


def _huge(value: float | Decimal) -> bool:
    """Beyond any LONG or Hive decimal (checked before int() or plain printing, which would be slow)."""
    if isinstance(value, Decimal):
        return value.is_finite() and value != 0 and value.adjusted() > 40
    return value != value or abs(value) > 1e40


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


def number_literal(text: str) -> HqlLiteral:
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
        kind, limit = {"L": (LiteralKind.BIGINT, _LONG_MAX), "S": (LiteralKind.SMALLINT, 2**15 - 1),
                       "Y": (LiteralKind.TINYINT, 2**7 - 1)}[suffix]
        if value > limit + 1:  # + 1: the magnitude of the negative bound (-128Y, -9223372036854775808L)
            raise ValueError(f"{text!r} is out of the {kind.value} range")
        return HqlLiteral(kind, value)
    if suffix == "BD":
        return HqlLiteral(LiteralKind.DECIMAL, Decimal(body))
    if suffix == "D" or not integral:
        exact = Decimal(body) if not suffix and "e" not in body.lower() else None
        return HqlLiteral(LiteralKind.DOUBLE, float(body), exact)
    value = int(body)
    if value <= _INT_MAX:
        return HqlLiteral(LiteralKind.INT, value)
    if value <= _LONG_MAX + 1:  # 2**63 itself only as the magnitude of -2**63 (else out of range later)
        return HqlLiteral(LiteralKind.BIGINT, value)
    return HqlLiteral(LiteralKind.DECIMAL, Decimal(value))


def negate_literal(const: HqlLiteral) -> HqlLiteral | Opaque:
    value = const.value
    if const.kind not in NUMERIC_KINDS or value is None:
        return Opaque("minus of a non-number")
    assert isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)
    negated = value.copy_negate() if isinstance(value, Decimal) else -value  # no context limits
    kind = const.kind
    if kind is LiteralKind.BIGINT and isinstance(negated, int) and negated == _INT_MIN:
        kind = LiteralKind.INT  # -2147483648 is an int
    return HqlLiteral(kind, negated, None if const.exact is None else const.exact.copy_negate())


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


def hql_date(text: str) -> HqlLiteral:
    return HqlLiteral(LiteralKind.DATE, parse_date(text.strip()))


def hql_timestamp(text: str) -> HqlLiteral:
    return HqlLiteral(LiteralKind.TIMESTAMP, parse_timestamp(text.strip()))


# -- casts of literals (Hive's constant folding) --------------------------------------------------------------

_EXACT_TARGETS = frozenset({"tinyint", "smallint", "int", "integer", "bigint", "decimal", "numeric"})
CAST_FUNCTIONS = {
    "udftobyte": "tinyint", "udftoshort": "smallint", "udftointeger": "int", "udftolong": "bigint",
    "udftofloat": "float", "udftodouble": "double", "udftostring": "string", "udftoboolean": "boolean",
    # a type's name called as a function is that cast, in Hive (FunctionRegistry) and in Spark
    "tinyint": "tinyint", "smallint": "smallint", "int": "int", "bigint": "bigint", "float": "float",
    "double": "double", "string": "string", "boolean": "boolean", "date": "date", "timestamp": "timestamp",
}
_TYPE_PARAMS_RE = re.compile(r"(\w+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")


def fold_cast(value: Value, type_text: str) -> Value:
    """``CAST(<literal> AS type)`` as a literal of that type, as Hive folds it; a cast of anything else (or one
    this module does not model exactly) is opaque. A literal the cast cannot convert is null, as in Hive."""
    if not isinstance(value, HqlLiteral):
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


def _fold(value: HqlLiteral, base: str, p1: int | None, p2: int | None) -> Value:
    kind, v = value.kind, value.value
    if value.exact is not None and base in _EXACT_TARGETS:  # 12.50 to a decimal or an integer: its exact value
        kind, v = LiteralKind.DECIMAL, value.exact
    limits = {"tinyint": (LiteralKind.TINYINT, 7), "smallint": (LiteralKind.SMALLINT, 15),
              "int": (LiteralKind.INT, 31), "integer": (LiteralKind.INT, 31), "bigint": (LiteralKind.BIGINT, 63)}
    opaque = Opaque(f"CAST(... AS {base})")
    if base in limits:
        target, bits = limits[base]
        if v is None:
            return HqlLiteral(target, None)
        number: int
        if kind in INTEGRAL_KINDS or kind is LiteralKind.BOOLEAN:
            assert isinstance(v, int)
            number = int(v)
        elif kind in (LiteralKind.DOUBLE, LiteralKind.FLOAT, LiteralKind.DECIMAL):
            assert isinstance(v, (float, Decimal))
            if _huge(v) or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
                return opaque
            number = int(v)  # truncation toward zero, as Hive's casts
        elif kind is LiteralKind.STRING:
            assert isinstance(v, str)
            if not _JAVA_LONG_RE.fullmatch(v.strip()):
                return HqlLiteral(target, None)
            number = int(v.strip())
        else:
            return opaque
        if not -(2**bits) <= number < 2**bits:
            return opaque  # Hive wraps around; never guess
        return HqlLiteral(target, number)
    if base in ("double", "float"):
        target = LiteralKind.DOUBLE if base == "double" else LiteralKind.FLOAT
        if v is None:
            return HqlLiteral(target, None)
        if kind in NUMERIC_KINDS:
            assert isinstance(v, (int, float, Decimal))
            f = float(v)
        elif kind is LiteralKind.STRING:
            assert isinstance(v, str)
            if not _JAVA_DOUBLE_RE.fullmatch(v.strip()):
                # null in Hive; Spark also reads 'nan', 'inf', '-Infinity' in any case (and Java hex floats)
                return opaque
            f = float(v.strip().rstrip("dDfF"))
        else:
            return opaque
        return HqlLiteral(target, _float32(f) if target is LiteralKind.FLOAT else f)
    if base in ("decimal", "numeric"):
        precision, scale = (p1 or 10), (p2 or 0)
        if v is None:
            return HqlLiteral(LiteralKind.DECIMAL, None)
        if kind in INTEGRAL_KINDS:
            d = Decimal(int(v))  # type: ignore[arg-type]
        elif kind in (LiteralKind.DOUBLE, LiteralKind.FLOAT):
            assert isinstance(v, float)
            d = Decimal(java_double_str(v))
        elif kind is LiteralKind.DECIMAL:
            assert isinstance(v, Decimal)
            d = v
        elif kind is LiteralKind.STRING:
            assert isinstance(v, str)
            d = Decimal(v.strip())
        else:
            return opaque
        if not d.is_finite():
            return HqlLiteral(LiteralKind.DECIMAL, None)
        q = d.quantize(Decimal(1).scaleb(-scale), rounding="ROUND_HALF_UP", context=_WIDE)  # 38 digits and more
        if len(q.as_tuple().digits) > precision and q != 0:
            return HqlLiteral(LiteralKind.DECIMAL, None)  # overflow: null
        return HqlLiteral(LiteralKind.DECIMAL, q)
    if base in ("string", "varchar", "char"):
        if v is None:
            return HqlLiteral(LiteralKind.STRING, None)
        if kind is LiteralKind.STRING:
            assert isinstance(v, str)
            s = v
        elif kind in INTEGRAL_KINDS:
            s = str(v)
        elif kind is LiteralKind.DECIMAL:
            assert isinstance(v, Decimal)
            if _huge(v) or v.as_tuple().exponent < -40:  # type: ignore[operator]
                return opaque
            s = decimal_str(v)
        elif kind is LiteralKind.DATE:
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
        return HqlLiteral(LiteralKind.STRING, s)
    if base == "date":
        if v is None:
            return HqlLiteral(LiteralKind.DATE, None)
        if kind is LiteralKind.DATE:
            return value
        if kind is LiteralKind.TIMESTAMP:
            assert isinstance(v, Timestamp)
            return HqlLiteral(LiteralKind.DATE, v.to_datetime().date())
        if kind is LiteralKind.STRING:
            assert isinstance(v, str)
            try:
                return HqlLiteral(LiteralKind.DATE, parse_timestamp(v.strip()).to_datetime().date())
            except ValueError:
                return HqlLiteral(LiteralKind.DATE, None)
        return opaque
    if base == "timestamp":
        if v is None:
            return HqlLiteral(LiteralKind.TIMESTAMP, None)
        if kind is LiteralKind.TIMESTAMP:
            return value
        if kind is LiteralKind.DATE:
            assert isinstance(v, _dt.date)
            return HqlLiteral(LiteralKind.TIMESTAMP, Timestamp.from_datetime(_dt.datetime(v.year, v.month, v.day)))
        if kind is LiteralKind.STRING:
            assert isinstance(v, str)
            try:
                return HqlLiteral(LiteralKind.TIMESTAMP, parse_timestamp(v.strip()))
            except ValueError:
                return HqlLiteral(LiteralKind.TIMESTAMP, None)
        return opaque
    if base == "boolean":
        if v is None:
            return HqlLiteral(LiteralKind.BOOLEAN, None)
        if kind is LiteralKind.BOOLEAN:
            return value
        return opaque
    return opaque


# -- literal -> column type (Hive's type checker + boxLiteral) ------------------------------------------------

class _Fail(Exception):
    """The literal does not convert to the column's type: the predicate becomes YES_NO_NULL."""


def box_literal(const: HqlLiteral, sarg_type: Type, column_type: ColumnType | None = None) -> Literal | None:
    """The value of ``const`` as a literal of a ``sarg_type`` column (None for null); ValueError when it does
    not convert (see the module's table)."""
    try:
        return _box(const, sarg_type, column_type)
    except _Fail as exc:
        raise ValueError(str(exc) or f"{const.kind.value} literal for a {sarg_type} column") from None


def _box(const: HqlLiteral, sarg_type: Type, column_type: ColumnType | None) -> Literal | None:
    kind, v = const.kind, const.value
    if const.exact is not None and sarg_type in (Type.LONG, Type.DECIMAL):  # 12.50: exactly, never a double
        kind, v = LiteralKind.DECIMAL, const.exact
    if v is None or kind is LiteralKind.NULL:
        return None
    hive = (column_type.hive_type.strip().lower() if column_type is not None else "")
    if sarg_type is Type.LONG:
        if kind in INTEGRAL_KINDS:
            assert isinstance(v, int)
            number = int(v)
        elif kind in (LiteralKind.DECIMAL, LiteralKind.DOUBLE, LiteralKind.FLOAT):
            assert isinstance(v, (Decimal, float))
            if _huge(v) or (isinstance(v, float) and v in (float("inf"), float("-inf"))):
                raise _Fail(f"{v} is out of the LONG range")
            if v != int(v):
                raise _Fail(f"{v} is not an integer")
            number = int(v)
        elif kind is LiteralKind.STRING:
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
        if kind in INTEGRAL_KINDS or kind in (LiteralKind.DOUBLE, LiteralKind.FLOAT):
            assert isinstance(v, (int, float))
            return float(v)
        if kind is LiteralKind.DECIMAL:
            assert isinstance(v, Decimal)
            return _float32(float(v)) if hive == "float" else float(v)
        if kind is LiteralKind.STRING:
            assert isinstance(v, str)
            text = v.strip()
            if not _JAVA_DOUBLE_RE.fullmatch(text):
                raise _Fail(f"{v!r} is not a number")
            return float(text.rstrip("dDfF"))
        raise _Fail()
    if sarg_type is Type.STRING:
        if kind is not LiteralKind.STRING:
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
        if kind is LiteralKind.DATE:
            assert isinstance(v, _dt.date)
            return v
        if kind is LiteralKind.STRING:
            assert isinstance(v, str)
            try:
                return parse_date(v)
            except ValueError:
                raise _Fail(f"{v!r} is not a date") from None
        raise _Fail()
    if sarg_type is Type.TIMESTAMP:
        if kind is LiteralKind.TIMESTAMP:
            assert isinstance(v, Timestamp)
            return v
        if kind is LiteralKind.DATE:
            assert isinstance(v, _dt.date)
            return Timestamp.from_datetime(_dt.datetime(v.year, v.month, v.day))
        if kind is LiteralKind.STRING:
            assert isinstance(v, str)
            try:
                return parse_timestamp(v)
            except ValueError:
                raise _Fail(f"{v!r} is not a timestamp") from None
        raise _Fail()
    if sarg_type is Type.DECIMAL:
        if kind in INTEGRAL_KINDS:
            assert isinstance(v, int)
            d = Decimal(v)
        elif kind is LiteralKind.DECIMAL:
            assert isinstance(v, Decimal)
            d = v
        elif kind in (LiteralKind.DOUBLE, LiteralKind.FLOAT):
            assert isinstance(v, float)
            if v != v or v in (float("inf"), float("-inf")):
                raise _Fail("not a finite number")
            d = Decimal(java_double_str(v))
        elif kind is LiteralKind.STRING:
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
        if kind is LiteralKind.BOOLEAN:
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


INFERRED_TYPES = {  # without a schema, a leaf's type is its literal's
    LiteralKind.TINYINT: Type.LONG, LiteralKind.SMALLINT: Type.LONG, LiteralKind.INT: Type.LONG,
    LiteralKind.BIGINT: Type.LONG, LiteralKind.FLOAT: Type.FLOAT, LiteralKind.DOUBLE: Type.FLOAT,
    LiteralKind.DECIMAL: Type.DECIMAL, LiteralKind.STRING: Type.STRING, LiteralKind.DATE: Type.DATE,
    LiteralKind.TIMESTAMP: Type.TIMESTAMP, LiteralKind.BOOLEAN: Type.BOOLEAN,
}


__all__ = [
    "CAST_FUNCTIONS",
    "INFERRED_TYPES",
    "box_literal",
    "fold_cast",
    "hql_date",
    "hql_timestamp",
    "negate_literal",
    "number_literal",
    "parse_date",
    "parse_timestamp",
    "unescape_sql_string",
]
