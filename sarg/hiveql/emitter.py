"""The emitter: a parsed HiveQL expression -> the builder calls Hive's ``ConvertAstToSearchArg`` makes for it, so
``build()`` normalizes it as Hive does (the rules are in ``sarg.hiveql``'s doc). What it cannot push down
becomes YES_NO_NULL. Column names follow ``sarg.schema.find_column`` (exact, else the one case-insensitive
match); a dotted name is looked up whole first, then without a leading table alias.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from sarg.builder import Builder
from sarg.hiveql.grammar import parse_expression
from sarg.hiveql.lexing import INFERRED_TYPES, box_literal
from sarg.hiveql.nodes import (
    Between,
    Column,
    Compare,
    Expr,
    HqlLiteral,
    HqlLogic,
    HqlNot,
    InList,
    IsNull,
    Like,
    LiteralKind,
    Opaque,
)
from sarg.literals import Literal, Timestamp
from sarg.model import DoubleReading, PrefixCondition, SearchArgument, Type, UnknownPart
from sarg.prefix import like_prefix
from sarg.schema import ColumnType, Schema, find_column, resolve_schema
from sarg.truth import TruthValue


@dataclass
class _Emitter:
    builder: Builder
    columns: Mapping[str, ColumnType] | None  # None: no schema, types come from the literals
    notes: list[str] = field(default_factory=list)
    spark_rows: bool = False  # the rows are judged by Spark SQL, not by Hive (see parse_hiveql)
    text: str = ""  # the filter's text, for the unknown parts' own text
    #: the parts that became YES_NO_NULL: (the node, why), in the order met
    unknown: list[tuple[Expr, str]] = field(default_factory=list)
    unknown_columns: dict[str, None] = field(default_factory=dict)  # columns not in the schema, in order of first use

    def box(self, const: HqlLiteral, sarg_type: Type, ctype: ColumnType | None) -> Literal | None:
        """``box_literal``. A double literal against a bigint or decimal column is boxed exactly as Hive's builder
        boxes it (``amount = 1e9`` prints ``(EQUALS amount 1000000000)``), but Spark SQL and Hive's row
        evaluation compare the two as doubles (several values round to it): the leaf reads DOUBLE
        (``PredicateLeaf.double``, see :func:`reading`), so pruning judges the literal by its double. A float literal against a bigint
        column Spark compares as floats: unknown. With ``spark_rows``, Spark's other readings: it compares a
        decimal column with a string literal as doubles too (``'12.5000000000000001'`` equals 12.50) and
        truncates a timestamp literal to microseconds where Hive keeps nanoseconds."""
        if (const.kind is LiteralKind.FLOAT and const.exact is None and sarg_type is Type.LONG):
            raise ValueError("a float literal against a LONG column compares as a float")
        if self.spark_rows and const.kind is LiteralKind.STRING and sarg_type is Type.DECIMAL:
            raise ValueError("a string literal against a decimal column compares as a double in Spark SQL")
        value = box_literal(const, sarg_type, ctype)
        if self.spark_rows and isinstance(value, Timestamp) and value.nanos % 1000:
            raise ValueError(f"{value}: Spark SQL truncates a timestamp literal to microseconds")
        return value

    def maybe(self, why: str, node: Expr) -> None:
        self.notes.append(why)
        self.unknown.append((node, why))
        self.builder.literal(TruthValue.YES_NO_NULL)

    def unknown_parts(self, exact_prefixes: set[int]) -> tuple[UnknownPart, ...]:
        """The parts that became YES_NO_NULL, as written (a ``LIKE`` that is exactly its prefix condition, which
        prunes, left out)."""
        out: dict[UnknownPart, None] = {}
        for node, why in self.unknown:
            if id(node) in exact_prefixes:
                continue
            span = getattr(node, "span", None)
            text = " ".join(self.text[span[0]:span[1]].split()) if span and self.text else _shown(node)
            out.setdefault(UnknownPart(text, why), None)
        return tuple(out)

    def resolve(self, column: Column) -> tuple[str, ColumnType | None]:
        """(leaf column name, its type) — type None when unknown (or when there is no schema)."""
        if self.columns is None:
            return column.name, None
        found = find_column(self.columns, column.name)
        if found is None and len(column.parts) > 1 and find_column(self.columns, column.parts[0]) is None:
            found = find_column(self.columns, ".".join(column.parts[1:]))  # a table alias in front
        if found is None:
            if find_column(self.columns, column.parts[0]) is None:  # not a field of a column either
                self.unknown_columns.setdefault(column.name, None)
            return column.name, None
        return found

    def emit(self, node: Expr) -> None:
        b = self.builder
        if isinstance(node, HqlLogic):
            b.start_and() if node.op == "and" else b.start_or()
            for kid in node.children:
                self.emit(kid)
            b.end()
        elif isinstance(node, HqlNot):
            b.start_not()
            self.emit(node.child)
            b.end()
        elif isinstance(node, Column):
            name, ctype = self.resolve(node)
            if ctype is not None and ctype.sarg_type is Type.BOOLEAN and _is_plain_boolean(ctype):
                b.equals(name, Type.BOOLEAN, True)
            else:
                self.maybe(f"column {node.name} is not a boolean column", node)
        elif isinstance(node, (HqlLiteral, Opaque)):
            self.maybe("not a predicate on a column", node)
        elif isinstance(node, Compare):
            self.compare(node)
        elif isinstance(node, InList):
            self.wrap_not(node.negated, lambda: self.in_list(node))
        elif isinstance(node, Between):
            self.wrap_not(node.negated, lambda: self.between(node))
        elif isinstance(node, Like):
            self.maybe(f"{node.op.upper()} has no SearchArgument leaf", node)
        else:
            self.wrap_not(node.negated, lambda: self.is_null(node))

    def wrap_not(self, negated: bool, body: Callable[[], None]) -> None:
        if negated:
            self.builder.start_not()
        body()
        if negated:
            self.builder.end()

    def _column_type(self, name: str, ctype: ColumnType | None, consts: Sequence[HqlLiteral]) -> Type | None:
        if self.columns is not None:
            return ctype.sarg_type if ctype is not None else None
        for const in consts:
            if const.kind in INFERRED_TYPES:
                return INFERRED_TYPES[const.kind]
        return None

    def compare(self, node: Compare) -> None:
        op = node.op
        if op == "<>":
            self.wrap_not(True, lambda: self.compare(Compare("=", node.left, node.right, node.span)))
            return
        if op == ">":
            self.wrap_not(True, lambda: self.compare(Compare("<=", node.left, node.right, node.span)))
            return
        if op == ">=":
            self.wrap_not(True, lambda: self.compare(Compare("<", node.left, node.right, node.span)))
            return
        sides = (node.left, node.right)
        columns = [i for i, side in enumerate(sides) if isinstance(side, Column)]
        if len(columns) != 1:
            self.maybe("a comparison needs exactly one column", node)
            return
        variable = columns[0]
        column = sides[variable]
        other = sides[1 - variable]
        assert isinstance(column, Column)
        name, ctype = self.resolve(column)
        consts = [other] if isinstance(other, HqlLiteral) else []
        sarg_type = self._column_type(name, ctype, consts)
        if sarg_type is None:
            self.maybe(f"column {column.name} has no SARG type", node)
            return
        if op == "<=>" and isinstance(other, HqlLiteral) and other.kind is LiteralKind.NULL:
            self.builder.is_null(name, sarg_type)  # a <=> NULL is exactly a IS NULL (Hive's builder: YES_NO_NULL)
            return
        swap = variable != 0 and op in ("<", "<=")
        if swap:  # 5 < a is NOT (a <= 5); 5 <= a is NOT (a < 5)
            op = "<=" if op == "<" else "<"
            self.builder.start_not()
        try:
            value = self.box(other, sarg_type, ctype) if isinstance(other, HqlLiteral) else None
        except ValueError as exc:
            self.maybe(str(exc), node)
        else:
            method = {"=": self.builder.equals, "<=>": self.builder.null_safe_equals,
                      "<": self.builder.less_than, "<=": self.builder.less_than_equals}[op]
            if value is None:
                self.notes.append("no literal to compare with")
                self.unknown.append((node, "no literal to compare with (NULL or not a literal)"))
            method(name, sarg_type, value, double=reading([other], sarg_type))
        if swap:
            self.builder.end()

    def in_list(self, node: InList) -> None:
        if not isinstance(node.value, Column):
            self.maybe("IN needs a column on its left", node)
            return
        name, ctype = self.resolve(node.value)
        consts = [item for item in node.items if isinstance(item, HqlLiteral)]
        sarg_type = self._column_type(name, ctype, consts)
        if sarg_type is None:
            self.maybe(f"column {node.value.name} has no SARG type", node)
            return
        if len(consts) != len(node.items):
            self.maybe("IN with a value that is not a literal", node)
            return
        try:
            values = [self.box(c, sarg_type, ctype) for c in consts]
        except ValueError as exc:
            self.maybe(str(exc), node)
            return
        self.builder.in_(name, sarg_type, *values, double=reading(consts, sarg_type))

    def between(self, node: Between) -> None:
        if not isinstance(node.value, Column):
            self.maybe("BETWEEN needs a column on its left", node)
            return
        name, ctype = self.resolve(node.value)
        consts = [v for v in (node.low, node.high) if isinstance(v, HqlLiteral)]
        sarg_type = self._column_type(name, ctype, consts)
        if sarg_type is None:
            self.maybe(f"column {node.value.name} has no SARG type", node)
            return
        try:
            low = self.box(node.low, sarg_type, ctype) if isinstance(node.low, HqlLiteral) else None
            high = self.box(node.high, sarg_type, ctype) if isinstance(node.high, HqlLiteral) else None
        except ValueError as exc:
            self.maybe(str(exc), node)
            return
        if low is None or high is None:
            self.unknown.append((node, "a NULL or non-literal bound"))
        self.builder.between(name, sarg_type, low, high,
                             double=reading(consts, sarg_type))

    def prefixes(self, expr: Expr, exact: set[int] | None = None) -> tuple[PrefixCondition, ...]:
        """The prefix each top-level conjunct ``col [NOT] LIKE 'literal'`` implies (:mod:`sarg.prefix`), on a
        string column (any column without a schema; never ``char(n)``, whose values are padded). ``exact``
        collects the ``id`` of each LIKE whose pattern is exactly its prefix (a literal and ``%``)."""
        conjuncts = list(expr.children) if isinstance(expr, HqlLogic) and expr.op == "and" else [expr]
        out: dict[PrefixCondition, None] = {}
        for node in conjuncts:
            negated = False
            if isinstance(node, HqlNot):
                node, negated = node.child, True
            if not (isinstance(node, Like) and node.op == "like" and isinstance(node.value, Column)
                    and isinstance(node.pattern, HqlLiteral) and node.pattern.kind is LiteralKind.STRING
                    and isinstance(node.pattern.value, str)):
                continue
            name, ctype = self.resolve(node.value)
            if self.columns is not None and (ctype is None or ctype.sarg_type is not Type.STRING
                                             or ctype.char_length is not None):
                continue
            prefix, is_exact = like_prefix(node.pattern.value)
            negated = negated != node.negated
            if negated and not is_exact:  # NOT LIKE 'a_c%' does not imply NOT starting with 'a'
                continue
            out.setdefault(PrefixCondition(name, prefix, negated), None)
            if is_exact and exact is not None:
                exact.add(id(node))
        return tuple(out)

    def is_null(self, node: IsNull) -> None:
        if not isinstance(node.value, Column):
            self.maybe("IS NULL needs a column", node)
            return
        name, ctype = self.resolve(node.value)
        sarg_type = ctype.sarg_type if ctype is not None else (Type.STRING if self.columns is None else None)
        if sarg_type is None:
            self.maybe(f"column {node.value.name} has no SARG type", node)
            return
        self.builder.is_null(name, sarg_type)


def reading(consts: Sequence[Expr], sarg_type: Type) -> DoubleReading:
    """How a leaf's literals boxed to ``sarg_type`` compare with rows: DOUBLE where all are doubles (or floats)
    Hive's builder boxes to an exact LONG or DECIMAL while rows compare them as doubles (``1e9``, ``1.5D``; never
    ``1.50``, which Hive 3+ and Spark read as an exact decimal); EITHER where only some are (a BETWEEN or IN
    mixing them); else NONE."""
    if sarg_type not in (Type.LONG, Type.DECIMAL):
        return DoubleReading.NONE
    doubles = [isinstance(c, HqlLiteral) and c.kind in (LiteralKind.DOUBLE, LiteralKind.FLOAT) and c.exact is None
               for c in consts]
    if not any(doubles):
        return DoubleReading.NONE
    return DoubleReading.DOUBLE if all(doubles) else DoubleReading.EITHER


def _is_plain_boolean(ctype: ColumnType) -> bool:
    """Hive tests ``getTypeString().equals("boolean")``; SARG type names count too."""
    return ctype.hive_type.strip().lower() in ("boolean", "bool")


def build_search_argument(expr: Expr, schema: Schema = None, *, spark_rows: bool = False,
                          text: str = "") -> SearchArgument:
    """The SearchArgument Hive builds for a parsed expression (see :func:`parse_hiveql` for ``spark_rows``);
    ``text``: the text it was parsed from (the unknown parts are listed as written)."""
    columns = resolve_schema(schema) if schema is not None else None
    emitter = _Emitter(Builder(), columns, spark_rows=spark_rows, text=text)
    emitter.emit(expr)
    built = emitter.builder.build()
    exact: set[int] = set()
    prefixes = emitter.prefixes(expr, exact)
    return replace(built, prefixes=prefixes, unknowns=emitter.unknown_parts(exact),
                   unknown_columns=tuple(emitter.unknown_columns))


def _shown(node: Expr) -> str:
    """A node's short form where its text is not known."""
    if isinstance(node, Column):
        return node.name
    if isinstance(node, Opaque):
        return node.what
    if isinstance(node, HqlLiteral):
        return str(node.value)
    return type(node).__name__


def parse_hiveql(text: str, schema: Schema = None, *, spark_rows: bool = False) -> SearchArgument:
    """Read HiveQL filter text (``hive.io.filter.text``, EXPLAIN's ``filterExpr:``) into the SearchArgument
    Hive's ``ConvertAstToSearchArg`` builds for it. ``schema``: a mapping column -> Hive type, or a Hive
    struct type string (``struct<a:int,b:string>``); without one, literals give the types.

    A double literal against a bigint or decimal column is boxed exactly, as Hive's builder does (``big =
    9007199254740992D`` prints the LONG 9007199254740992), while Spark and Hive compare the rows as doubles
    (9007199254740993 matches too): such leaves read DOUBLE (``PredicateLeaf.double``, not printed) and pruning
    judges them as doubles.

    ``spark_rows=True``: the same text will be applied to rows by Spark SQL (a Hive-on-Spark read), so a leaf
    Hive would box in a way Spark does not compare is left unknown (YES_NO_NULL) instead: a string literal
    against a decimal column (Spark compares as doubles), a timestamp literal with nanoseconds."""
    return build_search_argument(parse_expression(text), schema, spark_rows=spark_rows, text=text)


__all__ = ["build_search_argument", "parse_hiveql"]
