"""Spark Connect: ``register`` makes ``hudi-hive`` the Python data source (no callback path from the server's JVM
to the client's Python, so no file index) and says why; the rows are Spark's own.

A local Connect server (``SparkSession.builder.remote("local[1]")``) runs in a child process: it starts a Spark
driver of its own, which must not share this process's classic session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hive_bridge.spark import CONNECT_WHY_NOT
from hive_bridge.testing.writer import HudiWriter

pytestmark = [pytest.mark.spark]

_CHILD = r"""
import json, sys, warnings
from pyspark.sql import SparkSession

root = sys.argv[1]
spark = SparkSession.builder.remote("local[1]").config("spark.sql.session.timeZone", "UTC").getOrCreate()
from hive_bridge.spark import is_classic, register

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    register(spark)
q = "k > 50 OR s = 's0007'"
got = spark.read.format("hudi-hive").load(root).where(q).select("k", "s", "v").collect()
files = [p for p in sys.argv[2:]]
want = spark.read.parquet(*files).where(q).select("k", "s", "v").collect()
print(json.dumps({"classic": is_classic(spark), "warnings": [str(w.message) for w in caught],
                  "got": sorted([r[0], r[1], r[2]] for r in got), "want": sorted([r[0], r[1], r[2]] for r in want)}))
spark.stop()
"""


def test_connect_session_reads_hudi_hive_through_the_python_data_source(tmp_path: Path) -> None:
    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect] (grpcio)")
    root = tmp_path / "t"
    writer = HudiWriter(root, record_key_fields=("k",), rows_per_file=20)
    ks = list(range(100))
    writer.insert(pa.table({"k": pa.array(ks, pa.int64()), "s": pa.array([f"s{k:04d}" for k in ks]),
                            "v": pa.array([None if k % 7 == 0 else k / 4 for k in ks])}))
    writer.upsert(pa.table({"k": pa.array([3, 60], pa.int64()), "s": pa.array(["s0007", "changed"]),
                            "v": pa.array([1.5, None])}))
    latest = _latest_files(root)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[3]),
                                           os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
               HIVE_BRIDGE_CACHE=str(tmp_path / "cache"), HIVE_BRIDGE_SCAN_REPORTS=str(tmp_path / "reports"))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(root), *latest], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["classic"] is False
    assert CONNECT_WHY_NOT in out["warnings"]
    assert out["got"] == out["want"]
    assert [3, "s0007", 1.5] in out["got"] and [60, "changed", None] in out["got"]  # the upsert's rows, not the old


def _latest_files(root: Path) -> list[str]:
    """The latest base file of each file group (Spark reads them as plain parquet: the truth)."""
    from hive_bridge.pruning.snapshot import SnapshotCache

    snap = SnapshotCache().get(str(root))
    return [s.base_file.full_path for s in snap.slices if s.base_file is not None]
