"""hive_bridge.filters.typemap: one mapping per rule, each proved against what it replaced or what it must equal.

- Spark's schema JSON (``spark.sql.sources.schema.*``) equals what Hudi's Hive sync writes for every shared
  fixture table: Hudi's converter (``Parquet2SparkSchemaUtils.convertToSparkSchemaJson``, apache/hudi
  ``hudi-sync-common``) is transcribed below over the parquet schema of the table's latest base file, as Hive
  sync reads the table's parquet schema, independently of Arrow and pyspark;
- Hive type strings read by sarg's one parser give the Arrow types the hand-written reader gave (kept below as the
  reference), on every type string the tests and the fixtures use and on generated ones.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_bridge.filters.typemap import (
    arrow_to_hive_sync_type,
    arrow_to_sarg_hive_type,
    arrow_to_spark_schema_json,
    hive_partition_key_to_arrow,
    hive_to_arrow,
)
from hive_bridge.hive import MetastoreError, plan_hive_sync, spark_table_properties
from hive_bridge.table.table import HudiTable

# ------------------------------------------------------------------------ Hudi's Spark schema JSON, transcribed


@dataclass
class _Node:
    """One node of a parquet schema as pyarrow prints it."""

    repetition: str
    physical: str
    name: str
    annotation: str
    children: list[_Node] = field(default_factory=list)


_LINE = re.compile(r"^\s*(required|optional|repeated) (\S+) field_id=-?\d+ (\S+)(?: \((.*)\))?( \{|;)$")


def _parquet_tree(text: str) -> _Node:
    stack: list[_Node] = []
    root: _Node | None = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("<pyarrow."):  # the object's repr comes first
            continue
        if line.strip() == "}":
            stack.pop()
            continue
        m = _LINE.match(line)
        assert m is not None, line
        node = _Node(m.group(1), m.group(2), m.group(3), m.group(4) or "")
        if stack:
            stack[-1].children.append(node)
        else:
            root = node
        if m.group(5) == " {":
            stack.append(node)
    assert root is not None
    return root


def _decimal(annotation: str) -> str:
    m = re.fullmatch(r"Decimal\(precision=(\d+), scale=(\d+)\)", annotation)
    assert m is not None, annotation
    return f"decimal({m.group(1)},{m.group(2)})"


def _hudi_primitive(node: _Node) -> str:
    """Parquet2SparkSchemaUtils.convertPrimitiveType (an UnsupportedOperationException there fails here)."""
    kind, ann = node.physical, node.annotation
    if kind in ("boolean", "float", "double"):
        return kind
    if ann.startswith("Decimal"):
        return _decimal(ann)
    if kind == "int32":
        table = {"": "integer", "Int(bitWidth=8, isSigned=true)": "byte", "Int(bitWidth=16, isSigned=true)": "short",
                 "Int(bitWidth=32, isSigned=true)": "integer", "Date": "date"}
        return table[ann]
    if kind == "int64":
        if ann.startswith("Timestamp("):
            return "timestamp"
        return {"": "long", "Int(bitWidth=64, isSigned=true)": "long"}[ann]
    if kind == "int96":
        return "timestamp"
    if kind == "binary":
        return {"": "binary", "String": "string", "Enum": "string", "JSON": "string", "BSON": "binary"}[ann]
    raise AssertionError(f"Hudi refuses {kind} ({ann})")


def _hudi_type(node: _Node) -> str:
    """Parquet2SparkSchemaUtils.convertFieldType / convertGroupField."""
    if node.physical != "group":
        return f'"{_hudi_primitive(node)}"'
    if not node.annotation:
        return _hudi_struct(node.children)
    if node.annotation == "List":
        repeated = node.children[0]
        if repeated.physical != "group" or len(repeated.children) > 1 or repeated.name in (
                "array", node.name + "_tuple"):
            return _hudi_array(repeated, False)
        element = repeated.children[0]
        return _hudi_array(element, element.repetition == "optional")
    if node.annotation == "Map":
        key, value = node.children[0].children
        return ('{"type":"map", "keyType":' + _hudi_type(key) + ',"valueType":' + _hudi_type(value)
                + ',"valueContainsNull":' + str(value.repetition == "optional").lower() + "}")
    raise AssertionError(f"Hudi refuses {node}")


def _hudi_array(element: _Node, contains_null: bool) -> str:
    return '{"type":"array", "elementType":' + _hudi_type(element) + ',"containsNull":' + \
        str(contains_null).lower() + "}"


def _hudi_struct(fields: list[_Node]) -> str:
    """Parquet2SparkSchemaUtils.convertToSparkSchemaJson."""
    out = []
    for f in fields:
        if f.repetition == "repeated":
            out.append(f'{{"name":"{f.name}","type":{_hudi_array(f, False)},"nullable":false,"metadata":{{}}}}')
        else:
            nullable = str(f.repetition == "optional").lower()
            out.append(f'{{"name":"{f.name}","type":{_hudi_type(f)},"nullable":{nullable},"metadata":{{}}}}')
    return '{"type":"struct","fields":[' + ",".join(out) + "]}"


def _hudi_sync_schema(parquet_schema: str, partition_fields: list[str]) -> str:
    """SparkDataSourceTableUtils.getSparkTableProperties: the parquet schema's fields, partition fields last."""
    fields = _parquet_tree(parquet_schema).children
    by_name = {f.name: f for f in fields}
    return _hudi_struct([f for f in fields if f.name not in partition_fields]
                        + [by_name[p] for p in partition_fields if p in by_name])


