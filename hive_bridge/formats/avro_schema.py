"""Avro <-> Arrow schema conversion for the schemas Hudi records in commit metadata and hoodie.properties."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from hive_bridge.errors import HudiTableError


def avro_to_arrow_schema(schema_json: str) -> pa.Schema:
    try:
        schema = json.loads(schema_json.replace("\\:", ":"))
    except ValueError as exc:
        raise HudiTableError(f"table schema is not valid Avro JSON: {exc}") from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise HudiTableError("table schema is not an Avro record")
    return pa.schema([_avro_field(f) for f in schema.get("fields", [])])


def _avro_field(field: dict[str, Any]) -> pa.Field:
    typ, nullable = _avro_type(field["type"])
    return pa.field(field["name"], typ, nullable=nullable)


def _avro_type(t: Any) -> tuple[pa.DataType, bool]:
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        if len(non_null) != 1:
            raise HudiTableError(f"unsupported Avro union {t!r}")
        inner, _ = _avro_type(non_null[0])
        return inner, True
    if isinstance(t, str):
        simple = {
            "int": pa.int32(), "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
            "boolean": pa.bool_(), "string": pa.string(), "bytes": pa.binary(), "null": pa.null(),
        }
        if t in simple:
            return simple[t], False
        raise HudiTableError(f"unsupported Avro type {t!r}")
    if not isinstance(t, dict):
        raise HudiTableError(f"unsupported Avro type {t!r}")
    logical = t.get("logicalType")
    base = t.get("type")
    if logical == "decimal":
        return pa.decimal128(int(t["precision"]), int(t.get("scale", 0))), False
    if logical == "date":
        return pa.date32(), False
    if logical == "timestamp-millis":
        return pa.timestamp("ms", tz="UTC"), False
    if logical == "timestamp-micros":
        return pa.timestamp("us", tz="UTC"), False
    if logical == "local-timestamp-millis":
        return pa.timestamp("ms"), False
    if logical == "local-timestamp-micros":
        return pa.timestamp("us"), False
    if base == "record":
        return pa.struct([_avro_field(f) for f in t.get("fields", [])]), False
    if base == "array":
        item, nullable = _avro_type(t["items"])
        return pa.list_(pa.field("element", item, nullable=nullable)), False
    if base == "map":
        value, _ = _avro_type(t["values"])
        return pa.map_(pa.string(), value), False
    if base == "fixed":
        return pa.binary(int(t["size"])), False
    if base == "enum":
        return pa.string(), False
    if isinstance(base, str | list | dict):
        return _avro_type(base)
    raise HudiTableError(f"unsupported Avro type {t!r}")


def arrow_to_avro_schema(schema: pa.Schema, name: str, namespace: str) -> dict[str, Any]:
    """An Avro record schema (every field nullable, as Spark writes Hudi tables) for an Arrow schema."""
    counter = [0]

    def conv(typ: pa.DataType, path: str) -> Any:
        if pa.types.is_int8(typ) or pa.types.is_int16(typ) or pa.types.is_int32(typ):
            return "int"
        if pa.types.is_int64(typ):
            return "long"
        if pa.types.is_float32(typ):
            return "float"
        if pa.types.is_float64(typ):
            return "double"
        if pa.types.is_boolean(typ):
            return "boolean"
        if pa.types.is_string(typ) or pa.types.is_large_string(typ):
            return "string"
        if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
            return "bytes"
        if pa.types.is_date32(typ):
            return {"type": "int", "logicalType": "date"}
        if pa.types.is_timestamp(typ):
            unit = "millis" if typ.unit in ("s", "ms") else "micros"
            prefix = "timestamp" if typ.tz else "local-timestamp"
            return {"type": "long", "logicalType": f"{prefix}-{unit}"}
        if pa.types.is_decimal(typ):
            counter[0] += 1
            size = _decimal_bytes(typ.precision)
            return {"type": "fixed", "name": "fixed", "namespace": f"{namespace}.{name}.{path}", "size": size,
                    "logicalType": "decimal", "precision": typ.precision, "scale": typ.scale}
        if pa.types.is_struct(typ):
            return {"type": "record", "name": path.rsplit(".", 1)[-1], "namespace": f"{namespace}.{name}",
                    "fields": [{"name": f.name, "type": ["null", conv(f.type, f"{path}.{f.name}")],
                                "default": None} for f in typ]}
        if pa.types.is_list(typ) or pa.types.is_large_list(typ):
            return {"type": "array", "items": ["null", conv(typ.value_type, path)]}
        if pa.types.is_map(typ):
            return {"type": "map", "values": ["null", conv(typ.item_type, path)]}
        raise HudiTableError(f"cannot record Arrow type {typ} in an Avro schema")

    return {
        "type": "record",
        "name": name,
        "namespace": namespace,
        "fields": [{"name": f.name, "type": ["null", conv(f.type, f.name)], "default": None} for f in schema],
    }


def _decimal_bytes(precision: int) -> int:
    size = 1
    while 2 ** (8 * size - 1) <= 10**precision:
        size += 1
    return size
