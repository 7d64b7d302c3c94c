"""Scan reports of the ``hudi-hive`` data source: planned in Python workers, written to a file on the driver's
machine, read back by :func:`last_scan_report`. The file is bounded: past :data:`ROTATE_BYTES` it becomes
``scans.jsonl.1`` (replacing the previous one) and a new file starts, so a long-lived driver keeps at most two. A report holds no
credential (its strings are redacted before it is written).

The folder (``HIVE_BRIDGE_SCAN_REPORTS``, by default ``$XDG_CACHE_HOME/hive-bridge/scans``: per user) is private
(:mod:`hive_bridge.spark.private`): created ``0700``, and refused when it is a link, another user's, or writable
by group or others; the files are created ``0600``, appended to and read without following links. A report that
cannot be written so is not written (a ``RuntimeWarning`` says why, once per reason): a scan never fails for its
report."""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

from hive_bridge import config
from hive_bridge.redaction import redact, redact_data
from hive_bridge.spark.private import UnsafeFolderError, open_private_file, open_private_folder

#: a report file this large is rotated before the next report is appended
ROTATE_BYTES = 4 * 2**20
#: the report file's name in the folder (the rotated one: the same with ``.1``)
REPORT_NAME = "scans.jsonl"
_WHAT = "the scan-report"
#: the reasons a report was not written that were told already (each is told once per process)
_TOLD: set[str] = set()
_TOLD_LOCK = threading.Lock()


def report_folder() -> str:
    return str(config.settings().scan_reports)


def report_file() -> str:
    """The path of the current report file (its folder made and checked)."""
    folder = report_folder()
    fd = open_private_folder(folder, f"{_WHAT} folder")
    assert fd is not None
    os.close(fd)
    return os.path.join(folder, REPORT_NAME)


def _tell(message: str) -> None:
    with _TOLD_LOCK:
        if message in _TOLD:
            return
        _TOLD.add(message)
    warnings.warn(f"hive-bridge writes no scan report: {message} (HIVE_BRIDGE_SCAN_REPORTS may name a private "
                  "folder instead)", RuntimeWarning, stacklevel=3)


#: callables given every report this process records (``hive-bridge serve``'s scan log); one that fails is passed over
_LISTENERS: list[Callable[[dict[str, Any]], None]] = []


def add_listener(listener: Callable[[dict[str, Any]], None]) -> None:
    """Call ``listener`` with every scan report this process records from now on."""
    _LISTENERS.append(listener)


def remove_listener(listener: Callable[[dict[str, Any]], None]) -> None:
    if listener in _LISTENERS:
        _LISTENERS.remove(listener)


def record_scan(report: dict[str, Any]) -> None:
    """Scans are planned in a Python worker process, not in the driver: reports go through a file on the
    driver's machine (where planning workers run)."""
    for listener in list(_LISTENERS):
        try:
            listener(report)
        except Exception as exc:  # a scan never fails for its report
            _tell(f"a scan-report listener failed: {type(exc).__name__}: {exc}")
    line = (json.dumps(redact_data(report)) + "\n").encode("utf-8")   # a report never holds a credential
    folder = report_folder()
    try:
        dir_fd = open_private_folder(folder, f"{_WHAT} folder")
    except (UnsafeFolderError, OSError) as exc:
        _tell(str(exc))
        return
    assert dir_fd is not None
    try:
        try:
            if os.stat(REPORT_NAME, dir_fd=dir_fd, follow_symlinks=False).st_size >= ROTATE_BYTES:
                # atomic; renames the name itself (a link is moved, never followed); a writer still holding the
                # old file writes into the .1
                os.replace(REPORT_NAME, REPORT_NAME + ".1", src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError:  # no file yet, or another process rotated it first
            pass
        fd = open_private_file(dir_fd, folder, REPORT_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                               f"{_WHAT} file")
        assert fd is not None
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    except (UnsafeFolderError, OSError) as exc:
        _tell(str(exc))
    finally:
        os.close(dir_fd)


def _read_lines(dir_fd: int, folder: str, name: str) -> list[str]:
    fd = open_private_file(dir_fd, folder, name, os.O_RDONLY, f"{_WHAT} file")
    if fd is None:
        return []
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        return fh.readlines()


def last_scan_report(path: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """Files read / total of the latest `hudi-hive` scan planned on this machine (of the table at ``path`` if
    given): path, filter, pruning (whether pushed filters pruned, and why_not), files_total, files_read,
    slices_read. None when there is none; :class:`~hive_bridge.spark.private.UnsafeFolderError` when the report
    folder or a report file is not private (a link, another user's, writable by others)."""
    want = None if path is None else redact(str(path).removeprefix("file:"))   # as it was recorded
    folder = report_folder()
    dir_fd = open_private_folder(folder, f"{_WHAT} folder", create=False)
    if dir_fd is None:
        return None
    try:
        for name in (REPORT_NAME, REPORT_NAME + ".1"):  # the newest reports first, then the rotated ones
            for line in reversed(_read_lines(dir_fd, folder, name)):
                try:
                    report = json.loads(line)
                except ValueError:  # a line another process is still writing
                    continue
                if want is None or report.get("path") == want:
                    return report  # type: ignore[no-any-return]
    finally:
        os.close(dir_fd)
    return None
