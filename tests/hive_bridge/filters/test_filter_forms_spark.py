"""Filter forms against real Spark: small Hudi tables written by the test writer (one row a file, so a file's
verdict is its row's), read with Spark SQL and its parquet filter push-down off (the truth), and pruned by
hive-bridge from two readings of the same filter: its HiveQL text, and Spark's own printed filters of that query
(the Catalyst ``DataFilters`` and V1 ``PushedFilters`` of the scan, as the event log and driver log carry them).
A file holding a row Spark returns is never skipped.

- decimals: hypothesis-drawn decimal(p,s) columns, literals with fewer or more digits than the scale, negative,
  at the 38-digit edge; also checks ``decimal_model``'s account of Spark's rounding against Spark itself;
- NaN, -0.0, NULL, booleans: ``isnan``, ``= double('NaN')``, ``<=>``, a bare boolean column, ``IS [NOT]
  TRUE|FALSE``, with the files' NaN counts in their footers;
- ``LIKE '%special%requests%'``: unknown (kept, listed), the rest of the AND still prunes.
"""

from __future__ import annotations

import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.typemap import table_sarg_schema
from hive_bridge.pruning import Pruner
from hive_bridge.stats.index import ColumnStatsIndex
from hive_bridge.stats.reader import LocalStatsReader
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.parquet_nan import give_base_files_nan_counts
from hive_bridge.testing.writer import HudiWriter
from hive_bridge.workload.printed_filters import translate_lists
from tests.hive_bridge import decimal_model as dm

pytestmark = pytest.mark.spark

#: across the decimal property's examples: files, and files skipped by each reading
COUNTS = {"files": 0, "hiveql": 0, "printed": 0}


def _write(root: Path, data: dict[str, pa.Array], nan_counts: bool = False) -> HudiTable:
    n = len(next(iter(data.values())))
    HudiWriter(root, rows_per_file=1).insert(pa.table({"id": pa.array(range(n), pa.int64()), **data}))
    if nan_counts:
        give_base_files_nan_counts(root)
    return HudiTable.open(str(root))


def _files(table: HudiTable) -> list[str]:
    return [s.base_file.full_path for s in table.latest_file_slices() if s.base_file is not None]


def _kept(table: HudiTable, parsed: sarg.SearchArgument) -> set[str]:
    index = ColumnStatsIndex(table, reader=LocalStatsReader(count_nans=False))
    result = Pruner(table, index, table.latest_file_slices()).run(parsed)
    return {Path(s.base_file.full_path).name for s in result.slices if s.base_file is not None}


def _spark_read(spark: Any, table: HudiTable, where: str) -> tuple[dict[int, str], list[tuple[str, bool, str]]]:
    """The rows Spark returns (id -> file name), and the scan's printed filters (DataFilters, PushedFilters)."""
    from pyspark.sql import functions as F

    previous = spark.conf.get("spark.sql.parquet.filterPushdown")
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        df = spark.read.parquet(*_files(table)).where(where)
        rows = {r["id"]: Path(r["file"]).name for r in df.select("id", F.input_file_name().alias("file")).collect()}
        printed: list[tuple[str, bool, str]] = []
        leaves = df._jdf.queryExecution().executedPlan().collectLeaves().iterator()
        while leaves.hasNext():
            node = leaves.next()
            if node.nodeName().startswith("Scan"):
                meta = node.metadata()
                printed += [(meta.get("DataFilters").get(), False, ", "),
                            (meta.get("PushedFilters").get(), True, ", ")]
    finally:
        spark.conf.set("spark.sql.parquet.filterPushdown", previous)
    return rows, printed


def _printed_reading(table: HudiTable, printed: list[tuple[str, bool, str]]) -> tuple[sarg.SearchArgument, Any]:
    types = table_sarg_schema(table)
    translated = translate_lists(printed, types)
    return sarg.read_filter(translated.hiveql or "unknown()", types), translated


# -- decimals ----------------------------------------------------------------------------------------------------

SPARK_OPS = ("=", "<>", "<", "<=", ">", ">=", "<=>", "in", "between")


@st.composite
def decimal_cases(draw: Any) -> tuple[dm.Column, str, list[str], list[Decimal | None]]:
    column = draw(dm.columns)
    op = draw(st.sampled_from(SPARK_OPS))
    first = draw(dm.literal_text(column))
    count = {"in": draw(st.integers(1, 3)), "between": 2}.get(op, 1)
    texts = [first] + [draw(dm.literal_text(column, Decimal(first))) for _ in range(count - 1)]
    values = [v for _ in range(3) for v in draw(dm.values_near(column, texts))]
    return column, op, texts, values


