"""``bench_hudi_reader.py``'s workloads at a tiny scale, end to end with Hudi's writer and reader: bench_peers'
table (20 files) and three TPC-H queries (scale 0.01). Each run prints its table and verdicts; what is checked:
it finishes, no reader of hive-bridge's loses a row, and Hudi's and hudi-hive's TPC-H rows equal the truth."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.hive_bridge.peer import require_peer

sys.path.insert(0, str(REPO / "tools"))

pytestmark = [pytest.mark.peer]


def _bench(*args: str) -> str:
    require_peer()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_hudi_reader.py"), *args],
                          capture_output=True, text=True, timeout=1200, env=env, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_peers_workload_runs_and_hudi_hive_loses_no_row() -> None:
    out = _bench("--workload", "peers", "--files", "20", "--rows", "10", "--repeat", "1")
    assert "bench_peers copy-on-write (20 files, 200 rows; written by Hudi 1.1)" in out
    rows = [line for line in out.splitlines() if "| hudi-hive" in line]
    assert len(rows) == 9 and not any("LOST" in line or "DIFFERS" in line for line in rows)
    assert "rows lost on 0" in out


def test_tpch_workload_rows_equal_the_truth() -> None:
    out = _bench("--workload", "tpch", "--scale", "0.01", "--queries", "1,6,14", "--repeat", "1")
    assert sum("both = truth" in line for line in out.splitlines()) == 3
    assert "rows equal to the truth: Hudi 3 of 3, hudi-hive 3 of 3" in out
