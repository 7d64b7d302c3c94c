"""Every type mapping of hive-bridge, one function per rule, each named for the rule it follows:

- :func:`arrow_to_sarg_hive_type`: Arrow → the Hive type name a SearchArgument schema gives a column (Hive's
  ``columns.types``, Spark's ``catalogString``): what literals of filters are typed by
  (:func:`table_sarg_schema`, :func:`struct_string`, the storage handler's job properties);
- :func:`arrow_to_hive_sync_type`: Arrow → the Hive type Hudi's Hive sync registers for a column (it types the
  parquet schema: every INT32 is ``int``, timestamps are ``bigint`` unless ``support_timestamp``);
- :func:`hive_to_arrow`: a Hive type string → Arrow, read by sarg's one parser of Hive types
  (:func:`sarg.schema.parse_type`); :func:`hive_partition_key_to_arrow`: the Arrow type a partition key's
  values are compared in, as Hive casts partition values;
- :func:`arrow_to_spark_schema_json`: Arrow → Spark's schema JSON as Hudi's Hive sync writes it into
  ``spark.sql.sources.schema.*``: pyspark's own mapping (``from_arrow_schema``), timestamps as Hudi writes them.

The two Arrow → Hive rules really differ (``tinyint`` / ``smallint`` against Hive sync's ``int``; Hive sync's
``bigint`` timestamps without ``support_timestamp``), so both are kept, each for what it serves.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sarg.schema import HiveType, parse_type

if TYPE_CHECKING:
    from hive_bridge.table.table import HudiTable

__all__ = [
    "arrow_to_hive_sync_type",
    "arrow_to_sarg_hive_type",
    "arrow_to_spark_schema_json",
    "hive_partition_key_to_arrow",
    "hive_to_arrow",
    "struct_string",
    "table_sarg_schema",
]


def arrow_to_sarg_hive_type(typ: pa.DataType) -> str:
    """The Hive type name of an Arrow type in a SearchArgument schema (``binary`` for what Hive has no better
    name for): integers by their width (``tinyint``, ``smallint``, ``int``, ``bigint``), every timestamp
    ``timestamp``."""
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
        return "struct<" + ",".join(f"{f.name}:{arrow_to_sarg_hive_type(f.type)}" for f in typ) + ">"
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return f"array<{arrow_to_sarg_hive_type(typ.value_type)}>"
    if pa.types.is_map(typ):
        return f"map<{arrow_to_sarg_hive_type(typ.key_type)},{arrow_to_sarg_hive_type(typ.item_type)}>"
    return "binary"


def struct_string(schema: pa.Schema) -> str:
    """``struct<a:int,b:string>``: a schema as Spark's ORC reader logs it."""
    return "struct<" + ",".join(f"{f.name}:{arrow_to_sarg_hive_type(f.type)}" for f in schema) + ">"


def table_sarg_schema(table: HudiTable) -> dict[str, str]:
    """Column name -> Hive type name of a Hudi table's columns: the schema text filters' literals are typed by."""
    return {f.name: arrow_to_sarg_hive_type(f.type) for f in table.arrow_schema()}


def arrow_to_hive_sync_type(typ: pa.DataType, support_timestamp: bool = True) -> str:
    """The Hive type Hudi's Hive sync gives a column (``HiveSchemaUtil.convertField`` over the parquet schema):
    INT32 is ``int`` whatever its annotation, INT64 ``bigint`` (timestamps too unless ``support_timestamp``);
    otherwise as :func:`arrow_to_sarg_hive_type`."""
    if pa.types.is_integer(typ) and typ.bit_width <= 32:
        return "int"
    if pa.types.is_timestamp(typ):
        return "timestamp" if support_timestamp else "bigint"
    if pa.types.is_struct(typ):
        return "struct<" + ",".join(f"{f.name}:{arrow_to_hive_sync_type(f.type, support_timestamp)}"
                                    for f in typ) + ">"
    if pa.types.is_list(typ) or pa.types.is_large_list(typ):
        return f"array<{arrow_to_hive_sync_type(typ.value_type, support_timestamp)}>"
    if pa.types.is_map(typ):
        return (f"map<{arrow_to_hive_sync_type(typ.key_type, support_timestamp)},"
                f"{arrow_to_hive_sync_type(typ.item_type, support_timestamp)}>")
    return arrow_to_sarg_hive_type(typ)


_SIMPLE = {"boolean": pa.bool_(), "tinyint": pa.int8(), "smallint": pa.int16(), "int": pa.int32(),
           "integer": pa.int32(), "bigint": pa.int64(), "float": pa.float32(), "double": pa.float64(),
           "string": pa.string(), "binary": pa.binary(), "date": pa.date32(),
           "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us")}


