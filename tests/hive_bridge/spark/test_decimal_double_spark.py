"""A decimal or bigint column compared with a double literal, against real Spark: Spark SQL compares the two as
doubles (``amount > 1e9`` is ``cast(amount as double) > 1.0E9``). On a table written by the test writer with one
row per file and values whose doubles collide (decimal(38,18) around 1e9, bigint around 2**53, decimal(18,2)
around 2**53 hundredths, where Spark's compact decimal cast is checked too): Spark over the latest files with
pushdown off gives the truth, which is also Python's ``float(Decimal)`` comparison (the model the pruning tests use);
``hudi-hive`` returns exactly those rows and reads every file holding one (and prunes the rest where the bounds
decide), and the HiveQL-text route keeps every such file. The real copy-on-write v9 table keeps 0 of 5 files for
``amount > 1e9``."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hive_bridge.spark import register
from hive_bridge.spark.jar import JVM_PACKAGE
from hive_bridge.spark.reads import list_files
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

AMOUNTS = [Decimal("999999999.999999999999999999"), Decimal("1000000000.000000000000000001"),
           Decimal("999999999.9"), Decimal("1000000001"), Decimal("999999999.999999940395355225"),
           Decimal("999999999.999999940395355224")]
BIGS = [2**53, 2**53 + 1, 2**53 + 2, 2**53 + 3, 2**53 - 1, 5]
SMALLS = [Decimal("90071992547409.93"), Decimal("90071992547409.92"), Decimal("90071992547409.95"),
          Decimal("90071992547409.97"), Decimal("90071992547409.99"), Decimal("1.50")]
Row = tuple[float, float, float, int]  # amount, big, small as doubles; id
#: (Spark SQL, the same on a row with its columns cast to double, as Python compares)
FILTERS: list[tuple[str, Any]] = [
    ("amount = 1e9", lambda a, b, s, i: a == 1e9), ("amount > 1e9", lambda a, b, s, i: a > 1e9),
    ("amount >= 1e9", lambda a, b, s, i: a >= 1e9), ("amount < 1e9", lambda a, b, s, i: a < 1e9),
    ("amount <= 1e9", lambda a, b, s, i: a <= 1e9), ("amount <> 1e9", lambda a, b, s, i: a != 1e9),
    ("1e9 < amount", lambda a, b, s, i: 1e9 < a), ("amount IN (1e9, 2.5D)", lambda a, b, s, i: a in (1e9, 2.5)),
    ("amount NOT IN (1e9)", lambda a, b, s, i: a != 1e9),
    ("amount BETWEEN 999999999.99D AND 1e9", lambda a, b, s, i: 999999999.99 <= a <= 1e9),
    ("NOT (amount = 1e9)", lambda a, b, s, i: a != 1e9),
    ("amount > 1e9 OR id = 2", lambda a, b, s, i: a > 1e9 or i == 2),
    ("NOT (amount < 1e9 AND id > 0)", lambda a, b, s, i: not (a < 1e9 and i > 0)),
    ("big = 9.007199254740992E15", lambda a, b, s, i: b == 9.007199254740992e15),
    ("big > 9.007199254740992E15", lambda a, b, s, i: b > 9.007199254740992e15),
    ("big <= 9.007199254740994E15", lambda a, b, s, i: b <= 9.007199254740994e15),
    ("big IN (9.007199254740992E15, 5D)", lambda a, b, s, i: b in (9.007199254740992e15, 5.0)),
    ("small = 9.00719925474099E13", lambda a, b, s, i: s == 9.00719925474099e13),
    ("small > 9.007199254740994E13", lambda a, b, s, i: s > 9.007199254740994e13),
    ("small < 9.007199254740995E13", lambda a, b, s, i: s < 9.007199254740995e13),
    ("small = 9.0071992547409938E13", lambda a, b, s, i: s == 9.0071992547409938e13),
    ("small >= 9.0071992547409938E13", lambda a, b, s, i: s >= 9.0071992547409938e13),
]


@pytest.fixture(scope="module")
def colliding(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = tmp_path_factory.mktemp("decdouble-spark") / "t"
    HudiWriter(table, rows_per_file=1).insert(pa.table({
        "id": pa.array(range(len(AMOUNTS)), pa.int64()),
        "amount": pa.array(AMOUNTS, pa.decimal128(38, 18)),
        "big": pa.array(BIGS, pa.int64()),
        "small": pa.array(SMALLS, pa.decimal128(18, 2))}))
    return table


def _files_read(spark: Any, df: Any) -> int:
    """Spark's "number of files read" of the query's scan (run once on a fresh DataFrame)."""
    df.collect()
    return int(getattr(spark._jvm, JVM_PACKAGE).Planner.filesRead(df._jdf.queryExecution().executedPlan()))


def _python_truth(check: Any) -> set[int]:
    """The filter on each row with the columns cast to double (Python's correctly rounded ``float``)."""
    return {i for i, (a, b, s) in enumerate(zip(AMOUNTS, BIGS, SMALLS, strict=True))
            if check(float(a), float(b), float(s), i)}


def _ids_of(paths: list[str]) -> set[int]:
    import pyarrow.parquet as pq

    return {i for p in paths for i in pq.read_table(p, columns=["id"]).column(0).to_pylist()}


def test_hudi_hive_reads_every_file_holding_a_row_equal_as_doubles(spark: Any, colliding: Path) -> None:
    register(spark)
    latest = [str(colliding / s.base_file.path) for s in HudiTable.open(str(colliding)).latest_file_slices()
              if s.base_file is not None]
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        truth = {f: {r.id for r in spark.read.parquet(*latest).where(f).select("id").collect()} for f, _ in FILTERS}
    finally:
        spark.conf.unset("spark.sql.parquet.filterPushdown")
    pruned = 0
    for f, check in FILTERS:
        # Spark's answer is the model's: decimal and bigint cast to double, correctly rounded
        assert truth[f] == _python_truth(check), (f, sorted(truth[f]), sorted(_python_truth(check)))
        df = spark.read.format("hudi-hive").load(str(colliding)).where(f)
        assert {r.id for r in df.select("id").collect()} == truth[f], f
        read = _files_read(spark, spark.read.format("hudi-hive").load(str(colliding)).where(f).select("id"))
        assert read >= len(truth[f]), (f, read, sorted(truth[f]))
        pruned += read < len(AMOUNTS)
        # the HiveQL text route (Spark applies the text to rows): every file holding a match kept
        _, listing, _ = list_files(str(colliding), f)
        assert truth[f] <= _ids_of([fs.path for fs in listing.files]), (f, listing.files_kept)
    assert pruned >= len(FILTERS) // 2, pruned  # the bounds decide most of them


def test_the_real_v9_table_reads_no_file_for_amount_above_1e9(spark: Any, shared_tables: dict[str, Path]) -> None:
    """``amount > 1e9`` on the real copy-on-write v9 table: Hudi's own data skipping reads 0 of 5 files; hudi-hive
    kept all 5 (the cast comparison was not translated) and now reads none, with the same (empty) answer."""
    register(spark)
    table = str(shared_tables["sample_table.cow.v9_txns_simple_meta"])
    df = spark.read.format("hudi-hive").load(table)
    assert df.count() > 0
    q = spark.read.format("hudi-hive").load(table).where("amount > 1e9")
    assert q.count() == 0
    assert _files_read(spark, spark.read.format("hudi-hive").load(table).where("amount > 1e9").select("txn_id")) == 0
    _, listing, _ = list_files(table, "amount > 1e9")
    assert (listing.files_total, listing.files_kept) == (5, 0)
