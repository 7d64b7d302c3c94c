"""Scan reports of the ``hudi-hive`` data source: planned in Python workers, written to a file on the driver's
machine, read back by :func:`last_scan_report`."""

from __future__ import annotations

import os
from typing import Any

from hive_bridge import config

#: the report folders made by this process (a scan need not ask the file system again)
_MADE: set[str] = set()


def report_file() -> str:
    folder = str(config.settings().scan_reports)
    if folder not in _MADE or not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        _MADE.add(folder)
    return os.path.join(folder, "scans.jsonl")


def record_scan(report: dict[str, Any]) -> None:
    """Scans are planned in a Python worker process, not in the driver: reports go through a file on the
    driver's machine (where planning workers run)."""
    import json

    with open(report_file(), "a", encoding="utf-8") as fh:
        fh.write(json.dumps(report) + "\n")


def last_scan_report(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """Files read / total of the latest `hudi-hive` scan planned on this machine (of the table at ``path`` if
    given): path, filter, pruning (whether pushed filters pruned, and why_not), files_total, files_read,
    slices_read."""
    import json

    try:
        with open(report_file(), encoding="utf-8") as fh:
            lines = fh.readlines()
    except OSError:
        return None
    want = None if path is None else str(path).removeprefix("file:")
    for line in reversed(lines):
        try:
            report = json.loads(line)
        except ValueError:  # a line another process is still writing
            continue
        if want is None or report.get("path") == want:
            return report  # type: ignore[no-any-return]
    return None

