"""Pruning: a HudiExpression judged against files' column statistics with Hive's three-valued logic.

The modules, in the order data flows through them:

- :mod:`~hive_bridge.pruning.domains`: a column's comparison domain; a literal as an exact range in it;
- :mod:`~hive_bridge.pruning.plan`: the leaf plan (three formulas per leaf) and Hive's and/or/not;
- :mod:`~hive_bridge.pruning.scalar`: the plan answered for one file, with reasons (explain);
- :mod:`~hive_bridge.pruning.vectorized`: the same plan answered for every file of a statistics table at once;
- :mod:`~hive_bridge.pruning.pruner`: latest file slices judged as listStatus does (partition values, then
  statistics; slices with log files only by partition paths).
- :mod:`~hive_bridge.pruning.partition_pruning`: whole partitions judged by the metadata table's partition
  statistics (a statistics table whose rows are partitions), before their files are looked at;
- :mod:`~hive_bridge.pruning.partition_values`: partitions known only by their values (a metastore's) as a
  statistics table, judged by the same evaluator as files.

The statistics table itself (its columns and their meaning) is defined in :mod:`hive_bridge.stats.contract`.

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
ignore NaN), *may have a number* (float columns: not known to hold only NaN and nulls, i.e. NaN and null counts
known, adding up to the row count, and no bound given; such a part answers "no" to every question about numbers,
so ``x < 5`` is NO or NO_NULL and ``NOT x < 5`` true for its NaN rows), and usable bounds ``min``/``max``
(not null, not NaN, not truncated). Spark's row semantics: NULL is unknown, NaN equals NaN and sorts above every
number (``x > 5`` is true for NaN, ``x = NaN`` only for NaN), -0.0 equals 0.0.

Literal types and column types
------------------------------
A literal is compared in the column's domain without narrowing it: it becomes an exact range of domain values
(a single value in most cases) and the comparisons round outward to the values the column can hold.

- integer columns: LONG and DECIMAL literals exactly; a FLOAT literal by the integers Spark's cast to double
  makes equal to it (:func:`~hive_bridge.pruning.domains.as_double_range`), so ``2.5`` matches none and ``1e18``
  several.
- decimal columns: LONG/DECIMAL literals by value whatever the scale; where Spark 4 rounds a literal with more
  scale than the column (the two need more than 38 digits: ``d = 3.1399`` matches 3.14 in a decimal(38,2)), the
  literal also stands for that rounding, so both Hive's exact reading and Spark's keep their rows; a FLOAT
  literal by the decimals whose double it is (``0.1`` as a double still matches ``Decimal('0.1')``; ``1e9``
  matches 999999999.999999999999999999 in a decimal(38,18)): below them compare below it, above above.
- a LONG or DECIMAL literal that is a double Hive's builder boxed exactly (``Predicate.double``: DOUBLE from
  HiveQL text ``amount = 1e9`` and Spark's ``cast(amount as double)``, EITHER from printed SearchArgument text)
  is judged as that double on integer and decimal columns, or by the hull of both readings (EITHER).
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

The plan a leaf compiles to (:func:`~hive_bridge.pruning.plan.compile_leaf`) is shared with the vectorized evaluator, so the scalar and the
vectorized verdicts agree by construction; the tests check that they do on random inputs.
"""

from hive_bridge.pruning.plan import LeafPlan, as_expression, combine, compile_leaf, plan_leaves
from hive_bridge.pruning.pruner import (
    FileStatus,
    FileVerdict,
    ListStatusResult,
    Pruner,
    partition_value_stats,
)
from hive_bridge.pruning.scalar import LeafVerdict, Verdict, evaluate
from hive_bridge.pruning.vectorized import (
    PruneResult,
    StatsTable,
    TruthColumn,
    evaluate_table,
    kept_paths,
    prune,
)

__all__ = [
    "FileStatus",
    "FileVerdict",
    "LeafPlan",
    "LeafVerdict",
    "ListStatusResult",
    "PruneResult",
    "Pruner",
    "StatsTable",
    "TruthColumn",
    "Verdict",
    "as_expression",
    "combine",
    "compile_leaf",
    "evaluate",
    "evaluate_table",
    "kept_paths",
    "partition_value_stats",
    "plan_leaves",
    "prune",
]
