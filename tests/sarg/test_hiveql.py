"""sarg.hiveql: HiveQL filter text -> SearchArgument with ConvertAstToSearchArg's rules (no JVM needed here;
test_hiveql_oracle.py compares with Hive's and Spark's own code)."""

from __future__ import annotations

import datetime as dt
import random
import string
from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sarg import DoubleReading, Operator, SargSyntaxError, Timestamp, Type
from sarg.hiveql import (
    MAX_DEPTH,
    HqlLiteral,
    LiteralKind,
    box_literal,
    columns_from_hive,
    fold_cast,
    looks_like_sarg,
    number_literal,
    parse_expression,
    parse_hiveql,
    unescape_sql_string,
)
from tests.sarg.hiveql_oracle import gen

SCHEMA = {"event_id": "bigint", "i": "int", "name": "string", "d": "double", "f": "float", "dt": "date",
          "ts": "timestamp", "dec": "decimal(10,2)", "b": "boolean", "c": "char(5)", "vc": "varchar(10)",
          "bin": "binary", "Mixed_Case": "int", "weird col": "string", "a.b": "int"}


def sarg_text(text: str, schema: object = SCHEMA) -> str:
    return str(parse_hiveql(text, schema))  # type: ignore[arg-type]


RULES = [
    ("((event_id = 1) and (name) IN ('a', 'b'))", "(and leaf-(EQUALS event_id 1) leaf-(IN name a b))"),
    ("i = 5", "leaf-(EQUALS i 5)"),
    ("i == 5", "leaf-(EQUALS i 5)"),
    ("i <> 5", "(not leaf-(EQUALS i 5))"),
    ("i != 5", "(not leaf-(EQUALS i 5))"),
    ("i <=> 5", "leaf-(NULL_SAFE_EQUALS i 5)"),
    ("i < 5", "leaf-(LESS_THAN i 5)"),
    ("i <= 5", "leaf-(LESS_THAN_EQUALS i 5)"),
    ("i > 5", "(not leaf-(LESS_THAN_EQUALS i 5))"),
    ("i >= 5", "(not leaf-(LESS_THAN i 5))"),
    # a constant on the left is swapped
    ("5 < i", "(not leaf-(LESS_THAN_EQUALS i 5))"),
    ("5 <= i", "(not leaf-(LESS_THAN i 5))"),
    ("5 > i", "leaf-(LESS_THAN i 5)"),
    ("5 >= i", "leaf-(LESS_THAN_EQUALS i 5)"),
    ("5 = i", "leaf-(EQUALS i 5)"),
    ("5 <> i", "(not leaf-(EQUALS i 5))"),
    ("i IN (1, 2, 3)", "leaf-(IN i 1 2 3)"),
    ("(i) IN (1)", "leaf-(IN i 1)"),
    ("i NOT IN (1, 2)", "(not leaf-(IN i 1 2))"),
    ("not i in (1, 2)", "(not leaf-(IN i 1 2))"),
    ("i BETWEEN 1 AND 5", "leaf-(BETWEEN i 1 5)"),
    ("i NOT BETWEEN 1 AND 5", "(not leaf-(BETWEEN i 1 5))"),
    ("i is null", "leaf-(IS_NULL i)"),
    ("i IS NOT NULL", "(not leaf-(IS_NULL i))"),
    ("b", "leaf-(EQUALS b true)"),
    ("not b", "(not leaf-(EQUALS b true))"),
    ("!b", "(not leaf-(EQUALS b true))"),
    ("b = false", "leaf-(EQUALS b false)"),
    ("i", "YES_NO_NULL"),  # a bare non-boolean column
    ("not not (i = 1)", "leaf-(EQUALS i 1)"),
    ("not (i = 1 and d = 2)", "(or (not leaf-(EQUALS i 1)) (not leaf-(EQUALS d 2.0)))"),
    ("i = 1 or i = 2 and d = 3",
     "(and (or leaf-(EQUALS i 1) leaf-(EQUALS i 2)) (or leaf-(EQUALS i 1) leaf-(EQUALS d 3.0)))"),
    ("i BETWEEN 1 AND 5 AND d > 0", "(and leaf-(BETWEEN i 1 5) (not leaf-(LESS_THAN_EQUALS d 0.0)))"),
    ("i = 1 AND i = 1", "(and leaf-(EQUALS i 1) leaf-(EQUALS i 1))"),
    # everything else is YES_NO_NULL, which the builder then drops from AND and lets swallow OR
    ("upper(name) = 'A'", "YES_NO_NULL"),
    ("i = d", "YES_NO_NULL"),
    ("1 = 1", "YES_NO_NULL"),
    ("i + 1 = 5", "YES_NO_NULL"),
    ("name LIKE 'a%'", "YES_NO_NULL"),
    ("name not rlike 'a.*'", "YES_NO_NULL"),
    ("CASE WHEN i = 1 THEN true ELSE false END", "YES_NO_NULL"),
    ("CAST(i AS bigint) = 5", "YES_NO_NULL"),
    ("bin = 'x'", "YES_NO_NULL"),
    ("nosuch = 1", "YES_NO_NULL"),
    ("i = null", "YES_NO_NULL"),
    ("i <=> null", "leaf-(IS_NULL i)"),  # exactly IS NULL (Hive's builder: YES_NO_NULL, test_hiveql_oracle)
    ("i BETWEEN null AND 5", "YES_NO_NULL"),
    ("i IN (1, i)", "YES_NO_NULL"),
    ("5 IN (i, 1)", "YES_NO_NULL"),
    ("i = 1 and upper(name) = 'A'", "leaf-(EQUALS i 1)"),
    ("i = 1 or upper(name) = 'A'", "YES_NO_NULL"),
    ("not (i = 1 or upper(name) = 'A')", "(not leaf-(EQUALS i 1))"),
    ("i > 1.5", "YES_NO_NULL"),  # Hive would truncate 1.5 to 1 (unsafe); a cast of the column in Hive's plan
    ("(i = 1) = true", "YES_NO_NULL"),
    ("i is true", "YES_NO_NULL"),  # i is no boolean: true does not convert
    ("b is true", "leaf-(NULL_SAFE_EQUALS b true)"),  # exactly b <=> true: never NULL
    ("b is not true", "(not leaf-(NULL_SAFE_EQUALS b true))"),  # NULL is not true
    ("b IS FALSE", "leaf-(NULL_SAFE_EQUALS b false)"),
    ("b IS NOT FALSE", "(not leaf-(NULL_SAFE_EQUALS b false))"),
    ("b <=> false", "leaf-(NULL_SAFE_EQUALS b false)"),
    ("isnull(i)", "leaf-(IS_NULL i)"),
    ("isnotnull(i)", "(not leaf-(IS_NULL i))"),
    ("isnan(d)", "leaf-(NULL_SAFE_EQUALS d NaN)"),  # Spark's isnan: NaN only, never NULL
    ("not isnan(d)", "(not leaf-(NULL_SAFE_EQUALS d NaN))"),
    ("isnan(d + 1)", "YES_NO_NULL"),
    ("d = double('NaN')", "leaf-(EQUALS d NaN)"),
    ("d = cast('NaN' as double)", "leaf-(EQUALS d NaN)"),
    ("d <=> double('nan')", "YES_NO_NULL"),  # Hive: NULL; Spark: NaN: never guessed
    ("i = int('7')", "leaf-(EQUALS i 7)"),
    ("i IN (1, null)", "leaf-(IN i 1 null)"),
    ("arr[0] = 1", "YES_NO_NULL"),
    ("const struct(1, 'a') = s", "YES_NO_NULL"),
    ("count(*) > 1 or f(distinct i) = 2", "YES_NO_NULL"),
]


