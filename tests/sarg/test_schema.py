"""sarg.schema: the one splitter of Hive type lists and the one rule for column names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import sarg
from sarg.schema import columns_from_hive, find_column, lookup, resolve_schema, split_type_list


@pytest.mark.parametrize(("text", "types"), [
    ("int:string:decimal(10,2):struct<a:int,b:string>:date",
     ["int", "string", "decimal(10,2)", "struct<a:int,b:string>", "date"]),
    ("bigint,string,decimal(10,2),map<string,int>", ["bigint", "string", "decimal(10,2)", "map<string,int>"]),
    ("array<struct<x:int,y:map<string,array<int>>>>:int", ["array<struct<x:int,y:map<string,array<int>>>>", "int"]),
    (" int : string ", ["int", "string"]),
    ("int::string:", ["int", "string"]),
    ("", []),
    ("decimal(10,2", ["decimal(10,2"]),  # unbalanced: one item, not an error
])
def test_split_type_list(text: str, types: list[str]) -> None:
    assert split_type_list(text) == types


def _split_as_before(text: str) -> list[str]:
    """The splitter hive_bridge.hive.handler and sarg.hiveql each had before there was one (the reference)."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch in ":," and depth == 0:
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    if current or out:
        out.append("".join(current).strip())
    return [t for t in out if t]


@given(st.text(alphabet="<>(),: ab", max_size=30))
def test_split_type_list_splits_as_before(text: str) -> None:
    assert split_type_list(text) == _split_as_before(text)


def test_columns_from_hive() -> None:
    assert columns_from_hive("a,b", "int:decimal(10,2)") == {"a": "int", "b": "decimal(10,2)"}
    with pytest.raises(sarg.SargSyntaxError):
        columns_from_hive("a,b", "int")


def test_find_column_rule() -> None:
    columns = {"event_id": 1, "Name": 2, "CITY": 3, "city": 4, "Mixed": 5, "MIXED": 6}
    assert find_column(columns, "event_id") == ("event_id", 1)  # exact
    assert find_column(columns, "EVENT_ID") == ("event_id", 1)  # the one case-insensitive match
    assert find_column(columns, "name") == ("Name", 2)
    assert find_column(columns, "city") == ("city", 4)  # exact wins over another case
    assert find_column(columns, "City") is None  # two case-insensitive matches: ambiguous, unknown
    assert find_column(columns, "mixed") is None
    assert find_column(columns, "nope") is None
    types = resolve_schema({"a": "int", "B": "string"})
    assert lookup(types, "A") is types["a"] and lookup(types, "b") is types["B"] and lookup(types, "c") is None


def test_ambiguous_column_names_are_unknown_in_both_readers() -> None:
    schema = {"Ab": "int", "aB": "string", "ok": "int"}
    s = sarg.parse("(and leaf-(EQUALS AB 5) leaf-(EQUALS OK 7))", schema)
    assert [(leaf.column, leaf.type, leaf.literal) for leaf in s.leaves] == [
        ("AB", sarg.Type.LONG, 5), ("OK", sarg.Type.LONG, 7)]  # AB: untyped, read from its text; OK: int
    assert str(sarg.parse_hiveql("AB = 5 and OK = 7", schema)) == "leaf-(EQUALS ok 7)"  # AB: unknown column


def test_parse_type_reads_nested_hive_types() -> None:
    from sarg.schema import HiveType, parse_type

    assert parse_type(" Decimal ( 10 , 2 ) ") == HiveType("decimal", (10, 2))
    assert parse_type("map<string,array<struct<`a b`:int,c:varchar(5)>>>") == HiveType("map", args=(
        HiveType("string"), HiveType("array", args=(HiveType("struct", fields=(
            ("a b", HiveType("int")), ("c", HiveType("varchar", (5,))))),)),))
    assert parse_type("struct<>") == HiveType("struct")
    for bad in ("array<>", "map<int>", "struct<a>", "int x", "array", "decimal(a)", "array<int", ""):
        with pytest.raises(sarg.SargSyntaxError):
            parse_type(bad)