def _as_hudi_writes(ours: str) -> str:
    """Ours with the two spaces Hudi writes after "array", and "map", (the JSON is the same)."""
    return ours.replace('{"type":"array",', '{"type":"array", ').replace('{"type":"map",', '{"type":"map", ')


def _parquet_tables(shared_tables: dict[str, Path]) -> list[tuple[str, HudiTable, str]]:
    """Every shared fixture table with parquet base files: (name, table, its latest base file)."""
    out = []
    for name, root in sorted(shared_tables.items()):
        table = HudiTable.open(root)
        if table.base_file_format != "PARQUET":
            continue
        slices = [s for s in table.latest_file_slices() if s.base_file is not None]
        if slices:
            newest = max(slices, key=lambda s: s.base_instant)
            assert newest.base_file is not None
            out.append((name, table, newest.base_file.full_path))
    assert len(out) >= 20
    return out


def test_spark_schema_json_is_what_hudis_hive_sync_writes_for_every_fixture(shared_tables: dict[str, Path]) -> None:
    """The latest base file's parquet schema: pyspark's mapping (Hudi's where they differ) over the Arrow schema
    pyarrow reads from it gives Hudi's converter's text, but for Hudi's two spaces."""
    for name, _, path in _parquet_tables(shared_tables):
        parquet = pq.ParquetFile(path)
        hudi = _hudi_struct(_parquet_tree(str(parquet.schema)).children)
        ours = arrow_to_spark_schema_json(parquet.schema_arrow)
        assert _as_hudi_writes(ours) == hudi, name
        assert json.loads(ours) == json.loads(hudi), name


def test_spark_schema_properties_of_a_sync_are_hudis(shared_tables: dict[str, Path]) -> None:
    """What plan_hive_sync registers as spark.sql.sources.schema.* for every fixture table is the schema Hudi's
    Hive sync writes (its fields, the partition fields last)."""
    compared = 0
    for name, table, path in _parquet_tables(shared_tables):
        plan = plan_hive_sync(str(table.base_path))
        keys = [k for k, _ in plan.partition_keys]
        props = spark_table_properties(list(plan.spark_schema), keys)
        text = "".join(props[f"spark.sql.sources.schema.part.{i}"]
                       for i in range(int(props["spark.sql.sources.schema.numParts"])))
        hudi = _hudi_sync_schema(str(pq.ParquetFile(path).schema), keys)
        if not all(k in {f.name for f in pq.read_schema(path)} for k in keys):
            continue  # a partition column only in paths: Hudi's schema lacks it, hive-bridge types it
        assert _as_hudi_writes(text) == hudi, name
        compared += 1
    assert compared >= 15, compared


def test_where_pyspark_and_hudi_differ_hudi_is_followed() -> None:
    """pyspark 4 maps a naive timestamp to timestamp_ntz; Hudi's converter has no timestamp_ntz (parquet's
    TIMESTAMP_MICROS/MILLIS are `timestamp` whether UTC-adjusted or not). Field metadata: Hudi writes none."""
    from pyspark.sql.pandas.types import from_arrow_schema

    fields = [pa.field("local", pa.timestamp("us")), pa.field("utc", pa.timestamp("ms", tz="UTC")),
              pa.field("m", pa.int32(), metadata={b"SPARK::metadata::json": b'{"comment":"x"}'})]
    assert from_arrow_schema(pa.schema(fields)).fields[0].dataType.typeName() == "timestamp_ntz"
    assert json.loads(arrow_to_spark_schema_json(fields))["fields"] == [
        {"name": "local", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "utc", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "m", "type": "integer", "nullable": True, "metadata": {}}]
    nested = pa.struct([pa.field("t", pa.timestamp("us"), metadata={b"SPARK::metadata::json": b'{"a":1}'})])
    assert json.loads(arrow_to_spark_schema_json([pa.field("s", pa.list_(pa.field("e", nested, False)))])) == {
        "type": "struct", "fields": [{"name": "s", "type": {"type": "array", "elementType": {
            "type": "struct", "fields": [{"name": "t", "type": "timestamp", "nullable": True, "metadata": {}}]},
            "containsNull": False}, "nullable": True, "metadata": {}}]}