@pytest.mark.parametrize(("text", "expected"), RULES)
def test_convert_ast_to_search_arg_rules(text: str, expected: str) -> None:
    assert sarg_text(text) == expected


LITERALS = [
    # numbers: Hive's suffixes, exponents, negatives; an int literal for a double column is 5.0
    ("event_id = 5L", "leaf-(EQUALS event_id 5)"),
    ("event_id = 5l", "leaf-(EQUALS event_id 5)"),
    ("i = 5S", "leaf-(EQUALS i 5)"),
    ("i = 5Y", "leaf-(EQUALS i 5)"),
    ("i = -5", "leaf-(EQUALS i -5)"),
    ("i = - 5", "leaf-(EQUALS i -5)"),
    ("i = +5", "leaf-(EQUALS i 5)"),
    ("i = 5.0", "leaf-(EQUALS i 5)"),
    ("i = 5BD", "leaf-(EQUALS i 5)"),
    ("i = 5.5BD", "YES_NO_NULL"),
    ("event_id = 9223372036854775807L", "leaf-(EQUALS event_id 9223372036854775807)"),
    ("event_id = -9223372036854775808L", "leaf-(EQUALS event_id -9223372036854775808)"),
    ("event_id = 9223372036854775808", "YES_NO_NULL"),
    ("d = 5", "leaf-(EQUALS d 5.0)"),
    ("d = 5D", "leaf-(EQUALS d 5.0)"),
    ("d = 1e-4", "leaf-(EQUALS d 1.0E-4)"),
    ("d = 1.5E7D", "leaf-(EQUALS d 1.5E7)"),
    ("d = .5", "leaf-(EQUALS d 0.5)"),
    ("d = -0.0", "leaf-(EQUALS d -0.0)"),
    ("d = 0.1BD", "leaf-(EQUALS d 0.1)"),
    ("f = 0.1BD", "leaf-(EQUALS f 0.10000000149011612)"),  # HiveDecimal.floatValue for a float column
    ("f = 0.1", "leaf-(EQUALS f 0.1)"),
    ("d = '2.5'", "leaf-(EQUALS d 2.5)"),
    ("d = 'x'", "YES_NO_NULL"),
    ("i = '7'", "leaf-(EQUALS i 7)"),
    ("i = 'seven'", "YES_NO_NULL"),
    ("dec = 12.50", "leaf-(EQUALS dec 12.5)"),
    ("dec = 12.50BD", "leaf-(EQUALS dec 12.5)"),
    ("dec = 3", "leaf-(EQUALS dec 3)"),
    ("dec = '1.25'", "leaf-(EQUALS dec 1.25)"),
    ("dec = 1e-7", "leaf-(EQUALS dec 0.0000001)"),
    ("dec = 'abc'", "YES_NO_NULL"),
    ("dec = true", "YES_NO_NULL"),
    # strings: both quotes, Hive's backslash escapes, adjacent literals joined; a number is not a string
    ("name = 'abc'", "leaf-(EQUALS name abc)"),
    ('name = "abc"', "leaf-(EQUALS name abc)"),
    ("name = 'it\\'s'", "leaf-(EQUALS name it's)"),
    ("name = 'a' 'b'", "leaf-(EQUALS name ab)"),
    ("name = 'tab\\there'", "leaf-(EQUALS name tab\there)"),
    ("name = ''", "leaf-(EQUALS name )"),
    ("name = 'a (b), c'", "leaf-(EQUALS name a (b), c)"),
    ("name = '日本'", "leaf-(EQUALS name 日本)"),
    ("name = 'null'", "leaf-(EQUALS name null)"),
    ("name = 5", "YES_NO_NULL"),
    ("name = DATE'2020-01-01'", "YES_NO_NULL"),
    ("c = 'ab'", "leaf-(EQUALS c ab   )"),  # HiveChar.getPaddedValue
    ("c = 'ab   '", "leaf-(EQUALS c ab   )"),
    ("c = 'abcdefg'", "YES_NO_NULL"),
    ("vc = 'abc'", "leaf-(EQUALS vc abc)"),
    # dates and timestamps: typed literals, strings, Hive 2's bare printed forms, casts
    ("dt = DATE'2020-01-02'", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = date '2020-01-02'", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = '2020-01-02'", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = '2020-1-2'", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = 2020-01-02", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = '2020-02-30'", "YES_NO_NULL"),
    ("dt = 'soon'", "YES_NO_NULL"),
    ("dt = TIMESTAMP'2020-01-02 00:00:00'", "YES_NO_NULL"),
    ("dt = CAST('2020-01-02' AS DATE)", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = CAST( '2020-01-02' AS DATE)", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = CAST('2020-01-02 10:00:00' AS DATE)", "leaf-(EQUALS dt 2020-01-02)"),
    ("dt = CAST('garbage' AS DATE)", "YES_NO_NULL"),
    ("ts = TIMESTAMP'2020-01-02 03:04:05'", "leaf-(EQUALS ts 2020-01-02 03:04:05.0)"),
    ("ts = TIMESTAMP'2020-01-02 03:04:05.123456789'", "leaf-(EQUALS ts 2020-01-02 03:04:05.123456789)"),
    ("ts = 2020-01-02 03:04:05.5", "leaf-(EQUALS ts 2020-01-02 03:04:05.5)"),
    ("ts = '2020-01-02 03:04:05.1'", "leaf-(EQUALS ts 2020-01-02 03:04:05.1)"),
    ("ts = '2020-01-02'", "leaf-(EQUALS ts 2020-01-02 00:00:00.0)"),
    ("ts = DATE'2020-01-02'", "leaf-(EQUALS ts 2020-01-02 00:00:00.0)"),
    ("ts = CAST('2020-01-02 03:04:05' AS TIMESTAMP)", "leaf-(EQUALS ts 2020-01-02 03:04:05.0)"),
    ("ts = 5", "YES_NO_NULL"),
    # booleans and casts of literals
    ("b = TRUE", "leaf-(EQUALS b true)"),
    ("b = 'true'", "YES_NO_NULL"),
    ("b = 1", "YES_NO_NULL"),
    ("event_id = UDFToLong(5)", "leaf-(EQUALS event_id 5)"),
    ("event_id = UDFToLong(5.7)", "leaf-(EQUALS event_id 5)"),
    ("event_id = udftolong('12')", "leaf-(EQUALS event_id 12)"),
    ("d = UDFToDouble(3)", "leaf-(EQUALS d 3.0)"),
    ("f = UDFToFloat(0.1)", "leaf-(EQUALS f 0.10000000149011612)"),
    ("dec = CAST(1.255 AS decimal(10,2))", "leaf-(EQUALS dec 1.26)"),
    ("dec = CAST(123456.7 AS decimal(4,1))", "YES_NO_NULL"),
    ("name = CAST(5 AS string)", "leaf-(EQUALS name 5)"),
    ("name = UDFToString(5)", "leaf-(EQUALS name 5)"),
    ("i = CAST(300 AS tinyint)", "YES_NO_NULL"),  # Hive wraps around: never guess
    ("i = CAST(null AS int)", "YES_NO_NULL"),
    ("i IN (1, CAST(2 AS int), 3L)", "leaf-(IN i 1 2 3)"),
    # magnitudes nothing can hold are refused at once (never a billion-digit number)
    ("i = 1e999999999BD", "YES_NO_NULL"),
    ("dec = 1e999999999BD", "YES_NO_NULL"),
    ("dec = 1e-50BD", "YES_NO_NULL"),
    ("dec = 1e37BD", "leaf-(EQUALS dec 10000000000000000000000000000000000000)"),
    ("name = CAST(1e999999999BD AS string)", "YES_NO_NULL"),
    ("i = CAST(1e999999999BD AS bigint)", "YES_NO_NULL"),
    ("dec = CAST(1e999999999BD AS decimal(10,2))", "YES_NO_NULL"),
    ("d = 1e999999999BD", "leaf-(EQUALS d Infinity)"),
    ("d = -1e999999999BD", "leaf-(EQUALS d -Infinity)"),
    ("i = -1e999999999BD", "YES_NO_NULL"),
    ("i = 1e300", "YES_NO_NULL"),
]


@pytest.mark.parametrize(("text", "expected"), LITERALS)
def test_literals_convert_as_hive_does(text: str, expected: str) -> None:
    assert sarg_text(text) == expected


def test_literal_types_in_leaves() -> None:
    s = parse_hiveql("i = 1 and d = 1 and name = 'x' and dt = '2020-01-01' and dec = 1.5 and b and "
                     "ts = TIMESTAMP'2020-01-01 00:00:00.000000001'", SCHEMA)
    by_column = {leaf.column: leaf for leaf in s.leaves}
    assert by_column["i"].type is Type.LONG and by_column["i"].literal == 1
    assert by_column["d"].type is Type.FLOAT and by_column["d"].literal == 1.0
    assert isinstance(by_column["d"].literal, float)
    assert by_column["name"].type is Type.STRING
    assert by_column["dt"].literal == dt.date(2020, 1, 1)
    assert by_column["dec"].literal == Decimal("1.5")
    assert by_column["b"].literal is True and by_column["b"].type is Type.BOOLEAN
    assert by_column["ts"].literal == Timestamp.parse("2020-01-01 00:00:00.000000001")


NAMES = [
    ("`name` = 'x'", "leaf-(EQUALS name x)"),
    ("`weird col` = 'x'", "leaf-(EQUALS weird col x)"),
    ("`a.b` = 1", "leaf-(EQUALS a.b 1)"),
    ("t.i = 1", "leaf-(EQUALS i 1)"),  # a table alias
    ("db.t.i = 1", "YES_NO_NULL"),
    ("I = 1", "leaf-(EQUALS i 1)"),  # Hive's names ignore case; the schema's spelling is kept
    ("mixed_case = 1", "leaf-(EQUALS Mixed_Case 1)"),
    ("`x``y` = 1", "YES_NO_NULL"),
    ("order_id = 1 and android = 2", "YES_NO_NULL"),  # names that start with keywords are names
    ("date = 1", "YES_NO_NULL"),
]


@pytest.mark.parametrize(("text", "expected"), NAMES)
def test_column_names(text: str, expected: str) -> None:
    assert sarg_text(text) == expected


def test_nested_struct_fields_from_a_struct_schema() -> None:
    schema = "struct<id:bigint,s1:struct<count:smallint,label:char(3)>,`x y`:string>"
    assert sarg_text("s1.count > 2 and s1.label = 'a' and `x y` = 'q'", schema) == (
        "(and (not leaf-(LESS_THAN_EQUALS s1.count 2)) leaf-(EQUALS s1.label a  ) leaf-(EQUALS x y q))")
    assert sarg_text("s1 = 1", schema) == "YES_NO_NULL"  # a struct has no SARG type


def test_schema_forms() -> None:
    columns = columns_from_hive("event_id,name,amount,tags", "bigint:string:decimal(10,2):map<string,int>")
    assert columns == {"event_id": "bigint", "name": "string", "amount": "decimal(10,2)",
                       "tags": "map<string,int>"}
    assert sarg_text("amount > 1 and tags is null", columns) == "(not leaf-(LESS_THAN_EQUALS amount 1))"
    assert sarg_text("event_id = 1", {"event_id": "LONG"}) == "leaf-(EQUALS event_id 1)"
    assert sarg_text("event_id = 1", {"event_id": Type.LONG}) == "leaf-(EQUALS event_id 1)"
    assert sarg_text("b", {"b": "BOOLEAN"}) == "leaf-(EQUALS b true)"
    with pytest.raises(SargSyntaxError):
        columns_from_hive("a,b", "int")


def test_without_a_schema_the_literal_gives_the_type() -> None:
    s = parse_hiveql("a = 1 and b = 'x' and c = 1.5 and d = DATE'2020-01-01' and e is null and f = 2BD")
    types = {leaf.column: leaf.type for leaf in s.leaves}
    assert types == {"a": Type.LONG, "b": Type.STRING, "c": Type.FLOAT, "d": Type.DATE, "e": Type.STRING,
                     "f": Type.DECIMAL}
    assert str(parse_hiveql("flag")) == "YES_NO_NULL"
    assert str(parse_hiveql("a in (1, 2.5)")) == "YES_NO_NULL"  # 2.5 is not a LONG
    assert str(parse_hiveql("a in (null, 2)")) == "leaf-(IN a null 2)"


# -- helpers ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("quoted", "value"), [
    ("'abc'", "abc"), ('"abc"', "abc"), ("'it\\'s'", "it's"), ('"say \\"hi\\""', 'say "hi"'),
    ("'a\\\\b'", "a\\b"), ("'\\n\\t\\r\\b\\0\\Z'", "\n\t\r\b\0\x1a"), ("'\\%\\_'", "\\%\\_"), ("'\\q'", "q"),
    ("'\\u0041\\u00e9'", "Aé"), ("'\\101\\060'", "A0"), ("'a''b'", "ab"), ("''", ""), ("'\\''", "'"),
])
def test_unescape_sql_string(quoted: str, value: str) -> None:
    assert unescape_sql_string(quoted) == value


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("5", LiteralKind.INT, 5), ("2147483647", LiteralKind.INT, 2147483647),
    ("2147483648", LiteralKind.BIGINT, 2**31), ("5L", LiteralKind.BIGINT, 5), ("5S", LiteralKind.SMALLINT, 5),
    ("5Y", LiteralKind.TINYINT, 5), ("5D", LiteralKind.DOUBLE, 5.0), ("5.5", LiteralKind.DOUBLE, 5.5),
    ("1e3", LiteralKind.DOUBLE, 1000.0), ("5BD", LiteralKind.DECIMAL, Decimal(5)),
    ("1.50bd", LiteralKind.DECIMAL, Decimal("1.50")),
    ("99999999999999999999", LiteralKind.DECIMAL, Decimal(10**20 - 1)),
])
def test_number_literal(text: str, kind: LiteralKind, value: object) -> None:
    const = number_literal(text)
    assert const.kind is kind and const.value == value


