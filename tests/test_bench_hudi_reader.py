"""benchmarks/bench_hudi_reader.py: the verdict line per goal, from per-query figures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_hudi_reader


def _line(f: str, hh: tuple[int, float, float, str], on: tuple[int, float, float], off_files: int) -> dict[str, Any]:
    return {"table": "t", "filter": f, "truth": 1, "readers": {
        "hudi-hive": {"files": hh[0], "plan_s": hh[1], "query_s": hh[2], "loss": hh[3]},
        "hudi skipping on": {"files": on[0], "plan_s": on[1], "query_s": on[2], "loss": ""},
        "hudi skipping off": {"files": off_files, "plan_s": 1.0, "query_s": 1.0, "loss": ""}}}


def test_both_goals_met() -> None:
    lines = [_line("a = 1", (1, 0.01, 0.1, ""), (1, 1.0, 0.5), 30), _line("b > 2", (30, 0.01, 2.0, ""), (30, 1.0, 1.0), 30)]
    got = bench_hudi_reader.verdicts(lines)
    assert got[0].startswith("goal 1") and ": met:" in got[0] and "more files on 0 of 2" in got[0]
    # b > 2 is not selective (Hudi's skipping reads every file): its slower query does not count
    assert ": met:" in got[1] and "slower on 0 of 1 selective" in got[1] and "planning 100x faster" in got[1]


def test_goals_not_met_name_the_queries() -> None:
    lines = [_line("a = 1", (2, 0.5, 0.9, ""), (1, 1.0, 0.5), 30), _line("c = 3", (1, 0.5, 0.1, "LOST 1"), (1, 1.0, 0.5), 30)]
    got = bench_hudi_reader.verdicts(lines)
    assert "NOT met" in got[0] and "t: a = 1" in got[0] and "rows lost on 1: t: c = 3" in got[0]
    assert "NOT met" in got[1] and "slower on 1 of 2 selective queries: a = 1" in got[1] and "planning 2x" in got[1]


def _run(f: str, plans: list[float], queries: list[float]) -> dict[str, Any]:
    return {"filter": f, "count": 1, "planning_seconds": plans[-1], "query_seconds": queries[-1],
            "planning_runs": plans, "query_runs": queries}


def test_peer_medians_leave_the_warm_up_run_out_in_interleaved_mode() -> None:
    reads = [{"path": "p", "skipping": True, "results": [_run("a = 1", [9.0, 1.0, 3.0, 2.0], [8.0, 0.5, 0.7, 0.6])]},
             {"path": "p", "skipping": False, "results": [_run("a = 1", [5.0, 4.0], [6.0, 2.0])]}]
    warm = bench_hudi_reader.peer_medians(reads, warm=True)
    assert warm[True]["a = 1"]["planning_seconds"] == 2.0 and warm[True]["a = 1"]["query_seconds"] == 0.6
    assert warm[False]["a = 1"]["planning_seconds"] == 4.0 and warm[False]["a = 1"]["count"] == 1
    cold = bench_hudi_reader.peer_medians(reads, warm=False)   # every run counts (the sequential mode's)
    assert cold[True]["a = 1"]["planning_seconds"] == 2.5 and cold[False]["a = 1"]["query_seconds"] == 4.0


def test_goal_one_says_what_kept_the_files() -> None:
    line = _line("v > 90", (3, 0.01, 0.1, ""), (1, 1.0, 0.5), 30)
    line["readers"]["hudi-hive"]["why"] = "2 slices with log files kept"
    got = bench_hudi_reader.verdicts([line])
    assert "more files on 1 of 1 queries: t: v > 90 (2 slices with log files kept)" in got[0]


def test_peers_workload_hands_hudis_writer_the_bench_peers_table(tmp_path: Path) -> None:
    import math

    import pyarrow.parquet as pq

    spec, filters = bench_hudi_reader.peers_workload(tmp_path / "t", 20, 10)
    (commit,) = spec["commits"]
    assert commit["op"] == "bulk_insert" and commit["files"] == 20 and spec["type"] == "COPY_ON_WRITE"
    data = pq.read_table(commit["parquet"])
    assert sorted(data.column("event_id").to_pylist()) == list(range(200))
    amounts = data.column("amount").to_pylist()
    assert sum(math.isnan(a) for a in amounts) == 4                       # bench_peers' NaN rows, one in four files
    assert any(a == 0.0 and math.copysign(1, a) < 0 for a in amounts)     # and its -0.0
    assert len(filters) == len(bench_hudi_reader.PEERS)
    assert "(`amount` = CAST('NaN' AS DOUBLE))" in filters and "(`city` IS NULL)" in " ".join(filters)


def test_tpch_rows_compare_decimals_dates_and_doubles_alike() -> None:
    from datetime import date
    from decimal import Decimal

    import bench_hudi_tpch

    # the product's row (Decimal, date) against the same row as Hudi's driver sends it (JSON: float, str)
    assert bench_hudi_tpch.canon([(Decimal("17.50"), date(1995, 3, 15), "R", 3)]) == \
        bench_hudi_tpch.canon([[17.5, "1995-03-15", "R", 3]])
    assert bench_hudi_tpch.canon([(Decimal("17.51"),)]) != bench_hudi_tpch.canon([[17.5]])
    assert bench_hudi_tpch.canon([(2,), (1,)]) == bench_hudi_tpch.canon([(1,), (2,)])   # order-free


def test_tpch_types_as_spark_sql_says_them() -> None:
    import bench_hudi_tpch
    import pyarrow as pa

    assert [bench_hudi_tpch.spark_type(t) for t in (pa.decimal128(15, 2), pa.date32(), pa.int64(), pa.string_view())] \
        == ["decimal(15,2)", "date", "bigint", "string"]
