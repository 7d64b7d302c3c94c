"""No lost rows with NaN counts: random float and double values (NaN present in some files and absent from
others, files holding only NaN, only NaN and nulls, only nulls, -0.0 and 0.0, infinities, nulls) written as real
parquet files of a real Hudi table by the test writer,
their NaN counts taken from the footer (``Statistics.nan_count``) or counted when the index reads the file, and
random comparisons, NOTs and IN lists (NaN literals among them). Spark SQL is the truth: the rows of the files
the pruner keeps, filtered by Spark SQL, equal the rows of all files filtered by Spark SQL (the filter as the
residual hive-bridge hands Spark; Spark's own parquet filter push-down off)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.residual import to_sql
from hive_bridge.pruning import Pruner
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.reader import LocalStatsReader
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.parquet_nan import give_base_files_nan_counts
from hive_bridge.testing.writer import HudiWriter

pytestmark = pytest.mark.spark

SCHEMA = {"id": "bigint", "d": "double", "f": "float"}
VALUES = [float("nan"), -0.0, 0.0, None, 1.5, -2.25, 3.0, 1e30, float("inf"), float("-inf")]
LITERALS = ["NaN", "-0.0", "0.0", "1.5", "-2.25", "3.0", "2.0", "1.0E30", "Infinity", "-Infinity", "-5.0"]
NO_NAN = [v for v in VALUES if v is None or v == v]
#: a file's column: any value, no NaN, only NaN, only NaN and nulls, only nulls
POOLS = [VALUES, NO_NAN, [float("nan")], [float("nan"), None], [None]]
#: across the run: files skipped; files whose d holds no number (only NaN and nulls) skipped by d < c
SKIPPED = {"files": 0, "no_number": 0}


@st.composite
def files(draw: Any) -> list[list[tuple[float | None, float | None]]]:
    out = []
    for _ in range(draw(st.integers(2, 5))):
        pd, pf = draw(st.sampled_from(POOLS)), draw(st.sampled_from(POOLS))
        out.append(draw(st.lists(st.tuples(st.sampled_from(pd), st.sampled_from(pf)), min_size=1, max_size=4)))
    return out


@st.composite
def filters(draw: Any, depth: int = 0) -> str:
    if depth >= 2 or draw(st.booleans()):
        col = draw(st.sampled_from(["d", "f"]))
        op = draw(st.sampled_from(["EQUALS", "LESS_THAN", "LESS_THAN_EQUALS", "IN", "BETWEEN", "NULL_SAFE_EQUALS"]))
        lits = draw(st.lists(st.sampled_from(LITERALS), min_size=2 if op == "BETWEEN" else 1,
                             max_size={"IN": 3, "BETWEEN": 2}.get(op, 1)))
        leaf = f"leaf-({op} {col} {' '.join(lits)})"
        return f"(not {leaf})" if draw(st.booleans()) else leaf
    kids = [draw(filters(depth + 1)) for _ in range(draw(st.integers(2, 3)))]
    op = draw(st.sampled_from(["and", "or", "not-and"]))
    if op == "not-and":
        return f"(not (and {' '.join(kids)}))"
    return f"({op} {' '.join(kids)})"


def _write(root: Path, data: list[list[tuple[float | None, float | None]]], footer_counts: bool) -> HudiTable:
    writer = HudiWriter(root, record_key_fields=("id",))
    next_id = 0
    for rows in data:   # one insert per file: a file group each
        ids = list(range(next_id, next_id + len(rows)))
        next_id += len(rows)
        writer.insert(pa.table({"id": pa.array(ids, pa.int64()), "d": pa.array([r[0] for r in rows], pa.float64()),
                                "f": pa.array([r[1] for r in rows], pa.float32())}))
    if footer_counts:
        give_base_files_nan_counts(root)
    return HudiTable.open(root)


def _kept_holding_every_match(spark, table: HudiTable, index: ColumnStatsIndex,  # type: ignore[no-untyped-def]
                              text: str) -> set[str]:
    """The names of the files the pruner keeps for ``text``, once Spark SQL (push-down off) has shown that they
    hold every row of the table the filter matches."""
    s = sarg.parse(text, SCHEMA)
    slices = table.latest_file_slices()
    result = Pruner(table, index, slices).run(s)
    every = [sl.base_file.full_path for sl in slices]
    kept_names = {Path(f.base_file.full_path).name for f in result.slices}
    where = to_sql(s)
    previous = spark.conf.get("spark.sql.parquet.filterPushdown")
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        # one read of every file: each matching row with the file it came from
        from pyspark.sql import functions as F

        rows = spark.read.parquet(*every).where(where).select("id", F.input_file_name().alias("file")).collect()
    finally:
        spark.conf.set("spark.sql.parquet.filterPushdown", previous)
    truth = sorted(r["id"] for r in rows)
    got = sorted(r["id"] for r in rows if Path(r["file"]).name in kept_names)
    nan_counts = index.table().column("d::nan_count").to_pylist()
    assert got == truth, f"{text} ({where}): kept {result.files_kept} of {len(every)}; NaN counts {nan_counts}"
    SKIPPED["files"] += len(every) - len(kept_names)
    return kept_names


@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=files(), text=filters(), footer_counts=st.booleans(), below=st.sampled_from(LITERALS[1:]))
def test_rows_of_kept_files_equal_rows_of_all_files(spark, data, text: str,  # type: ignore[no-untyped-def]
                                                    footer_counts: bool, below: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = _write(Path(tmp) / "t", data, footer_counts)
        # counts from the footer alone, or counted (footers without them)
        index = ColumnStatsIndex(table, reader=LocalStatsReader(count_nans=not footer_counts))
        assert None not in index.table().column("d::nan_count").to_pylist()   # every file's is known
        _kept_holding_every_match(spark, table, index, text)
        # an ordered range below a number: a file whose d holds no number (only NaN and nulls) has no row below
        # it (NaN sorts above every number), and is skipped
        kept = _kept_holding_every_match(spark, table, index, f"leaf-(LESS_THAN d {below})")
        no_number = set()
        for sl in table.latest_file_slices():
            values = pq.read_table(sl.base_file.full_path, columns=["d"]).column("d").to_pylist()
            if any(v is not None for v in values) and all(v is None or v != v for v in values):
                no_number.add(Path(sl.base_file.path).name)
        assert not no_number & kept
        SKIPPED["no_number"] += len(no_number)


def teardown_module() -> None:
    # the property had teeth: files were skipped, among them files whose d holds no number, by d < c
    assert SKIPPED["files"] > 0 and SKIPPED["no_number"] > 0, SKIPPED
