"""Hive-on-Spark reads: a pruned read returns exactly the rows of a full read of the latest slices with the same
filter, on every real Hudi table of ../shared and on generated tables with hypothesis-chosen filters; the full
read equals what hudi-rs reads; the `hudi-hive` data source and reading by catalog name do the same."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.spark import (
    PYTHON_SOURCE,
    SparkReadError,
    last_scan_report,
    read_hudi,
    read_table,
    register,
)
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter

pytestmark = pytest.mark.spark

SAMPLE_FILTERS = [
    "leaf-(EQUALS bytefield 10)",
    "(not leaf-(LESS_THAN_EQUALS id 2))",
    "leaf-(IN name Alice Bob)",
    "(or leaf-(EQUALS longfield 9876543210) leaf-(IS_NULL name))",
    "leaf-(BETWEEN datefield 2023-04-02 2023-04-03)",
    "(not leaf-(BETWEEN decimalfield 11111.22222 20000))",
    "leaf-(LESS_THAN timestampfield 2023-04-02 00:00:00.0)",
    "(and leaf-(EQUALS isactive true) (not leaf-(IS_NULL intfield)))",
    "leaf-(NULL_SAFE_EQUALS doublefield 2.71828)",
    "(or leaf-(EQUALS floatfield 2.0) leaf-(LESS_THAN shortfield 200))",
    "id > 2 and name <> 'Carol'",
    "bytefield in (10, 30) or datefield = DATE'2023-04-04'",
]
TRIPS_FILTERS = [
    "leaf-(EQUALS city san_francisco)",
    "(not leaf-(LESS_THAN fare 50.0))",
    "city = 'chennai' or fare < 20",
    "leaf-(IN rider rider-A rider-E)",
]


def _rows_equal(a: Any, b: Any) -> tuple[int, int]:
    from pyspark.sql import functions as F

    cols = [F.to_json(F.struct("*")).alias("row")]
    x, y = a.select(cols), b.select(cols)
    sides = (x.exceptAll(y).withColumn("side", F.lit(0))
             .unionByName(y.exceptAll(x).withColumn("side", F.lit(1))).groupBy("side").count().collect())
    counts = {r["side"]: r["count"] for r in sides}
    return counts.get(0, 0), counts.get(1, 0)


def _hudi_rows(root: Path, *columns: str) -> list[tuple[Any, ...]]:
    """The rows hudi-rs reads (snapshot, logs merged), as tuples of the given columns."""
    import hudi

    out: list[tuple[Any, ...]] = []
    for batch in hudi.HudiTableBuilder.from_base_uri(str(root)).build().read():
        out.extend(zip(*(batch.column(c).to_pylist() for c in columns), strict=True))
    return out


def _filters_for(name: str) -> list[str]:
    return TRIPS_FILTERS if "trips" in name else SAMPLE_FILTERS


def _non_empty(shared_tables: dict[str, Path]) -> dict[str, Path]:
    return {k: v for k, v in shared_tables.items() if "empty" not in k}


def test_full_read_equals_hudi_rs_on_every_table(spark, shared_tables) -> None:  # type: ignore[no-untyped-def]
    assert len(shared_tables) >= 20
    for name, root in shared_tables.items():
        full = read_hudi(spark, str(root), None, prune=False)
        key = HudiTable.open(root).properties.record_key_fields[0]
        ours = sorted(r[0] for r in full.df.select(key).collect())
        assert ours == sorted(v for v, in _hudi_rows(root, key)), name


@pytest.mark.parametrize("table_name", [
    "sample_table.cow.v6_complexkeygen_hivestyle",
    "sample_table.cow.v8_simplekeygen_nonhivestyle",
    "sample_table.cow.v6_simplekeygen_nonhivestyle_overwritetable",
    "sample_table.mor.parquet.v6_simplekeygen_hivestyle_no_metafields",
    "sample_table.cow.v9_txns_simple_nometa",
    "quickstart_trips_table.mor.avro.v8_trips_8i3u1d",
])
def test_pruned_equals_full_on_real_tables(spark, shared_tables, table_name: str) -> None:  # type: ignore[no-untyped-def]
    root = shared_tables[table_name]
    columns = {f.lower() for f in read_hudi(spark, str(root), None).df.columns}
    filters = _filters_for(table_name)
    if table_name != "sample_table.cow.v6_complexkeygen_hivestyle":  # every filter once, a sample elsewhere
        filters = filters[::3]
    if "v9_txns" in table_name:
        first = sorted(columns - {c for c in columns if c.startswith("_hoodie")})[0]
        filters = [f"leaf-(IS_NULL {first})", f"(not leaf-(IS_NULL {first}))"]
    for text in filters:
        pruned = read_hudi(spark, str(root), text)
        full = read_hudi(spark, str(root), text, prune=False)
        assert _rows_equal(pruned.df, full.df) == (0, 0), (table_name, text)
        assert pruned.listing.files_kept <= full.listing.files_kept


def test_pruning_actually_prunes_real_tables(spark, shared_tables) -> None:  # type: ignore[no-untyped-def]
    root = shared_tables["sample_table.cow.v6_complexkeygen_hivestyle"]
    read = read_hudi(spark, str(root), "leaf-(EQUALS bytefield 10)")
    assert read.listing.files_total == 3
    assert read.listing.dropped_by_partition == 2
    assert sorted(r[0] for r in read.df.select("id").collect()) == [1, 3]
    read = read_hudi(spark, str(root), "(not leaf-(LESS_THAN_EQUALS longfield 2000000000))")
    assert read.listing.dropped_by_statistics >= 1
    assert sorted(r[0] for r in read.df.select("id").collect()) == [2]


def test_merge_on_read_logs_are_merged_not_stale(spark, shared_tables) -> None:  # type: ignore[no-untyped-def]
    root = shared_tables["sample_table.mor.parquet.v6_simplekeygen_nonhivestyle"]
    read = read_hudi(spark, str(root), None)
    assert read.listing.kept_log_files >= 1
    expected = sorted(_hudi_rows(root, "id", "name"))
    assert sorted((r[0], r[1]) for r in read.df.select("id", "name").collect()) == expected


def test_damaged_table_is_a_clear_error(spark, tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SparkReadError, match=str(tmp_path)):
        read_hudi(spark, str(tmp_path), None)


# -- generated tables, hypothesis-chosen filters -------------------------------------------------------------

COLUMNS = {"k": "bigint", "v": "double", "s": "string", "d": "date", "amt": "decimal(10,2)", "part": "string"}


@pytest.fixture(scope="module")
def generated_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 files of 25 rows, clustered keys, NaN/-0.0/nulls in `v`, hive-style partitions, one upsert."""
    root = tmp_path_factory.mktemp("gen") / "gen_table"
    n = 1000
    k = list(range(n))
    special = [float("nan"), -0.0, None, math.inf]
    v = [special[i % 4] if i % 37 == 0 else (i % 100) / 4 for i in k]
    s = [None if i % 53 == 0 else f"name-{i // 25:03d}" for i in k]
    d = [dt.date(2024, 1, 1) + dt.timedelta(days=i // 100) for i in k]
    amt = [Decimal(i).scaleb(-2) for i in k]
    part = [f"p{i // 250}" for i in k]
    data = pa.table({"k": pa.array(k, pa.int64()), "v": pa.array(v, pa.float64()), "s": pa.array(s, pa.string()),
                     "d": pa.array(d, pa.date32()), "amt": pa.array(amt, pa.decimal128(10, 2)),
                     "part": pa.array(part, pa.string())})
    writer = HudiWriter(root, partition_fields=("part",), hive_style=True, record_key_fields=("k",),
                        rows_per_file=25)
    writer.insert(data)
    writer.upsert(data.slice(100, 10).set_column(2, "s", pa.array(["updated"] * 10)))
    return root


def _leaf(draw: Any) -> tuple[str, ...]:
    col = draw(st.sampled_from(["k", "v", "s", "d", "amt", "part"]))
    op = draw(st.sampled_from(["EQUALS", "LESS_THAN", "LESS_THAN_EQUALS", "IN", "BETWEEN", "IS_NULL",
                               "NULL_SAFE_EQUALS"]))
    lit = {
        "k": st.integers(-5, 1005).map(str),
        "v": st.sampled_from(["NaN", "-0.0", "0.0", "12.5", "24.75", "Infinity", "-Infinity", "100.0"]),
        "s": st.integers(0, 41).map(lambda i: f"name-{i:03d}") | st.just("updated"),
        "d": st.integers(0, 11).map(lambda i: (dt.date(2024, 1, 1) + dt.timedelta(days=i)).isoformat()),
        "amt": st.integers(-100, 1100).map(lambda i: str(Decimal(i).scaleb(-2))),
        "part": st.sampled_from(["p0", "p1", "p2", "p3", "p9"]),
    }[col]
    if op == "IS_NULL":
        return (f"({op} {col})",)
    if op == "IN":
        values = draw(st.lists(lit, min_size=1, max_size=3))
        return (f"({op} {col} {' '.join(values)})",)
    if op == "BETWEEN":
        return (f"({op} {col} {draw(lit)} {draw(lit)})",)
    return (f"({op} {col} {draw(lit)})",)


@st.composite
def sarg_texts(draw: Any, depth: int = 0) -> str:
    if depth >= 2 or draw(st.booleans()):
        text = "leaf-" + _leaf(draw)[0]
        return f"(not {text})" if draw(st.booleans()) else text
    op = draw(st.sampled_from(["and", "or"]))
    kids = [draw(sarg_texts(depth + 1)) for _ in range(draw(st.integers(2, 3)))]
    return f"({op} {' '.join(kids)})"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(text=sarg_texts())
def test_pruned_equals_full_on_generated_table(spark, generated_table, text: str) -> None:  # type: ignore[no-untyped-def]
    s = sarg.parse(text, COLUMNS)
    pruned = read_hudi(spark, str(generated_table), s)
    full = read_hudi(spark, str(generated_table), s, prune=False)
    assert _rows_equal(pruned.df, full.df) == (0, 0), text


def test_generated_table_selective_filter_reads_few_files(spark, generated_table) -> None:  # type: ignore[no-untyped-def]
    read = read_hudi(spark, str(generated_table), "leaf-(EQUALS k 517)")
    assert read.listing.files_total == 40
    assert read.listing.files_kept == 1
    assert [r[0] for r in read.df.select("k").collect()] == [517]


# -- the data source and the catalog -------------------------------------------------------------------------

def test_data_source_prunes_with_pushed_filters(spark, generated_table) -> None:  # type: ignore[no-untyped-def]
    register(spark)
    df = spark.read.format("hudi-hive").load(str(generated_table)).where("k > 990 and part = 'p3'")
    rows = sorted(r["k"] for r in df.select("k").collect())
    assert rows == list(range(991, 1000))
    report = last_scan_report(str(generated_table))
    # hudi-hive is Spark's own file source: its file index prunes every scan with that scan's filters
    assert report is not None and report["files_total"] == 40 and report["files_read"] == 1
    # the Python data source never prunes with pushed filters (test_data_source_reuse.py says why)
    python = spark.read.format(PYTHON_SOURCE).load(str(generated_table)).where("k > 990 and part = 'p3'")
    assert sorted(r["k"] for r in python.select("k").collect()) == list(range(991, 1000))
    report = last_scan_report(str(generated_table))
    assert report is not None and report["files_total"] == 40
    assert report["files_read"] == 40
    full = read_hudi(spark, str(generated_table), None).df.where("k > 990 and part = 'p3'")
    assert _rows_equal(df, full) == (0, 0)


def test_data_source_keeps_unconvertible_filters_with_spark(spark, generated_table) -> None:  # type: ignore[no-untyped-def]
    register(spark)
    df = spark.read.format("hudi-hive").load(str(generated_table)).where("s like 'name-01%' or k < 3")
    full = read_hudi(spark, str(generated_table), None).df.where("s like 'name-01%' or k < 3")
    assert _rows_equal(df, full) == (0, 0)
    report = last_scan_report(str(generated_table))
    assert report is not None and report["files_read"] == 40  # an OR is never pushed: nothing pruned


def test_read_by_catalog_name(spark, generated_table) -> None:  # type: ignore[no-untyped-def]
    spark.sql(f"CREATE TABLE IF NOT EXISTS gen_hudi USING parquet LOCATION '{generated_table}' "
              "TBLPROPERTIES ('storage_handler'='org.apache.hudi.hadoop.hive.HoodieStorageHandler')")
    read = read_table(spark, "gen_hudi", "leaf-(EQUALS k 5)")
    assert [r[0] for r in read.df.select("k").collect()] == [5]
    assert read.listing.files_kept == 1
    spark.sql(f"CREATE TABLE IF NOT EXISTS not_hudi USING parquet LOCATION '{generated_table}'")
    with pytest.raises(SparkReadError, match="not stored by the Hudi storage handler"):
        read_table(spark, "not_hudi", None)


def test_data_source_is_discovered_without_register(generated_table, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """PySpark imports every top-level `pyspark_*` module and registers its DefaultSource: a fresh session finds
    `hudi-hive` with no register() call."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import os, sys
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from hive_bridge.spark import session
        spark = session("discovery-test")
        rows = spark.read.format("hudi-hive").load({str(generated_table)!r}).where("k = 7").select("k").collect()
        print("ROWS", [r[0] for r in rows])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, check=False)
    assert "ROWS [7]" in proc.stdout, proc.stderr[-2000:]


def test_data_source_reads_timestamps_and_merged_logs(spark, shared_tables) -> None:  # type: ignore[no-untyped-def]
    """A real merge-on-read table (timestamps, decimals, nested columns, log files) through `hudi-hive` equals
    the Hive-on-Spark read."""
    register(spark)
    root = str(shared_tables["sample_table.mor.parquet.v6_simplekeygen_nonhivestyle"])
    via_source = spark.read.format("hudi-hive").load(root).where("id > 1")
    via_reader = read_hudi(spark, root, None).df.where("id > 1")
    assert via_source.count() >= 1
    assert _rows_equal(via_source, via_reader) == (0, 0)


@pytest.mark.parametrize(("table_name", "rows"), [("sample_table.cow.v9_lance_nonpartitioned", 9),
                                                  ("sample_table.mor.avro.v9_lance_nonhivestyle", 14)])
def test_lance_base_files_are_read_not_dropped(spark, shared_tables, table_name: str, rows: int) -> None:  # type: ignore[no-untyped-def]
    """Lance base files (which Spark's parquet reader cannot open) are read through hudi-rs, kept as unknown by
    pruning: never an empty table."""
    register(spark)
    root = str(shared_tables[table_name])
    assert read_hudi(spark, root, None).df.count() == rows == len(_hudi_rows(Path(root), "_hoodie_record_key"))
    assert spark.read.format("hudi-hive").load(root).count() == rows
    key = HudiTable.open(root).properties.record_key_fields[0]
    one = sorted(v for v, in _hudi_rows(Path(root), key))[0]
    text = f"leaf-(EQUALS {key} {one})"
    read = read_hudi(spark, root, text)
    assert read.listing.files_kept == read.listing.files_total  # no statistics: nothing is skipped
    # plain slices are kept as unknown; a merged slice's Lance base part is unknown (its logs may keep it too)
    assert read.listing.kept_unknown >= read.listing.files_total - read.listing.kept_log_files
    assert [r[0] for r in read.df.select(key).collect()] == [one]