def test_unsigned_integers_have_no_spark_type_as_in_hudi() -> None:
    with pytest.raises(ValueError, match="column u: Spark has no type for Arrow's uint16"):
        arrow_to_spark_schema_json([pa.field("a", pa.int8()), pa.field("u", pa.uint16())])
    with pytest.raises(MetastoreError, match="Spark schema properties: column u"):
        spark_table_properties([pa.field("u", pa.uint64())], [])


# ------------------------------------------------------------------------ the two Arrow -> Hive rules


def test_the_two_arrow_to_hive_rules_differ_where_hive_sync_types_parquet() -> None:
    for typ, sarg_type, sync_type in [
            (pa.int8(), "tinyint", "int"), (pa.int16(), "smallint", "int"), (pa.int32(), "int", "int"),
            (pa.int64(), "bigint", "bigint"), (pa.timestamp("us", tz="UTC"), "timestamp", "timestamp"),
            (pa.decimal128(10, 5), "decimal(10,5)", "decimal(10,5)"), (pa.binary(), "binary", "binary"),
            (pa.list_(pa.struct([("a", pa.int16())])), "array<struct<a:smallint>>", "array<struct<a:int>>")]:
        assert (arrow_to_sarg_hive_type(typ), arrow_to_hive_sync_type(typ)) == (sarg_type, sync_type), typ
    assert arrow_to_hive_sync_type(pa.map_(pa.string(), pa.timestamp("us")), support_timestamp=False) \
        == "map<string,bigint>"


# ------------------------------------------------------------------------ Hive type strings -> Arrow


def _read_as_before(text: str) -> pa.DataType:
    """The Hive type reader hive_bridge.hive.metastore had before sarg's parser was used (the reference)."""
    typ, end = _read_hive_type(text, 0)
    if text[end:].strip():
        raise ValueError(f"unexpected {text[end:]!r} after a type in {text!r}")
    return typ




def _read_hive_type(text: str, pos: int) -> tuple[pa.DataType, int]:
    simple = {"boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
              "integer": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
              "string": pa.string(), "binary": pa.binary(), "date": pa.date32(),
              "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us")}

    def skip(p: int) -> int:
        while p < len(text) and text[p].isspace():
            p += 1
        return p

    def expect(p: int, ch: str) -> int:
        p = skip(p)
        if p >= len(text) or text[p] != ch:
            raise ValueError(f"expected {ch!r} at {p} in {text!r}")
        return p + 1

    pos = skip(pos)
    m = re.compile(r"[A-Za-z_]+").match(text, pos)
    if m is None:
        raise ValueError(f"no type at {pos} in {text!r}")
    word, pos = m.group(0).lower(), m.end()
    if word in ("varchar", "char", "decimal", "numeric"):
        args = re.compile(r"\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)").match(text, pos)
        if word in ("varchar", "char"):
            if args is None:
                raise ValueError(f"{word} needs a length in {text!r}")
            return pa.string(), args.end()
        if args is None:
            return pa.decimal128(10, 0), pos
        return pa.decimal128(int(args.group(1)), int(args.group(2) or 0)), args.end()
    if word in simple:
        return simple[word], pos
    if word == "array":
        item, pos = _read_hive_type(text, expect(pos, "<"))
        return pa.list_(item), expect(pos, ">")
    if word == "map":
        key, pos = _read_hive_type(text, expect(pos, "<"))
        value, pos = _read_hive_type(text, expect(pos, ","))
        return pa.map_(key, value), expect(pos, ">")
    if word == "struct":
        pos = expect(pos, "<")
        fields: list[pa.Field] = []
        while True:
            pos = skip(pos)
            if text.startswith(">", pos):
                return pa.struct(fields), pos + 1
            name_match = re.compile(r"`([^`]*)`|([^:\s]+)").match(text, pos)
            if name_match is None:
                raise ValueError(f"no field name at {pos} in {text!r}")
            name = name_match.group(1) if name_match.group(1) is not None else name_match.group(2)
            typ, pos = _read_hive_type(text, expect(name_match.end(), ":"))
            fields.append(pa.field(name, typ))
            pos = skip(pos)
            if text.startswith(",", pos):
                pos += 1
    raise ValueError(f"unknown Hive type {word!r} in {text!r}")




