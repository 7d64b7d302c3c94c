"""Hudi tables written with their rows in a given layout: what a clustering (or a rewrite) by a layout the
advisor names would leave, for measuring the real engine on it.

:func:`write_in_layout` orders rows as the advisor orders them (:func:`hive_bridge.advisor.simulate.layout_order`:
by one column, along a Z-order or Hilbert curve over the columns' ranks, or grouped by a partitioning column)
and writes them with :class:`~hive_bridge.testing.writer.HudiWriter`, ``rows_per_file`` rows per file.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyarrow as pa

from hive_bridge.advisor.sample import FILE_COLUMN, PARTITION_COLUMN, Sample
from hive_bridge.advisor.simulate import PARTITION, TODAY, layout_order, parse_layout
from hive_bridge.testing.writer import HudiWriter


def ordered_rows(data: pa.Table, layout: str) -> pa.Table:
    """``data``'s rows in the order of ``layout`` (a layout name as the advisor prints it), over all rows (a
    partitioned writer keeps that order inside each partition, as a clustering orders each partition)."""
    spec = parse_layout(layout)
    if spec.kind == TODAY:
        return data
    zeros = pa.array(np.zeros(data.num_rows, dtype=np.int64))
    sample = Sample(data.append_column(FILE_COLUMN, zeros).append_column(PARTITION_COLUMN, zeros),
                    np.zeros(1), np.zeros(1), 0, 1, float(data.num_rows), True)
    order, _ = layout_order(sample, spec)
    return data.take(pa.array(order))


def write_in_layout(base_path: str | os.PathLike[str], data: pa.Table, layout: str, *, rows_per_file: int,
                    **writer: Any) -> HudiWriter:
    """A new table at ``base_path`` holding ``data`` laid out as ``layout`` (``partition(c)`` partitions by
    ``c``, each partition's rows in their order in ``data``), ``rows_per_file`` rows per file."""
    spec = parse_layout(layout)
    if spec.kind == PARTITION:
        writer = {**writer, "partition_fields": list(spec.columns)}
        rows = data
    else:
        rows = ordered_rows(data, layout)
    out = HudiWriter(base_path, rows_per_file=rows_per_file, **writer)
    out.insert(rows)
    return out


__all__ = ["ordered_rows", "write_in_layout"]
