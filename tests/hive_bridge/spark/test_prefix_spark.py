"""String prefixes against Spark's own LIKE and startsWith: real Hudi tables written by the test writer, some base
files rewritten by parquet-java (through Spark) with ``parquet.statistics.truncate.length`` so their string bounds
are truncated; rows of the kept files filtered by Spark equal rows of every file filtered by Spark with parquet
pushdown off. Through ``list_files`` (HiveQL ``LIKE``, as ``hive-bridge read --where`` and ``explain`` read it) and
through the ``hudi-hive`` file index (Spark's ``StringStartsWith``)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sarg
from hive_bridge.filters.residual import sql_string
from hive_bridge.spark import last_scan_report, list_files, pin_of, read_hudi, register
from hive_bridge.spark.file_index import filters_to_sarg
from hive_bridge.spark.jar import JVM_PACKAGE
from hive_bridge.table.table import HudiTable
from hive_bridge.testing.writer import HudiWriter
from sarg.prefix import like_pattern

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore:hive-bridge set:RuntimeWarning")]

#: multi-byte characters, the largest code point of each UTF-8 length, both sides of the surrogates, LIKE's own
#: wildcards and escape character
CHARS = st.sampled_from(["a", "b", "A", " ", "é", "\u0800", "\ud7ff", "\ue000", "\uffff", "\U00010000",
                         "\U0010ffff", "%", "_", "\\"])
TEXT = st.text(CHARS, max_size=6)
#: what follows the literal part of a pattern: exact prefixes, a wildcard inside, none at all
TAILS = st.sampled_from(["%", "%", "%%", "_%", "%a", "", "_"])


def _pattern(prefix: str, tail: str) -> str:
    return like_pattern(prefix)[:-1] + tail


def _write(root: Path, values: list[str | None], truncated: list[int], spark: Any) -> list[Path]:
    """A copy-on-write table of ``values`` (4 rows a file, in the order given); the files at positions
    ``truncated`` rewritten by parquet-java with string statistics cut to 1 or 2 characters."""
    rows = pa.table({"k": pa.array(range(len(values)), pa.int64()), "s": pa.array(values, pa.string())})
    HudiWriter(root, record_key_fields=("k",), rows_per_file=4).insert(rows)
    files = sorted(p for p in root.rglob("*.parquet") if ".hoodie" not in p.parts)
    for i in truncated:
        if i >= len(files):
            continue
        f = files[i]
        out = root.parent / f"rewrite-{uuid.uuid4().hex}"
        (spark.read.parquet(str(f)).coalesce(1).write
         .option("parquet.statistics.truncate.length", str(1 + i % 2)).parquet(str(out)))
        (part,) = out.glob("part-*.parquet")
        shutil.move(str(part), str(f))
        shutil.rmtree(out)
    return files


def _matching(spark: Any, files: list[Path], conditions: list[Any]) -> list[set[tuple[str, int]]]:
    """For each condition (a Column), the (file, key) of every row Spark finds it true for, reading every file
    with parquet pushdown off."""
    from pyspark.sql import functions as F

    spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        df = spark.read.parquet(*[str(f) for f in files])
        rows = df.select(F.input_file_name().alias("f"), "k", *[c.alias(f"c{i}") for i, c in enumerate(conditions)]
                         ).collect()
    finally:
        spark.conf.unset("spark.sql.parquet.filterPushdown")
    return [{(Path(r["f"].removeprefix("file:")).name, r["k"]) for r in rows if r[f"c{i}"]}
            for i in range(len(conditions))]


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.none(), TEXT), min_size=4, max_size=20),
       ordered=st.booleans(),
       truncated=st.sets(st.integers(0, 4), max_size=1),
       queries=st.lists(st.tuples(TEXT, TAILS, st.booleans()), min_size=3, max_size=5))
def test_like_prunes_without_losing_a_row(spark: Any, tmp_path_factory: pytest.TempPathFactory,
                                          values: list[str | None], ordered: bool, truncated: set[int],
                                          queries: list[tuple[str, str, bool]]) -> None:
    from pyspark.sql import functions as F

    if ordered:  # files hold ranges of values: what makes pruning by bounds bite
        present = sorted((v for v in values if v is not None), key=lambda v: v.encode())
        values = present + [None] * (len(values) - len(present))
    root = tmp_path_factory.mktemp("prefix") / "t"
    files = _write(root, values, sorted(truncated), spark)
    patterns = [(_pattern(prefix, tail), negated) for prefix, tail, negated in queries]
    conditions = [~F.col("s").like(p) if negated else F.col("s").like(p) for p, negated in patterns]
    # the same prefixes as Spark's StringStartsWith, as the JVM file index hands them over
    starts = [F.col("s").startswith(prefix) for prefix, _, _ in queries]
    conditions += [~c if negated else c for c, (_, _, negated) in zip(starts, queries, strict=True)]
    truth = _matching(spark, files, conditions)
    table = HudiTable.open(str(root))
    plans: list[Any] = [f"s {'NOT ' if negated else ''}LIKE {sql_string(pattern)}" for pattern, negated in patterns]
    for prefix, _, negated in queries:
        leaf = {"op": "startswith", "a": "s", "v": {"t": "str", "v": prefix}}
        plans.append(filters_to_sarg([{"op": "not", "c": leaf} if negated else leaf], table))
    for filt, rows in zip(plans, truth, strict=True):
        _, listing, _ = list_files(str(root), filt)
        kept = {Path(f.path).name for f in listing.files}
        assert {r for r in rows if r[0] in kept} == rows, (str(filt), values, kept)


def _files_read(spark: Any, df: Any) -> int:
    return int(getattr(spark._jvm, JVM_PACKAGE).Planner.filesRead(df._jdf.queryExecution().executedPlan()))


def test_the_file_index_reads_only_the_files_a_prefix_may_match(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    register(spark)
    words = sorted(["ab", "abc", "abd", "abz\U0010ffff", "ac", "b", "ba", "bb", "é", "éa", "\uffff", "\uffffz",
                    "\U00010000", "\U0010ffff", "\U0010ffffa", "zz", "A", "AB", "aB", "a"], key=lambda v: v.encode())
    values: list[str | None] = [w + "-tail-long" for w in words] + [None] * 4
    files = _write(tmp_path / "t", values, [1, 2], spark)
    # the rewritten files' bounds are truncated (parquet-java cut them), so they are not the values
    stats = pq.ParquetFile(files[1]).metadata.row_group(0).column(2).statistics
    assert stats.min not in values and stats.max not in values
    df = spark.read.format("hudi-hive").load(str(tmp_path / "t"))
    df.createOrReplaceTempView("prefixed")
    cases = [
        (df.filter(F.col("s").startswith("ab")), F.col("s").startswith("ab")),
        (spark.sql("SELECT * FROM prefixed WHERE s LIKE 'ab%'"), F.col("s").like("ab%")),
        (df.filter(F.col("s").startswith("\U0010ffff")), F.col("s").startswith("\U0010ffff")),
        (df.filter(F.col("s").startswith("\uffff")), F.col("s").startswith("\uffff")),
        (df.filter(~F.col("s").startswith("a")), ~F.col("s").startswith("a")),
        (df.filter(F.col("s").startswith("")), F.col("s").startswith("")),
        (df.filter(F.col("s").startswith("AB") & (F.col("k") < 100)), F.col("s").startswith("AB")),
    ]
    truth = _matching(spark, files, [c for _, c in cases])
    total = len(files)
    pruned_somewhere = False
    for (got_df, condition), rows in zip(cases, truth, strict=True):
        keys = got_df.select("k")
        got = sorted(r["k"] for r in keys.collect())
        assert got == sorted(k for _, k in rows), condition
        pin = pin_of(df)
        assert pin is not None
        read = _files_read(spark, keys)
        assert read == len(pin.last_kept) <= total, (condition, read, pin.last_kept)
        kept = {Path(p).name for p in pin.last_kept}
        assert {f for f, _ in rows} <= kept
        pruned_somewhere |= read < total
        if str(condition) == str(F.col("s").startswith("ab")):
            assert read < total / 2
            report = last_scan_report(str(tmp_path / "t"))
            assert report is not None and "s STARTS WITH 'ab'" in report["filter"]
    assert pruned_somewhere
    # a parsed SearchArgument handed to read_hudi: its residual applies the prefix it pruned with
    parsed = sarg.parse_hiveql("s LIKE 'ab%'", {"k": "bigint", "s": "string"})
    read = read_hudi(spark, str(tmp_path / "t"), parsed)
    assert sorted(r["k"] for r in read.df.select("k").collect()) == sorted(k for _, k in truth[1])
    assert read.listing.files_kept < total / 2
