"""A sample of a table's rows, spread over its files and partitions, read without reading every file.

:func:`sample_rows` picks base files stratified over partitions (a systematic pick over the files sorted by
partition, from a random start, so each partition gets its share of the pick), and from each picked file one
randomly chosen row group, of which it keeps a random subset of rows; only the columns asked for are read. Each
row remembers the picked file it came from (its place in today's layout). When the table is small enough the
whole table is read instead (every file, every row): the sample is then exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from hive_bridge.layout.fsview import FileSlice
from hive_bridge.table.table import HudiTable

#: the columns added to sampled rows: the index of the picked file they came from, and of its partition (the
#: table's partition paths in sorted order)
FILE_COLUMN = "__file"
PARTITION_COLUMN = "__partition"


@dataclass
class Sample:
    """Rows sampled from a table (``rows``, with :data:`FILE_COLUMN`), the picked files' sizes and row counts,
    and the table's totals (bytes of base files, files, estimated rows)."""

    rows: pa.Table  # the sampled columns, then FILE_COLUMN and PARTITION_COLUMN
    file_bytes: np.ndarray
    file_rows: np.ndarray
    table_bytes: int
    table_files: int
    table_rows: float
    exact: bool
    problems: list[str] = field(default_factory=list)
    #: each picked file's bytes outside its column chunks (the footer with its key-value metadata, where Hudi
    #: keeps the bloom filter, and the magic bytes): what every file a writer writes costs whatever it holds
    file_overhead: np.ndarray | None = None

    @property
    def overhead_per_file(self) -> float:
        """The mean bytes per file outside its column chunks (0 when unknown)."""
        if self.file_overhead is None or not len(self.file_overhead):
            return 0.0
        return float(np.mean(self.file_overhead))

    @property
    def bytes_per_row(self) -> float:
        rows = float(self.file_rows.sum())
        return float(self.file_bytes.sum()) / rows if rows else 0.0


def _pick(slices: Sequence[FileSlice], count: int, rng: np.random.Generator) -> list[int]:
    """``count`` slice positions, spread over partitions: systematic over the slices grouped by partition
    (shuffled inside each partition), from a random start."""
    by_partition: dict[str, list[int]] = {}
    for i, s in enumerate(slices):
        by_partition.setdefault(s.partition_path, []).append(i)
    ordered: list[int] = []
    for p in sorted(by_partition):
        members = by_partition[p]
        ordered.extend(members[j] for j in rng.permutation(len(members)))
    if count >= len(ordered):
        return ordered
    step = len(ordered) / count
    start = rng.random() * step
    return [ordered[int(start + k * step)] for k in range(count)]


def sample_rows(table: HudiTable, slices: Sequence[FileSlice], columns: Sequence[str], *, rows: int,
                max_files: int, seed: int) -> Sample:
    """About ``rows`` rows of ``columns`` from at most ``max_files`` base files (see the module's text). A file
    that cannot be read is named in ``problems`` and left out."""
    rng = np.random.default_rng(seed)
    based = [s for s in slices if s.base_file is not None]
    table_bytes = sum(s.base_file.size for s in based if s.base_file is not None)
    partition_ids = {p: i for i, p in enumerate(sorted({s.partition_path for s in based}))}
    picked = _pick(based, min(max_files, len(based)), rng)
    storage = table.storage
    pieces: list[pa.Table] = []
    sizes: list[int] = []
    counts: list[int] = []
    overheads: list[int] = []
    problems: list[str] = []
    per_file = max(1, math.ceil(rows / max(1, len(picked))))
    exact = len(picked) == len(based)
    for pos in picked:
        base = based[pos].base_file
        assert base is not None
        try:
            fragment = storage.parquet_fragment(base.full_path, base.size)
            md = fragment.metadata
            names = set(md.schema.to_arrow_schema().names)
            wanted = [c for c in columns if c in names]
            n_groups = md.num_row_groups
            if n_groups == 0 or md.num_rows == 0:
                continue
            if md.num_rows <= per_file:
                part = fragment.to_table(columns=wanted)
            else:
                exact = False
                g = int(rng.integers(n_groups))
                part = fragment.subset(row_group_ids=[g]).to_table(columns=wanted)
                if part.num_rows > per_file:
                    keep = np.sort(rng.choice(part.num_rows, per_file, replace=False))
                    part = part.take(pa.array(keep))
        except (OSError, pa.ArrowException) as exc:
            problems.append(f"{base.path}: cannot read: {str(exc).splitlines()[0] if str(exc) else exc}")
            continue
        for c in columns:
            if c not in part.column_names:  # a column the file does not have: null there
                part = part.append_column(c, pa.nulls(part.num_rows))
        part = part.select(list(columns))
        part = part.append_column(FILE_COLUMN, pa.array(np.full(part.num_rows, len(sizes), dtype=np.int64)))
        part = part.append_column(PARTITION_COLUMN, pa.array(
            np.full(part.num_rows, partition_ids[based[pos].partition_path], dtype=np.int64)))
        pieces.append(part)
        sizes.append(base.size)
        counts.append(int(md.num_rows))
        chunks = sum(md.row_group(g).column(c).total_compressed_size for g in range(n_groups)
                     for c in range(md.num_columns))
        overheads.append(max(0, base.size - chunks))
    if not pieces:
        return Sample(pa.table({FILE_COLUMN: pa.array([], pa.int64()), PARTITION_COLUMN: pa.array([], pa.int64())}),
                      np.zeros(0), np.zeros(0), table_bytes,
                      len(based), 0.0, exact, problems)
    rows_table = pa.concat_tables(pieces, promote_options="permissive")
    file_bytes = np.asarray(sizes, dtype=np.float64)
    file_rows = np.asarray(counts, dtype=np.float64)
    per_row = file_bytes.sum() / file_rows.sum() if file_rows.sum() else 0.0
    table_rows = table_bytes / per_row if per_row else 0.0
    return Sample(rows_table, file_bytes, file_rows, table_bytes, len(based), table_rows, exact, problems,
                  np.asarray(overheads, dtype=np.float64))


__all__ = ["FILE_COLUMN", "PARTITION_COLUMN", "Sample", "sample_rows"]