def test_number_literal_out_of_range() -> None:
    with pytest.raises(ValueError):
        number_literal("128000Y")
    with pytest.raises(ValueError):
        number_literal("1.5L")


def test_box_literal_and_fold_cast() -> None:
    assert box_literal(HqlLiteral(LiteralKind.INT, 5), Type.FLOAT) == 5.0
    assert box_literal(HqlLiteral(LiteralKind.NULL, None), Type.LONG) is None
    with pytest.raises(ValueError):
        box_literal(HqlLiteral(LiteralKind.BOOLEAN, True), Type.LONG)
    folded = fold_cast(HqlLiteral(LiteralKind.STRING, "2020-01-01"), "date")
    assert folded == HqlLiteral(LiteralKind.DATE, dt.date(2020, 1, 1))
    assert fold_cast(HqlLiteral(LiteralKind.DOUBLE, float("nan")), "int").__class__.__name__ == "Opaque"


LOOKS = [
    ("leaf-0 = (EQUALS a 1), expr = leaf-0", True),
    ("leaf-0 = (EQUALS a 1)\nexpr = leaf-0", True),
    ("(and leaf-(EQUALS a 1) leaf-(EQUALS b 2))", True),
    ("(or leaf-(EQUALS a 1) YES_NO_NULL)", True),
    ("(not leaf-(EQUALS a 1))", True),
    ("  (not (not leaf-(IS_NULL a)))", True),
    ("(not (and leaf-(IS_NULL a) leaf-(IS_NULL b)))", True),
    ("leaf-(EQUALS a 1)", True),
    ("expr = leaf-0", True),
    ("expr = YES_NO_NULL", True),
    ("YES_NO_NULL", True),
    (" NO ", True),
    ("(not (a = 1))", False),
    ("not a = 1", False),
    ("expr = 5", False),
    ("expr = yes", False),
    ("yes = 1", False),
    ("((event_id = 1) and (name) IN ('a', 'b'))", False),
    ("(a = 1 and b = 2)", False),
    ("android = 1", False),
    ("leaf = 1", False),
]


