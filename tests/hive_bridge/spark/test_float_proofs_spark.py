"""Float ranges proven on merge-on-read slices with log files, through the ``hudi-hive`` Spark data source: on the
real version-8 trip table (a merged slice whose base file and log file have only the metadata table's float
bounds, never trusted), ``fare > 90`` reads the one file group Hudi's own data skipping keeps and ``fare > 1e9``
none, with the rows of every slice read merged and filtered by Spark (no row lost), and the scan report shows
the proofs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hive_bridge import config
from hive_bridge.spark import last_scan_report, read_hudi, register

pytestmark = pytest.mark.spark

V8_TRIPS = "quickstart_trips_table.mor.avro.v8_trips_8i3u1d"


@pytest.mark.parametrize(("where", "slices"), [("fare > 90", 1), ("fare > 1e9", 0)])
def test_hudi_hive_reads_what_hudi_keeps(spark: Any, fixture_copy: Any, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, where: str, slices: int) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(tmp_path / "reports"))
    config.clear_caches()
    root = str(fixture_copy(V8_TRIPS))
    register(spark)
    got = sorted(r["uuid"] for r in spark.read.format("hudi-hive").load(root).where(where).select("uuid").collect())
    truth = sorted(r["uuid"] for r in read_hudi(spark, root, None, prune=False).df.where(where)
                   .select("uuid").collect())
    assert got == truth and (len(truth) > 0) == (slices > 0)
    report = last_scan_report(root)
    assert report is not None and report["files_total"] == 3
    assert report["slices_read"] == slices and report["files_read"] == slices
    proofs = report["float_proofs"]
    assert proofs["log_reads"] == 1 and proofs["holding_nan"] == proofs["unreadable"] == 0
    assert proofs["proven_nan_free"] == 3 and proofs["bytes_read"] > 0
