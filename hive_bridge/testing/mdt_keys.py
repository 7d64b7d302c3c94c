"""The rows the metadata table's record index and secondary indexes describe, for the test MDT writer
(:mod:`hive_bridge.testing.mdt_writer`): every record of the data table's latest file slices with its location.

- ``record_index`` (type 5): key = the record key (``field:value,...`` for a complex key generator, as the base
  files' ``_hoodie_record_key`` holds it); value ``HoodieRecordIndexInfo``: ``partitionName``, the file group id
  as ``fileIdHighBits`` / ``fileIdLowBits`` (its UUID) and ``fileIndex`` (the ``-N`` suffix) with
  ``fileIdEncoding`` 0 (the raw ``fileId`` with encoding 1 when the id is not of that form), ``instantTime`` the
  epoch millis of the slice's base instant read in UTC (the fixtures' record index: the writer's time zone).
- ``secondary_index_<name>`` (type 7): key = ``SecondaryIndexKeyUtils.constructSecondaryIndexKey``: the escaped
  secondary value (``String.valueOf`` of the Avro value, :func:`hive_bridge.mdt.keys.secondary_value_text`),
  ``$``, the escaped record key; value ``HoodieSecondaryIndexInfo(isDeleted=false)``.

By default only base files are read and a table whose latest slices have log files is refused. With
``logs="merged"`` each slice's merged rows are indexed (:func:`hive_bridge.testing.merge_model.merge_slice`: what
Hudi's writers keep the indexes at); with ``logs="base"`` its base file's rows only (an index out of step with
the log files, for tests of what checks the indexes).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from hive_bridge.errors import HudiTableError
from hive_bridge.layout.properties import TableProperties
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.merge_model import block_filter, merge_slice

__all__ = ["KeyedRow", "key_index_rows", "record_index_info"]

_UUID_ID = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-(\d+)$")
_M64 = (1 << 64) - 1


@dataclass(frozen=True)
class KeyedRow:
    key: str
    partition: str
    file_id: str
    instant: str
    values: dict[str, Any]


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def record_index_info(partition: str, file_id: str, instant: str) -> dict[str, Any]:
    """The ``HoodieRecordIndexInfo`` of a record in file group ``file_id`` written at ``instant``."""
    moment = datetime.strptime(instant[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    millis = int(moment.timestamp()) * 1000 + int(instant[14:17] or 0)
    found = _UUID_ID.match(file_id)
    if found is None:
        return {"partitionName": partition, "fileIdHighBits": 0, "fileIdLowBits": 0, "fileIndex": -1,
                "fileId": file_id, "instantTime": millis, "fileIdEncoding": 1, "position": None}
    bits = uuid.UUID(found.group(1)).int
    return {"partitionName": partition, "fileIdHighBits": _signed(bits >> 64), "fileIdLowBits": _signed(bits & _M64),
            "fileIndex": int(found.group(2)), "fileId": "", "instantTime": millis, "fileIdEncoding": 0,
            "position": None}


def key_index_rows(root: Path, props: TableProperties, columns: list[str], logs: str | None = None) -> list[KeyedRow]:
    """Every record of the latest slices (key, partition, file group, base instant, ``columns``' values);
    ``logs``: None (slices with log files refused), "merged" or "base" (see the module docstring)."""
    if not props.populate_meta_fields:
        raise HudiTableError(f"{root}: the record index writer reads keys from _hoodie_record_key (meta fields)")
    if logs not in (None, "merged", "base"):
        raise HudiTableError(f"logs={logs!r}: None, 'merged' or 'base'")
    table = HudiTable.open(root)
    ok = block_filter(table)
    out: list[KeyedRow] = []
    for s in table.latest_file_slices():
        if (s.log_files and logs is None) or (s.base_file is None and logs != "merged"):
            raise HudiTableError(f"{root}: file group {s.file_id} has log files: the record index writer reads "
                                 "base files only (logs='merged' merges them)")
        if s.log_files and logs == "merged":
            merged = merge_slice(table, ok, s, props.precombine_field).table
            assert merged is not None
            data = merged.select(["_hoodie_record_key", *columns])
        else:
            assert s.base_file is not None
            data = pq.read_table(s.base_file.full_path, columns=["_hoodie_record_key", *columns])
        keys = data.column("_hoodie_record_key").to_pylist()
        values = {c: data.column(c).to_pylist() for c in columns}
        for i, key in enumerate(keys):
            out.append(KeyedRow(key, s.partition_path, s.file_id, s.base_instant,
                                {c: values[c][i] for c in columns}))
    return out
