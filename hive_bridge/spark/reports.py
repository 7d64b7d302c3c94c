"""Scan reports of the ``hudi-hive`` data source: planned in Python workers, written to a file on the driver's
machine, read back by :func:`last_scan_report`. A report holds no credential (its strings are redacted before it
is written). The file is bounded: past :data:`ROTATE_BYTES` it becomes ``scans.jsonl.1`` (replacing the previous
one) and a new file starts, so a long-lived driver keeps at most two."""

from __future__ import annotations

import os
from typing import Any

from hive_bridge import config
from hive_bridge.redaction import redact, redact_data

#: the report folders made by this process (a scan need not ask the file system again)
_MADE: set[str] = set()
#: a report file this large is rotated before the next report is appended
ROTATE_BYTES = 4 * 2**20


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

    name = report_file()
    try:
        if os.path.getsize(name) >= ROTATE_BYTES:
            os.replace(name, name + ".1")  # atomic; a writer still holding the old file writes into the .1
    except OSError:  # no file yet, or another process rotated it first
        pass
    with open(name, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(redact_data(report)) + "\n")   # a report never holds a credential


def last_scan_report(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """Files read / total of the latest `hudi-hive` scan planned on this machine (of the table at ``path`` if
    given): path, filter, pruning (whether pushed filters pruned, and why_not), files_total, files_read,
    slices_read."""
    import json

    want = None if path is None else redact(str(path).removeprefix("file:"))   # as it was recorded
    name = report_file()
    for candidate in (name, name + ".1"):  # the newest reports first, then the rotated ones
        try:
            with open(candidate, encoding="utf-8") as fh:
                lines = fh.readlines()
        except OSError:
            continue
        for line in reversed(lines):
            try:
                report = json.loads(line)
            except ValueError:  # a line another process is still writing
                continue
            if want is None or report.get("path") == want:
                return report  # type: ignore[no-any-return]
    return None