@pytest.mark.parametrize(("text", "is_sarg"), LOOKS)
def test_looks_like_sarg(text: str, is_sarg: bool) -> None:
    assert looks_like_sarg(text) is is_sarg


# -- errors -----------------------------------------------------------------------------------------------------

ERRORS = [
    ("i = ", 1, 5, "unexpected end of text", "a number"),
    ("i = 1 and", 1, 10, "unexpected end of text", "NOT"),
    ("(i = 1", 1, 7, "unexpected end of text", "')'"),
    ("i = 'abc", 1, 5, "unterminated string", None),
    ("i === 1", 1, 5, "unexpected '='", "a number"),
    ("i in ()", 1, 7, "unexpected ')'", "a number"),
    ("i = 1)", 1, 6, "unexpected ')'", "end of text"),
    ("i = 1\n  and j = $", 2, 11, "unexpected text '$'", "a column name"),
    ("`abc = 1", 1, 1, "unterminated `quoted name`", None),
    ("i = DATE'2020-13-01'", 1, 9, "invalid DATE literal", None),
    ("i = TIMESTAMP'yesterday'", 1, 14, "invalid TIMESTAMP literal", None),
    ("i = 99999999999999999999L", 1, 5, "out of the bigint range", None),
    ("", 1, 1, "unexpected end of text", "a column name"),
    ("i between 1", 1, 12, "unexpected end of text", "AND"),
    ("i is 5", 1, 6, "unexpected '5'", "NULL"),
    ("i = 1abc", 1, 5, "unexpected text", None),
]


