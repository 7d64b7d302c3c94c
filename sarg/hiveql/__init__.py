"""HiveQL filter text -> SearchArgument, with the rules of Hive's ``ConvertAstToSearchArg``.

The package, in the order text flows through it:

- ``lexing``: literal text as Hive's lexer types it (``unescape_sql_string``, ``number_literal``,
  ``parse_date`` / ``parse_timestamp``), casts of literals folded (``fold_cast``) and literals boxed to a column's
  type (``box_literal``);
- ``grammar`` (with ``sarg/hiveql.lark``, beside this package): the grammar driver, lark's LALR parser and the
  callbacks that build the parsed expression (``nodes``: Column, HqlLiteral, Opaque, Compare, InList, Between,
  IsNull, HqlLogic, HqlNot);
- ``emitter``: ConvertAstToSearchArg, the parsed expression -> builder calls -> SearchArgument
  (``build_search_argument``, ``parse_hiveql``).

Hive hands storage handlers the filter as readable text too (``hive.io.filter.text``; EXPLAIN prints it as
``filterExpr:``), e.g. ``((event_id = 1L) and (name) IN ('a', 'b'))``. :func:`parse_hiveql` reads that text (and
filters as people write them) with the LALR grammar in ``hiveql.lark`` and makes the same builder calls Hive's
``ConvertAstToSearchArg`` makes for the equivalent expression, so ``build()`` normalizes it the same way:

- ``a = 5`` EQUALS, ``a <> 5`` / ``a != 5`` NOT EQUALS, ``a <=> 5`` / ``a IS NOT DISTINCT FROM 5``
  NULL_SAFE_EQUALS (``a IS DISTINCT FROM 5`` its NOT), ``a < 5`` LESS_THAN,
  ``a <= 5`` LESS_THAN_EQUALS, ``a > 5`` NOT LESS_THAN_EQUALS, ``a >= 5`` NOT LESS_THAN; a constant on the left
  is swapped (``5 < a`` is NOT(a <= 5)); ``a IN (...)`` IN, ``a NOT IN (...)`` NOT(IN); ``a BETWEEN x AND y``
  BETWEEN and ``a NOT BETWEEN x AND y`` NOT(BETWEEN) (the NOT is kept: HIVE-24209); ``a IS NULL`` IS_NULL,
  ``a IS NOT NULL`` NOT(IS_NULL), also as ``isnull(a)`` / ``isnotnull(a)``; a bare boolean column ``b`` is
  ``(EQUALS b true)``; AND, OR, NOT.
- Beyond Hive's forms, read exactly (Hive's builder makes YES_NO_NULL of them): ``a <=> NULL`` is IS_NULL;
  ``b IS TRUE`` / ``b IS FALSE`` are ``b <=> true|false`` and ``IS NOT TRUE`` / ``IS NOT FALSE`` their NOT (NULL
  is not true, so it matches); Spark's ``isnan(x)`` (NaN only, never NULL) is ``x <=> NaN``.
- Anything else becomes the constant YES_NO_NULL: functions (LIKE, arithmetic, CASE, casts of columns), two
  columns or none in a comparison, a column that is not in the schema or whose type has no SARG type, and a
  literal that does not convert to the column's type. Each such part is listed, as written and with why, in
  ``SearchArgument.unknowns`` (not printed).
- Beside Hive's SearchArgument, each top-level conjunct ``col LIKE 'literal'`` on a string column (not
  ``char(n)``) gives a prefix condition (``SearchArgument.prefixes``, :mod:`sarg.prefix`): the pattern's literal
  part before its first wildcard; ``col NOT LIKE 'abc%'`` / ``NOT (col LIKE 'abc%')`` its negation, only for a
  pattern that is exactly a literal and ``%``. They do not print: ``str()`` is Hive's text.

Literal types follow Hive's lexer: ``5`` int, ``5L`` bigint, ``5S`` smallint, ``5Y`` tinyint, ``5.0`` / ``5D``
/ ``1e3`` double (``5.0`` keeps its exact value: Hive 3+ and Spark read it as a decimal, and so does this reader
for decimal and integer columns and casts to them), ``5BD`` decimal, ``'x'`` / ``"x"`` string (backslash escapes
as ``unescapeSQLString``; adjacent strings are joined), ``DATE'2020-01-01'``, ``TIMESTAMP'2020-01-01 10:00:00'`` and, as Hive 2 prints
them, bare ``2020-01-01`` / ``2020-01-01 10:00:00.0``, ``true``/``false``, ``null``. ``CAST(<literal> AS
type)`` and Hive's ``UDFToLong(<literal>)``-style casts are folded into a literal of that type, as Hive's
constant folding does, and so are a type's name called as a function (``double('NaN')``, ``int('7')``).

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
DECIMAL       integers, decimals (exactly), unsuffixed ``12.50`` exactly, doubles (``1.5D``, ``1e3``: their Java
              text, as ``new HiveDecimalWritable(lit.toString())``; the leaf reads DOUBLE, below), strings
              holding a number
BOOLEAN       true / false
============  ==================================================================================================

A double literal boxed to a LONG or DECIMAL (``amount = 1e9`` prints ``(EQUALS amount 1000000000)``, as Hive's
builder boxes it) compares with rows as a double in Spark and Hive, where several values round to it: its leaf
reads ``DoubleReading.DOUBLE`` (``PredicateLeaf.double``; not printed), which pruning judges as the double. A float
literal against a LONG column (Spark compares as floats) is YES_NO_NULL.

Everything else is a failed conversion: that predicate is YES_NO_NULL. Where Hive's own ``boxLiteral`` would give
a leaf that can drop matching rows, we give YES_NO_NULL instead (a non-integral double against an integer
column, which Hive truncates; a number against a string column, which Hive compares as numbers); Hive 2.3's
rounding of a decimal literal to float for a double column (fixed in Hive 3) is not copied.

Without a schema, a leaf's type is the literal's (int/bigint LONG, double FLOAT, ...) and a bare column or
``IS NULL`` on a column with no literal cannot be typed (YES_NO_NULL for the former, STRING for the latter).

Column names: backquoted names may hold any character; a dotted name is looked up whole first (nested struct
fields, as ``sarg.schema`` names them), then without its first part when that part is not a column (a table
alias: ``t.event_id``). Names are matched as ``sarg.schema.find_column`` says: the exact name, else the one
column whose name equals it ignoring case (several such columns: unknown); leaves carry the schema's spelling.

A line copied from EXPLAIN (``filterExpr: ... (type: boolean)``, ``predicate: ...``) is read without its label
and type. Bad text raises :class:`sarg.SargSyntaxError` with line, column, a caret and the expected tokens. Logical
nesting deeper than ``MAX_DEPTH`` (``sarg.errors``, the one limit every reader shares; after merging AND-in-AND,
OR-in-OR and cancelling NOT NOT) is refused with that error too; any depth of parentheses alone is fine. Nothing
recurses on the input's depth.

Whether a text is HiveQL or a printed SearchArgument is ``sarg.detect.looks_like_sarg`` (re-exported here).
"""

