"""Spark's parquet filter pushdown left ON in the session: `register` changes no parquet setting, a plain parquet
read of the same session keeps Spark's own row-group skipping (and with it Spark's NaN / -0.0 losses), and a
`hudi-hive` scan returns every matching row, because its file format (`SoundParquetFileFormat`) hands Spark's
parquet reader only the filters that cannot lose a row."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hive_bridge.spark import register
from hive_bridge.testing.writer import HudiWriter
from tests.hive_bridge.spark.session_conf import session_conf

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

PUSHDOWN = "spark.sql.parquet.filterPushdown"
RECORD_LEVEL = "spark.sql.parquet.recordLevelFilter.enabled"
VECTORIZED = "spark.sql.parquet.enableVectorizedReader"
NAN = float("nan")
# per file (10 rows, one row group): NaN only in some files, -0.0 where the other values are positive
V = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
     NAN, NAN, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0, 900.0,
     -0.0, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5,
     NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN,
     -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0, -0.0]
HAZARDS = ["v = double('NaN')", "v > 100", "v >= 1000", "v = 0.0", "v <= 0.0", "v in (0.0, 1.0)",
           "v <=> double('NaN')", "not (v < 1000)", "f = float('NaN')", "f > 100", "f = 0.0",
           "k < 25 or v = double('NaN')", "x < 4294967296", "x >= -4294967296 and x < 4294967300",
           "x in (4294967296, 3)", "x = 4294967299", "k >= 3 and k < 9", "s like 's1%'", "s = 's42'",
           "x is null", "k > 45"]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five files of 10 rows (NaN, -0.0 as above in `v` and `f`), then five more after `x` was widened
    int -> bigint (the first files store INT32, the later INT64 with values beyond the int range)."""
    root = tmp_path_factory.mktemp("sound") / "t"
    writer = HudiWriter(root, record_key_fields=("k",), rows_per_file=10)
    n = len(V)
    writer.insert(pa.table({"k": pa.array(range(n), pa.int64()), "v": pa.array(V, pa.float64()),
                            "f": pa.array(V, pa.float32()), "x": pa.array(range(n), pa.int32()),
                            "s": pa.array([f"s{i}" for i in range(n)])}))
    big = [2**32 + i for i in range(n)]
    writer.insert(pa.table({"k": pa.array(range(n, 2 * n), pa.int64()), "v": pa.array(V, pa.float64()),
                            "f": pa.array(V, pa.float32()), "x": pa.array(big, pa.int64()),
                            "s": pa.array([f"s{i}" for i in range(n, 2 * n)])}))
    return root


@pytest.fixture(scope="module")
def pushdown_on(spark: Any) -> Iterator[None]:
    with session_conf(spark, {PUSHDOWN: "true"}, keep=(RECORD_LEVEL, VECTORIZED)):
        register(spark)
        yield


def _rows(df: Any, q: str) -> list[str]:
    from pyspark.sql import functions as F

    out = df.where(q).select(F.to_json(F.struct(*[F.col(c).cast("string") for c in ("k", "v", "f", "x", "s")])))
    return sorted(r[0] for r in out.collect())


def _model(n: int) -> list[dict[str, Any]]:
    rows = [{"k": i, "v": V[i], "f": V[i], "x": i, "s": f"s{i}"} for i in range(n)]
    return rows + [{"k": n + i, "v": V[i], "f": V[i], "x": 2**32 + i, "s": f"s{n + i}"} for i in range(n)]


def _truth_df(spark: Any) -> Any:
    """The model's rows as a DataFrame built in memory (no parquet file, no statistics to skip by)."""
    rows = _model(len(V))
    return spark.createDataFrame([(r["k"], r["v"], r["f"], r["x"], r["s"]) for r in rows],
                                 "k bigint, v double, f float, x bigint, s string")


@pytest.mark.parametrize("reader", ["vectorized", "row-record-level"])
def test_hudi_hive_keeps_every_row_with_pushdown_on(spark, pushdown_on, table, reader: str) -> None:  # type: ignore[no-untyped-def]
    """Every hazard through hudi-hive with the session's parquet pushdown ON equals the in-memory truth; with the
    row-based reader and record-level filtering on too (Spark then applies pushed filters to each row)."""
    spark.conf.set(VECTORIZED, "true" if reader == "vectorized" else "false")
    spark.conf.set(RECORD_LEVEL, "false" if reader == "vectorized" else "true")
    df = spark.read.format("hudi-hive").load(str(table))
    truth = _truth_df(spark)
    assert dict(df.dtypes)["x"] == "bigint"
    for q in HAZARDS:
        expected = _rows(truth, q)
        assert _rows(df, q) == expected, q
    nan_rows = sum(1 for x in V if math.isnan(x)) * 2
    assert len(_rows(df, "v = double('NaN')")) == nan_rows
    assert spark.conf.get(PUSHDOWN) == "true"


