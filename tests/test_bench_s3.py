"""benchmarks/bench_s3.py runs end to end on a tiny table (moto on 127.0.0.1, the counting proxy, a Spark session
with the S3A jars in a child process): both routes answer alike, and the proxy saw both clients (~60 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytest.importorskip("moto")
pytestmark = pytest.mark.spark


def test_bench_s3_tiny_run(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tools"))
    import s3a_jars

    if s3a_jars.missing():
        pytest.skip("the S3A connector's jars are not fetched (make s3a-jars)")
    out = tmp_path / "out.json"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_s3.py"), "--files", "8", "--rows",
                           "20", "--repeat", "1", "--json", str(out)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(out.read_text())
    assert got["files"] == 8 and got["listing"] == "mdt"
    assert len(got["queries"]) == 6
    assert any(q["answer"][0] > 0 for q in got["queries"])
    assert got["load"]["hudi-hive"]["planner_requests"] > 0      # the planner's pyarrow, told apart by User-Agent
    assert got["summary"]["parquet"]["gets_first"] > 0           # Spark's S3A
    assert "time hudi-hive / parquet" in proc.stdout
