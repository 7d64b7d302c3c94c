"""Arrow types as Hive names them (``columns.types``, struct type strings for typing SearchArgument literals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