@pytest.mark.parametrize(("text", "line", "column", "reason", "expected"), ERRORS)
def test_syntax_errors_say_where_and_what(text: str, line: int, column: int, reason: str,
                                          expected: str | None) -> None:
    with pytest.raises(SargSyntaxError) as info:
        parse_hiveql(text, SCHEMA)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert reason in err.reason
    if expected is not None:
        assert expected in err.expected, err.expected
    rendered = str(err)
    assert f"line {line}, column {column}" in rendered
    caret_line = rendered.split("\n")[2]
    assert caret_line.index("^") == column + 1  # two spaces of indent, then the column


def test_explain_lines_are_read_without_label_and_type() -> None:
    line = "      filterExpr: ((event_id = 1) and name is not null) (type: boolean)"
    assert sarg_text(line) == "(and leaf-(EQUALS event_id 1) (not leaf-(IS_NULL name)))"
    assert sarg_text("predicate: (i > 5) (type: boolean)") == "(not leaf-(LESS_THAN_EQUALS i 5))"
    with pytest.raises(SargSyntaxError) as info:
        parse_hiveql("filterExpr: (i > ) (type: boolean)", SCHEMA)
    assert info.value.column == 18


def test_not_a_string() -> None:
    with pytest.raises(TypeError):
        parse_hiveql(b"i = 1", SCHEMA)  # type: ignore[arg-type]


