"""Arrow types as Hive names them (``columns.types``, struct type strings for typing SearchArgument literals)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from hive_bridge.table.table import HudiTable


def arrow_to_hive(typ: pa.DataType) -> str:
    """The Hive type name of an Arrow type (``binary`` for what Hive has no better name for)."""
    if pa.types.is_boolean(typ):
        return "boolean"
    if pa.types.is_int8(typ) or pa.types.is_uint8(typ):
        return "tinyint"
    if pa.types.is_int16(typ) or pa.types.is_uint16(typ):
        return "smallint"
    if pa.types.is_int32(typ) or pa.types.is_uint32(typ):
        return "int"
    if pa.types.is_integer(typ):
        return "bigint"
    if pa.types.is_float32(typ):
        return "float"
    if pa.types.is_floating(typ):
        return "double"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        return "string"
    if pa.types.is_date(typ):
        return "date"
    if pa.types.is_timestamp(typ):
        return "timestamp"
    if pa.types.is_decimal(typ):
        return f"decimal({typ.precision},{typ.scale})"
    if pa.types.is_struct(typ):
        return "struct<" + ",".join(f"{f.name}:{arrow_to_hive(f.type)}" for f in typ) + ">"
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return f"array<{arrow_to_hive(typ.value_type)}>"
    if pa.types.is_map(typ):
        return f"map<{arrow_to_hive(typ.key_type)},{arrow_to_hive(typ.item_type)}>"
    return "binary"


def struct_string(schema: pa.Schema) -> str:
    """``struct<a:int,b:string>``: a schema as Spark's ORC reader logs it."""
    return "struct<" + ",".join(f"{f.name}:{arrow_to_hive(f.type)}" for f in schema) + ">"


def table_sarg_schema(table: HudiTable) -> dict[str, str]:
    """Column name -> Hive type name of a Hudi table's columns: the schema text filters' literals are typed by."""
    return {f.name: arrow_to_hive(f.type) for f in table.arrow_schema()}


def arrow_to_hive_sync_type(typ: pa.DataType, support_timestamp: bool = True) -> str:
    """The Hive type Hive sync gives a column (HiveSchemaUtil.convertField over the parquet schema): INT32 is
    ``int`` whatever its annotation, INT64 ``bigint`` (timestamps too unless ``support_timestamp``)."""
    if pa.types.is_integer(typ) and typ.bit_width <= 32 and not (pa.types.is_uint32(typ)):
        return "int"
    if pa.types.is_timestamp(typ):
        return "timestamp" if support_timestamp else "bigint"
    if pa.types.is_struct(typ):
        return "struct<" + ",".join(f"{f.name}:{arrow_to_hive_sync_type(f.type, support_timestamp)}" for f in typ) + ">"
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return f"array<{arrow_to_hive_sync_type(typ.value_type, support_timestamp)}>"
    if pa.types.is_map(typ):
        return (f"map<{arrow_to_hive_sync_type(typ.key_type, support_timestamp)},"
                f"{arrow_to_hive_sync_type(typ.item_type, support_timestamp)}>")
    return arrow_to_hive(typ).lower()


def hive_to_arrow(text: str) -> pa.DataType:
    """The Arrow type of a Hive type name (nested types too); ValueError for what it cannot read."""
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


def _spark_type(typ: pa.DataType) -> Any:
    """Spark's JSON form of an Arrow type (``DataType.json``), as Hudi's Spark schema properties hold it."""
    t = pa.types
    if t.is_boolean(typ):
        return "boolean"
    if t.is_int8(typ):
        return "byte"
    if t.is_int16(typ) or t.is_uint8(typ):
        return "short"
    if t.is_int32(typ) or t.is_uint16(typ):
        return "integer"
    if t.is_integer(typ):
        return "long"
    if t.is_float32(typ):
        return "float"
    if t.is_floating(typ):
        return "double"
    if t.is_string(typ) or t.is_large_string(typ):
        return "string"
    if t.is_date(typ):
        return "date"
    if t.is_timestamp(typ):
        return "timestamp" if typ.tz is not None else "timestamp_ntz"
    if t.is_decimal(typ):
        return f"decimal({typ.precision},{typ.scale})"
    if t.is_list(typ) or t.is_large_list(typ):
        return {"type": "array", "elementType": _spark_type(typ.value_type), "containsNull": True}
    if t.is_map(typ):
        return {"type": "map", "keyType": _spark_type(typ.key_type), "valueType": _spark_type(typ.item_type),
                "valueContainsNull": True}
    if t.is_struct(typ):
        return _spark_struct(list(typ))
    return "binary"


def _spark_struct(fields: Iterable[pa.Field]) -> dict[str, Any]:
    return {"type": "struct", "fields": [{"name": f.name, "type": _spark_type(f.type), "nullable": f.nullable,
                                          "metadata": {}} for f in fields]}


def arrow_to_spark_schema_json(fields: Iterable[pa.Field]) -> str:
    """Spark's schema JSON (``StructType.json``) of Arrow fields, as Hive sync's ``spark.sql.sources.schema``."""
    return json.dumps(_spark_struct(fields), separators=(",", ":"))


def hive_partition_key_to_arrow(hive_type: str) -> pa.DataType | None:
    """The Arrow type a partition key's values (text in the metastore) are compared in, as Hive casts partition
    values to the key's type: strings, integers (as int64), decimals, floating point, dates and booleans; None
    (not compared: unknown) for ``char(n)`` (space-padded: Hive's comparison is not the string's) and every
    other type."""
    low = hive_type.strip().lower()
    if low.startswith("char"):
        return None
    try:
        typ = hive_to_arrow(low)
    except ValueError:
        return None
    t = pa.types
    if t.is_string(typ) or t.is_integer(typ) or t.is_decimal(typ) or t.is_floating(typ) or t.is_date(typ) \
            or t.is_boolean(typ):
        return pa.int64() if t.is_integer(typ) else typ
    return None
