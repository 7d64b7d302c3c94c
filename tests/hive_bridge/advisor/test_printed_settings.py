"""The settings ``hive-bridge advise`` prints work as pasted: the writer options carry the trigger that makes the
next write cluster, the Spark SQL is Hudi's ``run_clustering`` call with options it parses, the file size is not
today's tiny mean (a warning says so), every clustering key is one of Hudi's, and the winner's lead over the
runner-up is said. (Hudi itself runs the printed SQL in tests/hive_bridge/peer/test_advisor_clustering.py.)"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hive_bridge.advisor import Layout, settings_for, sql_for, target_size
from hive_bridge.advisor.advise import HUDI_PARQUET_MAX_FILE_SIZE, HUDI_SMALL_FILE_LIMIT
from hive_bridge.app.cli import main
from hive_bridge.testing.writer import HudiWriter

ROWS = 20_000
#: the keys of Hudi 1.1's HoodieClusteringConfig the advice may print (HoodieClusteringConfig.java)
HUDI_KEYS = {"hoodie.clustering.plan.strategy.sort.columns", "hoodie.layout.optimize.strategy",
             "hoodie.clustering.plan.strategy.target.file.max.bytes",
             "hoodie.clustering.plan.strategy.small.file.limit",
             "hoodie.clustering.plan.strategy.max.bytes.per.group", "hoodie.clustering.plan.strategy.max.num.groups",
             "hoodie.clustering.inline", "hoodie.clustering.inline.max.commits", "hoodie.clustering.async.enabled",
             "hoodie.layout.optimize.curve.build.method"}
CALL = re.compile(r"CALL run_clustering\(path => '(?P<path>(?:[^'\\]|\\.)*)', order => '(?P<order>[^']+)', "
                  r"order_strategy => '(?P<strategy>linear|z-order|hilbert)', options => '(?P<options>[^']*)'\)")


@pytest.fixture(scope="module")
def small_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rows in random order in 20 files of a few KB."""
    rng = np.random.default_rng(4)
    root = tmp_path_factory.mktemp("printed") / "t"
    HudiWriter(root, rows_per_file=1_000).insert(pa.table({
        "id": pa.array(rng.permutation(ROWS), pa.int64()),
        "a": pa.array(rng.integers(0, 1_000_000, ROWS), pa.int64()),
        "b": pa.array(rng.integers(0, 1_000_000, ROWS), pa.int64())}))
    return root


def _options(text: str) -> dict[str, str]:
    """``options`` as Hudi's HoodieCLIUtils.extractOptions reads it: pairs split on commas, then on '='."""
    pairs = [p.split("=") for p in text.split(",")]
    assert all(len(p) == 2 and p[0] and p[1] for p in pairs), text
    return dict((k, v) for k, v in pairs)


def _advise(table: Path, log: Path, *extra: str) -> tuple[str, dict[str, object]]:
    text, doc, err = io.StringIO(), io.StringIO(), io.StringIO()
    args = ["--samples", "1", *extra, "--table", str(table), str(log)]
    assert main(["advise", *args], stdout=text, stderr=err) == 0, err.getvalue()
    assert main(["advise", "--json", *args], stdout=doc, stderr=err) == 0, err.getvalue()
    (advice,) = json.loads(doc.getvalue())["advice"]
    return text.getvalue(), advice


def test_default_file_size_is_not_a_tiny_mean_and_says_so(small_table: Path, tmp_path: Path) -> None:
    log = tmp_path / "f.txt"
    log.write_text("".join(f"a >= {lo} and a < {lo + 20_000}\n" for lo in range(0, 900_000, 30_000)))
    text, advice = _advise(small_table, log)
    assert advice["target_file_bytes"] == HUDI_PARQUET_MAX_FILE_SIZE
    assert any("below Hudi's small-file limit" in str(w) for w in advice["warnings"])  # type: ignore[attr-defined]
    assert "warning: today's files average" in text and "files of 120.0 MiB" in text
    # the whole table becomes one file at that size: no layout can skip a file (a clustering saves only the small
    # files' footers), and the advice says why
    rec = advice["recommended"]
    assert rec is None or (rec["files"] == 1 and rec["saving"] < 0.1)  # type: ignore[index]
    assert "warning: the table is small for files of 120.0 MiB" in text