@given(st.text(alphabet=string.printable + "éß日", max_size=60))
def test_any_text_parses_or_gives_a_syntax_error(text: str) -> None:
    try:
        parse_hiveql(text, SCHEMA)
    except SargSyntaxError as err:
        assert 1 <= err.line and 1 <= err.column


TOKENS = ["i", "name", "b", "d", "=", "<", ">=", "<>", "<=>", "and", "or", "not", "in", "between", "is", "null",
          "(", ")", ",", "1", "2.5", "'x'", "DATE'2020-01-01'", "true", "upper", "CAST", "AS", "date", "-", "+",
          "`n`", ".", "t", "like", "case", "when", "then", "end", "5L", "[", "]", "dec", "ts", "c", "dt",
          "1e999999999BD", "1e-999999BD", "9" * 30, "-", "UDFToLong", "string", "decimal(10,2)", "'2020-01-01'",
          "int", "bigint", "timestamp", "NaN", "'1e99999'"]


@given(st.lists(st.sampled_from(TOKENS), max_size=25))
def test_token_soup_parses_or_gives_a_syntax_error(tokens: list[str]) -> None:
    try:
        parse_hiveql(" ".join(tokens), SCHEMA)
    except SargSyntaxError:
        pass


# -- depth --------------------------------------------------------------------------------------------------------

DEEP = 100_000


