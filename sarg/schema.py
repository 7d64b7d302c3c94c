"""Column types for typing literals: Hive type names, SARG type names, or a Hive struct type string.

``struct<event_id:int,name:string,ts:timestamp>`` is how Spark's ORC reader logs a file schema; nested structs
give dotted column names (``s.inner``), as ORC names them in a SearchArgument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

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
V = TypeVar("V")


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


def find_column(columns: Mapping[str, V], name: str) -> tuple[str, V] | None:
    """The column ``name`` means in ``columns``, as (the schema's spelling of the name, its value).

    The one rule for column names in sarg (Hive column names are case-insensitive: Hive lower-cases them, while
    ORC files and Spark schemas may keep the writer's case, ORC-670, SPARK-32646):

    1. a column spelled exactly ``name``;
    2. else the one column whose name equals ``name`` ignoring case;
    3. else None: no such column, or several that differ only in case (ambiguous: which one is meant is
       unknown, so the caller treats the column as unknown, which never drops rows).
    """
    if name in columns:
        return name, columns[name]
    low = name.lower()
    found: tuple[str, V] | None = None
    for key, value in columns.items():
        if key.lower() == low:
            if found is not None:
                return None  # ambiguous
            found = (key, value)
    return found


def lookup(columns: Mapping[str, ColumnType], name: str) -> ColumnType | None:
    """The type of the column ``name`` means (see :func:`find_column` for the rule), or None."""
    found = columns.get(name)
    if found is not None:
        return found
    hit = find_column(columns, name)
    return hit[1] if hit is not None else None


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


def split_type_list(text: str) -> list[str]:
    """The types of a Hive type list: ``columns.types`` (``:``-separated, or ``,``-separated), with the
    separators inside ``decimal(10,2)``, ``struct<a:int,b:string>``, ``map<k,v>`` or ``array<...>`` kept.

    Items are stripped and empty ones dropped (``"int::string"`` is ``["int", "string"]``); unbalanced brackets
    are not an error here (the text in them stays one item, whose type then has no SARG type)."""
    return [item for a, b in _top_level_spans(text, 0, len(text), ":,", strict=False)
            if (item := text[a:b].strip())]


def columns_from_hive(names: str, types: str) -> dict[str, str]:
    """A schema from Hive's ``columns`` (comma-separated) and ``columns.types`` (colon-separated, commas inside
    ``decimal(10,2)`` and ``<...>`` kept) job properties."""
    name_list = [n.strip() for n in names.split(",")] if names.strip() else []
    type_list = split_type_list(types)
    if len(name_list) != len(type_list):
        raise SargSyntaxError(f"{len(name_list)} columns but {len(type_list)} types", types, 0)
    return dict(zip(name_list, type_list, strict=True))


def _top_level_spans(text: str, start: int, end: int, separators: str, strict: bool) -> list[tuple[int, int]]:
    """Spans of the items between start and end separated by any of ``separators`` outside ``<>`` and ``()``
    (the one splitter of type lists). ``strict``: unbalanced brackets raise a SargSyntaxError."""
    spans: list[tuple[int, int]] = []
    depth = 0
    item_start = start
    for i in range(start, end):
        ch = text[i]
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
            if depth < 0 and strict:
                raise SargSyntaxError(f"unbalanced {ch!r} in schema", text, i)
        elif depth == 0 and ch in separators:
            spans.append((item_start, i))
            item_start = i + 1
    if depth != 0 and strict:
        raise SargSyntaxError("unbalanced brackets in schema", text, end)
    if end > item_start or spans:
        spans.append((item_start, end))
    return spans


@dataclass(frozen=True)
class HiveType:
    """A Hive type string read into a tree: ``name`` in lower case (``int``, ``decimal``, ``array``, ``map``,
    ``struct``, ...), ``params`` (the numbers in parentheses: ``decimal(10,2)`` is (10, 2), ``varchar(5)`` (5,)),
    ``args`` (the types in angle brackets: an array's element, a map's key and value) and ``fields`` (a struct's
    (name, type) pairs; ``args`` is empty for a struct)."""

    name: str
    params: tuple[int, ...] = ()
    args: tuple[HiveType, ...] = ()
    fields: tuple[tuple[str, HiveType], ...] = ()


_TYPE_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*")


def parse_type(text: str) -> HiveType:
    """Read one Hive type string (``map<string,array<struct<`a b`:int,c:decimal(10,2)>>>``) into a
    :class:`HiveType`, with the one splitter of type lists (commas inside ``()`` and ``<>`` kept). Any type name
    is read (what it means is the caller's); ``struct`` takes ``name:type`` fields (names may be back-quoted).
    SargSyntaxError where the text is not one type."""
    return _parse_type(text, 0, len(text))


def _parse_type(text: str, start: int, end: int) -> HiveType:
    m = _TYPE_NAME.match(text, start, end)
    if m is None:
        raise SargSyntaxError("expected a type name", text, start, ("type",))
    name, pos = m.group(1).lower(), m.end()
    params: tuple[int, ...] = ()
    if pos < end and text[pos] == "(":
        close = text.find(")", pos, end)
        if close < 0:
            raise SargSyntaxError("unbalanced '(' in type", text, pos)
        try:
            params = tuple(int(p) for p in text[pos + 1:close].split(","))
        except ValueError:
            raise SargSyntaxError(f"type parameters are numbers: {text[pos:close + 1]!r}", text, pos) from None
        pos = close + 1
        while pos < end and text[pos].isspace():
            pos += 1
    if pos < end and text[pos] == "<":
        close = len(text[:end].rstrip()) - 1
        if close <= pos or text[close] != ">":
            raise SargSyntaxError("unbalanced '<' in type", text, pos)
        spans = _top_level_spans(text, pos + 1, close, ",", strict=True)
        if name == "struct":
            return HiveType(name, params, fields=tuple(_parse_field(text, a, b) for a, b in spans))
        args = tuple(_parse_type(text, a, b) for a, b in spans)
        if (name == "array" and len(args) != 1) or (name == "map" and len(args) != 2):
            raise SargSyntaxError(f"{name} takes {1 if name == 'array' else 2} type(s), not {len(args)}", text, pos)
        return HiveType(name, params, args)
    if text[pos:end].strip():
        raise SargSyntaxError(f"unexpected {text[pos:end].strip()!r} after a type", text, pos)
    if name in ("array", "map", "struct"):
        raise SargSyntaxError(f"{name} needs its types in <...>", text, pos, ("<",))
    return HiveType(name, params)


def _parse_field(text: str, start: int, end: int) -> tuple[str, HiveType]:
    item = text[start:end]
    colon = _field_colon(item)
    name = item[:colon].strip().strip("`") if colon >= 0 else ""
    if not name:
        raise SargSyntaxError("expected name:type in struct", text, start, ("name:type",))
    return name, _parse_type(text, start + colon + 1, end)


def _read_fields(text: str, start: int, end: int, prefix: str, out: dict[str, ColumnType]) -> None:
    for a, b in _top_level_spans(text, start, end, ",", strict=True):
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
