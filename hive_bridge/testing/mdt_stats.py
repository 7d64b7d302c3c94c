"""The statistics the test metadata-table writer (:mod:`hive_bridge.testing.mdt_writer`) indexes: the columns
Hudi 1.0 indexes (``getColumnsToIndex``) and the column statistics of base parquet files (from their footers,
as Hudi's ``ParquetUtils``) and of log files (from their data blocks' records), bounds wrapped as Hudi 1.0 wraps
them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hive_bridge.errors import HudiTableError
from hive_bridge.formats.logfile import BlockType, LogFormatError, data_block_table, read_log_file
from hive_bridge.formats.parquet_footer import read_metadata  # one pread + thrift decode: 2x pq.read_metadata
from hive_bridge.layout.properties import TableProperties
from hive_bridge.testing.mdt_records import DECIMAL_MAX_PRECISION, DECIMAL_MAX_SCALE, wrap

__all__ = ["ALL_META", "MAX_COLUMNS_TO_INDEX", "META_COLUMNS_TO_INDEX", "columns_to_index", "file_stats"]

#: ``HoodieTableMetadataUtil.META_COLS_TO_ALWAYS_INDEX`` (in the order Hudi records them: a TreeMap)
META_COLUMNS_TO_INDEX = ("_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key")
ALL_META = frozenset({"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                       "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_operation"})
#: ``hoodie.metadata.index.column.stats.max.columns.to.index``
MAX_COLUMNS_TO_INDEX = 32

# ============================================================================================== columns


def _nonnull(avro_type: Any) -> Any:
    if isinstance(avro_type, list):
        rest = [t for t in avro_type if t != "null"]
        return rest[0] if len(rest) == 1 else avro_type
    return avro_type


def _supported(avro_type: Any) -> bool:
    """``isColumnTypeSupported`` for Hudi's Avro record type: no record, array or map; decimals must fit the
    wrapper's decimal(30,15)."""
    t = _nonnull(avro_type)
    if isinstance(t, list):
        return False
    if isinstance(t, dict):
        if t.get("logicalType") == "decimal":
            p, s = int(t.get("precision", 0)), int(t.get("scale", 0))
            return p + (DECIMAL_MAX_SCALE - s) <= DECIMAL_MAX_PRECISION and s <= DECIMAL_MAX_SCALE
        return t.get("type") not in ("record", "array", "map")
    return t not in ("record", "array", "map")


def columns_to_index(props: TableProperties, schema_json: str | None,
                     explicit: Sequence[str] | None = None) -> list[str]:
    """Hudi 1.0's ``getColumnsToIndex``: the always-indexed meta columns (tables with meta fields), then the
    explicit list, or the first 32 supported data columns of the writer schema."""
    fields: list[dict[str, Any]] = []
    if schema_json:
        try:
            fields = list(json.loads(schema_json).get("fields") or [])
        except (ValueError, AttributeError):
            fields = []
    types = {f.get("name"): f.get("type") for f in fields if isinstance(f, dict)}
    out = list(META_COLUMNS_TO_INDEX) if props.populate_meta_fields else []
    if explicit is not None:
        out += [c for c in explicit if c not in META_COLUMNS_TO_INDEX and (c not in types or _supported(types[c]))]
    else:
        data = [n for n, t in types.items() if isinstance(n, str) and n not in ALL_META and _supported(t)]
        out += data[:MAX_COLUMNS_TO_INDEX]
    return list(dict.fromkeys(out))



def _parquet_wrapper(col: Any) -> str | None:
    """The wrapper Hudi 1.0 puts a parquet column's min/max in (``convertToNativeJavaType`` then
    ``wrapValueIntoAvro``), None when it cannot."""
    physical = col.physical_type
    logical = col.logical_type.type
    if logical == "DECIMAL":
        return "DecimalWrapper"
    if logical == "DATE":
        return "DateWrapper"
    if physical in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
        return "StringWrapper" if logical == "STRING" else "BytesWrapper"
    return {"BOOLEAN": "BooleanWrapper", "INT32": "IntWrapper", "INT64": "LongWrapper", "FLOAT": "FloatWrapper",
            "DOUBLE": "DoubleWrapper"}.get(physical)


def _parquet_value(stats: Any, upper: bool, wrapper: str) -> Any:
    raw = stats.max_raw if upper else stats.min_raw
    if wrapper == "DecimalWrapper":
        value = stats.max if upper else stats.min
        return value if isinstance(value, Decimal) else None
    if wrapper == "StringWrapper":
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if wrapper == "BytesWrapper":
        return raw.encode("utf-8") if isinstance(raw, str) else bytes(raw) if raw is not None else None
    return raw