def test_printed_settings_and_sql_are_complete(small_table: Path, tmp_path: Path) -> None:
    log = tmp_path / "f.txt"
    log.write_text("".join(f"a >= {lo} and a < {lo + 20_000}\n" for lo in range(0, 900_000, 30_000)))
    files = sorted(p.stat().st_size for p in small_table.glob("*.parquet"))
    target = sum(files) // 4 + 1
    text, advice = _advise(small_table, log, "--target-file-bytes", str(target))
    rec = advice["recommended"]
    assert isinstance(rec, dict) and rec["layout"] == "linear(a)"
    settings = rec["settings"]
    assert set(settings) <= HUDI_KEYS
    # the next write clusters: inline, triggered after one commit, not left to an async job
    assert settings["hoodie.clustering.inline"] == "true"
    assert settings["hoodie.clustering.inline.max.commits"] == "1"
    assert settings["hoodie.clustering.async.enabled"] == "false"
    assert settings["hoodie.clustering.plan.strategy.sort.columns"] == "a"
    assert settings["hoodie.layout.optimize.strategy"] == "linear"
    assert int(settings["hoodie.clustering.plan.strategy.target.file.max.bytes"]) == target
    assert int(settings["hoodie.clustering.plan.strategy.small.file.limit"]) > files[-1]
    assert int(settings["hoodie.clustering.plan.strategy.max.bytes.per.group"]) > sum(files)
    for key, value in settings.items():
        assert f"  {key}={value}\n" in text
    # the SQL: a linear sort's shuffle gets the planned partitions, then Hudi's procedure with parseable options
    assert rec["files"] == 4
    sets, call = rec["sql"][:-1], rec["sql"][-1]
    assert sets == ["SET spark.sql.shuffle.partitions=4", "SET spark.sql.adaptive.coalescePartitions.enabled=false"]
    m = CALL.fullmatch(call)
    assert m is not None, call
    assert m["path"] == str(small_table) and m["order"] == "a" and m["strategy"] == "linear"
    options = _options(m["options"])
    assert set(options) <= HUDI_KEYS
    assert options["hoodie.clustering.plan.strategy.target.file.max.bytes"] == str(target)
    assert "hoodie.clustering.inline" not in options   # the CALL clusters now
    for statement in rec["sql"]:
        assert f"  {statement};\n" in text
    # files of a few KB asked for: a warning, and how far ahead the winner is
    assert any("below Hudi's small-file limit" in str(w) for w in advice["warnings"])  # type: ignore[attr-defined]
    second = rec["runner_up"]
    assert second["layout"] != "linear(a)" and second["bytes_vs_best"] > 1.0
    assert f"runner-up: {second['layout']} reads {second['bytes_vs_best']:.2f}x the bytes of the best" in text
    assert ("within the estimate's spread" in text) == second["within_spread"]
    assert "vs best" in text


def test_curves_and_partitioned_tables() -> None:
    """Curves carry the sample build (as simulated) and no shuffle settings; a partitioned table gets a group per
    partition; a path with a quote is escaped; a partitioning has no SQL."""
    s = settings_for(Layout("z-order", ("a", "b")), 200_000_000, 90_000_000, 5_000_000_000, 64)
    assert s["hoodie.layout.optimize.curve.build.method"] == "sample"
    assert s["hoodie.layout.optimize.strategy"] == "z-order"
    assert s["hoodie.clustering.plan.strategy.max.bytes.per.group"] == "5000000001"
    assert s["hoodie.clustering.plan.strategy.max.num.groups"] == "64"
    (call,) = sql_for("/data/o'brien", Layout("z-order", ("a", "b")), s, 25)
    m = CALL.fullmatch(call)
    assert m is not None and m["path"] == "/data/o\\'brien" and m["order"] == "a,b"
    assert _options(m["options"])["hoodie.layout.optimize.curve.build.method"] == "sample"
    assert sql_for("/t", Layout("partition", ("c",)), {}, 1) == []
    assert target_size(300_000_000, None) == (300_000_000, [])
    size, warnings = target_size(1_000.0, None)
    assert size == HUDI_PARQUET_MAX_FILE_SIZE and warnings
    assert target_size(HUDI_SMALL_FILE_LIMIT, 50_000)[1]
