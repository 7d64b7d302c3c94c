"""Partitions judged by their values, by the same rules as files: the partitions as a statistics table.

A metastore partition (or any partition known only by its values) is one row of a statistics table in the
layout of :mod:`hive_bridge.stats.contract`: ``num_rows`` 1 (a partition's values hold for every row in it, so
one row stands for all of them) and, per partition key, ``min`` = ``max`` = the value in the key's type, exact,
with a null count of 0, or of 1 for Hive's default partition (``__HIVE_DEFAULT_PARTITION__``: the key is NULL).
Whatever is not known stays unknown: a value that does not convert to the key's type has unknown bounds and an
unknown null count, and a key without a type (``None``: not compared) has no statistics columns at all, so
every leaf on it is unknown. The vectorized evaluator (:func:`hive_bridge.pruning.vectorized.prune`) then judges
every partition at once, and a partition is dropped only when its values prove that no row of it can match.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from hive_bridge.filters.expression import HudiExpression
from hive_bridge.layout.fsview import HIVE_DEFAULT_PARTITION
from hive_bridge.stats.contract import bound_columns

__all__ = ["partition_values_table", "prune_partitions"]

#: a partition key: its name and the Arrow type its values are compared in (None: not compared, unknown)
PartitionKey = tuple[str, "pa.DataType | None"]


def partition_values_table(keys: Sequence[PartitionKey], values: Sequence[Sequence[str | None]]) -> pa.Table:
    """The statistics table of partitions given by their values (one sequence per partition, in key order, as
    text; a missing value is unknown)."""
    n = len(values)
    columns: dict[str, pa.Array] = {"num_rows": pa.array([1] * n, pa.int64())}
    for i, (key, typ) in enumerate(keys):
        if typ is None:
            continue
        typed: list[Any] = []
        nulls: list[int | None] = []
        for row in values:
            raw = row[i] if i < len(row) else None
            if raw == HIVE_DEFAULT_PARTITION:
                typed.append(None)
                nulls.append(1)
                continue
            typed.append(None if raw is None else _convert(raw, typ))
            nulls.append(0 if typed[-1] is not None else None)
        array = pa.array(typed, typ)
        columns.update(bound_columns(key, typ, array, array, pa.array(nulls, pa.int64())))
    return pa.table(columns)


def prune_partitions(expression: HudiExpression, keys: Sequence[PartitionKey],
                     values: Sequence[Sequence[str | None]], session_tz: str = "UTC") -> list[bool]:
    """Whether the filter may be true on each partition, judged on its values only (every other column
    unknown); see :func:`partition_values_table`."""
    from hive_bridge.pruning.vectorized import prune

    if all(typ is None for _, typ in keys):
        return [True] * len(values)
    result = prune(expression, partition_values_table(keys, values), session_tz=session_tz)
    return [bool(k) for k in result.keep.to_pylist()]


def _convert(raw: str, typ: pa.DataType) -> Any:
    """The value of a partition's text in the key's type, as Arrow casts text; None where it does not convert."""
    try:
        return pa.array([raw], pa.string()).cast(typ)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
