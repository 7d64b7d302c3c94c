"""The fixed HFile trailer: the last :data:`~hive_bridge.formats.hfile.blocks.TRAILER_SIZE` bytes, the magic
``TRABLK"$``, a length-delimited ``TrailerProto``, zero padding and the int32 version (first byte minor, last
three bytes major). :func:`parse_trailer` checks and decodes it; :func:`trailer_problem` is the quick check of a
file's tail that needs no parsing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hive_bridge.formats.hfile.blocks import (
    ROW_ORDER_COMPARATORS,
    TRAILER_MAGIC,
    TRAILER_SIZE,
    VERSION_SIZE,
    Codec,
    ParseError,
    pb_fields,
    pb_varint,
)

__all__ = ["HFileTrailer", "parse_trailer", "trailer_problem"]


@dataclass(frozen=True, slots=True)
class HFileTrailer:
    """The fixed trailer (``TrailerProto`` plus the version), as stored; offsets -1 where unset."""

    major_version: int
    minor_version: int
    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    num_data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    codec: int


_TRAILER_FIELDS = {
    1: "file_info_offset", 2: "load_on_open_offset", 3: "uncompressed_data_index_size",
    4: "total_uncompressed_bytes", 5: "data_index_count", 6: "meta_index_count", 7: "entry_count",
    8: "num_data_index_levels", 9: "first_data_block_offset", 10: "last_data_block_offset",
    11: "comparator", 12: "codec", 13: "encryption_key",
}


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def parse_trailer(tail: bytes | memoryview, size: int) -> HFileTrailer:
    """The trailer of a file of ``size`` bytes from its last :data:`TRAILER_SIZE` bytes ``tail`` (all of a
    shorter file); raises :class:`ParseError`."""
    if size < TRAILER_SIZE:
        raise ParseError(0, f"file of {size} bytes is shorter than the {TRAILER_SIZE}-byte HFile trailer "
                      "(truncated, or not an HFile)")
    base = size - TRAILER_SIZE
    t = tail
    if bytes(t[:8]) != TRAILER_MAGIC:
        raise ParseError(base, f"trailer magic is {bytes(t[:8])!r}, not {TRAILER_MAGIC!r} (truncated, or not an HFile)")
    minor = t[TRAILER_SIZE - 4]
    major = int.from_bytes(t[TRAILER_SIZE - 3:], "big")
    if major != 3:
        raise ParseError(size - 4, f"HFile version {major}.{minor} is not supported (only major version 3)")
    end = TRAILER_SIZE - VERSION_SIZE
    n, pos = pb_varint(t, 8, end, base)
    if n > end - pos:
        raise ParseError(base + 8, f"trailer protobuf of {n} bytes does not fit in the trailer")
    fields = pb_fields(t, pos, pos + n, base)
    padding = bytes(t[pos + n:end])
    if padding.count(0) != len(padding):
        first = next(i for i, b in enumerate(padding) if b)
        raise ParseError(base + pos + n + first, "trailer padding is not zero")
    values: dict[str, Any] = {}
    for number, at, value in fields:
        name = _TRAILER_FIELDS.get(number)
        if name is None:
            continue
        if name in values:
            raise ParseError(base + at, f"trailer field {name} appears twice")
        if (name == "comparator") != isinstance(value, bytes) and name != "encryption_key":
            raise ParseError(base + at, f"trailer field {name} has the wrong protobuf type")
        values[name] = value
    if values.get("encryption_key"):
        raise ParseError(base, "encrypted HFiles are not supported")
    for required in ("file_info_offset", "load_on_open_offset", "entry_count"):
        if required not in values:
            raise ParseError(base, f"trailer has no {required}")
    try:
        comparator = values.get("comparator", b"").decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError(base, "trailer comparator class name is not UTF-8") from None
    if comparator and comparator not in ROW_ORDER_COMPARATORS:
        raise ParseError(base, f"comparator {comparator!r} is not one whose key order this reader knows")
    return HFileTrailer(
        major_version=major,
        minor_version=minor,
        file_info_offset=_signed64(values["file_info_offset"]),
        load_on_open_offset=_signed64(values["load_on_open_offset"]),
        uncompressed_data_index_size=values.get("uncompressed_data_index_size", 0),
        total_uncompressed_bytes=values.get("total_uncompressed_bytes", 0),
        data_index_count=values.get("data_index_count", 0),
        meta_index_count=values.get("meta_index_count", 0),
        entry_count=values["entry_count"],
        num_data_index_levels=values.get("num_data_index_levels", 1),
        first_data_block_offset=_signed64(values.get("first_data_block_offset", (1 << 64) - 1)),
        last_data_block_offset=_signed64(values.get("last_data_block_offset", (1 << 64) - 1)),
        comparator=comparator,
        codec=values.get("codec", Codec.NONE),
    )



def trailer_problem(tail: bytes | memoryview, size: int) -> str | None:
    """What is wrong, at a glance, with the last :data:`TRAILER_SIZE` bytes ``tail`` of a file of ``size`` bytes
    that should be an HFile (too short, or no trailer magic), or None: a cheap check that a file is whole before
    it is read (the trailer itself is parsed, and everything checked, by the reader)."""
    if size < TRAILER_SIZE:
        return f"HFile of {size} bytes is shorter than its trailer (truncated)"
    if bytes(tail[:len(TRAILER_MAGIC)]) != TRAILER_MAGIC:
        return "no HFile trailer at the end of the file (truncated or damaged)"
    return None
