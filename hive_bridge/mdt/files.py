"""The metadata table's ``files`` records decoded without an object per file.

A ``files`` record (one per data partition, plus ``__all_partitions__``) maps every file name of the partition
to a ``HoodieMetadataFileInfo`` (size, isDeleted): 1,000 entries a record, 100,000 for a table of that many
files. fastavro builds a dict per entry (1.3 µs each); listing the table needs only the names and sizes. Here a
record is decoded by a plan compiled from the writer schema once: the fields before and after the map are read
as fastavro reads them (strings, ints, booleans, nullable primitives; unions whose other branches are records
must take their null branch), the map's entries into three lists, kept as a read-only mapping
(:class:`FileInfos`) that answers like fastavro's dict of dicts.

Anything else -- a schema of another shape, a branch not null where the plan wants it, a boolean that is not 0
or 1, a duplicate name, bytes that do not add up to exactly one record, a name that is not UTF-8 -- makes
:func:`decode_files_record` return None: the caller then decodes the value with fastavro, which reads it or says
what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = ["FileInfos", "decode_files_record", "files_plan"]

_STR, _INT, _BOOL, _OPT, _NULL_ONLY, _FILES = range(6)
_PRIMITIVE_KINDS = {"string": _STR, "int": _INT, "long": _INT, "boolean": _BOOL}
FILES_FIELD = "filesystemMetadata"


class FileInfos(Mapping[str, dict[str, Any]]):
    """A ``files`` record's map: file name -> ``{"size": int, "isDeleted": bool}`` (made when looked up), held
    as the names, the sizes and one isDeleted byte per file, in the map's order."""

    __slots__ = ("_index", "deleted", "names", "sizes")

    def __init__(self, names: list[str], sizes: list[int], deleted: bytes, index: dict[str, int]) -> None:
        self.names = names
        self.sizes = sizes
        self.deleted = deleted
        self._index = index

    def __getitem__(self, name: str) -> dict[str, Any]:
        i = self._index[name]
        return {"size": self.sizes[i], "isDeleted": bool(self.deleted[i])}

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"FileInfos({len(self.names)} files)"

    def live_sizes(self) -> dict[str, int]:
        """File name -> size of the entries that are not deletions."""
        if not any(self.deleted):
            return dict(zip(self.names, self.sizes, strict=True))
        return {n: s for n, s, d in zip(self.names, self.sizes, self.deleted, strict=True) if not d}


def _kind_of(schema: Any) -> int | None:
    if isinstance(schema, dict) and not schema.get("logicalType"):
        schema = schema.get("type")
    return _PRIMITIVE_KINDS.get(schema) if isinstance(schema, str) else None


def _is_file_info_map(schema: Any) -> bool:
    """A map of records ``{size: long, isDeleted: boolean}``, in that order (``HoodieMetadataFileInfo``)."""
    if not isinstance(schema, dict) or schema.get("type") != "map":
        return False
    values = schema.get("values")
    if not isinstance(values, dict) or values.get("type") != "record":
        return False
    fields = values.get("fields")
    if not isinstance(fields, list) or len(fields) != 2:
        return False
    return [(f.get("name"), _kind_of(f.get("type"))) for f in fields] == [("size", _INT), ("isDeleted", _BOOL)]