def test_hundred_thousand_parentheses_parse() -> None:
    assert sarg_text("(" * DEEP + "i = 1" + ")" * DEEP) == "leaf-(EQUALS i 1)"
    assert sarg_text("i = " + "(" * 1000 + "1" + ")" * 1000) == "leaf-(EQUALS i 1)"


def test_hundred_thousand_nots_parse() -> None:
    assert sarg_text("(not " * (DEEP + 1) + "b" + ")" * (DEEP + 1)) == "(not leaf-(EQUALS b true))"
    assert sarg_text("not " * 1000 + "(i = 1)") == "leaf-(EQUALS i 1)"


def test_long_and_or_chains_are_flat() -> None:
    n = 20_000
    s = parse_hiveql(" and ".join(f"i = {k}" for k in range(n)), SCHEMA)
    assert len(s.leaves) == n and s.expression.operator.value == "AND"
    right = "".join(f"(i = {k} or " for k in range(2000)) + "i = -1" + ")" * 2000
    s = parse_hiveql(right, SCHEMA)
    assert len(s.leaves) == 2001 and s.expression.operator.value == "OR"
    assert len(s.expression.children) == 2001


def test_deep_alternation_is_a_clear_error() -> None:
    depth = MAX_DEPTH + 5
    text = "(i = 1 and (i = 2 or " * depth + "i = 3" + "))" * depth
    with pytest.raises(SargSyntaxError) as info:
        parse_hiveql(text, SCHEMA)
    assert f"nested deeper than {MAX_DEPTH} levels" in str(info.value)
    ok = "(i = 1 and (i = 2 or " * 40 + "i = 3" + "))" * 40
    assert parse_hiveql(ok, SCHEMA).leaves  # within the limit it parses (the CNF limit may then apply)


