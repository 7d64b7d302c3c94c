"""The parquet footer's thrift, for the statistics pyarrow does not expose: each column chunk's
``Statistics.nan_count`` (parquet-format's ``parquet.thrift``, ``Statistics`` field 9, ``optional i64``).

The footer (``FileMetaData``, thrift compact protocol) is decoded by the ``thrift`` package (its C decoder,
``fastbinary``, when it is built; its Python one otherwise) through minimal struct declarations holding only
the fields read here: every other field is skipped by the decoder. Knows nothing of tables:
:mod:`hive_bridge.formats.parquet_footer` combines the counts over row groups.

A footer that does not decode raises :class:`FooterThriftError`, naming the file and what is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from thrift.protocol.TBase import TBase
from thrift.protocol.TCompactProtocol import TCompactProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

from hive_bridge.errors import HudiTableError

__all__ = ["ChunkStatistics", "FooterThriftError", "chunk_statistics", "nan_counts"]

try:  # thrift's C decoder (what its accelerated protocols call), built with the package on most platforms
    from thrift.protocol.fastbinary import decode_compact as _decode_compact
except ImportError:  # pragma: no cover - the pure-Python decoder
    _decode_compact = None


class FooterThriftError(HudiTableError):
    """A parquet footer whose thrift does not decode; the message names the file and the reason."""


class _Struct(TBase):  # type: ignore[misc]
    """A thrift struct of the fields in ``thrift_spec`` (the decoder builds it with keyword arguments; a field
    the footer lacks reads as the class attribute None)."""

    thrift_spec: tuple[Any, ...] = ()

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def _declare(cls: type[_Struct], *fields: tuple[Any, ...]) -> None:
    """Give ``cls`` its thrift_spec (indexed by field id) from (id, type, name, type arguments) entries, and a
    None default for each field."""
    out: list[Any] = [None] * (max(f[0] for f in fields) + 1)
    for fid, ttype, name, args in fields:
        out[fid] = (fid, ttype, name, args, None)
        setattr(cls, name, None)
    cls.thrift_spec = tuple(out)


class _Statistics(_Struct):
    pass


class _ColumnMetaData(_Struct):
    pass


class _ColumnChunk(_Struct):
    pass


class _RowGroup(_Struct):
    pass


class _FileMetaData(_Struct):
    pass


# parquet.thrift's field ids; only what is read here
_declare(_Statistics,
         (1, TType.STRING, "max", "BINARY"), (2, TType.STRING, "min", "BINARY"), (3, TType.I64, "null_count", None),
         (5, TType.STRING, "max_value", "BINARY"), (6, TType.STRING, "min_value", "BINARY"),
         (9, TType.I64, "nan_count", None))
_declare(_ColumnMetaData,
         (1, TType.I32, "type", None), (3, TType.LIST, "path_in_schema", (TType.STRING, "UTF8", False)),
         (12, TType.STRUCT, "statistics", [_Statistics, _Statistics.thrift_spec]))
_declare(_ColumnChunk, (3, TType.STRUCT, "meta_data", [_ColumnMetaData, _ColumnMetaData.thrift_spec]))
_declare(_RowGroup,
         (1, TType.LIST, "columns", (TType.STRUCT, [_ColumnChunk, _ColumnChunk.thrift_spec], False)),
         (3, TType.I64, "num_rows", None))
_declare(_FileMetaData,
         (3, TType.I64, "num_rows", None),
         (4, TType.LIST, "row_groups", (TType.STRUCT, [_RowGroup, _RowGroup.thrift_spec], False)))


# the same path holding nan_count alone: what the footer read path decodes (fewer objects made per chunk)
class _NanStatistics(_Struct):
    pass


class _NanColumnMetaData(_Struct):
    pass


class _NanColumnChunk(_Struct):
    pass


class _NanRowGroup(_Struct):
    pass


class _NanFileMetaData(_Struct):
    pass


_declare(_NanStatistics, (9, TType.I64, "nan_count", None))
_declare(_NanColumnMetaData, (12, TType.STRUCT, "statistics", [_NanStatistics, _NanStatistics.thrift_spec]))
_declare(_NanColumnChunk, (3, TType.STRUCT, "meta_data", [_NanColumnMetaData, _NanColumnMetaData.thrift_spec]))
_declare(_NanRowGroup, (1, TType.LIST, "columns", (TType.STRUCT, [_NanColumnChunk, _NanColumnChunk.thrift_spec],
                                                   False)))
_declare(_NanFileMetaData, (4, TType.LIST, "row_groups", (TType.STRUCT, [_NanRowGroup, _NanRowGroup.thrift_spec],
                                                          False)))


@dataclass(frozen=True)
class ChunkStatistics:
    """One column chunk's statistics as the footer holds them (None = the field is absent)."""

    path: str
    null_count: int | None
    nan_count: int | None
    has_min_max: bool