from __future__ import annotations

from sarg.detect import looks_like_sarg
from sarg.hiveql.emitter import build_search_argument, parse_hiveql
from sarg.hiveql.grammar import MAX_DEPTH, parse_expression
from sarg.hiveql.lexing import (
    box_literal,
    fold_cast,
    number_literal,
    parse_date,
    parse_timestamp,
    unescape_sql_string,
)
from sarg.hiveql.nodes import (
    Between,
    Column,
    Compare,
    Expr,
    HqlLiteral,
    HqlLiteralValue,
    HqlLogic,
    HqlNot,
    HqlPredicate,
    InList,
    IsNull,
    LiteralKind,
    Opaque,
    Value,
)
from sarg.schema import columns_from_hive

__all__ = [
    "MAX_DEPTH",
    "Between",
    "Column",
    "Compare",
    "Expr",
    "HqlLiteral",
    "HqlLiteralValue",
    "HqlLogic",
    "HqlNot",
    "HqlPredicate",
    "InList",
    "IsNull",
    "LiteralKind",
    "Opaque",
    "Value",
    "box_literal",
    "build_search_argument",
    "columns_from_hive",
    "fold_cast",
    "looks_like_sarg",
    "number_literal",
    "parse_date",
    "parse_expression",
    "parse_hiveql",
    "parse_timestamp",
    "unescape_sql_string",
]