def test_deep_alternation_error_points_at_the_first_node_past_the_limit() -> None:
    # HiveQL's limit is on logical nesting once AND-in-AND and OR-in-OR merge and NOT NOT cancels, and a condition
    # in parentheses may still become an operand after it closes (below): no prefix of the text decides the depth,
    # unlike SearchArgument text. It is found as the parser reduces, at the first node past the limit counting
    # from the innermost; the error points at that node's operator, and the text after it is not read.
    assert str(parse_hiveql("i = 0 and (i = 1 or (i = 2 and i = 3)) = true", SCHEMA)) == "leaf-(EQUALS i 0)"
    depth = MAX_DEPTH + 5
    unit = "(i = 1 and (i = 2 or "
    with pytest.raises(SargSyntaxError) as info:
        parse_hiveql(unit * depth + "i = 3" + "))" * depth + " ?", SCHEMA)
    # from the innermost: OR (2 levels), AND (3), OR (4), ...: the MAX_DEPTH-th node, an AND, has MAX_DEPTH + 1
    assert info.value.pos == (depth - MAX_DEPTH // 2) * len(unit) + unit.index("and")
    assert info.value.reason == f"expression nested deeper than {MAX_DEPTH} levels"


# -- generated filters: three text styles agree, and no row the filter accepts is ever dropped -----------------

@given(st.integers(min_value=0, max_value=2**32))
@example(6278)  # a filter whose CNF passes Hive's 256 combinations: the builder gives up to YES_NO_NULL
def test_generated_filters_styles_agree_and_are_sound(seed: int) -> None:
    rng = random.Random(seed)
    node = gen.tree(rng)
    texts = [gen.render(node, random.Random(seed), style) for style in gen.STYLES]
    sargs = [parse_hiveql(text, gen.SCHEMA) for text in texts]
    assert len({str(s) for s in sargs}) == 1, texts
    s = sargs[0]
    # every part a leaf, and no part given up at Hive's CNF limit (sound, but YES_NO_NULL where it gave up)
    exact = gen.fully_supported(node) and "YES_NO_NULL" not in str(s)
    for _ in range(10):
        row = gen.random_row(rng)
        truth = gen.sql_truth(node, row)
        outcome = gen.sarg_truth(s, row)
        if truth is True:
            assert outcome.is_needed(), (texts[0], row)
        if exact:
            assert (outcome.can_true, outcome.can_false, outcome.can_null) == (
                truth is True, truth is False, truth is None), (texts[0], row, truth, outcome)


def test_operators_of_every_leaf_kind_appear() -> None:
    rng = random.Random(7)
    seen: set[Operator] = set()
    for _ in range(300):
        s = parse_hiveql(gen.render(gen.tree(rng), rng, "hive3"), gen.SCHEMA)
        seen.update(leaf.operator for leaf in s.leaves)
    assert seen == set(Operator)


def test_parse_expression_keeps_the_parsed_shape() -> None:
    expr = parse_expression("a = 1 and b = 2 and (c = 3 and d = 4)")
    assert expr.__class__.__name__ == "HqlLogic" and len(expr.children) == 4  # type: ignore[union-attr]


@pytest.mark.parametrize("text", ["dec = '12.5000000000000001'", "dec in ('1', '2')",
                                  "ts = '2024-01-05 03:00:00.0000001'",
                                  "ts >= timestamp '2024-01-05 03:00:00.123456789'"])
def test_spark_rows_leave_spark_only_readings_unknown(text: str) -> None:
    """Where Spark compares a literal unlike Hive's boxing (a string against a decimal column as doubles, a
    timestamp truncated to microseconds), a read whose rows Spark judges leaves that leaf unknown (never
    prunes)."""
    schema = {"big": "bigint", "dec": "decimal(20,19)", "ts": "timestamp"}
    hive = parse_hiveql(text, schema)
    spark = parse_hiveql(text, schema, spark_rows=True)
    assert "YES_NO_NULL" not in str(hive)
    assert str(spark) == "YES_NO_NULL"


@pytest.mark.parametrize(("text", "reading"), [
    ("big = 9007199254740992D", DoubleReading.DOUBLE), ("big <= 9.007199254740992E15", DoubleReading.DOUBLE),
    ("big in (9.007199254740992E15, 1D)", DoubleReading.DOUBLE), ("dec = 0.1D", DoubleReading.DOUBLE),
    ("1e3 < dec", DoubleReading.DOUBLE),
    # a BETWEEN or IN mixing exact and double literals reads either way (each literal compares its own way)
    ("big between 1 and 9007199254740992D", DoubleReading.EITHER), ("not dec in (1e3, 2)", DoubleReading.EITHER)])
def test_double_literals_on_exact_columns_are_marked(text: str, reading: DoubleReading) -> None:
    """Hive boxes a double literal against a bigint (or decimal) column to one exact value; Spark and Hive's
    rows compare as doubles, where several values round to the literal: the leaf prints as Hive's builder
    prints it and reads DOUBLE (``PredicateLeaf.double``; EITHER when mixed with exact literals), which pruning judges as a double (both with and without
    ``spark_rows``)."""
    schema = {"big": "bigint", "dec": "decimal(20,19)", "ts": "timestamp"}
    hive = parse_hiveql(text, schema)
    spark = parse_hiveql(text, schema, spark_rows=True)
    assert "YES_NO_NULL" not in str(hive)
    assert str(spark) == str(hive)
    assert [leaf.double for leaf in hive.leaves] == [reading]
    assert [leaf.double for leaf in spark.leaves] == [reading]
    # an exact decimal literal (BD) and an integer literal box exactly, unmarked
    for exact in ("big = 9007199254740993BD", "big = 9007199254740993", "dec = 0.1", "dec = 1000BD"):
        assert [leaf.double for leaf in parse_hiveql(exact, schema, spark_rows=True).leaves] == [DoubleReading.NONE]


def test_a_marked_leaf_stays_marked_when_merged() -> None:
    """Equal leaves are merged (Hive's builder); one written as a double and one exact read EITHER way, whichever
    came first, and the printed SearchArgument is Hive's."""
    schema = {"dec": "decimal(38,18)"}
    for text in ("dec = 1000000000BD or dec = 1e9", "dec = 1e9 or dec = 1000000000BD"):
        parsed = parse_hiveql(text, schema)
        assert len(parsed.leaves) == 1 and parsed.leaves[0].double is DoubleReading.EITHER, text
        assert str(parsed) == "(or leaf-(EQUALS dec 1000000000) leaf-(EQUALS dec 1000000000))"
    assert parse_hiveql("dec = 1000000000BD or dec = 1000000000", schema).leaves[0].double is DoubleReading.NONE
    assert parse_hiveql("dec = 1e9 or dec = 1.0E9D", schema).leaves[0].double is DoubleReading.DOUBLE


def test_a_float_literal_against_a_bigint_column_is_unknown() -> None:
    """Spark compares a bigint with a float as floats (16777217 equals 16777216F): never boxed exactly."""
    assert str(parse_hiveql("big = CAST(16777216 AS FLOAT)", {"big": "bigint"})) == "YES_NO_NULL"


def test_spark_rows_keep_exact_literals() -> None:
    schema = {"big": "bigint", "dec": "decimal(20,19)", "ts": "timestamp"}
    assert "YES_NO_NULL" not in str(parse_hiveql("big = 9007199254740993BD", schema, spark_rows=True))
    assert "YES_NO_NULL" not in str(parse_hiveql("big = 9007199254740993", schema, spark_rows=True))
    assert "YES_NO_NULL" not in str(parse_hiveql("ts = '2024-01-05 03:00:00.123456'", schema, spark_rows=True))
