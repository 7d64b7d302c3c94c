"""The ``hudi-hive`` JVM file index: Spark's own query path asks the Python planner which files each scan reads.

Real Spark, real Hudi tables (written by hive_bridge.testing.writer, and the shared fixture tables). Truth is
Spark's parquet reader over the latest files with its parquet filter pushdown off; the files each scan read
(Spark's "number of files read" metric) are checked against the planner's kept set. The random-filter property
tests of test_spark_usage.py run through this route too (their ``hudi_hive`` fixture calls ``register``).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sarg
from hive_bridge.spark import PYTHON_SOURCE, pin_of, read_table, register
from hive_bridge.spark.file_index import PythonPlanner, planner
from hive_bridge.spark.jar import JVM_PACKAGE, jar_path
from hive_bridge.testing.writer import HudiWriter

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "hudi-tables"


@pytest.fixture(scope="module")
def hudi_hive(spark: Any) -> None:
    register(spark)


def _rows(n0: int, n1: int) -> pa.Table:
    ks = list(range(n0, n1))
    return pa.table({
        "k": pa.array(ks, pa.int64()),
        "v": pa.array([float("nan") if k % 17 == 0 else (-0.0 if k % 19 == 0 else k / 2) for k in ks]),
        "s": pa.array([None if k % 13 == 0 else f"s{k:04d}" for k in ks]),
        "ts": pa.array([1_700_000_000_000_000 + k * 3_600_000_000 for k in ks], pa.timestamp("us", tz="UTC")),
        "part": pa.array([f"p{k // 30 % 4}" for k in ks]),
        "pn": pa.array([k // 10 % 3 for k in ks], pa.int32()),
    })


def _cow(root: Path, drop_partition_columns: bool = False) -> Path:
    """A copy-on-write table: 120 keys, 10 consecutive keys a file, partitions part=p0..p3 / pn=0..2; with
    ``drop_partition_columns`` the files do not hold part and pn (their values live only in the paths)."""
    writer = HudiWriter(root, partition_fields=("part", "pn"), hive_style=True, record_key_fields=("k",),
                        rows_per_file=10)
    writer.insert(_rows(0, 120))
    if drop_partition_columns:
        for f in root.rglob("*.parquet"):
            if ".hoodie" not in f.parts:
                pq.write_table(pq.read_table(f).drop_columns(["part", "pn"]), f)
    return root


def _truth(spark: Any, root: Path, q: str) -> list[str]:
    files = [str(p) for p in root.rglob("*.parquet") if ".hoodie" not in p.parts]
    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    df = spark.read.option("basePath", str(root)).parquet(*files)
    return _json(df.where(q))


def _as_json(df: Any, cols: tuple[str, ...] = ("k", "v", "s", "ts", "part", "pn")) -> Any:
    from pyspark.sql import functions as F

    present = [c for c in cols if c in df.columns]
    return df.select(F.to_json(F.struct(*[F.col(c).cast("string") for c in present])))


def _json(df: Any) -> list[str]:
    return sorted(r[0] for r in _as_json(df).collect())


def _files_read(spark: Any, df: Any) -> int:
    return int(getattr(spark._jvm, JVM_PACKAGE).Planner.filesRead(df._jdf.queryExecution().executedPlan()))


QUERIES = ["k = 5", "k < 12", "k between 30 and 41", "k = 5 or k = 77", "v = 0.0", "isnan(v)", "s = 's0101'",
           "s is null", "part = 'p1'", "pn % 2 = 0", "part = 'p2' and k > 100", "not (k < 110)", "pn = 1 or k = 3",
           "ts > timestamp'2023-11-18 00:00:00'", "k in (1, 50, 99)", "s like 's01%'", "true", "k + 1 = 7"]


@pytest.mark.parametrize("dropped", [False, True], ids=["columns-in-files", "path-only-partition-columns"])
def test_one_dataframe_every_query_reads_the_kept_files(spark, hudi_hive, tmp_path, dropped: bool) -> None:  # type: ignore[no-untyped-def]
    root = _cow(tmp_path / "t", dropped)
    df = spark.read.format("hudi-hive").load(str(root))
    total = len([p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts])
    for q in QUERIES:
        got_df = _as_json(df.where(q))
        got = sorted(r[0] for r in got_df.collect())
        assert got == _truth(spark, root, q), q
        pin = pin_of(df)
        assert pin is not None
        read = _files_read(spark, got_df)
        # the planner's kept files, less the partitions the exact partition filter rejects (in the JVM)
        if dropped and ("part" in q or "pn" in q):
            assert read <= len(pin.last_kept) <= total, (q, read, len(pin.last_kept))
        else:
            assert read == len(pin.last_kept) <= total, (q, read, len(pin.last_kept))
    # selective queries read few files
    one = df.where("k = 5")
    one.collect()
    assert _files_read(spark, one) == 1


def test_partition_filters_are_exact_and_values_come_from_paths(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _cow(tmp_path / "t", drop_partition_columns=True)
    df = spark.read.format("hudi-hive").load(str(root))
    assert [f.name for f in df.schema.fields][-2:] == ["part", "pn"]
    assert dict(df.dtypes)["pn"] == "int"
    for q in ["pn % 2 = 0", "part = 'p3'", "pn + 1 = 2 and part <> 'p0'", "cast(pn as string) = '2'"]:
        assert _json(df.where(q)) == _truth(spark, root, q), q
    assert df.where("pn % 2 = 0").count() == 80


def test_time_based_key_generator_keeps_file_values(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The partition path (2024/01/15/10) is not ts_str's value: the column keeps the files' values."""
    name = "sample_table.cow.v9_timebasedkeygen_nonhivestyle"
    with zipfile.ZipFile(SHARED / f"{name}.zip") as z:
        z.extractall(tmp_path)
    root = next(p.parent for p in tmp_path.rglob("hoodie.properties")).parent
    import hudi

    df = spark.read.format("hudi-hive").load(str(root))
    latest = pa.Table.from_batches(hudi.HudiTableBuilder.from_base_uri(str(root)).build().read())
    assert sorted(r.ts_str for r in df.select("ts_str").collect()) == sorted(latest.column("ts_str").to_pylist())
    assert all("/" not in r.ts_str for r in df.select("ts_str").collect())