@lru_cache(maxsize=16)
def files_plan(schema_json: str) -> tuple[tuple[str, int, Any], ...] | None:
    """How to read a record of this writer schema: (field, kind, argument) for each field; None when the schema
    has another shape than the metadata record's (then fastavro reads every value)."""
    try:
        schema = json.loads(schema_json)
    except ValueError:
        return None
    if not isinstance(schema, dict) or schema.get("type") != "record" or not isinstance(schema.get("fields"), list):
        return None
    plan: list[tuple[str, int, Any]] = []
    has_files = False
    for f in schema["fields"]:
        name, typ = f.get("name"), f.get("type")
        if not isinstance(name, str):
            return None
        kind = _kind_of(typ)
        if kind is not None:
            plan.append((name, kind, None))
            continue
        if not isinstance(typ, list) or "null" not in typ:
            return None
        null_at = typ.index("null")
        others = [(i, t) for i, t in enumerate(typ) if i != null_at]
        if name == FILES_FIELD and len(others) == 1 and _is_file_info_map(others[0][1]):
            plan.append((name, _FILES, (null_at, others[0][0])))
            has_files = True
        elif len(others) == 1 and _kind_of(others[0][1]) is not None:
            plan.append((name, _OPT, (null_at, others[0][0], _kind_of(others[0][1]))))
        else:
            plan.append((name, _NULL_ONLY, null_at))
    return tuple(plan) if has_files else None


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint at ``pos``: (value, position after it). IndexError past the end, and for a varint whose
    value does not fit in 64 bits (fastavro wraps those: it decides)."""
    b = data[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    n = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            if n >> 64:
                raise IndexError("varint wider than 64 bits")
            return (n >> 1) ^ -(n & 1), pos
        shift += 7
        if shift > 63:
            raise IndexError("varint longer than 10 bytes")


def _primitive(data: bytes, pos: int, kind: int) -> tuple[Any, int]:
    if kind == _STR:
        n, pos = _varint(data, pos)
        if n < 0 or pos + n > len(data):
            raise IndexError("string runs past the value")
        return data[pos:pos + n].decode("utf-8"), pos + n
    if kind == _INT:
        return _varint(data, pos)
    b = data[pos]
    if b > 1:
        raise IndexError("boolean is not 0 or 1")
    return bool(b), pos + 1


def _file_infos(data: bytes, pos: int) -> tuple[FileInfos, int]:
    names: list[bytes] = []
    sizes: list[int] = []
    flags = bytearray()
    add_name, add_size, add_flag = names.append, sizes.append, flags.append
    while True:
        count, pos = _varint(data, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _varint(data, pos)             # the block's byte size
        for _ in range(count):
            n, pos = _varint(data, pos)             # the name: its length and UTF-8 bytes
            if n < 0:
                raise IndexError("negative name length")
            end = pos + n
            add_name(data[pos:end])
            size, pos = _varint(data, end)
            add_size(size)
            add_flag(data[pos])
            pos += 1
    if flags and max(flags) > 1:
        raise IndexError("isDeleted is not 0 or 1")
    joined = b"\x00".join(names).decode("utf-8")
    text = joined.split("\x00") if names else []
    if len(text) != len(names):                     # a name with a NUL byte in it: one by one
        text = [n.decode("utf-8") for n in names]
    index = dict(zip(text, range(len(text)), strict=True))
    if len(index) != len(text):
        raise IndexError("a file name twice in one map")
    return FileInfos(text, sizes, bytes(flags), index), pos


def decode_files_record(data: bytes, plan: tuple[tuple[str, int, Any], ...]) -> dict[str, Any] | None:
    """One metadata record read by ``plan`` (:func:`files_plan`), as fastavro reads it (``filesystemMetadata``
    as :class:`FileInfos`); None when it is not a record the plan reads (fastavro decides)."""
    rec: dict[str, Any] = {}
    pos = 0
    try:
        for name, kind, arg in plan:
            if kind <= _BOOL:
                rec[name], pos = _primitive(data, pos, kind)
            elif kind == _NULL_ONLY:
                branch, pos = _varint(data, pos)
                if branch != arg:
                    return None
                rec[name] = None
            elif kind == _OPT:
                branch, pos = _varint(data, pos)
                if branch == arg[0]:
                    rec[name] = None
                elif branch == arg[1]:
                    rec[name], pos = _primitive(data, pos, arg[2])
                else:
                    return None
            else:                                   # _FILES
                branch, pos = _varint(data, pos)
                if branch == arg[0]:
                    rec[name] = None
                elif branch == arg[1]:
                    rec[name], pos = _file_infos(data, pos)
                else:
                    return None
    except (IndexError, UnicodeDecodeError):
        return None
    return rec if pos == len(data) else None
