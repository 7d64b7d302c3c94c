"""Spark driver logs (3.3–4.3, INFO): each scan's Pruning directories / Pushed Filters / Post-Scan Filters lines
become one filter of the --table they are replayed against; nothing else in them is taken for a filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_bridge.workload.filters import translate
from hive_bridge.workload.textlogs import file_occurrences
from tests.hive_bridge.workload.conftest import SHARED

DRIVER = SHARED / "spark-driver-logs"
TYPES = {"id": "int", "name": "string", "price": "double", "amount": "decimal(10,2)", "d": "date",
         "ts": "timestamp", "dt": "string", "k": "int"}


@pytest.mark.parametrize("version", ["3.3.4", "3.5.8", "4.0.1", "4.3.0"])
def test_driver_log_scans(version: str) -> None:
    log = DRIVER / f"spark-{version}-driver.log"
    occ = list(file_occurrences(str(log), log.read_text(encoding="utf-8").splitlines()))
    assert {o.source for o in occ} == {"spark-driver"}
    assert len(occ) == 13
    filters = [translate(o.lists, TYPES).hiveql for o in occ]
    assert "id IS NOT NULL AND name IS NOT NULL AND id = 5 AND name = 'a,b[c] d'" in filters
    assert any(f and "d = DATE '2024-01-03'" in f and "ts > TIMESTAMP '2024-01-01 10:00:00'" in f for f in filters)
    assert any(f and "dt = '2024-01-01'" in f for f in filters)      # Pruning directories with: (partition)
    # the V1 timestamp (JVM zone) is never read: only the Catalyst one
    assert not any(f and "10:00:00.0" in f for f in filters)


def test_driver_lines_of_one_scan_group(tmp_path: Path) -> None:
    lines = ["24/01/01 10:00:00 INFO DataSourceStrategy: Pruning directories with: Set(isnotnull(dt#1), "
             "(dt#1 = 2024-01-02))",
             "24/01/01 10:00:00 INFO FileSourceStrategy: Pushed Filters: IsNotNull(id),GreaterThan(id,7)",
             "24/01/01 10:00:00 INFO FileSourceStrategy: Post-Scan Filters: Set(isnotnull(id#2), (id#2 > 7))",
             "24/01/01 10:00:01 INFO FileSourceStrategy: Pushed Filters: ",
             "24/01/01 10:00:01 INFO FileSourceStrategy: Post-Scan Filters: "]
    occ = list(file_occurrences("driver.log", lines))
    assert [translate(o.lists, TYPES).hiveql for o in occ] == [
        "id IS NOT NULL AND id > 7 AND dt IS NOT NULL AND dt = '2024-01-02'", None]
    assert [o.query for o in occ] == ["driver.log:3", "driver.log:5"]
