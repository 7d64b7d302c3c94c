"""Test support: decimal columns, literals written as text, and which rows a comparison matches, exactly (Hive:
``HiveDecimal`` compares by value) and as Spark 4 compares them (it casts the column and the literal to their wider
decimal type and, where that needs more than 38 digits, keeps the integer digits and rounds the literal half up).

The Spark reading is modelled here from Spark's rules, independently of ``hive_bridge.pruning``; the Spark tests
check the model against real Spark (``test_filter_forms_spark.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, localcontext
from typing import Any

from hypothesis import strategies as st

WIDE = Context(prec=120)  # Decimal arithmetic without rounding (38 digits and more)
OPS = ("=", "<>", "<", "<=", ">", ">=", "<=>", "in", "not in", "between", "not between")


@dataclass(frozen=True)
class Column:
    precision: int
    scale: int

    @property
    def hive_type(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    @property
    def ulp(self) -> Decimal:
        return Decimal(1).scaleb(-self.scale)

    def holds(self, v: Decimal) -> bool:
        with localcontext(WIDE):
            return abs(v) < Decimal(10) ** (self.precision - self.scale) and v == v.quantize(self.ulp)


def spark_type(text: str) -> tuple[int, int]:
    """(integer digits, scale) of a literal's type in Spark SQL: ``5`` an int (decimal(10,0)), a bigint
    (decimal(20,0)) or a decimal of its digits; ``1.50`` decimal(3,2); ``0.05`` decimal(2,2)."""
    body = text.lstrip("-")
    if "." not in body:
        value = int(body)
        return (10 if value < 2**31 else 20 if value < 2**63 else len(body)), 0
    d = Decimal(body)
    _, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    scale = -exponent
    return max(len(digits), scale) - scale, scale


def spark_literal(column: Column, texts: Sequence[str]) -> list[Decimal] | None:
    """The literals' values as Spark compares them with the column (an IN's values typed together); None when
    Spark refuses them (more than 38 digits)."""
    integral, scale = column.precision - column.scale, column.scale
    for text in texts:
        i, s = spark_type(text)
        if i + s > 38:
            return None
        integral, scale = max(integral, i), max(scale, s)
    if integral + scale > 38:
        scale = 38 - integral
    with localcontext(WIDE):
        return [Decimal(t).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP) for t in texts]


def _cmp(v: Decimal | None, op: str, lit: Decimal) -> bool | None:
    if op == "<=>":
        return v is not None and v == lit
    if v is None:
        return None
    return {"=": v == lit, "<>": v != lit, "<": v < lit, "<=": v <= lit, ">": v > lit, ">=": v >= lit}[op]


def _not(x: bool | None) -> bool | None:
    return None if x is None else not x


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def _any(xs: Sequence[bool | None]) -> bool | None:
    if any(x is True for x in xs):
        return True
    return None if any(x is None for x in xs) else False


def truth(op: str, v: Decimal | None, lits: Sequence[Decimal]) -> bool | None:
    """SQL's three-valued truth of ``v op literal(s)`` (``between``: two literals)."""
    if op in ("in", "not in"):
        found = _any([_cmp(v, "=", lit) for lit in lits])
        return _not(found) if op == "not in" else found
    if op in ("between", "not between"):
        inside = _and(_cmp(v, ">=", lits[0]), _cmp(v, "<=", lits[1]))
        return _not(inside) if op == "not between" else inside
    return _cmp(v, op, lits[0])


def spark_truth(column: Column, op: str, v: Decimal | None, texts: Sequence[str]) -> bool | None:
    """The truth as Spark compares (BETWEEN is two comparisons in Spark, each typed on its own; an IN's values
    are typed together); None also where Spark refuses the literal."""
    if op in ("between", "not between"):
        lo, hi = spark_literal(column, texts[:1]), spark_literal(column, texts[1:])
        spark = None if lo is None or hi is None else lo + hi
    else:
        spark = spark_literal(column, texts)
    return None if spark is None else truth(op, v, spark)


def matches(column: Column, op: str, v: Decimal | None, texts: Sequence[str]) -> bool:
    """Whether the row matches under Hive's exact reading or Spark's."""
    return truth(op, v, [Decimal(t) for t in texts]) is True or spark_truth(column, op, v, texts) is True


def hiveql(op: str, column: str, texts: Sequence[str], suffix: str = "") -> str:
    lits = [t + suffix for t in texts]
    if op in ("in", "not in"):
        return f"{column} {op.upper()} ({', '.join(lits)})"
    if op in ("between", "not between"):
        return f"{column} {op.upper()} {lits[0]} AND {lits[1]}"
    return f"{column} {op} {lits[0]}"