def test_register_leaves_parquet_pushdown_on_for_other_tables(spark, pushdown_on, table) -> None:  # type: ignore[no-untyped-def]
    """register changes no parquet setting; a plain `spark.read.parquet` of the same files in the same session
    still gets Spark's row-group skipping: its NaN-losing behaviour is the proof (Spark skips the row groups whose
    min/max ignore NaN), and turning pushdown off there brings the rows back."""
    spark.conf.set(VECTORIZED, "true")
    spark.conf.set(RECORD_LEVEL, "false")
    register(spark)
    assert spark.conf.get(PUSHDOWN) == "true"
    files = sorted(str(p) for p in table.rglob("*.parquet") if ".hoodie" not in p.parts)
    files = [f for f in files if pq.read_schema(f).field("x").type == pa.int32()]  # the first commit's
    plain = spark.read.parquet(*files)
    nan_rows = sum(1 for f in files for x in pq.read_table(f, columns=["v"]).column("v").to_pylist()
                   if math.isnan(x))
    assert nan_rows == sum(1 for x in V if math.isnan(x))
    assert plain.where("v = double('NaN')").count() < nan_rows  # pushed down: row groups skipped
    hudi = spark.read.format("hudi-hive").load(str(table))
    assert hudi.where("v = double('NaN')").count() == 2 * nan_rows
    spark.conf.set(PUSHDOWN, "false")
    try:
        assert plain.where("v = double('NaN')").count() == nan_rows
    finally:
        spark.conf.set(PUSHDOWN, "true")


def test_sound_filter_classes(spark, pushdown_on) -> None:  # type: ignore[no-untyped-def]
    """What SoundParquetFileFormat hands Spark's parquet reader, filter by filter."""
    jvm = spark._jvm
    sources = jvm.org.apache.spark.sql.sources
    fmt = jvm.io.hivebridge.spark.SoundParquetFileFormat
    schema = jvm.org.apache.spark.sql.types.DataType.fromJson(json.dumps({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in
        [("v", "double"), ("f", "float"), ("x", "long"), ("n", "integer"), ("s", "string"), ("b", "boolean"),
         ("d", "date"), ("amt", "decimal(10,2)"), ("ts", "timestamp"),
         ("st", {"type": "struct", "fields": [{"name": "a", "type": "integer", "nullable": True,
                                                "metadata": {}}]})]]}))
    long_ = jvm.java.lang.Long.valueOf
    # (a long within the int range crosses py4j as an Integer: the bigint cases run end to end above)
    kept = [sources.EqualTo("n", 3), sources.EqualTo("N", 3), sources.IsNull("s"),
            sources.StringStartsWith("s", "ab"), sources.EqualTo("b", True),
            sources.Not(sources.EqualTo("s", "a")), sources.Or(sources.EqualTo("n", 1), sources.IsNotNull("d"))]
    dropped = [sources.EqualTo("v", 1.0), sources.GreaterThan("f", jvm.java.lang.Float.valueOf("1")),
               sources.LessThan("x", long_("4294967296")), sources.GreaterThan("x", long_("-2147483649")),
               sources.Or(sources.EqualTo("n", 1), sources.EqualTo("v", 0.0)),
               sources.Not(sources.LessThan("v", 1.0)), sources.EqualNullSafe("v", 1.0),
               sources.GreaterThan("amt", jvm.java.math.BigDecimal("1.50")),
               sources.LessThan("ts", jvm.java.sql.Timestamp(0)), sources.EqualTo("st.a", 1),
               sources.EqualTo("missing", 1), sources.StringEndsWith("s", "z"),
               sources.IsNull("v")]  # any filter on a float or double column, null tests too
    for f in kept:
        assert fmt.safe(f, schema), f.toString()
    for f in dropped:
        assert not fmt.safe(f, schema), f.toString()


@pytest.mark.parametrize("reader", ["vectorized", "row-record-level"])
def test_read_hudi_keeps_every_row_and_leaves_the_session_alone(spark, pushdown_on, table, reader: str) -> None:  # type: ignore[no-untyped-def]
    """`read_hudi` / `read_slices` with the session's parquet pushdown ON: every hazard, applied to the DataFrame
    they return (Spark pushes the filter into their parquet scans), equals the in-memory truth, and the session's
    pushdown setting is the same afterwards."""
    from hive_bridge.spark import read_hudi

    spark.conf.set(VECTORIZED, "true" if reader == "vectorized" else "false")
    spark.conf.set(RECORD_LEVEL, "false" if reader == "vectorized" else "true")
    truth = _truth_df(spark)
    every = read_hudi(spark, str(table), prune=False).df
    for q in HAZARDS:
        assert _rows(every, q) == _rows(truth, q), q
        pruned = read_hudi(spark, str(table), q).df   # pruned by statistics, then the filter applied by Spark
        assert _rows(pruned, q) == _rows(truth, q), q
    assert spark.conf.get(PUSHDOWN) == "true"
    plan = every.where("k > 45")._jdf.queryExecution().executedPlan().toString()
    assert "PushedFilters: [IsNotNull(k), GreaterThan(k,45)]" in plan   # a sound filter still reaches the reader