def _base_file_stats(path: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Column name -> ColumnStatsMetadata fields of one parquet file, as ``readColumnStatsFromMetadata``."""
    md = read_metadata(path)[0]
    by_name: dict[str, int] = {}
    for i in range(md.num_columns):
        col = md.schema.column(i)
        if col.max_repetition_level == 0 and col.path in columns and "." not in col.path:
            by_name[col.path] = i
    out: dict[str, dict[str, Any]] = {}
    groups = [md.row_group(g) for g in range(md.num_row_groups)]
    for name, i in by_name.items():
        wrapper = _parquet_wrapper(md.schema.column(i))
        if wrapper is None:
            continue
        lo: Any = None
        hi: Any = None
        nulls = values = size = usize = 0
        for rg in groups:
            chunk = rg.column(i)
            values += chunk.num_values
            size += chunk.total_compressed_size
            usize += chunk.total_uncompressed_size
            st = chunk.statistics
            if st is None:
                continue
            nulls += st.null_count or 0
            if st.has_min_max:
                a, b = _parquet_value(st, False, wrapper), _parquet_value(st, True, wrapper)
                # HoodieColumnRangeMetadata.merge: a null side takes the other's
                lo = a if lo is None else lo if a is None else min(lo, a)
                hi = b if hi is None else hi if b is None else max(hi, b)
        out[name] = {"minValue": wrap(lo, wrapper), "maxValue": wrap(hi, wrapper), "valueCount": values,
                     "nullCount": nulls, "totalSize": size, "totalUncompressedSize": usize}
    return out


def _arrow_wrapper(typ: pa.DataType) -> str | None:
    t = pa.types
    if t.is_boolean(typ):
        return "BooleanWrapper"
    if t.is_decimal(typ):
        return "DecimalWrapper"
    if t.is_date(typ):
        return "DateWrapper"
    if t.is_string(typ) or t.is_large_string(typ):
        return "StringWrapper"
    if t.is_binary(typ) or t.is_large_binary(typ) or t.is_fixed_size_binary(typ):
        return "BytesWrapper"
    if t.is_float32(typ):
        return "FloatWrapper"
    if t.is_float64(typ):
        return "DoubleWrapper"
    if t.is_integer(typ):
        return "IntWrapper" if typ.bit_width <= 32 else "LongWrapper"
    if t.is_timestamp(typ) or t.is_time64(typ):
        return "LongWrapper"
    if t.is_time32(typ):
        return "IntWrapper"
    return None


def _log_file_stats(path: str, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Column stats of a log file's data records (Hudi's ``getLogFileColumnRangeMetadata``: no merging, every
    record of every data block); a log without data records gets ``valueCount`` 0 and no bounds."""
    contents = read_log_file(path)
    tables = []
    for block in contents.blocks:
        if block.block_type in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            tables.append(data_block_table(block, path))
    data = pa.concat_tables(tables, promote_options="permissive") if tables else None
    out: dict[str, dict[str, Any]] = {}
    for name in columns:
        if data is None or data.num_rows == 0:
            out[name] = {"minValue": None, "maxValue": None, "valueCount": 0, "nullCount": 0, "totalSize": 0,
                         "totalUncompressedSize": 0}
            continue
        if name not in data.column_names:
            out[name] = {"minValue": None, "maxValue": None, "valueCount": data.num_rows,
                         "nullCount": data.num_rows, "totalSize": 0, "totalUncompressedSize": 0}
            continue
        column = data.column(name)
        wrapper = _arrow_wrapper(column.type)
        if wrapper is None:
            continue
        lo = hi = None
        present = pc.drop_null(column)
        if len(present):
            if pa.types.is_timestamp(column.type) or pa.types.is_time(column.type):
                present = present.cast(pa.int64() if pa.types.is_timestamp(column.type)
                                       or pa.types.is_time64(column.type) else pa.int32())
            elif pa.types.is_date(column.type):
                present = present.cast(pa.int32())
            elif pa.types.is_floating(column.type) and pc.any(pc.is_nan(present)).as_py():
                # Java's Double.compareTo sorts NaN above every number
                finite = pc.filter(present, pc.invert(pc.is_nan(present)))
                mm = pc.min_max(finite) if len(finite) else None
                lo = mm["min"].as_py() if mm is not None else float("nan")
                hi = float("nan")
            if lo is None and hi is None:
                mm = pc.min_max(present)
                lo, hi = mm["min"].as_py(), mm["max"].as_py()
        out[name] = {"minValue": wrap(lo, wrapper), "maxValue": wrap(hi, wrapper), "valueCount": data.num_rows,
                     "nullCount": column.null_count, "totalSize": 0, "totalUncompressedSize": 0}
    return out


def file_stats(f: tuple[str, bool], columns: Sequence[str]) -> dict[str, dict[str, Any]] | None:
    path, is_log = f
    try:
        return _log_file_stats(path, columns) if is_log else _base_file_stats(path, columns)
    except (OSError, LogFormatError, pa.ArrowException, HudiTableError):
        return None     # Hudi logs the failure and writes no entry for the file