def catalyst(op: str, texts: Sequence[str]) -> str:
    """The filter as Spark's Catalyst expressions print it (``d#7``), literals as ``BigDecimal.toString``."""
    lits = [str(Decimal(t)) for t in texts]
    if op in ("in", "not in"):
        inner = f"d#7 IN ({','.join(lits)})"
        return f"[NOT {inner}]" if op == "not in" else f"[{inner}]"
    if op in ("between", "not between"):
        inner = f"((d#7 >= {lits[0]}) AND (d#7 <= {lits[1]}))"
        return f"[NOT {inner}]" if op == "not between" else f"[{inner}]"
    if op == "<>":
        return f"[NOT (d#7 = {lits[0]})]"
    return f"[(d#7 {op} {lits[0]})]"


def v1(op: str, texts: Sequence[str]) -> str:
    """The filter as Spark's V1 ``sources.Filter`` prints it."""
    lits = [str(Decimal(t)) for t in texts]
    name = {"=": "EqualTo", "<=>": "EqualNullSafe", "<": "LessThan", "<=": "LessThanOrEqual", ">": "GreaterThan",
            ">=": "GreaterThanOrEqual"}
    if op in ("in", "not in"):
        inner = f"In(d, [{','.join(sorted(lits))}])"
        return f"[Not({inner})]" if op == "not in" else f"[{inner}]"
    if op in ("between", "not between"):
        inner = f"And(GreaterThanOrEqual(d,{lits[0]}),LessThanOrEqual(d,{lits[1]}))"
        return f"[Not({inner})]" if op == "not between" else f"[{inner}]"
    if op == "<>":
        return f"[Not(EqualTo(d,{lits[0]}))]"
    return f"[{name[op]}(d,{lits[0]})]"


# -- strategies -----------------------------------------------------------------------------------------------

columns = st.integers(1, 38).flatmap(lambda p: st.builds(Column, st.just(p), st.integers(0, p)))


@st.composite
def literal_text(draw: Callable[[st.SearchStrategy[Any]], Any], column: Column, near: Decimal | None = None) -> str:
    """A number as written in SQL: fewer or more fraction digits than the column's scale, negative, huge."""
    if near is not None and draw(st.booleans()):
        return _near(draw, column, near)
    integral = draw(st.integers(0, min(38, column.precision - column.scale + 2)))
    fraction = draw(st.integers(0, min(38, column.scale + 8)))
    digits = draw(st.text("0123456789", min_size=integral + fraction, max_size=integral + fraction))
    head = digits[:integral].lstrip("0") or "0"
    text = head + ("." + digits[integral:] if fraction else "")
    return ("-" if draw(st.booleans()) else "") + text


def _near(draw: Callable[[st.SearchStrategy[Any]], Any], column: Column, near: Decimal) -> str:
    extra = draw(st.integers(0, 6))
    with localcontext(WIDE):
        step = Decimal(1).scaleb(-(column.scale + extra))
        value = near + step * draw(st.integers(-3, 3))
        if draw(st.booleans()):
            value += step * Decimal("0.5")  # a tie for rounding half up
        return format(value, "f")


@st.composite
def values_near(draw: Callable[[st.SearchStrategy[Any]], Any], column: Column,
                texts: Sequence[str]) -> list[Decimal | None]:
    """Column values around the literals (their roundings to the column's scale, a step either side) and
    anywhere in the column's range, or NULL."""
    with localcontext(WIDE):
        return _values(draw, column, texts)


def _values(draw: Callable[[st.SearchStrategy[Any]], Any], column: Column, texts: Sequence[str]) -> list[Decimal | None]:
    out: list[Decimal | None] = []
    top = Decimal(10) ** (column.precision - column.scale) - column.ulp
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 5)) == 0:
            out.append(None)
            continue
        if texts and draw(st.booleans()):
            base = Decimal(draw(st.sampled_from(list(texts))))
            v = base.quantize(column.ulp, rounding=draw(st.sampled_from([ROUND_HALF_UP, "ROUND_FLOOR",
                                                                          "ROUND_CEILING"])))
            v += column.ulp * draw(st.integers(-1, 1))
        else:
            v = column.ulp * draw(st.integers(-(10**column.precision - 1), 10**column.precision - 1))
        if abs(v) <= top:
            out.append(v)
    return out or [None]
