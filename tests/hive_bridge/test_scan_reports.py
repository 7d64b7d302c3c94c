"""The scan-report file of the hudi-hive data source stays bounded in a long-lived driver, and the latest report
of a table is still found after a rotation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hive_bridge.spark import reports
from hive_bridge.spark.reports import last_scan_report, record_scan


def test_reports_rotate_and_the_latest_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(tmp_path / "reports"))
    monkeypatch.setattr(reports, "ROTATE_BYTES", 2_000)
    record_scan({"path": "/t/only-early", "files_read": 7})
    for i in range(400):
        record_scan({"path": f"/t/{i % 3}", "files_read": i, "filter": "x" * 20})
    name = reports.report_file()
    files = sorted(os.listdir(os.path.dirname(name)))
    assert files == ["scans.jsonl", "scans.jsonl.1"]
    # bounded: each file is at most the limit plus one report
    assert all(os.path.getsize(os.path.join(os.path.dirname(name), f)) < 2_200 for f in files)
    assert last_scan_report() == {"path": "/t/0", "files_read": 399, "filter": "x" * 20}
    assert last_scan_report("/t/2")["files_read"] == 398  # type: ignore[index]
    assert last_scan_report("/t/only-early") is None  # rotated away twice over: gone, not wrong


def test_a_report_only_in_the_rotated_file_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_BRIDGE_SCAN_REPORTS", str(tmp_path / "reports"))
    for i in range(6):
        record_scan({"path": "/t/a", "files_read": i, "filter": "y" * 30})
    monkeypatch.setattr(reports, "ROTATE_BYTES", 1)
    record_scan({"path": "/t/b", "files_read": 1})  # rotates: every report of /t/a is in scans.jsonl.1 now
    name = reports.report_file()
    assert Path(name).read_text().count("\n") == 1 and Path(name + ".1").read_text().count("\n") == 6
    assert last_scan_report("/t/a")["files_read"] == 5  # type: ignore[index]
    assert last_scan_report("file:/t/b")["files_read"] == 1  # type: ignore[index]
    assert last_scan_report()["path"] == "/t/b"  # type: ignore[index]