def test_temp_view_sql_self_join_and_dynamic_partition_pruning(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _cow(tmp_path / "t", drop_partition_columns=True)
    spark.read.format("hudi-hive").load(str(root)).createOrReplaceTempView("fi_view")
    files = [str(p) for p in root.rglob("*.parquet") if ".hoodie" not in p.parts]
    spark.read.option("basePath", str(root)).parquet(*files).createOrReplaceTempView("fi_truth")
    spark.createDataFrame([("p1", 1), ("p3", 9)], "part string, w int").createOrReplaceTempView("fi_dim")
    for aqe in ("true", "false"):
        spark.conf.set("spark.sql.adaptive.enabled", aqe)
        for sql in ["SELECT k, part FROM {t} WHERE k < 20 OR part = 'p3'",
                    "SELECT a.k, b.k FROM {t} a JOIN {t} b ON a.k = b.k + 1 WHERE a.k < 10 AND b.pn = 0",
                    "SELECT f.k, d.w FROM {t} f JOIN fi_dim d ON f.part = d.part WHERE d.w > 5",
                    "SELECT part, count(*), sum(k) FROM {t} WHERE pn <> 1 GROUP BY part"]:
            got = sorted(map(str, spark.sql(sql.format(t="fi_view")).collect()))
            assert got == sorted(map(str, spark.sql(sql.format(t="fi_truth")).collect())), (aqe, sql)
    spark.conf.set("spark.sql.adaptive.enabled", "true")
    # dynamic partition pruning: the dimension's filter selects partition p3 of the fact table
    spark.conf.set("spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly", "false")
    dpp = spark.sql("SELECT f.k FROM fi_view f JOIN fi_dim d ON f.part = d.part WHERE d.w > 5")
    assert sorted(r[0] for r in dpp.collect()) == list(range(90, 120))
    plan = str(dpp._jdf.queryExecution().executedPlan().toString())
    assert "dynamicpruning" in plan.lower() or _files_read(spark, dpp) <= 30


def test_a_commit_between_queries_is_invisible_until_refresh(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "t"
    writer = HudiWriter(root, partition_fields=("part", "pn"), hive_style=True, record_key_fields=("k",),
                        rows_per_file=10)
    writer.insert(_rows(0, 40))
    df = spark.read.format("hudi-hive").load(str(root))
    assert df.where("k >= 0").count() == 40
    writer.insert(_rows(1000, 1010))            # lands between two queries of one DataFrame
    assert df.where("k >= 0").count() == 40     # the DataFrame reads the state it was loaded at
    assert df.where("k >= 1000").count() == 0
    assert spark.read.format("hudi-hive").load(str(root)).count() == 50  # a new load sees the commit
    cached = spark.read.format("hudi-hive").load(str(root)).where("k < 5000").cache()
    try:
        assert cached.count() == 50
        writer.insert(_rows(2000, 2005))
        assert cached.count() == 50
        spark.catalog.refreshByPath(str(root))    # FileIndex.refresh(): the current state from now on
        assert cached.count() == 55
    finally:
        cached.unpersist()
    # a catalog table: REFRESH TABLE
    spark.sql(f"CREATE TABLE fi_refresh USING `hudi-hive` LOCATION '{root}'")
    try:
        assert spark.table("fi_refresh").count() == 55
        writer.insert(_rows(3000, 3001))
        spark.sql("REFRESH TABLE fi_refresh")
        assert spark.table("fi_refresh").count() == 56
    finally:
        spark.sql("DROP TABLE fi_refresh")


def test_evolved_schema_reads_as_the_latest(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "t"
    writer = HudiWriter(root, record_key_fields=("k",), rows_per_file=5)
    writer.insert(pa.table({"k": pa.array(range(10), pa.int64()), "x": pa.array(range(10), pa.int32())}))
    writer.insert(pa.table({"k": pa.array(range(10, 20), pa.int64()), "x": pa.array(range(10, 20), pa.int64()),
                            "extra": pa.array([f"e{i}" for i in range(10)])}))
    df = spark.read.format("hudi-hive").load(str(root))
    assert dict(df.dtypes)["x"] == "bigint" and "extra" in df.columns
    rows = sorted((r.k, r.x, r.extra) for r in df.where("x >= 8").collect())
    assert rows == [(8, 8, None), (9, 9, None)] + [(k, k, f"e{k - 10}") for k in range(10, 20)]


def test_merge_on_read_snapshot_is_merged_and_read_optimized_is_base_only(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    name = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"
    with zipfile.ZipFile(SHARED / f"{name}.zip") as z:
        z.extractall(tmp_path)
    root = next(p.parent for p in tmp_path.rglob("hoodie.properties")).parent
    import hudi

    table = hudi.HudiTableBuilder.from_base_uri(str(root)).build()
    merged = pa.Table.from_batches(table.read())
    snap = spark.read.format("hudi-hive").load(str(root))
    cols = ("uuid", "rider", "fare")
    want = sorted(str(tuple(r[c] for c in cols)) for r in merged.select(list(cols)).to_pylist())
    assert sorted(str(tuple(r)) for r in snap.select(*cols).collect()) == want
    fare = merged.column("fare").to_pylist()
    q = f"fare > {sorted(fare)[len(fare) // 2]}"
    assert snap.where(q).count() == sum(1 for f in fare if f > sorted(fare)[len(fare) // 2])
    ro = spark.read.format("hudi-hive").option("hoodie.datasource.query.type", "read_optimized").load(str(root))
    base = [str(p) for p in root.rglob("*.parquet") if ".hoodie" not in p.parts]
    assert ro.count() <= spark.read.parquet(*base).count()


def test_planner_errors_name_the_table_and_filter(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _cow(tmp_path / "t")
    df = spark.read.format("hudi-hive").load(str(root))
    pin = pin_of(df)
    assert pin is not None
    real = pin.snapshot

    class Broken:
        table = real.table

        def plan(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("statistics unreadable")

    pin.snapshot = Broken()  # type: ignore[assignment]
    try:
        with pytest.raises(Exception) as info:
            df.where("k = 5").collect()
        text = str(info.value)
        first = text.split("\n")[0]
        assert str(root) in text and "k" in text and "statistics unreadable" in text
        assert "py4j" not in text.split("\n")[0].lower()
        # the first line names the table and the scan's filter (as the SearchArgument it was planned as)
        assert f"hudi-hive {root}: planning the filter " in first and "leaf-(EQUALS k 5)" in first
        assert first.endswith("failed: RuntimeError: statistics unreadable")
    finally:
        pin.snapshot = real
    # opted in: a planner error reads every latest file instead
    lenient = spark.read.format("hudi-hive").option("hive_bridge.onPlannerError", "readAll").load(str(root))
    lenient_pin = pin_of(lenient)
    assert lenient_pin is not None

    class BrokenWithFilter:
        table = real.table

        def plan(self, filt: Any, *args: Any, **kwargs: Any) -> Any:
            if filt is not None:
                raise RuntimeError("statistics unreadable")
            return real.plan(filt, *args, **kwargs)

    lenient_pin.snapshot = BrokenWithFilter()  # type: ignore[assignment]
    assert lenient.where("k = 5").count() == 1
    assert len(lenient_pin.last_kept) == 12
    assert df.where("k = 5").count() == 1
    with pytest.raises(Exception, match="hudi-hive") as info:
        spark.read.format("hudi-hive").load(str(tmp_path / "nothing-here")).count()
    assert str(tmp_path / "nothing-here") in str(info.value).split("\n")[0]
    with pytest.raises(Exception, match="query"):
        spark.read.format("hudi-hive").option("hoodie.datasource.query.type", "sideways").load(str(root))


def test_failures_after_planning_and_released_relations_name_the_table_and_filter(  # type: ignore[no-untyped-def]
        spark, hudi_hive, tmp_path, monkeypatch) -> None:
    root = _cow(tmp_path / "t")
    df = spark.read.format("hudi-hive").load(str(root))

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the file system went away")

    # planned, then failing while the kept files are given to Spark
    monkeypatch.setattr(PythonPlanner, "_file_of", staticmethod(unreadable))
    with pytest.raises(Exception, match="the file system went away") as info:
        df.where("k = 5").collect()
    first = str(info.value).split("\n")[0]
    assert f"hudi-hive {root}: the files the filter " in first and "leaf-(EQUALS k 5)" in first
    monkeypatch.undo()
    # a relation whose pinned table state was released: the planner knows neither; the file index names both
    monkeypatch.setenv("HIVE_BRIDGE_PINS", "1")
    spark.read.format("hudi-hive").load(str(root))  # releases every other relation's table state
    with pytest.raises(Exception, match="its table state was released") as info:
        df.where("k = 6").collect()
    first = str(info.value).split("\n")[0]
    assert f"hudi-hive: table file:{root}, filters [" in first and "(k = 6" in first


def test_a_planner_that_hangs_is_cut_off(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _cow(tmp_path / "t")
    df = spark.read.format("hudi-hive").load(str(root))
    pin = pin_of(df)
    assert pin is not None
    real = pin.snapshot
    release = threading.Event()
    answered = threading.Event()

    class Hangs:
        table = real.table

        def plan(self, *args: Any, **kwargs: Any) -> Any:
            release.wait(30)
            try:
                return real.plan(*args, **kwargs)
            finally:
                answered.set()

    jvm_planner = getattr(spark._jvm, JVM_PACKAGE).Planner
    jvm_planner.register(planner(), 1500)
    pin.snapshot = Hangs()  # type: ignore[assignment]
    try:
        with pytest.raises(Exception, match="did not answer within 1500 ms") as info:
            df.where("k = 5").collect()
        first = str(info.value).split("\n")[0]
        # the table and the scan's filters, as Spark has them (the planner gave no answer to name them)
        assert f"hudi-hive: table file:{root}, filters [" in first and "(k = 5" in first
        assert not answered.is_set()  # the scan gave up while the planner still hung: it did not wait for it
    finally:
        release.set()
        pin.snapshot = real
        jvm_planner.register(planner(), 300_000)


def test_read_table_by_name_and_python_source_still_reachable(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _cow(tmp_path / "t")
    spark.sql(f"CREATE TABLE fi_named USING `hudi-hive` LOCATION '{root}'")
    try:
        read = read_table(spark, "fi_named", "k < 15")
        assert sorted(r.k for r in read.df.collect()) == list(range(15))
        assert read.listing.files_kept < read.listing.files_total
        assert spark.sql("SELECT count(*) FROM fi_named WHERE part = 'p1'").collect()[0][0] == 30
        counted: list[int] = []  # another Python thread (another py4j thread) resolves the provider too
        worker = threading.Thread(target=lambda: counted.append(spark.table("fi_named").where("k = 3").count()))
        worker.start()
        worker.join(120)
        assert counted == [1]
    finally:
        spark.sql("DROP TABLE fi_named")
    python = spark.read.format(PYTHON_SOURCE).load(str(root))
    assert python.where("k < 15").count() == 15


def test_jar_builds_against_the_installed_pyspark(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The jar compiles against this pyspark's jars (FileIndex's abstract methods, PartitionDirectory.apply and
    HadoopFsRelation's constructor as this Spark has them) and holds the provider registration."""
    if shutil.which("javac") is None:
        pytest.skip("javac not on PATH")
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path))
    jar = jar_path()
    assert jar.exists() and jar.parent == tmp_path / "jars"
    with zipfile.ZipFile(jar) as z:
        names = set(z.namelist())
        assert "io/hivebridge/spark/HudiHiveFileIndex.class" in names
        services = z.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").decode()
        assert "io.hivebridge.spark.HudiHiveProvider" in services
    import pyspark

    cp = str(Path(pyspark.__file__).parent / "jars" / "*") + ":" + str(jar)
    out = subprocess.run(["javap", "-cp", cp, "io.hivebridge.spark.HudiHiveFileIndex"], capture_output=True,
                         text=True, check=True).stdout
    assert "implements org.apache.spark.sql.execution.datasources.FileIndex" in out
    assert jar_path() == jar  # cached: the same source and Spark give the same jar


def test_filters_to_sarg_keeps_unknown_shapes_unknown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hive_bridge.spark.file_index import filters_to_sarg
    from hive_bridge.table.table import HudiTable

    root = _cow(tmp_path / "t")
    table = HudiTable.open(str(root))
    leaf = {"op": "eq", "a": "k", "v": {"t": "int", "v": 5}}
    assert "EQUALS k 5" in str(filters_to_sarg([leaf], table))
    # a prefix has no SearchArgument leaf: it rides beside it (the SearchArgument alone is YES_NO_NULL)
    prefixed = filters_to_sarg([{"op": "startswith", "a": "s", "v": {"t": "str", "v": "s0"}}], table)
    assert prefixed is not None and str(prefixed) == "YES_NO_NULL"
    assert prefixed.prefixes == (sarg.PrefixCondition("s", "s0"),)
    not_prefix = {"op": "not", "c": {"op": "startswith", "a": "s", "v": {"t": "str", "v": "s0"}}}
    both = filters_to_sarg([{"op": "and", "l": leaf, "r": not_prefix}], table)
    assert both is not None and "EQUALS k 5" in str(both)
    assert both.prefixes == (sarg.PrefixCondition("s", "s0", negated=True),)
    in_or = {"op": "or", "l": leaf, "r": {"op": "startswith", "a": "s", "v": {"t": "str", "v": "s0"}}}
    assert filters_to_sarg([in_or], table) is None       # not a conjunct: unknown
    unknown_or = {"op": "or", "l": leaf, "r": {"op": "unknown", "text": "x"}}
    assert filters_to_sarg([unknown_or], table) is None
    nested_and = {"op": "and", "l": leaf, "r": {"op": "unknown", "text": "x"}}
    assert "EQUALS k 5" in str(filters_to_sarg([nested_and], table))
    negated = {"op": "not", "c": {"op": "and", "l": leaf, "r": {"op": "unknown", "text": "x"}}}
    assert filters_to_sarg([negated], table) is None   # NOT (k = 5 AND ?) says nothing about k
    twice = {"op": "not", "c": {"op": "not", "c": nested_and}}
    assert "EQUALS k 5" in str(filters_to_sarg([twice], table))
    ts = {"op": "gt", "a": "ts", "v": {"t": "ts", "v": 1_700_000_000_000_000}}
    assert "2023-11-14 22:13:20" in str(filters_to_sarg([ts], table, "UTC"))
    assert "2023-11-14 23:13:20" in str(filters_to_sarg([ts], table, "Europe/Paris"))


def test_nested_fields_casts_and_in_sets_keep_every_matching_row(spark, hudi_hive, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Shapes the planner may not understand (nested fields, casts, long IN lists Spark turns into INSET,
    StartsWith) keep files: the rows are Spark's over the latest files."""
    import hudi

    name = "sample_table.cow.v6_simplekeygen_hivestyle_no_metafields"
    with zipfile.ZipFile(SHARED / f"{name}.zip") as z:
        z.extractall(tmp_path)
    root = next(p.parent for p in tmp_path.rglob("hoodie.properties")).parent
    df = spark.read.format("hudi-hive").load(str(root))
    slices = hudi.HudiTableBuilder.from_base_uri(str(root)).build().get_file_slices()
    latest = [str(root / s.base_file_relative_path()) for s in slices]
    spark.read.parquet(*latest).createOrReplaceTempView("fi_nested_truth")
    df.createOrReplaceTempView("fi_nested")
    in_set = ", ".join(str(i) for i in range(-3, 30))  # more than spark.sql.optimizer.inSetConversionThreshold
    for q in ["structField.field1 = 'Bob'", "structField.child_struct.child_field2 = false",
              "cast(intField as string) = '25000'", f"id IN ({in_set})", "name LIKE 'B%'",
              "id <=> 2", "NOT (id IN (1, 2))", "byteField = 20 OR structField.field2 > 30"]:
        got = sorted(map(str, spark.sql(f"SELECT id, name FROM fi_nested WHERE {q}").collect()))
        want = sorted(map(str, spark.sql(f"SELECT id, name FROM fi_nested_truth WHERE {q}").collect()))
        assert got == want, q


THRIFT_SCRIPT = """
import json, socket, sys, time
from pyhive import hive
from hive_bridge.spark import last_scan_report, session
from hive_bridge.spark.thrift import start_thrift_server

root, work = sys.argv[1], sys.argv[2]
spark = session("hive-bridge-thrift-test", **{"spark.sql.warehouse.dir": work + "/warehouse",
                                              "spark.local.dir": work + "/tmp"})
spark.sql(f"CREATE TABLE fi_thrift USING `hudi-hive` LOCATION '{root}'")
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = start_thrift_server(spark, "127.0.0.1", port)
conn = None
for _ in range(90):
    try:
        conn = hive.connect(host="127.0.0.1", port=port, username="hive_bridge", auth="NONE")
        break
    except Exception:
        time.sleep(1)
cursor = conn.cursor()
cursor.execute("SELECT k FROM fi_thrift WHERE k BETWEEN 12 AND 14")
rows = sorted(r[0] for r in cursor.fetchall())
print("RESULT " + json.dumps({"rows": rows, "report": last_scan_report(root)}))
server.stop()
spark.stop()
"""


def test_thrift_server_in_this_driver_serves_hudi_hive_tables_pruned(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A HiveServer2 client (pyhive) sends SQL over a table created USING hudi-hive to the Thrift Server started
    in the driver that registered the planner: rows right, files pruned. In a process of its own (the server
    changes the driver's class loaders and sessions)."""
    import json
    import os
    import sys

    pytest.importorskip("pyhive.hive")
    root = _cow(tmp_path / "t")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               HIVE_BRIDGE_SCAN_REPORTS=str(tmp_path / "reports"))
    done = subprocess.run([sys.executable, "-c", THRIFT_SCRIPT, str(root), str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=env, cwd=tmp_path)
    result = next((line for line in done.stdout.splitlines() if line.startswith("RESULT ")), None)
    assert result is not None, done.stderr[-3000:]
    got = json.loads(result[len("RESULT "):])
    assert got["rows"] == [12, 13, 14]
    assert got["report"]["files_read"] == 1 and got["report"]["files_total"] == 12


def _mor(root: Path, groups: int = 4) -> tuple[Path, dict[int, float]]:
    """A merge-on-read table of ``groups`` file groups (keys 10g..10g+9), every slice with a log file that moves
    one key's ``v``; the expected ``v`` of every key."""
    writer = HudiWriter(root, record_key_fields=("k",), precombine_field="ts", rows_per_file=10,
                        table_type="MERGE_ON_READ")
    ks = list(range(groups * 10))
    writer.insert(pa.table({"k": pa.array(ks, pa.int64()), "v": pa.array([float(k) for k in ks]),
                            "ts": pa.array([0] * len(ks), pa.int64())}))
    moved = [g * 10 + 1 for g in range(groups)]
    writer.upsert(pa.table({"k": pa.array(moved, pa.int64()), "v": pa.array([-float(k) for k in moved]),
                            "ts": pa.array([1] * len(moved), pa.int64())}))
    return root, {k: (-float(k) if k in moved else float(k)) for k in ks}


def _kv(df: Any) -> dict[int, float]:
    return {int(r[0]): float(r[1]) for r in df.select("k", "v").collect()}


def test_merged_slice_cache_evicts_what_no_recent_scan_reads_and_merges_again(  # type: ignore[no-untyped-def]
        spark, hudi_hive, tmp_path, monkeypatch) -> None:
    from hive_bridge.spark import file_index
    from hive_bridge.spark.merged_cache import CACHE

    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HIVE_BRIDGE_MERGED_CACHE_MB", "0")  # every merge evicts all it may
    monkeypatch.setattr(file_index, "SCANS_IN_USE", 1)  # only a relation's latest scan is protected
    root, truth = _mor(tmp_path / "t")
    df = spark.read.format("hudi-hive").load(str(root))
    pin = pin_of(df)
    assert pin is not None

    def read(lo: int) -> list[str]:  # file group lo // 10, merged; its rows are the merged truth
        q = f"k >= {lo} AND k < {lo + 10}"
        assert _kv(df.where(q)) == {k: v for k, v in truth.items() if lo <= k < lo + 10}, q
        assert len(pin.last_kept) == 1
        return list(pin.last_kept)

    first = read(0)
    assert Path(first[0]).exists()  # merged for the scan, and spared while it is the latest scan
    second = read(10)
    assert not Path(first[0]).exists() and Path(second[0]).exists()  # least recently used, no scan reads it
    assert read(0) == first and Path(first[0]).exists()  # the same slice merged again: the same rows
    assert not Path(second[0]).exists()
    # under a bound that holds them, nothing is evicted; the least recently used goes first
    monkeypatch.setenv("HIVE_BRIDGE_MERGED_CACHE_MB", "1")
    kept = [read(lo)[0] for lo in (10, 20, 30)]
    assert all(Path(p).exists() for p in [first[0], *kept])
    size = Path(first[0]).stat().st_size
    assert CACHE.evict(limit_bytes=CACHE.total_bytes() - size) == [first[0]]  # the least recently used
    assert CACHE.evict(limit_bytes=0) == kept[:2]  # the latest scan's file (30) is never evicted
    assert Path(kept[2]).exists()
    assert _kv(df) == truth


def test_merged_files_of_slices_gone_from_the_latest_state_are_dropped(  # type: ignore[no-untyped-def]
        spark, hudi_hive, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HIVE_BRIDGE_PINS", "1")  # a new load releases the previous relation
    root, truth = _mor(tmp_path / "t", groups=2)
    old = spark.read.format("hudi-hive").load(str(root))
    assert _kv(old) == truth
    pin = pin_of(old)
    assert pin is not None and len(pin.last_kept) == 2
    stale = list(pin.last_kept)
    writer = HudiWriter(root, record_key_fields=("k",), precombine_field="ts", rows_per_file=10,
                        table_type="MERGE_ON_READ")
    writer.upsert(pa.table({"k": pa.array([2], pa.int64()), "v": pa.array([99.0]), "ts": pa.array([2], pa.int64())}))
    new = spark.read.format("hudi-hive").load(str(root))  # the new state: file group 0 has another log file
    deadline = time.monotonic() + 30
    while Path(stale[0]).exists() and time.monotonic() < deadline:  # dropped by a background thread
        time.sleep(0.1)
    gone = [p for p in stale if not Path(p).exists()]
    assert len(gone) == 1  # file group 0's old merge; file group 1's slice is unchanged and its file kept
    assert _kv(new) == {**truth, 2: 99.0}


def test_filter_classes_of_a_pyspark_without_them_convert_as_pysparks_do() -> None:
    """pyspark 4.0 has no data source filter classes: the file index's filters then use hive-bridge's own, which
    must give the same SearchArgument as pyspark's (4.1+) for every shape (each class matches itself only)."""
    from pyspark.sql import datasource as ds

    import hive_bridge.spark.filters as filters
    import sarg
    from hive_bridge.spark.filters import _Filters, spark_filters_to_sarg

    def shapes(c: Any) -> list[Any]:
        a = ("k",)
        return [c.EqualTo(a, 5), c.EqualNullSafe(a, 5), c.LessThan(a, 5), c.LessThanOrEqual(a, 5),
                c.GreaterThan(a, 5), c.GreaterThanOrEqual(a, 5), c.In(a, (1, 7)), c.IsNull(a), c.IsNotNull(a),
                c.Not(c.IsNull(a)), c.Not(c.GreaterThan(a, 5))]

    want = ["leaf-(EQUALS k 5)", "leaf-(NULL_SAFE_EQUALS k 5)", "leaf-(LESS_THAN k 5)", "leaf-(LESS_THAN_EQUALS k 5)",
            "(not leaf-(LESS_THAN_EQUALS k 5))", "(not leaf-(LESS_THAN k 5))", "leaf-(IN k 1 7)", "leaf-(IS_NULL k)",
            "(not leaf-(IS_NULL k))", "(not leaf-(IS_NULL k))", "leaf-(LESS_THAN_EQUALS k 5)"]
    types = {"k": sarg.Type.LONG}
    if hasattr(ds, "EqualTo"):  # pyspark 4.1+
        assert [str(spark_filters_to_sarg([f], types)[0]) for f in shapes(ds)] == want
    original = filters.filter_classes
    filters.filter_classes = lambda: _Filters  # type: ignore[assignment]
    try:
        assert [str(spark_filters_to_sarg([f], types)[0]) for f in shapes(_Filters)] == want
    finally:
        filters.filter_classes = original  # type: ignore[assignment]
