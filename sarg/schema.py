"""Column types for typing literals: Hive type names, SARG type names, or a Hive struct type string.

``struct<event_id:int,name:string,ts:timestamp>`` is how Spark's ORC reader logs a file schema; nested structs
give dotted column names (``s.inner``), as ORC names them in a SearchArgument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from sarg.errors import SargSyntaxError
from sarg.model import Type


@dataclass(frozen=True)
class ColumnType:
    """A column's SARG type (None when no SARG type fits: binary, arrays, maps) and its Hive type text."""

    sarg_type: Type | None
    hive_type: str

    @property
    def char_length(self) -> int | None:
        """The length of a ``char(n)`` column (its values are space-padded), else None."""
        m = re.fullmatch(r"char\s*\(\s*(\d+)\s*\)", self.hive_type.strip().lower())
        return int(m.group(1)) if m else None


_SIMPLE = {
    "tinyint": Type.LONG, "smallint": Type.LONG, "int": Type.LONG, "integer": Type.LONG, "bigint": Type.LONG,
    "long": Type.LONG, "byte": Type.LONG, "short": Type.LONG,
    "float": Type.FLOAT, "double": Type.FLOAT, "double precision": Type.FLOAT, "real": Type.FLOAT,
    "string": Type.STRING, "date": Type.DATE, "timestamp": Type.TIMESTAMP, "timestamp_ntz": Type.TIMESTAMP,
    "decimal": Type.DECIMAL, "numeric": Type.DECIMAL, "boolean": Type.BOOLEAN, "bool": Type.BOOLEAN,
}
_PARAMETRIC = re.compile(r"(varchar|char|decimal|numeric)\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\)")

Schema = Mapping[str, "str | Type | ColumnType"] | str | None


def type_of(hive_type: str | Type) -> ColumnType:
    """The SARG type of one Hive (or SARG) type name."""
    if isinstance(hive_type, Type):
        return ColumnType(hive_type, hive_type.value.lower())
    text = hive_type.strip()
    low = text.lower()
    if text.upper() in Type.__members__:
        return ColumnType(Type[text.upper()], text)
    if low in _SIMPLE:
        return ColumnType(_SIMPLE[low], text)
    m = _PARAMETRIC.fullmatch(low)
    if m:
        return ColumnType(Type.DECIMAL if m.group(1) in ("decimal", "numeric") else Type.STRING, text)
    return ColumnType(None, text)


_RESOLVED = {ColumnType}


def resolve_schema(schema: Schema) -> dict[str, ColumnType]:
    """Column name -> ColumnType from a mapping, a struct type string, or None (empty: infer from text)."""
    if schema is None:
        return {}
    if isinstance(schema, str):
        return parse_struct(schema)
    if type(schema) is dict and {*map(type, schema.values())} <= _RESOLVED:
        return schema  # already resolved: passed through (its readers never change it)
    out: dict[str, ColumnType] = {}
    for name, value in schema.items():
        out[name] = value if isinstance(value, ColumnType) else type_of(value)
    return out


def lookup(columns: Mapping[str, ColumnType], name: str) -> ColumnType | None:
    """Exact name first, then case-insensitively (Hive lower-cases column names)."""
    found = columns.get(name)
    if found is not None:
        return found
    low = name.lower()
    for key, value in columns.items():
        if key.lower() == low:
            return value
    return None


def parse_struct(text: str) -> dict[str, ColumnType]:
    """Read ``struct<a:int,b:struct<c:string>>`` into {"a": ..., "b": ..., "b.c": ...}."""
    stripped = text.strip()
    if not stripped.lower().startswith("struct<") or not stripped.endswith(">"):
        raise SargSyntaxError("a schema must be a struct type, like struct<a:int,b:string>", text,
                              0, ("struct<name:type,...>",))
    offset = text.index("<") + 1
    out: dict[str, ColumnType] = {}
    _read_fields(text, offset, len(text.rstrip()) - 1, "", out)
    return out


def _split_top(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the comma-separated items between start and end, ignoring commas nested in <> or ()."""
    spans: list[tuple[int, int]] = []
    depth = 0
    item_start = start
    for i in range(start, end):
        ch = text[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
            if depth < 0:
                raise SargSyntaxError(f"unbalanced {ch!r} in schema", text, i)
        elif ch == "," and depth == 0:
            spans.append((item_start, i))
            item_start = i + 1
    if depth != 0:
        raise SargSyntaxError("unbalanced brackets in schema", text, end)
    if end > item_start or spans:
        spans.append((item_start, end))
    return spans


def _read_fields(text: str, start: int, end: int, prefix: str, out: dict[str, ColumnType]) -> None:
    for a, b in _split_top(text, start, end):
        item = text[a:b]
        colon = _field_colon(item)
        if colon < 0:
            raise SargSyntaxError("expected name:type in schema", text, a, ("name:type",))
        name = item[:colon].strip().strip("`")
        type_text = item[colon + 1:].strip()
        if not name:
            raise SargSyntaxError("empty field name in schema", text, a)
        full = f"{prefix}{name}"
        if type_text.lower().startswith("struct<") and type_text.endswith(">"):
            out[full] = ColumnType(None, type_text)
            inner_start = a + colon + 1 + (len(item[colon + 1:]) - len(item[colon + 1:].lstrip()))
            inner_start = text.index("<", inner_start) + 1
            inner_end = a + colon + 1 + len(item[colon + 1:].rstrip()) - 1
            _read_fields(text, inner_start, inner_end, f"{full}.", out)
        else:
            out[full] = type_of(type_text)


def _field_colon(item: str) -> int:
    if item.lstrip().startswith("`"):
        first = item.index("`")
        close = item.find("`", first + 1)
        return item.find(":", close + 1) if close >= 0 else -1
    return item.find(":")