@settings(max_examples=14, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=decimal_cases())
def test_decimal_literals_keep_every_row_spark_returns(spark: Any, case: Any) -> None:
    column, op, texts, values = case
    if dm.spark_literal(column, texts) is None:
        return  # Spark refuses a literal of more than 38 digits
    with tempfile.TemporaryDirectory() as tmp:
        table = _write(Path(tmp) / "t", {"d": pa.array(values, pa.decimal128(column.precision, column.scale))})
        where = dm.hiveql(op, "d", texts)
        rows, printed = _spark_read(spark, table, where)
        # the model of Spark's decimal comparisons is Spark's own
        assert set(rows) == {i for i, v in enumerate(values) if dm.spark_truth(column, op, v, texts) is True}, \
            (where, column, values, rows)
        needed = set(rows.values())
        for name, parsed in (("hiveql", sarg.read_filter(where, table_sarg_schema(table))),
                             ("printed", _printed_reading(table, printed)[0])):
            kept = _kept(table, parsed)
            assert needed <= kept, f"{name}: {where} on {column.hive_type} ({parsed}; Spark printed {printed})"
            COUNTS[name] += len(values) - len(kept)
        COUNTS["files"] += len(values)


def test_decimal_property_skipped_files() -> None:
    """Run after the property (file order): both readings skipped files, so the property tested pruning."""
    if not COUNTS["files"]:
        pytest.skip("the property did not run in this session")
    assert COUNTS["hiveql"] > 0 and COUNTS["printed"] > 0, COUNTS


# -- NaN, -0.0, NULL, booleans -------------------------------------------------------------------------------------

PRICES = [37.94, float("nan"), -0.0, 0.0, None, -1.5, float("inf")]
FLAGS = [True, False, None, True, False, None, True]


@pytest.fixture(scope="module")
def nan_table(tmp_path_factory: pytest.TempPathFactory) -> HudiTable:
    return _write(tmp_path_factory.mktemp("nan") / "t", {
        "price": pa.array(PRICES, pa.float64()), "flag": pa.array(FLAGS, pa.bool_()),
        "c": pa.array([False, None, True, True, None, False, True], pa.bool_()),
        "qty": pa.array([1, None, 3, 4, None, 6, 7], pa.int32()),
        "s": pa.array(["a special x requests", "b", None, "special requests", "zz", "x", "specialrequests"])},
        nan_counts=True)


#: (filter, how many of the 7 files at most are kept from its HiveQL text; a file of NaN alone has no usable
#: bounds, so it is kept for comparisons with numbers)
NAN_BOOLEAN_FORMS = [
    ("isnan(price)", 1), ("NOT isnan(price)", 7), ("price = double('NaN')", 1), ("price = cast('NaN' as double)", 1),
    ("price <=> double('NaN')", 1), ("price <=> 37.94D", 2), ("price = -0.0D", 3), ("price > 0.0D", 3),
    ("qty <=> NULL", 2), ("NOT (qty <=> NULL)", 5), ("flag", 3), ("NOT flag", 2), ("flag <=> false", 2),
    ("flag IS TRUE", 3), ("flag IS NOT TRUE", 4), ("flag IS FALSE", 2), ("flag IS NOT FALSE", 5),
    ("c IS NOT TRUE AND flag", 2), ("isnull(qty) OR flag IS FALSE", 3),
]


@pytest.mark.parametrize(("where", "at_most"), NAN_BOOLEAN_FORMS)
def test_nan_and_boolean_forms_keep_every_row_spark_returns(spark: Any, nan_table: HudiTable, where: str,
                                                           at_most: int) -> None:
    rows, printed = _spark_read(spark, nan_table, where)
    needed = set(rows.values())
    hiveql = sarg.read_filter(where, table_sarg_schema(nan_table))
    assert not hiveql.unknowns, hiveql.unknowns
    kept = _kept(nan_table, hiveql)
    assert needed <= kept and len(kept) <= at_most, (where, str(hiveql), sorted(rows), len(kept))
    from_spark, translated = _printed_reading(nan_table, printed)
    assert needed <= _kept(nan_table, from_spark), (where, printed, str(from_spark))
    assert not translated.unread, translated.unread


def test_like_is_unknown_and_the_rest_prunes(spark: Any, nan_table: HudiTable) -> None:
    where = "qty > 3 AND s LIKE '%special%requests%'"
    rows, printed = _spark_read(spark, nan_table, where)
    assert sorted(rows) == [3, 6]
    for parsed, unknown in [(sarg.read_filter(where, table_sarg_schema(nan_table)), None),
                            _printed_reading(nan_table, printed)]:
        kept = _kept(nan_table, parsed)
        assert set(rows.values()) <= kept and len(kept) == 3, (parsed, kept)  # qty 4, 6, 7
        texts = [p.text for p in parsed.unknowns] if unknown is None else unknown.unknown_texts
        assert any("LIKE %special%requests%" in t or "LIKE '%special%requests%'" in t for t in texts), texts