def hive_to_arrow(text: str) -> pa.DataType:
    """The Arrow type of a Hive type string, nested types too (read by :func:`sarg.schema.parse_type`):
    ``varchar(n)`` / ``char(n)`` are strings, ``decimal`` without precision ``decimal(10,0)``, ``timestamp``
    UTC-adjusted microseconds, ``timestamp_ntz`` naive. ValueError for what it cannot read."""
    return _arrow_of(parse_type(text), text)


def _arrow_of(node: HiveType, text: str) -> pa.DataType:
    name, params = node.name, node.params
    if name in ("varchar", "char"):
        if len(params) != 1:
            raise ValueError(f"{name} needs a length in {text!r}")
        return pa.string()
    if name in ("decimal", "numeric"):
        if len(params) > 2:
            raise ValueError(f"{name} takes a precision and a scale in {text!r}")
        return pa.decimal128(params[0], params[1] if len(params) > 1 else 0) if params else pa.decimal128(10, 0)
    if params:
        raise ValueError(f"{name} takes no parameters in {text!r}")
    if name in _SIMPLE and not node.args:
        return _SIMPLE[name]
    if name == "array":
        return pa.list_(_arrow_of(node.args[0], text))
    if name == "map":
        return pa.map_(_arrow_of(node.args[0], text), _arrow_of(node.args[1], text))
    if name == "struct":
        return pa.struct([pa.field(n, _arrow_of(t, text)) for n, t in node.fields])
    raise ValueError(f"unknown Hive type {name!r} in {text!r}")


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


def arrow_to_spark_schema_json(fields: Iterable[pa.Field]) -> str:
    """Spark's schema JSON of Arrow fields as Hudi's Hive sync writes it into ``spark.sql.sources.schema.*``
    (``SparkDataSourceTableUtils.getSparkTableProperties`` with ``Parquet2SparkSchemaUtils.convertToSparkSchemaJson``
    over the parquet schema the Arrow fields were read from).

    The types are pyarrow → Spark as pyspark maps them (``pyspark.sql.pandas.types.from_arrow_schema``, what
    :func:`hive_bridge.spark.spark_schema` reads with): nullability of fields, array elements
    (``containsNull``) and map values (``valueContainsNull``) from the Arrow fields, which carry the parquet
    repetitions Hudi's converter reads. Where Hudi writes something else, Hudi's choice is followed:

    - every timestamp is ``timestamp``: Hudi's converter maps parquet's ``TIMESTAMP_MICROS`` / ``TIMESTAMP_MILLIS``
      and ``INT96`` to ``timestamp`` whether or not the values are UTC-adjusted, and has no ``timestamp_ntz``
      (pyspark's default would make a naive Arrow timestamp ``timestamp_ntz``: ``prefer_timestamp_ntz=False``);
    - every field's ``metadata`` is ``{}``: Hudi writes no field metadata (pyspark would copy Spark metadata an
      Arrow field carries);
    - keys in Spark's own order (``type``, ``fields``; ``name``, ``type``, ``nullable``, ``metadata``), as the JVM
      and Hudi write them (``StructType.json()`` sorts them), compact as Hudi writes it, so the text cut in
      4,000-character parts is Hudi's but for two spaces Hudi puts after ``"type":"array",`` and ``"type":"map",``
      (the JSON reads the same).

    Unsigned integers are refused (ValueError), as Hudi's converter refuses them (pyspark has no type for them
    either): Hudi's writers never write them."""
    from pyspark.errors import PySparkTypeError
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = pa.schema(list(fields))
    try:
        struct = from_arrow_schema(schema, prefer_timestamp_ntz=False)
    except PySparkTypeError:
        for f in schema:
            try:
                from_arrow_schema(pa.schema([f]), prefer_timestamp_ntz=False)
            except PySparkTypeError:
                raise ValueError(f"column {f.name}: Spark has no type for Arrow's {f.type}, and Hudi's Hive sync "
                                 "writes none for it") from None
        raise
    return json.dumps(_without_metadata(struct.jsonValue()), separators=(",", ":"))


def _without_metadata(value: Any) -> Any:
    """A Spark type's JSON with every struct field's metadata emptied (nested ones too)."""
    if not isinstance(value, dict):
        return value
    kind = value.get("type")
    if kind == "struct":
        return {**value, "fields": [{**f, "type": _without_metadata(f["type"]), "metadata": {}}
                                    for f in value["fields"]]}
    if kind == "array":
        return {**value, "elementType": _without_metadata(value["elementType"])}
    if kind == "map":
        return {**value, "keyType": _without_metadata(value["keyType"]),
                "valueType": _without_metadata(value["valueType"])}
    return value
