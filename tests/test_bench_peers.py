"""benchmarks/bench_peers.py: its filter translations for the peers, and one tiny run end to end."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

import sarg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_peers

SCHEMA = {"a": "bigint", "c": "string", "v": "double"}


def _hudi(text: str) -> tuple[list[tuple[str, str, str]], list[str]]:
    return bench_peers.hudi_rs_filters(sarg.read_filter(text, SCHEMA))


def test_hudi_rs_filters_say_what_hudi_rs_can() -> None:
    assert _hudi("leaf-(BETWEEN a 1 5)") == ([("a", ">=", "1"), ("a", "<=", "5")], [])
    assert _hudi("(not leaf-(LESS_THAN_EQUALS a 9))")[0] == [("a", ">", "9")]
    assert _hudi("(not leaf-(EQUALS v NaN))")[0] == [("v", "!=", "NaN")]
    assert _hudi("leaf-(EQUALS v -0.0)")[0] == [("v", "=", "-0.0")]
    tuples, notes = _hudi("(or leaf-(EQUALS a 42) leaf-(EQUALS a 7))")
    assert tuples == [("a", "IN", "42,7")] and "OR of = sent as IN" in notes
    assert _hudi("c in ('x,y', 'z')")[0] == [("c", "IN", "x\\,y,z")]


def test_hudi_rs_filters_leave_out_what_it_cannot_say() -> None:
    tuples, notes = _hudi("(and leaf-(IS_NULL c) leaf-(LESS_THAN a 5))")
    assert tuples == [("a", "<", "5")]
    assert notes == ["c IS NULL: cannot express, left out"]
    assert _hudi("(and (not leaf-(IS_NULL c)) (not leaf-(BETWEEN a 1 5)))")[0] == []
    # an OR across columns is never narrowed to one of its sides
    assert _hudi("(or leaf-(EQUALS a 1) leaf-(EQUALS c x))")[0] == []


def test_iceberg_expression_is_the_whole_filter() -> None:
    ice: Any = importlib.import_module("pyiceberg.expressions")   # untyped: pydantic models without the plugin
    expr, notes = bench_peers.iceberg_expression(sarg.read_filter(
        "(or (and leaf-(IS_NULL c) leaf-(LESS_THAN a 5)) (not leaf-(EQUALS v NaN)))", SCHEMA))
    assert expr == ice.Or(ice.And(ice.IsNull("c"), ice.LessThan("a", 5)), ice.Not(ice.IsNaN("v")))
    assert notes == ["= NaN as IsNaN"]
    assert bench_peers.iceberg_expression(sarg.read_filter("leaf-(EQUALS c x)", SCHEMA))[0] == ice.EqualTo("c", "x")
    with pytest.raises(bench_peers.Inexpressible, match="NaN"):
        bench_peers.iceberg_expression(sarg.read_filter("leaf-(LESS_THAN v NaN)", SCHEMA))


@pytest.mark.spark
def test_a_tiny_run(spark: object, tmp_path: Path) -> None:
    """100 files x 100 rows: every system judged, rows against Spark's truth (~30 s, most of it Spark)."""
    layout = bench_peers.Layout(100, 100)
    report = bench_peers.run(layout, tmp_path, repeat=1, spark=spark, log=lambda line: None)
    rows = {(r.label, r.system): r for r in report.rows}
    assert report.files == 100
    assert len(report.rows) == 4 * len(bench_peers.filters(layout))

    for f in bench_peers.filters(layout):
        hb = rows[(f.label, "hive-bridge")]
        assert hb.lost == 0 and hb.rows == hb.truth, f
        assert hb.kept is not None and hb.kept >= hb.ideal, f
    # exact on the key, strings, NULLs and zeros; NaN, which parquet's statistics do not show, exact too: the
    # float proofs read the column of the files kept only for lack of a NaN count
    for label in ("key =", "key range", "key IN, NOT NULL", "NOT key <=", "string IN", "IS NULL", "= 0.0",
                  "= -0.0"):
        assert rows[(label, "hive-bridge")].kept == rows[(label, "hive-bridge")].ideal, label
    assert rows[("= NaN", "hive-bridge")].kept == rows[("= NaN", "hive-bridge")].ideal == 4
    assert rows[("IS NULL", "hive-bridge")].truth == 6          # 3 NULLs in each of 2 files
    assert rows[("= 0.0", "hive-bridge")].truth == 11           # event_id 0 and ten -0.0
    assert rows[("= NaN", "hive-bridge")].truth == 4

    # the peers as measured: hudi-rs cannot say IS NULL, and drops the NaN rows; Spark's pushdown drops -0.0 rows
    assert rows[("IS NULL", "hudi-rs")].kept is None and rows[("IS NULL", "hudi-rs")].rows is None
    assert rows[("IS NULL, key <", "hudi-rs")].kept == 10      # pruned by the key alone
    assert rows[("= NaN", "hudi-rs")].lost == 4
    assert rows[("NOT <= (NaN)", "hudi-rs")].lost > 0
    assert rows[("= 0.0", SPARK := bench_peers.SPARK)].lost > 0
    assert rows[("key =", SPARK)].kept is None and rows[("key =", SPARK)].lost == 0
    assert set(report.memory) == {*bench_peers.PLANNERS, SPARK}
    assert "cannot express" in bench_peers.markdown(report)