#: the type strings the tests use (metastore, handler, sarg's schema tests, integration tables)
TEST_TYPES = [
    "int", "string", "bigint", "double", "date", "timestamp", "boolean", "float", "binary", "tinyint", "smallint",
    "decimal(10,2)", "decimal(10, 2)", "decimal(10,5)", "decimal", "varchar(5)", "char(2)", "timestamp_ntz",
    "struct<a:int,b:string>", "map<string,int>", "array<struct<x:int,y:map<string,array<int>>>>",
    "map<string,array<struct<`a b`:int,c:date>>>", "struct<event_id:int,name:string,ts:timestamp>",
    "uniontype<int,string>", "INT", " Decimal ( 12 , 3 ) ", "struct<>", "integer", "numeric(5)",
]


def _same(text: str) -> None:
    try:
        expected = _read_as_before(text)
    except ValueError:
        with pytest.raises(ValueError):
            hive_to_arrow(text)
        return
    assert hive_to_arrow(text) == expected, text


def test_hive_types_read_as_before_on_every_type_the_tests_and_fixtures_use(
        shared_tables: dict[str, Path]) -> None:
    texts = set(TEST_TYPES)
    for _, table, _ in _parquet_tables(shared_tables):
        for f in table.arrow_schema():
            texts.update({arrow_to_sarg_hive_type(f.type), arrow_to_hive_sync_type(f.type),
                          arrow_to_hive_sync_type(f.type, support_timestamp=False)})
    assert len(texts) > 30
    for text in sorted(texts):
        _same(text)


_names = st.sampled_from(["a", "b_1", "`a b`", "`x:y`", "Col"])
_leaves = st.sampled_from(["int", "INT", "string", "bigint", "tinyint", "smallint", "integer", "double", "float",
                           "boolean", "binary", "date", "timestamp", "timestamp_ntz", "decimal", "decimal(10,2)",
                           "decimal( 38 , 0 )", "numeric(7)", "varchar(3)", "char(9)"])
_spaces = st.sampled_from(["", " ", "  "])


def _wrap(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    array = st.builds(lambda s, c: f"array{s}<{s}{c}{s}>", _spaces, children)
    maps = st.builds(lambda s, k, v: f"map<{k}{s},{s}{v}>", _spaces, children, children)
    struct = st.builds(lambda s, fs: "struct<" + f"{s},".join(f"{n}{s}:{s}{t}" for n, t in fs) + ">", _spaces,
                       st.lists(st.tuples(_names, children), max_size=3))
    return array | maps | struct


@given(st.recursive(_leaves, _wrap, max_leaves=8), _spaces)
def test_hive_types_read_as_before_on_generated_types(text: str, pad: str) -> None:
    _same(pad + text + pad)


@pytest.mark.parametrize("text", ["varchar", "long", "uniontype<int>", "decimal(1,2,3)", "int(3)", "array<int",
                                  "map<int>", "struct<a>", "array<int>>", "int x", ""])
def test_what_is_not_a_hive_type_is_refused_as_before(text: str) -> None:
    _same(text)
    _same(f"array<{text}>")


def test_a_struct_field_without_its_comma_is_refused() -> None:
    """The one difference: the reference ran on past a missing comma (``struct<a:int(3),b:int>`` gave a field
    named ``(3),b``); sarg's parser refuses such text."""
    assert _read_as_before("struct<a:int b:string>") == pa.struct([("a", pa.int32()), ("b", pa.string())])
    assert _read_as_before("struct<a:int(3),b:int>").names == ["a", "(3),b"]
    for text in ("struct<a:int b:string>", "struct<a:int(3),b:int>"):
        with pytest.raises(ValueError):
            hive_to_arrow(text)


def test_partition_key_types() -> None:
    assert [hive_partition_key_to_arrow(t) for t in ("string", "int", "tinyint", "decimal(5,2)", "date", "boolean",
                                                     "char(2)", "timestamp", "array<int>", "nonsense")] == [
        pa.string(), pa.int64(), pa.int64(), pa.decimal128(5, 2), pa.date32(), pa.bool_(), None, None, None, None]
