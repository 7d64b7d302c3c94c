"""The leaf plan: what a leaf asks of one file's statistics, compiled once and interpreted twice.

:func:`compile_leaf` turns a predicate into three :class:`Formula` questions (can a row make it true, false,
null?) over a column's facts; :mod:`hive_bridge.pruning.scalar` answers them for one file and
:mod:`hive_bridge.pruning.vectorized` for every file of a statistics table at once, so the two agree by
construction. :func:`combine` is Hive's and/or/not over a HudiExpression for any three-valued logic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol, TypeVar

import pyarrow as pa

from hive_bridge.filters.expression import (
    And,
    Constant,
    ExpressionError,
    ExpressionVisitor,
    HudiExpression,
    Not,
    Op,
    Or,
    Predicate,
    translate,
    visit,
)
from hive_bridge.pruning.domains import (
    INF,
    Domain,
    DomainKind,
    DomainValue,
    Ext,
    LitRange,
    convert_literal,
    display,
    domain_of,
    prefix_upper,
    zone_of,
)
from hive_bridge.stats.contract import resolve_column
from sarg import SearchArgument, TruthValue, Type

# ---------------------------------------------------------------------------------------------------------
# Formulas: the per-file questions a leaf's verdict is made of. Interpreted by this module (one file) and by
# hive_bridge.pruning.vectorized (all files at once).
# ---------------------------------------------------------------------------------------------------------

MIN_SIDE, MAX_SIDE = "min", "max"
VAR_MAY_VALUE, VAR_MAY_NULL, VAR_MAY_NAN, VAR_MAY_NUMBER = "may_value", "may_null", "may_nan", "may_number"


def _short(value: object) -> str:
    text = repr(value)
    if isinstance(value, str) and len(value) > 40:
        stripped = value.rstrip(" ")
        if len(value) - len(stripped) > 8:
            return f"{stripped!r} + {len(value) - len(stripped)} spaces"
        return repr(value[:40]) + "..."
    return text


def _shown(domain: Domain | None, value: DomainValue) -> str:
    """A bound or literal in explain's text: strings shortened, anything else as the column's type prints it."""
    if domain is None or domain.kind is DomainKind.STRING:
        return _short(value)
    return display(domain, value)


class Formula:
    """Base of the boolean formulas over one column's statistics in one file."""

    def render(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class ConstF(Formula):
    value: bool

    def render(self) -> str:
        return "yes" if self.value else "no"


TRUE, FALSE = ConstF(True), ConstF(False)


@dataclass(frozen=True)
class Var(Formula):
    """``may_value`` (not known all-null), ``may_null``, ``may_nan``, ``may_number`` (a float column: not known to
    hold only NaN and nulls), ``min_ok`` / ``max_ok`` (usable)."""

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
    #: the column's domain, to print the value as the column's type prints it (explain); not part of the
    #: formula's identity
    domain: Domain | None = field(default=None, compare=False)

    def render(self) -> str:
        return f"{self.side} {self.op} {_shown(self.domain, self.value)}"


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
    #: the column's domain, to print the points as the column's type prints them (explain); not part of the
    #: formula's identity
    domain: Domain | None = field(default=None, compare=False)

    def render(self) -> str:
        return f"min = max in [{', '.join(_shown(self.domain, p) for p in self.points)}]"


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
    if isinstance(item, ConstF):
        return ConstF(not item.value)
    if isinstance(item, NotF):
        return item.item
    return NotF(item)


_OK_VAR = {MIN_SIDE: Var("min_ok"), MAX_SIDE: Var("max_ok")}


def _cmp(domain: Domain, side: str, op: str, value: DomainValue | float, unknown: bool) -> Formula:
    """``side op value`` folded to a constant where the domain decides it (infinite or out-of-range values)."""
    decided: bool | None = None
    if domain.kind is DomainKind.INT:
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
    elif domain.kind is DomainKind.FLOAT and isinstance(value, float) and math.isinf(value):
        # nothing is below -inf or above +inf (the vectorized evaluator relies on these being folded)
        if value < 0:
            decided = {"<": False, ">=": True}.get(op)
        else:
            decided = {">": False, "<=": True}.get(op)
    if decided is None:
        return Cmp(side, op, value, unknown, domain)
    if decided == unknown:
        return ConstF(decided)
    ok = _OK_VAR[side]
    return ok if decided else f_not(ok)


def _floor(domain: Domain, x: Ext) -> DomainValue | float:
    """The largest domain value <= x (strings: x itself)."""
    if isinstance(x, str):
        return x
    if isinstance(x, float):
        return x  # +-inf
    if domain.kind is DomainKind.INT:
        return math.floor(x)
    f = _float_near(x)
    if isinstance(f, float) and not math.isinf(f) and Fraction(f) > x:
        f = math.nextafter(f, -INF)
    return f


def _ceil(domain: Domain, x: Ext) -> DomainValue | float:
    """The smallest domain value >= x."""
    if isinstance(x, str):
        return x
    if isinstance(x, float):
        return x
    if domain.kind is DomainKind.INT:
        return math.ceil(x)
    f = _float_near(x)
    if isinstance(f, float) and not math.isinf(f) and Fraction(f) < x:
        f = math.nextafter(f, INF)
    return f


def _float_near(x: Fraction) -> float:
    try:
        return float(x)
    except OverflowError:
        return INF if x > 0 else -INF


class _Builder:
    """Builds the formulas of one leaf over one domain."""

    def __init__(self, domain: Domain) -> None:
        self.d = domain
        float_domain = domain.kind is DomainKind.FLOAT
        self.nan: Formula = Var(VAR_MAY_NAN) if float_domain else FALSE
        # some value that is a number (not NULL, not NaN): every question about numbers asks it first, so a
        # float part known to hold only NaN and nulls answers "no" to them whatever its (absent) bounds say
        self.num: Formula = Var(VAR_MAY_NUMBER) if float_domain else TRUE

    def may_lt(self, r: LitRange, upper: bool = True) -> Formula:
        """Some non-NaN value < x, x = r.high (upper) or r.low."""
        if r.nan:
            return self.num
        return f_and(self.num, _cmp(self.d, MIN_SIDE, "<", self._ceil(r.high if upper else r.low), True))

    def may_le(self, r: LitRange, upper: bool = True) -> Formula:
        if r.nan:
            return self.num
        return f_and(self.num, _cmp(self.d, MIN_SIDE, "<=", self._floor(r.high if upper else r.low), True))

    def may_gt(self, r: LitRange, upper: bool = False) -> Formula:
        if r.nan:
            return FALSE
        return f_and(self.num, _cmp(self.d, MAX_SIDE, ">", self._floor(r.high if upper else r.low), True))

    def may_ge(self, r: LitRange, upper: bool = False) -> Formula:
        if r.nan:
            return FALSE
        return f_and(self.num, _cmp(self.d, MAX_SIDE, ">=", self._ceil(r.high if upper else r.low), True))

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
        return f_and(self.num, _cmp(self.d, MIN_SIDE, "<=", grid[1], True),
                     _cmp(self.d, MAX_SIDE, ">=", grid[0], True))

    def point(self, r: LitRange) -> DomainValue | None:
        """The single domain value an exact literal is (None for ranges, NaN, values the column can't hold)."""
        if not r.exact:
            return None
        grid = self.grid_range(r)
        if grid is None or grid[0] != grid[1]:
            return None
        v = grid[0]
        if isinstance(v, float) and math.isinf(v):
            return v if self.d.kind is DomainKind.FLOAT else None
        if self.d.kind is DomainKind.INT and isinstance(v, int):
            assert self.d.low is not None and self.d.high is not None
            if not self.d.low <= v <= self.d.high:
                return None
        return v

    def ne_possible(self, points: Sequence[DomainValue]) -> Formula:
        """Some non-NaN value differs from all points (exact points only)."""
        if not points:
            return self.num
        return f_and(self.num, f_not(PointIn(tuple(sorted(set(points))), self.d)))


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
    if pred.derived:
        # implied by its conjunction's other leaves: it may be true or false, never NULL (a record key is never
        # null); only a key index narrows it (value masks), never statistics
        return constant_plan(TruthValue.YES_NO, "implied by the filter (only key indexes judge it)", False, pred)
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
    if positive is Op.STARTS_WITH:
        return _starts_with(pred, column, domain, arrow_type)
    if domain.kind is DomainKind.STRING and positive in (Op.LT, Op.LTEQ, Op.BETWEEN):
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
        converted = convert_literal(value, pred.type, domain, session_tz, widen_padding=_widen(pred, positive),
                                    peers=pred.literals if positive is Op.IN else (),
                                    double=pred.double)
        if isinstance(converted, str):
            return constant_plan(TruthValue.YES_NO_NULL, f"{converted} ({arrow_type} column)", True, pred,
                                 column)
        ranges.append(converted)
    # the literals as given, for "every row equals one of them" (<>, NOT IN): a widened literal stands for its
    # paddings, and a file's one value equal to the literal exactly is equal to it under either reading
    exact = ranges if not _widen(pred, positive) else [
        None if v is None else _exact_string(v) for v in pred.literals]
    b = _Builder(domain)
    nan = b.nan
    t: Formula
    f: Formula
    n: Formula
    r: LitRange | None
    if positive in (Op.EQ, Op.NULL_SAFE_EQ):
        r = ranges[0]
        assert r is not None
        exact_r = exact[0]
        p = b.point(exact_r) if exact_r is not None else None
        values_true = b.eq_true(r)
        values_false: Formula
        if r.nan:
            values_false = b.num
        elif p is None and exact_r is not None and exact_r.equal:  # a value outside the range differs
            values_false = f_or(b.may_lt(r, upper=False), b.may_gt(r, upper=True), nan)
        else:
            values_false = f_or(b.ne_possible([p]) if p is not None else b.num, nan)
        t = f_and(mv, values_true)
        if positive is Op.EQ:
            f, n = f_and(mv, values_false), mn
        else:
            f, n = f_or(f_and(mv, values_false), mn), FALSE
    elif positive is Op.LT:
        r = ranges[0]
        assert r is not None
        t = f_and(mv, b.may_lt(r, upper=not r.equal))  # (an equal range: below it is below the literal)
        f = f_and(mv, f_or(b.may_ge(r, upper=False), nan))
        n = mn
    elif positive is Op.LTEQ:
        r = ranges[0]
        assert r is not None
        t = f_and(mv, f_or(b.may_le(r, upper=True), nan if r.nan else FALSE))
        f = f_and(mv, f_or(b.may_gt(r, upper=r.equal), FALSE if r.nan else nan))
        n = mn
    elif positive is Op.BETWEEN:
        lo, hi = ranges
        assert lo is not None and hi is not None
        if lo.nan:
            values_true = f_and(nan, ConstF(hi.nan))
        else:
            grid_ok = TRUE
            if not hi.nan:
                g_lo, g_hi = b._ceil(lo.low), b._floor(hi.high)
                grid_ok = ConstF(bool(g_lo <= g_hi))  # type: ignore[operator]
            values_true = f_or(f_and(grid_ok, b.may_ge(lo, upper=False), b.may_le(hi, upper=True)),
                               f_and(nan, ConstF(hi.nan)))
        values_false = f_or(b.may_lt(lo, upper=not lo.equal), b.may_gt(hi, upper=hi.equal),
                            f_and(nan, ConstF(not hi.nan)))
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
        values_true = f_or(f_and(b.num, _any_in(domain, grids)), f_and(nan, ConstF(any_nan_lit)))
        points = [b.point(r) for r in exact if r is not None and not r.nan]
        exact_points = [p for p in points if p is not None]
        values_false = f_or(b.ne_possible(exact_points), f_and(nan, ConstF(not any_nan_lit)))
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


def _starts_with(pred: Predicate, column: str, domain: Domain, arrow_type: pa.DataType) -> LeafPlan:
    """``col STARTS WITH p``: the values starting with ``p`` are exactly the range [p, prefix_upper(p)) (no upper
    end when there is no upper bound), so a row may match when ``max >= p`` and ``min < upper``, and a row may not
    match when ``min < p`` or ``max >= upper``; an unusable (truncated) bound answers "may". The empty prefix
    matches every non-null string. NULL for a NULL value, as LIKE is."""
    if domain.kind is not DomainKind.STRING:
        return constant_plan(TruthValue.YES_NO_NULL, f"a string prefix on a {arrow_type} column (compared as "
                             "its text, which its statistics do not order)", True, pred, column)
    if pred.char_length is not None:
        return constant_plan(TruthValue.YES_NO_NULL, "a prefix on a char(n) column (padding)", True, pred, column)
    prefix = pred.literal
    converted = convert_literal(prefix, pred.type, domain)
    if isinstance(converted, str) or not isinstance(prefix, str):
        return constant_plan(TruthValue.YES_NO_NULL, f"{converted} ({arrow_type} column)", True, pred, column)
    mv: Formula = Var(VAR_MAY_VALUE)
    t: Formula
    f: Formula
    if not prefix:
        t, f = mv, FALSE
    else:
        upper = prefix_upper(prefix)
        t = f_and(mv, _cmp(domain, MAX_SIDE, ">=", prefix, True),
                  TRUE if upper is None else _cmp(domain, MIN_SIDE, "<", upper, True))
        f = f_and(mv, f_or(_cmp(domain, MIN_SIDE, "<", prefix, True),
                           FALSE if upper is None else _cmp(domain, MAX_SIDE, ">=", upper, True)))
    if pred.op.is_negated:
        t, f = f, t
    return LeafPlan(pred, column, domain, t, f, Var(VAR_MAY_NULL))


def _exact_string(value: object) -> LitRange | None:
    """A STRING literal as exactly itself (None: not a string, so no exact point)."""
    return LitRange(value, value) if isinstance(value, str) else None


def _any_in(domain: Domain, grids: list[tuple[DomainValue, DomainValue]]) -> Formula:
    if not grids:
        return FALSE
    if len(grids) == 1:
        lo, hi = grids[0]
        return f_and(_cmp(domain, MIN_SIDE, "<=", hi, True), _cmp(domain, MAX_SIDE, ">=", lo, True))
    # out-of-range literals of an INT domain can be dropped or clamped without changing the answer
    kept: list[tuple[DomainValue, DomainValue]] = []
    for lo, hi in grids:
        if domain.kind is DomainKind.INT:
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



def plan_leaves(expr: HudiExpression, columns: Mapping[str, pa.DataType], session_tz: str = "UTC"
                ) -> dict[Predicate | Constant, LeafPlan]:
    """Compile every leaf (predicate or constant) of ``expr`` against the statistics columns."""
    zone_of(session_tz)  # fail early on a bad zone name
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


class TruthLogic(Protocol):
    """A three-valued truth that combines as Hive's TruthValue does (TruthValue itself, or a vector of them)."""

    def and_(self: _L, other: _L, /) -> _L: ...

    def or_(self: _L, other: _L, /) -> _L: ...

    def not_(self: _L) -> _L: ...


_L = TypeVar("_L", bound=TruthLogic)


class _Combine(ExpressionVisitor[_L]):
    def __init__(self, leaf_value: Callable[[Predicate | Constant, bool], _L]) -> None:
        self.leaf_value = leaf_value

    def visit_and(self, node: And, results: list[_L]) -> _L:
        value = results[0]
        for other in results[1:]:
            value = value.and_(other)
        return value

    def visit_or(self, node: Or, results: list[_L]) -> _L:
        value = results[0]
        for other in results[1:]:
            value = value.or_(other)
        return value

    def visit_not(self, node: Not, result: _L) -> _L:
        return result.not_()

    def visit_predicate(self, node: Predicate, negated: bool) -> _L:
        return self.leaf_value(node, negated)

    def visit_constant(self, node: Constant, negated: bool) -> _L:
        return self.leaf_value(node, negated)


def combine(expr: HudiExpression, leaf_value: Callable[[Predicate | Constant, bool], _L]) -> _L:
    """Hive's and/or/not over the tree (one :func:`~hive_bridge.filters.expression.visit`); ``leaf_value(leaf,
    negated)`` gives each leaf's truth (a TruthValue for one file, a Triple of arrays for many)."""
    return visit(expr, _Combine(leaf_value))


