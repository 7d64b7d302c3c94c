"""The `hudi-hive` data source used the way people use it: one DataFrame, many queries.

Spark 4.3 keeps the read plan (the pickled reader and its partitions) that a filter-pushdown pass produces on the
relation's data source object, shared by every scan of that relation, and a scan whose filters cannot be pushed
(an OR, none at all) reads with whatever plan the previous scan left there. These tests reproduce that sequence:
a scan must prune with exactly the filters Spark pushed for it, or with none.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hive_bridge.spark import (
    PYTHON_SOURCE,
    ROUTE_INDEX,
    last_scan_report,
    read_hudi,
    register,
)
from hive_bridge.testing.writer import HudiWriter

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def reuse_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """32 file groups of 50 rows, NaN/-0.0/nulls in `price`, names, clustered ids; one upsert."""
    root = tmp_path_factory.mktemp("reuse") / "reuse_table"
    n = 1600
    ids = list(range(0, n * 7, 7))
    price = [[math.nan, -0.0, None, 0.0, 250.0][i % 5] if i % 11 == 0 else float(i % 300) for i in range(n)]
    name = [None if i % 13 == 0 else ("alpha" if i % 97 == 0 else f"n{i % 40}") for i in range(n)]
    data = pa.table({"id": pa.array(ids, pa.int64()), "price": pa.array(price, pa.float64()),
                     "name": pa.array(name, pa.string())})
    writer = HudiWriter(root, partition_fields=(), record_key_fields=("id",), rows_per_file=50)
    writer.insert(data)
    writer.upsert(data.slice(400, 20).set_column(1, "price", pa.array([101.0] * 20, pa.float64())))
    return root


def _truth(spark: Any, root: Path, where: str) -> int:
    return int(read_hudi(spark, str(root), None, prune=False).df.where(where).count())


def test_reused_dataframe_never_applies_an_earlier_querys_filters(spark, reuse_table) -> None:  # type: ignore[no-untyped-def]
    register(spark)
    df = spark.read.format("hudi-hive").load(str(reuse_table))
    or_query = "price > 100 or name = 'alpha'"
    expected_or = _truth(spark, reuse_table, or_query)
    expected_lt = _truth(spark, reuse_table, "id < 5000")
    assert 0 < expected_lt < expected_or or 0 < expected_or < expected_lt or expected_or != expected_lt
    assert df.where(or_query).count() == expected_or
    assert df.where("id < 5000").count() == expected_lt
    assert df.where(or_query).count() == expected_or  # lost 3/4 of its rows before the fix
    assert df.where("price = 0.0").count() == _truth(spark, reuse_table, "price = 0.0")
    assert df.where(or_query).count() == expected_or
    assert df.count() == _truth(spark, reuse_table, "true")


def test_temp_view_and_self_join_see_every_row(spark, reuse_table) -> None:  # type: ignore[no-untyped-def]
    register(spark)
    df = spark.read.format("hudi-hive").load(str(reuse_table))
    df.createOrReplaceTempView("reuse_view")
    assert spark.sql("select count(*) from reuse_view where id < 700").collect()[0][0] == \
        _truth(spark, reuse_table, "id < 700")
    assert spark.sql("select count(*) from reuse_view where price > 100 or id > 11000").collect()[0][0] == \
        _truth(spark, reuse_table, "price > 100 or id > 11000")
    # two scans of one relation in one query, each with its own pushed filters
    joined = df.where("id < 3500").alias("a").join(df.where("id >= 3500").alias("b"), on="name")
    full = read_hudi(spark, str(reuse_table), None, prune=False).df
    expected = full.where("id < 3500").alias("a").join(full.where("id >= 3500").alias("b"), on="name").count()
    assert joined.count() == expected


def test_scan_report_says_whether_pushed_filters_pruned(spark, reuse_table) -> None:  # type: ignore[no-untyped-def]
    register(spark)
    # hudi-hive: Spark's own file source, its file index prunes every scan with that scan's filters
    spark.read.format("hudi-hive").load(str(reuse_table)).where("id = 14").count()
    report = last_scan_report(str(reuse_table))
    assert report is not None and report["files_total"] == 32
    assert report["pruning"] is True and report["files_read"] == 1 and report["route"] == ROUTE_INDEX
    # the Python data source (Spark Connect's hudi-hive)
    spark.read.format(PYTHON_SOURCE).load(str(reuse_table)).where("id = 14").count()
    report = last_scan_report(str(reuse_table))
    assert report is not None and report["files_total"] == 32
    # Spark shares one read plan among the scans of a relation: pruning with pushed filters would be unsafe
    assert report["pruning"] is False and report["files_read"] == 32
    assert "shares" in report["why_not"]


def test_the_python_reader_plans_every_slice_whatever_spark_pushes(reuse_table) -> None:  # type: ignore[no-untyped-def]
    """The Python data source's reader takes no pushed filter (pyspark's default pushFilters: Spark keeps them all
    and applies them to rows) and plans every latest slice. Run in-process, as a planning worker would."""
    from hive_bridge.spark import HudiHiveReader, spark_schema
    from hive_bridge.spark.filters import filter_classes
    from hive_bridge.table.table import HudiTable

    reader = HudiHiveReader(str(reuse_table), spark_schema(HudiTable.open(reuse_table).arrow_schema()), {})
    if hasattr(reader, "pushFilters"):  # pyspark 4.1+
        pushed = [filter_classes().EqualTo(("id",), 14)]
        assert list(reader.pushFilters(pushed)) == pushed
    assert len(reader.partitions()) == 32


def test_a_catalog_table_of_the_python_data_source_names_the_routes_that_read_it(  # type: ignore[no-untyped-def]
        spark, reuse_table) -> None:
    """Spark hands a Python data source none of a catalog table's LOCATION or OPTIONS: the read fails saying so
    and naming the JVM file index (register) and `hive-bridge serve`; the same table USING hudi-hive reads."""
    register(spark)
    spark.sql(f"CREATE TABLE reuse_py USING `{PYTHON_SOURCE}` LOCATION '{reuse_table}'")
    try:
        with pytest.raises(Exception) as failed:
            spark.sql("SELECT count(*) FROM reuse_py").collect()
        assert "LOCATION or OPTIONS" in str(failed.value) and "hive-bridge serve" in str(failed.value)
    finally:
        spark.sql("DROP TABLE IF EXISTS reuse_py")
    spark.sql(f"CREATE TABLE reuse_jvm USING `hudi-hive` LOCATION '{reuse_table}'")
    try:
        assert spark.sql("SELECT count(*) FROM reuse_jvm").collect()[0][0] == 1600
    finally:
        spark.sql("DROP TABLE IF EXISTS reuse_jvm")