def _decode(footer: bytes | memoryview, where: str, cls: type[_Struct] = _FileMetaData) -> Any:
    md = cls()
    protocol = TCompactProtocol(TMemoryBuffer(bytes(footer)))
    try:
        if _decode_compact is not None:
            _decode_compact(md, protocol, [cls, cls.thrift_spec])
        else:
            md.read(protocol)
    except Exception as exc:  # the decoders raise many types (EOFError, TProtocolException, ValueError, ...)
        raise FooterThriftError(f"{where}: parquet footer does not decode as thrift: "
                                f"{type(exc).__name__}: {exc}") from None
    if not isinstance(md.row_groups, list):
        raise FooterThriftError(f"{where}: parquet footer has no row groups list")
    return md


def _chunks(md: Any, where: str) -> list[list[Any]]:
    out: list[list[Any]] = []
    for g, rg in enumerate(md.row_groups):
        if rg is None or not isinstance(rg.columns, list):
            raise FooterThriftError(f"{where}: row group {g} of the parquet footer has no columns list")
        stats: list[Any] = []
        for chunk in rg.columns:
            meta = None if chunk is None else chunk.meta_data
            stats.append(None if meta is None else meta.statistics)
        out.append(stats)
    return out


def chunk_statistics(footer: bytes | memoryview, where: str = "parquet footer") -> list[list[ChunkStatistics]]:
    """Every column chunk's statistics, per row group (row group, then column order), from the footer's bytes
    (the thrift ``FileMetaData``, without the length and magic that follow it in the file)."""
    md = _decode(footer, where)
    out: list[list[ChunkStatistics]] = []
    for rg in md.row_groups:
        row: list[ChunkStatistics] = []
        for chunk in rg.columns or []:
            meta = None if chunk is None else chunk.meta_data
            st = None if meta is None else meta.statistics
            path = ".".join(meta.path_in_schema or []) if meta is not None else ""
            if st is None:
                row.append(ChunkStatistics(path, None, None, False))
                continue
            has = (st.min_value is not None and st.max_value is not None) or (st.min is not None and
                                                                               st.max is not None)
            row.append(ChunkStatistics(path, st.null_count, st.nan_count, has))
        out.append(row)
    return out


def nan_counts(footer: bytes | memoryview, columns: Sequence[int], row_group_rows: Sequence[int],
               where: str = "parquet footer") -> list[int | None]:
    """The NaN count of each of ``columns`` (parquet column indexes) over the file: the sum of its chunks'
    ``nan_count``; None (unknown) when a chunk with rows lacks one. ``row_group_rows``: each row group's row
    count as pyarrow read it (a footer whose row groups differ from it raises)."""
    chunks = _chunks(_decode(footer, where, _NanFileMetaData), where)
    if len(chunks) != len(row_group_rows):
        raise FooterThriftError(f"{where}: the parquet footer has {len(chunks)} row groups, pyarrow read "
                                f"{len(row_group_rows)}")
    out: list[int | None] = []
    for c in columns:
        total: int | None = 0
        for g, stats in enumerate(chunks):
            if row_group_rows[g] == 0:
                continue
            if c >= len(stats):
                raise FooterThriftError(f"{where}: row group {g} of the parquet footer has {len(stats)} "
                                        f"columns, not {c + 1}")
            st = stats[c]
            count = None if st is None else st.nan_count
            if not isinstance(count, int) or count < 0 or count > row_group_rows[g]:
                total = None
                break
            total += count  # type: ignore[operator]
        out.append(total)
    return out
