"""Time travel through Spark: read_hudi(as_of=), the Python data source's and hudi-hive's ``as.of.instant``;
rows equal hudi-rs's time-travel read of the same instant. Spark SQL's TIMESTAMP AS OF / VERSION AS OF never
reach a file source (Spark refuses them first)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from hive_bridge.spark import PYTHON_SOURCE, read_hudi, register
from hive_bridge.spark.sessions import SparkReadError
from tests.hive_bridge.layout.test_time_travel import History, hudi_rs_rows, write_history


@pytest.fixture(scope="module")
def hudi_hive(spark: Any) -> None:
    register(spark)


@pytest.fixture(scope="module")
def mor(tmp_path_factory: pytest.TempPathFactory) -> History:
    return write_history(tmp_path_factory.mktemp("ttmor") / "t", 6, "MERGE_ON_READ", seed=11, commits=8)


@pytest.fixture(scope="module")
def cow(tmp_path_factory: pytest.TempPathFactory) -> History:
    return write_history(tmp_path_factory.mktemp("ttcow") / "t", 8, "COPY_ON_WRITE", seed=12, commits=8)


def _rows(df: Any) -> Counter[tuple[int, str, int]]:
    return Counter((r["id"], r["name"], r["ts"]) for r in df.select("id", "name", "ts").collect())


def test_read_hudi_as_of_merge_on_read(spark: Any, mor: History) -> None:
    # version-6 log files hold the blocks of later delta commits too: the merge must stop at the instant
    for instant in (mor.instants[1], mor.instants[len(mor.instants) // 2], mor.instants[-2]):
        read = read_hudi(spark, str(mor.path), "id >= 3 and id <= 40", as_of=instant)
        assert read.listing.as_of == instant
        expected = Counter(r for r in hudi_rs_rows(mor.path, instant) if 3 <= r[0] <= 40)
        assert _rows(read.df) == expected, instant
    with pytest.raises(SparkReadError, match=r"as of '2000-01-01'"):
        read_hudi(spark, str(mor.path), None, as_of="2000-01-01")


def test_python_data_source_as_of(spark: Any, hudi_hive: None, mor: History) -> None:
    instant = mor.instants[2]
    df = spark.read.format(PYTHON_SOURCE).option("as.of.instant", instant).load(str(mor.path))
    assert _rows(df) == Counter(hudi_rs_rows(mor.path, instant))


def test_hudi_hive_as_of_copy_on_write(spark: Any, hudi_hive: None, cow: History) -> None:
    for instant in (cow.instants[0], cow.instants[4]):
        df = spark.read.format("hudi-hive").option("as.of.instant", instant).load(str(cow.path)).where("id < 30")
        assert _rows(df) == Counter(r for r in hudi_rs_rows(cow.path, instant) if r[0] < 30), instant


def test_hudi_hive_refuses_what_it_cannot_read(spark: Any, hudi_hive: None, cow: History, mor: History) -> None:
    # a merge-on-read snapshot as of an instant is read (merged up to it: test_spark_time_travel_mor.py)
    df = spark.read.format("hudi-hive").option("as.of.instant", mor.instants[1]).load(str(mor.path))
    assert _rows(df) == Counter(hudi_rs_rows(mor.path, mor.instants[1]))
    unknown = str(int(mor.instants[1]) + 1)
    with pytest.raises(Exception, match=f"as of {unknown}: no such instant on the timeline") as exc:
        spark.read.format("hudi-hive").option("as.of.instant", unknown).load(str(mor.path)).collect()
    assert str(mor.path) in str(exc.value)
    with pytest.raises(Exception, match=r"before the first completed commit") as exc:
        spark.read.format("hudi-hive").option("as.of.instant", "2001-01-01").load(str(cow.path)).collect()
    assert str(cow.path) in str(exc.value)
    # an incremental query keeps only its commits' rows: a file index (whole files) cannot, and says where it can
    with pytest.raises(Exception, match=r"incremental is not read by the hudi-hive file index") as exc:
        (spark.read.format("hudi-hive").option("hoodie.datasource.query.type", "incremental")
         .option("hoodie.datasource.read.begin.instanttime", cow.instants[0]).load(str(cow.path)).collect())
    assert "read_table" in str(exc.value) and "begin_instant" in str(exc.value)


def test_spark_sql_time_travel_does_not_reach_a_file_source(spark: Any, hudi_hive: None, cow: History) -> None:
    from pyspark.errors import AnalysisException

    spark.read.format("hudi-hive").load(str(cow.path)).createOrReplaceTempView("tt_cow")
    for clause in (f"VERSION AS OF '{cow.instants[0]}'", "TIMESTAMP AS OF '2024-01-01 00:00:00'"):
        with pytest.raises(AnalysisException, match=r"UNSUPPORTED_FEATURE\.TIME_TRAVEL"):
            spark.sql(f"SELECT count(*) FROM tt_cow {clause}").collect()



def test_read_hudi_incremental_merge_on_read(spark: Any, mor: History) -> None:
    from tests.hive_bridge.layout.test_incremental_query import hudi_rs_incremental

    begin, end = mor.instants[2], mor.instants[-3]
    read = read_hudi(spark, str(mor.path), "id < 30", begin_instant=begin, end_instant=end)
    assert read.listing.commit_range == (begin, end)
    assert _rows(read.df) == Counter({k: v for k, v in hudi_rs_incremental(mor.path, begin, end).items()
                                      if k[0] < 30})
    with pytest.raises(SparkReadError, match="not both"):
        read_hudi(spark, str(mor.path), None, as_of=end, begin_instant=begin)


def test_incremental_options_python_data_source_and_read_table(spark: Any, hudi_hive: None, cow: History,
                                                               mor: History) -> None:
    from tests.hive_bridge.layout.test_incremental_query import hudi_rs_incremental

    # the Python data source, Hudi's options (merge-on-read, version 6: requested times)
    begin, end = mor.instants[1], mor.instants[-2]
    df = (spark.read.format(PYTHON_SOURCE).option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.read.begin.instanttime", begin)
          .option("hoodie.datasource.read.end.instanttime", end).load(str(mor.path)))
    assert _rows(df) == hudi_rs_incremental(mor.path, begin, end)
    # read_table from the catalog (copy-on-write, version 8: completion times)
    from hive_bridge.spark import read_table
    from hive_bridge.table.table import HudiTable

    writes = HudiTable.open(cow.path).timeline.completed_writes
    begin, end = str(writes[1].completion_time), str(writes[-2].completion_time)
    spark.sql(f"CREATE TABLE incr_v8 USING `hudi-hive` LOCATION '{cow.path}'")
    read = read_table(spark, "incr_v8", "id < 30", query_type="incremental", begin_instant=begin, end_instant=end)
    assert read.listing.commit_range == (begin, end)
    assert _rows(read.df) == Counter({k: v for k, v in hudi_rs_incremental(cow.path, begin, end).items()
                                      if k[0] < 30})
    with pytest.raises(SparkReadError, match="an incremental query needs begin_instant"):
        read_table(spark, "incr_v8", None, query_type="incremental")
