"""Parquet files whose footer carries ``Statistics.nan_count`` (parquet.thrift field 9), as current
parquet-java writes it and pyarrow does not: a pyarrow-written file's footer is copied field by field with the
thrift compact protocol, each float/double column chunk's statistics given the NaN count of its values.

Only the footer changes (the data pages and every offset stay as they are), so the file reads the same.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from thrift.protocol.TCompactProtocol import TCompactProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

__all__ = ["CREATED_BY", "chunk_nan_counts", "footer_bytes", "give_base_files_nan_counts", "with_nan_counts"]

#: field ids on the way from FileMetaData to a column chunk's Statistics: row_groups, columns, meta_data,
#: statistics
_ROW_GROUP, _CHUNK, _STATS = (4,), (4, 1), (4, 1, 3, 12)
NAN_COUNT_FIELD = 9
CREATED_BY_FIELD = 6        # FileMetaData.created_by

#: (row group, parquet column index) -> the NaN count to write there (None: write none)
Counts = Callable[[int, int], int | None]


def footer_bytes(data: bytes) -> bytes:
    """The thrift FileMetaData of a whole parquet file's bytes."""
    length = struct.unpack_from("<i", data, len(data) - 8)[0]
    return data[len(data) - 8 - length: len(data) - 8]


def chunk_nan_counts(data: bytes) -> dict[tuple[int, int], int]:
    """The NaN count of every FLOAT/DOUBLE column chunk of a parquet file, by (row group, column index)."""
    pf = pq.ParquetFile(pa.BufferReader(data))
    md = pf.metadata
    out: dict[tuple[int, int], int] = {}
    floats = [i for i in range(md.num_columns) if md.schema.column(i).physical_type in ("FLOAT", "DOUBLE")]
    arrow_leaves = {md.schema.column(i).path: i for i in floats}
    for g in range(md.num_row_groups):
        if not floats:
            break
        table = pf.read_row_group(g)
        flat = table.flatten()
        while any(pa.types.is_struct(f.type) for f in flat.schema):
            flat = flat.flatten()
        for name, i in arrow_leaves.items():
            if name in flat.column_names:
                out[(g, i)] = int(pc.sum(pc.fill_null(pc.is_nan(flat.column(name)), False)).as_py() or 0)
    return out


#: the writer named in the footers written here: a parquet-java that writes NaN counts
CREATED_BY = "parquet-mr version 1.18.0 (build hive-bridge-test)"


def with_nan_counts(data: bytes, counts: Counts | None = None, created_by: str = CREATED_BY) -> bytes:
    """``data`` (a whole parquet file) with a footer whose column-chunk statistics carry ``nan_count``:
    ``counts(row group, column)`` where given (None: none written), else the chunk's true NaN count for every
    FLOAT/DOUBLE chunk; the footer's ``created_by`` is `created_by` (a writer that writes NaN counts)."""
    if counts is None:
        true_counts = chunk_nan_counts(data)

        def counts(g: int, c: int) -> int | None:
            return true_counts.get((g, c))

    footer = footer_bytes(data)
    src = TCompactProtocol(TMemoryBuffer(footer))
    sink = TMemoryBuffer()
    dst = TCompactProtocol(sink)
    where = {"group": -1, "column": -1}
    _copy_struct(src, dst, (), counts, where, created_by)
    new = bytes(sink.getvalue())
    head = data[: len(data) - 8 - len(footer)]
    return head + new + struct.pack("<i", len(new)) + b"PAR1"


def give_base_files_nan_counts(root: str | os.PathLike[str]) -> None:
    """Rewrite every latest base file of the Hudi table at ``root`` in place with :func:`with_nan_counts` (true
    counts, a writer that writes them): the table as a current parquet-java would have written it."""
    from hive_bridge.table.table import HudiTable

    for s in HudiTable.open(str(root)).latest_file_slices():
        if s.base_file is not None:
            path = Path(s.base_file.full_path)
            path.write_bytes(with_nan_counts(path.read_bytes()))


def _copy_struct(src: TCompactProtocol, dst: TCompactProtocol, path: tuple[int, ...], counts: Counts,
                 where: dict[str, int], created_by: str | None = None) -> None:
    if path == _ROW_GROUP:
        where["group"] += 1
        where["column"] = -1
    elif path == _CHUNK:
        where["column"] += 1
    src.readStructBegin()
    dst.writeStructBegin("s")
    while True:
        _name, ttype, fid = src.readFieldBegin()
        if ttype == TType.STOP:
            break
        if (path == _STATS and fid == NAN_COUNT_FIELD) or (path == () and fid == CREATED_BY_FIELD):
            src.skip(ttype)       # replaced below
            src.readFieldEnd()
            continue
        dst.writeFieldBegin("f", ttype, fid)
        _copy_value(src, dst, ttype, (*path, fid), counts, where)
        dst.writeFieldEnd()
        src.readFieldEnd()
    if path == () and created_by is not None:
        dst.writeFieldBegin("created_by", TType.STRING, CREATED_BY_FIELD)
        dst.writeString(created_by)
        dst.writeFieldEnd()
    if path == _STATS:
        count = counts(where["group"], where["column"])
        if count is not None:
            dst.writeFieldBegin("nan_count", TType.I64, NAN_COUNT_FIELD)
            dst.writeI64(count)
            dst.writeFieldEnd()
    dst.writeFieldStop()
    dst.writeStructEnd()
    src.readStructEnd()


_SCALARS: dict[int, tuple[str, str]] = {
    TType.BOOL: ("readBool", "writeBool"), TType.BYTE: ("readByte", "writeByte"),
    TType.I16: ("readI16", "writeI16"), TType.I32: ("readI32", "writeI32"), TType.I64: ("readI64", "writeI64"),
    TType.DOUBLE: ("readDouble", "writeDouble"), TType.STRING: ("readBinary", "writeBinary"),
}


def _copy_value(src: TCompactProtocol, dst: TCompactProtocol, ttype: int, path: tuple[int, ...], counts: Counts,
                where: dict[str, int]) -> None:
    if ttype in _SCALARS:
        read, write = _SCALARS[ttype]
        value: Any = getattr(src, read)()
        getattr(dst, write)(value)
    elif ttype == TType.STRUCT:
        _copy_struct(src, dst, path, counts, where)
    elif ttype in (TType.LIST, TType.SET):
        etype, size = src.readListBegin()
        dst.writeListBegin(etype, size)
        for _ in range(size):
            _copy_value(src, dst, etype, path, counts, where)
        dst.writeListEnd()
        src.readListEnd()
    elif ttype == TType.MAP:
        ktype, vtype, size = src.readMapBegin()
        dst.writeMapBegin(ktype, vtype, size)
        for _ in range(size):
            _copy_value(src, dst, ktype, path, counts, where)
            _copy_value(src, dst, vtype, path, counts, where)
        dst.writeMapEnd()
        src.readMapEnd()
    else:  # pragma: no cover
        raise ValueError(f"thrift type {ttype} in a parquet footer")
