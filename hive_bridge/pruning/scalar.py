"""The per-file interpreter: one file's :class:`~hive_bridge.stats.contract.FileStats` against a
HudiExpression, with Hive's TruthValue logic and a reason for every leaf (the explain path).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hive_bridge.filters.expression import (
    Constant,
    ExpressionError,
    HudiExpression,
    Predicate,
)
from hive_bridge.pruning.domains import (
    Domain,
    DomainKind,
    DomainValue,
    domain_repr,
    to_domain,
)
from hive_bridge.pruning.plan import (
    MIN_SIDE,
    AndF,
    AnyIn,
    Cmp,
    ConstF,
    Formula,
    LeafPlan,
    NotF,
    OrF,
    PointIn,
    Var,
    as_expression,
    combine,
    plan_leaves,
)
from hive_bridge.stats.contract import ColumnStats, FileStats
from sarg import SearchArgument, TruthValue

# ---------------------------------------------------------------------------------------------------------
# Scalar evaluation of one file.
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ColumnFacts:
    """The per-file facts a plan reads, for one column."""

    may_value: bool
    may_null: bool
    may_nan: bool
    may_number: bool
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
        return domain.kind is not DomainKind.STRING
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
    may_number = may_value
    if domain is not None and domain.kind is DomainKind.FLOAT:
        may_nan = may_value and (stats.nan_count is None or stats.nan_count > 0)
        may_number = may_value and not no_number(nc, stats.nan_count, num_rows, stats.min, stats.max)
    info_missing = nc is None or num_rows is None or (may_number and (mn_v is None or mx_v is None))

    def show(v: DomainValue | None, raw: object) -> str:
        if v is not None and domain is not None:
            return domain_repr(domain, v)
        return "unknown" if raw is None else f"{raw!r} (not usable)"

    text = (f"min={show(mn_v, stats.min)}, max={show(mx_v, stats.max)}, "
            f"null_count={'unknown' if nc is None else nc}, num_rows={'unknown' if num_rows is None else num_rows}"
            + (f", nan_count={stats.nan_count}" if stats.nan_count is not None else "")
            + (", NaN possible" if may_nan else "")
            + (", no number (only NaN and nulls)" if may_value and not may_number else ""))
    return ColumnFacts(may_value, may_null, may_nan, may_number, mn_v, mx_v, info_missing, text)


def no_number(null_count: int | None, nan_count: int | None, num_rows: int | None, lo: object, hi: object) -> bool:
    """Whether a float column's statistics prove it holds no number: every row NULL or NaN (its NaN and null
    counts known and adding up to its row count exactly) and no bound present (parquet's min/max ignore NaN; a
    bound beside such counts contradicts them, and contradictory statistics prove nothing). The vectorized
    evaluator mirrors this."""
    if null_count is None or nan_count is None or num_rows is None or null_count + nan_count != num_rows:
        return False
    return all(b is None or (isinstance(b, float) and math.isnan(b)) for b in (lo, hi))


def eval_formula(formula: Formula, facts: ColumnFacts) -> bool:
    """A formula's value for one file."""
    if isinstance(formula, ConstF):
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
    "LeafVerdict",
    "Verdict",
    "column_facts",
    "eval_formula",
    "evaluate",
    "no_number",
]
